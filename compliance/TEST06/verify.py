"""TEST06 verification of an audit run's accuracy log, as the official checker expects it.

Three checks over every logged response:
- first token (Server and Interactive; "Skipped" for Offline): what FirstTokenComplete reported is
  where the answer begins;
- EOS: no answer ends with two or more end-of-sequence ids (the model's, 128009 for Llama 3.1);
- sample length: `token_count` equals the number of ids in the payload.
`verify_accuracy.txt` holds the three verdict lines the checker reads, then the overall line. Unlike the
official script, failures name their samples, and the EOS id is compared as a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from compliance.registry import AuditContext
from submitter.evaluation.accuracy_log import LoggedResponse, read_accuracy_log
from submitter.fileio import write_text_atomic

VERIFY_FILE = "verify_accuracy.txt"


@dataclass(frozen=True)
class Test06Verdict:
    first_token_checked: bool
    first_token_failures: list[int] = field(default_factory=list)  # qsl_idx of failing samples
    eos_failures: list[int] = field(default_factory=list)
    length_failures: list[int] = field(default_factory=list)
    samples: int = 0

    @property
    def passed(self) -> bool:
        return not (self.first_token_failures or self.eos_failures or self.length_failures)

    def text(self) -> str:
        first = "Skipped" if not self.first_token_checked else str(not self.first_token_failures)
        lines = [
            f"First token check pass: {first}",
            f"EOS check pass: {not self.eos_failures}",
            f"Sample length check pass: {not self.length_failures}",
            "TEST06 verification complete" if self.passed else "TEST06 verification failed",
        ]
        return "".join(line + "\n" for line in lines)

    def failures(self) -> list[str]:
        named = (
            ("first token differs from the answer's start", self.first_token_failures),
            ("answer ends with repeated EOS", self.eos_failures),
            ("token_count differs from the payload", self.length_failures),
        )
        return [f"{what}: samples {', '.join(map(str, found[:20]))}" for what, found in named if found]


def ends_with_repeated_eos(token_ids: list[int], eos_token_id: int) -> bool:
    trailing = 0
    for token in reversed(token_ids):
        if token != eos_token_id:
            break
        trailing += 1
    return trailing >= 2


def first_token_matches(response: LoggedResponse) -> bool:
    first = response.first_tokens
    return first is not None and len(first) > 0 and response.token_ids[: len(first)] == first


def verify(responses: list[LoggedResponse], streaming: bool, eos_token_id: int) -> Test06Verdict:
    return Test06Verdict(
        first_token_checked=streaming,
        first_token_failures=[r.qsl_idx for r in responses if streaming and not first_token_matches(r)],
        eos_failures=[r.qsl_idx for r in responses if ends_with_repeated_eos(r.token_ids, eos_token_id)],
        length_failures=[r.qsl_idx for r in responses if r.token_count != len(r.token_ids)],
        samples=len(responses),
    )


def verify_run(run_dir: Path, context: AuditContext) -> Test06Verdict:
    """Verify a TEST06 run directory and write its verify_accuracy.txt beside LoadGen's logs."""
    responses = read_accuracy_log(run_dir / "mlperf_log_accuracy.json")
    verdict = verify(responses, context.streaming, context.eos_token_id)
    write_text_atomic(run_dir / VERIFY_FILE, verdict.text())
    return verdict
