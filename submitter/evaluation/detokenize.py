"""Token ids back to text with the model's own tokenizer (`tokenizer.json` in the model directory).

Decoding matches Hugging Face's `batch_decode(ids, skip_special_tokens=True)`, which the reference uses:
the same Rust decoder, then the "clean-up" of spaces before punctuation when the model's
tokenizer_config.json asks for it (Llama 3.1's does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from submitter.errors import SubmitterError, UsageProblem
from submitter.hub import model_folder

TOKENIZER_FILE = "tokenizer.json"

# Hugging Face's clean_up_tokenization, in its order.
_CLEAN_UP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)

Detokenizer = Callable[[Sequence[Sequence[int]]], list[str]]


def clean_up_spaces(text: str) -> str:
    for old, new in _CLEAN_UP:
        text = text.replace(old, new)
    return text


def find_tokenizer(model: str) -> Path | None:
    """The folder with the model's tokenizer.json: the model directory, or a hub name's newest snapshot."""
    return model_folder(model, TOKENIZER_FILE)


def load_detokenizer(
    model_dir: Path, skip_special_tokens: bool = True, as_tokenizer_config_says: bool = True
) -> Detokenizer:
    """Hugging Face's batch_decode with the tokenizer in `model_dir`; `skip_special_tokens` False keeps
    markers that evaluation reads (gpt-oss-120b's Harmony channels). `as_tokenizer_config_says` False
    skips the clean-up of spaces, as vLLM's own output text does (what whisper's and qwen3-vl's references
    log)."""
    from tokenizers import Tokenizer

    tokenizer_file = model_dir / TOKENIZER_FILE
    if not tokenizer_file.is_file():
        raise UsageProblem(
            f"{model_dir} has no tokenizer.json; pass --model with the checkpoint directory the run used"
        )
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # the Rust library raises its own exception types
        raise SubmitterError(f"{tokenizer_file} cannot be loaded as a tokenizer ({exc})") from None
    config_file = model_dir / "tokenizer_config.json"
    config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    clean_up = as_tokenizer_config_says and bool(config.get("clean_up_tokenization_spaces", False))

    def decode(batch: Sequence[Sequence[int]]) -> list[str]:
        texts = tokenizer.decode_batch([list(ids) for ids in batch], skip_special_tokens=skip_special_tokens)
        return [clean_up_spaces(text) for text in texts] if clean_up else texts

    return decode
