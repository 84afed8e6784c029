"""The Power WG's checks of a PTD power measurement and the power metric, as the official checker has them."""

from __future__ import annotations

import hashlib
import io
import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from submitter.rounds.models import PowerRules, Scenario

# Where the mlcommons/power client and server put their files, relative to performance/.
CLIENT_JSON = "power/client.json"
SERVER_JSON = "power/server.json"
PTD_LOGS = "power/ptd_logs.txt"
RANGING_RUN = "ranging"
TESTING_RUN = "run_1"

# The time format of LoadGen's power_begin/power_end values and of PTD's log and spl.txt lines.
TIME_FORMAT = "%m-%d-%Y %H:%M:%S.%f"
# A detail-log time is searched anywhere in the line; a PTD log line starts with its time.
_DETAIL_LOG_TIME = re.compile(r"(\d*-\d*-\d* \d*:\d*:\d*\.\d*)")
_PTD_LOG_TIME_PATTERN = r"(^\d\d-\d\d-\d\d\d\d \d\d:\d\d:\d\d.\d\d\d)"
_PTD_LOG_TIME = re.compile(_PTD_LOG_TIME_PATTERN)
_PTD_LOG_MESSAGE = re.compile(f"(?<={_PTD_LOG_TIME_PATTERN}).+")

# The official checker accepts loadgen times one hour late: its stand-in for daylight saving time handling.
DST_WORKAROUND_S = 3600
# A MultiStream query is 8 samples: the metric of MultiStream inferred from a SingleStream log scales by it.
MULTISTREAM_SAMPLES_PER_QUERY = 8

# PTD's replies to the mlcommons/power server's commands, fixed by PTD itself.
RANGE_A_REPLY = "Range A changed"
RANGE_V_REPLY = "Range V changed"
GO_COMMAND_PREFIX = "Go,1000,"  # an untimed measurement sampled every 1000 ms
GO_REPLY = "Starting untimed measurement, maximum 500000 samples at 1000ms with 0 rampup samples"
STOP_REPLY = "Stopping untimed measurement"
STOP_AGAIN_REPLY = "Error: no measurement to stop"
_PTD_VERSION = re.compile(r"(?<=version=)(.+?)-")
_CLIENT_VERSION = re.compile(r"mlcommons\/power client v(\d+)$")
_SERVER_VERSION = re.compile(r"mlcommons\/power server v(\d+)$")
# What ptd_logs.txt says when the ranging run starts and ends, and when PTD checks its uncertainty.
COMPLETED_TEST = ": Completed test"
_UNCERTAINTY_ACTIVATED = re.compile(r"Uncertainty checking for Yokogawa\S+ is activated")
_PTD_WARNING = re.compile(r"(?<=WARNING:).+")
_PTD_ERROR = re.compile(r"(?<=ERROR:).+")


@dataclass(frozen=True)
class PowerIssue:
    """One problem the Power WG's checker reports: a failed check, or a warning when `warning` is set."""

    # sources, ptd-messages, uuid, session-name, phases, messages, results-checksum, ptd-log, ptd-config,
    # debug; session (client.json/server.json unusable); metric (power_metric could not compute)
    check: str
    message: str  # what is wrong, naming the file relative to performance/ and the values found
    warning: bool = False  # the Power WG reports it but the check passes


class _Fail(Exception):
    """The check fails (the official checker's AssertionError)."""


class _Warn(Exception):
    """The check passes with a warning (the official checker's CheckerWarning)."""


# Content the official checker trips over with an unhandled exception, which it counts as a failed check.
_CONTENT_ERRORS = (
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    ZeroDivisionError,
    OverflowError,
    OSError,
)


@dataclass(frozen=True)
class _Session:
    path: str
    data: dict[str, Any]


@dataclass(frozen=True)
class _Context:
    files: Mapping[str, bytes]
    rules: PowerRules
    client: _Session
    server: _Session


def verify_power_session(files: Mapping[str, bytes], rules: PowerRules) -> list[PowerIssue]:
    """`files`: every regular file under a result's performance/ folder, keyed by POSIX path relative to it
    ("power/client.json", "run_1/spl.txt", "ranging/mlperf_log_detail.txt", ...)."""
    loaded = [_load_session(files, path, rules) for path in (CLIENT_JSON, SERVER_JSON)]
    client, server = loaded
    if not isinstance(client, _Session) or not isinstance(server, _Session):
        # Without both descriptors the official checker stops before its first check.
        return [issue for issue in loaded if isinstance(issue, PowerIssue)]
    context = _Context(files, rules, client, server)
    issues = (_run(name, where, body) for name, where, body in _checks(context))
    return [issue for issue in issues if issue is not None]


