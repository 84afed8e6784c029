"""`submitter check` for CI: --select/--ignore, --quiet, --format text|json|github|junit|sarif, --output, and
the configuration file (submitter.toml, or [tool.submitter] in pyproject.toml).

Every option runs on a minimal tree (tests/minitree.py) that CI has: a v6.0 resnet tree with one error
(PERF-SEED in the Offline run, with a line) and two warnings (HYG-NAME on a file whose name holds `:`, `,`,
`%` and spaces, which the CI formats must escape; SYS-PLACEHOLDER in the system description). The tree
lies in `repo/submission` and the command runs in `repo`, as in a CI job, so that paths from the current
directory differ from paths in the tree. The same options run on Red Hat's published tree where
../shared is present.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st
from junitparser import Failure, JUnitXml, Skipped
from minitree import MiniTree, build_tree
from test_check_rules import CASES, build
from treecopy import edit_json, set_log_value

from submitter.check.checker import check_tree
from submitter.check.formats import FORMATS, formatter
from submitter.check.formats.base import build_output
from submitter.check.formats.github import escape_data, escape_property
from submitter.check.selection import (
    ResultScope,
    ScopeIndex,
    SelectorLayer,
    closest_selectors,
    concerns,
    is_selected,
    parse_selectors,
    split_findings,
    unknown_selectors,
)
from submitter.cli.check import check_rules
from submitter.rule_registry import Finding, Severity

SARIF_SCHEMA = Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
SARIF_SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"  # its README
EDGE = ("SingleStream", "MultiStream", "Offline")
SEED_KEY = "effective_schedule_rng_seed"
ODD_NAME = "notes: 100%, v2.md"  # whitespace: HYG-NAME; `:` `,` `%`: escaped in GitHub properties
TREE_ARG = "submission/closed/Org"  # PATH as given from the repository's root
OFFLINE_ID = "closed/Org/Sys/resnet/Offline"
RULES = check_rules()


# --- the trees ----------------------------------------------------------------------------------------------


def broken_tree(root: Path) -> MiniTree:
    """A valid v6.0 resnet tree with one error and two warnings."""
    tree = build_tree(root, "v6.0", [("Sys", "resnet", scenario) for scenario in EDGE], system_type="edge")
    offline = tree.result("resnet", "Offline")
    set_log_value(offline.performance_log, SEED_KEY, offline.performance[SEED_KEY] + 1)
    (tree.submitter_dir / "documentation" / ODD_NAME).write_text("notes\n")
    edit_json(tree.system_json("Sys"), host_storage_type="n/a")
    return tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The CI job's working directory, with the broken tree under submission/."""
    broken_tree(tmp_path / "repo" / "submission")
    return tmp_path / "repo"


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`submitter check` on the broken tree from the job's directory, with no configuration file."""
    return run_cli("check", TREE_ARG, "--round", "v6.0", "--isolated", *args, cwd=repo)


# A text finding line: "path(:line): RULE-ID severity ..."
FINDING_LINE = re.compile(r": ([A-Z]+(?:-[A-Z0-9]+)+) (?:error|warning)")


def finding_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if FINDING_LINE.search(line)]


def rules_in(stdout: str) -> set[str]:
    return {match.group(1) for line in stdout.splitlines() if (match := FINDING_LINE.search(line))}


# --- selection: pure functions ------------------------------------------------------------------------------


def test_selectors_split_on_commas_and_share_one_spelling():
    assert parse_selectors(["sys, HYG-", "perf-seed,,SYS"]) == ("SYS", "HYG", "PERF-SEED")


def test_a_prefix_matches_whole_words_of_ids():
    only = [SelectorLayer("test", ("PERF-SEED",))]
    assert is_selected("PERF-SEED", only)
    assert not is_selected("PERF-SEEDS", only) and not is_selected("PERF-SAMPLE-COUNT", only)
    assert is_selected("SYS-STATUS", [SelectorLayer("test", ("SYS",))])
    assert not is_selected("SYSX-STATUS", [SelectorLayer("test", ("SYS",))])
    assert "PERF-S" in unknown_selectors(["PERF-S"], RULES)  # a prefix ends at a word's end
    assert unknown_selectors(["PERF", "HYG", "PERF-LOADGEN", "ALL", "SYS-STATUS"], RULES) == []


