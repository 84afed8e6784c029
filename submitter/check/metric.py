"""A result's performance metric, computed as the official checker computes it (checker.md §4.4 item 11).

The log key comes from the round (per LoadGen scenario, with benchmark overrides such as tokens per
second for LLMs); stream scenarios' latencies are reported in ms (wan's in s); an edge system's
Offline or MultiStream result may be inferred from a SingleStream or MultiStream run.
"""

from __future__ import annotations

from msgspec import Struct

from submitter.fileformats.mlperf_log import DetailLog
from submitter.rounds.models import BenchmarkRules, RoundRules, Scenario

MS_PER_S = 1000
NS_PER_MS = 1_000_000
# LoadGen's MultiStream issues 8 samples per query; inferring it from SingleStream assumes the same.
MULTISTREAM_SAMPLES_PER_QUERY = 8
STREAM = (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM)


class Metric(Struct, frozen=True):
    value: float | None
    problem: str | None = None  # why there is no (valid) value
    key: str | None = None  # the log key it was read from


def is_inferred(logged: object, directory: str) -> bool:
    """A result in another scenario's folder than LoadGen ran (Interactive runs log Server: not inferred)."""
    logged_name = str(logged).lower()
    return logged_name != directory.lower() and (logged_name, directory.lower()) != ("server", "interactive")


def performance_metric(
    log: DetailLog,
    rules: RoundRules,
    bench: BenchmarkRules | None,
    logged: Scenario | None,
    directory: str,
    endpoints: bool = False,
    name: object = None,
) -> Metric:
    """`logged`: the scenario LoadGen ran; `name`: how the official checker writes it (else the log's)."""
    name = log.get("effective_scenario") if name is None else name
    if logged is None:
        return Metric(None, f"names no LoadGen scenario ({log.get('effective_scenario')!r})")
    table = rules.results.endpoints_keys if endpoints else rules.results.keys
    key = table.get(logged)
    if key is None:
        return Metric(None, f"round {rules.name} has no result key for a {logged} run")
    # The official checker reads the scenario's key before a benchmark's own: both must be numbers. It
    # finds a benchmark's own key only under the scenario's exact name, which an endpoints run's
    # lower-case "offline" is not; submitter reads an endpoints result's tokens wherever the benchmark
    # counts tokens (the round's endpoints_tokens_key), as the published summary does.
    own = bench.result_keys.get(logged) if bench is not None and name == logged.value else None
    if endpoints and bench is not None and bench.result_keys and rules.results.endpoints_tokens_key:
        own = rules.results.endpoints_tokens_key
    keys = [key] + ([own] if own else [])
    for key in keys:
        value = _number(log.get(key))
        if value is None:
            return Metric(None, f"{key} is {log.get(key)!r}, not a number", key)
    if logged in STREAM:
        # ns -> ms for every benchmark, then on to the benchmark's own unit (wan reports seconds).
        default = rules.results.stream_latency_divisor
        value /= default
        own = bench.stream_latency_divisor if bench else None
        if own is not None:
            value /= own / default
    if not is_inferred(logged.value, directory):
        return Metric(value, None, key)
    return _inferred(log, value, logged, Scenario.from_name(directory), key)


def _inferred(log: DetailLog, value: float, logged: Scenario, directory: Scenario | None, key: str) -> Metric:
    """An edge result inferred from another scenario's run (the official checker's formulas)."""
    if directory is Scenario.OFFLINE and logged is Scenario.SINGLE_STREAM:
        inferred = _number(log.get("result_qps_without_loadgen_overhead"))
        return _checked(inferred, "result_qps_without_loadgen_overhead", key)
    if directory is Scenario.OFFLINE and logged is Scenario.MULTI_STREAM:
        per_query = _number(log.get("effective_samples_per_query"))
        mean_ns = _number(log.get("result_mean_query_latency_ns"))
        if per_query is None or not mean_ns:
            return Metric(None, "effective_samples_per_query or result_mean_query_latency_ns is missing", key)
        return Metric(per_query * MS_PER_S / (mean_ns / NS_PER_MS), None, key)
    if directory is Scenario.MULTI_STREAM and logged is Scenario.SINGLE_STREAM:
        latency_ms = _number(log.get("early_stopping_latency_ms"))
        if latency_ms == 0:
            return Metric(
                None, "too few samples were processed for early stopping to estimate a latency", key
            )
        inferred = None if latency_ms is None else latency_ms * MULTISTREAM_SAMPLES_PER_QUERY / NS_PER_MS
        return _checked(inferred, "early_stopping_latency_ms", key)
    if directory is Scenario.INTERACTIVE:
        return Metric(None, f"an Interactive result cannot come from a {logged} run", key)
    return Metric(value, None, key)


def _checked(value: float | None, source: str, key: str) -> Metric:
    return Metric(value, None if value is not None else f"{source} is missing or not a number", key)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an integer past a double, from an endpoints JSON (LoadGen logs refuse it)
            return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
