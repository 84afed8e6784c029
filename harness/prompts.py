"""The samples a run feeds LoadGen, held in memory once: each prompt as the token ids the dataset holds.

Every benchmark plug-in's loader produces these (`harness.benchmarks`); the query sample library and the
engines read nothing else. Prompts are never decoded and re-encoded; each is a compact int32 array.
Where the dataset records its reference answers' lengths, they come along: a dummy-weight timing run
generates exactly that many tokens per sample, the real output profile. Where the reference edits an
answer before LoadGen sees it (mixtral-8x7b strips trailing EOS and cuts code at its closing fence),
`finish` does the same to every completed answer, by dataset index.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Prompts:
    path: Path
    token_ids: tuple[array, ...]
    output_lengths: tuple[int, ...] | None = None
    finish: Callable[[int, Sequence[int]], Sequence[int]] | None = None

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def mean_length(self) -> float:
        return sum(map(len, self.token_ids)) / len(self.token_ids) if self.token_ids else 0.0