def test_the_more_specific_selector_wins_and_ignore_wins_a_tie():
    assert not is_selected("PERF-SEED", [SelectorLayer("test", ("PERF",), ("PERF-SEED",))])
    assert is_selected("PERF-LOG", [SelectorLayer("test", ("PERF",), ("PERF-SEED",))])
    assert is_selected("PERF-SEED", [SelectorLayer("test", ("PERF-SEED",), ("PERF",))])
    assert not is_selected("PERF-LOG", [SelectorLayer("test", ("PERF-SEED",), ("PERF",))])
    assert not is_selected("PERF-SEED", [SelectorLayer("test", ("PERF-SEED",), ("PERF-SEED",))])
    assert not is_selected("HYG-NAME", [SelectorLayer("test", ("ALL",), ("HYG",))])


def test_a_later_layer_that_selects_starts_afresh_and_one_that_ignores_narrows():
    config = SelectorLayer("file", None, ("PERF-SEED",))
    assert not is_selected("PERF-SEED", [config])
    assert is_selected("PERF-SEED", [config, SelectorLayer("command line", ("PERF",))])
    narrowed = [SelectorLayer("file", ("PERF",)), SelectorLayer("command line", None, ("PERF-LOG",))]
    assert is_selected("PERF-SEED", narrowed) and not is_selected("PERF-LOG", narrowed)
    assert not is_selected("SYS-STATUS", narrowed)


def test_an_unknown_selector_gets_the_closest_ids():
    assert closest_selectors("PERF-SEEDS", RULES)[0] == "PERF-SEED"
    assert closest_selectors("HYG-NAMES", RULES)[0] == "HYG-NAME"


def test_split_findings_keeps_the_order_and_loses_nothing():
    findings = [
        Finding(rule=rule, severity=Severity.ERROR, path="p", message="m", fix="f")
        for rule in ("SYS-STATUS", "PERF-SEED", "HYG-NAME", "PERF-LOG")
    ]
    reported, hidden = split_findings(findings, [SelectorLayer("test", ("PERF",), ("PERF-LOG",))])
    assert [f.rule for f in reported] == ["PERF-SEED"]
    assert [f.rule for f in hidden] == ["SYS-STATUS", "HYG-NAME", "PERF-LOG"]


_SEGMENTS = st.lists(st.sampled_from(["closed", "Org", "results", "Sys", "a", "b"]), min_size=1, max_size=5)
_PATHS = _SEGMENTS.map("/".join)
_IDS = st.sampled_from(["r1", "r2", "r3"])


@given(
    scopes=st.lists(
        st.builds(ResultScope, _IDS, _PATHS, st.tuples(_PATHS, _PATHS), _PATHS), min_size=1, max_size=4
    ),
    paths=st.lists(st.tuples(_PATHS, st.none() | _IDS), min_size=1, max_size=6),
)
def test_the_scope_index_agrees_with_concerns(scopes, paths):
    index = ScopeIndex(scopes)
    for path, result in paths:
        finding = Finding(rule="X-Y", severity=Severity.ERROR, path=path, result=result, message="m", fix="f")
        assert index.concerned(finding) == {i for i, scope in enumerate(scopes) if concerns(finding, scope)}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_the_findings_that_concern_a_result_are_those_that_decide_its_verdict(tmp_path, rule):
    """One broken minitree per rule, strict so that every finding is an error that counts: a result is
    valid exactly when none concerns it (summarise's judgement), and with every rule ignored, an invalid
    result names the rules that make it so."""
    case = CASES[rule]
    tree = build(tmp_path, case.base)
    case.change(tree)
    report = check_tree(tmp_path, tree.rules.name, strict=True)
    output = build_output(report, [], RULES, root=".", tree_argument=".")
    for result in output.results:
        assert result.row.valid == (result.row.metric is not None and not result.errors), result.scope.id
    hidden = build_output(report, [SelectorLayer("test", None, ("ALL",))], RULES, root=".", tree_argument=".")
    assert not hidden.reported
    for result, before in zip(hidden.results, output.results, strict=True):
        assert set(result.ignored_rules) == {f.rule for f in before.errors}


