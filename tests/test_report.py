"""`submitter report`: review.md and a self-contained review.html, with headroom against the round's limits.

The tree under test is staged from real (short) LoadGen runs; the page is opened in headless Chromium and
the test looks at the screenshot it takes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from treecopy import H100, L40S, copy_tree, set_log_value

from submitter.report import build_review, render_html, render_markdown, write_review
from submitter.report.headroom import (
    accuracy_headroom,
    accuracy_margin,
    judge_test06,
    latency_share,
    margin_percent,
    window_position,
)
from submitter.report.model import (
    Headroom,
    Percentile,
    PerformanceFacts,
    ResultReview,
    Review,
    Status,
    SystemReview,
)
from submitter.report.plots import STATUS_COLOURS, Bar, latency_chart, nice_ticks, throughput_chart
from submitter.rounds.models import AccuracyBound, Scenario
from submitter.rounds.registry import load_round
from submitter.stage.selection import Eligibility
from submitter.stage.staging import StageRequest, stage
from submitter.systems.descriptor import SystemDescriptor

LLAMA = load_round("v6.1").benchmark("llama3.1-8b")
TEST06 = load_round("v6.1").compliance["TEST06"]
DEMO_SYSTEM = "Demo_1xSynthetic_CPU"
# What a tree staged from --smoke runs fails on (tests/test_stage.py says why), and nothing else.
# What a --smoke rehearsal in the open division lacks (the Offline samples-per-query minimum is the closed
# division's, as officially).
TRIAL_RULES = {"PERF-SAMPLE-COUNT", "PERF-MIN-DURATION", "ACC-DATASET"}
SCREEN = (1280, 2000)


def bound(metric: str, *, upper: bool = False) -> AccuracyBound:
    bounds = LLAMA.accuracy.upper_limits if upper else LLAMA.accuracy.targets
    return next(b for b in bounds if b.metric == metric)


@pytest.fixture(scope="module")
def demo_tree(tmp_path_factory: pytest.TempPathFactory, demo_runs: tuple[dict[str, Any], Path]) -> Path:
    """A v6.1 open-division tree staged from the nine short runs of the demo system."""
    folder = tmp_path_factory.mktemp("report")
    descriptor, runs_root = demo_runs
    stage(
        StageRequest(
            systems=(SystemDescriptor.model_validate(descriptor),),
            submitter="Demo",
            division="open",
            round="v6.1",
            out=folder / "tree",
            runs_root=runs_root,
            accept=Eligibility(not_submittable=True, trials=True),
        )
    )
    return folder / "tree"


# --- headroom math -------------------------------------------------------------------------------------


def test_a_value_exactly_at_a_threshold_has_zero_margin_and_passes_with_a_warning() -> None:
    rouge1 = bound("ROUGE1")
    at = accuracy_margin(rouge1, rouge1.threshold, upper=False)
    assert at.margin_percent == 0.0
    assert at.status is Status.WARN  # the checker accepts it (>=), but there is no room left
    # Below the target: FAIL where the check failed it, a warning where no rule applies (open division).
    below = rouge1.threshold - 1e-4
    assert accuracy_margin(rouge1, below, upper=False, failed=True).status is Status.FAIL
    assert accuracy_margin(rouge1, below, upper=False).status is Status.WARN

    # The reference itself is 1/0.99 - 1 above a 99 % target, and passes plainly.
    reference = accuracy_margin(rouge1, rouge1.reference, upper=False)
    assert reference.margin_percent == pytest.approx((1 / 0.99 - 1) * 100)
    assert reference.status is Status.PASS
    # Past half of the 1 % the round lets ROUGE lose, a passing result warns.
    assert accuracy_margin(rouge1, rouge1.reference * 0.994, upper=False).status is Status.WARN
    assert accuracy_margin(rouge1, rouge1.reference * 0.996, upper=False).status is Status.PASS


def test_an_upper_limit_margin_is_the_room_below_it() -> None:
    limit = bound("GEN_LEN", upper=True)
    assert accuracy_margin(limit, limit.threshold, upper=True).margin_percent == 0.0
    above = accuracy_margin(limit, limit.threshold * 1.01, upper=True, failed=True)
    assert above.margin_percent == pytest.approx(-1.0)
    assert above.status is Status.FAIL
    assert margin_percent(90.0, 100.0, upper=True) == pytest.approx(10.0)
    assert margin_percent(110.0, 100.0) == pytest.approx(10.0)


def test_gen_len_position_in_its_90_to_110_percent_window() -> None:
    lower, upper = bound("GEN_LEN"), bound("GEN_LEN", upper=True)
    reference = lower.reference

    def at(share: float) -> Any:
        window = window_position(reference * share, lower, upper)
        assert window is not None
        return window

    assert at(0.9).position_percent == pytest.approx(0.0, abs=1e-9)
    assert at(1.0).position_percent == pytest.approx(50.0)
    assert at(1.0).reference_percent == pytest.approx(50.0)
    assert at(1.1).position_percent == pytest.approx(100.0)
    assert at(0.96).position_percent == pytest.approx(30.0)
    assert at(1.0).status is Status.PASS and at(0.96).status is Status.PASS
    assert at(0.94).status is Status.WARN and at(1.06).status is Status.WARN  # more than half way out
    assert at(0.89).status is Status.WARN and at(1.11).status is Status.WARN  # outside, no rule broken
    failed = window_position(reference * 1.11, lower, upper, failed=True)
    assert failed is not None and failed.status is Status.FAIL


def test_p99_ttft_of_1000_ms_against_2000_ms_is_half_the_limit() -> None:
    share = latency_share("TTFT", 1000.0, 2000.0)
    assert share.share_percent == pytest.approx(50.0)
    assert share.status is Status.PASS
    assert latency_share("TPOT", 96.0, 100.0).status is Status.WARN
    # At the limit the checker fails it (it wants it strictly below): FAIL comes from its finding.
    assert latency_share("TPOT", 100.0, 100.0, failed=True).status is Status.FAIL
    assert latency_share("TTFT", None, 500.0).status is Status.NOT_JUDGED  # not in the log


def test_gen_len_of_a_trial_is_scaled_to_the_dataset_before_it_is_judged() -> None:
    values = {"ROUGE1": "40.0", "GEN_LEN": "39144"}
    margins, windows = accuracy_headroom(
        values, LLAMA.accuracy, samples=64, dataset_size=13368, failed=frozenset({"ROUGE2"})
    )
    scaled = 39144 * 13368 / 64
    gen_len = next(m for m in margins if m.metric == "GEN_LEN" and m.bound == "target")
    assert gen_len.value == pytest.approx(scaled)
    assert gen_len.note == "scaled from 64 to 13368 samples"
    assert windows[0].value == pytest.approx(scaled)
    rouge2 = next(m for m in margins if m.metric == "ROUGE2")
    assert rouge2.value is None and rouge2.status is Status.FAIL and "not found" in rouge2.note


def test_test06_verdicts_follow_the_round_and_only_offline_may_skip_the_first_token() -> None:
    skipped = "First token check pass: Skipped\nEOS check pass: True\nSample length check pass: True\n"
    offline = judge_test06(skipped, TEST06, Scenario.OFFLINE)
    assert [(c.check, c.status) for c in offline] == [
        ("First token check pass", Status.PASS),
        ("EOS check pass", Status.PASS),
        ("Sample length check pass", Status.PASS),
    ]
    assert judge_test06(skipped, TEST06, Scenario.SERVER, failed=True)[0].status is Status.FAIL
    broken_text = "First token check pass: True\nEOS check pass: False\n"
    broken = judge_test06(broken_text, TEST06, Scenario.SERVER, failed=True)
    assert [c.status for c in broken] == [Status.PASS, Status.FAIL, Status.FAIL]
    assert broken[2].found is None
    assert judge_test06(None, TEST06, Scenario.SERVER, failed=True)[0].status is Status.FAIL
    # Where the check found the audit in order (the open division does not audit), a warning at most.
    assert judge_test06(broken_text, TEST06, Scenario.SERVER)[1].status is Status.WARN


def test_charts_scale_bars_to_one_axis_and_draw_the_limit() -> None:
    assert nice_ticks(5777.08) == [0, 2000, 4000, 6000]
    assert nice_ticks(0.3) == [0.0, 0.1, 0.2, 0.3]
    chart = throughput_chart(
        [Bar("a", "x", 1500.0, Status.PASS), Bar("b", "y", 3000.0, Status.FAIL)], "Tokens/s"
    )
    widths = [float(width) for width in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', chart)]
    assert widths[1] == pytest.approx(2 * widths[0])
    assert STATUS_COLOURS[Status.PASS] in chart and STATUS_COLOURS[Status.FAIL] in chart
    ttft = [Percentile(percentile=p, ms=ms) for p, ms in ((50.0, 100.0), (99.0, 1000.0), (99.9, 1500.0))]
    latency = latency_chart(ttft, (), {"TTFT": (2000.0, Status.PASS)}, "title")
    assert "limit" in latency and "2,000 ms" in latency and "stroke-dasharray" in latency
    assert "p99.9" in latency and "not in the performance log" in latency  # no TPOT percentiles


# --- the review of real trees --------------------------------------------------------------------------


def test_review_of_a_tree_staged_from_real_runs(demo_tree: Path) -> None:
    review = build_review(demo_tree)
    assert review.round == "v6.1" and review.detected is not None
    [system] = review.systems
    assert system.system == DEMO_SYSTEM and system.description is not None
    assert [r.scenario for r in system.results] == ["Offline", "Server", "Interactive"]
    for result in system.results:
        # Staged --smoke runs: invalid for exactly the trial rules, yet every headroom item is computed.
        assert not result.valid and result.status is Status.FAIL
        assert {f.rule for f in result.findings} <= TRIAL_RULES
        assert result.metric is not None and result.metric > 0 and result.units == "Tokens/s"
        assert {m.metric for m in result.headroom.accuracy} == {
            "ROUGE1", "ROUGE2", "ROUGEL", "ROUGELSUM", "GEN_LEN",
        }  # fmt: skip
        assert all(m.status is Status.PASS for m in result.headroom.accuracy)  # the demo model's answers
        [window] = result.headroom.windows
        assert window.note == "scaled from 64 to 13368 samples"
        assert [c.status for c in result.headroom.test06] == [Status.PASS] * 3
    offline, server, interactive = system.results
    assert offline.headroom.latency == ()
    assert [(s.name, s.limit_ms) for s in server.headroom.latency] == [("TTFT", 2000), ("TPOT", 100)]
    # Interactive is judged by the Interactive limits, as `submitter check` does.
    assert [(s.name, s.limit_ms) for s in interactive.headroom.latency] == [("TTFT", 500), ("TPOT", 30)]
    assert interactive.performance is not None
    assert [p.percentile for p in interactive.performance.ttft][:3] == [50.0, 90.0, 95.0]
    assert {f.rule for f in review.findings} == TRIAL_RULES


def test_report_writes_both_documents_and_exits_0_on_a_tree_that_fails_the_check(
    demo_tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "review"
    completed = run_cli("report", str(demo_tree), "--out", str(out), cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "round v6.1 detected" in completed.stderr
    assert "0 of 3 result(s) valid" in completed.stderr
    markdown = (out / "review.md").read_text(encoding="utf-8")
    assert f"## {DEMO_SYSTEM}" in markdown
    assert re.search(
        rf"\| {DEMO_SYSTEM} \| llama3\.1-8b \| Interactive \| [\d,.]+ \| Tokens/s \| \*\*INVALID\*\*",
        markdown,
    )
    assert "| TTFT | " in markdown and "| 500 ms |" in markdown
    assert "PERF-MIN-DURATION" in markdown
    html = (out / "review.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 3
    assert not list(out.glob(".*.tmp"))  # written atomically, nothing left behind


def test_report_json_is_the_review_data(demo_tree: Path, tmp_path: Path) -> None:
    completed = run_cli("report", str(demo_tree), "--out", str(tmp_path / "r"), "--json", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    assert document["schema_version"] == 1 and document["round"] == "v6.1"
    assert document["counts"]["results"] == 3 and document["counts"]["invalid"] == 3
    result = document["systems"][0]["results"][1]
    assert result["scenario"] == "Server" and result["status"] == "fail"
    assert {share["name"]: share["limit_ms"] for share in result["headroom"]["latency"]} == {
        "TTFT": 2000,
        "TPOT": 100,
    }


def test_report_round_option_and_usage_errors(demo_tree: Path, tmp_path: Path) -> None:
    named = run_cli("report", str(demo_tree), "--out", str(tmp_path / "r"), "--round", "v6.0", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert "detected" not in named.stderr
    assert "Submission review: MLPerf Inference v6.0" in (tmp_path / "r" / "review.md").read_text()

    missing = run_cli("report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert missing.returncode == 2
    assert "no such directory" in missing.stderr and "Traceback" not in missing.stderr
    no_out = run_cli("report", str(demo_tree), cwd=tmp_path)
    assert no_out.returncode == 0, no_out.stderr  # --out defaults to work/review
    assert (tmp_path / "work" / "review" / "review.md").is_file()
    (tmp_path / "file").write_text("x")
    onto_file = run_cli("report", str(demo_tree), "--out", str(tmp_path / "file"), cwd=tmp_path)
    assert onto_file.returncode == 2 and "is a file" in onto_file.stderr


def test_redhat_v5_1_review_shows_the_published_results_and_their_margins(
    redhat_tree: Path, tmp_path: Path
) -> None:
    written = write_review(redhat_tree, tmp_path / "review")
    review = written.review
    assert review.round == "v5.1"
    results = {(r.system, r.scenario): r for r in review.results}
    h100 = results[("XE8640_4xH100_vLLM", "Offline")]
    assert h100.metric == 5777.08 and h100.valid
    v51 = load_round("v5.1").benchmark("llama3.1-8b").accuracy
    rouge1 = next(m for m in h100.headroom.accuracy if m.metric == "ROUGE1")
    expected_threshold = next(b for b in v51.targets if b.metric == "ROUGE1").threshold
    assert rouge1.threshold == expected_threshold
    assert rouge1.margin_percent == pytest.approx((38.7898 - expected_threshold) / expected_threshold * 100)
    assert {m.metric for m in h100.headroom.accuracy if m.status is Status.PASS} >= {"ROUGE1", "ROUGELSUM"}

    # The published H100 Server run: p99 TTFT 1911.17 ms of 2000 ms, so close that it warns.
    ttft = next(s for s in results[("XE8640_4xH100_vLLM", "Server")].headroom.latency if s.name == "TTFT")
    assert ttft.share_percent == pytest.approx(1911.170364 / 2000 * 100)
    assert ttft.status is Status.WARN

    h100_system = next(s for s in review.systems if s.system == "XE8640_4xH100_vLLM")
    assert {"SYS-MEMORY-TYPE", "SYS-ID-ACCELERATORS", "SYS-PLACEHOLDER"} <= {
        f.rule for f in h100_system.findings
    }
    assert h100_system.status is Status.WARN

    markdown = written.markdown.read_text(encoding="utf-8")
    html = written.html.read_text(encoding="utf-8")
    for document in (markdown, html):
        assert "5,777.08" in document and "SYS-MEMORY-TYPE" in document


def test_a_broken_tree_is_reviewed_not_crashed_on(redhat_tree: Path, tmp_path: Path) -> None:
    root = copy_tree(redhat_tree, tmp_path / "tree")
    (root / H100 / "Offline/performance/run_1/mlperf_log_detail.txt").unlink()
    (root / H100 / "Server/accuracy/accuracy.txt").write_text("no metrics here\n")
    (
        root / "closed/RedHat/compliance/XE8640_4xH100_vLLM/llama3.1-8b/Server/TEST06/verify_accuracy.txt"
    ).write_text("First token check pass: False\nEOS check pass: True\n")
    (root / "closed/RedHat/systems/IBM_Cloud_gx3-48x240x2l40s_vLLM.json").write_text("{not json")
    set_log_value(
        root / L40S / "Server/performance/run_1/mlperf_log_detail.txt",
        "result_first_token_99.00_percentile_latency_ns",
        2_500_000_000,
    )
    (root / "closed/RedHat/results/XE8640_4xH100_vLLM/unknown-bench/Offline").mkdir(parents=True)

    completed = run_cli("report", str(root), "--out", str(tmp_path / "review"), cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    review = build_review(root)
    results = {(r.system, r.benchmark, r.scenario): r for r in review.results}
    h100, l40s = "XE8640_4xH100_vLLM", "IBM_Cloud_gx3-48x240x2l40s_vLLM"
    offline = results[(h100, "llama3.1-8b", "Offline")]
    assert offline.metric is None and offline.performance is None and not offline.valid
    server = results[(h100, "llama3.1-8b", "Server")]
    assert {m.status for m in server.headroom.accuracy} == {Status.FAIL}
    assert [(c.found, c.status) for c in server.headroom.test06] == [
        ("False", Status.FAIL), ("True", Status.PASS), (None, Status.FAIL),
    ]  # fmt: skip
    ttft = results[(l40s, "llama3.1-8b", "Server")].headroom.latency[0]
    assert ttft.share_percent == pytest.approx(125.0) and ttft.status is Status.FAIL
    unknown = results[(h100, "unknown-bench", "Offline")]
    assert unknown.headroom.status is Status.NOT_JUDGED and unknown.headroom.notes
    l40s_system = next(s for s in review.systems if s.system == l40s)
    assert l40s_system.description is None and "SYS-FILE" in {f.rule for f in l40s_system.findings}
    html = (tmp_path / "review" / "review.html").read_text(encoding="utf-8")
    assert "through its system description" in html  # why the L40S Offline result is invalid


def _tiny_review(system_name: str) -> Review:
    """A review built by hand: the renderers need no tree."""
    result = ResultReview(
        division="closed",
        submitter="Org",
        system=system_name,
        benchmark="llama3.1-8b",
        scenario="Server",
        metric=1234.5,
        units="Tokens/s",
        valid=True,
        performance=PerformanceFacts(
            validity="VALID",
            logged_scenario="Server",
            samples_per_second=9.5,
            ttft=(Percentile(percentile=50.0, ms=100.0), Percentile(percentile=99.0, ms=1000.0)),
            tpot=(Percentile(percentile=99.0, ms=40.0),),
        ),
        accuracy=None,
        headroom=Headroom(
            latency=(latency_share("TTFT", 1000.0, 2000.0), latency_share("TPOT", 40.0, 100.0))
        ),
    )
    system = SystemReview(
        division="closed",
        submitter="Org",
        system=system_name,
        path="closed/Org/systems/x.json",
        description={"system_name": "<script>alert('x')</script>", "hw_notes": "a | b"},
        results=(result,),
    )
    return Review(tree="tree <&>", round="v6.1", detected=None, systems=(system,))


def test_html_escapes_every_value_and_loads_nothing_from_anywhere() -> None:
    html = render_html(_tiny_review('GPU<img src="x" onerror="boom">'))
    assert "<script" not in html and "&lt;script&gt;" in html
    assert "<img" not in html and "&lt;img src=&#34;x&#34;" in html
    assert "tree &lt;&amp;&gt;" in html
    _assert_self_contained(html)
    markdown = render_markdown(_tiny_review("GPU"))
    assert "| hw_notes | a \\| b |" in markdown  # a pipe cannot break the table
    assert "| TTFT | 1,000 ms | 2,000 ms | 50.0 % | pass |" in markdown


class _Fetches(HTMLParser):
    """Every tag and attribute by which a browser would load something."""

    LOADING_TAGS = frozenset(
        {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "source"}
    )

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.LOADING_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name in ("src", "href", "srcset", "poster", "data") or "url(" in (value or ""):
                self.found.append(f"<{tag} {name}={value!r}>")


def _assert_self_contained(html: str) -> None:
    """Nothing for a browser to fetch: no scripts, stylesheets, images, fonts or frames, no URL at all."""
    fetches = _Fetches()
    fetches.feed(html)
    assert fetches.found == []
    assert not re.search(r"https?://", html), "a URL in the page"
    assert "@import" not in html and "url(" not in html


# --- the page in a real browser --------------------------------------------------------------------------


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary is not None
    return subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _pixels_near(colours: list[tuple[int, tuple[int, int, int]]], hex_colour: str, tolerance: int = 6) -> int:
    target = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return sum(
        count
        for count, rgb in colours
        if all(abs(channel - wanted) <= tolerance for channel, wanted in zip(rgb, target, strict=True))
    )


def test_review_page_renders_in_headless_chromium_and_the_screenshot_shows_it(
    demo_tree: Path, tmp_path: Path
) -> None:
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    from PIL import Image

    written = write_review(demo_tree, tmp_path / "review")
    html = written.html.read_text(encoding="utf-8")
    _assert_self_contained(html)
    url = written.html.resolve().as_uri()

    dom = _chromium("--dump-dom", url, profile=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<table class="results">' in dom.stdout
    assert dom.stdout.count("<svg") >= 1 + 2 + 3 * 2  # throughput, two latency charts, the gauges
    assert "Throughput per result" in dom.stdout and "TTFT percentiles" in dom.stdout
    assert DEMO_SYSTEM in dom.stdout

    screenshot = tmp_path / "review.png"
    shot = _chromium(
        f"--screenshot={screenshot}",
        f"--window-size={SCREEN[0]},{SCREEN[1]}",
        url,
        profile=tmp_path / "profile",
    )
    assert shot.returncode == 0 and screenshot.is_file(), shot.stderr[-2000:]
    with Image.open(screenshot) as image:
        assert image.size == SCREEN
        rgb = image.convert("RGB")
    colours = rgb.getcolors(maxcolors=SCREEN[0] * SCREEN[1])
    assert colours is not None
    white = _pixels_near(colours, "#ffffff", tolerance=0)
    assert len(colours) > 200, "the page looks blank: too few colours"
    assert white < 0.95 * SCREEN[0] * SCREEN[1], "the page is almost all white"
    # The trial results fail the check (red) while their headroom passes (green): both must be seen.
    assert _pixels_near(colours, STATUS_COLOURS[Status.FAIL]) > 2000
    assert _pixels_near(colours, STATUS_COLOURS[Status.PASS]) > 2000
    # The top of the page is the title and the summary, not an error page: dark text near the top left.
    top_left = rgb.crop((0, 0, 600, 120)).getcolors(maxcolors=600 * 120) or []
    assert _pixels_near(top_left, "#1f2328", tolerance=40) > 200
