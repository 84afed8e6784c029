"""One test per rule of `check`: a valid minimal tree, ONE change, and the rule reports it.

`CASES` holds the change for every rule id of the tree, result and performance registries and of the
system lint (as `check` reports it: the official system checks as errors, the rest as warnings). A rule
reports with its registered severity; an error makes the result it concerns invalid, a warning leaves it
valid (form never invalidates a result) unless the check is strict. A new rule without a case fails
`test_every_rule_has_a_case`.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from minitree import (
    ENDPOINTS_FIXTURES,
    MiniTree,
    WrittenResult,
    accuracy_line,
    add_endpoints_result,
    add_power,
    build_tree,
    detail_log,
    power_records,
)
from test_audit_evidence import CHANGES as AUDIT_EVIDENCE
from test_check_power import RANGING_WINDOW, TESTING_WINDOW, Session, spl, stamp
from treecopy import add_error_record, edit_json, set_log_value

import submitter.check.checker  # noqa: F401  (registers the rules)
from submitter.check.checker import CheckReport, check_tree
from submitter.check.context import PERFORMANCE_RULES, RESULT_RULES, TREE_RULES
from submitter.cli import cli
from submitter.rule_registry import Finding, Severity
from submitter.systems.lint import SYSTEM_RULES

EDGE = ("SingleStream", "MultiStream", "Offline")


# --- the valid trees the changes start from ----------------------------------------------------------------


@dataclass(frozen=True)
class Base:
    round_name: str
    results: tuple[tuple[str, ...], ...]
    system_type: str = "datacenter"
    division: str = "closed"
    model_mapping: dict[str, str] | None = None
    extra: Callable[[MiniTree], None] | None = None  # a power or endpoints result added to the tree


def power_session(result: WrittenResult, change: Callable[[Session], None] | None = None) -> dict[str, bytes]:
    """A coherent PTD session (the power tests' builder) around the result's own run: run_1 and ranging."""
    session = Session()
    for run, window in (("run_1", TESTING_WINDOW), ("ranging", RANGING_WINDOW)):
        records = power_records(result, stamp(window[0]), stamp(window[1]))
        session.texts[f"{run}/mlperf_log_detail.txt"] = detail_log(records)
    if change is not None:
        change(session)
    return session.files()


def _power(tree: MiniTree) -> None:
    result = tree.result("resnet", "Offline")
    add_power(tree, result, power_session(result))


def _endpoints_offline(tree: MiniTree) -> None:
    fixture = ENDPOINTS_FIXTURES / "qwen3-vl-235b-a22b" / "Offline"
    add_endpoints_result(tree, "Sys", "qwen3-vl-235b-a22b", "Offline", fixture)


def _endpoints_server(tree: MiniTree) -> None:
    fixture = ENDPOINTS_FIXTURES / "gpt-oss-120b" / "online"
    add_endpoints_result(tree, "Sys", "gpt-oss-120b", "Server", fixture)


def _resnet(round_name: str, **extra: Any) -> Base:
    return Base(round_name, tuple(("Sys", "resnet", s) for s in EDGE), "edge", **extra)


BASES = {
    "resnet": _resnet("v6.0"),  # TEST01 and TEST04
    "resnet-v5.1": _resnet("v5.1"),
    "llama": Base("v6.0", (("Sys", "llama3.1-8b", "Offline"), ("Sys", "llama3.1-8b", "Server"))),  # TEST06
    "llama-interactive": Base(
        "v6.0", (("Sys", "llama3.1-8b", "Offline"), ("Sys", "llama3.1-8b", "Interactive"))
    ),
    "gpt-oss": Base("v6.0", (("Sys", "gpt-oss-120b", "Offline"), ("Sys", "gpt-oss-120b", "Interactive"))),
    "dlrm-v3": Base("v6.0", (("Sys", "dlrm-v3", "Offline"), ("Sys", "dlrm-v3", "Server"))),  # TEST08
    "sdxl": Base(
        "v6.0",
        (("Sys", "stable-diffusion-xl", "SingleStream"), ("Sys", "stable-diffusion-xl", "Offline")),
        "edge",
    ),
    "open": Base("v6.0", (("Sys", "OrgNet", "Offline"),), "edge", "open", {"OrgNet": "resnet"}),
    "power": _resnet("v6.0", extra=_power),
    "power-v6.1": _resnet("v6.1", extra=_power),
    "unet-v6.1": Base("v6.1", (("Sys", "3d-unet-99", "Offline"),)),
    "endpoints": Base("v6.1", (("Sys", "qwen3-vl-235b-a22b", "Server"),), extra=_endpoints_offline),
    "endpoints-server": Base("v6.1", (("Sys", "gpt-oss-120b", "Offline"),), extra=_endpoints_server),
}


def build(root: Path, name: str) -> MiniTree:
    base = BASES[name]
    tree = build_tree(
        root,
        base.round_name,
        base.results,
        division=base.division,
        system_type=base.system_type,
        model_mapping=base.model_mapping,
    )
    if base.extra is not None:
        base.extra(tree)
    return tree


# --- the changes ------------------------------------------------------------------------------------------

Change = Callable[[MiniTree], None]
ALL = "all"


@dataclass(frozen=True)
class Case:
    base: str
    change: Change
    # The result the finding concerns, as (benchmark folder, scenario); ALL: every result of the tree;
    # None: no result (a folder without any).
    result: tuple[str, str] | str | None = ALL


def _result_dir(tree: MiniTree, folder: str, scenario: str) -> Path:
    """A result's folder, endpoints results (which the builder does not record) included."""
    return tree.path(tree.rules.layout.results_dir, system="Sys", benchmark=folder, scenario=scenario)


def write(relative: Callable[[MiniTree], Path], text: str | bytes) -> Change:
    def change(tree: MiniTree) -> None:
        path = relative(tree)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)

    return change


