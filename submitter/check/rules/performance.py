"""Performance rules, on `performance/run_1/mlperf_log_detail.txt` (shared/spec/checker.md §4.4 and §13).

Each rule judges one performance run: the result's own, or a TEST01/TEST04 audit's, which the official
checker judges with the same checks. Rules marked stricter go beyond the official checker where the run
itself broke a rule of the benchmark (INVALID, LoadGen errors, equal issue off, Interactive limits);
they judge only the result's own run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from submitter.check.context import PERFORMANCE_RULES, PerformanceRun
from submitter.check.detect import SEED_KEYS, rounds_with_seeds
from submitter.check.metric import is_inferred, performance_metric
from submitter.fileformats.mlperf_log import EMPTY, DetailLog
from submitter.rounds.models import Scenario
from submitter.rule_registry import Problem, Severity

rule = PERFORMANCE_RULES.rule

# Scenarios whose LoadGen result is judged by early stopping rather than a query count.
EARLY_STOPPING = (Scenario.SERVER, Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)
TOKEN_LATENCY_SCENARIOS = (Scenario.SERVER, Scenario.INTERACTIVE)
# Directory scenario <- the log scenarios an edge system's result may be inferred from.
EDGE_INFERABLE = {
    "multistream": ("singlestream",),
    "offline": ("multistream", "singlestream"),
}
NS_PER_MS = 1_000_000


def _problem(run: PerformanceRun, key: str, message: str, fix: str) -> Problem:
    log = run.log
    return Problem(field=key, message=message, fix=fix, line=log.line_of(key) if log else None, path=run.path)


def _own_run(run: PerformanceRun) -> bool:
    """Stricter rules judge the result's own LoadGen run, not an audit's or an endpoints result."""
    return run.audit is None and not run.context.endpoints


@rule("PERF-LOG", Severity.ERROR, "the performance detail log exists and LoadGen's records can be read")
def log_readable(run: PerformanceRun) -> Iterator[Problem]:
    if run.parsed is None:
        if not run.context.index.has_file(run.path):  # else STRUCT-UNREADABLE says why it cannot be read
            yield Problem(
                message="is missing",
                path=run.path,
                fix="copy the performance run's LoadGen logs into performance/run_1/",
            )
        return
    yield from unreadable_lines(run.parsed)


@rule("PERF-LOG-LINES", Severity.WARNING, "every line of the performance detail log is a LoadGen record")
def stray_lines(run: PerformanceRun) -> Iterator[Problem]:
    yield from stray_log_lines(run.parsed)


def stray_log_lines(log: DetailLog | None) -> Iterator[Problem]:
    """Lines without a marker: the official checker skips them; LoadGen writes none, so the log was edited.
    So with a later record of a key holding what LoadGen never writes: readers take the key's first."""
    if log is None:
        return
    for skipped in log.skipped:
        yield Problem(
            field=skipped.key,
            line=skipped.line,
            path=log.path,
            message=f"line {skipped.message}; it repeats the key, whose first record the checker reads",
            fix="restore the log exactly as LoadGen wrote it; raw logs are never edited",
        )
    if log.stray_lines:
        lines = log.stray_lines
        shown = ", ".join(str(n) for n in lines[:5]) + (
            f" and {len(lines) - 5} more" if len(lines) > 5 else ""
        )
        yield Problem(
            line=lines[0],
            path=log.path,
            message=f"has lines that are not LoadGen records (line {shown})",
            fix="restore the log exactly as LoadGen wrote it; raw logs are never edited",
        )


def unreadable_lines(log: DetailLog | None, shown: int = 5) -> Iterator[Problem]:
    """The first lines of a detail log the official checker stops at (it crashes on them)."""
    for problem in log.problems[:shown] if log else ():
        if problem.message == EMPTY:
            yield Problem(
                path=log.path,
                message="is empty (0 bytes or only blank lines): LoadGen always writes its records",
                fix="copy the log again from the run's folder; if it is empty there too, the run did "
                "not finish: run it again",
            )
            continue
        yield Problem(
            field=problem.key,
            line=problem.line or None,
            path=log.path,
            message=f"line {problem.message}" if problem.line else problem.message,
            fix="restore the log exactly as LoadGen wrote it; raw logs are never edited",
        )


