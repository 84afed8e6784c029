"""whisper's stand-ins: a manifest and WAV files with the real duration profile, and a demo model.

The clips are made the way the reference's repackage_librispeech.py makes them: utterances of one
chapter joined, 0.5 s of silence between them, while the clip stays within 30 s. Utterance lengths follow
LibriSpeech's dev sets (about 7 s on average: 10.5 hours over 5,567 utterances, 1.3 to 35 s), so the
clips come out near 25 s, as the 1,633 real ones do. The audio is speech-like (a voiced tone whose pitch
drifts, pulsed at a syllable rate, with breath noise), the transcripts are words at a speaking rate, in
lower case as the reference's conversion writes them (preprocessing_utils.py), and each clip's expected
answer length follows Red Hat's v6.0 8x H200 run.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np

from harness.benchmarks.demo_text import mutate_words, write_text_demo_model
from harness.benchmarks.whisper.dataset import (
    AUDIO_KEY,
    MAX_DURATION_S,
    NAME_KEY,
    OUTPUT_LENGTH_KEY,
    SAMPLING_RATE,
    pcm16_to_float,
)
from harness.media import AudioClip
from harness.stand_in_models import prompt_key
from submitter.rounds.models import GenerationRules

PAD_S = 0.5  # repackage_librispeech.py PAD_DURATION
_UTTERANCE_MEDIAN_S, _UTTERANCE_SIGMA = 5.9, 0.55  # log-normal: mean about 7 s
_SHORTEST_S, _LONGEST_S = 1.3, 35.0
_UTTERANCES_PER_CHAPTER = 30  # 5,567 utterances in 188 chapters
_WORDS_PER_SECOND = 2.7  # read speech
# Tokens per second of audio in answers: Red Hat's v6.0 8x H200 run logged 36,395.7 tokens/s at 485.582
# samples/s (74.95 tokens a clip), over clips of about 24.8 s.
_CLIP_MEAN_S = 24.8
_READ_SPEECH = (
    "the and of to a in that he was it his had with as for you her she at him on my is said but be "
    "not all so they have which one from were this when by there would an what no their me if or "
    "them out up little man upon into great could time more then some very now like old before good "
    "over after down went made well day know came about see again house long any never might thought "
    "night father heart hand eyes away room life mother nothing door through head face place things "
    "without voice young"
)
_WORDS = _READ_SPEECH.split()


def _utterance_seconds(draw: random.Random) -> float:
    seconds = math.exp(draw.gauss(math.log(_UTTERANCE_MEDIAN_S), _UTTERANCE_SIGMA))
    return round(min(max(seconds, _SHORTEST_S), _LONGEST_S), 2)


def _speech(seconds: float, draw: random.Random) -> np.ndarray:
    """Speech-like 16-bit audio: a voiced tone with harmonics, pulsed at about four syllables a second."""
    rng = np.random.default_rng(draw.randrange(2**32))
    t = np.arange(int(seconds * SAMPLING_RATE)) / SAMPLING_RATE
    pitch = draw.uniform(100.0, 220.0) * (1 + 0.08 * np.sin(2 * np.pi * draw.uniform(0.2, 0.6) * t))
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLING_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 5))
    syllables = np.clip(np.sin(2 * np.pi * draw.uniform(3.0, 5.0) * t), 0, None) ** 2
    signal = 0.12 * voiced * syllables + 0.01 * rng.standard_normal(t.size)
    return np.round(np.clip(signal, -1, 1) * 32767).astype(np.int16)


def _clip_record(name: str, utterances: list[tuple[np.ndarray, str]]) -> dict[str, object]:
    """One repackaged clip in the manifest's format (get_sample_json), its audio and name alongside."""
    pad = np.zeros(int(PAD_S * SAMPLING_RATE), dtype=np.int16)
    pieces: list[np.ndarray] = []
    for audio, _ in utterances:
        pieces += [pad, audio] if pieces else [audio]
    samples = np.concatenate(pieces)
    seconds = len(samples) / SAMPLING_RATE
    transcript = " ".join(text for _, text in utterances)
    file = {
        "channels": 1,
        "sample_rate": float(SAMPLING_RATE),
        "bitdepth": 16,
        "bitrate": 256000.0,
        "duration": seconds,
        "num_samples": len(samples),
        "encoding": "Signed Integer PCM",
        "silent": False,
        "fname": "",
        "speed": 1,
    }
    answer_tokens = max(1, round(seconds * 74.95 / _CLIP_MEAN_S))
    return {
        "transcript": transcript,
        "files": [file],
        "original_duration": seconds,
        "original_num_samples": len(samples),
        OUTPUT_LENGTH_KEY: answer_tokens,
        AUDIO_KEY: samples,
        NAME_KEY: name,
    }


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    records: list[dict[str, object]] = []
    chapter = 0
    while len(records) < count:
        chapter += 1
        source = f"{1000 + chapter}-{draw.randrange(100000, 999999)}"
        clip: list[tuple[np.ndarray, str]] = []
        seconds = 0.0
        for _ in range(_UTTERANCES_PER_CHAPTER):
            length = _utterance_seconds(draw)
            if length > MAX_DURATION_S:
                continue  # the reference skips utterances longer than a clip
            if clip and seconds + PAD_S + length > MAX_DURATION_S:
                records.append(_clip_record(f"{source}_{len(records)}", clip))
                clip, seconds = [], 0.0
            words = [draw.choice(_WORDS) for _ in range(max(1, round(length * _WORDS_PER_SECOND)))]
            clip.append((_speech(length, draw), " ".join(words)))
            seconds += length + (PAD_S if len(clip) > 1 else 0.0)
        if clip:
            records.append(_clip_record(f"{source}_{len(records)}", clip))
    return records[:count]


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    """A tokenizer over the transcripts and each clip's answer: its transcript with about one word in fifty
    changed, which scores a passing, imperfect word accuracy (about 98 %)."""
    draw = random.Random(seed)
    answers = [mutate_words(str(record["transcript"]), _WORDS, draw, rate=0.02) for record in records]
    keys = []
    for record in records:
        samples = record[AUDIO_KEY]
        assert isinstance(samples, np.ndarray)
        keys.append(prompt_key((), AudioClip(pcm16_to_float(samples), SAMPLING_RATE)))
    return write_text_demo_model(directory, answers, max_tokens, keys=keys)