def review_inside_the_tree(tree: MiniTree) -> None:
    """`submitter report TREE --out TREE/review`: the review would travel with the upload."""
    review = tree.submitter_dir / "review"
    review.mkdir()
    for name in ("review.md", "review.html"):
        (review / name).write_text("review\n")


def remove(relative: Callable[[MiniTree], Path]) -> Change:
    def change(tree: MiniTree) -> None:
        path = relative(tree)
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()

    return change


def replace(relative: Callable[[MiniTree], Path], old: str, new: str) -> Change:
    def change(tree: MiniTree) -> None:
        path = relative(tree)
        text = path.read_text()
        assert old in text, (path, old)
        path.write_text(text.replace(old, new, 1))

    return change


def perf(folder: str, scenario: str, key: str, value: Callable[[WrittenResult], Any] | Any) -> Change:
    """Set a record of the result's performance detail log (a callable computes it from the result)."""

    def change(tree: MiniTree) -> None:
        result = tree.result(folder, scenario)
        set_log_value(result.performance_log, key, value(result) if callable(value) else value)

    return change


def acc_log(folder: str, scenario: str, key: str, value: Callable[[WrittenResult], Any]) -> Change:
    def change(tree: MiniTree) -> None:
        result = tree.result(folder, scenario)
        set_log_value(result.accuracy_log, key, value(result))

    return change


def system(**changes: Any) -> Change:
    """Edit the system description (None removes a key)."""
    return lambda tree: edit_json(tree.system_json("Sys"), **changes)


def accuracy_value(folder: str, scenario: str, value: Callable[[float], str], metric: int = 0) -> Change:
    """Rewrite accuracy.txt's line of a target metric with another value (from the target's threshold)."""

    def change(tree: MiniTree) -> None:
        result = tree.result(folder, scenario)
        bound = result.bench.accuracy.targets_for(None)[metric]
        pattern = tree.rules.accuracy_patterns[bound.metric]
        old = accuracy_line(pattern, result.accuracy[bound.metric])
        replace(lambda _: result.accuracy_txt, old, accuracy_line(pattern, value(bound.threshold)))(tree)

    return change


def upper_limit_exceeded(tree: MiniTree) -> None:
    result = tree.result("llama3.1-8b", "Offline")
    (bound,) = result.bench.accuracy.upper_limits
    pattern = tree.rules.accuracy_patterns[bound.metric]
    old = accuracy_line(pattern, result.accuracy[bound.metric])
    replace(lambda _: result.accuracy_txt, old, accuracy_line(pattern, f"{bound.threshold * 1.01:.4f}"))(tree)


