"""What `submitter tune-engine` searches: engine arguments and the values tried, per backend.

The spaces are data (`harness/engines/search_spaces.json`, one entry per backend beside its engine
module); `--space ARG=V1,V2` on the command line replaces them for one search. Two names are not engine
arguments but the descriptor's parallelism (`replicas`, `tensor_parallel_size`), which a search may vary
as long as the system has the accelerators.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from submitter.errors import UsageProblem

SPACES_FILE = Path(__file__).parent / "engines" / "search_spaces.json"
# Searchable names that live on the benchmark's setup rather than in engine_args.
SETUP_FIELDS = ("replicas", "tensor_parallel_size")


class Dimension(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    arg: str = Field(min_length=1)
    values: tuple[Any, ...] = Field(min_length=1)  # None: the argument unset (the engine's default)
    default: Any = None  # what the engine does when it is unset, where known: not tried twice
    why: str = ""

    def normal(self, value: Any) -> Any:
        """The value as the engine sees it: unset is its default."""
        return self.default if value is None else value


class _SpacesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str
    # A list of dimensions, or the name of the backend whose space this one shares.
    backends: dict[str, list[Dimension] | str]


class SearchSpace(RootModel[tuple[Dimension, ...]]):
    @property
    def dimensions(self) -> tuple[Dimension, ...]:
        return self.root


@cache
def _spaces() -> _SpacesFile:
    return _SpacesFile.model_validate_json(SPACES_FILE.read_text(encoding="utf-8"))


def space_for(backend: str) -> SearchSpace:
    """The backend's built-in space; a backend without one must be given `--space`."""
    spaces = _spaces().backends
    entry = spaces.get(backend)
    while isinstance(entry, str):
        entry = spaces.get(entry)
    if entry is None:
        raise UsageProblem(
            f"backend {backend} has no built-in search space ({SPACES_FILE.name}); "
            "name what to search with --space ARG=V1,V2"
        )
    return SearchSpace(tuple(entry))


def parse_value(text: str) -> Any:
    """A value as written on the command line: JSON where it parses (numbers, true, null), else a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_space(options: tuple[str, ...]) -> SearchSpace:
    """`--space ARG=V1,V2` options, in their order."""
    dimensions = []
    seen: set[str] = set()
    for option in options:
        arg, separator, values = option.partition("=")
        arg = arg.strip()
        if not separator or not arg or not values.strip():
            raise UsageProblem(f"--space {option!r}: write ARG=V1,V2 (e.g. max_num_seqs=256,512)")
        if arg in seen:
            raise UsageProblem(f"--space names {arg} twice; list all its values in one option")
        seen.add(arg)
        parsed = tuple(parse_value(v.strip()) for v in values.split(","))
        if arg in SETUP_FIELDS and not all(type(value) is int and value >= 1 for value in parsed):
            raise UsageProblem(f"--space {option!r}: {arg} takes whole numbers of 1 or more")
        dimensions.append(Dimension(arg=arg, values=parsed))
    return SearchSpace(tuple(dimensions))
