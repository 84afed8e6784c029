"""Allowing a leak finding that is not a leak: `RULE_ID [PATH_GLOB [TEXT]]`, on the command line or in a file.

One syntax for both places. `--allow LEAK-IP` allows every finding of the rule; `--allow 'LEAK-IP
closed/*/systems/*.json'` only in the files the glob matches (the path as findings print it, where `*`
also crosses `/`); `--allow 'LEAK-HOME-PATH * TEXT'` only that text (say, one user's home path),
wherever it is. An allow file holds one entry a line; lines starting with `#` are comments. Only leak
rules can be allowed: the repository rules are MLCommons' own, and a tree that breaks them is refused
at upload whatever we allow.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from submitter.errors import UsageProblem


@dataclass(frozen=True)
class AllowEntry:
    rule: str
    path_glob: str
    text: str | None
    origin: str  # where the entry was written: "--allow" or "allow.txt:3"

    def permits(self, rule: str, path: str, matched: str) -> bool:
        return (
            rule == self.rule
            and fnmatch.fnmatchcase(path, self.path_glob)
            and (self.text is None or matched == self.text)
        )

    def __str__(self) -> str:
        return " ".join(part for part in (self.rule, self.path_glob, self.text) if part is not None)


class AllowList:
    """The entries, and how often each one allowed a finding (an entry that never did is reported)."""

    def __init__(self, entries: Sequence[AllowEntry] = ()) -> None:
        self.entries = tuple(entries)
        self._used: Counter[AllowEntry] = Counter()

    def permits(self, rule: str, path: str, matched: str) -> bool:
        for entry in self.entries:
            if entry.permits(rule, path, matched):
                self._used[entry] += 1
                return True
        return False

    def unused(self) -> list[AllowEntry]:
        return [entry for entry in self.entries if not self._used[entry]]

    @classmethod
    def parse(
        cls,
        options: Iterable[str],
        files: Iterable[Path],
        leak_rules: Iterable[str],
        other_rules: Iterable[str],
    ) -> AllowList:
        known, others = set(leak_rules), set(other_rules)
        entries = [_entry(text, "--allow", known, others) for text in options]
        for path in files:
            for number, line in enumerate(_read(path).splitlines(), start=1):
                content = line.strip()
                if content and not content.startswith("#"):
                    entries.append(_entry(content, f"{path}:{number}", known, others))
        return cls(entries)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageProblem(f"{path}: no such allow file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"{path}: the allow file cannot be read ({exc})") from None


def _entry(text: str, origin: str, known: set[str], others: set[str]) -> AllowEntry:
    parts = text.split(maxsplit=2)
    if not parts:
        raise UsageProblem(f"{origin}: an empty allow entry; write RULE_ID [PATH_GLOB [TEXT]]")
    rule = parts[0]
    if rule in others:
        raise UsageProblem(
            f"{origin}: {rule} is a repository rule of MLCommons and cannot be allowed; "
            "fix the tree instead (only these can be allowed: " + ", ".join(sorted(known)) + ")"
        )
    if rule not in known:
        raise UsageProblem(
            f"{origin}: {rule!r} is not a leak rule; write RULE_ID [PATH_GLOB [TEXT]] with one of "
            + ", ".join(sorted(known))
        )
    return AllowEntry(
        rule=rule,
        path_glob=parts[1] if len(parts) > 1 else "*",
        text=parts[2] if len(parts) > 2 else None,
        origin=origin,
    )
