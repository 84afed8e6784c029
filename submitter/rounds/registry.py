"""Loads the round packs (`<round>.toml` beside this module) into `RoundRules`.

A pack may say `extends = "<older round>"`: it is then the older pack with its own tables merged on top
(tables merge key by key, every other value replaces; a benchmark's `scenarios` and
`extra_accuracy_files` are stated whole, since a round may take one of their entries away), minus the
benchmarks it names in `drop_benchmarks`. So a new round is written as what changed, and reading it
shows the differences.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from submitter.errors import SubmitterError, UsageProblem
from submitter.rounds.models import RoundRules

_PACKAGE = "submitter.rounds"
# Tables a pack replaces whole instead of merging key by key.
_WHOLE_TABLES = frozenset({"scenarios", "extra_accuracy_files"})


class UnknownRoundError(UsageProblem):
    pass


def available_rounds() -> tuple[str, ...]:
    names = (
        entry.name.removesuffix(".toml")
        for entry in resources.files(_PACKAGE).iterdir()
        if entry.name.endswith(".toml")
    )
    return tuple(sorted(names, key=_round_sort_key))


def _round_sort_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.removeprefix("v").split("."))


@cache
def load_round(name: str) -> RoundRules:
    """The rules of round `name` ("v6.1", or "6.1"); raises UnknownRoundError for other names."""
    if not name.startswith("v"):
        return load_round(f"v{name}")
    raw = _cite_round(_resolved_pack(name, chain=()), name)
    seeds = raw.get("loadgen", {}).get("seeds", {})
    for key, value in seeds.items():
        if isinstance(value, str) and value.isdecimal():
            seeds[key] = int(value)
    try:
        return msgspec.convert(raw, RoundRules)
    except msgspec.ValidationError as exc:
        raise SubmitterError(f"round pack {name}.toml is inconsistent: {exc}") from None


def _read_pack(name: str) -> dict[str, Any]:
    if name not in available_rounds():
        raise UnknownRoundError(
            f"unknown round {name!r}; this version of submitter knows {', '.join(available_rounds())}"
        )
    text = resources.files(_PACKAGE).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SubmitterError(f"round pack {name}.toml is not valid TOML: {exc}") from None


def _resolved_pack(name: str, chain: tuple[str, ...]) -> dict[str, Any]:
    if name in chain:
        raise SubmitterError(f"round packs extend each other in a loop: {' -> '.join((*chain, name))}")
    pack = _read_pack(name)
    parent_name = pack.pop("extends", None)
    dropped = pack.pop("drop_benchmarks", [])
    merged = pack if parent_name is None else _merge(_resolved_pack(parent_name, (*chain, name)), pack)
    for benchmark in dropped:
        if merged.get("benchmarks", {}).pop(benchmark, None) is None:
            raise SubmitterError(f"round pack {name}.toml drops {benchmark!r}, which its parent lacks")
    return merged


def _cite_round(pack: Any, name: str) -> Any:
    """Sources shared through `extends` say `{round}` where they cite the round's own table."""
    if isinstance(pack, dict):
        return {
            key: value.replace("{round}", name)
            if key == "source" and isinstance(value, str)
            else _cite_round(value, name)
            for key, value in pack.items()
        }
    if isinstance(pack, list):
        return [_cite_round(item, name) for item in pack]
    return pack


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key not in _WHOLE_TABLES:
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
