"""What the lint knows about accelerator parts (accelerators.toml beside this module)."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from msgspec import Struct

_MEMORY_TECHNOLOGY = re.compile(r"HBM\d[Ee]?|GDDR\d[Xx]?|LPDDR\d[Xx]?|(?<!LP)DDR\d", re.IGNORECASE)


class AcceleratorPart(Struct, frozen=True):
    names: tuple[str, ...]
    memory: tuple[str, ...]
    variant: str | None = None

    def matches(self, model_name: str) -> bool:
        upper = model_name.upper()
        if self.variant and self.variant.upper() not in upper:
            return False
        return any(name_pattern(name).search(model_name) for name in self.names)


@cache
def name_pattern(name: str) -> re.Pattern[str]:
    """A part name as a token: not glued to letters or digits before, nor to a digit after."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?!\d)", re.IGNORECASE)


@cache
def known_parts() -> tuple[AcceleratorPart, ...]:
    text = Path(__file__).with_name("accelerators.toml").read_text(encoding="utf-8")
    return tuple(
        AcceleratorPart(tuple(entry["names"]), tuple(entry["memory"]), entry.get("variant"))
        for entry in tomllib.loads(text)["accelerator"]
    )


def identify(model_name: str) -> AcceleratorPart | None:
    candidates = set(names_in(model_name))
    return next(
        (part for part in known_parts() if candidates & set(part.names) and part.matches(model_name)), None
    )


def memory_technologies(text: str) -> set[str]:
    """Memory technologies named in free text, normalised like "HBM3e" and "GDDR6"."""
    return {_normalise(found) for found in _MEMORY_TECHNOLOGY.findall(text)}


def _normalise(technology: str) -> str:
    upper = technology.upper()
    return upper[:-1] + "e" if upper.startswith("HBM") and upper.endswith("E") else upper


@cache
def all_part_names() -> tuple[str, ...]:
    # Longest first, so "L40S" is tried before "L40" when scanning a system id.
    names = {name for part in known_parts() for name in part.names}
    return tuple(sorted(names, key=len, reverse=True))


def names_in(text: str) -> tuple[str, ...]:
    """The part names `text` may hold, longest first: a cheap test before the exact (compiled) patterns."""
    squashed = _squash(text)
    return tuple(name for name in all_part_names() if _squash(name) in squashed)


def _squash(text: str) -> str:
    return re.sub(r"[ _-]", "", text).lower()
