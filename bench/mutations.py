"""A catalogue of realistic breakages of a submission tree, each applied to one file of a copy.

Used by `bench/parity.py --mutations N` to compare the two checkers' verdicts on broken copies of
published trees. Every mutation is a small, seeded change of the kind a submitter's tooling or hands
make: a file removed or emptied, a LoadGen record's value changed or dropped, an accuracy value moved
across its target, a verification line flipped, a system or measurements field emptied or retyped, a
scenario folder renamed, an extra file dropped beside the logs.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MLLOG = ":::MLLOG "
# LoadGen keys the checkers read, with values that break them in telling ways.
LOG_KEYS = (
    "effective_scenario",
    "result_validity",
    "effective_qsl_rng_seed",
    "effective_sample_index_rng_seed",
    "effective_schedule_rng_seed",
    "effective_performance_sample_count",
    "effective_min_duration_ms",
    "effective_min_query_count",
    "effective_samples_per_query",
    "early_stopping_met",
    "effective_target_latency_ns",
    "result_99.00_percentile_latency_ns",
    "requested_use_token_latencies",
    "effective_sample_concatenate_permutation",
    "result_first_token_99.00_percentile_latency_ns",
    "result_time_per_output_token_99.00_percentile_ns",
    "result_samples_per_second",
    "result_tokens_per_second",
    "result_completed_samples_per_sec",
    "result_completed_tokens_per_second",
    "early_stopping_latency_ss",
    "early_stopping_latency_ms",
    "qsl_reported_total_count",
    "effective_accuracy_sample_count",
    "loadgen_version",
    "sut_name",
)
SYSTEM_KEYS = (
    "status",
    "system_type",
    "division",
    "submitter",
    "number_of_nodes",
    "accelerators_per_node",
    "host_network_card_count",
    "cooling",
    "framework",
    "hw_notes",
    "sw_notes",
    "is_network",
    "system_name",
)
MEASUREMENT_KEYS = ("weight_data_types", "retraining", "input_data_types", "starting_weights_filename")


@dataclass(frozen=True)
class Mutation:
    kind: str
    path: str  # relative to the tree root
    detail: str

    def recipe(self) -> str:
        return f"{self.kind} {self.path}: {self.detail}"


def _rewrite(path: Path, content: str | bytes) -> None:
    """Replace the file, never write into it: staged trees hard-link their files to the original."""
    path.unlink()
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def _rewrite_new(path: Path) -> None:
    path.write_text("x", encoding="utf-8")


def _log_value(rng: random.Random, value: object) -> object:
    if isinstance(value, bool):
        return rng.choice([not value, None, str(value).lower()])
    if isinstance(value, int | float):
        return rng.choice([value * 0.5, value * 2, 0, -1, None, str(value), value + 1])
    if isinstance(value, str):
        return rng.choice(
            ["", value.lower(), value + "x", None, "Offline", "Server", "SingleStream", "INVALID"]
        )
    return None


def mutate_log(path: Path, rng: random.Random) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    indices = [
        i
        for i, line in enumerate(lines)
        if line.startswith(MLLOG) and any(f'"{k}"' in line for k in LOG_KEYS)
    ]
    if not indices:
        return "no known key"
    index = rng.choice(indices)
    try:
        record = json.loads(lines[index][len(MLLOG) :])
    except ValueError:
        return "unparseable line"
    action = rng.choice(["value", "value", "value", "drop", "error", "garble"])
    key = record.get("key")
    if action == "value":
        record["value"] = _log_value(rng, record.get("value"))
        lines[index] = MLLOG + json.dumps(record)
        detail = f"{key} := {record['value']!r}"
    elif action == "drop":
        del lines[index]
        detail = f"drop {key}"
    elif action == "error":
        metadata = {"is_error": True, "is_warning": False}
        lines.insert(
            index, MLLOG + json.dumps({"key": "error_runtime", "value": "boom", "metadata": metadata})
        )
        detail = "add an error record"
    else:
        lines[index] = lines[index][: len(lines[index]) // 2]
        detail = f"cut the {key} line in half"
    _rewrite(path, "\n".join(lines))
    return detail


def mutate_json(path: Path, rng: random.Random, keys: tuple[str, ...]) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return "unparseable"
    if not isinstance(data, dict):
        return "not an object"
    key = rng.choice(keys)
    action = rng.choice(["empty", "drop", "retype", "number", "text"])
    if action == "drop":
        data.pop(key, None)
    elif action == "empty":
        data[key] = ""
    elif action == "retype":
        data[key] = rng.choice([False, 0, [], {}, None])
    elif action == "number":
        data[key] = rng.choice([0, 1, 8, 1.5])
    else:
        data[key] = rng.choice(
            ["1 Integrated", "NA", "-", "Datacenter", "true", "false", "Available", "8 GPUs"]
        )
    _rewrite(path, json.dumps(data, indent=2))
    return f"{key} {action} -> {data.get(key)!r}"


def mutate_text(path: Path, rng: random.Random) -> str:
    """accuracy.txt and verify_*.txt: move a number, flip a verdict line, drop the hash."""
    text = path.read_text(encoding="utf-8", errors="replace")
    action = rng.choice(["number", "flip", "hash", "truncate"])
    if action == "number" and (numbers := list(re.finditer(r"\d+\.\d+|\d{3,}", text))):
        match = rng.choice(numbers)
        factor = rng.choice([0.9, 0.98, 0.995, 1.005, 1.2])
        new = f"{float(match.group()) * factor:.4f}"
        text = text[: match.start()] + new + text[match.end() :]
        detail = f"{match.group()} -> {new}"
    elif action == "flip" and ("True" in text or "PASS" in text):
        text = text.replace("True", "False", 1) if "True" in text else text.replace("PASS", "FAIL", 1)
        detail = "flip a verdict"
    elif action == "hash" and "hash=" in text:
        text = re.sub(r"hash=\w+", "", text)
        detail = "drop the hash line"
    else:
        text = text[: len(text) // 2]
        detail = "cut in half"
    _rewrite(path, text)
    return detail


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def apply(root: Path, tree: str, rng: random.Random) -> Mutation:
    """One random mutation of the tree at root/tree (division/submitter)."""
    base = root / tree
    files = _files(base / "results") + _files(base / "systems") + _files(base / "measurements")
    files += _files(base / "compliance") if (base / "compliance").is_dir() else []
    kinds: list[tuple[str, Callable[[], str], Path]] = []
    target = rng.choice(files)
    name = target.name
    if name == "mlperf_log_detail.txt":
        kinds.append(("log", lambda: mutate_log(target, rng), target))
    elif name.endswith(".json") and "systems" in target.parts:
        kinds.append(("system", lambda: mutate_json(target, rng, SYSTEM_KEYS), target))
    elif name == "measurements.json" or ("measurements" in target.parts and name.endswith(".json")):
        kinds.append(("measurements", lambda: mutate_json(target, rng, MEASUREMENT_KEYS), target))
    elif name in ("accuracy.txt",) or name.startswith("verify_"):
        kinds.append(("text", lambda: mutate_text(target, rng), target))
    kinds.append(("remove", lambda: (target.unlink(), "removed")[1], target))
    kinds.append(("empty", lambda: (_rewrite(target, b""), "emptied")[1], target))
    extra = target.parent / "notes.txt"
    kinds.append(
        ("extra", lambda: (extra.unlink(missing_ok=True), _rewrite_new(extra), "notes.txt added")[2], target)
    )
    folder = target.parent
    if (
        folder.name in ("Offline", "Server", "Interactive", "SingleStream", "MultiStream")
        and rng.random() < 0.3
    ):
        new = rng.choice(["offline", "server", "Interactive", "Server", "Offline"])
        if not folder.with_name(new).exists():  # a rename onto a sibling scenario would merge two results
            kinds.append(("rename", lambda: (folder.rename(folder.with_name(new)), f"-> {new}")[1], folder))
    if (
        target.parent.name in ("TEST01", "TEST04", "TEST06", "TEST07", "TEST08", "TEST09")
        and rng.random() < 0.3
    ):
        kinds.append(("remove-dir", lambda: (shutil.rmtree(target.parent), "removed")[1], target.parent))
    # The file's own kind of breakage (a log value, a JSON field, a verdict line) more often than not.
    kind, action, where = kinds[0] if rng.random() < 0.6 else rng.choice(kinds)
    detail = action()
    return Mutation(kind, where.relative_to(root).as_posix(), detail)
