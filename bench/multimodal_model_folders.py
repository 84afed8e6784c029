"""Write a weightless model folder for a multimodal benchmark, complete enough for vLLM's input processing.

    python bench/multimodal_model_folders.py whisper OUT_DIR [--layers N] [--precision P]
    python bench/multimodal_model_folders.py qwen3-vl-235b-a22b OUT_DIR [--layers N] [--precision P]

vLLM runs such a folder with `LLM(model=OUT_DIR, load_format="dummy")`: random weights, but the real
architecture (config.json from harness/models/<benchmark>.json) and a real Hugging Face processor, which vLLM
instantiates to turn audio or images into model inputs. So beside config.json the folder holds the
processor configs, the tokenizer (tokenizer.json + tokenizer_config.json), the chat template and
generation_config.json, each as the published repository has it (see the notes per file below).

Tokenizers are built here from vocabularies that PyPI packages ship (Hugging Face is not reachable):

* whisper: openai-whisper's `whisper/assets/multilingual.tiktoken` (the BPE ranks whisper-large-v3 uses)
  and its `LANGUAGES` table, from the sdist fetched with
      pip download --no-deps --no-binary :all: openai-whisper==20250625 -d ~/.cache/submitter/mm-vocab
  converted to a byte-level BPE tokenizer.json the way transformers' WhisperConverter builds it, with the
  special tokens at whisper-large-v3's ids: <|endoftext|> 50257, <|startoftranscript|> 50258, 100 language
  tokens 50259-50358, <|translate|> 50359, <|transcribe|> 50360, <|startoflm|> 50361, <|startofprev|>
  50362, <|nospeech|> 50363, <|notimestamps|> 50364, timestamps <|0.00|>..<|30.00|> 50365-51865 (51866).
* qwen3-vl-235b-a22b: DashScope's `dashscope/resources/qwen.tiktoken` (the 151,643 byte-level BPE ranks
  of Qwen, which Qwen2/Qwen3 kept), from the wheel fetched with
      pip download --no-deps dashscope==2.0.2 -d ~/.cache/submitter/mm-vocab
  converted to Qwen2's tokenizer.json layout (NFC, Qwen's split regex, byte-level BPE) with the 26 added
  tokens 151643-151668 (<|endoftext|>, <|im_start|>, <|im_end|>, ... <|vision_start|> 151652,
  <|vision_end|> 151653, <|image_pad|> 151655, <|video_pad|> 151656, ... </think> 151668).

The script fetches a missing archive itself with that `pip download` command (PyPI is reachable where
folders are built; copy the folder to a GPU host without network). Only the project's dependencies are
used: tokenizers (and the standard library).

config.json and the marker of a weightless model are harness/stand_in_models.py's (`submitter data
dummy-model`), with its --layers (fewer decoder layers) and --precision (published: the checkpoint the
published systems ran, e.g. Qwen3-VL's FP8-dynamic, whisper in bf16).
"""

# ruff: noqa: E501  (the Qwen split regex and the chat template are kept whole, as published)

from __future__ import annotations

import argparse
import ast
import base64
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from harness.stand_in_models import DUMMY_MARKER, PRECISIONS, architecture_file, write_dummy_model
from submitter.errors import UsageProblem

CACHE = Path.home() / ".cache" / "submitter" / "mm-vocab"

WHISPER_SDIST = ("openai-whisper", "20250625", "openai_whisper-20250625.tar.gz")
DASHSCOPE_WHEEL = ("dashscope", "2.0.2", "dashscope-2.0.2-py3-none-any.whl")


# ---------------------------------------------------------------------------------------------------------
# Vocabulary archives from PyPI


def _archive(name: str, version: str, filename: str) -> Path:
    path = CACHE / filename
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            f"{name}=={version}",
            "-d",
            str(CACHE),
        ]
        if filename.endswith(".tar.gz"):
            command[4:4] = ["--no-binary", ":all:"]
        print("fetching:", " ".join(command), file=sys.stderr)
        subprocess.run(command, check=True)
    if not path.is_file():
        raise SystemExit(f"{path} is missing after pip download")
    return path


