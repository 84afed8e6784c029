"""Loads the round packs (`<round>.toml` beside this module) into `RoundRules`.

Every `submitter check` needs them, and parsing TOML costs more than the rest of checking a small tree:
the loaded rules are kept in a cache file (msgpack; `$SUBMITTER_CACHE_DIR`, else the user's cache folder)
named after a digest of the packs' bytes, so an edited pack is read afresh. Where no cache can be
written, the packs are simply parsed each time.

A pack may say `extends = "<older round>"`: it is then the older pack with its own tables merged on top
(tables merge key by key, every other value replaces; a benchmark's `scenarios` and
`extra_accuracy_files` are stated whole, since a round may take one of their entries away), minus the
benchmarks it names in `drop_benchmarks`. So a new round is written as what changed, and reading it
shows the differences.
"""

from __future__ import annotations

import os
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from submitter import __version__
from submitter.errors import SubmitterError, UsageProblem
from submitter.rounds.models import RoundRules

PACKS = Path(__file__).parent
# Tables a pack replaces whole instead of merging key by key.
_WHOLE_TABLES = frozenset({"scenarios", "extra_accuracy_files"})
SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")


class UnknownRoundError(UsageProblem):
    pass


@cache
def available_rounds() -> tuple[str, ...]:
    """The rounds with a pack, oldest first; the newest is the default where a round is not known."""
    return tuple(sorted((path.stem for path in PACKS.glob("*.toml")), key=_round_sort_key))


def _round_sort_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.removeprefix("v").split("."))


def load_round(name: str) -> RoundRules:
    """The rules of round `name` ("v6.1", or "6.1"); raises UnknownRoundError for other names."""
    if not name.startswith("v"):
        name = f"v{name}"
    rounds = _all_rounds()
    if name not in rounds:
        raise UnknownRoundError(
            f"unknown round {name!r}; this version of submitter knows {', '.join(available_rounds())}"
        )
    return rounds[name]


def round_seeds(name: str) -> tuple[int, ...]:
    """A round's three LoadGen seeds (round detection asks every round)."""
    seeds = load_round(name).loadgen.seeds
    return tuple(getattr(seeds, key) for key in SEED_KEYS)


def rounds_with_benchmark(benchmark: str) -> tuple[str, ...]:
    """The rounds whose rules have `benchmark`, oldest first."""
    return tuple(name for name in available_rounds() if benchmark in load_round(name).benchmarks)


def round_layout(name: str) -> str:
    """The name of a round's tree layout."""
    return load_round(name).layout.name


class _Cache(msgspec.Struct, frozen=True):
    digest: str
    rounds: dict[str, RoundRules]


@cache
def _all_rounds() -> dict[str, RoundRules]:
    """Every round's rules: from the cache when it holds these packs, else parsed (and cached)."""
    # A checksum of the packs names the cache: any edit of a pack (or a new submitter) reads them afresh.
    checksum = zlib.crc32(__version__.encode())
    for name in available_rounds():
        checksum = zlib.crc32(name.encode() + b"\0" + (PACKS / f"{name}.toml").read_bytes(), checksum)
    digest = f"{checksum:08x}"
    path = _cache_path(digest)
    if path is not None:
        try:
            return msgspec.msgpack.decode(path.read_bytes(), type=_Cache).rounds
        except (OSError, msgspec.DecodeError):
            pass  # no cache yet, or one an older submitter wrote
    rounds = {name: _build(name) for name in available_rounds()}
    if path is not None:
        _write_cache(path, _Cache(digest, rounds))
    return rounds


def _build(name: str) -> RoundRules:
    try:
        return msgspec.convert(_raw_round(name), RoundRules)
    except msgspec.ValidationError as exc:
        raise SubmitterError(f"round pack {name}.toml is inconsistent: {exc}") from None


def _cache_path(digest: str) -> Path | None:
    own = os.environ.get("SUBMITTER_CACHE_DIR")
    if own:
        return Path(own) / f"rounds-{digest}.msgpack"
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no home folder to find
        return None
    return base / "submitter" / f"rounds-{digest}.msgpack"


def _write_cache(path: Path, content: _Cache) -> None:
    """Best effort: a cache that cannot be written costs only time."""
    from submitter.fileio import write_bytes_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, msgspec.msgpack.encode(content))
    except OSError:
        pass


@cache
def _raw_round(name: str) -> dict[str, Any]:
    """The pack with what it extends merged in, its sources citing it, and its quoted seeds as numbers."""
    raw = _cite_round(_resolved_pack(name, chain=()), name)
    seeds = raw.get("loadgen", {}).get("seeds", {})
    for key, value in seeds.items():
        if isinstance(value, str) and value.isdecimal():
            seeds[key] = int(value)
    return raw


@cache
def _read_pack(name: str) -> dict[str, Any]:
    """A pack as written, parsed once (callers must not change it)."""
    if name not in available_rounds():
        raise UnknownRoundError(
            f"unknown round {name!r}; this version of submitter knows {', '.join(available_rounds())}"
        )
    import tomllib  # only when the cache of parsed packs is cold

    text = (PACKS / f"{name}.toml").read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SubmitterError(f"round pack {name}.toml is not valid TOML: {exc}") from None


def _resolved_pack(name: str, chain: tuple[str, ...]) -> dict[str, Any]:
    if name in chain:
        raise SubmitterError(f"round packs extend each other in a loop: {' -> '.join((*chain, name))}")
    written = _read_pack(name)
    pack = {key: value for key, value in written.items() if key not in ("extends", "drop_benchmarks")}
    parent_name = written.get("extends")
    merged = pack if parent_name is None else _merge(_resolved_pack(parent_name, (*chain, name)), pack)
    dropped = written.get("drop_benchmarks", [])
    benchmarks = merged.get("benchmarks", {})
    for benchmark in dropped:
        if benchmark not in benchmarks:
            raise SubmitterError(f"round pack {name}.toml drops {benchmark!r}, which its parent lacks")
    if dropped:
        merged = {**merged, "benchmarks": {k: v for k, v in benchmarks.items() if k not in dropped}}
    return merged


def _cite_round(pack: Any, name: str) -> Any:
    """Sources shared through `extends` say `{round}` where they cite the round's own table (a fresh copy)."""
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
