"""`submitter check`'s settings from a file, found as ruff finds its own.

Where: `submitter.toml` (its keys at the top level) or the `[tool.submitter]` table of `pyproject.toml`, in
the current directory or the nearest folder above it that has one. `submitter.toml` wins over
`pyproject.toml` in the same folder, and a `pyproject.toml` without `[tool.submitter]` does not count (the
search goes on above it). `--config FILE` names one; `--isolated` reads none.

Keys, all optional: `select` and `ignore` (lists of rule ids or prefixes), `strict` (true or false),
`format` (a name of `--format`). Options on the command line win. There is no `output` key on purpose:
a report that silently goes to a file when someone runs `check` by hand surprises; CI passes `--output`.

The file is read and checked once, here: unknown keys, wrong types, rule ids that do not exist and TOML
syntax are usage errors (exit 2) naming the file, its line where known, the key, and what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct

from submitter.check.formats import FORMATS
from submitter.check.selection import describe_unknown, parse_selectors, unknown_selectors
from submitter.errors import UsageProblem

CONFIG_NAME = "submitter.toml"
PYPROJECT_NAME = "pyproject.toml"
PYPROJECT_TABLE = "tool.submitter"

SELECTOR_LIST = 'a list of rule ids or prefixes, e.g. ["PERF", "SYS-STATUS"]'
ALLOWED_KEYS: dict[str, str] = {
    "select": SELECTOR_LIST,
    "ignore": SELECTOR_LIST,
    "strict": "true or false",
    "format": f"one of {', '.join(repr(name) for name in FORMATS)}",
}
# Keys people may expect from other tools, and what to do instead.
NOT_KEYS = {"output": "name the report file on the command line (--output FILE) in the CI job"}


class CheckConfig(Struct, frozen=True, kw_only=True):
    """The settings one file holds; None where it says nothing (the command line or the default decides)."""

    path: Path
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    strict: bool | None = None
    format: str | None = None


class ConfigError(UsageProblem):
    def __init__(self, path: Path, problem: str, line: int | None = None) -> None:
        self.path, self.problem, self.line = path, problem, line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {problem}")


def load_config(
    cwd: Path, rule_ids: Collection[str], *, explicit: Path | None = None, isolated: bool = False
) -> CheckConfig | None:
    """The settings that apply: the file named, else the one found from `cwd` up, else none."""
    if isolated:
        return None
    if explicit is not None:
        return _read_named(explicit, rule_ids)
    for folder in (cwd, *cwd.parents):
        found = _read_in(folder, rule_ids)
        if found is not None:
            return found
    return None


def _read_named(path: Path, rule_ids: Collection[str]) -> CheckConfig:
    text = _text(path)
    if path.name == PYPROJECT_NAME:
        table = _pyproject_table(path, text)
        if table is None:
            raise ConfigError(path, f"has no [{PYPROJECT_TABLE}] table; add one, or name a {CONFIG_NAME}")
        return _settings(path, text, table, PYPROJECT_TABLE, rule_ids)
    return _settings(path, text, _parse(path, text), None, rule_ids)


def _read_in(folder: Path, rule_ids: Collection[str]) -> CheckConfig | None:
    own = folder / CONFIG_NAME
    if own.is_file():
        text = _text(own)
        return _settings(own, text, _parse(own, text), None, rule_ids)
    pyproject = folder / PYPROJECT_NAME
    if not pyproject.is_file():
        return None
    text = _text(pyproject)
    # Most pyproject.toml files never mention us: leave them unparsed (a syntax error there is not ours).
    if "submitter" not in text:
        return None
    table = _pyproject_table(pyproject, text)
    return None if table is None else _settings(pyproject, text, table, PYPROJECT_TABLE, rule_ids)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            path, f"no such file; check the path (relative paths start at {Path.cwd()})"
        ) from None
    except IsADirectoryError:
        raise ConfigError(path, f"is a folder; name a {CONFIG_NAME} or a {PYPROJECT_NAME}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, f"cannot be read ({exc.__class__.__name__}: {exc})") from None


def _parse(path: Path, text: str) -> dict[str, Any]:
    import tomllib  # only when a configuration file is there

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(
            path, f"is not valid TOML: {exc}", line=int(found.group(1)) if found else None
        ) from None


def _pyproject_table(path: Path, text: str) -> dict[str, Any] | None:
    tool = _parse(path, text).get("tool")
    if not isinstance(tool, dict) or "submitter" not in tool:
        return None
    table = tool["submitter"]
    if not isinstance(table, dict):
        raise ConfigError(
            path,
            f"{PYPROJECT_TABLE} must be a table ([{PYPROJECT_TABLE}])",
            _key_line(text, "submitter", "tool"),
        )
    return table


def _settings(
    path: Path, text: str, table: Mapping[str, Any], table_name: str | None, rule_ids: Collection[str]
) -> CheckConfig:
    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(path, f"{key}: {problem}", _key_line(text, key, table_name))

    for key in table:
        if key not in ALLOWED_KEYS:
            raise fail(key, _unknown_key(key))
    values: dict[str, Any] = {}
    for key in ("select", "ignore"):
        if key in table:
            values[key] = _selectors(table[key], rule_ids, lambda problem, key=key: fail(key, problem))
    if "strict" in table:
        if not isinstance(table["strict"], bool):
            raise fail("strict", f"must be {ALLOWED_KEYS['strict']}, not {table['strict']!r}")
        values["strict"] = table["strict"]
    if "format" in table:
        if table["format"] not in FORMATS:
            raise fail("format", f"must be {ALLOWED_KEYS['format']}, not {table['format']!r}")
        values["format"] = table["format"]
    return CheckConfig(path=path, **values)


def _unknown_key(key: str) -> str:
    import difflib  # only for a message: `check` starts without it

    allowed = ", ".join(ALLOWED_KEYS)
    if key in NOT_KEYS:
        return f"is not a setting of the file: {NOT_KEYS[key]} (allowed keys: {allowed})"
    close = difflib.get_close_matches(key, ALLOWED_KEYS, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key; {hint}allowed keys: {allowed}"


def _selectors(value: Any, rule_ids: Collection[str], fail: Callable[[str], ConfigError]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail(f"must be {SELECTOR_LIST}, not {value!r}")
    selectors = parse_selectors(value)
    unknown = unknown_selectors(selectors, rule_ids)
    if unknown:
        raise fail("; ".join(describe_unknown(selector, rule_ids) for selector in unknown))
    return selectors


def _key_line(text: str, key: str, table: str | None) -> int | None:
    """The line that sets `key` in `table` (None: the top level), for messages; None when not found (a key
    written as a dotted key or in an inline table is not looked for)."""
    current: str | None = None
    header = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]")
    assignment = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(text.splitlines(), start=1):
        found = header.match(line)
        if found:
            current = re.sub(r"\s*\.\s*", ".", found.group(1))
            continue
        if current == table and assignment.match(line):
            return number
    return None
