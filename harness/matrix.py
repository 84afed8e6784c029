"""Which runs a submission needs from a system: every scenario it sets up x performance, accuracy and
the round's compliance tests.

Order: by benchmark, then scenario, so that consecutive runs share one engine start (minutes on a GPU);
within a scenario audits first (about a hundred samples, so a broken engine or harness shows in
seconds), then accuracy (a wrong model shows before the long runs), then performance, then the audits
that are verified against those two runs (TEST01).
"""

from __future__ import annotations

from dataclasses import dataclass

from compliance.registry import audit_test, available_audits
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileformats.run_mode import Mode
from submitter.rounds.models import RoundRules, Scenario
from submitter.rounds.registry import rounds_with_benchmark
from submitter.systems.descriptor import SystemDescriptor

HARNESS_SCENARIOS = (Scenario.OFFLINE, Scenario.SERVER, Scenario.INTERACTIVE)
_MODE_ORDER = {Mode.ACCURACY: 1, Mode.PERFORMANCE: 2}  # audits first: 0, or last: 3


def _verified_against_runs(mode: Mode) -> bool:
    return mode.audit_test is not None and bool(audit_test(mode.audit_test).REFERENCE_RUNS)


@dataclass(frozen=True)
class Step:
    benchmark: str
    scenario: Scenario
    mode: Mode

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.scenario}/{self.mode}"

    def __str__(self) -> str:
        return f"{self.benchmark} {self.scenario} {self.mode}"


def required_steps(
    system: SystemDescriptor,
    rules: RoundRules,
    benchmarks: tuple[str, ...] = (),
    scenarios: tuple[Scenario, ...] = (),
    modes: tuple[Mode, ...] = (),
) -> list[Step]:
    """The steps of a plan, optionally narrowed to some benchmarks, scenarios and modes."""
    unknown = [name for name in benchmarks if name not in system.benchmarks]
    if unknown:
        raise UsageProblem(
            f"system {system.id} sets up no benchmark {', '.join(unknown)}; "
            f"it has: {', '.join(system.benchmarks)}"
        )
    runnable_audits = {mode.value for mode in Mode if mode.audit_test} & set(available_audits())
    steps = []
    for name, setup in system.benchmarks.items():
        if (benchmarks and name not in benchmarks) or (not benchmarks and not setup.submit):
            continue
        if name not in rules.benchmarks:
            if not benchmarks:
                continue  # set up for another round (DESC-BENCHMARK warns); --round picks one that has it
            having = rounds_with_benchmark(name)
            raise UsageProblem(
                f"round {rules.name} has no benchmark {name!r} ({system.shown}); "
                + (f"it is in {', '.join(having)}: pass --round" if having else "no round has it")
            )
        required = [Mode.ACCURACY, Mode.PERFORMANCE]
        for test in rules.benchmark(name).compliance_tests:
            if test not in runnable_audits:
                raise SubmitterError(
                    f"round {rules.name} requires {test} for {name}; the harness cannot run that test"
                )
            required.append(Mode(test))
        for scenario in HARNESS_SCENARIOS:
            if scenario in setup.scenarios and (not scenarios or scenario in scenarios):
                steps += [Step(name, scenario, mode) for mode in required if not modes or mode in modes]
    if not steps:
        raise UsageProblem(
            f"nothing to run: system {system.id} sets up none of the scenarios and modes asked for "
            f"in round {rules.name}"
        )
    return sorted(
        steps,
        key=lambda step: (
            step.benchmark,
            HARNESS_SCENARIOS.index(step.scenario),
            _MODE_ORDER.get(step.mode, 3 if _verified_against_runs(step.mode) else 0),
        ),
    )
