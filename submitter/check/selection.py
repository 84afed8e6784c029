"""Which findings `check` reports: `--select` / `--ignore` by rule id or prefix, as ruff selects its rules.

A selector is a rule id (`PERF-SEED`) or a prefix of whole words of ids (`SYS`, `HYG-`, `PERF-LOADGEN`), or
`ALL`. Settings come in layers, the configuration file's and then the command line's: a layer that selects
starts afresh from its own selection, one that only ignores narrows what the layers before it selected
(ruff's rule). Within a layer the more specific selector wins (`--select PERF --ignore PERF-SEED` and
`--select PERF-SEED --ignore PERF` both decide PERF-SEED by the id); on a tie, ignore wins.

Selection decides what is reported and what counts for the exit code. It never changes a verdict: a result
is valid exactly when the checker says so, and a result made invalid only by findings that are not
reported is named as such (`ignored_causes`), so that a narrowed report never passes for a clean tree.

Everything here is a pure function of findings, rule ids and selectors.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple

from submitter.rule_registry import Finding, Severity

ALL = "ALL"
SEPARATOR = "-"  # rule ids are words joined by hyphens: a prefix ends at a word's end


class SelectorLayer(NamedTuple):
    """One source of selectors: the configuration file, then the command line."""

    source: str  # where it was written, for messages and the JSON report
    select: tuple[str, ...] | None = None  # None: keep what the layers before selected (first: every rule)
    ignore: tuple[str, ...] = ()


def parse_selectors(values: Iterable[str]) -> tuple[str, ...]:
    """Selectors as given (repeated options, comma-separated lists) in their one spelling: upper case,
    without a trailing hyphen, each once, in the order given."""
    parsed: dict[str, None] = {}
    for value in values:
        for part in value.split(","):
            selector = part.strip().upper().rstrip(SEPARATOR)
            if selector:
                parsed.setdefault(selector, None)
    return tuple(parsed)


def matches(selector: str, rule_id: str) -> bool:
    return selector == ALL or rule_id == selector or rule_id.startswith(selector + SEPARATOR)


def specificity(selector: str) -> int:
    """How many words of an id the selector names; ALL names none."""
    return 0 if selector == ALL else selector.count(SEPARATOR) + 1


def known_selectors(rule_ids: Iterable[str]) -> set[str]:
    """Every selector that names at least one rule: ALL, the ids, and each prefix of whole words."""
    known = {ALL}
    for rule_id in rule_ids:
        words = rule_id.split(SEPARATOR)
        known.update(SEPARATOR.join(words[:count]) for count in range(1, len(words) + 1))
    return known


def unknown_selectors(selectors: Iterable[str], rule_ids: Collection[str]) -> list[str]:
    known = known_selectors(rule_ids)
    return [selector for selector in selectors if selector not in known]


def closest_selectors(selector: str, rule_ids: Collection[str], count: int = 3) -> list[str]:
    """The known ids or prefixes spelled most like `selector` (a typo, or a prefix cut inside a word)."""
    import difflib  # only for a message: `check` starts without it

    candidates = sorted(known_selectors(rule_ids) - {ALL})
    close = difflib.get_close_matches(selector, candidates, n=count, cutoff=0.6)
    if close:
        return close
    # A prefix cut inside a word (PERF-SE) is far from every id by edit distance, but starts some.
    return [candidate for candidate in candidates if candidate.startswith(selector)][:count]


def describe_unknown(selector: str, rule_ids: Collection[str]) -> str:
    close = closest_selectors(selector, rule_ids)
    hint = f"closest known: {', '.join(close)}" if close else "`submitter rules` lists every rule id"
    return f"{selector!r} is no rule id or prefix of `check` ({hint})"


def _layer_selects(layer: SelectorLayer, rule_id: str, selected_before: bool) -> bool:
    ignored = [specificity(s) for s in layer.ignore if matches(s, rule_id)]
    if layer.select is None:
        return selected_before and not ignored
    selected = [specificity(s) for s in layer.select if matches(s, rule_id)]
    if not selected:
        return False
    return max(selected) > max(ignored, default=-1)


def is_selected(rule_id: str, layers: Sequence[SelectorLayer]) -> bool:
    selected = True  # with no layer, every rule is reported
    for layer in layers:
        selected = _layer_selects(layer, rule_id, selected)
    return selected


def split_findings(
    findings: Iterable[Finding], layers: Sequence[SelectorLayer]
) -> tuple[list[Finding], list[Finding]]:
    """(reported, not reported), each in the checker's order."""
    reported: list[Finding] = []
    hidden: list[Finding] = []
    decided: dict[str, bool] = {}
    for finding in findings:
        if finding.rule not in decided:
            decided[finding.rule] = is_selected(finding.rule, layers)
        (reported if decided[finding.rule] else hidden).append(finding)
    return reported, hidden


# --- which findings concern a result ----------------------------------------------------------------------


class ResultScope(NamedTuple):
    """What decides which findings concern one result (summary.summarise judges its verdict the same way)."""

    id: str  # division/submitter/system/benchmark/scenario, as findings name their result
    results_dir: str
    other_dirs: tuple[str, ...]  # its measurements and compliance folders (the results folder in v6)
    system_json: str


def concerns(finding: Finding, scope: ResultScope) -> bool:
    """A finding concerns a result when it names the result, is about its system description, about a
    file in its folders, or about a folder that holds it (a missing code folder concerns every result)."""
    path = finding.path
    if finding.result == scope.id or path == scope.system_json:
        return True
    if scope.results_dir.startswith(f"{path}/"):
        return True
    return any(path == own or path.startswith(f"{own}/") for own in (scope.results_dir, *scope.other_dirs))


class ScopeIndex:
    """`concerns` for many results at once: a finding's results by lookups along its path's folders,
    not by a test against every result (trees hold hundreds of results and thousands of findings)."""

    def __init__(self, scopes: Sequence[ResultScope]) -> None:
        self._by_key: dict[tuple[str, str], set[int]] = {}
        for index, scope in enumerate(scopes):
            self._add(("result", scope.id), index)
            self._add(("path", scope.system_json), index)
            for own in (scope.results_dir, *scope.other_dirs):
                self._add(("own", own), index)
            for holder in _folders_above(scope.results_dir):
                self._add(("path", holder), index)

    def _add(self, key: tuple[str, str], index: int) -> None:
        self._by_key.setdefault(key, set()).add(index)

    def concerned(self, finding: Finding) -> set[int]:
        """The indexes of the scopes that `finding` concerns."""
        found = set(self._by_key.get(("result", finding.result or ""), ()))
        found |= self._by_key.get(("path", finding.path), set())
        for folder in (finding.path, *_folders_above(finding.path)):
            found |= self._by_key.get(("own", folder), set())
        return found


def _folders_above(path: str) -> list[str]:
    """a/b/c -> [a/b, a]"""
    parts = path.split("/")
    return ["/".join(parts[:count]) for count in range(len(parts) - 1, 0, -1)]


def ignored_causes(valid: bool, reported: Iterable[Finding], hidden: Iterable[Finding]) -> tuple[str, ...]:
    """Given the reported and the unreported findings that concern a result: the rules of the unreported
    errors when they alone make it invalid; () when the result is valid, when a reported error concerns
    it, or when no error does (a metric that could not be read)."""
    if valid or any(finding.severity is Severity.ERROR for finding in reported):
        return ()
    return tuple({finding.rule: None for finding in hidden if finding.severity is Severity.ERROR})
