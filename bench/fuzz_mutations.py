"""The fuzzer's catalogue: hostile and broken edits of a submission tree's copy, each one seeded function.

Used by `bench/fuzz.py`. Each mutation names the kind of target it takes (a file, a JSON object, a LoadGen
log, a folder, ...); `draw` picks a mutation and a target among the tree's own entries, weighted toward the
files checkers read, applies it and returns an `Applied` record; `replay` applies a record again on a
fresh copy (same target, same seed), which is how a failing case is reduced to one mutation.

Only the copy is touched: targets are regular files and real folders found without following symbolic
links, so a link a mutation made (to /dev/zero, to /) is never written through.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

MLLOG = ":::MLLOG "
# The files the checkers read; a target is drawn among them ten times as often as among the others.
KEY_FILES = frozenset(
    {
        "mlperf_log_detail.txt",
        "mlperf_log_summary.txt",
        "accuracy.txt",
        "measurements.json",
        "user.conf",
        "mlperf_log_accuracy.json",
    }
)
KEY_WEIGHT = 10
TEXT_SUFFIXES = frozenset({".txt", ".json", ".md", ".conf", ".yaml", ".yml", ".log", ".csv", ".html"})
MAX_READ = 64 * 1024 * 1024  # files larger than this are never read whole by a mutation
SENTINEL = "\u0000fuzz-sentinel\u0000"  # a JSON value that marks where raw text is spliced in
SENTINEL_JSON = json.dumps(SENTINEL)
DEEP_LOG_LIST = 20_000  # the nesting of an MLLOG value (RecursionError in the JSON decoder)
DEEP_JSON = 50_000  # the nesting of a measurements JSON
HUGE_DIGITS = 5_000  # over Python's 4300-digit limit of int(str)
DOUBLE_DIGITS = 309  # an integer this long, led by 2 to 9, is past the largest double (about 1.8e308)
HUGE_LINE = 20 * 1024 * 1024
SPARSE_SIZE = 64 * 1024**3
PATH_MAX = 4096
NAME_MAX = 255
MAX_TARGET_DEPTH = 16  # targets lie at most this deep below the submitter folder (not in a deep nesting)
OPTION_NAMES = ("--help", "-rf", "-h", "--version", "-", "--out=x", "--json")


class Target(Enum):
    FILE = "a regular file"
    TEXT = "a non-empty text file"
    JSON = "a JSON file holding an object"
    MEASUREMENTS = "a measurements JSON"
    SYSTEM = "a system description (systems/*.json)"
    MLLOG = "a LoadGen detail log with :::MLLOG records"
    LOG = "mlperf_log_detail.txt or mlperf_log_accuracy.json"
    DIR = "a folder below the submitter folder"
    PLACE = "a folder, the submitter folder included"
    RESULT_DIR = "a folder of a result (results/SYSTEM/BENCHMARK/SCENARIO or below)"


Apply = Callable[[Path, random.Random], str]


@dataclass(frozen=True)
class Mutation:
    name: str
    target: Target
    summary: str
    apply: Apply


@dataclass(frozen=True)
class Applied:
    """A mutation as applied: enough to apply it again on a fresh copy."""

    name: str
    target: str  # relative to the submitter folder, POSIX form; "." for the folder itself
    seed: int
    detail: str

    def recipe(self) -> str:
        return f"{self.name} {self.target} (seed {self.seed}): {self.detail}"


CATALOGUE: dict[str, Mutation] = {}


def mutation(name: str, target: Target, summary: str) -> Callable[[Apply], Apply]:
    def register(function: Apply) -> Apply:
        CATALOGUE[name] = Mutation(name, target, summary, function)
        return function

    return register


# --- finding targets ----------------------------------------------------------------------------------


def walk(root: Path, max_depth: int | None = None) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry below root (not root) down to max_depth levels, without following links, in a fixed
    order; folders that cannot be listed (past PATH_MAX) are left out. Iterative: any depth is fine."""
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as found:
                entries = sorted(found, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield Path(entry.path), info
            if stat.S_ISDIR(info.st_mode) and (max_depth is None or depth + 1 < max_depth):
                stack.append((Path(entry.path), depth + 1))


def _printable(path: Path) -> bool:
    """False for names that are not UTF-8 (surrogate escapes), which recipes could not print."""
    try:
        os.fsdecode(os.fsencode(path)).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _weight(root: Path, path: Path) -> int:
    relative = path.relative_to(root).parts
    key = path.name in KEY_FILES or (
        relative[:1] in (("systems",), ("measurements",)) and path.suffix == ".json"
    )
    return KEY_WEIGHT if key else 1


def _is_measurements(root: Path, path: Path) -> bool:
    in_folder = path.relative_to(root).parts[:1] == ("measurements",) and path.suffix == ".json"
    return path.name == "measurements.json" or in_folder


def _is_system(root: Path, path: Path) -> bool:
    return path.relative_to(root).parts[:1] == ("systems",) and path.suffix == ".json"


def _json_object(path: Path, size: int) -> bool:
    if size > 1024 * 1024:
        return False
    try:
        return isinstance(json.loads(path.read_bytes()), dict)
    except (ValueError, RecursionError, OSError):
        return False


def _has_mllog(path: Path, size: int) -> bool:
    if path.name != "mlperf_log_detail.txt" or size > MAX_READ:
        return False
    return bool(_mllog_records(_lines(path)))


def _file_matches(target: Target, root: Path, path: Path, info: os.stat_result) -> bool:
    size = info.st_size
    checks: dict[Target, Callable[[], bool]] = {
        Target.FILE: lambda: size <= MAX_READ,
        Target.TEXT: lambda: (
            0 < size <= MAX_READ and (path.name in KEY_FILES or path.suffix in TEXT_SUFFIXES)
        ),
        Target.JSON: lambda: path.suffix == ".json" and _json_object(path, size),
        Target.MEASUREMENTS: lambda: _is_measurements(root, path) and size <= MAX_READ,
        Target.SYSTEM: lambda: _is_system(root, path) and size <= MAX_READ,
        Target.MLLOG: lambda: _has_mllog(path, size),
        Target.LOG: lambda: path.name in ("mlperf_log_detail.txt", "mlperf_log_accuracy.json"),
    }
    return target in checks and checks[target]()


def _dir_matches(target: Target, root: Path, path: Path) -> bool:
    if target in (Target.DIR, Target.PLACE):
        return True
    parts = path.relative_to(root).parts
    return target is Target.RESULT_DIR and parts[:1] == ("results",) and len(parts) >= 4


def candidates(root: Path, target: Target) -> list[tuple[Path, int]]:
    """The entries of the tree at root that `target` may take, each with its weight."""
    found = [(root, 1)] if target is Target.PLACE else []
    for path, info in walk(root, MAX_TARGET_DEPTH):
        if not _printable(path):
            continue
        if stat.S_ISREG(info.st_mode) and _file_matches(target, root, path, info):
            found.append((path, _weight(root, path)))
        elif stat.S_ISDIR(info.st_mode) and _dir_matches(target, root, path):
            found.append((path, 1))
    return found


def pick(root: Path, target: Target, rng: random.Random) -> Path | None:
    found = candidates(root, target)
    if not found:
        return None
    paths, weights = zip(*found, strict=True)
    return rng.choices(paths, weights=weights)[0]


def draw(root: Path, rng: random.Random, tries: int = 20) -> Applied | None:
    """A random mutation applied to a random target of the tree at root (the submitter folder)."""
    names = sorted(CATALOGUE)
    for _ in range(tries):
        chosen = CATALOGUE[rng.choice(names)]
        target = pick(root, chosen.target, rng)
        if target is None:
            continue
        seed = rng.getrandbits(32)
        detail = chosen.apply(target, random.Random(seed))
        return Applied(chosen.name, target.relative_to(root).as_posix(), seed, detail)
    return None


def replay(root: Path, applied: Applied) -> bool:
    """Apply a recorded mutation again on a fresh copy; False when its target is not there."""
    target = root / applied.target
    if not os.path.lexists(target):
        return False
    CATALOGUE[applied.name].apply(target, random.Random(applied.seed))
    return True


# --- editing helpers ----------------------------------------------------------------------------------


def _replace(path: Path, data: bytes) -> None:
    """Replace a file by a new one (never write into it: a copy may share its data with the original)."""
    mode = stat.S_IMODE(path.lstat().st_mode)
    path.unlink()
    path.write_bytes(data)
    os.chmod(path, mode)


def _write_new(path: Path, data: bytes) -> None:
    """Write a file, replacing whatever has its name (a link is replaced, never written through)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif os.path.lexists(path):
        _remove_folder(path)
    path.write_bytes(data)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _splice(data: Any, raw: str, rng: random.Random) -> tuple[str, str]:
    """JSON text of `data` with one value (a random key's, at any depth of objects) replaced by raw text."""
    slots = list(_object_slots(data, ()))
    if not slots:
        return raw, "the whole document"
    holder, key, where = rng.choice(slots)
    holder[key] = SENTINEL
    return json.dumps(data, indent=2).replace(SENTINEL_JSON, raw, 1), f"the value of {where}"


def _object_slots(data: Any, where: tuple[str, ...]) -> Iterator[tuple[dict[str, Any], str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield data, key, "/".join((*where, str(key)))
            yield from _object_slots(value, (*where, str(key)))
    elif isinstance(data, list) and data and len(where) < 4:
        yield from _object_slots(data[0], (*where, "0"))


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (ValueError, RecursionError):
        return None


def _splice_file(path: Path, raw: str, rng: random.Random) -> str:
    text, where = _splice(_load_json(path), raw, rng)
    _replace(path, text.encode())
    return where


def _mllog_records(lines: list[bytes]) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for index, line in enumerate(lines):
        if line.startswith(MLLOG.encode()):
            try:
                record = json.loads(line[len(MLLOG) :])
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                records.append((index, record))
    return records


def _set_mllog_value(path: Path, raw: str, rng: random.Random) -> str:
    """One :::MLLOG record's value replaced by raw text; a record is added when none parses."""
    lines = _lines(path)
    records = _mllog_records(lines)
    if records:
        index, record = rng.choice(records)
    else:
        index, record = len(lines), {"key": "result_validity", "metadata": {"is_error": False}}
        lines.append(b"")
    lines[index] = _mllog_line(record, raw)
    _replace(path, b"\n".join(lines))
    return f"the value of {record.get('key')!r} (line {index + 1})"


def _nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def _huge_integer(rng: random.Random) -> str:
    return str(rng.randint(1, 9)) + "".join(rng.choices("0123456789", k=HUGE_DIGITS - 1))


def _huge_number_text(rng: random.Random) -> tuple[str, str]:
    digits = _huge_integer(rng)
    return rng.choice(
        [
            (digits, "a bare 5000-digit integer"),
            (f'"{digits}"', "a 5000-digit integer as a string"),
            (f'"{digits} GB"', "a 5000-digit integer with a unit"),
        ]
    )


def _other_type(rng: random.Random) -> str:
    return rng.choice(
        ["null", "[]", "{}", "true", "false", "1e308", "-1", "-0.0", '"text"', "[1, 2]", '{"a": 1}']
    )


def _link(path: Path, destination: str) -> None:
    if path.is_dir() and not path.is_symlink():
        raise IsADirectoryError(path)
    path.unlink()
    os.symlink(destination, path)


# --- the failures an earlier round found ---------------------------------------------------------------


def _mllog_line(record: dict[str, Any], raw: str) -> bytes:
    """The MLLOG line of `record` with `raw` (JSON text, perhaps not valid JSON) as its value."""
    record["value"] = SENTINEL
    return (MLLOG + json.dumps(record).replace(SENTINEL_JSON, raw, 1)).encode()


@mutation("mllog_deep_list", Target.MLLOG, "an MLLOG record's value becomes a list nested 20,000 deep")
def mllog_deep_list(path: Path, rng: random.Random) -> str:
    return f"{_set_mllog_value(path, _nested_list(DEEP_LOG_LIST), rng)} := [[[...]]] x{DEEP_LOG_LIST}"


@mutation("json_deep_nesting", Target.MEASUREMENTS, "the measurements JSON (or one value) nests 50,000 deep")
def json_deep_nesting(path: Path, rng: random.Random) -> str:
    raw = _nested_list(DEEP_JSON)
    if rng.random() < 0.5:
        _replace(path, raw.encode())
        return f"the whole file := [[[...]]] x{DEEP_JSON}"
    return f"{_splice_file(path, raw, rng)} := [[[...]]] x{DEEP_JSON}"


@mutation("json_huge_int", Target.JSON, "a JSON value (measurements, system) becomes a 5000-digit integer")
def json_huge_int(path: Path, rng: random.Random) -> str:
    raw, what = _huge_number_text(rng)
    return f"{_splice_file(path, raw, rng)} := {what}"


@mutation(
    "measurements_huge_int", Target.MEASUREMENTS, "a measurements JSON value becomes a 5000-digit integer"
)
def measurements_huge_int(path: Path, rng: random.Random) -> str:
    return json_huge_int(path, rng)


@mutation("mllog_huge_int", Target.MLLOG, "an MLLOG record's value becomes a 5000-digit integer")
def mllog_huge_int(path: Path, rng: random.Random) -> str:
    raw, what = _huge_number_text(rng)
    return f"{_set_mllog_value(path, raw, rng)} := {what}"


@mutation("system_huge_int", Target.SYSTEM, "a system JSON gets a 5000-digit key, or a 5000-digit value")
def system_huge_int(path: Path, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return json_huge_int(path, rng)
    data = _load_json(path)
    digits = _huge_integer(rng)
    body = json.dumps(data, indent=2) if isinstance(data, dict) and data else "{}"
    closing = body.rstrip().rstrip("}")
    separator = ",\n  " if closing.strip() != "{" else ""
    _replace(path, f'{closing}{separator}"{digits}": {digits}\n}}\n'.encode())
    return "a key of 5000 digits added, with a 5000-digit value"


@mutation("non_utf8_folder", Target.RESULT_DIR, "a folder named with non-UTF-8 bytes (b'\\xff\\xfe...')")
def non_utf8_folder(path: Path, rng: random.Random) -> str:
    name = b"\xff\xfe" + bytes(rng.choice(b"abcdef\x80\xc3") for _ in range(6))
    folder = os.path.join(os.fsencode(path), name)
    os.mkdir(folder)
    if rng.random() < 0.7:
        with open(os.path.join(folder, b"notes.txt"), "wb") as stream:
            stream.write(b"a file in a folder whose name is not UTF-8\n")
    return f"folder {name!r} added"


@mutation("fifo_log", Target.LOG, "the log is replaced by a FIFO (os.mkfifo): reading it blocks forever")
def fifo_log(path: Path, rng: random.Random) -> str:
    path.unlink()
    os.mkfifo(path)
    return "replaced by a FIFO"


# --- the failures a second round found ----------------------------------------------------------------


def _past_a_double(rng: random.Random) -> str:
    """An integer past the largest double (about 1.8e308): float() of it raises OverflowError."""
    digits = rng.randint(DOUBLE_DIGITS, DOUBLE_DIGITS + 100)
    text = str(rng.randint(2, 9)) + "".join(rng.choices("0123456789", k=digits - 1))
    return f"-{text}" if rng.random() < 0.2 else text


def _numeric_records(lines: list[bytes]) -> list[tuple[int, dict[str, Any]]]:
    """The records holding a number (what readers take as one), else every record."""
    records = _mllog_records(lines)
    numbers = [
        (index, record)
        for index, record in records
        if isinstance(record.get("value"), int | float) and not isinstance(record.get("value"), bool)
    ]
    return numbers or records


@mutation(
    "mllog_past_double", Target.MLLOG, "a numeric MLLOG value becomes an integer past a double (309+ digits)"
)
def mllog_past_double(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index, record = rng.choice(_numeric_records(lines))  # a target holds at least one record
    raw = _past_a_double(rng)
    lines[index] = _mllog_line(record, raw)
    _replace(path, b"\n".join(lines))
    digits = len(raw.lstrip("-"))
    return f"the value of {record.get('key')!r} (line {index + 1}) := an integer of {digits} digits"


@mutation(
    "mllog_duplicate_past_double",
    Target.MLLOG,
    "a numeric MLLOG record is repeated, before or after it, holding an integer past a double",
)
def mllog_duplicate_past_double(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index, record = rng.choice(_numeric_records(lines))
    raw = _past_a_double(rng)
    before = rng.random() < 0.5
    lines.insert(index if before else index + 1, _mllog_line(record, raw))
    _replace(path, b"\n".join(lines))
    where, digits = "before" if before else "after", len(raw.lstrip("-"))
    return f"{record.get('key')!r} repeated {where} line {index + 1} := an integer of {digits} digits"


def _nameplate(system_json: Path) -> Path:
    """The power nameplate YAML of a system (v6.1: systems/<system>_power.yaml, beside its JSON)."""
    return system_json.with_name(f"{system_json.stem}_power.yaml")


SELF_REFERENCES = (
    "Server:\n  PSUs: &psus [*psus]\n  Min PSUs Needed: 1\n",
    "Server: &server\n  PSUs: []\n  Min PSUs Needed: 1\n  Spare: *server\n",
    "&all [*all]\n",
    "Server:\n  PSUs:\n    - &psu {PowerCapacityWatts: 2000, Twin: *psu}\n  Min PSUs Needed: 1\n",
)


@mutation(
    "nameplate_self_reference",
    Target.SYSTEM,
    "the system's power nameplate YAML holds a list or map made to contain itself (&a [*a])",
)
def nameplate_self_reference(path: Path, rng: random.Random) -> str:
    text = rng.choice(SELF_REFERENCES)
    _write_new(_nameplate(path), text.encode())
    return f"{_nameplate(path).name} := {text.splitlines()[0].strip()!r} ..."


@mutation(
    "nameplate_alias_bomb",
    Target.SYSTEM,
    "the system's power nameplate YAML is an alias bomb: 8 to 12 levels of 10 aliases (billion laughs)",
)
def nameplate_alias_bomb(path: Path, rng: random.Random) -> str:
    levels, width = rng.randint(8, 12), 10
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]" for n in range(1, levels)]
    psus = f"*l{levels - 1}" if rng.random() < 0.5 else "[{PowerCapacityWatts: 2000}]"
    lines += ["Server:", f"  PSUs: {psus}", "  Min PSUs Needed: 1", ""]
    _write_new(_nameplate(path), "\n".join(lines).encode())
    return f"{_nameplate(path).name} := {levels} levels of {width} aliases ({width}**{levels} values)"


@mutation("chmod_000_folder", Target.DIR, "a folder gets mode 000: it cannot be listed (not as root)")
def chmod_000_folder(path: Path, rng: random.Random) -> str:
    os.chmod(path, 0)
    return "chmod 000"


# Characters that end or split a CSV field unless it is quoted and its quotes doubled, and a lone surrogate
# (a JSON escape: no UTF-8 writer takes it).
CSV_SIGNIFICANT = ('a "quoted" name', 'vLLM, "patched"', '"', "two\nlines", "a\r\nb", "\ud800", "x\udcff,y")
DESCRIPTION_TEXT_KEYS = (
    "system_name",
    "framework",
    "operating_system",
    "host_processor_model_name",
    "accelerator_model_name",
    "hw_notes",
    "sw_notes",
)


@mutation(
    "system_csv_text",
    Target.SYSTEM,
    "a text field of the system description gets a double quote, a comma and quote, a line break or a lone "
    "surrogate",
)
def system_csv_text(path: Path, rng: random.Random) -> str:
    data = _load_json(path)
    data = data if isinstance(data, dict) else {}
    key = rng.choice(DESCRIPTION_TEXT_KEYS)
    text = rng.choice(CSV_SIGNIFICANT)
    old = data.get(key)
    data[key] = f"{old}{text}" if isinstance(old, str) and rng.random() < 0.5 else text
    _replace(path, json.dumps(data, indent=2).encode())  # ensure_ascii: a surrogate as its \\u escape
    return f"{key} := {data[key]!r}"


# --- hostile files the tools already handle -----------------------------------------------------------


def _link_to(target: str) -> Apply:
    def apply(path: Path, rng: random.Random) -> str:
        _link(path, target)
        return f"-> {target}"

    return apply


for _name, _target in (("dev_zero", "/dev/zero"), ("dev_urandom", "/dev/urandom"), ("root", "/")):
    _summary = f"a file becomes a symbolic link to {_target}"
    mutation(f"symlink_{_name}", Target.FILE, _summary)(_link_to(_target))


@mutation("symlink_loop", Target.FILE, "a file becomes one of two symbolic links pointing at each other")
def symlink_loop(path: Path, rng: random.Random) -> str:
    twin = path.with_name(path.name + ".loop")
    _link(path, twin.name)
    if os.path.lexists(twin):
        twin.unlink()
    os.symlink(path.name, twin)
    return f"-> {twin.name} -> {path.name}"


@mutation("chmod_000", Target.FILE, "a file, or its folder, gets mode 000 (no effect on reads as root)")
def chmod_000(path: Path, rng: random.Random) -> str:
    chosen = path.parent if rng.random() < 0.3 else path
    os.chmod(chosen, 0)
    return "its folder chmod 000" if chosen is not path else "chmod 000"


@mutation("file_to_folder", Target.FILE, "a file is swapped for a folder of the same name")
def file_to_folder(path: Path, rng: random.Random) -> str:
    path.unlink()
    path.mkdir()
    if rng.random() < 0.5:
        (path / path.name).write_text("the file that was here\n")
        return "replaced by a folder holding a file of the same name"
    return "replaced by an empty folder"


@mutation("folder_to_file", Target.DIR, "a folder is swapped for a file of the same name")
def folder_to_file(path: Path, rng: random.Random) -> str:
    _remove_folder(path)
    path.write_text(rng.choice(["", "a file where a folder was\n", "{}\n"]))
    return "replaced by a file"


@mutation("huge_line", Target.TEXT, "a 20 MB line without a newline is inserted")
def huge_line(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index = rng.randrange(len(lines) + 1)
    prefix = rng.choice([b"", MLLOG.encode(), b"hash="])
    lines.insert(index, prefix + bytes([rng.choice(b"A9{ ")]) * HUGE_LINE)
    _replace(path, b"\n".join(lines))
    return f"a 20 MB line at line {index + 1} (starting {prefix.decode() or 'bare'})"


@mutation("json_nan", Target.JSON, "a JSON value becomes NaN or Infinity")
def json_nan(path: Path, rng: random.Random) -> str:
    raw = rng.choice(["NaN", "Infinity", "-Infinity"])
    return f"{_splice_file(path, raw, rng)} := {raw}"


@mutation("mllog_nan", Target.MLLOG, "an MLLOG record's value becomes NaN or Infinity")
def mllog_nan(path: Path, rng: random.Random) -> str:
    raw = rng.choice(["NaN", "Infinity", "-Infinity"])
    return f"{_set_mllog_value(path, raw, rng)} := {raw}"


@mutation("json_duplicate_key", Target.JSON, "a JSON key is repeated with another value")
def json_duplicate_key(path: Path, rng: random.Random) -> str:
    data = _load_json(path)
    data = data if isinstance(data, dict) else {}
    key = rng.choice(sorted(data)) if data else "key"
    raw = _other_type(rng)
    body = json.dumps(data, indent=2).rstrip().rstrip("}").rstrip()
    separator = "," if data else ""
    _replace(path, f"{body}{separator}\n  {json.dumps(key)}: {raw}\n}}\n".encode())
    return f"{key!r} repeated := {raw}"


@mutation("mllog_duplicate_record", Target.MLLOG, "an MLLOG record is repeated with another value")
def mllog_duplicate_record(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index, record = rng.choice(_mllog_records(lines) or [(0, {"key": "result_validity"})])
    raw = _other_type(rng)
    copy = _mllog_line(record, raw)
    lines.insert(index + rng.randint(0, 1), copy)
    _replace(path, b"\n".join(lines))
    return f"{record.get('key')!r} repeated := {raw}"


@mutation("option_like_name", Target.PLACE, "a file or folder named like an option (--help, -rf)")
def option_like_name(path: Path, rng: random.Random) -> str:
    name = rng.choice(OPTION_NAMES)
    entry = path / name
    if os.path.lexists(entry):
        return f"{name} already there"
    if rng.random() < 0.5:
        entry.mkdir()
        return f"folder {name} added"
    entry.write_text("an option-like name\n")
    return f"file {name} added"


# --- generic breakage ---------------------------------------------------------------------------------


@mutation("truncate", Target.FILE, "a file is cut at a random byte")
def truncate(path: Path, rng: random.Random) -> str:
    size = path.stat().st_size
    cut = rng.randrange(size) if size else 0
    _replace(path, path.read_bytes()[:cut])
    return f"cut at byte {cut} of {size}"


@mutation("empty_file", Target.FILE, "a file is emptied")
def empty_file(path: Path, rng: random.Random) -> str:
    _replace(path, b"")
    return "emptied"


@mutation("delete_file", Target.FILE, "a file is deleted")
def delete_file(path: Path, rng: random.Random) -> str:
    path.unlink()
    return "deleted"


@mutation("flip_bytes", Target.FILE, "1 to 8 random bytes are flipped")
def flip_bytes(path: Path, rng: random.Random) -> str:
    data = bytearray(path.read_bytes())
    if not data:
        data = bytearray(b"\x00")
    offsets = sorted(rng.randrange(len(data)) for _ in range(rng.randint(1, 8)))
    for offset in offsets:
        data[offset] ^= rng.randint(1, 255)
    _replace(path, bytes(data))
    return f"bytes flipped at {offsets}"


@mutation("insert_bytes", Target.FILE, "1 to 64 random bytes are inserted at a random offset")
def insert_bytes(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    offset = rng.randint(0, len(data))
    extra = rng.randbytes(rng.randint(1, 64))
    _replace(path, data[:offset] + extra + data[offset:])
    return f"{len(extra)} bytes inserted at {offset}"


@mutation("duplicate_line", Target.TEXT, "a line is repeated")
def duplicate_line(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index = rng.randrange(len(lines))
    lines.insert(index, lines[index])
    _replace(path, b"\n".join(lines))
    return f"line {index + 1} repeated"


@mutation("json_retype", Target.JSON, "a JSON value becomes another type (null, list, huge float, negative)")
def json_retype(path: Path, rng: random.Random) -> str:
    raw = _other_type(rng)
    return f"{_splice_file(path, raw, rng)} := {raw}"


@mutation("mllog_retype", Target.MLLOG, "an MLLOG record's value becomes another type")
def mllog_retype(path: Path, rng: random.Random) -> str:
    raw = _other_type(rng)
    return f"{_set_mllog_value(path, raw, rng)} := {raw}"


@mutation("mllog_garble", Target.MLLOG, "an MLLOG record's JSON is cut or its quotes broken")
def mllog_garble(path: Path, rng: random.Random) -> str:
    lines = _lines(path)
    index, _ = rng.choice(_mllog_records(lines) or [(0, {})])
    line = lines[index].ljust(len(MLLOG) + 2, b"{")
    if rng.random() < 0.5:
        lines[index] = line[: rng.randrange(len(MLLOG), len(line))]
        detail = "cut"
    else:
        lines[index] = line.replace(b'"', b"'", rng.randint(1, 4))
        detail = "quotes broken"
    _replace(path, b"\n".join(lines))
    return f"line {index + 1} {detail}"


def _remove_folder(path: Path) -> None:
    """rm -rf: at any depth (past PATH_MAX too), whatever the names and modes inside."""
    subprocess.run(["chmod", "-R", "u+rwX", "--", path], check=False, capture_output=True)
    subprocess.run(["rm", "-rf", "--", path], check=True, capture_output=True)


@mutation("remove_folder", Target.DIR, "a folder is removed with everything in it")
def remove_folder(path: Path, rng: random.Random) -> str:
    _remove_folder(path)
    return "removed"


@mutation("stray_file", Target.PLACE, "a stray file is added (notes, .DS_Store, core, a JSON)")
def stray_file(path: Path, rng: random.Random) -> str:
    name = rng.choice(["notes.txt", ".DS_Store", "core", "extra.json", "run_2", "README.md~", "x y.txt"])
    entry = path / name
    if os.path.lexists(entry):
        return f"{name} already there"
    entry.write_bytes(rng.choice([b"", b"{}\n", rng.randbytes(512), b"stray\n"]))
    return f"{name} added"


@mutation("rename_folder", Target.DIR, "a folder is renamed (case, suffix, a space, a trailing dot)")
def rename_folder(path: Path, rng: random.Random) -> str:
    name = path.name
    new = rng.choice([name.lower(), name.upper(), name + "_old", name + " copy", name + ".", "_" + name])
    if new == name or os.path.lexists(path.with_name(new)):
        new = name + "_renamed"
    path.rename(path.with_name(new))
    return f"renamed to {new!r}"


@mutation("deep_nesting", Target.PLACE, "100 to 1500 nested folders with a file at the bottom")
def deep_nesting(path: Path, rng: random.Random) -> str:
    depth = rng.randint(100, 1500)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _nest(fd, "d", depth)
        _touch(fd, "accuracy.txt" if rng.random() < 0.5 else "deep.txt")
    finally:
        os.close(fd)
    return f"{depth} folders deep"


@mutation("nesting_beyond_path_max", Target.PLACE, "folders nested past PATH_MAX (4096 bytes)")
def nesting_beyond_path_max(path: Path, rng: random.Random) -> str:
    name = "n" * rng.randint(20, 200)
    depth = PATH_MAX // (len(name) + 1) + 2
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _nest(fd, name, depth)
        _touch(fd, "mlperf_log_detail.txt")
    finally:
        os.close(fd)
    return f"{depth} folders of {len(name)}-byte names"


def _nest(fd: int, name: str, depth: int) -> int:
    """`depth` nested folders below the folder open as fd (by fd: past PATH_MAX too); the deepest's fd.

    The outermost gets a name not taken yet (a case may nest twice in one place)."""
    outermost, number = name, 1
    while _exists(outermost, fd):
        outermost, number = f"{name}{number}", number + 1
    for level in range(depth):
        folder = outermost if level == 0 else name
        os.mkdir(folder, dir_fd=fd)
        inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    return fd


def _exists(name: str, folder_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _touch(folder_fd: int, name: str) -> None:
    os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder_fd))


@mutation("long_file_name", Target.PLACE, "a file (or folder) with a 255-byte name is added")
def long_file_name(path: Path, rng: random.Random) -> str:
    stem = rng.choice(["a", "é", "mlperf_log_detail"])
    name = (stem * NAME_MAX).encode()[:NAME_MAX].decode("utf-8", "ignore")
    entry = path / name
    if os.path.lexists(entry):
        return "already there"
    if rng.random() < 0.3:
        entry.mkdir()
        return f"a folder named {len(os.fsencode(name))} bytes long"
    entry.write_text("a long name\n")
    return f"a file named {len(os.fsencode(name))} bytes long"


@mutation("invalid_utf8", Target.TEXT, "invalid UTF-8 sequences are inserted into a text file")
def invalid_utf8(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    sequences = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xfe\xfe"]
    offsets = sorted(rng.randint(0, len(data)) for _ in range(rng.randint(1, 4)))
    for offset in reversed(offsets):
        data = data[:offset] + rng.choice(sequences) + data[offset:]
    _replace(path, data)
    return f"invalid UTF-8 at {offsets}"


@mutation("crlf", Target.TEXT, "line endings become CRLF (or bare CR)")
def crlf(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    ending = rng.choice([b"\r\n", b"\r\n", b"\r"])
    _replace(
        path, data.replace(b"\r\n", b"\n").replace(b"\n", ending) + (ending if b"\n" not in data else b"")
    )
    return f"line endings {ending!r}"


@mutation("bom", Target.TEXT, "a byte-order mark is prepended (UTF-8), or the file becomes UTF-16")
def bom(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    if rng.random() < 0.7:
        _replace(path, b"\xef\xbb\xbf" + data)
        return "UTF-8 BOM prepended"
    _replace(path, data.decode("utf-8", "replace").encode("utf-16"))
    return "re-encoded as UTF-16 with its BOM"


@mutation("sparse_huge_file", Target.FILE, "a file grows to 64 GiB of zeros (sparse: no disk used)")
def sparse_huge_file(path: Path, rng: random.Random) -> str:
    os.truncate(path, SPARSE_SIZE)
    return "extended to 64 GiB (sparse)"