@pytest.mark.parametrize("folder", ["measurements_dir", "compliance_dir", "performance_dir"])
def test_a_tree_finding_in_a_results_own_folder_concerns_it(tmp_path, folder):
    """v5.1 keeps measurements/ and compliance/ beside results/: a hygiene finding (no result named) in
    one of them invalidates the result under --strict, and concerns it alone."""
    tree = build_tree(tmp_path, "v5.1", [("Sys", "resnet", s) for s in EDGE], system_type="edge")
    (getattr(tree.result("resnet", "Offline"), folder) / ".notes").write_text("notes\n")
    report = check_tree(tmp_path, "v5.1", strict=True)
    output = build_output(report, [], RULES, root=".", tree_argument=".")
    concerned = {result.row.scenario: [f.rule for f in result.errors] for result in output.results}
    assert "HYG-NAME" in concerned.pop("Offline")  # (beside the logs, STRUCT-FILESET too)
    assert concerned == {"SingleStream": [], "MultiStream": []}
    assert {result.row.scenario for result in output.results if not result.row.valid} == {"Offline"}
    assert not output.tree_findings


def test_the_rule_catalog_is_what_submitter_rules_lists(tmp_path):
    listing = json.loads(run_cli("rules", "--json", cwd=tmp_path).stdout)
    listed = {row["rule"]: row["severity"]["check"] for row in listing if "check" in row["severity"]}
    assert {rule_id: str(info.severity) for rule_id, info in RULES.items()} == listed


# --- --select / --ignore ------------------------------------------------------------------------------------


def test_without_options_every_finding_is_reported_and_the_error_fails(repo):
    result = check(repo)
    assert result.returncode == 1, result.stderr
    assert rules_in(result.stdout) == {"PERF-SEED", "HYG-NAME", "SYS-PLACEHOLDER"}
    assert "1 error(s), 2 warning(s)" in result.stdout


def test_ignore_drops_the_finding_and_the_exit_code_but_not_the_verdict(repo):
    result = check(repo, "--ignore", "PERF-SEED", "--csv", "summary.csv")
    assert result.returncode == 0, result.stdout
    assert rules_in(result.stdout) == {"HYG-NAME", "SYS-PLACEHOLDER"}
    assert "0 error(s), 2 warning(s); 1 finding(s) of ignored rules not shown" in result.stdout
    offline = next(line for line in result.stdout.splitlines() if re.match(r"Sys\s+resnet\s+Offline", line))
    assert offline.endswith("INVALID (ignored rules: PERF-SEED)")
    # The official summary keeps the verdict: the Offline result is not in it, with or without --ignore.
    summary = (repo / "summary.csv").read_text()
    assert ",".join(f'"{s}"' for s in ("Org", "available")) in summary
    assert '"Offline"' not in summary and '"SingleStream"' in summary
    assert check(repo, "--csv", "all.csv").returncode == 1
    assert (repo / "all.csv").read_text() == summary


def test_select_reports_only_the_selected_rules(repo):
    result = check(repo, "--select", "HYG")
    assert result.returncode == 0 and rules_in(result.stdout) == {"HYG-NAME"}
    strict = check(repo, "--select", "HYG", "--strict")
    assert strict.returncode == 1 and rules_in(strict.stdout) == {"HYG-NAME"}
    assert "HYG-NAME error" in strict.stdout


def test_select_and_ignore_repeat_and_take_comma_separated_lists(repo):
    result = check(repo, "--select", "sys,HYG-", "--select", "PERF", "--ignore", "SYS-PLACEHOLDER,perf-seed")
    assert result.returncode == 0 and rules_in(result.stdout) == {"HYG-NAME"}
    assert rules_in(check(repo, "--select", "SYS", "--select", "PERF-SEED").stdout) == {
        "SYS-PLACEHOLDER",
        "PERF-SEED",
    }


@pytest.mark.parametrize(
    ("option", "value", "closest"),
    [("--ignore", "PERF-SEEDS", "PERF-SEED"), ("--select", "HYG-NAMES", "HYG-NAME")],
)
def test_an_unknown_rule_id_is_a_usage_error_naming_the_closest(repo, option, value, closest):
    result = check(repo, option, value)
    assert result.returncode == 2 and result.stdout == ""
    assert option in result.stderr and repr(value) in result.stderr and closest in result.stderr


# --- --quiet ------------------------------------------------------------------------------------------------