def _checks(ctx: _Context) -> list[tuple[str, str, Callable[[], None]]]:
    """The official checker's eleven checks, in its order: (name, files it reads, the check)."""
    client, server = ctx.client, ctx.server
    both = f"{CLIENT_JSON} and {SERVER_JSON}"
    return [
        ("sources", CLIENT_JSON, lambda: _check_sources(client, ctx.rules)),
        ("sources", SERVER_JSON, lambda: _check_sources(server, ctx.rules)),
        ("ptd-messages", SERVER_JSON, lambda: _check_ptd_messages(server, ctx.rules)),
        ("uuid", both, lambda: _check_uuid(client, server)),
        ("session-name", both, lambda: _check_session_name(client, server)),
        ("phases", both, lambda: _check_phases(ctx)),
        ("messages", both, lambda: _check_messages(client, server)),
        ("results-checksum", both, lambda: _check_results(ctx)),
        ("ptd-log", PTD_LOGS, lambda: _check_ptd_log(ctx)),
        ("ptd-config", SERVER_JSON, lambda: _check_ptd_config(server, ctx.rules)),
        ("debug", SERVER_JSON, lambda: _check_debug(server)),
    ]


def _run(name: str, where: str, body: Callable[[], None]) -> PowerIssue | None:
    """One check's outcome; like the official checker, a check stops at its first problem."""
    try:
        body()
    except _Fail as failure:
        return PowerIssue(name, str(failure))
    except _Warn as warning:
        return PowerIssue(name, str(warning), warning=True)
    except _CONTENT_ERRORS as error:
        return PowerIssue(name, f"{where}: unexpected content ({_describe(error)})")
    return None