def failed_test01(tree: MiniTree) -> None:
    """TEST01's deterministic check failed and the audit's accuracy is 5 % below the baseline's."""
    result = tree.result("resnet", "Offline")
    folder = result.audits["TEST01"]
    replace(lambda _: folder / "verify_accuracy.txt", "TEST PASS", "TEST FAIL")(tree)
    (bound,) = result.bench.accuracy.targets_for(None)
    pattern = tree.rules.accuracy_patterns[bound.metric]
    lower = f"{float(result.accuracy[bound.metric]) * 0.95:.4f}"
    write(lambda _: folder / "accuracy/compliance_accuracy.txt", accuracy_line(pattern, lower) + "\n")(tree)


def v51_measurements(tree: MiniTree) -> None:
    """Measurements where v5.1 keeps them (measurements/<system>/...), in a tree of a v6 round."""
    for result in tree.results:
        target = tree.submitter_dir / "measurements" / result.system / result.folder / result.scenario
        target.mkdir(parents=True)
        shutil.move(result.measurements_dir / "measurements.json", target / f"{result.system}.json")
        for name in tree.rules.measurements.companions:
            shutil.move(result.measurements_dir / name, target / name)


def measurements_json(tree: MiniTree) -> Path:
    """The resnet Offline result's measurements JSON, named as the round's layout names it."""
    return RESNET(tree).measurements_dir / tree.rules.layout.measurements_file.format(system="Sys")


def rename_system(new: str) -> Change:
    def change(tree: MiniTree) -> None:
        tree.system_json("Sys").rename(tree.system_json(new))
        (tree.submitter_dir / "results" / "Sys").rename(tree.submitter_dir / "results" / new)

    return change


def network_keys(tree: MiniTree) -> None:
    """is_network "false" with every key a network description has (the official checker then asks them)."""
    keys = {key: f"{key} of the system" for key in tree.rules.system.network_keys}
    edit_json(tree.system_json("Sys"), **{**keys, "is_network": "false"})


def repower(change: Callable[[Session], None]) -> Change:
    def apply(tree: MiniTree) -> None:
        result = tree.result("resnet", "Offline")
        add_power(tree, result, power_session(result, change))

    return apply


def no_power_samples(session: Session) -> None:
    session.texts["ranging/spl.txt"] = session.texts["run_1/spl.txt"] = "no samples\n"


def short_testing_run(session: Session) -> None:
    short = (TESTING_WINDOW[0], TESTING_WINDOW[0] + 800.0)
    records = detail_log({**_log_records(session, "run_1"), "power_end": stamp(short[1])})
    session.texts["run_1/mlperf_log_detail.txt"] = records
    session.texts["run_1/spl.txt"] = spl(short, 101.0, "testing")


def _log_records(session: Session, run: str) -> dict[str, Any]:
    lines = session.texts[f"{run}/mlperf_log_detail.txt"].splitlines()
    records = (json.loads(line.split(" ", 1)[1]) for line in lines)
    return {record["key"]: record["value"] for record in records}


def endpoints_score(value: float) -> Change:
    def change(tree: MiniTree) -> None:
        path = _result_dir(tree, "qwen3-vl-235b-a22b", "Offline") / "accuracy/accuracy_results.json"
        data = json.loads(path.read_text())
        data["accuracy_scores"][0]["score"] = {"f1": value}
        path.write_text(json.dumps(data))

    return change


def endpoints_mean_output(value: float) -> Change:
    def change(tree: MiniTree) -> None:
        path = _result_dir(tree, "gpt-oss-120b", "Server") / "performance/result_summary.json"
        data = json.loads(path.read_text())
        data["output_sequence_lengths"]["avg"] = value
        path.write_text(json.dumps(data))

    return change


def endpoints_instead(tree: MiniTree) -> None:
    """The 3d-unet result in the endpoints format, which the round accepts only of some benchmarks."""
    shutil.rmtree(tree.result("3d-unet-99", "Offline").result_dir)
    add_endpoints_result(
        tree, "Sys", "3d-unet-99", "Offline", ENDPOINTS_FIXTURES / "qwen3-vl-235b-a22b" / "Offline"
    )


