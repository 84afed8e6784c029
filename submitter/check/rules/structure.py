"""Structure rules: the round's layout, required folders, benchmarks and scenarios (checker.md §2, §4.1)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from submitter.check.context import CLOSED_DIVISIONS, RESULT_RULES, TREE_RULES, ResultContext, TreeContext
from submitter.check.detect import tree_layout
from submitter.rounds.models import ScenarioSet, SystemTypeTable
from submitter.rounds.registry import available_rounds, load_round
from submitter.rule_registry import Problem, Severity

tree_rule = TREE_RULES.rule
result_rule = RESULT_RULES.rule


@tree_rule("STRUCT-LAYOUT", Severity.ERROR, "the tree uses the round's directory layout")
def layout_matches(tree: TreeContext) -> Iterator[Problem]:
    found = tree_layout(tree.index, [files.entry for files in tree.entries])
    expected = tree.rules.layout
    if found is not None and found != expected.name:
        yield Problem(
            message=f"has the {found} directory layout; round {tree.rules.name} uses the {expected.name} "
            f"layout (submitter folders: {', '.join(expected.submitter_dirs)})",
            fix=f"restage the tree for {tree.rules.name}, or check it with the round it was made for",
        )


@tree_rule("STRUCT-CODE", Severity.ERROR, "every submitter has its code folder (a link to one counts)")
def code_dir(tree: TreeContext) -> Iterator[Problem]:
    for division, submitter in _submitter_pairs(tree):
        path = tree.rules.layout.code_dir.format(division=division, submitter=submitter)
        if not tree.index.has_dir(path) and not tree.index.has_file(path):
            yield Problem(
                path=f"{division}/{submitter}",
                message=f"has no {path.rsplit('/', 1)[-1]}/ folder",
                fix=f"add the harness code as {path} (or a README naming where it is)",
            )


@tree_rule("STRUCT-RESULTS", Severity.ERROR, "every submitter folder has a results/ folder")
def results_dir(tree: TreeContext) -> Iterator[Problem]:
    for division, submitter in _submitter_pairs(tree):
        if not tree.index.has_dir(f"{division}/{submitter}/results"):
            yield Problem(
                path=f"{division}/{submitter}",
                message="has no results/ folder (the official checker crashes on it)",
                fix="add the results, or remove the folder",
            )


@tree_rule("STRUCT-CALIBRATION", Severity.WARNING, "every closed submitter documents its calibration")
def calibration(tree: TreeContext) -> Iterator[Problem]:
    rules = tree.rules.tree
    for division, submitter in _submitter_pairs(tree):
        if division not in CLOSED_DIVISIONS:
            continue
        places = [
            f"{folder.format(division=division, submitter=submitter)}/{rules.calibration_file}"
            for folder in rules.calibration_dirs
        ]
        if not any(tree.index.has_file(place) for place in places):
            yield Problem(
                path=f"{division}/{submitter}",
                message=f"has no {rules.calibration_file} (the older official checker demands one)",
                fix=f"write {places[-1]} (how quantisation was calibrated, or why none was needed)",
            )


@tree_rule(
    "STRUCT-UNREADABLE",
    Severity.ERROR,
    "every file and folder the checker needs can be read; no FIFO, socket or device",
)
def unreadable(tree: TreeContext) -> Iterator[Problem]:
    for path, reason in sorted(tree.unreadable.items()):
        fix = "restore the file as written by the tool that made it"
        if path in tree.index.special:
            fix = "replace it with a regular file, or remove it (a pipe, socket or device cannot be uploaded)"
        elif path in tree.index.unwalked:
            fix = "replace symbolic links that lead out of the tree with copies of what the submission needs"
        elif path in tree.index.unlisted:
            fix = f"let everyone read and enter it (chmod -R a+rX {path}), or remove it"
        yield Problem(path=path, message=reason, fix=fix)


@tree_rule(
    "STRUCT-MODEL-MAPPING", Severity.ERROR, "an open submitter's model_mapping.json maps names to names"
)
def model_mapping(tree: TreeContext) -> Iterator[Problem]:
    """The whole submitter's results depend on it: the official checker crashes on a broken one."""
    for (division, submitter), loaded in sorted(tree.model_mappings.items()):
        if loaded is None:
            continue
        name = loaded.path.rsplit("/", 1)[-1]
        problem = loaded.problem or (
            None if isinstance(loaded.data, dict) else "does not hold one JSON object"
        )
        if problem is not None:
            yield Problem(
                path=f"{division}/{submitter}",
                message=f"{name} {problem}, so no benchmark folder's name can be resolved",
                fix='write {"<your benchmark folder>": "<official benchmark>", ...} as ' + name,
            )


