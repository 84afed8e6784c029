"""Results in the endpoints format (config.yaml, JSON summaries, audit files) read as the official checker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from submitter.fileformats.mlperf_log import DetailLog, LogRecord
from submitter.fileio import YamlAliasError, json_error_reason, load_json_text, load_yaml_text


class _Field(NamedTuple):
    """Where the official checker looks for one LoadGen key in an endpoints result."""

    key: str  # the LoadGen key it files the value under
    path: str  # dotted path tried in the JSON file, then (after `yaml_path`) in config.yaml
    json_alt: str | None = None  # tried in the JSON file when `path` finds nothing there
    yaml_path: str | None = None  # tried in config.yaml before `path`


# The endpoints format's field names, as the official checker maps them (its ENDPOINTS_MAPPINGS, with the
# alternative JSON paths of ENDPOINTS_JSON_ALT_PATHS and the config.yaml paths of ENDPOINTS_YAML_FIELD_MAP
# folded in). Two entries of its alternative-path table name no mapped field ("results.qps",
# "generated_query_duration"), so they never take effect and are left out. Order is the official order.
FIELDS: tuple[_Field, ...] = (
    _Field("loadgen_version", "endpoints_version", yaml_path="version"),
    _Field("loadgen_git_commit_date", "endpoints_git_commit_date"),
    _Field("loadgen_git_commit_hash", "endpoints_git_commit_hash", json_alt="git_sha"),
    _Field("test_datetime", "test_datetime", json_alt="test_started_at"),
    _Field("qsl_reported_total_count", "n_samples_issued"),
    _Field("qsl_reported_performance_count", "n_samples_from_dataset", json_alt="n_samples_issued"),
    _Field("effective_scenario", "effective_scenario", yaml_path="type"),
    _Field("effective_test_mode", "mode"),
    _Field("streaming", "streaming", yaml_path="model_params.streaming"),
    _Field("min_output_tokens", "output_sequence_lengths.min"),
    _Field("max_output_tokens", "output_sequence_lengths.max"),
    _Field("load_pattern", "load_pattern", yaml_path="settings.load_pattern.type"),
    _Field("effective_min_duration_ms", "min_duration_ms", yaml_path="settings.runtime.min_duration_ms"),
    _Field("effective_max_duration_ms", "max_duration_ms", yaml_path="settings.runtime.max_duration_ms"),
    _Field("effective_target_duration_ms", "effective_target_duration_ms"),
    _Field("effective_min_query_count", "min_sample_count", yaml_path="settings.runtime.n_samples_to_issue"),
    _Field(
        "effective_sample_index_rng_seed",
        "effective_sample_index_rng_seed",
        yaml_path="settings.runtime.dataloader_random_seed",
    ),
    _Field(
        "effective_schedule_rng_seed",
        "effective_schedule_rng_seed",
        yaml_path="settings.runtime.scheduler_random_seed",
    ),
    _Field("effective_sample_concatenate_permutation", "effective_sample_concatenate_permutation"),
    _Field("effective_samples_per_query", "effective_samples_per_query"),
    _Field("generated_query_count", "generated_query_count", json_alt="n_samples_issued"),
    _Field("generated_query_duration", "duration_ns"),
    _Field("effective_target_qps", "target_qps", yaml_path="settings.load_pattern.target_qps"),
    _Field("result_scheduled_samples_per_sec", "result_scheduled_samples_per_sec"),
    _Field("result_completed_samples_per_sec", "qps"),
    _Field("effective_target_latency_ns", "effective_target_latency_ns"),
    _Field("effective_target_latency_percentile", "effective_target_latency_percentile"),
    _Field("result_min_latency_ns", "latency.min"),
    _Field("result_max_latency_ns", "latency.max"),
    _Field("result_mean_latency_ns", "latency.avg"),
    *(
        _Field(f"result_{p}0_percentile_latency_ns", f"latency.early_stopping_percentiles.{p}")
        for p in ("50.0", "90.0", "95.0", "99.0", "99.9")
    ),
    _Field("result_first_token_min_latency_ns", "ttft.min"),
    _Field("result_first_token_max_latency_ns", "ttft.max"),
    _Field("result_first_token_mean_latency_ns", "ttft.avg"),
    *(
        _Field(f"result_first_token_{p}0_percentile_latency_ns", f"ttft.early_stopping_percentiles.{p}")
        for p in ("50.0", "90.0", "95.0", "99.0", "99.9")
    ),
    *(
        _Field(f"result_time_per_output_token_{p}0_percentile_ns", f"tpot.early_stopping_percentiles.{p}")
        for p in ("50.0", "90.0", "95.0", "99.0", "99.9")
    ),
    _Field("result_time_per_output_token_min", "tpot.min"),
    _Field("result_time_per_output_token_max", "tpot.max"),
    _Field("result_time_per_output_token_mean", "tpot.avg"),
    _Field("result_completed_tokens_per_second", "tps"),
    _Field("result_query_count", "result.total", json_alt="n_samples_completed"),
    _Field("num_errors", "result.failed", json_alt="n_samples_failed"),
    _Field("mean_output_tokens", "output_sequence_lengths.avg"),
)

# The primary metric by scenario when the files do not state it: count / duration (RESULT_FIELD_ENDPOINTS).
OFFLINE_QPS_KEY = "result_samples_per_second"
SERVER_QPS_KEY = "result_completed_samples_per_sec"

# Said of content the official parser raises on (its checker stops): here a problem, and the value left out.
_STOPS = " (the official checker stops here)"
_UNREADABLE = object()  # what the readers return for text that does not parse (None is JSON's null)


@dataclass(frozen=True)
class EndpointsResult:
    """One scenario folder's performance and accuracy values, as two LoadGen-style logs."""

    performance: DetailLog  # records keyed by the LoadGen key names the official mapping yields (line=0)
    accuracy: DetailLog
    accuracy_scores: tuple[object, ...]  # each "score" of accuracy_scores, in file order
    problems: tuple[str, ...]  # missing/unreadable/malformed files and content the official checker stops at


