"""The Power WG's checks (submitter.check.power) on a coherent synthetic PTD session and one-change copies."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from minitree import mllog

from submitter.check.power import PowerIssue, power_metric, verify_power_session
from submitter.rounds.models import Scenario
from submitter.rounds.registry import load_round

RULES = load_round("v5.1").power

T0 = datetime(2025, 7, 13, 0, 0, 0)  # the session's local clock, which every file logs as if it were UTC
SESSION = "2025-07-13_00-00-00"
CLIENT_UUID = "12c6b14d-4772-44d9-8b97-05f467c34732"
SERVER_UUID = "94fa156b-c8c4-4629-8ecd-3a3aaa6ad3d2"

# Seconds after T0: the PTD phases [start, loadgen may start, loadgen done, stop] and loadgen's power window.
RANGING_PHASES = (10.0, 20.0, 1900.0, 1910.0)
TESTING_PHASES = (1920.0, 1930.0, 3820.0, 3830.0)
RANGING_WINDOW = (30.0, 1830.0)
TESTING_WINDOW = (1940.0, 3740.0)
# The official checker only judges PTD warnings more than 800 s inside the testing window: 2740 s to 2940 s.
INSIDE_LOAD = 2800.0

CLIENT_RECORDED = (
    "power/client.log",
    "ranging/mlperf_log_detail.txt",
    "ranging/mlperf_log_summary.txt",
    "run_1/mlperf_log_detail.txt",
    "run_1/mlperf_log_summary.txt",
)
SERVER_RECORDED = ("power/ptd_logs.txt", "power/server.log", "ranging/spl.txt", "run_1/spl.txt")


def stamp(seconds: float) -> str:
    """A time as LoadGen and PTD log it, with milliseconds."""
    return (T0 + timedelta(seconds=seconds)).strftime("%m-%d-%Y %H:%M:%S.%f")[:-3]


def epoch(seconds: float) -> float:
    return (T0 + timedelta(seconds=seconds)).replace(tzinfo=UTC).timestamp()


def detail_log(window: tuple[float, float]) -> str:
    lines = [
        mllog("loadgen_version", "5.1.0 @ 0123456789"),
        mllog("effective_scenario", "Offline"),
        mllog("power_begin", stamp(window[0])),
        mllog("result_query_count", 1),
        mllog("power_end", stamp(window[1])),
    ]
    return "\n".join(lines) + "\n"


def spl_line(seconds: float, watts: float, pf: float = 0.95, mark: str = "testing") -> str:
    return (
        f"Time,{stamp(seconds)},Watts,{watts:.6f},Volts,229.900000,Amps,{watts / 229.9 / pf:.6f},"
        f"PF,{pf:.6f},Mark,{SESSION}_{mark}\n"
    )


def spl(window: tuple[float, float], watts: float, mark: str) -> str:
    """A sample every 10 s from just before the window to just after it (PTD samples every second)."""
    begin, end = window
    times = [begin - 5 + 10 * index for index in range(int((end - begin) / 10) + 2)]
    return "".join(spl_line(t, watts, mark=mark) for t in times)


def ptd_line(seconds: float, message: str) -> str:
    return f"{stamp(seconds)}: {message}\n"


def ptd_log() -> str:
    return "".join(
        [
            "Analyzer 1\nSelected power analyzer 'Yokogawa WT310' from wt310.cpp\n",
            "                        Version 1.11.1-462c978e-20240907\n",
            ptd_line(2, "Attempting to connect to measurement device type 49..."),
            ptd_line(5, "Uncertainty checking for YokogawaWT310 is activated"),
            ptd_line(15, f"Go with mark '{SESSION}_ranging'"),
            ptd_line(16, "ERROR: Can't evaluate uncertainty of this sample!"),  # tolerated while ranging
            ptd_line(1905, "Completed test"),
            ptd_line(1925, f"Go with mark '{SESSION}_testing'"),
            ptd_line(
                1950, "WARNING: Uncertainty unknown for the last measurement sample!"
            ),  # too early to count
            ptd_line(3825, "Completed test"),
        ]
    )


def session_messages() -> list[dict[str, Any]]:
    commands = [
        ("mlcommons/power client v3", "mlcommons/power server v3"),
        ("time", "1752364800.1"),
        (f"new,,{CLIENT_UUID}", f"OK {SESSION},{SERVER_UUID}"),
        (f"session,{SESSION},start,ranging", "OK"),
        (f"session,{SESSION},stop,ranging", "OK"),
        (f"session,{SESSION},start,testing", "OK"),
        (f"session,{SESSION},stop,testing", "OK"),
        ("time", "1752368630.0"),
    ]
    return [{"cmd": cmd, "reply": reply} for cmd, reply in commands]


def ptd_messages() -> list[dict[str, str]]:
    go = "Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples"
    exchange = [
        ("Hello", "Hello, PTDaemon here!"),
        ("Identify", "YokogawaWT310,1000,1,1,1,1,0,0,1,version=1.11.1-462c978e-20240907,OS=Linux,mode=power"),
        ("RR", "Ranges,0,0.500000,0,300.000000"),
        ("SR,V,Auto", "Range V changed"),
        ("SR,A,Auto", "Range A changed"),
        ("SR,A,Auto", "Range A changed"),
        (f"Go,1000,0,{SESSION}_ranging", go),
        ("Stop", "Stopping untimed measurement"),
        ("Watts", "Watts,100.000000,99.000000,101.000000,1800,0,1800"),
        ("SR,V,246.560000", "Range V changed"),
        ("SR,A,0.329208", "Range A changed"),
        (f"Go,1000,0,{SESSION}_testing", go),
        ("Stop", "Stopping untimed measurement"),
        ("Uncertainty", "Uncertainty,0.009589,0.009294,0.015984,1800,11,1789,0"),
        ("SR,V,300.000000", "Range V changed"),
        ("SR,A,0.500000", "Range A changed"),
    ]
    return [{"cmd": cmd, "reply": reply} for cmd, reply in exchange]


def descriptor(phases: dict[str, list[list[float]]]) -> dict[str, Any]:
    return {
        "version": "1.0",
        "timezone": 0,
        "modules": {"ptd_client_server.lib.common": "lib/common.py"},
        "sources": dict(RULES.sources[0]),
        "messages": session_messages(),
        "uuid": {"client": CLIENT_UUID, "server": SERVER_UUID},
        "session_name": SESSION,
        "results": {},
        "phases": phases,
    }


def phases(shift: float = 0.0) -> dict[str, list[list[float]]]:
    return {
        "ranging": [[epoch(t) + shift, t] for t in RANGING_PHASES],
        "testing": [[epoch(t) + shift, t] for t in TESTING_PHASES],
    }


@dataclass
class Session:
    """A PTD session whose parts a test changes before `files()` renders it, sha1 sums recorded."""

    client: dict[str, Any] = field(default_factory=lambda: descriptor(phases()))
    server: dict[str, Any] = field(default_factory=lambda: descriptor(phases(shift=0.1)))
    texts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.server["ptd_messages"] = ptd_messages()
        self.server["ptd_config"] = [
            {
                "command": ["ptd", "-l", "log", "-p", "8888", "49", "/dev/usbtmc0"],
                "device_type": 49,
                "channel": None,
            }
        ]
        self.server["debug"] = False
        self.texts = {
            "power/client.log": "client log\n",
            "power/server.log": "server log\n",
            "power/ptd_logs.txt": ptd_log(),
            "ranging/mlperf_log_detail.txt": detail_log(RANGING_WINDOW),
            "ranging/mlperf_log_summary.txt": "SUT name : demo\nResult is : VALID\n",
            "ranging/spl.txt": spl(RANGING_WINDOW, 100.0, "ranging"),
            "run_1/mlperf_log_detail.txt": detail_log(TESTING_WINDOW),
            "run_1/mlperf_log_summary.txt": "SUT name : demo\nResult is : VALID\n",
            "run_1/spl.txt": spl(TESTING_WINDOW, 101.0, "testing"),
            "run_1/mlperf_log_accuracy.json": "[]\n",  # optional: neither recorded nor checked
        }

    def files(self) -> dict[str, bytes]:
        data = {path: text.encode() for path, text in self.texts.items()}
        for owner, recorded in ((self.client, CLIENT_RECORDED), (self.server, SERVER_RECORDED)):
            if not owner.get("results") and isinstance(owner.get("results"), dict):
                owner["results"] = {
                    path: hashlib.sha1(data[path]).hexdigest() for path in recorded if path in data
                }
        data["power/client.json"] = json.dumps(self.client, indent=4).encode()
        data["power/server.json"] = json.dumps(self.server, indent=4).encode()
        return data


def issues_after(change: Callable[[Session], None]) -> list[PowerIssue]:
    session = Session()
    change(session)
    return verify_power_session(session.files(), RULES)


def failures(issues: list[PowerIssue]) -> list[str]:
    return [issue.check for issue in issues if not issue.warning]


def warnings(issues: list[PowerIssue]) -> list[str]:
    return [issue.check for issue in issues if issue.warning]


def fails_only(check: str, change: Callable[[Session], None]) -> PowerIssue:
    issues = issues_after(change)
    assert [(issue.check, issue.warning) for issue in issues] == [(check, False)], issues
    return issues[0]


def warns_only(check: str, change: Callable[[Session], None]) -> PowerIssue:
    issues = issues_after(change)
    assert [(issue.check, issue.warning) for issue in issues] == [(check, True)], issues
    return issues[0]


def add_ptd_line(session: Session, seconds: float, message: str) -> None:
    session.texts["power/ptd_logs.txt"] += ptd_line(seconds, message)


def set_ptd_reply(session: Session, command: str, reply: str, occurrence: int = 0) -> None:
    matching = [message for message in session.server["ptd_messages"] if message["cmd"] == command]
    matching[occurrence]["reply"] = reply


# ---------------------------------------------------------------------------------------------------


def test_the_coherent_session_has_no_issues():
    assert verify_power_session(Session().files(), RULES) == []


@pytest.mark.parametrize("side", ["client", "server"])
def test_sources_not_an_accepted_release(side):
    issue = fails_only(
        "sources", lambda s: getattr(s, side)["sources"].__setitem__("lib/server.py", "0" * 40)
    )
    assert f"power/{side}.json" in issue.message and "lib/server.py" in issue.message


def test_ptd_version_not_supported():
    identify = "YokogawaWT310,1000,1,version=1.10.0-aaaa-2023,OS=Linux"
    issue = fails_only("ptd-messages", lambda s: set_ptd_reply(s, "Identify", identify))
    assert "'1.10.0'" in issue.message


def test_power_meter_not_supported():
    identify = "HiokiPW3335,1000,1,version=1.11.1-462c978e-20240907,OS=Linux"
    issue = fails_only("ptd-messages", lambda s: set_ptd_reply(s, "Identify", identify))
    assert "'HiokiPW3335'" in issue.message


def test_wrong_ptd_reply():
    fails_only("ptd-messages", lambda s: set_ptd_reply(s, "SR,V,Auto", "Invalid range"))


def test_a_third_stop_finds_no_measurement():
    def third_stop(reply: str) -> Callable[[Session], None]:
        return lambda s: s.server["ptd_messages"].append({"cmd": "Stop", "reply": reply})

    assert issues_after(third_stop("Error: no measurement to stop")) == []
    fails_only("ptd-messages", third_stop("Stopping untimed measurement"))


def test_initial_ranges_not_restored():
    def restore_volts_to(value: str) -> Callable[[Session], None]:
        return lambda s: s.server["ptd_messages"][-2].__setitem__("cmd", f"SR,V,{value}")

    issue = fails_only("ptd-messages", restore_volts_to("250.000000"))
    assert "'SR,V,300.000000'" in issue.message


def test_four_sr_a_commands_are_needed_even_when_the_third_restores():
    # Without the second SR,A,Auto the third SR,A restores the range, yet the official checker wants a fourth.
    fails_only("ptd-messages", lambda s: s.server["ptd_messages"].pop(5))


def test_uuid_differs():
    issue = fails_only("uuid", lambda s: s.client["uuid"].__setitem__("server", str(CLIENT_UUID)))
    assert "server uuid" in issue.message


def test_uuid_compared_as_uuids_not_text():
    spelled = "{" + SERVER_UUID.upper().replace("-", "") + "}"
    assert issues_after(lambda s: s.client["uuid"].__setitem__("server", spelled)) == []


def test_session_name_differs():
    fails_only("session-name", lambda s: s.client.__setitem__("session_name", "2025-07-13_00-00-01"))


def test_client_and_server_clocks_apart():
    def shift_server_phase(s: Session) -> None:
        s.server["phases"]["testing"][2][0] += 0.75  # 0.85 s apart with the 0.1 s both have

    issue = fails_only("phases", shift_server_phase)
    assert "phase 3 of the testing mode" in issue.message


def test_loadgen_outside_its_phase():
    issue = fails_only(
        "phases", lambda s: s.texts.__setitem__("run_1/mlperf_log_detail.txt", detail_log((1925.0, 3740.0)))
    )
    assert "power_begin" in issue.message


def test_loadgen_one_hour_late_is_accepted():
    """The official checker's daylight-saving workaround: loadgen times may be an hour ahead of PTD's."""

    def hour_ahead(s: Session) -> None:
        window = (TESTING_WINDOW[0] + 3600, TESTING_WINDOW[1] + 3600)
        s.texts["run_1/mlperf_log_detail.txt"] = detail_log(window)
        s.texts["run_1/spl.txt"] = spl(window, 101.0, "testing")

    assert issues_after(hour_ahead) == []


@pytest.mark.parametrize(("testing_watts", "fails"), [(95.006, False), (95.004, True), (94.0, True)])
def test_testing_power_lower_than_ranging(testing_watts, fails):
    # 95.004 W is -4.996%, rounded to -5.0%: the official checker needs more than -5 after rounding.
    issues = issues_after(
        lambda s: s.texts.__setitem__("run_1/spl.txt", spl(TESTING_WINDOW, testing_watts, "t"))
    )
    assert failures(issues) == (["phases"] if fails else [])


def test_no_samples_in_either_run_passes():
    """Both runs average -1 W without samples, so the comparison passes (the official quirk)."""

    def no_samples(s: Session) -> None:
        s.texts["ranging/spl.txt"] = s.texts["run_1/spl.txt"] = "no samples\n"

    assert issues_after(no_samples) == []


def test_testing_much_shorter_than_ranging_is_a_warning():
    short = (TESTING_WINDOW[0], TESTING_WINDOW[0] + 800.0)
    issue = warns_only(
        "phases", lambda s: s.texts.__setitem__("run_1/mlperf_log_detail.txt", detail_log(short))
    )
    assert "shorter than the ranging run" in issue.message


def test_the_duration_warning_masks_a_power_drop():
    def short_and_low(s: Session) -> None:
        short = (TESTING_WINDOW[0], TESTING_WINDOW[0] + 800.0)
        s.texts["run_1/mlperf_log_detail.txt"] = detail_log(short)
        s.texts["run_1/spl.txt"] = spl(short, 50.0, "testing")

    warns_only("phases", short_and_low)


def test_unreadable_spl_sample_in_the_window():
    def truncate(s: Session) -> None:
        s.texts["run_1/spl.txt"] += f"Time,{stamp(2000.5)},Watts,100.0\n"

    issue = fails_only("phases", truncate)
    assert "run_1/spl.txt" in issue.message


def test_message_reply_differs():
    issue = fails_only("messages", lambda s: s.client["messages"][3].__setitem__("reply", "Error"))
    assert "message 3" in issue.message


def test_time_replies_may_differ():
    assert issues_after(lambda s: s.client["messages"][1].__setitem__("reply", "1752364800.3")) == []


def test_protocol_versions_differ():
    def versions(s: Session) -> None:
        for owner in (s.client, s.server):
            owner["messages"][0]["reply"] = "mlcommons/power server v4"

    fails_only("messages", versions)


def test_file_changed_after_the_session():
    session = Session()
    files = session.files()
    files["run_1/mlperf_log_summary.txt"] += b"edited\n"
    issues = verify_power_session(files, RULES)
    assert [(issue.check, issue.warning) for issue in issues] == [("results-checksum", False)]
    assert "run_1/mlperf_log_summary.txt" in issues[0].message


def test_recorded_file_absent():
    session = Session()
    files = session.files()
    del files["power/server.log"]
    issues = verify_power_session(files, RULES)
    assert failures(issues) == ["results-checksum"]
    assert "power/server.log" in issues[0].message


def test_required_file_not_recorded():
    def forget(s: Session) -> None:
        s.client["results"] = {"power/client.log": hashlib.sha1(b"client log\n").hexdigest()}

    issue = fails_only("results-checksum", forget)
    assert "recorded in neither" in issue.message


def test_client_and_server_record_different_sums():
    def disagree(s: Session) -> None:
        s.client["results"] = {"run_1/spl.txt": "1" * 40}

    fails_only("results-checksum", disagree)


def test_ptd_error_outside_ranging():
    issue = fails_only("ptd-log", lambda s: add_ptd_line(s, 2500, "ERROR: Lost connection to the analyzer"))
    assert "outside the ranging run" in issue.message


def test_untolerated_ptd_error_during_ranging_is_a_warning():
    warns_only("ptd-log", lambda s: add_ptd_line(s, 500, "ERROR: Something unusual"))


def test_usb_error_is_a_warning_at_any_time():
    warns_only("ptd-log", lambda s: add_ptd_line(s, 2500, "ERROR: USB."))


def test_uncertainty_above_limit_during_the_load():
    message = "WARNING: Uncertainty 1.50%, which is above 1.00% limit for the last sample!"
    fails_only("ptd-log", lambda s: add_ptd_line(s, INSIDE_LOAD, message))


def test_other_warning_during_the_load():
    warns_only(
        "ptd-log", lambda s: add_ptd_line(s, INSIDE_LOAD, "WARNING: Reading took longer than expected")
    )


def test_warnings_within_800_s_of_the_loads_ends_are_ignored():
    """The official checker adds its 800 ms tolerance to times in seconds."""
    message = "WARNING: Uncertainty 1.50%, which is above 1.00% limit for the last sample!"
    assert issues_after(lambda s: add_ptd_line(s, TESTING_WINDOW[0] + 700, message)) == []


def test_ptd_error_line_without_time():
    fails_only("ptd-log", lambda s: s.texts.__setitem__("power/ptd_logs.txt", ptd_log() + "ERROR: no time\n"))


def test_uncertainty_checking_never_activated():
    def drop(s: Session) -> None:
        s.texts["power/ptd_logs.txt"] = ptd_log().replace("Uncertainty checking for", "Checking for")

    issue = fails_only("ptd-log", drop)
    assert "Uncertainty checking" in issue.message


def test_uncertainty_checking_activated_after_ranging_started():
    def late(s: Session) -> None:
        lines = ptd_log().replace(ptd_line(5, "Uncertainty checking for YokogawaWT310 is activated"), "")
        s.texts["power/ptd_logs.txt"] = lines + ptd_line(
            20, "Uncertainty checking for YokogawaWT310 is activated"
        )

    fails_only("ptd-log", late)


def test_ranging_never_completed():
    def drop(s: Session) -> None:
        s.texts["power/ptd_logs.txt"] = ptd_log().replace(": Completed test", ": Aborted test")

    issue = fails_only("ptd-log", drop)
    assert f"{SESSION}_ranging" in issue.message


def test_unknown_ptd_device_type():
    fails_only("ptd-config", lambda s: s.server["ptd_config"][0].__setitem__("device_type", 999))


@pytest.mark.parametrize(("channels", "channel", "fails"), [("1", [1], True), ("1,2", [1, 2], False)])
def test_multichannel_meter_needs_two_channels(channels, channel, fails):
    def multichannel(s: Session) -> None:
        s.server["ptd_config"] = [
            {"command": ["ptd", "-c", channels, "77", "/dev/usbtmc0"], "device_type": 77, "channel": channel}
        ]

    issues = issues_after(multichannel)
    assert failures(issues) == (["ptd-config"] if fails else [])


@pytest.mark.parametrize("value", [True, 0, "false"])
def test_server_in_debug_mode(value):
    fails_only("debug", lambda s: s.server.__setitem__("debug", value))


def test_no_debug_field_passes():
    assert issues_after(lambda s: s.server.pop("debug")) == []


def test_missing_or_unreadable_descriptors():
    files = Session().files()
    del files["power/client.json"]
    files["power/server.json"] = b"{not json"
    issues = verify_power_session(files, RULES)
    assert [issue.check for issue in issues] == ["session", "session"]
    assert "power/client.json is missing" in issues[0].message
    assert "power/server.json is not valid JSON" in issues[1].message


def test_descriptor_lacks_required_fields():
    issue = fails_only("session", lambda s: s.server.pop("phases"))
    assert "phases" in issue.message


GARBAGE = [None, 7, "text", [], {}, [None], {"x": [1]}]
# No analyser to check is no problem for the official checker.
ACCEPTED_GARBAGE = {"ptd_config": ([], {})}


@pytest.mark.parametrize(
    ("field_name", "owner", "check"),
    [
        ("sources", "client", "sources"),
        ("ptd_messages", "server", "ptd-messages"),
        ("uuid", "client", "uuid"),
        ("phases", "server", "phases"),
        ("messages", "client", "messages"),
        ("results", "server", "results-checksum"),
        ("ptd_config", "server", "ptd-config"),
    ],
)
def test_garbage_fields_become_issues_of_their_check(field_name, owner, check):
    for value in GARBAGE:
        if value in ACCEPTED_GARBAGE.get(field_name, ()):
            continue
        session = Session()
        files = session.files()
        descriptor_json = json.loads(files[f"power/{owner}.json"])
        descriptor_json[field_name] = copy.deepcopy(value)
        files[f"power/{owner}.json"] = json.dumps(descriptor_json).encode()
        issues = verify_power_session(files, RULES)
        assert check in failures(issues), (value, issues)


def test_non_utf8_ptd_log():
    session = Session()
    files = session.files()
    files["power/ptd_logs.txt"] += b"\xff\xfe\n"
    session.server["results"]["power/ptd_logs.txt"] = hashlib.sha1(files["power/ptd_logs.txt"]).hexdigest()
    files["power/server.json"] = json.dumps(session.server).encode()
    issues = verify_power_session(files, RULES)
    assert failures(issues) == ["ptd-log"]
    assert "not UTF-8" in issues[0].message


# ---------------------------------------------------------------------------------------------------
# The power metric, computed here by hand.

BEGIN = "07-13-2025 00:00:10.000"
END = "07-13-2025 00:00:20.000"
METRIC_SPL = "".join(
    [
        "Some header line\n",
        spl_line(10.0, 500.0),  # exactly at power_begin: outside
        spl_line(11.0, 10.0),
        spl_line(12.5, 0.0),  # not positive: left out
        spl_line(13.0, -3.0),
        spl_line(19.999, 20.0),
        spl_line(20.0, 500.0),  # exactly at power_end: outside
        spl_line(25.0, 900.0),
    ]
)


@pytest.mark.parametrize("scenario", [Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE])
def test_power_metric_in_watts(scenario):
    assert power_metric(BEGIN, END, METRIC_SPL, scenario, scenario.value, 1) == (10.0 + 20.0) / 2


def test_power_metric_single_stream_millijoules_per_query():
    # 15 W for 10 s over 50 queries: 150 J / 50 = 3 J = 3000 mJ per query.
    assert power_metric(BEGIN, END, METRIC_SPL, Scenario.SINGLE_STREAM, "SingleStream", 50) == 3000.0


def test_power_metric_multi_stream():
    assert power_metric(BEGIN, END, METRIC_SPL, Scenario.MULTI_STREAM, "MultiStream", "50") == 3000.0
    # Inferred from a SingleStream log, a MultiStream query is 8 of its queries.
    assert power_metric(BEGIN, END, METRIC_SPL, Scenario.MULTI_STREAM, "SingleStream", 50) == 24000.0


def test_power_metric_matches_the_floats_of_the_official_order():
    spl_text = spl_line(11.0, 33.1) + spl_line(12.0, 33.7) + spl_line(13.0, 34.3)
    average = (33.1 + 33.7 + 34.3) / 3
    expected = average * 10.0 * 1000 / 7
    assert power_metric(BEGIN, END, spl_text, Scenario.SINGLE_STREAM, "SingleStream", 7) == expected


@pytest.mark.parametrize(
    ("begin", "spl_text", "queries", "logged", "words"),
    [
        (BEGIN, "no samples\n", 50, "SingleStream", "no positive power sample"),
        (None, METRIC_SPL, 50, "SingleStream", "power_begin"),
        ("07/13/2025 00:00:10", METRIC_SPL, 50, "SingleStream", "power_begin"),
        (BEGIN, METRIC_SPL + "Time,garbled\n", 50, "SingleStream", "spl.txt line 9"),
        (BEGIN, METRIC_SPL, 0, "SingleStream", "result_query_count"),
        (BEGIN, METRIC_SPL, None, "SingleStream", "result_query_count"),
        (BEGIN, METRIC_SPL, 50, None, "effective_scenario"),
    ],
)
def test_power_metric_problems_are_issues(begin, spl_text, queries, logged, words):
    scenario = Scenario.MULTI_STREAM
    result = power_metric(begin, END, spl_text, scenario, logged, queries)
    assert isinstance(result, PowerIssue)
    assert result.check == "metric" and words in result.message
