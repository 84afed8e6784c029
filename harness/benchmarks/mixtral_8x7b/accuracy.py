"""mixtral-8x7b's accuracy of a run, as the reference's evaluate-accuracy.py computes it.

Log entries are counted in gen_num before duplicates are skipped (the reference does so); each sample's
first answer adds its tokens to gen_tok_len and goes to its sub-dataset's scoring:
- OpenOrca: decoded without special tokens, stripped and split one sentence per line (answer and
  reference), ROUGE-1/2/L/Lsum with stemming, each mean x 100 rounded to four places; gen_len counts the
  characters of these answers only;
- GSM8K: the number of the answer against the reference number (`gsm8k`);
- MBXP: the generated code run against the test code (`mbxp`, in the sandbox).
A language whose toolchain is missing here leaves its problems unscored; accuracy.json names them and the
run fails a verdict for it, rather than reporting a score the reference would not have computed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import BaseModel

from harness.benchmarks.mixtral_8x7b import gsm8k
from harness.benchmarks.mixtral_8x7b.dataset import GSM8K, OPEN_ORCA, references
from harness.benchmarks.mixtral_8x7b.mbxp import DEFAULT_WORKERS, MbxpResult, problem_from_sample, score_mbxp
from harness.benchmarks.scoring import accuracy_writer, first_answers
from submitter.evaluation.accuracy_log import read_accuracy_log
from submitter.evaluation.detokenize import Detokenizer
from submitter.evaluation.rouge import ROUGE_TYPES, score_samples
from submitter.evaluation.verdicts import MetricVerdict, ScoredResult


class MbxpSummary(BaseModel):
    passed: int
    scored: int
    per_language: dict[str, dict[str, int]]
    # language -> problems not scored because its compiler or interpreter is missing here
    missing_toolchains: dict[str, int]
    network_isolated: bool

    @classmethod
    def of(cls, result: MbxpResult) -> MbxpSummary:
        return cls(
            passed=result.passed,
            scored=result.scored,
            per_language={
                language: {"problems": counts.problems, "passed": counts.passed}
                for language, counts in result.per_language.items()
            },
            missing_toolchains={
                language: gap.problems for language, gap in result.missing_toolchains.items()
            },
            network_isolated=result.network_isolated,
        )


class AccuracyResult(ScoredResult):
    # Absent when the run answered no OpenOrca sample, as in the reference.
    rouge1: float | None = None
    rouge2: float | None = None
    rougeL: float | None = None
    rougeLsum: float | None = None
    gsm8k: float
    mbxp: float | int  # the reference's int 0 when the run answered no MBXP sample
    gen_len: int
    gen_num: int
    gen_tok_len: int
    tokens_per_sample: float
    mbxp_details: MbxpSummary | None = None

    def printed(self) -> str:
        """The reference's line: ROUGE (when scored), gsm8k, mbxp, then the totals; no details."""
        line = self.model_dump(exclude={"mbxp_details"})
        return repr({key: value for key, value in line.items() if value is not None})

    @property
    def samples(self) -> int:
        return self.gen_num


def evaluate(
    accuracy_log: Path, dataset: Path, detokenize: Detokenizer, workers: int | None = None
) -> AccuracyResult:
    truth = references(dataset)
    entries = read_accuracy_log(accuracy_log)  # gen_num counts them all, repeats included
    logged_entries = len(entries)
    answers = first_answers(entries, accuracy_log, dataset, len(truth))
    texts = detokenize([answer.token_ids for answer in answers])
    by_subset: dict[str, list[tuple[str, int]]] = {}
    for text, answer in zip(texts, answers, strict=True):
        by_subset.setdefault(truth[answer.qsl_idx].subset, []).append((text, answer.qsl_idx))

    open_orca = by_subset.get(OPEN_ORCA, [])
    rouge: dict[str, float] = {}
    open_orca_characters = 0
    if open_orca:
        scores = score_samples(
            [text for text, _ in open_orca], [truth[i].answer for _, i in open_orca], workers
        )
        rouge = {name: float(round(np.mean(scores.fmeasures[name]) * 100, 4)) for name in ROUGE_TYPES}
        open_orca_characters = sum(scores.prediction_lengths)

    math = by_subset.get(GSM8K, [])
    gsm8k_score = gsm8k.accuracy([text for text, _ in math], [truth[i].answer for _, i in math])

    code = [problem_from_sample(truth[i].id, text, truth[i].answer) for text, i in by_subset.get("MBXP", [])]
    mbxp = score_mbxp(code, workers=workers or DEFAULT_WORKERS) if code else None

    generated_tokens = sum(len(answer.token_ids) for answer in answers)
    return AccuracyResult(
        **rouge,
        gsm8k=gsm8k_score,
        mbxp=mbxp.score if mbxp else 0,
        gen_len=open_orca_characters,
        gen_num=logged_entries,
        gen_tok_len=generated_tokens,
        tokens_per_sample=round(generated_tokens / logged_entries, 1),
        mbxp_details=MbxpSummary.of(mbxp) if mbxp else None,
    )


def toolchain_verdicts(result: ScoredResult) -> list[MetricVerdict]:
    """A failing verdict when MBXP problems went unscored for want of a toolchain here."""
    assert isinstance(result, AccuracyResult)
    missing = result.mbxp_details.missing_toolchains if result.mbxp_details else {}
    if not missing:
        return []
    named = ", ".join(f"{language} ({count} problems)" for language, count in missing.items())
    return [
        MetricVerdict(
            metric="mbxp_unscored_problems",
            value=sum(missing.values()),
            bound=f"== 0: install the toolchains of {named} and score the run again (submitter accuracy)",
            passed=False,
        )
    ]


write_accuracy = accuracy_writer(evaluate, toolchain_verdicts)