@dataclass(frozen=True)
class AuditOutcome:
    """One audit/audit_<name>.json, judged in the official order: unreadable, then test name, then passed.

    `test` is the file's test name (a non-text name as its repr, which no expected name equals);
    `passed` is the truthiness of its "passed". `problem` ("path: reason") is set whenever either could
    not be read; a file whose "passed" is missing still names its test, so that a wrong name is
    reported first, as the official checker reports it.
    """

    test: str | None
    passed: bool | None
    problem: str | None


def read_endpoints_result(
    config_text: str | None,
    result_summary_text: str | None,
    accuracy_results_text: str | None,
    path: str,
    *,
    config_name: str = "config.yaml",
    fallback_config_text: str | None = None,
) -> EndpointsResult:
    """The values the official EndpointsParser yields for one scenario folder, without touching the disk.

    Texts are the files as read (UTF-8, universal newlines), None where a file is missing or unreadable.
    `config_text` is config.yaml's (or, without one, config.yml's, with `config_name` saying so);
    `fallback_config_text` is config.yml's beside a config.yaml, which the official parser reads when
    config.yaml is not valid YAML.
    """
    problems: list[str] = []
    config = _config(
        config_text, fallback_config_text, f"{path}/{config_name}", f"{path}/config.yml", problems
    )
    summary = _read_json_object(result_summary_text, f"{path}/performance/result_summary.json", problems)
    results = _read_json_object(accuracy_results_text, f"{path}/accuracy/accuracy_results.json", problems)
    performance = _mapped_values(summary, config)
    _add_derived(performance, path, problems)
    accuracy, scores = _accuracy_values(results, config, path, problems)
    return EndpointsResult(
        _detail_log(performance, path),
        _detail_log(accuracy, path),
        tuple(scores),
        tuple(dict.fromkeys(problems)),  # config.yaml's troubles would otherwise come twice
    )


def _accuracy_values(
    results: dict[str, Any], config: dict[str, Any], path: str, problems: list[str]
) -> tuple[dict[str, Any], list[Any]]:
    """The accuracy log's values, in the official order, and every entry's score."""
    where = f"{path}/accuracy/accuracy_results.json"
    values = _mapped_values(results, config)
    entries = _accuracy_entries(results, where, problems)
    count = _accuracy_sample_count(entries, where, problems)
    if count is not None:
        values["effective_accuracy_sample_count"] = count
        values.setdefault("qsl_reported_total_count", count)  # a stated total count stays
    _add_derived(values, path, problems)
    scores = _scores(entries, where, problems)
    if scores:
        values["accuracy_score"] = scores[0]
    return values, scores


