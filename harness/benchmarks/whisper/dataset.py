"""whisper's dataset: the reference's manifest (a JSON list, one entry per clip of LibriSpeech dev-clean and
dev-other repackaged to at most 30 s) and the WAV files it names.

Each entry has `transcript`, `files` (the clip at each speed; the reference takes speed 1) and
`original_duration`; clips longer than the reference's MAX_DURATION of 30 s are left out, as its
Manifest does, so sample numbers match the reference's. A file name is taken as it is when absolute (the
reference's repackaging writes absolute paths), else relative to the manifest's folder. Audio must be
16 kHz mono 16-bit PCM, which the reference's conversion writes; it is read as float32 in [-1, 1], as
librosa.load gives it. `tok_ref_output_len` exists in synthetic manifests only: the stand-in answer's
length, which a dummy-weight run generates.
"""

from __future__ import annotations

import json
import wave
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.media import AudioClip
from harness.prompts import Prompts
from submitter.errors import UsageProblem
from submitter.evaluation.word_error_rate import answer_labels
from submitter.fileio import write_text_atomic

DATASET_SUFFIX = ".json"  # the manifest; the audio lies in the folder it names
RESPONSE_DTYPE = "int64"  # what answer_payload logs
SAMPLE_MEDIA = "audio"
WHAT = "whisper manifest"
SAMPLING_RATE = 16_000  # QSL.py: librosa.load(filepath, sr=16000)
MAX_DURATION_S = 30.0  # QSL.py and accuracy_eval.py: MAX_DURATION default
# The reference's decoder prompt "<|startoftranscript|><|en|><|transcribe|><|notimestamps|>" as
# whisper-large-v3's token ids.
DECODER_PROMPT = (50258, 50259, 50360, 50364)
OUTPUT_LENGTH_KEY = "tok_ref_output_len"


@dataclass(frozen=True)
class Clip:
    transcript: str
    audio_file: Path
    output_tokens: int | None


def read_manifest(path: Path) -> list[Clip]:
    """The manifest's clips the reference keeps (30 s or shorter), in file order."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageProblem(f"{WHAT} {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageProblem(f"{WHAT} {path} cannot be read as JSON ({exc})") from None
    if not isinstance(entries, list):
        raise UsageProblem(f"{WHAT} {path} must be a JSON list of clips, as the reference's manifest is")
    clips = []
    for number, entry in enumerate(entries):
        clip = _clip(entry, path, number)
        if clip is not None:
            clips.append(clip)
    return clips


def _clip(entry: Any, manifest: Path, number: int) -> Clip | None:
    where = f"{WHAT} {manifest}, entry {number}"
    if not isinstance(entry, dict):
        raise UsageProblem(f"{where}: must be an object with transcript, files and original_duration")
    duration, transcript, files = entry.get("original_duration"), entry.get("transcript"), entry.get("files")
    if not isinstance(duration, int | float) or isinstance(duration, bool):
        raise UsageProblem(f"{where}: original_duration must be the clip's length in seconds")
    if duration > MAX_DURATION_S:
        return None
    if not isinstance(transcript, str):
        raise UsageProblem(f"{where}: transcript must be text")
    names = [f.get("fname") for f in files or [] if isinstance(f, dict) and f.get("speed") == 1]
    if len(names) != 1 or not isinstance(names[0], str):
        raise UsageProblem(f"{where}: files must name one clip at speed 1, as the reference's manifest does")
    length = entry.get(OUTPUT_LENGTH_KEY)
    audio = Path(names[0])
    return Clip(
        transcript,
        audio if audio.is_absolute() else manifest.parent / audio,
        int(length) if isinstance(length, int) else None,
    )


def read_audio(path: Path) -> np.ndarray:
    """A 16 kHz mono 16-bit PCM WAV file as float32 in [-1, 1] (libsndfile's scaling, which librosa uses)."""
    try:
        with wave.open(str(path), "rb") as audio:
            layout = (audio.getnchannels(), audio.getsampwidth(), audio.getframerate())
            frames = audio.readframes(audio.getnframes())
    except FileNotFoundError:
        raise UsageProblem(
            f"{path}, named in the whisper manifest, does not exist; the manifest's paths are absolute or "
            "relative to its folder"
        ) from None
    except (OSError, EOFError, wave.Error) as exc:
        raise UsageProblem(f"{path} is not a readable WAV file ({exc})") from None
    if layout != (1, 2, SAMPLING_RATE):
        channels, width, rate = layout
        raise UsageProblem(
            f"{path} has {channels} channel(s) of {8 * width}-bit samples at {rate} Hz; whisper's data is "
            f"mono 16-bit PCM at {SAMPLING_RATE} Hz, as the reference's convert_librispeech.py writes it"
        )
    return pcm16_to_float(np.frombuffer(frames, dtype="<i2"))


def pcm16_to_float(samples: np.ndarray) -> np.ndarray:
    return (samples.astype(np.float32) / 32768.0).astype(np.float32)


def answer_payload(text: str) -> array:
    """The reference SUT's response: the answer's characters as int64 labels."""
    return array("q", answer_labels(text))


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    clips = read_manifest(path)
    if limit is not None:
        clips = clips[:limit]
    if not clips:
        raise UsageProblem(f"{WHAT} {path} has no clip of {MAX_DURATION_S:g} s or less")
    media = tuple(AudioClip(read_audio(clip.audio_file), SAMPLING_RATE) for clip in clips)
    prompt = array("i", DECODER_PROMPT)
    lengths = [clip.output_tokens for clip in clips]
    output_lengths = tuple(int(n) for n in lengths) if all(n is not None for n in lengths) else None
    return Prompts(
        path,
        tuple(prompt for _ in clips),
        output_lengths,
        media=media,
        answer_payload=answer_payload,
    )


def transcripts(path: Path) -> list[str]:
    """Each kept clip's reference transcript, by sample number."""
    return [clip.transcript for clip in read_manifest(path)]


# Synthetic records carry their 16-bit samples and file name under these keys until written.
AUDIO_KEY = "_audio"
NAME_KEY = "_name"


def write_dataset(path: Path, records: list[dict[str, object]]) -> None:
    """The manifest at `path` and each clip's WAV file in the folder beside it named like the manifest
    (dev-all-repack.json, dev-all-repack/), file names relative to the manifest's folder."""
    folder = path.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    manifest = []
    for record in records:
        samples = record[AUDIO_KEY]
        assert isinstance(samples, np.ndarray)
        name = f"{folder.name}/{record[NAME_KEY]}.wav"
        _write_wav(path.parent / name, samples)
        entry = {key: value for key, value in record.items() if not key.startswith("_")}
        entry["files"] = [{**file, "fname": name} for file in entry["files"]]  # type: ignore[attr-defined]
        manifest.append(entry)
    write_text_atomic(path, json.dumps(manifest, indent=2) + "\n")


def _write_wav(path: Path, samples: np.ndarray) -> None:
    with wave.open(str(path), "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(SAMPLING_RATE)
        audio.writeframes(samples.astype("<i2").tobytes())
