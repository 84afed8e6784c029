"""The samples a run feeds LoadGen, held in memory once: each prompt as the token ids the dataset holds.

Every benchmark plug-in's loader produces these (`harness.benchmarks`); the query sample library and the
engines read nothing else. Prompts are never decoded and re-encoded; each is a compact int32 array.
Where the dataset records its reference answers' lengths, they come along: a dummy-weight timing run
generates exactly that many tokens per sample, the real output profile. Where the reference edits an
answer before LoadGen sees it (mixtral-8x7b strips trailing EOS and cuts code at its closing fence),
`finish` does the same to every completed answer, by dataset index.
Samples that are not only text carry `media` (audio, or a chat with images; `harness.media`), and
benchmarks whose LoadGen responses are text rather than token ids (whisper's characters, qwen3-vl's JSON)
give `answer_payload`: the harness decodes each answer with the model's tokenizer and logs what it returns.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.media import Media
from submitter.errors import UsageProblem

# A benchmark's LoadGen response for an answer's text (e.g. whisper's int64 character labels).
AnswerPayload = Callable[[str], array]


@dataclass(frozen=True)
class Prompts:
    path: Path
    token_ids: tuple[array, ...]
    output_lengths: tuple[int, ...] | None = None
    finish: Callable[[int, Sequence[int]], Sequence[int]] | None = None
    media: tuple[Media, ...] | None = None
    answer_payload: AnswerPayload | None = None

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def mean_length(self) -> float:
        return sum(map(len, self.token_ids)) / len(self.token_ids) if self.token_ids else 0.0


def prompt_token_ids(
    prompts: Iterable[object], where: str, max_input_tokens: int | None, column: str = "tok_input"
) -> tuple[array, ...]:
    """Each record's prompt ids as int32, checked: a non-empty list of token ids (numpy integers from a
    pickle included), no longer than the benchmark allows; a problem names `where` ("dataset X") and
    the record."""
    token_ids = []
    for number, ids in enumerate(prompts):
        if not isinstance(ids, list | tuple) and hasattr(ids, "tolist"):
            ids = ids.tolist()  # a numpy array
        if not isinstance(ids, list | tuple) or not ids or not all(map(_is_token_id, ids)):
            raise UsageProblem(
                f"{where}, record {number}: {column} must be a non-empty list of token ids; "
                "the harness sends prompts as token ids, so the file must carry them"
            )
        if max_input_tokens is not None and len(ids) > max_input_tokens:
            raise UsageProblem(
                f"{where}, record {number}: the prompt has {len(ids)} tokens, more than the "
                f"benchmark's {max_input_tokens}; this is not the benchmark's dataset"
            )
        token_ids.append(array("i", ids))
    return tuple(token_ids)


def answer_lengths(values: Iterable[object], where: str, column: str) -> tuple[int, ...]:
    """Each record's reference answer length in tokens, what a dummy-weight run generates; a value that is
    no number (an empty cell, text) is a problem naming `where` and the record."""
    lengths = []
    for number, value in enumerate(values):
        try:
            lengths.append(int(value))  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            raise UsageProblem(
                f"{where}, record {number}: {column} is {value!r}, not a number of tokens; it is the "
                "reference answer's length a dummy-weight run generates: give it in every record, or drop "
                "the column"
            ) from None
    return tuple(lengths)


def _is_token_id(value: object) -> bool:
    return hasattr(value, "__index__") and not isinstance(value, bool) and value.__index__() >= 0  # type: ignore[attr-defined]
