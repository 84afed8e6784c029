"""How a (benchmark, scenario, mode) becomes LoadGen settings: model name, user.conf, audit file, overrides.

Interactive is LoadGen's Server scenario under the benchmark's interactive model name, whose
mlperf.conf entries carry the tighter latency limits. TEST06 is a performance run with the audit file
passed by path; no run ever lets LoadGen pick up an `audit.config` from the working directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from submitter.rounds.models import BenchmarkRules, Scenario


@dataclass(frozen=True)
class LoadGenTarget:
    model: str
    scenario: str
    streaming: bool


def loadgen_target(rules: BenchmarkRules, scenario: Scenario) -> LoadGenTarget:
    lg_scenario = "Server" if scenario is Scenario.INTERACTIVE else scenario.value
    # First tokens matter where latencies are judged per token (LLMs); qwen3-vl's Server is judged by the
    # whole answer's latency, so its answers come whole, as its reference sends them.
    streaming = lg_scenario == "Server" and rules.llm
    return LoadGenTarget(rules.loadgen_models[scenario], lg_scenario, streaming=streaming)


def user_conf_text(target: LoadGenTarget, keys: dict[str, int | float]) -> str:
    lines = [f"{target.model}.{target.scenario}.{key} = {value}" for key, value in sorted(keys.items())]
    return "".join(line + "\n" for line in lines)


# What each audit.config key looks like in the detail log once LoadGen has applied it.
AUDIT_KEYS_IN_LOG = {
    "mode": ("requested_test_mode", {"1": "AccuracyOnly", "2": "PerformanceOnly"}),
    "accuracy_log_rng_seed": ("requested_accuracy_log_rng_seed", None),
    "accuracy_log_sampling_target": ("requested_accuracy_log_sampling_target", None),
    "min_query_count": ("requested_min_query_count", None),
    "min_duration": ("requested_min_duration_ms", None),
    "sample_concatenate_permutation": ("requested_sample_concatenate_permutation", {"0": False, "1": True}),
    "performance_issue_unique": ("requested_performance_issue_unique", {"0": False, "1": True}),
}
AUDIT_NOTICE = "Found Audit Config file"


class Smoke(BaseModel):
    """A short trial run: few samples, a short minimum duration. Its results are never submittable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    samples: int = Field(default=256, ge=1, description="dataset records used (LoadGen's sample set)")
    min_duration_ms: int = Field(default=10_000, ge=0, description="Server and Interactive only")
    server_min_queries: int = Field(default=512, ge=1, description="queries; early stopping needs ~460")

    # The detail-log fields a trial leaves short of the rules by design: its overrides (an Offline query of
    # `samples`, not the data set), and an accuracy run over `samples` records rather than the whole set.
    SHORTENED_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {
            "effective_samples_per_query",
            "effective_min_duration_ms",
            "effective_min_query_count",
            "effective_performance_sample_count",
            "effective_accuracy_sample_count",
        }
    )

    def overrides(self, scenario: Scenario, dataset_size: int) -> dict[str, int]:
        samples = min(self.samples, dataset_size)
        if scenario is Scenario.OFFLINE:
            # One pass over the samples: a trial should not fail because the engine beat target_qps.
            return {
                "min_duration_ms": 0,
                "min_query_count": samples,
                "performance_sample_count_override": samples,
            }
        return {
            "min_duration_ms": self.min_duration_ms,
            "min_query_count": self.server_min_queries,
            "performance_sample_count_override": samples,
        }