def _whisper_assets() -> tuple[bytes, dict[str, str]]:
    """multilingual.tiktoken and the LANGUAGES table (code -> name, in token order) of openai-whisper."""
    top = WHISPER_SDIST[2].removesuffix(".tar.gz")
    with tarfile.open(_archive(*WHISPER_SDIST)) as tar:
        ranks = tar.extractfile(f"{top}/whisper/assets/multilingual.tiktoken").read()
        source = tar.extractfile(f"{top}/whisper/tokenizer.py").read().decode("utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "LANGUAGES" for t in node.targets):
            return ranks, ast.literal_eval(node.value)
    raise SystemExit("LANGUAGES not found in whisper/tokenizer.py")


def _qwen_ranks() -> bytes:
    with zipfile.ZipFile(_archive(*DASHSCOPE_WHEEL)) as wheel:
        return wheel.read("dashscope/resources/qwen.tiktoken")


# ---------------------------------------------------------------------------------------------------------
# tiktoken ranks -> byte-level BPE (vocab + merges), as transformers' tiktoken conversion does it


def _bytes_to_unicode() -> dict[int, str]:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(printable, chars, strict=True)}


def _load_ranks(text: bytes) -> dict[bytes, int]:
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in text.splitlines() if line)
    }


def _bpe_vocab_merges(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The vocabulary in byte-level characters, and for each multi-byte token (by rank) the merge that
    makes it: BPE of its bytes with only lower-ranked merges allowed ends in exactly two parts."""
    byte_char = _bytes_to_unicode()

    def text(token: bytes) -> str:
        return "".join(byte_char[b] for b in token)

    vocab: dict[str, int] = {}
    merges: list[tuple[str, str]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        vocab[text(token)] = rank
        if len(token) < 2:
            continue
        parts = [bytes([b]) for b in token]
        while True:
            best = None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) != 2:
            raise SystemExit(f"rank {rank}: token does not split into one merge ({len(parts)} parts)")
        merges.append((text(parts[0]), text(parts[1])))
    return vocab, merges


def _save_tokenizer(tok: Tokenizer, added: list[tuple[int, str, bool]], path: Path) -> None:
    """tokenizer.json with the added tokens listed at their ids, checked by loading it back: a tokenizer.json
    numbers added tokens from the end of the model vocabulary, in the order listed."""
    data = json.loads(tok.to_str())
    data["added_tokens"] = [
        {
            "id": i,
            "content": c,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": s,
        }
        for i, c, s in added
    ]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    loaded = Tokenizer.from_file(str(path))
    if [loaded.token_to_id(c) for _, c, _ in added] != [i for i, _, _ in added]:
        raise SystemExit(f"{path}: added tokens are not at their ids")
    if [loaded.encode(c, add_special_tokens=False).ids for _, c, _ in added] != [[i] for i, _, _ in added]:
        raise SystemExit(f"{path}: added tokens do not encode to their ids")


def _added_decoder(tokens: list[tuple[int, str, bool]]) -> dict[str, dict]:
    return {
        str(i): {
            "content": c,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": s,
        }
        for i, c, s in tokens
    }


# ---------------------------------------------------------------------------------------------------------
# Whisper (openai/whisper-large-v3)


def _whisper_specials(languages: dict[str, str]) -> list[str]:
    langs = [f"<|{code}|>" for code in languages]
    if len(langs) != 100:  # large-v3 has 100 languages (Cantonese, "yue", is the 100th)
        raise SystemExit(f"expected 100 whisper languages, found {len(langs)}")
    return [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *langs,
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
    ]


def write_whisper(out: Path, config: dict) -> None:
    ranks_text, languages = _whisper_assets()
    ranks = _load_ranks(ranks_text)
    # Rank 50256 is an empty placeholder in the tiktoken file, and stays the empty string in the vocabulary
    # (as transformers' tiktoken conversion leaves it): the model vocabulary is 50,257 entries, so the added
    # tokens, which a tokenizer.json numbers from there, start at 50257 with <|endoftext|>.
    if [t for t in ranks if not t] != [b""] or ranks[b""] != 50256 or len(ranks) != 50257:
        raise SystemExit("unexpected multilingual.tiktoken layout")
    vocab, merges = _bpe_vocab_merges(ranks)

    specials = _whisper_specials(languages)
    timestamps = [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    added = [(50257 + i, t, True) for i, t in enumerate(specials)]
    added += [(50257 + len(specials) + i, t, False) for i, t in enumerate(timestamps)]
    if added[-1][0] + 1 != config["vocab_size"]:
        raise SystemExit(
            f"whisper tokens end at {added[-1][0] + 1}, config vocab_size {config['vocab_size']}"
        )
    ids = {c: i for i, c, _ in added}
    if (ids["<|startoftranscript|>"], ids["<|en|>"], ids["<|transcribe|>"], ids["<|notimestamps|>"]) != (
        50258,
        50259,
        50360,
        50364,
    ):
        raise SystemExit("whisper special token ids are off")

    tok = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=merges,
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
        )
    )
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # WhisperConverter's post-processor with no language/task set:
    # <|startoftranscript|> <|notimestamps|> ... <|endoftext|>
    tok.post_processor = processors.TemplateProcessing(
        single="<|startoftranscript|>:0 <|notimestamps|>:0 $A:0 <|endoftext|>:0",
        pair="<|startoftranscript|>:0 <|notimestamps|>:0 $A:0 $B:1 <|endoftext|>:1",
        special_tokens=[
            ("<|endoftext|>", 50257),
            ("<|startoftranscript|>", 50258),
            ("<|notimestamps|>", 50364),
        ],
    )
    _save_tokenizer(tok, added, out / "tokenizer.json")

    _json(
        out / "tokenizer_config.json",
        {
            "add_bos_token": False,
            "add_prefix_space": False,
            "added_tokens_decoder": _added_decoder(added),
            "additional_special_tokens": specials[1:],
            "bos_token": "<|endoftext|>",
            "clean_up_tokenization_spaces": True,
            "eos_token": "<|endoftext|>",
            "errors": "replace",
            "model_max_length": 1000000000000000019884624838656,
            "pad_token": "<|endoftext|>",
            "processor_class": "WhisperProcessor",
            "return_attention_mask": False,
            "tokenizer_class": "WhisperTokenizer",
            "unk_token": "<|endoftext|>",
        },
    )
    # openai/whisper-large-v3 preprocessor_config.json (WhisperFeatureExtractor, 128 mel bins, 30 s windows).
    _json(
        out / "preprocessor_config.json",
        {
            "chunk_length": 30,
            "feature_extractor_type": "WhisperFeatureExtractor",
            "feature_size": 128,
            "hop_length": 160,
            "n_fft": 400,
            "n_samples": 480000,
            "nb_max_frames": 3000,
            "padding_side": "right",
            "padding_value": 0.0,
            "processor_class": "WhisperProcessor",
            "return_attention_mask": False,
            "sampling_rate": 16000,
        },
    )
    # The decoding fields of large-v3's generation_config.json that follow from config and tokenizer. The
    # published file also lists suppress_tokens and alignment_heads (word timestamps); no source for those
    # lists was reachable, and vLLM reads neither.
    lang_to_id = {f"<|{code}|>": ids[f"<|{code}|>"] for code in languages}
    _json(
        out / "generation_config.json",
        {
            "begin_suppress_tokens": config["begin_suppress_tokens"],
            "bos_token_id": config["bos_token_id"],
            "decoder_start_token_id": config["decoder_start_token_id"],
            "eos_token_id": config["eos_token_id"],
            "is_multilingual": True,
            "lang_to_id": lang_to_id,
            "max_initial_timestamp_index": 50,
            "max_length": config["max_length"],
            "no_timestamps_token_id": ids["<|notimestamps|>"],
            "pad_token_id": config["pad_token_id"],
            "prev_sot_token_id": ids["<|startofprev|>"],
            "return_timestamps": False,
            "task_to_id": {"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        },
    )


# ---------------------------------------------------------------------------------------------------------
# Qwen3-VL (Qwen/Qwen3-VL-235B-A22B-Instruct)

QWEN_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN_ADDED = [  # (content, special): ids 151643.. in this order, as Qwen3's tokenizer_config.json lists them
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False),
    ("<|fim_pad|>", False),
    ("<|repo_name|>", False),
    ("<|file_sep|>", False),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
]

# Qwen3-VL Instruct's chat template (chat_template.json of the Qwen3-VL Instruct checkpoints): OpenAI-style
# content parts, an image part being any of {"type": "image"}, {"image": ...} or {"image_url": ...}.
QWEN3_VL_CHAT_TEMPLATE = (
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0].role == 'system' %}\n"
    "        {%- if messages[0].content is string %}\n            {{- messages[0].content }}\n"
    "        {%- else %}\n            {%- for content in messages[0].content %}\n"
    "                {%- if 'text' in content %}\n                    {{- content.text }}\n"
    "                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n"
    "        {{- '\\n\\n' }}\n    {%- endif %}\n"
    '    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n'
    'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}\n'
    '    {%- for tool in tools %}\n        {{- "\\n" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n'
    '    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments '
    'within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": '
    '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}\n'
    "{%- else %}\n    {%- if messages[0].role == 'system' %}\n        {{- '<|im_start|>system\\n' }}\n"
    "        {%- if messages[0].content is string %}\n            {{- messages[0].content }}\n"
    "        {%- else %}\n            {%- for content in messages[0].content %}\n"
    "                {%- if 'text' in content %}\n                    {{- content.text }}\n"
    "                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n"
    "        {{- '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n"
    "{%- set image_count = namespace(value=0) %}\n{%- set video_count = namespace(value=0) %}\n"
    '{%- for message in messages %}\n    {%- if message.role == "user" %}\n'
    "        {{- '<|im_start|>' + message.role + '\\n' }}\n        {%- if message.content is string %}\n"
    "            {{- message.content }}\n        {%- else %}\n            {%- for content in message.content %}\n"
    "                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}\n"
    "                    {%- set image_count.value = image_count.value + 1 %}\n"
    "                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}\n"
    "                    <|vision_start|><|image_pad|><|vision_end|>\n"
    "                {%- elif content.type == 'video' or 'video' in content %}\n"
    "                    {%- set video_count.value = video_count.value + 1 %}\n"
    "                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}\n"
    "                    <|vision_start|><|video_pad|><|vision_end|>\n"
    "                {%- elif 'text' in content %}\n                    {{- content.text }}\n"
    "                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n"
    "        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"assistant\" %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' }}\n        {%- if message.content is string %}\n"
    "            {{- message.content }}\n        {%- else %}\n"
    "            {%- for content_item in message.content %}\n                {%- if 'text' in content_item %}\n"
    "                    {{- content_item.text }}\n                {%- endif %}\n            {%- endfor %}\n"
    "        {%- endif %}\n        {%- if message.tool_calls %}\n"
    "            {%- for tool_call in message.tool_calls %}\n"
    "                {%- if (loop.first and message.content) or (not loop.first) %}\n"
    "                    {{- '\\n' }}\n                {%- endif %}\n                {%- if tool_call.function %}\n"
    "                    {%- set tool_call = tool_call.function %}\n                {%- endif %}\n"
    '                {{- \'<tool_call>\\n{"name": "\' }}\n                {{- tool_call.name }}\n'
    '                {{- \'", "arguments": \' }}\n                {%- if tool_call.arguments is string %}\n'
    "                    {{- tool_call.arguments }}\n                {%- else %}\n"
    "                    {{- tool_call.arguments | tojson }}\n                {%- endif %}\n"
    "                {{- '}\\n</tool_call>' }}\n            {%- endfor %}\n        {%- endif %}\n"
    "        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n"
    '        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}\n'
    "            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n"
    "        {%- if message.content is string %}\n            {{- message.content }}\n        {%- else %}\n"
    "            {%- for content in message.content %}\n"
    "                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}\n"
    "                    {%- set image_count.value = image_count.value + 1 %}\n"
    "                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}\n"
    "                    <|vision_start|><|image_pad|><|vision_end|>\n"
    "                {%- elif content.type == 'video' or 'video' in content %}\n"
    "                    {%- set video_count.value = video_count.value + 1 %}\n"
    "                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}\n"
    "                    <|vision_start|><|video_pad|><|vision_end|>\n"
    "                {%- elif 'text' in content %}\n                    {{- content.text }}\n"
    "                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n"
    "        {{- '\\n</tool_response>' }}\n"
    '        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}\n'
    "            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n"
)


def write_qwen3_vl(out: Path, config: dict) -> None:
    ranks = _load_ranks(_qwen_ranks())
    if len(ranks) != 151643 or sorted(ranks.values()) != list(range(151643)):
        raise SystemExit("unexpected qwen.tiktoken layout")
    vocab, merges = _bpe_vocab_merges(ranks)
    added = [(151643 + i, c, s) for i, (c, s) in enumerate(QWEN_ADDED)]

    tok = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=merges,
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
            byte_fallback=False,
        )
    )
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    _save_tokenizer(tok, added, out / "tokenizer.json")
    ids = {c: i for i, c, _ in added}
    text = config["text_config"]
    for key, token in (
        ("image_token_id", "<|image_pad|>"),
        ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"),
        ("vision_end_token_id", "<|vision_end|>"),
    ):
        if config[key] != ids[token]:
            raise SystemExit(f"config {key} {config[key]} != tokenizer {token} {ids[token]}")

    _json(
        out / "tokenizer_config.json",
        {
            "add_bos_token": False,
            "add_prefix_space": False,
            "added_tokens_decoder": _added_decoder(added),
            "additional_special_tokens": [c for _, c, s in added[1:] if s],
            "bos_token": None,
            "chat_template": QWEN3_VL_CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False,
            "eos_token": "<|im_end|>",
            "errors": "replace",
            "model_max_length": text["max_position_embeddings"],
            "pad_token": "<|endoftext|>",
            "processor_class": "Qwen3VLProcessor",
            "split_special_tokens": False,
            "tokenizer_class": "Qwen2Tokenizer",
            "unk_token": None,
        },
    )
    _json(out / "chat_template.json", {"chat_template": QWEN3_VL_CHAT_TEMPLATE})
    # Qwen3-VL's preprocessor_config.json and video_preprocessor_config.json: 16-pixel patches merged 2x2,
    # so one <|image_pad|> per 32x32 pixels; the pixel budget is 65,536..16,777,216 per image.
    _json(
        out / "preprocessor_config.json",
        {
            "size": {"longest_edge": 16777216, "shortest_edge": 65536},
            "patch_size": 16,
            "temporal_patch_size": 2,
            "merge_size": 2,
            "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5],
            "processor_class": "Qwen3VLProcessor",
            "image_processor_type": "Qwen2VLImageProcessorFast",
        },
    )
    _json(
        out / "video_preprocessor_config.json",
        {
            "size": {"longest_edge": 25165824, "shortest_edge": 4096},
            "patch_size": 16,
            "temporal_patch_size": 2,
            "merge_size": 2,
            "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5],
            "processor_class": "Qwen3VLProcessor",
            "video_processor_type": "Qwen3VLVideoProcessor",
        },
    )
    # Qwen3-VL Instruct's sampling defaults (top_p 0.8, top_k 20, temperature 0.7); vLLM applies these unless
    # a request sets its own.
    _json(
        out / "generation_config.json",
        {
            "bos_token_id": text["bos_token_id"],
            "pad_token_id": ids["<|endoftext|>"],
            "do_sample": True,
            "eos_token_id": [ids["<|im_end|>"], ids["<|endoftext|>"]],
            "top_k": 20,
            "top_p": 0.8,
            "repetition_penalty": 1.0,
            "temperature": 0.7,
        },
    )


def _json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("benchmark", choices=["whisper", "qwen3-vl-235b-a22b"])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--layers", type=int, help="fewer decoder layers than the published model")
    parser.add_argument("--precision", choices=PRECISIONS, default="checkpoint", help="as data dummy-model's")
    args = parser.parse_args(argv)

    published = json.loads(architecture_file(args.benchmark).read_text(encoding="utf-8"))
    out: Path = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    try:
        write_dummy_model(out, args.benchmark, precision=args.precision, layers=args.layers)
    except UsageProblem as problem:
        raise SystemExit(str(problem)) from None
    if args.benchmark == "whisper":
        write_whisper(out, published)
    else:
        write_qwen3_vl(out, published)
    marker = json.loads((out / DUMMY_MARKER).read_text(encoding="utf-8"))
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(
        f"{out}: {args.benchmark}, {marker['layers']} of {marker['model_layers']} layers, "
        f"weights {marker['weights']}, {size / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
