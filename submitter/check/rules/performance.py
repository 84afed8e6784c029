"""Performance rules, on `performance/run_1/mlperf_log_detail.txt` (shared/spec/checker.md §4.4 and §13)."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.context import RESULT_RULES, ResultContext
from submitter.check.detect import SEED_KEYS, rounds_with_seeds
from submitter.check.mlperf_log import DetailLog
from submitter.rules import Problem, Severity

rule = RESULT_RULES.rule

# Scenarios whose LoadGen result is judged by early stopping rather than a query count.
EARLY_STOPPING = ("Server", "SingleStream", "MultiStream")
# Directory scenario -> log scenarios it may be inferred from (Interactive runs log as Server).
INFERABLE = {"Interactive": ("Server",)}
EDGE_INFERABLE = {"MultiStream": ("SingleStream",), "Offline": ("MultiStream", "SingleStream")}
NS_PER_MS = 1_000_000


def _log(ctx: ResultContext) -> DetailLog | None:
    return ctx.files.performance_log


def _problem(ctx: ResultContext, key: str, message: str, fix: str) -> Problem:
    log = _log(ctx)
    return Problem(
        field=key, message=message, fix=fix, path=ctx.perf_log_path, line=log.line_of(key) if log else None
    )


@rule("PERF-LOG", Severity.ERROR, "the performance detail log exists and every line is a :::MLLOG record")
def log_readable(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is None:
        yield Problem(
            message="has no performance/run_1/mlperf_log_detail.txt",
            path=ctx.path,
            fix="copy the performance run's LoadGen logs into performance/run_1/",
        )
        return
    yield from unreadable_lines(log)


def unreadable_lines(log: DetailLog | None, shown: int = 5) -> Iterator[Problem]:
    """The first lines of a detail log that are not :::MLLOG records (the official checker crashes)."""
    for problem in log.problems[:shown] if log else ():
        yield Problem(
            line=problem.line,
            path=log.path,
            message=f"line {problem.message}",
            fix="restore the log exactly as LoadGen wrote it; raw logs are never edited",
        )


@rule("PERF-VALIDITY", Severity.ERROR, "LoadGen judged the run VALID")
def result_valid(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is not None and log.get("result_validity") != "VALID":
        yield _problem(
            ctx,
            "result_validity",
            f"is {log.get('result_validity')!r}, expected 'VALID'",
            "rerun; the summary's 'Result is' section says which constraint failed",
        )


@rule("PERF-LOADGEN-ERROR", Severity.ERROR, "LoadGen logged no error during the run")
def no_loadgen_errors(ctx: ResultContext) -> Iterator[Problem]:
    yield from loadgen_errors(_log(ctx), ctx.perf_log_path)


def loadgen_errors(log: DetailLog | None, path: str) -> Iterator[Problem]:
    """Every error record, and LoadGen's own count when no record explains it (the old checker's test)."""
    if log is None:
        return
    fix = "fix what LoadGen complains about (even 'built with uncommitted changes'), then rerun"
    for record in log.errors:
        yield Problem(
            field=record.key, line=record.line, path=path, message=f"LoadGen error: {record.value}", fix=fix
        )
    counted = log.get("num_errors")
    if not log.errors and isinstance(counted, int) and counted > 0:
        yield Problem(
            field="num_errors",
            line=log.line_of("num_errors"),
            path=path,
            message=f"LoadGen counted {counted} error(s)",
            fix=fix,
        )


@rule("PERF-SEED", Severity.ERROR, "the run used the round's LoadGen seeds")
def seeds_match_round(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is None:
        return
    made_for = rounds_with_seeds(log)
    origin = f" (these logs were made for {', '.join(made_for)})" if made_for else ""
    for name in SEED_KEYS:
        expected = getattr(ctx.rules.loadgen.seeds, name)
        found = log.get(f"effective_{name}")
        if found != expected:
            yield _problem(
                ctx,
                f"effective_{name}",
                f"is {found}, round {ctx.rules.name} requires {expected}{origin}",
                f"repeat the run with LoadGen {ctx.rules.loadgen.version}; seeds cannot be edited",
            )


def _at_least(ctx: ResultContext, key: str, needed: int, fix: str, unit: str = "") -> Iterator[Problem]:
    """A LoadGen setting in the log that must be a whole number of at least `needed`."""
    log = _log(ctx)
    found = log.get(key) if log else None
    if log is not None and (not isinstance(found, int) or found < needed):
        yield _problem(ctx, key, f"is {found}{unit}, needs to be >= {needed}{unit}", fix)


@rule("PERF-SAMPLE-COUNT", Severity.ERROR, "the performance sample count covers the benchmark's requirement")
def performance_sample_count(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.bench is not None:
        yield from _at_least(
            ctx,
            "effective_performance_sample_count",
            ctx.bench.dataset.performance_sample_count,
            "do not override performance_sample_count in user.conf",
        )


@rule("PERF-MIN-DURATION", Severity.ERROR, "the run was configured for the round's minimum duration")
def min_duration(ctx: ResultContext) -> Iterator[Problem]:
    yield from _at_least(
        ctx,
        "effective_min_duration_ms",
        ctx.rules.limits.min_duration_ms,
        "remove min_duration from user.conf (mlperf.conf sets 600000) and rerun",
        unit=" ms",
    )


@rule("PERF-MIN-QUERIES", Severity.ERROR, "query counts meet the minimum of non-early-stopping scenarios")
def min_queries(ctx: ResultContext) -> Iterator[Problem]:
    log, bench = _log(ctx), ctx.bench
    scenario = log.get("effective_scenario") if log else None
    if bench is None or scenario in EARLY_STOPPING:
        return
    needed = next((count for name, count in bench.min_query_count.items() if name.value == scenario), None)
    if needed is not None:
        yield from _at_least(
            ctx, "effective_min_query_count", needed, "remove min_query_count from user.conf"
        )
    if scenario == "Offline":  # the new checker asks it of closed only, the old one of every division
        yield from _at_least(
            ctx,
            "effective_samples_per_query",
            bench.dataset.offline_min_samples_per_query,
            "raise Offline target_qps in user.conf (LoadGen issues 1.1 x 600 s x target_qps)",
        )


@rule("PERF-EARLY-STOPPING", Severity.ERROR, "early stopping was met in Server and stream scenarios")
def early_stopping(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is None or log.get("effective_scenario") not in EARLY_STOPPING:
        return
    if log.get("early_stopping_met") is not True:
        yield _problem(
            ctx,
            "early_stopping_met",
            f"is {log.get('early_stopping_met')}: {log.get('early_stopping_result')}",
            "run longer or at a lower target_qps so that enough queries meet the latency limits",
        )


@rule("PERF-LATENCY-CONSTRAINT", Severity.ERROR, "the Server target latency is within the benchmark's bound")
def latency_constraint(ctx: ResultContext) -> Iterator[Problem]:
    log, bench = _log(ctx), ctx.bench
    if log is None or bench is None or bench.server_latency_constraint_ms is None:
        return
    if log.get("effective_scenario") != "Server":
        return
    bound = bench.server_latency_constraint_ms * NS_PER_MS
    found = log.get("effective_target_latency_ns")
    if isinstance(found, int | float) and found > bound:
        yield _problem(
            ctx,
            "effective_target_latency_ns",
            f"is {found} ns, the bound is {bound} ns",
            "remove target_latency from user.conf",
        )


@rule("PERF-TOKEN-LATENCIES", Severity.ERROR, "LLM runs measure token latencies")
def token_latencies_on(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is not None and _is_llm(ctx) and not log.get("requested_use_token_latencies"):
        yield _problem(
            ctx,
            "requested_use_token_latencies",
            "is off; LLM benchmarks need it on",
            "do not set use_token_latencies in user.conf; mlperf.conf turns it on",
        )


@rule("PERF-EQUAL-ISSUE", Severity.ERROR, "LLM runs use equal-issue mode (sample_concatenate_permutation)")
def equal_issue(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is not None and _is_llm(ctx) and log.get("effective_sample_concatenate_permutation") is not True:
        yield _problem(
            ctx,
            "effective_sample_concatenate_permutation",
            f"is {log.get('effective_sample_concatenate_permutation')}, LLM runs need true",
            "do not set sample_concatenate_permutation in user.conf; mlperf.conf turns it on",
        )


@rule("PERF-TTFT-TPOT", Severity.ERROR, "p99 TTFT and TPOT are under the scenario's limits")
def token_latency_limits(ctx: ResultContext) -> Iterator[Problem]:
    log, bench, scenario = _log(ctx), ctx.bench, ctx.scenario
    if log is None or bench is None or scenario is None or log.get("effective_scenario") != "Server":
        return
    # Interactive directories are judged by the Interactive limits (the new official checker wrongly
    # applies the Server ones; the old one and the rules use these).
    limits = bench.token_latency_limits.get(scenario)
    if limits is None:
        return
    for key, limit_ms, name in (
        ("result_first_token_99.00_percentile_latency_ns", limits.ttft_ms, "TTFT"),
        ("result_time_per_output_token_99.00_percentile_ns", limits.tpot_ms, "TPOT"),
    ):
        found = log.get(key)
        if not isinstance(found, int | float) or found >= limit_ms * NS_PER_MS:
            shown = f"{found / NS_PER_MS:.1f} ms" if isinstance(found, int | float) else repr(found)
            yield _problem(
                ctx,
                key,
                f"p99 {name} is {shown}, {scenario} requires < {limit_ms:g} ms",
                f"rerun at a lower target_qps, or tune the engine for {name}",
            )


@rule("PERF-SCENARIO", Severity.ERROR, "the log's scenario is the directory's, or may be inferred from it")
def scenario_matches(ctx: ResultContext) -> Iterator[Problem]:
    log = _log(ctx)
    if log is None:
        return
    directory, logged = ctx.files.entry.scenario, log.get("effective_scenario")
    if ctx.scenario is None or str(logged).lower() == directory.lower():
        return
    allowed = INFERABLE.get(ctx.scenario.value, ())
    if "edge" in str((ctx.system or {}).get("system_type", "")):
        allowed += EDGE_INFERABLE.get(ctx.scenario.value, ())
    if logged not in allowed:
        yield _problem(
            ctx,
            "effective_scenario",
            f"is {logged!r} in the {directory} directory",
            f"move the run into results/.../{logged}/ or rerun it as {directory}",
        )


@rule("PERF-NETWORK", Severity.ERROR, "network-division results come from a network system and SUT")
def network_mode(ctx: ResultContext) -> Iterator[Problem]:
    # The system says whether it is a network system (SYS-NETWORK judges closed ones); the log names the SUT.
    log = _log(ctx)
    if log is None or ctx.files.entry.division != "network":
        return
    if str((ctx.system or {}).get("is_network", "")).lower() != "true":
        yield Problem(
            path=ctx.path,
            message='is in the network division but its system\'s is_network is not "true"',
            fix='set "is_network": "true" and the network keys in the system description',
        )
    elif "Network SUT" not in str(log.get("sut_name", "")):
        yield _problem(
            ctx,
            "sut_name",
            f"is {log.get('sut_name')!r}; network runs need 'Network SUT' in it",
            "run LoadGen's network SUT (lon/QDL) for network-division results",
        )


@rule("PERF-RESULT", Severity.ERROR, "the log reports the scenario's result metric")
def result_present(ctx: ResultContext) -> Iterator[Problem]:
    log, bench, scenario = _log(ctx), ctx.bench, ctx.scenario
    if log is None or bench is None or scenario is None:
        return
    key = bench.result_keys.get(scenario)
    if key is not None and not isinstance(log.get(key), int | float):
        yield _problem(
            ctx,
            key,
            f"is missing or not a number ({log.get(key)!r})",
            "use the complete detail log of a finished run",
        )


def _is_llm(ctx: ResultContext) -> bool:
    bench = ctx.bench
    return bench is not None and any(unit == "Tokens/s" for unit in bench.units.values())