def sparse_file(tree: MiniTree) -> None:
    with (tree.submitter_dir / "documentation" / "weights.bin").open("wb") as stream:
        stream.truncate((tree.rules.tree.max_file_mb + 1) * 1024 * 1024)


def garble(path: Callable[[MiniTree], Path], line: int = 2) -> Change:
    """Cut a LoadGen record of a detail log in half (the JSON no longer parses)."""

    def change(tree: MiniTree) -> None:
        target = path(tree)
        lines = target.read_text().splitlines(keepends=True)
        lines[line] = lines[line][: len(lines[line]) // 2] + "\n"
        target.write_text("".join(lines))

    return change


def append(path: Callable[[MiniTree], Path], text: str) -> Change:
    return lambda tree: path(tree).open("a").write(text)


def _r(folder: str, scenario: str) -> Callable[[MiniTree], WrittenResult]:
    return lambda tree: tree.result(folder, scenario)


OFFLINE = ("resnet", "Offline")
RESNET = _r(*OFFLINE)
LLAMA_SERVER = ("llama3.1-8b", "Server")
SEEDS = "effective_schedule_rng_seed"

CASES: dict[str, Case] = {
    # tree: hygiene (warnings)
    "HYG-NAME": Case("resnet", write(lambda t: t.submitter_dir / "documentation/my notes.md", "notes\n")),
    "HYG-PYCACHE": Case("resnet", write(lambda t: t.code_dir / "__pycache__/harness.cpython-311.pyc", b"\0")),
    "HYG-SYMLINK": Case(
        "resnet", lambda t: os.symlink("calibration.md", t.submitter_dir / "documentation/link.md")
    ),
    "HYG-EMPTY-DIR": Case("resnet", lambda t: (t.submitter_dir / "documentation/drafts").mkdir()),
    "HYG-FILE-SIZE": Case("resnet", sparse_file),
    "HYG-DIVISION-FILE": Case("resnet", write(lambda t: t.root / "closed/notes.txt", "notes\n")),
    "HYG-ROOT-FILE": Case("resnet", write(lambda t: t.root / "summary.csv", "Organization\n")),
    "HYG-WORK-FILE": Case("resnet", review_inside_the_tree),
    # tree: structure
    "STRUCT-LAYOUT": Case("resnet", v51_measurements),
    "STRUCT-CODE": Case("resnet", remove(lambda t: t.code_dir)),
    "STRUCT-RESULTS": Case("resnet", write(lambda t: t.root / "closed/Other/src/README.md", "code\n"), None),
    "STRUCT-CALIBRATION": Case("resnet", remove(lambda t: t.submitter_dir / "documentation/calibration.md")),
    "STRUCT-UNREADABLE": Case(
        "resnet", write(lambda t: RESNET(t).accuracy_txt, b"\xff\xfe accuracy"), OFFLINE
    ),
    "STRUCT-MODEL-MAPPING": Case("open", write(lambda t: t.submitter_dir / "model_mapping.json", "[]")),
    "STRUCT-SCENARIOS": Case("resnet", remove(lambda t: t.result("resnet", "MultiStream").result_dir)),
    # tree: systems
    "SYS-FILE": Case("resnet", remove(lambda t: t.system_json("Sys"))),
    "SYS-DIRECTORY": Case("resnet", system(submitter="Other")),
    "SYS-HAS-RESULTS": Case("resnet", lambda t: shutil.copy(t.system_json("Sys"), t.system_json("Orphan"))),
    # result: accuracy
    "ACC-FILES": Case(
        "resnet", remove(lambda t: RESNET(t).accuracy_dir / "mlperf_log_accuracy.json"), OFFLINE
    ),
    "ACC-LOG": Case("resnet", garble(lambda t: RESNET(t).accuracy_log), OFFLINE),
    "ACC-LOG-LINES": Case("resnet", append(lambda t: RESNET(t).accuracy_log, "edited by hand\n"), OFFLINE),
    "ACC-LOADGEN-ERROR": Case("resnet", lambda t: add_error_record(RESNET(t).accuracy_log, "boom"), OFFLINE),
    "ACC-VALUE": Case("resnet", accuracy_value(*OFFLINE, lambda _: "76.4.6"), OFFLINE),
    "ACC-TARGET": Case("resnet", accuracy_value(*OFFLINE, lambda target: f"{target * 0.98:.4f}"), OFFLINE),
    "ACC-UPPER-LIMIT": Case("llama", upper_limit_exceeded, ("llama3.1-8b", "Offline")),
    "ACC-HASH": Case("resnet", replace(lambda t: RESNET(t).accuracy_txt, "hash=", "sha="), OFFLINE),
    "ACC-TRUNCATED": Case(
        "resnet",
        write(lambda t: RESNET(t).accuracy_dir / "mlperf_log_accuracy.json", "[" + " " * 20000 + "]"),
        OFFLINE,
    ),
    "ACC-DATASET": Case(
        "resnet", acc_log(*OFFLINE, "qsl_reported_total_count", lambda r: r.bench.dataset.size - 1), OFFLINE
    ),
    "ACC-EXTRA-FILES": Case(
        "sdxl",
        remove(
            lambda t: next((t.result("stable-diffusion-xl", "Offline").accuracy_dir / "images").glob("*.png"))
        ),
        ("stable-diffusion-xl", "Offline"),
    ),
    "ACC-SCORE": Case("endpoints", endpoints_score(0.5), ("qwen3-vl-235b-a22b", "Offline")),
    # result: compliance
    "COMP-MISSING": Case("resnet", remove(lambda t: RESNET(t).audits["TEST04"]), OFFLINE),
    "COMP-PASS": Case(
        "gpt-oss",
        replace(
            lambda t: t.result("gpt-oss-120b", "Offline").audits["TEST07"] / "verify_accuracy.txt",
            "PASS",
            "FAIL",
        ),
        ("gpt-oss-120b", "Offline"),
    ),
    "COMP-PERFORMANCE": Case(
        "resnet",
        replace(lambda t: RESNET(t).audits["TEST04"] / "verify_performance.txt", "PASS", "FAIL"),
        OFFLINE,
    ),
    "COMP-TEST01": Case("resnet-v5.1", failed_test01, OFFLINE),
    "COMP-TEST06": Case(
        "llama",
        replace(
            lambda t: t.result(*LLAMA_SERVER).audits["TEST06"] / "verify_accuracy.txt",
            "EOS check pass: True",
            "EOS check pass: False",
        ),
        LLAMA_SERVER,
    ),
    "COMP-TEST06-SKIPPED": Case(
        "llama",
        replace(
            lambda t: t.result(*LLAMA_SERVER).audits["TEST06"] / "verify_accuracy.txt",
            "pass: True",
            "pass: Skipped",
        ),
        LLAMA_SERVER,
    ),
    "COMP-TEST06-LOG": Case(
        "llama",
        remove(lambda t: t.result(*LLAMA_SERVER).audits["TEST06"] / "accuracy/mlperf_log_accuracy.json"),
        LLAMA_SERVER,
    ),
    "COMP-ENDPOINTS-AUDIT": Case(
        "endpoints-server",
        write(
            lambda t: (
                _result_dir(t, "gpt-oss-120b", "Server")
                / "audit/audit_accuracy_in_performance_full_test.json"
            ),
            json.dumps({"test": "accuracy_in_performance_full_test", "passed": False}),
        ),
        ("gpt-oss-120b", "Server"),
    ),
    "COMP-OUTPUT-LENGTH": Case("endpoints-server", endpoints_mean_output(500.0), ("gpt-oss-120b", "Server")),
    # result and performance: audit evidence the official checker takes on faith (test_audit_evidence.py)
    **{rule: Case(base, change, result) for rule, (base, change, result) in AUDIT_EVIDENCE.items()},
    # result: measurements
    "MEAS-FILE": Case("resnet-v5.1", remove(measurements_json), OFFLINE),
    "MEAS-FIELDS": Case(
        "resnet",
        lambda t: edit_json(RESNET(t).measurements_dir / "measurements.json", retraining=""),
        OFFLINE,
    ),
    "MEAS-COMPANIONS": Case(
        "resnet-v5.1", write(lambda t: RESNET(t).measurements_dir / "user.conf", ""), OFFLINE
    ),
    # result: structure
    "STRUCT-BENCHMARK": Case(
        "resnet",
        lambda t: (t.submitter_dir / "results/Sys/resnet").rename(t.submitter_dir / "results/Sys/vgg16"),
    ),
    "STRUCT-ENDPOINTS": Case(
        "endpoints",
        remove(lambda t: _result_dir(t, "qwen3-vl-235b-a22b", "Offline") / "performance/result_summary.json"),
        ("qwen3-vl-235b-a22b", "Offline"),
    ),
    "STRUCT-FILESET": Case(
        "resnet", write(lambda t: RESNET(t).accuracy_dir / "notes.txt", "notes\n"), OFFLINE
    ),
    # result: power
    "POWER-FILES": Case(
        "power", write(lambda t: RESNET(t).result_dir / "performance/power/notes.txt", "x\n"), OFFLINE
    ),
    "POWER-CHECK": Case("power", repower(lambda s: s.client.__setitem__("session_name", "other")), OFFLINE),
    "POWER-CHECK-WARNING": Case("power", repower(short_testing_run), OFFLINE),
    "POWER-METRIC": Case("power", repower(no_power_samples), OFFLINE),
    "SYS-NAMEPLATE": Case(
        "power-v6.1", write(lambda t: t.system_json("Sys").with_name("Sys_power.yaml"), "PSUs: [\n"), OFFLINE
    ),
    "SYS-NAMEPLATE-MISSING": Case(
        "power-v6.1", remove(lambda t: t.system_json("Sys").with_name("Sys_power.yaml")), OFFLINE
    ),
    # performance runs
    "PERF-LOG": Case("resnet", garble(lambda t: RESNET(t).performance_log), OFFLINE),
    "PERF-LOG-LINES": Case(
        "resnet", append(lambda t: RESNET(t).performance_log, "edited by hand\n"), OFFLINE
    ),
    "PERF-VALIDITY": Case("resnet", perf(*OFFLINE, "result_validity", "INVALID"), OFFLINE),
    "PERF-LOADGEN-ERROR": Case(
        "resnet", lambda t: add_error_record(RESNET(t).performance_log, "boom"), OFFLINE
    ),
    "PERF-EQUAL-ISSUE": Case(
        "llama",
        perf("llama3.1-8b", "Offline", "effective_sample_concatenate_permutation", False),
        ("llama3.1-8b", "Offline"),
    ),
    "PERF-SAMPLE-COUNT": Case(
        "resnet",
        perf(
            *OFFLINE,
            "effective_performance_sample_count",
            lambda r: r.bench.dataset.performance_sample_count - 1,
        ),
        OFFLINE,
    ),
    "PERF-SEED": Case("resnet", perf(*OFFLINE, SEEDS, lambda r: r.performance[SEEDS] + 1), OFFLINE),
    "PERF-EARLY-STOPPING": Case(
        "resnet", perf("resnet", "SingleStream", "early_stopping_met", False), ("resnet", "SingleStream")
    ),
    "PERF-LATENCY-CONSTRAINT": Case(
        "llama",
        perf(
            *LLAMA_SERVER,
            "effective_target_latency_ns",
            lambda r: r.bench.latency_constraint_ns[r.logged] + 1,
        ),
        LLAMA_SERVER,
    ),
    "PERF-MIN-QUERIES": Case(
        "resnet",
        perf(
            *OFFLINE,
            "effective_samples_per_query",
            lambda r: r.bench.dataset.offline_min_samples_per_query - 1,
        ),
        OFFLINE,
    ),
    "PERF-MIN-DURATION": Case("resnet", perf(*OFFLINE, "effective_min_duration_ms", 599_999), OFFLINE),
    "PERF-NETWORK": Case("resnet", system(is_network="true")),
    "PERF-TOKEN-LATENCIES": Case(
        "llama",
        perf("llama3.1-8b", "Offline", "requested_use_token_latencies", False),
        ("llama3.1-8b", "Offline"),
    ),
    "PERF-TTFT-TPOT": Case(
        "llama",
        perf(
            *LLAMA_SERVER,
            "result_first_token_99.00_percentile_latency_ns",
            lambda r: int(r.bench.token_latency_limits[r.logged].ttft_ms * 1_000_000),
        ),
        LLAMA_SERVER,
    ),
    # Above Interactive's TTFT limit, below Server's (which the official checker applies): stricter.
    "PERF-INTERACTIVE-LIMITS": Case(
        "llama-interactive",
        perf(
            "llama3.1-8b",
            "Interactive",
            "result_first_token_99.00_percentile_latency_ns",
            lambda r: int(r.bench.token_latency_limits[r.logged].ttft_ms * 1_000_000 * 0.99),
        ),
        ("llama3.1-8b", "Interactive"),
    ),
    "PERF-SCENARIO": Case(
        "llama",
        perf("llama3.1-8b", "Offline", "effective_scenario", "SingleStream"),
        ("llama3.1-8b", "Offline"),
    ),
    "PERF-RESULT": Case("resnet", perf(*OFFLINE, "result_samples_per_second", None), OFFLINE),
    "PERF-ENDPOINTS-MODEL": Case("unet-v6.1", endpoints_instead, ("3d-unet-99", "Offline")),
    # system descriptions, as check reports them
    "SYS-MISSING": Case("resnet", system(cooling=None)),
    "SYS-EMPTY": Case("resnet", system(framework="")),
    "SYS-SCHEMA": Case("resnet", system(host_processor_caches=32)),
    "SYS-PLACEHOLDER": Case("resnet", system(host_storage_type="n/a")),
    "SYS-STATUS": Case("resnet", system(status="shipping")),
    "SYS-SYSTEM-TYPE": Case("resnet", system(system_type="server")),
    "SYS-COUNT": Case("resnet", system(number_of_nodes="one")),
    "SYS-COUNT-TEXT": Case("resnet", system(host_processor_core_count="32 cores")),
    "SYS-MEMORY-TYPE": Case("resnet", system(accelerator_model_name="NVIDIA H100-SXM-80GB")),
    "SYS-ID-ACCELERATORS": Case("resnet", rename_system("Sys_8xH100")),
    "SYS-ID-CHARS": Case("resnet", rename_system("My Sys")),
    "SYS-UNKNOWN-KEY": Case("resnet", system(cooolling="air")),
    "SYS-NETWORK": Case("resnet", system(is_network=False)),
    "SYS-NETWORK-FALSE": Case("resnet", network_keys),
}

# Rules `check` cannot report, and why; the test below shows it.
UNREACHABLE = {
    "SYS-UNFILLED": "a descriptor's unknown (null) facts; a tree's description has none (null is a value)",
}


def listed_severities() -> dict[str, Severity]:
    """What `submitter rules` tells users each rule is in `check`; the cases hold the checker to it."""
    result = CliRunner().invoke(cli, ["rules", "--json"])
    listing = json.loads(result.output)
    return {row["rule"]: Severity(row["severity"]["check"]) for row in listing if "check" in row["severity"]}


SEVERITY = listed_severities()


def _verdicts(report: CheckReport) -> dict[tuple[str, str], bool]:
    return {(row.benchmark, row.scenario): row.valid for row in report.results}


def _concerned(case: Case, verdicts: dict[tuple[str, str], bool]) -> list[tuple[str, str]]:
    if case.result is None:
        return []
    return list(verdicts) if case.result == ALL else [case.result]  # type: ignore[list-item]


# --- tests -------------------------------------------------------------------------------------------------


def test_every_rule_has_a_case():
    rule_sets = (TREE_RULES, RESULT_RULES, PERFORMANCE_RULES, SYSTEM_RULES)
    registered = {rule.id for rules in rule_sets for rule in rules}
    assert set(SEVERITY) == registered
    assert set(CASES) | set(UNREACHABLE) == set(SEVERITY)
    assert not set(CASES) & set(UNREACHABLE)


@pytest.mark.parametrize("name", sorted(BASES))
def test_every_base_tree_is_clean(tmp_path, name):
    tree = build(tmp_path, name)
    report = check_tree(tmp_path, tree.rules.name)
    assert [f"{f.rule} {f.path}: {f.message}" for f in report.findings] == []
    assert report.results and all(row.valid for row in report.results)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rule_reports_its_change(tmp_path, rule):
    case = CASES[rule]
    tree = build(tmp_path, case.base)
    case.change(tree)
    report = check_tree(tmp_path, tree.rules.name)
    found = [f for f in report.findings if f.rule == rule]
    assert found, sorted({f"{f.rule} {f.path}: {f.message}" for f in report.findings})
    assert {f.severity for f in found} == {SEVERITY[rule]}
    verdicts = _verdicts(report)
    concerned = _concerned(case, verdicts)
    if isinstance(case.result, tuple):
        # The finding is the concerned result's, and the change costs no other result its verdict.
        assert any(_belongs(f, tree, *case.result) for f in found), found
        assert all(valid for key, valid in verdicts.items() if key != case.result), verdicts
    if SEVERITY[rule] is Severity.ERROR:
        assert not any(verdicts[key] for key in concerned), verdicts
    else:
        assert all(verdicts[key] for key in concerned), verdicts
        strict = check_tree(tmp_path, tree.rules.name, strict=True)
        assert {f.severity for f in strict.findings if f.rule == rule} == {Severity.ERROR}


def _belongs(finding: Finding, tree: MiniTree, folder: str, scenario: str) -> bool:
    """Whether a finding is about the result: named as its own, or about a file in its folder."""
    folder_path = _result_dir(tree, folder, scenario).relative_to(tree.root).as_posix()
    result_id = f"{tree.division}/{tree.submitter}/Sys/{folder}/{scenario}"
    return finding.result == result_id or finding.path.startswith(f"{folder_path}/")


def test_strict_turns_a_warning_into_an_error_that_invalidates(tmp_path):
    tree = build(tmp_path, "resnet")
    (tree.result(*OFFLINE).accuracy_dir / "notes.txt").write_text("notes\n")
    lenient = check_tree(tmp_path, "v6.0")
    assert [(f.rule, f.severity) for f in lenient.findings] == [("STRUCT-FILESET", Severity.WARNING)]
    assert lenient.errors == 0 and _verdicts(lenient)[OFFLINE]
    strict = check_tree(tmp_path, "v6.0", strict=True)
    assert [(f.rule, f.severity) for f in strict.findings] == [("STRUCT-FILESET", Severity.ERROR)]
    assert strict.strict and strict.errors == 1
    verdicts = _verdicts(strict)
    assert not verdicts[OFFLINE] and verdicts[("resnet", "SingleStream")]


def test_sys_unfilled_is_not_reported_for_a_tree(tmp_path):
    """Null facts of a description in a tree are values: empty or of the wrong kind, never unfilled."""
    tree = build(tmp_path, "resnet")
    path = tree.system_json("Sys")
    path.write_text(
        json.dumps({**json.loads(path.read_text()), "host_processor_caches": None, "framework": None})
    )
    rules = {f.rule for f in check_tree(tmp_path, "v6.0").findings}
    assert "SYS-UNFILLED" not in rules and {"SYS-EMPTY", "SYS-SCHEMA"} <= rules


@pytest.mark.parametrize(
    ("base", "folder", "test", "text", "passes"),
    [
        ("gpt-oss", "gpt-oss-120b", "TEST07", "accuracy within 1 %: TEST PASS.\n", True),
        ("gpt-oss", "gpt-oss-120b", "TEST07", "TEST FAIL\n", False),
        ("gpt-oss", "gpt-oss-120b", "TEST09", "mean output length in range: TEST PASS.\n", True),
        ("gpt-oss", "gpt-oss-120b", "TEST09", "TEST FAIL\n", False),
        ("dlrm-v3", "dlrm-v3", "TEST08", "NE matches\n  TEST PASS  \n", True),
        ("dlrm-v3", "dlrm-v3", "TEST08", "NE matches: TEST PASS\n", False),  # TEST08 needs the line itself
    ],
)
def test_comp_pass_reads_each_verification_as_officially(tmp_path, base, folder, test, text, passes):
    tree = build(tmp_path, base)
    result = tree.result(folder, "Offline")
    audit = tree.rules.compliance[test]
    (result.audits[test] / audit.verification_file).write_text(text)
    report = check_tree(tmp_path, tree.rules.name)
    assert [f.rule for f in report.findings] == ([] if passes else ["COMP-PASS"])
    assert _verdicts(report)[(folder, "Offline")] is passes