def test_quiet_prints_the_findings_and_the_count_only(repo):
    result = run_cli("check", TREE_ARG, "--isolated", "--quiet", cwd=repo)  # the round detected, said nowhere
    assert result.returncode == 1 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 4 and lines[-1] == "1 error(s), 2 warning(s)"
    assert "verdict" not in result.stdout
    assert "round v6.0 detected" in run_cli("check", TREE_ARG, "--isolated", cwd=repo).stderr


def test_quiet_with_nothing_reported_prints_nothing(repo, tmp_path):
    result = check(repo, "--quiet", "--select", "HYG-PYCACHE")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    build_tree(tmp_path / "clean", "v6.0", [("Sys", "resnet", s) for s in EDGE], system_type="edge")
    clean = run_cli("check", str(tmp_path / "clean"), "-q", "--isolated", cwd=tmp_path)
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")


# --- --format -----------------------------------------------------------------------------------------------


def test_format_choices_come_from_the_registry(repo):
    help_text = " ".join(run_cli("check", "--help", cwd=repo).stdout.split())
    assert f"[{'|'.join(FORMATS)}]" in help_text
    result = check(repo, "--format", "yaml")
    assert result.returncode == 2 and "yaml" in result.stderr


def test_every_registered_format_writes_text(repo):
    report = check_tree(repo / TREE_ARG, "v6.0")
    output = build_output(report, [], RULES, root="submission", tree_argument=TREE_ARG)
    for name in FORMATS:
        assert formatter(name)(output).strip(), name


def test_json_is_format_json_and_names_what_selection_hides(repo):
    result = check(repo, "--json", "--ignore", "PERF-SEED")
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["schema_version"] == 2 and document["round"] == "v6.0"
    assert {f["rule"] for f in document["findings"]} == {"HYG-NAME", "SYS-PLACEHOLDER"}
    assert document["not_reported"] == 1
    assert document["selection"] == [{"source": "command line", "select": None, "ignore": ["PERF-SEED"]}]
    verdicts = {
        r["scenario"]: (r["verdict"], r["invalid_only_by_ignored_rules"], r["ignored_rules"])
        for r in document["results"]
    }
    assert verdicts == {
        "Offline": ("invalid", True, ["PERF-SEED"]),
        "SingleStream": ("valid", False, []),
        "MultiStream": ("valid", False, []),
    }
    assert check(repo, "--format", "json", "--ignore", "PERF-SEED").stdout == result.stdout
    assert json.loads(check(repo, "--json").stdout)["results"][2]["invalid_only_by_ignored_rules"] is False


def test_json_and_another_format_conflict(repo):
    result = check(repo, "--json", "--format", "sarif")
    assert result.returncode == 2 and "--json" in result.stderr and result.stdout == ""


def _unescape(value: str) -> str:
    for escaped, plain in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        value = value.replace(escaped, plain)
    return value


