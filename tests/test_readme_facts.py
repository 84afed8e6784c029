"""What the README states about the code, held to the code, so that it cannot drift again.

The numbers the Quickstart quotes from its long runs (throughput, files staged, bytes packaged) are
checked by `bench/readme_quickstart.py`, which runs the Quickstart itself; these tests hold what is
quick to know: the benchmarks the harness runs, the descriptors that ship, `systems validate --all`'s
summary, every command and option in the command table, and the demo system's paths per benchmark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from submitter.cli import cli
from submitter.rounds.registry import available_rounds, load_round, rounds_with_benchmark

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def run_benchmarks() -> set[str]:
    """Every benchmark of every round the harness runs (has a plug-in), without its accuracy variant."""
    names = set()
    for round_name in available_rounds():
        for benchmark in load_round(round_name).benchmarks.values():
            if benchmark.plugin is not None:
                names.add(re.sub(r"-(99|99\.9|edge)$", "", benchmark.name))
    return names


def test_the_opening_names_every_benchmark_the_harness_runs() -> None:
    opening = README.split("\n\n", 2)[1]
    listed = set(re.search(r"benchmarks \(([^)]*)\)", opening, re.S)[1].replace("\n", " ").split(", "))
    assert listed == run_benchmarks()


def test_the_readme_names_every_shipped_descriptor() -> None:
    shipped = sorted(path.stem for path in (ROOT / "systems").glob("*.json"))
    assert [name for name in shipped if f"`{name}`" not in README] == []


def test_the_quoted_validate_summary_is_what_validate_prints() -> None:
    printed = CliRunner().invoke(cli, ["systems", "validate", "--all"])
    [summary] = re.findall(r"\d+ file\(s\) checked: \d+ error\(s\), \d+ warning\(s\)", printed.output)
    quoted = re.findall(r"\d+ file\(s\) checked: \d+ error\(s\), \d+ warning\(s\)", README)
    assert quoted and set(quoted) == {summary}


def leaf_commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None
            yield from leaf_commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def test_the_command_table_names_every_command_and_each_of_its_options() -> None:
    row_pattern = r"^\| `submitter ([a-z-]+(?: [a-z][a-z-]*)?)(.*?)` \|"
    rows = {match[1]: match[2] for match in re.finditer(row_pattern, section("Commands"), re.M)}
    missing = []
    for name, command in leaf_commands(cli):
        row = rows.get(name)
        if row is None:
            missing.append(f"submitter {name}")
            continue
        for option in command.params:
            names = [*option.opts, *option.secondary_opts]
            named = any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", row) for n in names)
            if isinstance(option, click.Option) and "--help" not in names and not named:
                missing.append(f"submitter {name} {names[0]}")
    assert missing == []


def test_the_demo_paths_of_each_benchmark_are_the_demo_descriptor_s() -> None:
    """`data synth --out` and `--demo-model` must write where demo_cpu looks, benchmark by benchmark."""
    demo = json.loads((ROOT / "systems" / "demo_cpu.json").read_text())
    table = section("Quickstart: the demo, from install to an archive")
    for name, benchmark in demo["benchmarks"].items():
        rounds = ", ".join(rounds_with_benchmark(name))
        row = f"| {name} | `{benchmark['dataset_path']}` | `{benchmark['model_path']}` | {rounds} |"
        assert row in table, row
