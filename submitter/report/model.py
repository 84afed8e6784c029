"""The review's data: what a submission tree holds, judged, in types the renderers and `--json` read.

Built once by `submitter.report.collect` (the only part that reads files); the headroom items are
computed by the pure functions of `submitter.report.headroom`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field, field_validator

from submitter.check.printable import printable_data
from submitter.rule_registry import Finding, Severity

REVIEW_SCHEMA_VERSION = 1


class Status(StrEnum):
    """How a reviewer should read a number: fine, close to its limit, beyond it, or not judged."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    NOT_JUDGED = "n/a"


_SEVERITY_ORDER = (Status.NOT_JUDGED, Status.PASS, Status.WARN, Status.FAIL)
_RESULT_STATUSES = (Status.PASS, Status.WARN, Status.FAIL)


def worst(statuses: Iterable[Status]) -> Status:
    """The most serious of some statuses; NOT_JUDGED when there are none."""
    return max(statuses, key=_SEVERITY_ORDER.index, default=Status.NOT_JUDGED)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)

    @field_validator("*")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        """Names from the tree that are not UTF-8 (and lone surrogates in its JSON) would fail the writers
        of review.md, review.html and --json alike: escaped once, here."""
        return printable_data(value)


class Percentile(_Frozen):
    percentile: float  # 99.0 for p99
    ms: float

    @property
    def label(self) -> str:
        return f"p{self.percentile:g}"


class PerformanceFacts(_Frozen):
    """What the performance detail log says, in milliseconds where LoadGen logs nanoseconds."""

    validity: str | None
    logged_scenario: str | None
    samples_per_second: float | None
    query_latency: tuple[Percentile, ...] = ()
    ttft: tuple[Percentile, ...] = ()  # time to first token
    tpot: tuple[Percentile, ...] = ()  # time per output token


class AccuracyFacts(_Frozen):
    path: str
    values: dict[str, str]  # metric -> the number as accuracy.txt prints it
    samples: int | None  # how many samples the accuracy run covered (from its detail log)


class AccuracyMargin(_Frozen):
    """How far a metric is from one threshold, as a share of the threshold (negative: it misses)."""

    metric: str
    bound: str  # "target" (the value must be >= it) or "upper limit" (<= it)
    value: float | None  # None when accuracy.txt does not hold the metric
    threshold: float
    reference: float
    margin_percent: float | None
    status: Status
    note: str = ""


class WindowPosition(_Frozen):
    """Where a metric with a target and an upper limit (gen_len) sits between them: 0 % at the lower
    bound, 100 % at the upper, the reference in between (50 % for gen_len's 90-110 % window)."""

    metric: str
    value: float
    lower: float
    upper: float
    reference: float
    position_percent: float
    reference_percent: float
    status: Status
    note: str = ""


class LatencyShare(_Frozen):
    """A p99 token latency as a share of the round's limit for the scenario."""

    name: str  # "TTFT" or "TPOT"
    percentile: float
    value_ms: float | None  # None when the performance log lacks it
    limit_ms: float
    share_percent: float | None
    status: Status


class AuditCheck(_Frozen):
    """One line of a TEST06 verify_accuracy.txt against what the round requires of it."""

    check: str  # "First token check pass"
    found: str | None  # what verify_accuracy.txt says, None when the line (or the file) is missing
    expected: str
    status: Status


class Headroom(_Frozen):
    accuracy: tuple[AccuracyMargin, ...] = ()
    windows: tuple[WindowPosition, ...] = ()
    latency: tuple[LatencyShare, ...] = ()
    test06: tuple[AuditCheck, ...] = ()
    notes: tuple[str, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status:
        items = (*self.accuracy, *self.windows, *self.latency, *self.test06)
        return worst(item.status for item in items)


class ResultReview(_Frozen):
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario: str
    metric: float | None
    units: str | None
    valid: bool  # the checker's verdict
    performance: PerformanceFacts | None
    accuracy: AccuracyFacts | None
    headroom: Headroom
    findings: tuple[Finding, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.system}/{self.benchmark}/{self.scenario}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status:
        """Invalid results fail; otherwise the headroom and the checker's warnings decide."""
        if not self.valid:
            return Status.FAIL
        warned = any(finding.severity is Severity.WARNING for finding in self.findings)
        return worst([Status.PASS, self.headroom.status, Status.WARN if warned else Status.PASS])


class SystemReview(_Frozen):
    division: str
    submitter: str
    system: str
    path: str  # the system description's path in the tree
    description: dict[str, Any] | None  # None when it is missing or not a JSON object
    findings: tuple[Finding, ...] = ()  # the system lint and the checker's rules on the description
    results: tuple[ResultReview, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Status:
        severities = {finding.severity for finding in self.findings}
        lint = Status.FAIL if Severity.ERROR in severities else Status.WARN if severities else Status.PASS
        return worst([lint, *(result.status for result in self.results)])


class Review(_Frozen):
    schema_version: int = REVIEW_SCHEMA_VERSION
    tree: str
    round: str
    detected: str | None  # why this round, when it was detected rather than named
    systems: tuple[SystemReview, ...] = ()
    tree_findings: tuple[Finding, ...] = ()  # findings that belong to no system or result

    @property
    def results(self) -> list[ResultReview]:
        return [result for system in self.systems for result in system.results]

    @property
    def findings(self) -> list[Finding]:
        return [
            *self.tree_findings,
            *(finding for system in self.systems for finding in system.findings),
            *(finding for result in self.results for finding in result.findings),
        ]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def counts(self) -> dict[str, int]:
        results = self.results
        findings = self.findings
        return {
            "results": len(results),
            "valid": sum(result.valid for result in results),
            "invalid": sum(not result.valid for result in results),
            "errors": sum(finding.severity is Severity.ERROR for finding in findings),
            "warnings": sum(finding.severity is Severity.WARNING for finding in findings),
            **{
                str(status): sum(result.status is status for result in results) for status in _RESULT_STATUSES
            },
        }
