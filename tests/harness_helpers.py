"""Building blocks for harness tests: a fast synthetic system, a small dataset, short LoadGen runs."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

from harness.engine_session import EngineSession
from harness.loadgen_settings import Smoke
from harness.runner import FinishedRun, RunRequest, execute, plan_run
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round
from submitter.systems.catalog import descriptor_path
from submitter.systems.descriptor import SystemDescriptor

# Short but VALID runs: Server needs about 460 queries under the limits for early stopping.
SHORT = Smoke(samples=64, min_duration_ms=1000, server_min_queries=512)


def fast_descriptor(**benchmark_changes: Any) -> dict[str, Any]:
    """demo_cpu with a synthetic engine fast enough for second-long runs of every scenario."""
    data = json.loads(descriptor_path("demo_cpu").read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    data["id"] = "fast_cpu"
    setup = data["benchmarks"]["llama3.1-8b"]
    setup["model_path"] = "synthetic"
    setup.pop("dataset_path", None)
    setup["engine_args"] = {
        "tokens_per_second": 100000,
        "max_num_seqs": 512,
        "time_to_first_token_ms": 5,
    }
    setup["scenarios"] = {
        "Offline": {"user_conf": {"target_qps": 1000}},
        "Server": {"user_conf": {"target_qps": 200}},
        "Interactive": {"user_conf": {"target_qps": 200}},
    }
    setup.update(benchmark_changes)
    return data


def write_dataset(path: Path, samples: int = 64) -> Path:
    from harness.benchmarks.llama3_1_8b.synthetic import synthesize_dataset

    generation = load_round("v6.1").benchmark("llama3.1-8b").generation
    assert generation is not None
    synthesize_dataset(path, samples, generation, seed=7)
    return path


def short_run(
    descriptor: dict[str, Any],
    scenario: Scenario,
    mode: Mode,
    dataset: Path,
    runs_root: Path,
    smoke: Smoke = SHORT,
    session: EngineSession | None = None,
) -> FinishedRun:
    request = RunRequest(
        system=SystemDescriptor.model_validate(descriptor),
        benchmark="llama3.1-8b",
        scenario=scenario,
        mode=mode,
        dataset=dataset,
        smoke=smoke,
        runs_root=runs_root,
        command_line=("pytest",),
    )
    return execute(plan_run(request), session)


def detail_records(run_dir: Path) -> dict[str, Any]:
    """The detail log's first value of each key, parsed here independently of the harness."""
    values: dict[str, Any] = {}
    for line in (run_dir / "mlperf_log_detail.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith(":::MLLOG "):
            record = json.loads(line[len(":::MLLOG ") :])
            values.setdefault(record["key"], record["value"])
    return values


def accuracy_records(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "mlperf_log_accuracy.json").read_text(encoding="utf-8"))


def token_ids(hex_data: str) -> list[int]:
    raw = bytes.fromhex(hex_data)
    return [int.from_bytes(raw[i : i + 4], "little", signed=True) for i in range(0, len(raw), 4)]


def every_step_run(folder: Path) -> tuple[dict[str, Any], Path]:
    """A short, valid run of every step the round requires (9 runs, ~15 s), with scored accuracy runs.

    Returns the descriptor and the runs folder; `submitter stage --allow-not-submittable
    --allow-trials` turns them into a tree.
    """
    from harness.benchmarks.llama3_1_8b.synthetic import synthesize_dataset, write_demo_model
    from harness.matrix import required_steps

    generation = load_round("v6.1").benchmark("llama3.1-8b").generation
    assert generation is not None
    dataset = folder / "data.json"
    records = synthesize_dataset(dataset, 64, generation)
    # The demo model's tokenizer and answers make accuracy runs scored, as staging requires.
    model = write_demo_model(folder / "model", records, 128)
    descriptor = fast_descriptor(model_path=str(model))
    system = SystemDescriptor.model_validate(descriptor)
    for step in required_steps(system, load_round(system.round)):
        finished = short_run(descriptor, step.scenario, step.mode, dataset, folder / "runs")
        assert finished.record.valid, finished.record.problems
    return descriptor, folder / "runs"


def fake_nvidia_smi(folder: Path, gpus: list[tuple[str, int]]) -> Path:
    """An `nvidia-smi` in `folder` that answers `--query-gpu=... --format=csv,noheader [--id=...]` as the
    real one does, for GPUs of these names and MiB (a GPU host stands in; put `folder` first on PATH)."""
    table = [
        {
            "index": str(index),
            "name": name,
            "memory.total": f"{mib} MiB",
            "driver_version": "580.159.04",
            "pci.bus_id": f"00000000:{0x18 + 16 * index:02X}:00.0",
            "memory.reserved": "454 MiB",  # an H100 80GB HBM3's, from its `nvidia-smi -q`
        }
        for index, (name, mib) in enumerate(gpus)
    ]
    script = folder / "nvidia-smi"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"table = {table!r}\n"
        "args = dict(arg.split('=', 1) for arg in sys.argv[1:] if '=' in arg)\n"
        "ids = args['--id'].split(',') if '--id' in args else [row['index'] for row in table]\n"
        "for row in table:\n"
        "    if row['index'] in ids:\n"
        "        print(', '.join(row[column] for column in args['--query-gpu'].split(',')))\n"
    )
    script.chmod(0o755)
    return script


class WhereEngine:
    """An engine that answers every sample with the CPUs its process may use, so a test sees each replica
    process's placement."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def start(self) -> None: ...

    def use_generation(self, generation: Any) -> None: ...

    def submit(self, samples: Any, events: Any) -> None:
        answer = sorted(os.sched_getaffinity(0))
        for sample in samples:
            events.complete(sample.id, answer)

    def flush(self) -> None: ...

    def stop(self) -> None: ...

    def versions(self) -> dict[str, str]:
        return {}


def where_engine(spec: Any) -> WhereEngine:
    """WhereEngine's factory, by name, so it crosses to a spawned replica process."""
    return WhereEngine(spec)