def parse_annotations(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    """(command, properties, message) of each workflow command, unescaped as the runner does."""
    parsed = []
    for line in stdout.splitlines():
        found = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
        assert found, line
        properties = dict(item.split("=", 1) for item in found.group(2).split(","))
        parsed.append(
            (
                found.group(1),
                {key: _unescape(value) for key, value in properties.items()},
                _unescape(found.group(3)),
            )
        )
    return parsed


def test_escaping_follows_the_runner():
    assert escape_data("100% a:b,c\r\nd") == "100%25 a:b,c%0D%0Ad"
    assert escape_property("100% a:b,c\r\nd") == "100%25 a%3Ab%2Cc%0D%0Ad"


def test_github_annotations_point_at_files_from_the_working_directory(repo):
    result = check(repo, "--format", "github")
    assert result.returncode == 1
    annotations = parse_annotations(result.stdout)
    assert sorted((command, props["title"]) for command, props, _ in annotations) == [
        ("error", "PERF-SEED"),
        ("warning", "HYG-NAME"),
        ("warning", "SYS-PLACEHOLDER"),
    ]
    for _, properties, message in annotations:
        assert (repo / properties["file"]).exists(), properties["file"]
        assert properties["file"].startswith("submission/closed/Org/") and "; fix: " in message
    seed = next(props for _, props, _ in annotations if props["title"] == "PERF-SEED")
    lines = (repo / seed["file"]).read_text().splitlines()
    assert SEED_KEY in lines[int(seed["line"]) - 1]
    name = next(props for _, props, _ in annotations if props["title"] == "HYG-NAME")
    assert "line" not in name and name["file"].endswith(ODD_NAME)
    assert "notes%3A 100%25%2C v2.md" in result.stdout  # escaped as a property, not only unescapable


def test_github_notes_a_result_invalid_only_by_ignored_rules(repo):
    result = check(repo, "--format", "github", "--ignore", "PERF-SEED")
    assert result.returncode == 0
    notices = [
        (props, message)
        for command, props, message in parse_annotations(result.stdout)
        if command == "notice"
    ]
    assert len(notices) == 1
    props, message = notices[0]
    assert OFFLINE_ID in message and "PERF-SEED" in message and (repo / props["file"]).is_dir()


def read_junit(text: str) -> dict[str, object]:
    """{classname/name: case} of the one suite, read back by junitparser."""
    suites = list(JUnitXml.fromstring(text))
    assert len(suites) == 1
    return {f"{case.classname}/{case.name}": case for case in suites[0]}


def test_junit_fails_the_results_with_errors_and_keeps_warnings_as_output(repo):
    result = check(repo, "--format", "junit")
    assert result.returncode == 1
    suite = next(iter(JUnitXml.fromstring(result.stdout)))
    cases = read_junit(result.stdout)
    assert set(cases) == {
        "closed/Org/Sys/resnet/SingleStream",
        "closed/Org/Sys/resnet/MultiStream",
        "closed/Org/Sys/resnet/Offline",
        "submission tree/tree",
    }
    failing = {key for key, case in cases.items() if any(isinstance(r, Failure) for r in case.result)}
    assert failing == {"closed/Org/Sys/resnet/Offline"}
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 0, 0)
    failure = cases["closed/Org/Sys/resnet/Offline"].result[0]
    assert failure.message == "1 error(s): PERF-SEED" and failure.text.count("PERF-SEED error") == 1
    # SYS-PLACEHOLDER concerns every result of the system; HYG-NAME no result: the tree's case.
    assert all(
        "SYS-PLACEHOLDER warning" in cases[key].system_out for key in cases if key.startswith("closed/")
    )
    assert "HYG-NAME warning" in cases["submission tree/tree"].system_out
    assert f"submission/closed/Org/documentation/{ODD_NAME}" in cases["submission tree/tree"].system_out


def test_junit_failures_match_the_reported_errors(repo):
    """--strict: the two warnings become errors; SYS-PLACEHOLDER fails every result, HYG-NAME the tree."""
    result = check(repo, "--format", "junit", "--strict")
    cases = read_junit(result.stdout)
    failures = {key: case.result[0] for key, case in cases.items() if case.result}
    assert all(isinstance(failure, Failure) for failure in failures.values())
    assert set(failures) == set(cases)
    errors = json.loads(check(repo, "--json", "--strict").stdout)["findings"]
    lines = [line for failure in failures.values() for line in failure.text.splitlines()]
    for finding in errors:  # every reported error is in a failure; the system's in each of its results
        assert any(f"{finding['rule']} error" in line and finding["path"] in line for line in lines)
    assert sum("SYS-PLACEHOLDER" in line for line in lines) == 3


def test_junit_skips_a_result_invalid_only_by_ignored_rules(repo):
    result = check(repo, "--format", "junit", "--ignore", "PERF-SEED")
    assert result.returncode == 0
    cases = read_junit(result.stdout)
    offline = cases["closed/Org/Sys/resnet/Offline"].result
    assert len(offline) == 1 and isinstance(offline[0], Skipped) and "PERF-SEED" in offline[0].message
    assert not any(isinstance(r, Failure) for case in cases.values() for r in case.result)


def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text())
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def test_the_committed_schema_is_oasis_sarif_2_1_0():
    assert hashlib.sha256(SARIF_SCHEMA.read_bytes()).hexdigest() == SARIF_SCHEMA_SHA256  # as published
    schema = json.loads(SARIF_SCHEMA.read_text())
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    jsonschema.Draft4Validator.check_schema(schema)
    # The schema holds: a log without runs fails it.
    assert list(sarif_validator().iter_errors({"version": "2.1.0"}))


