"""Which round a tree was made for: from the LoadGen seeds in its logs, and from its directory layout.

One place for `check`, `package` and `report`. The seeds decide (they cannot be changed after a run): a
LoadGen result's in its performance detail log, an endpoints result's in its config.yaml (which has no
QSL seed); the layout decides where no result carries a known round's seeds, and then the newest round
of that layout.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from msgspec import Struct

from submitter.check.load import FileIndex, TreeReader, endpoints_seeds
from submitter.check.tree import ResultEntry
from submitter.fileformats.mlperf_log import DetailLog
from submitter.rounds.models import Layout
from submitter.rounds.registry import SEED_KEYS, available_rounds, load_round, round_layout, round_seeds


def rounds_with_seeds(log: DetailLog) -> list[str]:
    """The rounds whose seeds equal the effective seeds a log carries (seeds cannot be changed afterwards);
    an endpoints result carries two of the three."""
    carried = [(index, log.get(f"effective_{key}")) for index, key in enumerate(SEED_KEYS)]
    carried = [(index, value) for index, value in carried if value is not None]
    if not carried:
        return []
    return [
        name
        for name in available_rounds()
        if all(round_seeds(name)[index] == value for index, value in carried)
    ]


def _layouts() -> dict[str, Layout]:
    """Every layout the packs know, by name (rounds that share a layout share its folders)."""
    return {load_round(name).layout.name: load_round(name).layout for name in available_rounds()}


def _keeps_measurements_here(index: FileIndex, layout: Layout, names: dict[str, str]) -> bool:
    """Whether a result's measurements sit where `layout` keeps them: in the result's own folder (its
    measurements file there), or in separate measurements and compliance trees."""
    if layout.measurements_dir == layout.results_dir:
        return index.has_file(f"{layout.measurements_dir}/{layout.measurements_file}".format(**names))
    return index.has_dir(layout.measurements_dir.format(**names)) or index.has_dir(
        layout.compliance_dir.format(**names)
    )


def tree_layout(index: FileIndex, entries: Sequence[ResultEntry]) -> str | None:
    """The layout the results are written in: each result votes with where its measurements live.

    A code folder's name (the layouts' `code_dir`) only breaks a tie, since trees that moved to a newer
    layout often keep both the old and the new one.
    """
    layouts = _layouts()
    votes: Counter[str] = Counter()
    for entry in entries:
        names = {
            "division": entry.division,
            "submitter": entry.submitter,
            "system": entry.system,
            "benchmark": entry.benchmark,
            "scenario": entry.scenario,
        }
        for name, layout in layouts.items():
            votes[name] += 2 * _keeps_measurements_here(index, layout, names)
    for division, submitter in {(entry.division, entry.submitter) for entry in entries}:
        code_dirs = {
            name: layout.code_dir.format(division=division, submitter=submitter)
            for name, layout in layouts.items()
        }
        for name, code_dir in code_dirs.items():
            others = {other for other in code_dirs.values() if other != code_dir}
            votes[name] += index.has_dir(code_dir) and not any(index.has_dir(other) for other in others)
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
        reason = f"{count} result(s) carry the {name} LoadGen seeds (LoadGen {version})"
        if layout:
            agree = "agrees" if name in layout_rounds else "does not agree"
            reason += f"; the {layout} directory layout {agree}"
        return Detection(name, reason)
    if layout_rounds:
        newest = layout_rounds[-1]
        return Detection(
            newest,
            f"no result carries a known round's seeds; the {layout} directory "
            f"layout points to {', '.join(layout_rounds)}, so the newest, {newest}",
        )
    newest = available_rounds()[-1]
    return Detection(newest, f"neither seeds nor layout tell the round, so the newest, {newest}")


def detect_tree_round(reader: TreeReader, entries: Sequence[ResultEntry]) -> Detection:
    """The round of a tree whose round the user did not name."""
    # Performance logs and endpoints results sit in the same place in every layout: they can be read
    # before the round is known.
    any_layout = load_round(available_rounds()[-1]).layout
    logs = []
    for entry in entries:
        log = reader.detail_log(entry.relative(entry.performance_log(any_layout)))
        if log is None:
            log = endpoints_seeds(reader, entry.relative(entry.where(any_layout.results_dir)))
        if log is not None:
            logs.append(log)
    return detect_round(logs, tree_layout(reader.index, entries))
