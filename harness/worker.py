"""LoadGen tests in a worker process that keeps its engine: `python -m harness.worker`.

The parent (`harness.engine_session`) writes one `WorkerSpec` per line on stdin; for each, this process
runs one LoadGen test and answers with one JSON line `{"status": ..., "result": ...}` on the file
descriptor named by SUBMITTER_REPORT_FD. The engine starts with the first test and serves every later
one, so tune-qps trials skip the 40-200 s start of a GPU engine. The parent has already checked
everything it can; this process re-checks what only LoadGen itself knows (the seeds its embedded
mlperf.conf sets). Status 3 means the test stopped before LoadGen started; any status but 0 ends the
process, so a broken engine never serves another test.

Early abort (`harness.early_abort`): LoadGen has no call that ends a test, and StartTest blocks for the
whole schedule, so once a Server run's latencies make VALID impossible the thread that sees it writes
the test's line with status 4 (ABORTED) at once, and the parent ends this process group; the test's
line is written once, whoever writes it first.

LoadGen reads its configuration once per process: a second `FromConfig` leaves mlperf.conf out and
logs "Multiple conf files are used" as an error in the test's log. So the first test's settings are
read from mlperf.conf and its user.conf and remembered; a later test starts from them again and may
only differ in target_qps (set on the settings directly), its mode and its overrides.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import traceback
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from harness.early_abort import LatencyWatch, Limits, Schedule, allowed_over
from harness.engines.base import Engine, EngineSpec
from harness.engines.replicas import ReplicatedEngine
from harness.lifetime import end_with_parent
from harness.progress import RunStats
from harness.prompts import Prompts
from submitter.errors import SubmitterError, UsageProblem
from submitter.evaluation.detokenize import TOKENIZER_FILE, find_tokenizer, load_detokenizer
from submitter.fileformats.run_mode import Mode
from submitter.fileformats.run_record import EarlyAbortRecord, WorkerResult

REFUSED_BEFORE_START = 3
ABORTED = 4  # stopped early: VALID was impossible; the parent ends the process
PARENT_PID_VARIABLE = "SUBMITTER_PARENT_PID"
REPORT_FD_VARIABLE = "SUBMITTER_REPORT_FD"
# The TestSettings field that user.conf's target_qps sets, per LoadGen scenario.
_RATE_SETTING = {"Server": "server_target_qps", "Offline": "offline_expected_qps"}


class WorkerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: Path
    run_name: str  # the run directory within the runs folder, as run.json and the ledger name runs
    user_conf: Path
    user_conf_values: dict[str, int | float]  # what user_conf sets, to compare tests sharing a worker
    loadgen_model: str
    loadgen_scenario: str
    mode: Mode
    audit_config: Path | None
    overrides: dict[str, int] = Field(default_factory=dict)
    seeds: dict[str, int]
    round: str
    dataset: Path
    dataset_limit: int | None
    plugin: str  # the benchmark plug-in that loads the dataset (harness.benchmarks)
    max_input_tokens: int
    engine: EngineSpec
    progress_label: str | None = None
    # The round's latency limits of a Server or Interactive performance run, to stop it early once
    # VALID is impossible; None: run to the end.
    early_abort: Limits | None = None


class _KeptState:
    """What one worker keeps between tests: the engine and LoadGen's settings after mlperf.conf."""

    def __init__(self) -> None:
        self.engine: Engine | None = None
        self.engine_spec: EngineSpec | None = None
        self.started_by: str | None = None  # the run whose test started the engine
        self.tests = 0
        self.settings: Any = None
        self.configuration: tuple[str, str, dict[str, int | float]] | None = None
        self.loaded_values: dict[str, Any] = {}  # every setting after mlperf.conf and the first user.conf

    def stop(self) -> None:
        """Free the engine; every test's result is already reported, so a failure here is only logged."""
        if self.engine is not None:
            engine, self.engine = self.engine, None
            try:
                engine.stop()
            except Exception as exc:
                print(f"the engine did not stop cleanly: {type(exc).__name__}: {exc}", file=sys.stderr)