def test_sarif_validates_and_locates_each_finding(repo):
    result = check(repo, "--format", "sarif")
    assert result.returncode == 1
    log = json.loads(result.stdout)
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert not errors, errors[0]
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "submitter" and driver["informationUri"].startswith("https://")
    rules = [rule["id"] for rule in driver["rules"]]
    assert sorted(rules) == ["HYG-NAME", "PERF-SEED", "SYS-PLACEHOLDER"]
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in driver["rules"]}
    assert levels == {"HYG-NAME": "warning", "PERF-SEED": "error", "SYS-PLACEHOLDER": "warning"}
    assert len(run["results"]) == 3
    for item in run["results"]:
        assert rules[item["ruleIndex"]] == item["ruleId"]
        assert item["level"] == levels[item["ruleId"]]
        uri = item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert (repo / unquote(uri)).exists(), uri
    seed = next(item for item in run["results"] if item["ruleId"] == "PERF-SEED")
    region = seed["locations"][0]["physicalLocation"]["region"]
    uri = unquote(seed["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
    assert SEED_KEY in (repo / uri).read_text().splitlines()[region["startLine"] - 1]
    name = next(item for item in run["results"] if item["ruleId"] == "HYG-NAME")
    assert "region" not in name["locations"][0]["physicalLocation"]
    assert "%25" in name["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]  # percent-encoded


def test_sarif_levels_follow_strict_and_name_hidden_verdicts(repo):
    strict = json.loads(check(repo, "--format", "sarif", "--strict").stdout)
    assert {item["level"] for item in strict["runs"][0]["results"]} == {"error"}
    hidden = json.loads(check(repo, "--format", "sarif", "--ignore", "PERF-SEED").stdout)
    assert not list(sarif_validator().iter_errors(hidden))
    assert hidden["runs"][0]["properties"]["invalidOnlyByIgnoredRules"] == [
        {"result": OFFLINE_ID, "rules": ["PERF-SEED"]}
    ]


# --- --output -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_output_writes_the_report_to_the_file(repo, name):
    (repo / "reports").mkdir()
    result = check(repo, "--format", name, "--output", "reports/report.out")
    assert result.returncode == 1 and result.stdout == ""
    written = (repo / "reports" / "report.out").read_text()
    printed = check(repo, "--format", name).stdout
    assert _untimed(written) == _untimed(printed)  # the same report as on stdout
    if name in ("json", "sarif"):
        json.loads(written)


def _untimed(report: str) -> str:
    """JUnit's suites carry how long the check took; nothing else differs between two runs."""
    return re.sub(r' time="[0-9.]+"', "", report)


def test_an_output_that_cannot_be_written_stops_before_the_check(repo):
    result = run_cli("check", "nowhere", "--output", "missing/report.txt", cwd=repo)
    assert result.returncode == 2 and "cannot write missing/report.txt" in result.stderr
    assert "no such directory" not in result.stderr  # the tree was not looked at


# --- the configuration file ---------------------------------------------------------------------------------


def in_config(repo: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`submitter check` on the broken tree, reading the configuration file it finds."""
    return run_cli("check", str(repo / TREE_ARG), "--round", "v6.0", *args, cwd=cwd or repo)


def test_submitter_toml_in_the_working_directory_applies(repo):
    (repo / "submitter.toml").write_text('ignore = ["PERF-SEED"]\nformat = "json"\n')
    result = in_config(repo)
    assert result.returncode == 0
    assert f"settings from {repo / 'submitter.toml'}" in result.stderr
    assert {f["rule"] for f in json.loads(result.stdout)["findings"]} == {"HYG-NAME", "SYS-PLACEHOLDER"}


def test_pyproject_table_in_a_parent_applies_and_one_without_it_does_not_count(repo):
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.submitter]\nselect = ["HYG"]\nstrict = true\n'
    )
    child = repo / "ci" / "jobs"
    child.mkdir(parents=True)
    (child / "pyproject.toml").write_text('[project]\nname = "submitter-job"\n')  # mentions us, no table
    result = in_config(repo, cwd=child)
    assert (
        result.returncode == 1
        and rules_in(result.stdout) == {"HYG-NAME"}
        and "HYG-NAME error" in result.stdout
    )
    assert f"settings from {repo / 'pyproject.toml'}" in result.stderr


def test_submitter_toml_wins_over_pyproject_in_the_same_folder(repo):
    (repo / "pyproject.toml").write_text('[tool.submitter]\nselect = ["HYG"]\n')
    (repo / "submitter.toml").write_text('select = ["SYS"]\n')
    result = in_config(repo)
    assert rules_in(result.stdout) == {"SYS-PLACEHOLDER"} and "submitter.toml" in result.stderr


def test_the_command_line_wins_over_the_file(repo):
    (repo / "submitter.toml").write_text('ignore = ["PERF-SEED"]\nstrict = true\nformat = "json"\n')
    selected = in_config(repo, "--select", "PERF", "--format", "text", "--no-strict")
    assert selected.returncode == 1 and rules_in(selected.stdout) == {"PERF-SEED"}  # --select starts afresh
    narrowed = in_config(repo, "--ignore", "SYS", "--format", "text")  # --ignore narrows the file's ignore
    assert (
        narrowed.returncode == 1
        and rules_in(narrowed.stdout) == {"HYG-NAME"}
        and "HYG-NAME error" in narrowed.stdout
    )


def test_config_names_a_file_and_isolated_reads_none(repo, tmp_path):
    (repo / "submitter.toml").write_text('ignore = ["PERF-SEED"]\n')
    named = tmp_path / "ci-check.toml"
    named.write_text('select = ["SYS"]\n')
    result = in_config(repo, "--config", str(named))
    assert rules_in(result.stdout) == {"SYS-PLACEHOLDER"} and str(named) in result.stderr
    isolated = in_config(repo, "--isolated")
    assert isolated.returncode == 1 and "PERF-SEED" in rules_in(isolated.stdout)
    assert "settings from" not in isolated.stderr
    assert in_config(repo, "--isolated", "--config", str(named)).returncode == 2
    quiet = in_config(repo, "--quiet")
    assert quiet.returncode == 0 and "settings from" not in quiet.stderr


def test_a_named_pyproject_needs_the_table(repo):
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    result = in_config(repo, "--config", "pyproject.toml")
    assert result.returncode == 2 and "has no [tool.submitter] table" in result.stderr


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        (
            "submitter.toml",
            'select = ["PERF"]\nselct = ["SYS"]\n',
            [
                "submitter.toml:2",
                "selct",
                "did you mean 'select'",
                "allowed keys: select, ignore, strict, format",
            ],
        ),
        ("submitter.toml", 'output = "report.sarif"\n', ["submitter.toml:1", "output", "--output FILE"]),
        ("submitter.toml", 'strict = "yes"\n', ["submitter.toml:1", "strict", "true or false", "'yes'"]),
        ("submitter.toml", 'ignore = "PERF-SEED"\n', ["submitter.toml:1", "ignore", "a list of rule ids"]),
        ("submitter.toml", 'format = "yaml"\n', ["submitter.toml:1", "format", "'sarif'", "'yaml'"]),
        (
            "submitter.toml",
            'select = ["PERF-SEEDS"]\n',
            ["submitter.toml:1", "select", "'PERF-SEEDS'", "PERF-SEED"],
        ),
        ("submitter.toml", 'select = ["PERF"\nstrict = true\n', ["submitter.toml:2", "is not valid TOML"]),
        (
            "pyproject.toml",
            '[project]\nname = "submitter-ci"\n\n[tool.submitter]\nstrict = 1\n',
            ["pyproject.toml:5", "strict"],
        ),
        ("pyproject.toml", "[tool.submitter\n", ["pyproject.toml:1", "is not valid TOML"]),
    ],
)
def test_a_bad_configuration_is_a_usage_error_naming_file_line_and_key(repo, file, text, expected):
    (repo / file).write_text(text)
    result = in_config(repo)
    assert result.returncode == 2 and result.stdout == ""
    for part in expected:
        assert part in result.stderr, result.stderr


# --- Red Hat's published tree (../shared) -------------------------------------------------------------------

REDHAT_ERRORS_IN_V6_1 = "STRUCT,MEAS,COMP,PERF-SEED"  # why Red Hat's v5.1 tree fails v6.1, every one


def test_redhat_ignoring_every_failing_rule_passes_yet_says_invalid(redhat_tree, tmp_path):
    assert run_cli("check", str(redhat_tree), "--round", "v6.1", "--isolated", cwd=tmp_path).returncode == 1
    result = run_cli(
        "check",
        str(redhat_tree),
        "--round",
        "v6.1",
        "--isolated",
        "--ignore",
        REDHAT_ERRORS_IN_V6_1,
        cwd=tmp_path,
    )
    assert result.returncode == 0
    assert rules_in(result.stdout) <= {"SYS-PLACEHOLDER", "SYS-MEMORY-TYPE", "SYS-ID-ACCELERATORS"}
    verdicts = [line for line in result.stdout.splitlines() if "llama3.1-8b" in line]
    assert len(verdicts) == 4 and all("INVALID (ignored rules: " in line for line in verdicts)
    document = json.loads(
        run_cli(
            "check",
            str(redhat_tree),
            "--round",
            "v6.1",
            "--isolated",
            "--json",
            "--ignore",
            REDHAT_ERRORS_IN_V6_1,
            cwd=tmp_path,
        ).stdout
    )
    assert all(r["verdict"] == "invalid" and "PERF-SEED" in r["ignored_rules"] for r in document["results"])


def test_redhat_select_and_quiet(redhat_tree, tmp_path):
    result = run_cli(
        "check", str(redhat_tree), "--isolated", "-q", "--select", "SYS-PLACEHOLDER", cwd=tmp_path
    )
    assert result.returncode == 0 and result.stderr == ""
    assert len(finding_lines(result.stdout)) == 6 and rules_in(result.stdout) == {"SYS-PLACEHOLDER"}
    assert result.stdout.splitlines()[-1].startswith(
        "0 error(s), 6 warning(s); 2 finding(s) of ignored rules"
    )


def test_redhat_ci_formats(redhat_tree, tmp_path):
    """The tree lies outside the working directory: paths climb out of it and still reach the files."""
    args = ("check", str(redhat_tree), "--round", "v6.1", "--isolated")
    github = run_cli(*args, "--format", "github", cwd=tmp_path)
    assert github.returncode == 1
    annotations = parse_annotations(github.stdout)
    assert len(annotations) == len(json.loads(run_cli(*args, "--json", cwd=tmp_path).stdout)["findings"])
    # A finding about a missing file (TEST06, user.conf) names it where it belongs, in a folder that is there.
    for _, props, message in annotations:
        path = tmp_path / props["file"]
        assert path.exists() or ("missing" in message and path.parent.is_dir()), props["file"]
    sarif = json.loads(run_cli(*args, "--format", "sarif", cwd=tmp_path).stdout)
    assert not list(sarif_validator().iter_errors(sarif))
    assert len(sarif["runs"][0]["results"]) == len(annotations)
    cases = read_junit(run_cli(*args, "--format", "junit", cwd=tmp_path).stdout)
    failing = {key for key, case in cases.items() if any(isinstance(r, Failure) for r in case.result)}
    assert len(cases) == 5 and failing == set(cases)  # 4 results, and the tree's layout


def test_redhat_configuration(redhat_tree, tmp_path):
    (tmp_path / "submitter.toml").write_text('ignore = ["SYS"]\n')
    result = run_cli("check", str(redhat_tree), cwd=tmp_path)
    assert result.returncode == 0 and rules_in(result.stdout) == set()
    assert "settings from" in result.stderr and "8 finding(s) of ignored rules not shown" in result.stdout
    named = tmp_path / "strict.toml"
    named.write_text('strict = true\nselect = ["SYS-MEMORY-TYPE"]\nformat = "json"\n')
    strict = run_cli("check", str(redhat_tree), "--config", str(named), cwd=tmp_path)
    assert strict.returncode == 1  # the one warning selected, held as an error
    assert [(f["rule"], f["severity"]) for f in json.loads(strict.stdout)["findings"]] == [
        ("SYS-MEMORY-TYPE", "error")
    ]
    isolated = run_cli("check", str(redhat_tree), "--isolated", cwd=tmp_path)
    assert isolated.returncode == 0 and "SYS-PLACEHOLDER" in rules_in(isolated.stdout)


def test_redhat_strict_sarif_to_a_file(redhat_tree, tmp_path):
    args = (
        "check",
        str(redhat_tree),
        "--isolated",
        "--strict",
        "--format",
        "sarif",
        "--output",
        "check.sarif",
    )
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""  # the eight warnings, held as errors
    log = json.loads((tmp_path / "check.sarif").read_text())
    assert not list(sarif_validator().iter_errors(log))
    levels = [item["level"] for item in log["runs"][0]["results"]]
    assert levels == ["error"] * 8
