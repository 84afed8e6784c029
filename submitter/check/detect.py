"""Which round a tree was made for: from the LoadGen seeds in its logs, and from its directory layout.

One place for `check`, `package` and `report`. The seeds decide (they cannot be changed after a run);
the layout decides where no log carries a known round's seeds, and then the newest round of that layout.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from msgspec import Struct

from submitter.check.load import FileIndex, TreeReader
from submitter.check.mlperf_log import DetailLog
from submitter.check.tree import ResultEntry
from submitter.rounds.registry import SEED_KEYS, available_rounds, load_round, round_layout, round_seeds


def rounds_with_seeds(log: DetailLog) -> list[str]:
    """The rounds whose seeds equal the effective seeds in a log (seeds cannot be changed afterwards)."""
    found = tuple(log.get(f"effective_{key}") for key in SEED_KEYS)
    return [name for name in available_rounds() if round_seeds(name) == found]


def tree_layout(index: FileIndex, entries: Sequence[ResultEntry]) -> str | None:
    """The layout the results are written in: each result votes with where its measurements live.

    "v5.1" keeps them in `<submitter>/measurements/<system>/<benchmark>/<scenario>/`, the v6 layout in
    the result's own folder (`measurements.json`). A code folder's name only breaks a tie, since trees
    that moved to the v6 layout often keep both `code/` and `src/`.
    """
    votes: Counter[str] = Counter()
    for entry in entries:
        base = f"{entry.division}/{entry.submitter}"
        scenario = f"{entry.system}/{entry.benchmark}/{entry.scenario}"
        if index.has_dir(f"{base}/measurements/{scenario}") or index.has_dir(f"{base}/compliance/{scenario}"):
            votes["v5.1"] += 2
        if index.has_file(f"{base}/results/{scenario}/measurements.json"):
            votes["v6"] += 2
    for base in {f"{entry.division}/{entry.submitter}" for entry in entries}:
        votes["v5.1"] += index.has_dir(f"{base}/code") and not index.has_dir(f"{base}/src")
        votes["v6"] += index.has_dir(f"{base}/src") and not index.has_dir(f"{base}/code")
    ranked = votes.most_common()
    if not ranked or ranked[0][1] == 0 or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


class Detection(Struct, frozen=True):
    round: str
    reason: str


def detect_round(logs: Iterable[DetailLog], layout: str | None) -> Detection:
    votes: Counter[str] = Counter()
    for log in logs:
        for name in rounds_with_seeds(log):
            votes[name] += 1
    layout_rounds = [name for name in available_rounds() if round_layout(name) == layout]
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


def detect_tree_round(reader: TreeReader, entries: Sequence[ResultEntry]) -> Detection:
    """The round of a tree whose round the user did not name."""
    # Performance logs sit in the same place in every layout: they can be read before the round is known.
    any_layout = load_round(available_rounds()[-1]).layout
    logs = [reader.detail_log(entry.relative(entry.performance_log(any_layout))) for entry in entries]
    return detect_round([log for log in logs if log is not None], tree_layout(reader.index, entries))
