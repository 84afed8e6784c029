"""Which round a tree was made for: from the LoadGen seeds in its logs, and from its directory layout."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from submitter.check.load import FileIndex
from submitter.check.mlperf_log import DetailLog
from submitter.rounds.registry import available_rounds, load_round

SEED_KEYS = ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")


def rounds_with_seeds(log: DetailLog) -> list[str]:
    """The rounds whose seeds equal the effective seeds in a log (seeds cannot be changed afterwards)."""
    found = tuple(log.get(f"effective_{key}") for key in SEED_KEYS)
    return [
        name
        for name in available_rounds()
        if tuple(getattr(load_round(name).loadgen.seeds, key) for key in SEED_KEYS) == found
    ]


def tree_layout(index: FileIndex, submitter_folders: Iterable[str]) -> str | None:
    """ "v5.1" when measurements and compliance sit beside results, "v6" when results hold them."""
    votes: Counter[str] = Counter()
    for folder in submitter_folders:
        if any(index.has_dir(f"{folder}/{name}") for name in ("measurements", "compliance", "code")):
            votes["v5.1"] += 1
        results = f"{folder}/results/"
        if index.has_dir(f"{folder}/src") or any(
            path.startswith(results)
            and path.endswith("/measurements.json")
            and path.count("/") == results.count("/") + 3
            for path in index.files
        ):
            votes["v6"] += 1
    return votes.most_common(1)[0][0] if votes else None


@dataclass(frozen=True)
class Detection:
    round: str
    reason: str


def detect_round(logs: Iterable[DetailLog], layout: str | None) -> Detection:
    votes: Counter[str] = Counter()
    for log in logs:
        for name in rounds_with_seeds(log):
            votes[name] += 1
    layout_rounds = [name for name in available_rounds() if load_round(name).layout.name == layout]
    if votes:
        name, count = votes.most_common(1)[0]
        version = load_round(name).loadgen.seed_releases
        reason = f"{count} performance log(s) carry the {name} LoadGen seeds (LoadGen {version})"
        if layout:
            agree = "agrees" if name in layout_rounds else "does not agree"
            reason += f"; the {layout} directory layout {agree}"
        return Detection(name, reason)
    if layout_rounds:
        newest = layout_rounds[-1]
        return Detection(
            newest,
            f"no performance log carries a known round's seeds; the {layout} directory "
            f"layout points to {', '.join(layout_rounds)}, so the newest, {newest}",
        )
    newest = available_rounds()[-1]
    return Detection(newest, f"neither seeds nor layout tell the round, so the newest, {newest}")
