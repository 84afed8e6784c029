"""Structure rules: the round's layout, required folders, benchmarks and scenarios (checker.md §2, §4.1)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from submitter.check.context import RESULT_RULES, TREE_RULES, ResultContext, TreeContext
from submitter.check.detect import tree_layout
from submitter.rounds.models import SystemTypeTable
from submitter.rules import Problem, Severity

tree_rule = TREE_RULES.rule
result_rule = RESULT_RULES.rule


@tree_rule("STRUCT-LAYOUT", Severity.ERROR, "the tree uses the round's directory layout")
def layout_matches(tree: TreeContext) -> Iterator[Problem]:
    found = tree_layout(tree.index, tree.scope.submitter_folders())
    expected = tree.rules.layout
    if found is not None and found != expected.name:
        yield Problem(
            message=f"has the {found} directory layout; round {tree.rules.name} uses the {expected.name} "
            f"layout (submitter folders: {', '.join(expected.submitter_dirs)})",
            fix=f"restage the tree for {tree.rules.name}, or check it with the round it was made for",
        )


@tree_rule("STRUCT-CODE", Severity.ERROR, "every submitter has its code folder")
def code_dir(tree: TreeContext) -> Iterator[Problem]:
    for division, submitter in _submitter_pairs(tree):
        path = tree.rules.layout.code_dir.format(division=division, submitter=submitter)
        if not tree.index.has_dir(path):
            yield Problem(
                path=f"{division}/{submitter}",
                message=f"has no {path.rsplit('/', 1)[-1]}/ folder",
                fix=f"add the harness code as {path} (or a README naming where it is)",
            )


@tree_rule("STRUCT-CALIBRATION", Severity.ERROR, "every closed submitter documents its calibration")
def calibration(tree: TreeContext) -> Iterator[Problem]:
    rules = tree.rules.tree
    for division, submitter in _submitter_pairs(tree):
        if division not in ("closed", "network"):
            continue
        places = [
            f"{folder.format(division=division, submitter=submitter)}/{rules.calibration_file}"
            for folder in rules.calibration_dirs
        ]
        if not any(tree.index.has_file(place) for place in places):
            yield Problem(
                path=f"{division}/{submitter}",
                message=f"has no {rules.calibration_file}",
                fix=f"write {places[-1]} (how quantisation was calibrated, or why none was needed)",
            )


@tree_rule("STRUCT-UNREADABLE", Severity.ERROR, "every file the checker needs can be read")
def unreadable(tree: TreeContext) -> Iterator[Problem]:
    for path, reason in sorted(tree.unreadable.items()):
        yield Problem(path=path, message=reason, fix="restore the file as written by the tool that made it")


@tree_rule("STRUCT-SCENARIOS", Severity.ERROR, "each benchmark has the scenarios its system type requires")
def scenario_sets(tree: TreeContext) -> Iterator[Problem]:
    groups: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for files in tree.entries:
        entry = files.entry
        groups[(entry.division, entry.submitter, entry.system, entry.benchmark)].append(entry.scenario)
    for (division, submitter, system, benchmark), scenarios in groups.items():
        bench = tree.rules.benchmarks.get(benchmark)
        loaded = tree.systems.get((division, submitter, system))
        system_type = loaded.data.get("system_type") if loaded and isinstance(loaded.data, dict) else None
        table = SystemTypeTable.for_system_type(system_type)
        if bench is None or table is None or division == "open":
            continue  # STRUCT-BENCHMARK and the system rules report these; open has no scenario rules
        path = f"{division}/{submitter}/results/{system}/{benchmark}"
        expected = bench.scenarios.get(table)
        if expected is None:
            yield Problem(
                path=path,
                message=f"{benchmark} is not a {table} benchmark in {tree.rules.name}",
                fix="remove it, or correct system_type",
            )
            continue
        present = {name.lower() for name in scenarios}
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
        unknown = sorted(name for name in scenarios if name.lower() not in known)
        if unknown:
            yield Problem(
                path=path,
                message=f"has scenarios {table} {benchmark} does not have: {', '.join(unknown)}",
                fix=f"use {', '.join(s.value for s in (*expected.required, *expected.optional))}",
            )


@result_rule("STRUCT-BENCHMARK", Severity.ERROR, "the benchmark belongs to the round")
def benchmark_known(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.bench is None:
        yield Problem(
            message=f"{ctx.files.entry.benchmark} is not a benchmark of {ctx.rules.name}",
            fix=f"use one of {', '.join(ctx.rules.benchmarks)}, or check with the right --round",
        )


@result_rule(
    "STRUCT-FORMAT", Severity.ERROR, "results are LoadGen logs (the endpoints format is not supported)"
)
def loadgen_format(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.files.performance_log is None and ctx.files.accuracy_log is None:
        endpoints = ctx.index.has_file(f"{ctx.path}/performance/result_summary.json")
        yield Problem(
            message="holds no LoadGen detail log"
            + (" (it is an endpoints-format result)" if endpoints else ""),
            fix="submitter checks LoadGen-format results; use the official checker for endpoints results"
            if endpoints
            else "copy the LoadGen logs into performance/run_1/ and accuracy/",
        )


def _submitter_pairs(tree: TreeContext) -> list[tuple[str, str]]:
    return [(folder.parent.name, folder.name) for folder in tree.scope.submitter_dirs()]


@result_rule(
    "STRUCT-FILESET", Severity.ERROR, "accuracy/ and performance/run_1/ hold exactly the expected files"
)
def exact_file_sets(ctx: ResultContext) -> Iterator[Problem]:
    files = ctx.rules.files
    power = ctx.index.has_dir(f"{ctx.path}/performance/power")
    performance_required = (*files.performance_required, *(files.power_run_required if power else ()))
    checks = [
        (ctx.files.accuracy_dir, files.accuracy_required, ()),
        (ctx.files.performance_dir, performance_required, files.performance_optional),
    ]
    if power:
        checks.append((f"{ctx.path}/performance/ranging", performance_required, files.performance_optional))
        checks.append((f"{ctx.path}/performance/power", files.power_dir_required, ()))
    for folder, required, optional in checks:
        if not ctx.index.has_dir(folder):
            continue  # the rules that need its files report it missing
        present = set(ctx.index.files_in(folder))
        missing = sorted(set(required) - present)
        extra = sorted(present - set(required) - set(optional) - set(files.always_optional))
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
