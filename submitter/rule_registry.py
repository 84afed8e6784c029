"""Rules with stable ids, registered like linter rules, and the findings they produce.

A check is a small pure function from a parsed subject to `Problem`s; `RuleSet` adds the rule id,
severity and file path, so a check only says what is wrong, where in the file, and how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

import msgspec
from msgspec import Struct


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Problem(Struct, frozen=True):
    """What a check yields; the rest of a `Finding` comes from its rule and subject."""

    message: str
    fix: str
    field: str | None = None
    line: int | None = None
    path: str | None = None  # when the problem is in another file than the subject's


class Finding(Struct, frozen=True, kw_only=True):
    rule: str
    severity: Severity
    path: str
    result: str | None = None  # the result it belongs to (division/submitter/system/benchmark/scenario)
    field: str | None = None
    line: int | None = None
    message: str
    fix: str

    def with_severity(self, severity: Severity) -> Finding:
        return msgspec.structs.replace(self, severity=severity)

    def as_json(self) -> dict[str, Any]:
        return {
            key: str(value) if isinstance(value, Severity) else value
            for key, value in msgspec.structs.asdict(self).items()
        }

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Findings inside pydantic models (the review): kept as they are, dumped as their JSON."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            lambda value: value if isinstance(value, cls) else msgspec.convert(value, cls),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda finding: finding.as_json()),
        )

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        subject = f" {self.field}:" if self.field else ""
        return f"{where}: {self.rule} {self.severity}{subject} {self.message}; fix: {self.fix}"


class Subject(Protocol):
    @property
    def path(self) -> str: ...


S = TypeVar("S", bound=Subject)
Check = Callable[[S], Iterable[Problem]]


class Rule(Struct, Generic[S], frozen=True):
    id: str
    severity: Severity
    summary: str
    check: Check[S]


class RuleSet(Generic[S]):
    """An ordered registry of rules over one kind of subject."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._rules: dict[str, Rule[S]] = {}

    def rule(self, rule_id: str, severity: Severity, summary: str) -> Callable[[Check[S]], Check[S]]:
        def register(check: Check[S]) -> Check[S]:
            if rule_id in self._rules:
                raise ValueError(f"rule {rule_id} is registered twice in {self.name}")
            self._rules[rule_id] = Rule(rule_id, severity, summary, check)
            return check

        return register

    def __iter__(self) -> Iterator[Rule[S]]:
        return iter(self._rules.values())

    def __getitem__(self, rule_id: str) -> Rule[S]:
        return self._rules[rule_id]

    def run(self, subject: S) -> list[Finding]:
        return [
            Finding(
                rule=rule.id,
                severity=rule.severity,
                path=problem.path or subject.path,
                result=getattr(subject, "result", None),
                field=problem.field,
                line=problem.line,
                message=problem.message,
                fix=problem.fix,
            )
            for rule in self
            for problem in rule.check(subject)
        ]


def count_by_severity(findings: Iterable[Finding]) -> dict[Severity, int]:
    counts = dict.fromkeys(Severity, 0)
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def findings_as_json(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    return [finding.as_json() for finding in findings]
