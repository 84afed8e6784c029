"""One LoadGen test in one process: `python -m harness.worker SPEC_FILE RESULT_FILE`.

LoadGen keeps process-wide state (a second FromConfig in a process logs an error), so every run gets a
fresh process. The parent (`harness.runner`) has already checked everything it can; this process
re-checks what only LoadGen itself knows (the seeds its embedded mlperf.conf sets), starts the engine,
runs the test and writes a small result file. Exit status 3 means it stopped before LoadGen started.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.engines.base import EngineSpec
from harness.lifetime import end_with_parent
from harness.loadgen_settings import Mode
from submitter.errors import SubmitterError
from submitter.fileio import write_text_atomic

REFUSED_BEFORE_START = 3
PARENT_PID_VARIABLE = "SUBMITTER_PARENT_PID"


class WorkerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: Path
    user_conf: Path
    loadgen_model: str
    loadgen_scenario: str
    mode: Mode
    audit_config: Path | None
    overrides: dict[str, int] = Field(default_factory=dict)
    seeds: dict[str, int]
    round: str
    dataset: Path
    dataset_limit: int | None
    max_input_tokens: int
    engine: EngineSpec
    progress_label: str | None = None


class WorkerResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started_loadgen: bool = False
    error: str | None = None
    engine_versions: dict[str, str] = Field(default_factory=dict)
    engine_start_s: float | None = None
    loadgen_test_s: float | None = None
    samples_issued: int = 0
    samples_completed: int = 0
    tokens: int = 0
    short_outputs: int = 0
    late_first_tokens: int = 0
    failed_samples: int = 0
    first_failure: str | None = None


def run(spec: WorkerSpec, result: WorkerResult) -> None:
    import mlperf_loadgen as lg

    from harness.dataset import load_prompts
    from harness.engines import create_engine
    from harness.progress import LiveLine, RunStats
    from harness.sut import LoadGenResponder, QuerySampleLibrary, SystemUnderTest

    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, spec.loadgen_scenario)
    if settings.FromConfig(str(spec.user_conf), spec.loadgen_model, spec.loadgen_scenario) != 0:
        raise SubmitterError(f"LoadGen rejected {spec.user_conf}; its log lines above say which key")
    loaded = {name: int(getattr(settings, name)) for name in spec.seeds}
    if loaded != spec.seeds:
        raise SubmitterError(
            f"the installed LoadGen sets seeds {loaded}, round {spec.round} requires {spec.seeds}; "
            "install the LoadGen release the round names (submitter rounds show)"
        )
    settings.mode = lg.TestMode.AccuracyOnly if spec.mode is Mode.ACCURACY else lg.TestMode.PerformanceOnly
    for name, value in spec.overrides.items():
        setattr(settings, name, value)

    prompts = load_prompts(spec.dataset, limit=spec.dataset_limit, max_input_tokens=spec.max_input_tokens)
    engine = create_engine(spec.engine)
    began = time.monotonic()
    engine.start()
    result.engine_start_s = round(time.monotonic() - began, 3)
    result.engine_versions = engine.versions()

    stats = RunStats()
    library = QuerySampleLibrary(prompts)
    responder = LoadGenResponder(stats, streaming=spec.engine.streaming)
    sut_handle = SystemUnderTest(engine, library, responder, stats).construct()
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
        if spec.progress_label:
            with LiveLine(stats, spec.progress_label, sys.stderr):
                lg.StartTestWithLogSettings(sut_handle, qsl_handle, settings, log_settings, audit)
        else:
            lg.StartTestWithLogSettings(sut_handle, qsl_handle, settings, log_settings, audit)
    finally:
        result.loadgen_test_s = round(time.monotonic() - began, 3)
        engine.stop()
        lg.DestroySUT(sut_handle)
        lg.DestroyQSL(qsl_handle)
    result.samples_issued, result.samples_completed = stats.issued, stats.completed
    result.tokens, result.short_outputs = stats.tokens, stats.short_outputs
    result.late_first_tokens = responder.late_first_tokens
    result.failed_samples, result.first_failure = responder.failures, responder.first_failure


def main(argv: list[str]) -> int:
    end_with_parent(int(os.environ.get(PARENT_PID_VARIABLE, os.getppid())))
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = WorkerSpec.model_validate_json(spec_path.read_text(encoding="utf-8"))
    result = WorkerResult()
    status = 0
    try:
        run(spec, result)
    except SubmitterError as exc:
        result.error = str(exc)
        status = 1 if result.started_loadgen else REFUSED_BEFORE_START
    except Exception as exc:  # an engine that fails to start or crashes: reported, never a bare traceback
        result.error = f"{type(exc).__name__}: {exc}"
        status = 1 if result.started_loadgen else REFUSED_BEFORE_START
        if os.environ.get("SUBMITTER_DEBUG"):
            traceback.print_exc()
    write_text_atomic(result_path, result.model_dump_json(indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