def _describe(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"field {error.args[0]!r} is missing" if error.args else "a field is missing"
    if isinstance(error, IndexError):
        return "a list is shorter than expected"
    if isinstance(error, TypeError | AttributeError):
        return f"a value has the wrong type: {error}"
    return f"{type(error).__name__}: {error}"


# ---------------------------------------------------------------------------------------------------
# Reading files as the official checker does: UTF-8 text mode (universal newlines).


def _text_reader(files: Mapping[str, bytes], path: str) -> io.TextIOWrapper:
    if path not in files:
        raise _Fail(f"{path} is missing")
    return io.TextIOWrapper(io.BytesIO(files[path]), encoding="utf-8")


def _lines(files: Mapping[str, bytes], path: str) -> Iterator[str]:
    """The lines of a file, read lazily as `for line in open(path)` reads them."""
    try:
        yield from _text_reader(files, path)
    except UnicodeDecodeError:
        raise _Fail(f"{path} is not UTF-8 text") from None


def _load_session(files: Mapping[str, bytes], path: str, rules: PowerRules) -> _Session | PowerIssue:
    """client.json or server.json with the fields every check reads, or why it cannot be used."""
    try:
        data = json.loads(_text_reader(files, path).read())
    except _Fail as failure:
        return PowerIssue("session", str(failure))
    except UnicodeDecodeError:
        return PowerIssue("session", f"{path} is not UTF-8 text")
    except (ValueError, RecursionError) as error:
        return PowerIssue("session", f"{path} is not valid JSON ({error})")
    if not isinstance(data, dict):
        return PowerIssue("session", f"{path} is not a JSON object but {type(data).__name__}")
    absent = [name for name in rules.session_required_fields if name not in data]
    if absent:
        return PowerIssue("session", f"{path} lacks the required fields {', '.join(absent)}")
    return _Session(path, data)


# TIME_FORMAT as datetime.strptime reads it (its per-directive patterns, whitespace as \s+, any case, the
# whole text), compiled once: strptime itself costs most of checking a power run's hour of PTD logs.
_TIME = re.compile(
    r"(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])-(\d\d\d\d)\s+"
    r"(2[0-3]|[0-1]\d|\d):([0-5]\d|\d):(6[0-1]|[0-5]\d|\d)\.([0-9]{1,6})",
    re.IGNORECASE | re.ASCII,
)


def strptime(text: str) -> datetime:
    """datetime.strptime(text, TIME_FORMAT), faster; a ValueError where strptime raises one."""
    found = _TIME.fullmatch(text)
    if found is None:
        raise ValueError(f"time data {text!r} does not match format {TIME_FORMAT!r}")
    month, day, year, hour, minute, second, fraction = found.groups()
    return datetime(
        int(year), int(month), int(day), int(hour), int(minute), int(second), int(fraction.ljust(6, "0"))
    )


def _parse_time(text: str, path: str) -> float:
    """Seconds since the epoch of a logged local time, read as UTC (as the official checker reads it)."""
    try:
        moment = strptime(text)
    except ValueError:
        raise _Fail(f"{path}: {text!r} is not a time in the format {TIME_FORMAT!r}") from None
    return moment.replace(tzinfo=UTC).timestamp()


def _line_time(line: str, pattern: re.Pattern[str], path: str) -> float | None:
    """The time a line carries, None when it has none; a time that does not parse fails the check."""
    found = pattern.search(line)
    if not found or not found.group(0):
        return None
    return _parse_time(found.group(0), path)


def _required_line_time(line: str, pattern: re.Pattern[str], path: str) -> float:
    moment = _line_time(line, pattern, path)
    if moment is None:
        raise _Fail(f"{path}: no time in the line {line.strip()!r}")
    return moment


def _power_window(files: Mapping[str, bytes], run: str) -> tuple[float, float]:
    """The detail log's power_begin and power_end times, from the first lines that name them."""
    path = f"{run}/mlperf_log_detail.txt"
    begin: float | None = None
    end: float | None = None
    for line in _lines(files, path):
        lowered = line.lower()
        if "power_begin" in lowered:
            begin = _required_line_time(line, _DETAIL_LOG_TIME, path)
        elif "power_end" in lowered:
            end = _required_line_time(line, _DETAIL_LOG_TIME, path)
        # Truthiness, not `is not None`, as the official loop: a time of 0.0 keeps it reading.
        if begin and end:
            break
    if begin is None:
        raise _Fail(f"{path}: no power_begin time")
    if end is None:
        raise _Fail(f"{path}: no power_end time")
    return begin, end


# ---------------------------------------------------------------------------------------------------
# The checks, each raising _Fail or _Warn at its first problem.


def _check_sources(session: _Session, rules: PowerRules) -> None:
    sources = session.data["sources"]
    if sources in rules.sources:
        return
    raise _Fail(
        f"{session.path}: the sha1 sums of the mlcommons/power sources match no accepted release"
        f"{_sources_difference(sources, rules.sources)}"
    )


def _sources_difference(sources: object, accepted: Sequence[Mapping[str, str]]) -> str:
    if not isinstance(sources, dict):
        return f" ('sources' is {type(sources).__name__}, not an object)"
    if not accepted:
        return ""
    differing = [
        sorted(name for name in {*sources, *reference} if sources.get(name) != reference.get(name))
        for reference in accepted
    ]
    return f" (files differing from the closest release: {', '.join(min(differing, key=len))})"


def _check_ptd_messages(server: _Session, rules: PowerRules) -> None:
    messages = server.data["ptd_messages"]
    identify = _first_reply(messages, "Identify")
    if len(identify) == 0:
        raise _Fail(f"{server.path}: no reply to PTD's 'Identify' command")
    model = identify.split(",")[0]
    found = _PTD_VERSION.search(identify)
    version = "" if found is None else found.group(1)
    if version not in rules.ptd_versions:
        raise _Fail(f"{server.path}: PTD version {version!r} is not one of {', '.join(rules.ptd_versions)}")
    if model not in rules.meter_models:
        raise _Fail(f"{server.path}: power meter {model!r} is not one of {', '.join(rules.meter_models)}")
    _check_replies(messages, "SR,A", RANGE_A_REPLY, server.path)
    _check_replies(messages, "SR,V", RANGE_V_REPLY, server.path)
    _check_replies(messages, GO_COMMAND_PREFIX, GO_REPLY, server.path)
    _check_replies(messages, "Stop", STOP_REPLY, server.path)
    _check_initial_ranges_restored(messages, server.path)


def _first_reply(messages: Sequence[Mapping[str, Any]], command: str) -> Any:
    for message in messages:
        if message["cmd"] == command:
            return message["reply"]
    return ""


def _check_replies(messages: Sequence[Mapping[str, Any]], prefix: str, expected: str, path: str) -> None:
    stops = 0
    for message in messages:
        command = message["cmd"]
        if not command.startswith(prefix):
            continue
        if command == "Stop":
            # The client's cleanup Stop, the third, finds no measurement; so does any Stop after it.
            if stops == 2:
                expected = STOP_AGAIN_REPLY
            stops += 1
        if expected != message["reply"]:
            raise _Fail(f"{path}: PTD replied {message['reply']!r} to {command!r}, expected {expected!r}")


def _check_initial_ranges_restored(messages: Sequence[Mapping[str, Any]], path: str) -> None:
    """After the test the server sets the meter back to the ranges PTD reported at the start."""
    # The third PTD message is the server's RR (read ranges): "Ranges,<A auto>,<A>,<V auto>,<V>".
    ranges = messages[2]["reply"]
    amps = _initial_range(ranges, 1, path)
    volts = _initial_range(ranges, 3, path)
    # The restoring SR,A is the third or the fourth, but the official checker needs both to exist.
    amps_third = _nth_command(messages, "SR,A", 3, path)
    amps_fourth = _nth_command(messages, "SR,A", 4, path)
    volts_third = _nth_command(messages, "SR,V", 3, path)
    if f"SR,A,{amps}" not in (amps_third, amps_fourth):
        raise _Fail(
            f"{path}: the amps range was not set back to its initial value: expected 'SR,A,{amps}', "
            f"got {amps_third!r} and {amps_fourth!r}"
        )
    if volts_third != f"SR,V,{volts}":
        raise _Fail(
            f"{path}: the volts range was not set back to its initial value: expected 'SR,V,{volts}', "
            f"got {volts_third!r}"
        )


def _initial_range(reply: str, index: int, path: str) -> str:
    fields = reply.split(",")
    try:
        if fields[index] == "0" and float(fields[index + 1]) > 0:
            return fields[index + 1]
    except (ValueError, IndexError):
        raise _Fail(f"{path}: cannot read the power meter's initial ranges from {reply!r}") from None
    return "Auto"


def _nth_command(messages: Sequence[Mapping[str, Any]], prefix: str, number: int, path: str) -> str:
    count = 0
    for message in messages:
        if message["cmd"].startswith(prefix):
            count += 1
            if count == number:
                return message["cmd"]
    raise _Fail(f"{path}: there is no command number {number} starting with {prefix!r} (found {count})")


def _check_uuid(client: _Session, server: _Session) -> None:
    for role in ("client", "server"):
        client_id = _uuid(client.data["uuid"][role], client.path, role)
        server_id = _uuid(server.data["uuid"][role], server.path, role)
        if client_id != server_id:
            raise _Fail(
                f"the {role} uuid differs: {client_id} in {client.path}, {server_id} in {server.path}"
            )


def _uuid(value: Any, path: str, role: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise _Fail(f"{path}: the {role} uuid {value!r} is not a UUID") from None


def _check_session_name(client: _Session, server: _Session) -> None:
    client_name = client.data["session_name"]
    server_name = server.data["session_name"]
    if client_name != server_name:
        raise _Fail(
            f"the session name differs: {client_name!r} in {client.path}, {server_name!r} in {server.path}"
        )


def _check_phases(ctx: _Context) -> None:
    """Clocks agree, loadgen ran inside each phase, testing is neither much shorter nor lower than ranging."""
    client_phases = ctx.client.data["phases"]
    server_phases = ctx.server.data["phases"]
    client_ranging, client_testing = client_phases["ranging"], client_phases["testing"]
    server_ranging, server_testing = server_phases["ranging"], server_phases["testing"]
    _compare_phase_times(client_ranging, server_ranging, "ranging", ctx.rules.time_tolerance_ms)
    _compare_phase_times(client_testing, server_testing, "testing", ctx.rules.time_tolerance_ms)
    ranging_begin, ranging_end = _power_window(ctx.files, RANGING_RUN)
    testing_begin, testing_end = _power_window(ctx.files, TESTING_RUN)
    _check_within_phase(ranging_begin, ranging_end, client_ranging, RANGING_RUN)
    _check_within_phase(testing_begin, testing_end, client_testing, TESTING_RUN)
    _check_durations(ranging_end - ranging_begin, testing_end - testing_begin, ctx.rules)
    _check_power_drop(ctx)


def _compare_phase_times(client: Sequence[Any], server: Sequence[Any], mode: str, tolerance_ms: int) -> None:
    if len(client) != len(server):
        raise _Fail(f"{CLIENT_JSON} has {len(client)} {mode} phases, {SERVER_JSON} has {len(server)}")
    for index in range(len(client)):
        difference = abs(client[index][0] - server[index][0])
        if not difference <= tolerance_ms / 1000:
            raise _Fail(
                f"{CLIENT_JSON} and {SERVER_JSON}: phase {index + 1} of the {mode} mode starts "
                f"{difference * 1000} ms apart, more than {tolerance_ms} ms"
            )


def _check_within_phase(begin: float, end: float, phases: Sequence[Any], run: str) -> None:
    start, stop = phases[1][0], phases[2][0]
    for label, moment in (("power_begin", begin), ("power_end", end)):
        if not (start < moment < stop or start < moment - DST_WORKAROUND_S < stop):
            raise _Fail(
                f"{run}/mlperf_log_detail.txt: {label} {_utc_text(moment)} is outside the {run} phase of "
                f"{CLIENT_JSON} ({_utc_text(start)} to {_utc_text(stop)}, nor an hour earlier)"
            )


def _utc_text(moment: Any) -> str:
    try:
        return datetime.fromtimestamp(moment, tz=UTC).strftime(TIME_FORMAT)
    except _CONTENT_ERRORS:
        return repr(moment)


def _check_durations(ranging_s: float, testing_s: float, rules: PowerRules) -> None:
    if ranging_s == 0:
        raise _Fail(f"{RANGING_RUN}/mlperf_log_detail.txt: power_begin and power_end are the same time")
    shortfall = (ranging_s - testing_s) / ranging_s
    if shortfall > rules.max_duration_shortfall:
        raise _Warn(
            f"run_1/mlperf_log_detail.txt: the testing run ({round(testing_s, 2)} s) is "
            f"{round(shortfall * 100, 2)}% shorter than the ranging run ({round(ranging_s, 2)} s), "
            f"more than {rules.max_duration_shortfall * 100:g}%"
        )


def _check_power_drop(ctx: _Context) -> None:
    ranging_watts, ranging_pf = _mean_power(ctx.files, RANGING_RUN)
    testing_watts, testing_pf = _mean_power(ctx.files, TESTING_RUN)
    ranging_watts, testing_watts = round(ranging_watts, 5), round(testing_watts, 5)
    ranging_pf, testing_pf = round(ranging_pf, 5), round(testing_pf, 5)
    if ranging_watts == 0:
        raise _Fail(f"{RANGING_RUN}/spl.txt: the average ranging power rounds to 0 W")
    # A run without samples averages -1 W, so two empty runs pass and one empty run fails.
    delta = round((testing_watts / ranging_watts - 1) * 100, 2)
    if not delta > -ctx.rules.max_power_drop_percent:
        raise _Fail(
            f"{TESTING_RUN}/spl.txt: the average testing power ({testing_watts} W, power factor "
            f"{testing_pf}) is {delta}% from the ranging power ({ranging_watts} W, power factor "
            f"{ranging_pf}), more than {ctx.rules.max_power_drop_percent:g}% lower"
        )


def _mean_power(files: Mapping[str, bytes], run: str) -> tuple[float, float]:
    """Mean positive watts and power factor of spl.txt's samples strictly inside the run's power window
    (-1.0 for none)."""
    begin, end = _power_window(files, run)
    begin_utc = datetime.fromtimestamp(begin, tz=UTC)
    end_utc = datetime.fromtimestamp(end, tz=UTC)
    path = f"{run}/spl.txt"
    watts: list[float] = []
    factors: list[float] = []
    for number, line in enumerate(_lines(files, path), start=1):
        if not line.startswith("Time"):
            continue
        fields = line.split(",")
        try:
            moment = strptime(fields[1]).replace(tzinfo=UTC)
            # Only samples inside the window need readable watts (field 3) and power factor (field 9).
            if begin_utc < moment < end_utc:
                sample, factor = float(fields[3]), float(fields[9])
                if sample > 0:
                    watts.append(sample)
                if factor > 0:
                    factors.append(factor)
        except (IndexError, ValueError):
            raise _Fail(f"{path} line {number} cannot be read: {line.strip()!r}") from None
    return _mean_or_none(watts), _mean_or_none(factors)


def _mean_or_none(values: list[float]) -> float:
    return sum(values) / len(values) if values else -1.0


def _check_messages(client: _Session, server: _Session) -> None:
    """The server logged the same commands and replies as the client, and both speak one protocol version."""
    client_messages = client.data["messages"]
    server_messages = server.data["messages"]
    if len(client_messages) != len(server_messages):
        raise _Fail(
            f"{client.path} has {len(client_messages)} messages, {server.path} has {len(server_messages)}"
        )
    for index, (sent, logged) in enumerate(zip(client_messages, server_messages, strict=True)):
        if sent["cmd"] != logged["cmd"]:
            raise _Fail(
                f"message {index}: the client sent {sent['cmd']!r} ({client.path}), "
                f"the server logged {logged['cmd']!r} ({server.path})"
            )
        # `time` replies are each side's own clock.
        if sent["cmd"] != "time" and sent["reply"] != logged["reply"]:
            raise _Fail(
                f"message {index} ({sent['cmd']!r}): the client got {sent['reply']!r} ({client.path}), "
                f"the server logged {logged['reply']!r} ({server.path})"
            )
    hello = server_messages[0]
    client_version = _protocol_version(_CLIENT_VERSION, hello["cmd"], server.path)
    server_version = _protocol_version(_SERVER_VERSION, hello["reply"], server.path)
    if client_version != server_version:
        raise _Fail(f"{server.path}: client protocol v{client_version} but server protocol v{server_version}")


def _protocol_version(pattern: re.Pattern[str], text: Any, path: str) -> str:
    found = pattern.search(text)
    if found is None:
        raise _Fail(f"{path}: no mlcommons/power version in the first message {text!r}")
    return found.group(1)


def _check_results(ctx: _Context) -> None:
    """The sha1 sums client.json and server.json recorded agree with each other and with the files."""
    required = [path for path in ctx.rules.result_files if path not in (CLIENT_JSON, SERVER_JSON)]
    actual = {path: hashlib.sha1(data).hexdigest() for path, data in ctx.files.items()}
    # The descriptors cannot record their own sums; optional files are not checked.
    actual = _only(actual, required)
    by_server = _only(ctx.server.data["results"], required)
    by_client = _only(ctx.client.data["results"], required)
    _same_sums(by_server, by_client, f"{SERVER_JSON} and {CLIENT_JSON} record different sums")
    recorded = {**by_client, **by_server}
    missing = sorted(recorded.keys() - actual.keys())
    if missing:
        raise _Fail(f"recorded in {CLIENT_JSON}/{SERVER_JSON} but absent: {', '.join(missing)}")
    extra = sorted(actual.keys() - recorded.keys())
    if extra:
        raise _Fail(f"present but recorded in neither {CLIENT_JSON} nor {SERVER_JSON}: {', '.join(extra)}")
    _same_sums(recorded, actual, "the files changed since the session recorded their sha1 sums")
    absent = sorted(set(required) - recorded.keys())
    if absent:
        raise _Fail(f"required files absent from the session and from performance/: {', '.join(absent)}")


def _only(sums: Mapping[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    return {path: value for path, value in sums.items() if path in paths}


def _same_sums(expected: Mapping[str, Any], found: Mapping[str, Any], summary: str) -> None:
    differing = [path for path in expected if path in found and expected[path] != found[path]]
    if differing:
        details = "; ".join(f"{path}: {expected[path]} vs {found[path]}" for path in differing)
        raise _Fail(f"{summary}: {details}")


def _check_ptd_log(ctx: _Context) -> None:
    """PTD checked its uncertainty before ranging, and logged no error or warning the Power WG rejects."""
    server = ctx.server.data
    ranging_mark = f"{server['session_name']}_ranging"
    load_begin, load_end = _power_window(ctx.files, TESTING_RUN)
    int(server["timezone"])  # the official checker reads it (and fails on a non-number) though it is unused
    lines = list(_lines(ctx.files, PTD_LOGS))
    ranging_begin, ranging_end = _ranging_times(lines, ranging_mark)
    _check_uncertainty_activated(lines, ranging_begin)
    for line in lines:
        _judge_warning(line, load_begin, load_end, ctx.rules)
        _judge_error(line, ranging_begin, ranging_end, ctx.rules)


def _ranging_times(lines: Sequence[str], ranging_mark: str) -> tuple[float, float]:
    """When PTD started the ranging measurement (its mark) and completed it."""
    go_line = f": Go with mark {ranging_mark!r}"
    begin: float | None = None
    end: float | None = None
    for line in lines:
        message = _ptd_message(line)
        if message is None:
            continue
        if not begin and message == go_line:
            begin = _required_line_time(line, _PTD_LOG_TIME, PTD_LOGS)
        if not end and begin and message == COMPLETED_TEST:
            end = _required_line_time(line, _PTD_LOG_TIME, PTD_LOGS)
            break
    if begin is None or end is None:
        raise _Fail(f"{PTD_LOGS}: no {go_line.lstrip(': ')!r} followed by {COMPLETED_TEST.lstrip(': ')!r}")
    return begin, end


def _ptd_message(line: str) -> str | None:
    """A PTD log line without its time; a line without a time is its own message, whole."""
    if _line_time(line, _PTD_LOG_TIME, PTD_LOGS) is None:
        return line
    found = _PTD_LOG_MESSAGE.search(line)
    return None if found is None else found.group(0).strip()


def _check_uncertainty_activated(lines: Sequence[str], ranging_begin: float) -> None:
    for line in lines:
        if _UNCERTAINTY_ACTIVATED.search(line) is None:
            continue
        moment = _line_time(line, _PTD_LOG_TIME, PTD_LOGS)
        if moment is None:
            raise _Fail(f"{PTD_LOGS}: no time on the line {line.strip()!r}")
        if not moment < ranging_begin:
            raise _Fail(f"{PTD_LOGS}: uncertainty checking was activated after the ranging run started")
        return  # the first such line decides
    raise _Fail(f"{PTD_LOGS}: no line 'Uncertainty checking for Yokogawa... is activated'")


def _judge_warning(line: str, load_begin: float, load_end: float, rules: PowerRules) -> None:
    found = _PTD_WARNING.search(line)
    if not found or not found.group(0):
        return
    moment = _required_line_time(line, _PTD_LOG_TIME, PTD_LOGS)
    # The official checker adds the tolerance in milliseconds to times in seconds: only warnings more than
    # 800 s inside the testing run count.
    margin = rules.time_tolerance_ms
    if not load_begin + margin < moment < load_end - margin:
        return
    if re.search(rules.testing_uncertainty_error, found.group(0).strip()):
        raise _Fail(f"{PTD_LOGS}: {line.strip()!r} during the testing run")
    raise _Warn(f"{PTD_LOGS}: {line.strip()!r} during the testing run")


def _judge_error(line: str, ranging_begin: float, ranging_end: float, rules: PowerRules) -> None:
    found = _PTD_ERROR.search(line)
    if not found or not found.group(0):
        return
    moment = _required_line_time(line, _PTD_LOG_TIME, PTD_LOGS)
    error = found.group(0).strip()
    if error in rules.testing_tolerated_errors:
        raise _Warn(f"{PTD_LOGS}: {line.strip()!r} is tolerated (treated as a warning)")
    if not ranging_begin < moment < ranging_end:
        raise _Fail(f"{PTD_LOGS}: {line.strip()!r} outside the ranging run")
    if not any(error.startswith(tolerated) for tolerated in rules.ranging_tolerated_errors):
        raise _Warn(f"{PTD_LOGS}: {line.strip()!r} during the ranging run (treated as a warning)")


def _check_ptd_config(server: _Session, rules: PowerRules) -> None:
    for analyzer in server.data["ptd_config"]:
        device = analyzer["device_type"]
        if device not in rules.meter_models.values():
            known = ", ".join(str(number) for number in sorted(set(rules.meter_models.values())))
            raise _Fail(f"{server.path}: PTD device type {device!r} is not one of {known}")
        if device in rules.multichannel_device_types:
            _check_multichannel(analyzer, device, server.path, rules)


def _check_multichannel(analyzer: Mapping[str, Any], device: Any, path: str, rules: PowerRules) -> None:
    command = analyzer["command"]
    channels = ""
    for index in range(len(command)):
        if command[index] == "-c":
            channels = command[index + 1]
            break
    if not (len(channels.split(",")) == 2 and analyzer["channel"] and len(analyzer["channel"]) == 2):
        model = next((name for name, number in rules.meter_models.items() if number == device), "")
        raise _Fail(f"{path}: {model} (device type {device}) must measure two channels, got {channels!r}")


def _check_debug(server: _Session) -> None:
    # Only JSON false (or no field) passes: 0 does not, as in the official identity test.
    if server.data.get("debug", False) is not False:
        raise _Fail(f"{server.path}: the server ran in debug mode (debug = {server.data['debug']!r})")


# ---------------------------------------------------------------------------------------------------
# The power metric of summary.csv.

_WATTS_SCENARIOS = (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)


def power_metric(
    power_begin: object,
    power_end: object,
    spl_text: str,
    scenario: Scenario,
    logged_scenario: object,
    result_query_count: object,
) -> float | PowerIssue:
    """Watts for Offline/Server/Interactive (mean of positive spl samples strictly between begin and end);
    millijoules per query for SingleStream/MultiStream, as the official checker computes it (incl. MultiStream
    inferred from a SingleStream log). power_begin/power_end are the detail log's values
    ("%m-%d-%Y %H:%M:%S.%f")."""
    try:
        begin = _naive_time(power_begin, "power_begin")
        end = _naive_time(power_end, "power_end")
        watts = _window_watts(spl_text, begin, end)
    except _Fail as failure:
        return PowerIssue("metric", str(failure))
    if not watts:
        return PowerIssue(
            "metric", f"{TESTING_RUN}/spl.txt has no positive power sample between {begin} and {end}"
        )
    average = sum(watts) / len(watts)
    if scenario in _WATTS_SCENARIOS:
        return average
    return _energy_per_query(
        average, (end - begin).total_seconds(), scenario, logged_scenario, result_query_count
    )


def _naive_time(value: object, key: str) -> datetime:
    if not isinstance(value, str):
        raise _Fail(f"{TESTING_RUN}/mlperf_log_detail.txt: {key} is {value!r}, not a time")
    try:
        return strptime(value)
    except ValueError:
        raise _Fail(
            f"{TESTING_RUN}/mlperf_log_detail.txt: {key} {value!r} is not in the format {TIME_FORMAT!r}"
        ) from None


def _window_watts(spl_text: str, begin: datetime, end: datetime) -> list[float]:
    """Positive watts of spl.txt's samples strictly between begin and end (every sample's time must parse)."""
    watts: list[float] = []
    for number, line in enumerate(io.StringIO(spl_text, newline=None), start=1):
        if not line.startswith("Time"):
            continue
        fields = line.split(",")
        try:
            moment = strptime(fields[1])
            if begin < moment < end and (sample := float(fields[3])) > 0:
                watts.append(sample)
        except (IndexError, ValueError):
            raise _Fail(f"{TESTING_RUN}/spl.txt line {number} cannot be read: {line.strip()!r}") from None
    return watts


def _energy_per_query(
    average: float, duration_s: float, scenario: Scenario, logged_scenario: object, result_query_count: object
) -> float | PowerIssue:
    """Millijoules per query, with the official checker's float operations in its order."""
    try:
        queries = int(result_query_count)
    except (TypeError, ValueError, OverflowError):
        return PowerIssue("metric", f"result_query_count {result_query_count!r} is not a number of queries")
    inferred = False
    if scenario is Scenario.MULTI_STREAM:
        if not isinstance(logged_scenario, str):
            return PowerIssue("metric", f"the detail log's effective_scenario is {logged_scenario!r}")
        inferred = logged_scenario.lower() == Scenario.SINGLE_STREAM.lower()
    try:
        if inferred:
            return average * duration_s * MULTISTREAM_SAMPLES_PER_QUERY * 1000 / queries
        return average * duration_s * 1000 / queries
    except (ZeroDivisionError, OverflowError) as error:
        return PowerIssue("metric", f"cannot divide by result_query_count {queries}: {error}")