def _settings(spec: WorkerSpec, kept: _KeptState) -> Any:
    """LoadGen's settings for this test: mlperf.conf and user.conf, then this test's mode and overrides."""
    import mlperf_loadgen as lg

    if kept.settings is None:
        settings = lg.TestSettings()
        settings.scenario = getattr(lg.TestScenario, spec.loadgen_scenario)
        if settings.FromConfig(str(spec.user_conf), spec.loadgen_model, spec.loadgen_scenario) != 0:
            raise SubmitterError(f"LoadGen rejected {spec.user_conf}; its log lines above say which key")
        kept.loaded_values = {
            name: getattr(settings, name)
            for name in dir(settings)
            if not name.startswith("_") and not callable(getattr(settings, name))
        }
        kept.settings, kept.configuration = settings, loadgen_configuration(spec)
    else:
        if loadgen_configuration(spec) != kept.configuration:
            raise SubmitterError(
                "a worker's tests share one LoadGen model, scenario and user.conf apart from target_qps "
                "(LoadGen reads its configuration once per process); this test needs a worker of its own"
            )
        settings = kept.settings
        for name, value in kept.loaded_values.items():
            setattr(settings, name, value)
        if "target_qps" in spec.user_conf_values:
            setattr(settings, _RATE_SETTING[spec.loadgen_scenario], spec.user_conf_values["target_qps"])
    loaded = {name: int(getattr(settings, name)) for name in spec.seeds}
    if loaded != spec.seeds:
        raise SubmitterError(
            f"the installed LoadGen sets seeds {loaded}, round {spec.round} requires {spec.seeds}; "
            "install the LoadGen release the round names (submitter rounds show)"
        )
    settings.mode = lg.TestMode.AccuracyOnly if spec.mode is Mode.ACCURACY else lg.TestMode.PerformanceOnly
    for name, value in spec.overrides.items():
        setattr(settings, name, value)
    return settings


def loadgen_configuration(spec: WorkerSpec) -> tuple[str, str, dict[str, int | float]]:
    """What tests sharing a worker have in common: LoadGen model, scenario, user.conf but target_qps."""
    user_conf = {key: value for key, value in spec.user_conf_values.items() if key != "target_qps"}
    return spec.loadgen_model, spec.loadgen_scenario, user_conf


def _engine(spec: WorkerSpec, kept: _KeptState, result: WorkerResult) -> Engine:
    from harness.engines.registry import create_engine

    if kept.engine is None:
        try:
            engine = create_engine(spec.engine)
            began = time.monotonic()
            engine.start()
        except Exception:
            result.engine_did_not_start = True
            raise
        result.engine_start_s = round(time.monotonic() - began, 3)
        kept.engine, kept.engine_spec, kept.started_by = engine, spec.engine, spec.run_name
    elif kept.engine_spec is None or spec.engine.build_key() != kept.engine_spec.build_key():
        raise SubmitterError("this worker's engine was built with other arguments; start a new worker")
    elif spec.engine.generation != kept.engine_spec.generation:
        kept.engine.use_generation(spec.engine.generation)
        kept.engine_spec = spec.engine
    kept.tests += 1
    result.engine_test_number = kept.tests
    result.engine_started_by = kept.started_by
    result.engine_versions = kept.engine.versions()
    return kept.engine


def _answer_payload(prompts: Prompts, model: str) -> Callable[[Sequence[int]], array] | None:
    """For benchmarks that log text: each answer decoded with the model's tokenizer, then encoded as the
    benchmark's response (refused before LoadGen starts when the model has no tokenizer)."""
    encode = prompts.answer_payload
    if encode is None:
        return None
    tokenizer = find_tokenizer(model)
    if tokenizer is None:
        raise UsageProblem(
            f"{model} has no {TOKENIZER_FILE}: this benchmark's answers reach LoadGen as text, so the "
            "harness decodes them with the model's tokenizer; use a model folder that has one"
        )
    decode = load_detokenizer(
        tokenizer, as_tokenizer_config_says=False
    )  # vLLM's text, which the references log
    return lambda token_ids: encode(decode([token_ids])[0])


