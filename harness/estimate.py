"""How long a planned run will take and how much disk it will write, before anything starts.

LoadGen's own sizing rules (from the round's `run_sizing`) give the number of samples; the system's
`target_qps` is its expected samples per second. Accuracy runs issue the dataset once; audit runs what
the audit file says. The engine's start (for the first run of those that share one) and ROUGE scoring
come on top.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from harness.runner import RunPlan
from submitter.fileformats.audit_config import read_audit_config
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import Scenario
from submitter.systems.backends import backend_info

# One CPU core scores about 122 samples per second (bench/accuracy_speed.py: 13368 in 109.4 s).
SCORING_S_PER_SAMPLE_CORE = 109.4 / 13368
# Accuracy logs hold every generated token as 8 hex characters, plus ~120 bytes of JSON per record.
_RECORD_OVERHEAD_BYTES = 120
# Summary and detail logs, user.conf, run.json: a few hundred kilobytes whatever the mode.
_LOG_BYTES = 512 * 1024


@dataclass(frozen=True)
class Estimate:
    seconds: float
    samples: int
    disk_bytes: int


def _round_up(count: float, unit: int) -> int:
    return math.ceil(count / unit) * unit


@dataclass(frozen=True)
class Issue:
    """What LoadGen issues in a run: the samples its settings ask for and, in equal-issue mode, the whole
    sets of `sample_set` they are rounded up to (`samples`); `per_qps`: samples asked per unit of
    target_qps (Offline's slack x duration; 0 where the rate does not set the count)."""

    asked: float
    samples: int
    sample_set: int | None
    min_query_count: float
    per_qps: float


def _issue(plan: RunPlan) -> Issue:
    mode, scenario = plan.request.mode, plan.request.scenario
    if mode is Mode.ACCURACY:
        return Issue(plan.dataset_size, plan.dataset_size, None, plan.dataset_size, 0.0)
    sizing = plan.benchmark.run_sizing
    settings: dict[str, float] = {
        "min_duration": plan.rules.limits.min_duration_ms,
        "min_query_count": sizing.loadgen_min_query_count.get(scenario, 1) if sizing else 1,
        "performance_sample_count_override": plan.benchmark.dataset.performance_sample_count,
        "sample_concatenate_permutation": 1 if sizing and sizing.whole_sample_sets else 0,
        **plan.user_conf,
    }
    renamed = {"min_duration_ms": "min_duration"}
    settings.update({renamed.get(key, key): value for key, value in plan.overrides.items()})
    if plan.audit_config:  # LoadGen applies the audit file last, over user.conf and the overrides
        settings.update({key: float(value) for key, value in read_audit_config(plan.audit_config).items()})

    qps = float(settings.get("target_qps", 1.0))
    duration_s = settings["min_duration"] / 1000
    slack = (sizing.offline_sample_slack if sizing else 1.0) if scenario is Scenario.OFFLINE else 1.0
    asked = max(settings["min_query_count"], slack * duration_s * qps)
    if settings["sample_concatenate_permutation"]:
        sample_set = int(settings["performance_sample_count_override"])
        return Issue(
            asked, _round_up(asked, sample_set), sample_set, settings["min_query_count"], slack * duration_s
        )
    return Issue(asked, math.ceil(asked), None, settings["min_query_count"], slack * duration_s)


def issued_samples(plan: RunPlan) -> int:
    """How many samples LoadGen will issue in this run."""
    return _issue(plan).samples


# Equal-issue rounding that adds more than this share to what the settings ask for is worth a word.
_ROUNDING_WORTH_A_NOTE = 0.25


def whole_set_note(plan: RunPlan) -> str | None:
    """Where equal-issue mode rounds an Offline run's samples up by much (29,040 asked, 49,152 issued: 1.7x
    the work), the target_qps that would keep one set fewer; None otherwise."""
    issue = _issue(plan)
    if issue.sample_set is None or plan.request.scenario is not Scenario.OFFLINE or not issue.per_qps:
        return None
    fewer = issue.samples - issue.sample_set
    if issue.samples <= issue.asked * (1 + _ROUNDING_WORTH_A_NOTE) or fewer < issue.min_query_count:
        return None
    qps = float(plan.user_conf.get("target_qps", 1.0))
    # Rounded down, so that the rate printed does issue the fewer samples (9.69, not 9.7, for 6,396 in 660 s).
    at_most = math.floor(fewer / issue.per_qps * 100) / 100
    return (
        f"target_qps {qps:g} asks {math.ceil(issue.asked):,} samples, which equal-issue mode rounds up to "
        f"{issue.samples:,} (whole sets of {issue.sample_set:,}); a target_qps of at most "
        f"{at_most:g} issues {fewer:,} (the run must still last LoadGen's minimum duration)"
    )


# Dummy-weight answers this many times the benchmark's mean length time other work than the benchmark's.
_LONGER_ANSWERS_WORTH_A_NOTE = 1.25


def answer_length_note(plan: RunPlan) -> str | None:
    """Where dummy weights will run every answer to max_tokens, far beyond the benchmark's mean answer,
    because the data set does not record its answers' lengths; None otherwise."""
    mean = plan.benchmark.generation.mean_output_tokens if plan.benchmark.generation else None
    max_tokens = plan.engine.generation.max_tokens
    if not plan.engine.dummy_weights or plan.answer_lengths or mean is None:
        return None
    if max_tokens <= mean * _LONGER_ANSWERS_WORTH_A_NOTE:
        return None
    return (
        f"dummy weights and a data set without its answers' lengths: every sample generates {max_tokens:,} "
        f"tokens, {max_tokens / mean:.1f}x the benchmark's mean answer ({mean:,.0f}), so the run times other "
        "work than the benchmark's; time it on `submitter data synth` records, which carry the lengths"
    )


def estimate(plan: RunPlan, cores: int | None = None, starts_engine: bool = True) -> Estimate:
    samples = issued_samples(plan)
    qps = float(plan.user_conf.get("target_qps", 1.0))
    seconds = samples / qps
    if starts_engine:
        seconds += backend_info(plan.engine.backend).start_s
    disk = _LOG_BYTES
    logged = samples if plan.request.mode is not Mode.PERFORMANCE else 0
    if logged:
        tokens = plan.benchmark.generation.max_output_tokens if plan.benchmark.generation else 1
        disk += logged * (tokens * 8 + _RECORD_OVERHEAD_BYTES)
    if plan.request.mode is Mode.ACCURACY and plan.scorable:
        seconds += samples * SCORING_S_PER_SAMPLE_CORE / (cores or os.cpu_count() or 1)
    return Estimate(seconds=seconds, samples=samples, disk_bytes=disk)