def read_audit(text: str | None, path: str) -> AuditOutcome:
    """An endpoints compliance audit file (`{"test": <name>, "passed": <bool>, ...}`), never raising."""
    if text is None:
        return AuditOutcome(None, None, f"{path}: missing")
    problems: list[str] = []
    data = _read_json(text, path, problems)
    if data is _UNREADABLE:
        return AuditOutcome(None, None, problems[0])
    if not isinstance(data, dict):
        return AuditOutcome(None, None, f"{path}: is not a JSON object")
    if "test" not in data:
        return AuditOutcome(None, None, f"{path}: has no 'test'")
    test = data["test"] if isinstance(data["test"], str) else _show(data["test"])
    if "passed" not in data:
        return AuditOutcome(test, None, f"{path}: has no 'passed'")
    # Truthiness, as the official `not test_file["passed"]`: the string "false" counts as passed.
    return AuditOutcome(test, bool(data["passed"]), None)


def _read_json(text: str, where: str, problems: list[str]) -> Any:
    try:
        return load_json_text(text)
    except (ValueError, RecursionError) as exc:  # syntax, nesting, an integer past int()'s digits
        problems.append(f"{where}: {json_error_reason(exc)}")
    return _UNREADABLE


def _read_json_object(text: str | None, where: str, problems: list[str]) -> dict[str, Any]:
    """The file's object; {} (what the official parser goes on with) where it is missing or unreadable."""
    if text is None:
        problems.append(f"{where}: missing")
        return {}
    data = _read_json(text, where, problems)
    if isinstance(data, dict):
        return data
    if data is not _UNREADABLE:
        # Lookups in a non-object find nothing, so {} changes no value; an accuracy_results.json that
        # is not an object stops the official parser (it calls .get on it).
        problems.append(f"{where}: is not a JSON object")
    return {}


def _config(
    text: str | None, fallback: str | None, where: str, fallback_where: str, problems: list[str]
) -> dict[str, Any]:
    """config.yaml, else config.yml where config.yaml is missing or not YAML (the official order)."""
    if text is None and fallback is not None:
        return _config(fallback, None, fallback_where, fallback_where, problems)
    config = _read_config(text, where, problems)
    if config is _UNREADABLE and fallback is not None:
        config = _read_config(fallback, fallback_where, problems)
    return {} if config is _UNREADABLE else config


def _read_config(text: str | None, where: str, problems: list[str]) -> Any:
    """The configuration's mapping, {} where the official parser goes on with {}, or _UNREADABLE."""
    if text is None:
        problems.append(f"{where}: missing")
        return {}
    try:
        data = load_yaml_text(text)  # PyYAML, imported there only when a tree holds YAML
    except YamlAliasError as exc:  # a value holding itself, or an alias bomb: no walk of it would end
        problems.append(f"{where}: cannot be read: {exc}")
        return _UNREADABLE
    except Exception as exc:  # PyYAML raises more than YAMLError (a 13th month is a ValueError)
        problems.append(f"{where}: is not valid YAML ({type(exc).__name__})")
        return _UNREADABLE
    if not data:  # the official `safe_load(f) or {}`
        return {}
    if not isinstance(data, dict):
        problems.append(f"{where}: is not a mapping")  # lookups find nothing in it, as in {}
        return {}
    return data


def _lookup(data: object, dotted: str) -> Any:
    """The value at a dotted path, None where absent or an empty dict/list.

    Each step takes the longest run of parts that is a key, so "99.9" and "50.0" are single keys; a
    scalar reached with one ".0" left over is the value (a percentile "50.0" written as key "50").
    """
    if not isinstance(data, dict):
        return None
    parts = dotted.split(".")
    node: Any = data
    start = 0
    while start < len(parts):
        if not isinstance(node, dict):
            return node if parts[start:] == ["0"] and not isinstance(node, list) else None
        end = next((e for e in range(len(parts), start, -1) if ".".join(parts[start:e]) in node), None)
        if end is None:
            return None
        node, start = node[".".join(parts[start:end])], end
    return None if isinstance(node, dict | list) and not node else node