class Reports:
    """The report file: one line per test, written once, by the test's end or by an early abort from
    an engine's (or LoadGen's) thread, whichever comes first."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._test = 0
        self._reported = 0

    def next_test(self) -> None:
        with self._lock:
            self._test += 1

    def send(self, status: int, result: WorkerResult) -> bool:
        """Write the current test's line; False when it was already written (the test was aborted)."""
        with self._lock:
            if self._reported == self._test:
                return False
            self._reported = self._test
            line = {"status": status, "result": result.model_dump(mode="json")}
            self._stream.write(json.dumps(line) + "\n")
            self._stream.flush()
            return True


def loadgen_limits(settings: Any) -> Limits:
    """The limits LoadGen judges a Server run by (mlperf.conf and user.conf as loaded; nanoseconds)."""
    percentile = float(settings.server_target_latency_percentile)
    if settings.use_token_latencies:
        return Limits(
            ttft_ms=settings.ttft_latency / 1e6, tpot_ms=settings.tpot_latency / 1e6, percentile=percentile
        )
    return Limits(latency_ms=settings.server_target_latency_ns / 1e6, percentile=percentile)


def loadgen_schedule(settings: Any, samples: int) -> Schedule:
    """What LoadGen's Server schedule issues under these settings, `samples` being the QSL's size."""
    override = int(settings.performance_sample_count_override)
    return Schedule(
        target_qps=float(settings.server_target_qps),
        min_duration_s=settings.min_duration_ms / 1000,
        min_query_count=int(settings.min_query_count),
        max_query_count=int(settings.max_query_count),
        # LoadGen's first loadable set: the performance sample count, capped at the QSL's samples.
        sample_set=min(override or samples, samples),
        equal_issue=bool(settings.sample_concatenate_permutation),
    )


def _watch(
    spec: WorkerSpec,
    settings: Any,
    samples: int,
    result: WorkerResult,
    stats: RunStats,
    reports: Reports,
) -> LatencyWatch | None:
    """The early-abort watch of a Server performance test that asks for one; its trip reports the test
    as ABORTED from whichever thread sees it, with what the test did so far."""
    if spec.early_abort is None or spec.mode is not Mode.PERFORMANCE or spec.loadgen_scenario != "Server":
        return None
    limits = spec.early_abort.loosest(loadgen_limits(settings))
    schedule = loadgen_schedule(settings, samples)
    max_queries = schedule.max_queries()
    result.early_abort = EarlyAbortRecord(
        **limits.model_dump(),
        max_queries=max_queries,
        allowed_over=allowed_over(max_queries, limits.percentile),
        schedule_s=round(schedule.seconds(), 3),
    )

    def abort(reason: str) -> None:
        elapsed = stats.elapsed_s()  # since just before LoadGen started
        report = result.model_copy(deep=True)  # the main thread may still write into `result`
        report.aborted = f"aborted after {elapsed:,.1f} s: {reason}"
        report.loadgen_test_s = round(elapsed, 3)
        _record_counts(report, stats)
        assert report.early_abort is not None
        report.early_abort.aborted_after_s = round(elapsed, 3)
        report.early_abort.saved_s = round(max(0.0, report.early_abort.schedule_s - elapsed), 3)
        if reports.send(ABORTED, report) and spec.progress_label:
            sys.stderr.write("\n")  # end the live line; the parent's verdict follows

    return LatencyWatch(limits, max_queries, on_trip=abort)


def _record_counts(result: WorkerResult, stats: RunStats) -> None:
    """What the test did so far, as the harness counted it, into the result run.json records."""
    result.samples_issued, result.samples_completed = stats.issued, stats.completed
    result.tokens, result.short_outputs = stats.tokens, stats.short_outputs
    result.steady = stats.steady()


def _stop_on_lost_replica(
    engine: ReplicatedEngine, result: WorkerResult, stats: RunStats, reports: Reports
) -> None:
    """Record where the replicas run; should one be lost (its node left the cluster), report the test at
    once, naming the node, and let the parent end this process: LoadGen cannot stop a test, and the rest
    of its schedule would only fail."""
    result.cluster_stages = engine.placement()

    def lost(reason: str) -> None:
        report = result.model_copy(deep=True)  # the main thread may still write into `result`
        report.lost_node = reason
        report.loadgen_test_s = round(stats.elapsed_s(), 3)
        _record_counts(report, stats)
        reports.send(ABORTED, report)

    engine.on_fault(lost)