@rule("PERF-VALIDITY", Severity.ERROR, "LoadGen judged the run VALID (stricter than the official checker)")
def result_valid(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is not None and _own_run(run) and log.get("result_validity") != "VALID":
        yield _problem(
            run,
            "result_validity",
            f"is {log.get('result_validity')!r}, expected 'VALID'",
            "rerun; the summary's 'Result is' section says which constraint failed",
        )


@rule("PERF-LOADGEN-ERROR", Severity.ERROR, "LoadGen logged no error during the run (stricter)")
def no_loadgen_errors(run: PerformanceRun) -> Iterator[Problem]:
    if _own_run(run):
        yield from loadgen_errors(run.log, run.path)


def loadgen_errors(log: DetailLog | None, path: str) -> Iterator[Problem]:
    """Every error record, and LoadGen's own count when no record explains it (the old checker's test)."""
    if log is None:
        return
    fix = "fix what LoadGen complains about (even 'built with uncommitted changes'), then rerun"
    for record in log.errors:
        yield Problem(
            field=record.key,
            line=record.line or None,
            path=path,
            message=f"LoadGen error: {record.value}",
            fix=fix,
        )
    counted = log.get("num_errors")
    # Endpoints results count failed samples here, and the official checker fails any count but 0.
    if not log.errors and counted is not None and counted != 0:
        yield Problem(
            field="num_errors",
            line=log.line_of("num_errors"),
            path=path,
            message=f"LoadGen counted {counted} error(s)",
            fix=fix,
        )


@rule("PERF-EQUAL-ISSUE", Severity.ERROR, "runs their LoadGen puts in equal-issue mode ran in it (stricter)")
def equal_issue(run: PerformanceRun) -> Iterator[Problem]:
    log, bench = run.log, run.bench
    directory = Scenario.from_name(run.context.entry.scenario)
    since = bench.equal_issue_since.get(directory) if bench and directory else None
    if log is None or since is None or not _own_run(run) or not run.context.closed:
        return
    made_with = _release(log.get("loadgen_version"))
    if made_with is not None and made_with < _release(since):  # type: ignore[operator]
        return  # that LoadGen did not set it yet
    if log.get("effective_sample_concatenate_permutation") is not True:
        yield _problem(
            run,
            "effective_sample_concatenate_permutation",
            f"is {log.get('effective_sample_concatenate_permutation')}; the mlperf.conf of LoadGen {since} "
            f"and later runs {bench.name} {directory} in equal-issue mode "
            f"(this run: {log.get('loadgen_version')})",
            "do not set sample_concatenate_permutation in user.conf; mlperf.conf turns it on",
        )


def _release(version: object) -> tuple[int, ...] | None:
    """A LoadGen version ("6.0.8 @ NA", "6.0.10") as comparable numbers."""
    if not isinstance(version, str):
        return None
    numbers = version.split("@")[0].strip().split(".")
    if not all(part.isdigit() for part in numbers):
        return None
    try:
        return tuple(int(part) for part in numbers)
    except ValueError:  # a digit int() does not take ("²"), or a part past int()'s 4300 digits
        return None


@rule("PERF-SAMPLE-COUNT", Severity.ERROR, "the performance sample count covers the benchmark's requirement")
def performance_sample_count(run: PerformanceRun) -> Iterator[Problem]:
    if run.log is None or run.bench is None or run.context.endpoints:
        return
    yield from _at_least(
        run,
        "effective_performance_sample_count",
        run.bench.dataset.performance_sample_count,
        _shortened_fix(
            run, "performance_sample_count_override", "do not override performance_sample_count in user.conf"
        ),
    )


def _shortened_fix(run: PerformanceRun, setting: str, in_user_conf: str) -> str:
    """The fix for a setting shortened below the rules: `in_user_conf` where the run's user.conf sets it;
    otherwise the run was shortened by other means (a `--smoke` trial sets LoadGen's settings directly)."""
    text = run.context.files.user_conf
    if text is None or re.search(rf"^[^#]*\.{re.escape(setting)}\s*=", text, re.MULTILINE):
        return in_user_conf
    return (
        f"user.conf does not set {setting}: the run was shortened otherwise (a --smoke trial overrides "
        "LoadGen's settings directly); run it at full length"
    )


def _at_least(run: PerformanceRun, key: str, needed: int, fix: str, unit: str = "") -> Iterator[Problem]:
    """A LoadGen setting in the log that must be a number of at least `needed`."""
    found = run.log.get(key) if run.log else None
    if run.log is not None and (not _is_number(found) or found < needed):
        yield _problem(run, key, f"is {found}{unit}, needs to be >= {needed}{unit}", fix)


@rule("PERF-SEED", Severity.ERROR, "the run used the round's LoadGen seeds")
def seeds_match_round(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is None:
        return
    made_for = rounds_with_seeds(log)
    origin = f" (these logs were made for {', '.join(made_for)})" if made_for else ""
    # The endpoints load generator has no QSL seed.
    keys = SEED_KEYS[1:] if run.context.endpoints else SEED_KEYS
    for name in keys:
        expected = getattr(run.rules.loadgen.seeds, name)
        found = log.get(f"effective_{name}")
        if found != expected:
            yield _problem(
                run,
                f"effective_{name}",
                f"is {found}, round {run.rules.name} requires {expected}{origin}",
                f"repeat the run with LoadGen {run.rules.loadgen.version}; seeds cannot be edited",
            )


@rule("PERF-EARLY-STOPPING", Severity.ERROR, "early stopping was met in Server and stream scenarios")
def early_stopping(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is None or run.logged_scenario not in EARLY_STOPPING or run.context.endpoints:
        return
    if not log.get("early_stopping_met"):
        yield _problem(
            run,
            "early_stopping_met",
            f"is {log.get('early_stopping_met')}: {log.get('early_stopping_result')}",
            "run longer or at a lower target_qps so that enough queries meet the latency limits",
        )


@rule("PERF-LATENCY-CONSTRAINT", Severity.ERROR, "the run's latency is within the benchmark's constraint")
def latency_constraint(run: PerformanceRun) -> Iterator[Problem]:
    log, bench, logged = run.log, run.bench, run.logged_scenario
    if log is None or bench is None:
        return
    if logged in EARLY_STOPPING and not run.context.endpoints:
        # The latency bound LoadGen's early stopping estimated against (Server's target latency).
        key, bound = "effective_target_latency_ns", bench.latency_constraint_ns.get(logged)
    elif run.context.endpoints and bench.llm:
        return  # endpoints LLM results are held to TTFT/TPOT instead
    else:
        # Non-early-stopping runs: the p99 against the constraint of the directory's scenario.
        directory = Scenario.from_name(run.context.entry.scenario)
        key, bound = "result_99.00_percentile_latency_ns", bench.latency_constraint_ns.get(directory)
    if not bound:
        return
    found = log.get(key)
    if not _is_number(found) or found > bound:
        yield _problem(
            run,
            key,
            f"is {found} ns, the bound is {bound} ns",
            "remove target_latency from user.conf" if key.startswith("effective") else "lower the load",
        )


@rule(
    "PERF-SERVER-P99",
    Severity.ERROR,
    "Server runs whose early stopping was met have their p99 latency within the benchmark's limit (stricter)",
)
def server_p99_within_limit(run: PerformanceRun) -> Iterator[Problem]:
    """The official checker trusts early stopping and the target latency the run was set to; this compares
    the p99 LoadGen measured with the pack's limit of the result's scenario. LLMs are judged by their p99
    TTFT and TPOT already (PERF-TTFT-TPOT, PERF-INTERACTIVE-LIMITS), so only the overall latency is here."""
    log, bench = run.log, run.bench
    if log is None or bench is None or bench.llm or not _own_run(run):
        return
    if run.logged_scenario is not Scenario.SERVER or not log.get("early_stopping_met"):
        return  # PERF-EARLY-STOPPING reports early stopping not met
    # The result's own scenario's limit where the pack has one (Interactive), else Server's.
    directory = Scenario.from_name(run.context.entry.scenario)
    judged = directory if directory in bench.latency_constraint_ns else Scenario.SERVER
    limit = bench.latency_constraint_ns.get(judged)
    key = "result_99.00_percentile_latency_ns"
    found = log.get(key)
    if limit and _is_number(found) and found > limit:
        yield _problem(
            run,
            key,
            f"is {found} ns ({found / NS_PER_MS:.3f} ms), over {bench.name}'s {judged} limit of {limit} ns "
            f"({limit / NS_PER_MS:g} ms, round {run.rules.name}), although early_stopping_met is true",
            "rerun at a lower target_qps, with target_latency left to mlperf.conf",
        )


@rule("PERF-MIN-QUERIES", Severity.ERROR, "query counts meet the minimum of non-early-stopping scenarios")
def min_queries(run: PerformanceRun) -> Iterator[Problem]:
    log, bench, logged = run.log, run.bench, run.logged_scenario
    if log is None or bench is None or run.context.endpoints:
        return
    if logged not in EARLY_STOPPING:
        needed = bench.min_query_count.get(logged) if logged else None
        if needed:
            yield from _at_least(
                run,
                "effective_min_query_count",
                needed,
                _shortened_fix(run, "min_query_count", "remove min_query_count from user.conf"),
            )
    if logged is Scenario.OFFLINE and run.context.entry.division == "closed":
        needed = bench.dataset.offline_min_samples_per_query
        if needed is None:
            yield _problem(
                run,
                "effective_samples_per_query",
                f"{bench.name} has no Offline minimum of samples per query in {run.rules.name}",
                "run the scenarios the benchmark defines",
            )
            return
        yield from _at_least(
            run,
            "effective_samples_per_query",
            needed,
            "raise Offline target_qps in user.conf (LoadGen issues 1.1 x 600 s x target_qps)",
        )


@rule("PERF-MIN-DURATION", Severity.ERROR, "the run was configured for the round's minimum duration")
def min_duration(run: PerformanceRun) -> Iterator[Problem]:
    if run.bench is not None and not run.bench.min_duration_applies:
        return
    yield from _at_least(
        run,
        "effective_min_duration_ms",
        run.rules.limits.min_duration_ms,
        _shortened_fix(
            run, "min_duration", "remove min_duration from user.conf (mlperf.conf sets 600000) and rerun"
        ),
        unit=" ms",
    )


@rule("PERF-NETWORK", Severity.ERROR, "network-division results come from a network system and SUT")
def network_mode(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is None:
        return
    division = run.context.entry.division
    value = (run.context.system or {}).get("is_network")
    if value is not None and not isinstance(value, str):
        return  # SYS-NETWORK names a non-text is_network
    network = value is not None and value.lower() == "true"
    if division in ("closed", "network") and network != (division == "network"):
        yield Problem(
            path=run.path,
            message=f"is in the {division} division but its system's is_network is {value!r}",
            fix='network-division systems say "is_network": "true"; others leave it out',
        )
    marker = run.rules.system.network_sut_marker
    if network and marker not in str(log.get("sut_name")):
        yield _problem(
            run,
            "sut_name",
            f"is {log.get('sut_name')!r}; network runs need '{marker}' in it",
            "run LoadGen's network SUT (lon/QDL) for network-division results",
        )


@rule("PERF-TOKEN-LATENCIES", Severity.ERROR, "LLM runs measure token latencies")
def token_latencies_on(run: PerformanceRun) -> Iterator[Problem]:
    log, bench = run.log, run.bench
    if log is None or bench is None or not bench.llm or run.context.endpoints:
        return
    if not log.get("requested_use_token_latencies"):
        yield _problem(
            run,
            "requested_use_token_latencies",
            "is off; LLM benchmarks need it on",
            "do not set use_token_latencies in user.conf; mlperf.conf turns it on",
        )


@rule("PERF-TTFT-TPOT", Severity.ERROR, "LLM Server runs meet the p99 TTFT and TPOT limits of their scenario")
def token_latency_limits(run: PerformanceRun) -> Iterator[Problem]:
    """The official checker's test: the limits of the scenario LoadGen ran (Server for Interactive), by its
    exact name."""
    log, bench, logged = run.log, run.bench, run.logged_scenario
    if log is None or bench is None or not bench.llm or logged not in TOKEN_LATENCY_SCENARIOS:
        return
    if run.scenario_name != logged.value:
        return
    yield from _token_limits(run, logged, "the official checker's")


@rule(
    "PERF-INTERACTIVE-LIMITS",
    Severity.ERROR,
    "Interactive results meet the Interactive TTFT/TPOT limits (stricter)",
)
def interactive_limits(run: PerformanceRun) -> Iterator[Problem]:
    """LoadGen runs Interactive as Server with tighter limits; the official checker applies Server's."""
    bench = run.bench
    directory = Scenario.from_name(run.context.entry.scenario)
    if run.log is None or bench is None or not bench.llm or directory is not Scenario.INTERACTIVE:
        return
    if not _own_run(run) or run.logged_scenario is Scenario.INTERACTIVE:
        return  # endpoints Interactive runs are judged by PERF-TTFT-TPOT with these very limits
    yield from _token_limits(run, Scenario.INTERACTIVE, "Interactive")


def _token_limits(run: PerformanceRun, scenario: Scenario, whose: str) -> Iterator[Problem]:
    limits = run.bench.token_latency_limits.get(scenario) if run.bench else None
    if limits is None:
        yield Problem(
            path=run.path,
            message=f"{run.bench.name if run.bench else 'it'} has no TTFT/TPOT limits for {scenario}",
            fix="run the scenarios the benchmark defines",
        )
        return
    for key, limit_ms, name in (
        ("result_first_token_99.00_percentile_latency_ns", limits.ttft_ms, "TTFT"),
        ("result_time_per_output_token_99.00_percentile_ns", limits.tpot_ms, "TPOT"),
    ):
        found = run.log.get(key) if run.log else None
        if not _is_number(found) or found >= limit_ms * NS_PER_MS:
            shown = f"{found / NS_PER_MS:.1f} ms" if _is_number(found) else repr(found)
            yield _problem(
                run,
                key,
                f"p99 {name} is {shown}, {whose} {scenario} limit is < {limit_ms:g} ms",
                f"rerun at a lower target_qps, or tune the engine for {name}",
            )


@rule("PERF-SCENARIO", Severity.ERROR, "the log's scenario is the directory's, or may be inferred from it")
def scenario_matches(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is None:
        return
    directory, logged = run.context.entry.scenario, log.get("effective_scenario")
    shown = run.logged_scenario.value if run.logged_scenario else logged
    if not isinstance(logged, str) or (run.logged_scenario is None and not run.context.endpoints):
        yield _problem(
            run, "effective_scenario", f"is {logged!r}, not a LoadGen scenario", "use the run's own log"
        )
        return
    if not is_inferred(shown, directory):
        return
    system_type = (run.context.system or {}).get("system_type")
    if not isinstance(system_type, str) or "edge" not in system_type.lower():
        yield _problem(
            run,
            "effective_scenario",
            f"is {shown!r} in the {directory} directory; results are inferred only for edge systems",
            f"move the run into results/.../{shown}/ or rerun it as {directory}",
        )
    elif str(shown).lower() not in EDGE_INFERABLE.get(directory.lower(), ()):
        yield _problem(
            run,
            "effective_scenario",
            f"is {shown!r}; a {directory} result cannot be inferred from it",
            f"rerun it as {directory}",
        )


@rule("PERF-RESULT", Severity.ERROR, "the log reports the scenario's result metric")
def result_present(run: PerformanceRun) -> Iterator[Problem]:
    log = run.log
    if log is None or run.logged_scenario is None:
        return  # PERF-SCENARIO names the scenario it lacks
    metric = performance_metric(
        log,
        run.rules,
        run.bench,
        run.logged_scenario,
        run.context.entry.scenario,
        run.context.endpoints,
        run.scenario_name,
    )
    if metric.problem is not None:
        yield _problem(
            run,
            metric.key or "effective_scenario",
            metric.problem,
            "use the complete detail log of a finished run",
        )


@rule("PERF-ENDPOINTS-MODEL", Severity.ERROR, "endpoints-format results are of a benchmark that allows them")
def endpoints_model(run: PerformanceRun) -> Iterator[Problem]:
    bench = run.bench
    if run.context.endpoints and bench is not None and not bench.endpoints:
        allowed = [name for name, other in run.rules.benchmarks.items() if other.endpoints]
        yield Problem(
            path=run.path,
            message=f"is an endpoints-format result of {bench.name}, which round {run.rules.name} "
            f"accepts only as LoadGen logs" + (f" (endpoints: {', '.join(allowed)})" if allowed else ""),
            fix="run it under LoadGen and submit its logs",
        )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