def _resolve(field: _Field, data: dict[str, Any], config: dict[str, Any]) -> Any:
    """The JSON file wins over config.yaml; within each, the first path that finds a value."""
    for source, paths in ((data, (field.path, field.json_alt)), (config, (field.yaml_path, field.path))):
        for dotted in paths:
            value = _lookup(source, dotted) if dotted else None
            if value is not None:
                return value
    return None


def _mapped_values(data: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    values = {}
    for field in FIELDS:
        value = _resolve(field, data, config)
        if value is not None:
            values[field.key] = value
    return values


def _add_derived(values: dict[str, Any], path: str, problems: list[str]) -> None:
    """The inferred query count, the primary metric from count/duration, and num_errors' default."""
    # The official parser snapshots its keys before it infers the count, so QPS sees only a stated count.
    stated_count = values.get("generated_query_count")
    if "qsl_reported_total_count" in values:
        values.setdefault("generated_query_count", values["qsl_reported_total_count"])
    _infer_qps(values, stated_count, path, problems)
    values["num_errors"] = values.get("num_errors") or 0  # its num_errors(): a missing or falsy count is 0


def _infer_qps(values: dict[str, Any], count: Any, path: str, problems: list[str]) -> None:
    duration = values.get("generated_query_duration")
    scenario = values.get("effective_scenario")
    if not (duration and count and scenario):
        return
    if not isinstance(scenario, str | bytes):
        problems.append(f"{path}: the scenario {_show(scenario)} is not text{_STOPS}")
        return
    key = OFFLINE_QPS_KEY if scenario.lower() == "offline" else SERVER_QPS_KEY
    if key in values:
        return
    try:
        values[key] = count / (duration / 1e9)
    except (TypeError, ArithmeticError):
        problems.append(
            f"{path}: {_show(count)} queries in {_show(duration)} ns give no queries per second{_STOPS}"
        )


def _accuracy_entries(results: dict[str, Any], where: str, problems: list[str]) -> list[Any]:
    entries = results.get("accuracy_scores", [])
    if isinstance(entries, list):
        return entries
    if isinstance(entries, dict | str) and not entries:  # iterating it yields nothing, as in []
        return []
    problems.append(f"{where}: accuracy_scores is {_show(entries)}, not a list{_STOPS}")
    return []


def _accuracy_sample_count(entries: list[Any], where: str, problems: list[str]) -> int | None:
    """Samples summed over the accuracy datasets (gpt-oss has three); None where no entry states a count."""
    counts = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("dataset_type") not in (None, "accuracy"):
            continue
        try:
            count = _entry_count(entry)
        except (TypeError, ValueError, OverflowError):
            problems.append(f"{where}: accuracy_scores[{index}] states no integer sample count{_STOPS}")
            return None
        if count is not None:
            counts.append(count)
    return sum(counts) if counts else None


def _entry_count(entry: dict[str, Any]) -> int | None:
    """int() of total_samples, else of response_counts.issued; raises where the official parser stops."""
    stated = entry.get("total_samples")
    if stated is None:
        responses = entry.get("response_counts", {})
        if not isinstance(responses, dict):
            raise TypeError("response_counts is not an object")  # the official parser calls .get on it
        stated = responses.get("issued")
    return None if stated is None else int(stated)


def _scores(entries: list[Any], where: str, problems: list[str]) -> list[Any]:
    scores = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            problems.append(f"{where}: accuracy_scores[{index}] is {_show(entry)}, not an object{_STOPS}")
            continue
        if entry.get("score") is not None:
            scores.append(entry["score"])
    return scores


def _detail_log(values: dict[str, Any], path: str) -> DetailLog:
    return DetailLog(path, {key: LogRecord(key, 0, decoded=value) for key, value in values.items()})


def _show(value: object) -> str:
    """A short description of a value for a message; never raises (3.11 refuses to repr huge integers)."""
    if isinstance(value, dict | list | tuple | set):
        return f"a {type(value).__name__}"
    try:
        text = repr(value)
    except ValueError:
        return f"a huge {type(value).__name__}"
    return text if len(text) <= 60 else f"{text[:57]}..."