def run(spec: WorkerSpec, result: WorkerResult, kept: _KeptState, reports: Reports) -> None:
    import mlperf_loadgen as lg

    from harness.benchmarks.registry import load_plugin
    from harness.progress import PROGRESS_FILE, LiveLine, ProgressFile
    from harness.sut import LoadGenResponder, QuerySampleLibrary, SystemUnderTest

    settings = _settings(spec, kept)
    prompts = load_plugin(spec.plugin).load_samples(
        spec.dataset, limit=spec.dataset_limit, max_input_tokens=spec.max_input_tokens
    )
    payload = _answer_payload(prompts, spec.engine.model)
    engine = _engine(spec, kept, result)

    stats = RunStats()
    watch = _watch(spec, settings, len(prompts), result, stats, reports)
    if isinstance(engine, ReplicatedEngine):
        _stop_on_lost_replica(engine, result, stats, reports)
    library = QuerySampleLibrary(prompts)
    responder = LoadGenResponder(
        stats, streaming=spec.engine.streaming, finish=prompts.finish, payload=payload, watch=watch
    )
    sut_handle = SystemUnderTest(engine, library, responder, stats, watch).construct()
    qsl_handle = library.construct()
    output = lg.LogOutputSettings()
    output.outdir = str(spec.run_dir)
    output.copy_summary_to_stdout = False
    log_settings = lg.LogSettings()
    log_settings.log_output = output
    log_settings.enable_trace = False
    # An empty path means "no audit": LoadGen's default would read ./audit.config if one is lying around.
    audit = str(spec.audit_config) if spec.audit_config else ""

    result.started_loadgen = True
    began = time.monotonic()
    try:
        with contextlib.ExitStack() as shown:
            shown.enter_context(ProgressFile(stats, spec.run_dir / PROGRESS_FILE))
            if spec.progress_label:
                shown.enter_context(LiveLine(stats, spec.progress_label, sys.stderr))
            lg.StartTestWithLogSettings(sut_handle, qsl_handle, settings, log_settings, audit)
    finally:
        result.loadgen_test_s = round(time.monotonic() - began, 3)
        lg.DestroySUT(sut_handle)
        lg.DestroyQSL(qsl_handle)
    _record_counts(result, stats)
    result.late_first_tokens = responder.late_first_tokens
    result.failed_samples, result.first_failure = responder.failures, responder.first_failure


def run_reporting_errors(spec: WorkerSpec, result: WorkerResult, kept: _KeptState, reports: Reports) -> int:
    """Run one test; its status: 0 done, 1 failed after LoadGen started, 3 refused before (4, ABORTED,
    is reported by the watch itself while the test runs)."""
    try:
        run(spec, result, kept, reports)
    except SubmitterError as exc:
        result.error = str(exc)
    except Exception as exc:  # an engine that fails to start or crashes: reported, never a bare traceback
        result.error = f"{type(exc).__name__}: {exc}"
        if os.environ.get("SUBMITTER_DEBUG"):
            traceback.print_exc()
    if result.error is None:
        return 0
    return 1 if result.started_loadgen else REFUSED_BEFORE_START


def main() -> int:
    end_with_parent(int(os.environ.get(PARENT_PID_VARIABLE, os.getppid())))
    reports = Reports(os.fdopen(int(os.environ[REPORT_FD_VARIABLE]), "w", encoding="utf-8"))
    kept = _KeptState()
    try:
        for line in sys.stdin:
            spec = WorkerSpec.model_validate_json(line)
            result = WorkerResult()
            reports.next_test()
            status = run_reporting_errors(spec, result, kept, reports)
            if not reports.send(status, result):
                return ABORTED  # reported while it ran; the parent is ending this process anyway
            if status != 0:
                return status
    finally:
        kept.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
