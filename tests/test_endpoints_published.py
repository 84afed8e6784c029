"""NVIDIA's published v6.1 endpoints results (deepseek-r1 and qwen3-vl-235b-a22b, all three scenarios, copied
byte for byte into tests/fixtures/endpoints/v6.1): the figure and unit of the published summary, the round
from config.yaml's seeds, accuracy from accuracy_results.json, the latency headroom, and no audit demanded
that endpoints results do not have."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from one_judge import assert_review_agrees

from submitter.check.checker import check_tree
from submitter.report import build_review
from submitter.report.model import Status

PUBLISHED = Path(__file__).resolve().parent / "fixtures" / "endpoints" / "v6.1"
SYSTEM = "VR-NVL72_VR-288GB_aarch64x72_TRT"
BENCHMARKS = ("deepseek-r1", "qwen3-vl-235b-a22b")


@pytest.fixture
def published_tree(tmp_path: Path) -> Path:
    """closed/NVIDIA as published: the six results and the system description."""
    submitter = tmp_path / "closed" / "NVIDIA"
    for benchmark in BENCHMARKS:
        shutil.copytree(PUBLISHED / SYSTEM / benchmark, submitter / "results" / SYSTEM / benchmark)
    shutil.copytree(PUBLISHED / SYSTEM / "systems", submitter / "systems")
    return tmp_path


def _published_rows() -> dict[tuple[str, str], dict[str, str]]:
    with (PUBLISHED / "summary_excerpt.csv").open(newline="", encoding="utf-8") as table:
        return {(row["Model"], row["Scenario"]): row for row in csv.DictReader(table)}


def test_the_round_is_detected_from_the_seeds_in_config_yaml(published_tree: Path) -> None:
    report = check_tree(published_tree)
    assert report.detection is not None and report.rules.name == "v6.1"
    assert report.detection.reason.startswith("6 result(s) carry the v6.1 LoadGen seeds")


def test_every_result_has_the_published_figure_and_unit(published_tree: Path) -> None:
    """deepseek-r1 in tokens/s in every scenario (its `tps`; the official checker's pinned commit gives
    samples/s there), qwen3-vl-235b-a22b in samples/s (its `qps`), as summary.csv has them."""
    published = _published_rows()
    results = check_tree(published_tree).results
    assert len(results) == 6
    for result in results:
        row = published[(result.benchmark, result.scenario)]
        assert result.metric == pytest.approx(float(row["Result"]), rel=1e-12), row["Scenario"]
        assert result.units == row["Units"]


def test_the_review_reads_endpoints_accuracy_latency_and_demands_no_loadgen_audit(
    published_tree: Path,
) -> None:
    published = _published_rows()
    review = build_review(published_tree)
    by_result = {(r.benchmark, r.scenario): r for r in review.results}
    for key, result in by_result.items():
        (margin,) = result.headroom.accuracy  # from accuracy_results.json, not accuracy.txt
        assert margin.value == pytest.approx(float(published[key]["Accuracy"]))
        assert result.headroom.test06 == ()  # endpoints results carry no TEST06
        assert not any("accuracy.txt" in note for note in result.headroom.notes)
        assert not any(finding.rule.startswith("COMP-") for finding in result.findings)
    # qwen3-vl Interactive ran at a p99 of 1,483.7 ms against its 1,500 ms limit: close, so a warning.
    (latency,) = by_result[("qwen3-vl-235b-a22b", "Interactive")].headroom.latency
    assert latency.value_ms == pytest.approx(1483.688717)
    assert (latency.limit_ms, latency.status) == (1500.0, Status.WARN)
    ttft, tpot = by_result[("deepseek-r1", "Server")].headroom.latency
    assert (ttft.name, ttft.value_ms) == ("TTFT", pytest.approx(304.652135))
    assert (tpot.name, tpot.value_ms) == ("TPOT", pytest.approx(48.2240732417795))
    assert by_result[("deepseek-r1", "Offline")].headroom.latency == ()
    assert assert_review_agrees(published_tree) == 6