@tree_rule("STRUCT-SCENARIOS", Severity.ERROR, "each benchmark has the scenarios its system type requires")
def scenario_sets(tree: TreeContext) -> Iterator[Problem]:
    """Closed and network only; a miss fails every scenario of the benchmark, as officially."""
    groups: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    benchmarks: dict[tuple[str, str, str, str], str] = {}
    for files in tree.entries:
        entry = files.entry
        key = (entry.division, entry.submitter, entry.system, entry.benchmark)
        groups[key].append(entry.scenario)
        benchmarks[key] = files.benchmark
    for (division, submitter, system, folder), scenarios in groups.items():
        bench = tree.rules.benchmarks.get(benchmarks[(division, submitter, system, folder)])
        loaded = tree.systems.get((division, submitter, system))
        system_type = loaded.data.get("system_type") if loaded and isinstance(loaded.data, dict) else None
        table = SystemTypeTable.for_system_type(system_type)
        if bench is None or table is None or division not in CLOSED_DIVISIONS:
            continue  # STRUCT-BENCHMARK and SYS-SYSTEM-TYPE report these; open has no scenario rules
        path = f"{division}/{submitter}/results/{system}/{folder}"
        expected = bench.scenarios.get(table)
        if expected is None:
            others = (
                ", ".join(str(other) for other in bench.scenarios) or "no system type (open division only)"
            )
            yield Problem(
                path=path,
                message=f"{bench.name} is not a {table} benchmark in {tree.rules.name} (it is one for: "
                f"{others}); the official checker crashes on it",
                fix="submit it in the open division, or correct system_type",
            )
            continue
        yield from _scenario_problems(path, bench.name, table, expected, scenarios)


def _scenario_problems(
    path: str, name: str, table: SystemTypeTable, expected: ScenarioSet, scenarios: list[str]
) -> Iterator[Problem]:
    present = {scenario.lower() for scenario in scenarios}
    known = {s.value.lower() for s in (*expected.required, *expected.optional)}
    missing = [s.value for s in expected.required if s.value.lower() not in present]
    if expected.one_of_required and not present & {s.value.lower() for s in expected.one_of_required}:
        missing.append(f"(one of) {' or '.join(s.value for s in expected.one_of_required)}")
    if missing:
        yield Problem(
            path=path,
            message=f"is missing required scenarios: {', '.join(missing)}",
            fix="add them; the official checker then rejects every scenario of this benchmark",
        )
    unknown = sorted(scenario for scenario in scenarios if scenario.lower() not in known)
    if unknown:
        yield Problem(
            path=path,
            message=f"has scenarios {table} {name} does not have: {', '.join(unknown)}",
            fix=f"use {', '.join(s.value for s in (*expected.required, *expected.optional))}; "
            "the official checker rejects every scenario of this benchmark",
        )


@result_rule("STRUCT-BENCHMARK", Severity.ERROR, "the benchmark belongs to the round")
def benchmark_known(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.bench is None:
        folder, resolved = ctx.files.entry.benchmark, ctx.files.benchmark
        named = folder if folder == resolved else f"{folder} (read as {resolved})"
        mapping = ""
        if ctx.files.entry.division == "open":
            mapping = f", or map the folder to one in {ctx.rules.model_names.open_mapping_file}"
        yield Problem(
            message=f"{named} is not a benchmark of {ctx.rules.name}",
            fix=f"use one of {', '.join(ctx.rules.benchmarks)}{mapping}, or check with the right --round",
        )


@result_rule(
    "STRUCT-ENDPOINTS", Severity.ERROR, "a result without LoadGen logs is a readable endpoints result"
)
def endpoints_format(ctx: ResultContext) -> Iterator[Problem]:
    result = ctx.files.endpoints
    if result is None:
        return
    if not ctx.rules.results.endpoints_keys:
        yield Problem(
            message="holds no LoadGen detail log, and endpoints-format results are not part of "
            f"{ctx.rules.name} (rounds that have them: {', '.join(_endpoints_rounds()) or 'none'})",
            fix="copy the LoadGen logs into performance/run_1/ and accuracy/",
        )
        return
    for problem in result.problems:
        yield Problem(
            message=f"holds no LoadGen detail log, so it is read as an endpoints result: {problem}",
            fix="copy the LoadGen logs into performance/run_1/ and accuracy/, or the endpoints result's "
            "config.yaml, performance/result_summary.json and accuracy/accuracy_results.json",
        )


def _endpoints_rounds() -> list[str]:
    return [name for name in available_rounds() if load_round(name).results.endpoints_keys]


def _submitter_pairs(tree: TreeContext) -> list[tuple[str, str]]:
    return [(folder.parent.name, folder.name) for folder in tree.scope.submitter_dirs()]


@result_rule(
    "STRUCT-FILESET",
    Severity.WARNING,
    "accuracy/ and performance/run_1/ hold exactly the expected files (the older official checker's rule)",
)
def exact_file_sets(ctx: ResultContext) -> Iterator[Problem]:
    files = ctx.rules.files
    if ctx.endpoints or ctx.files.power_files is not None:
        return  # POWER-FILES judges the folders of power results, as the official checker does
    checks = [
        (ctx.files.accuracy_dir, files.accuracy_required, ()),
        (ctx.files.performance_dir, files.performance_required, files.performance_optional),
    ]
    for folder, required, optional in checks:
        yield from file_set(ctx, folder, required, optional)


def file_set(
    ctx: ResultContext, folder: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> Iterator[Problem]:
    """A folder that must hold exactly `required`, and may hold `optional` and the round's always-optional."""
    if not ctx.index.has_dir(folder):
        return  # the rules that need its files report it missing
    present = set(ctx.index.files_in(folder))
    missing = sorted(set(required) - present)
    extra = sorted(present - set(required) - set(optional) - set(ctx.rules.files.always_optional))
    if missing or extra:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unexpected {', '.join(extra)}" if extra else "",
        ]
        yield Problem(
            path=folder,
            message=f"has the wrong files: {'; '.join(p for p in parts if p)}",
            fix=f"keep exactly {', '.join(required)}"
            + (f" (and optionally {', '.join(optional)})" if optional else ""),
        )
