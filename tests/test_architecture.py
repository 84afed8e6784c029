"""The layers are one-way: every import of the project's own modules, read from the source (AST), obeys them.

Imports inside functions count too: they run, only later. `from package import name` is an import of
package.name where that is a module, else of the package.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from submitter.rounds.registry import available_rounds, load_round

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("submitter", "harness", "compliance")


@cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1 more
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                yield (f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base), node.lineno


@cache
def imports() -> dict[str, tuple[tuple[str, int], ...]]:
    """Each module -> the project modules it imports (the nearest existing module of a dotted name)."""
    graph = {}
    for module, path in modules().items():
        found = []
        for name, line in _imported(module, path):
            while name and name not in modules():
                name = name.rpartition(".")[0]
            if name and name != module:
                found.append((name, line))
        graph[module] = tuple(found)
    return graph


def violations(importer: str, imported: str) -> list[str]:
    return [
        f"{modules()[module].relative_to(ROOT)}:{line} imports {name}"
        for module, edges in imports().items()
        if module == importer or module.startswith(importer + ".")
        for name, line in edges
        if name == imported or name.startswith(imported + ".")
    ]


def test_the_walk_sees_the_imports_it_should():
    """The walker itself: a known import (the runner reads run.json's models) is found."""
    assert any(name == "submitter.fileformats.run_record" for name, _ in imports()["harness.runner"])


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("harness", "submitter.check"),  # the harness reads logs through the shared formats
        ("harness", "submitter.stage"),
        ("harness", "submitter.package"),
        ("harness", "submitter.report"),
        ("harness", "submitter.cli"),
        ("compliance", "submitter.check"),
        ("compliance", "harness"),  # audits are below the harness that runs them
        ("compliance", "submitter.stage"),
        ("harness.benchmarks", "harness.runner"),  # plug-ins know their data, not how runs are made
        ("harness.engines", "harness.benchmarks"),  # engines see token ids, never a benchmark
        ("submitter.stage", "harness.runner"),  # staging reads run.json, it does not run anything
        ("submitter.fileformats", "submitter.check"),  # the formats are the bottom layer
        ("submitter.fileformats", "harness"),
        ("submitter.fileformats", "submitter.evaluation"),
        ("submitter.fileformats", "submitter.systems"),
        ("submitter.rounds", "submitter.check"),
        ("submitter.rounds", "harness"),
        ("submitter.systems", "harness"),
        ("submitter.check", "harness"),
        ("submitter.check", "submitter.stage"),
        ("submitter.check", "submitter.report"),
        ("submitter.evaluation", "harness"),
        ("submitter.evaluation", "compliance"),
    ],
)
def test_a_lower_layer_never_imports_a_higher_one(importer, imported):
    assert violations(importer, imported) == []


def test_no_module_imports_itself_through_others():
    assert circles({module: {name for name, _ in edges} for module, edges in imports().items()}) == []


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert circles(graph) == [["a", "b", "c"]]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Modules importing one another in a circle: the strongly connected components (Tarjan, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def round_ids_in_code(source: str) -> list[tuple[int, str]]:
    """String constants in code (not docstrings, not comments) that name a round or a round's layout."""
    names = {*available_rounds(), *(load_round(name).layout.name for name in available_rounds())}
    pattern = re.compile(
        r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![\w.])"
    )
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        if pattern.search(node.value)
    ]


def test_the_round_grep_finds_a_round_id_in_code_and_not_in_a_docstring():
    source = '"""For v6.1."""\nDEFAULT = "v6.1"\nLAYOUT = f"the {x} v5.1 layout"\nVERSION = "6.0.16"\n'
    assert round_ids_in_code(source) == [(2, "v6.1"), (3, " v5.1 layout")]


def test_no_round_id_is_written_in_code():
    """The packs name the rounds and their layouts; code reads them (the newest pack is the default)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in modules().values()
        for line, text in round_ids_in_code(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_readme_layout_table_names_every_module():
    """README's layout table is where a reader looks for a module: each one two levels deep is named,
    as `name` or, for a package, as `its/path/`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]

    def named(module: str) -> bool:
        short, path = re.escape(module.split(".")[-1]), re.escape(module.replace(".", "/"))
        return re.search(rf"`({short}|{path})[`/]", table) is not None

    shown = [
        module for module in modules() if 1 < len(module.split(".")) <= 3 and not module.endswith("__main__")
    ]
    assert [module for module in shown if not named(module)] == []


RAY_MODULES = ("harness.ray_cluster", "harness.engines.ray_replicas")


def _ray_imports(path: Path) -> Iterator[tuple[int, bool]]:
    """Each import of ray in a file: its line, and whether it sits at the module's top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(name == "ray" or name.startswith("ray.") for name in names):
            yield node.lineno, id(node) in top_level


def test_ray_is_imported_only_by_the_cluster_modules_and_only_inside_functions():
    """`ray` is an optional extra: a single-host run, `check` and every other command import without it."""
    found = [
        f"{path.relative_to(ROOT)}:{line}{' (top level)' if top else ''}"
        for module, path in modules().items()
        for line, top in _ray_imports(path)
        if top or module not in RAY_MODULES
    ]
    assert found == []


def test_a_single_host_run_and_check_never_load_ray():
    """The import graph at run time, in a fresh interpreter: the CLI, the checker, the worker, and a
    single-host replicated engine started and stopped."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import submitter.cli, submitter.check.checker, harness.worker, harness.run_all, harness.preflight\n"
        "from harness.engines.base import EngineSpec, Generation\n"
        "from harness.engines.registry import create_engine\n"
        "spec = EngineSpec(backend='synthetic', model='synthetic', replicas=2,\n"
        "                  generation=Generation(max_tokens=4, min_tokens=2, eos_token_id=0))\n"
        "engine = create_engine(spec); engine.start(); engine.stop()\n"
        "print(sorted(name for name in sys.modules if name == 'ray' or name.startswith('ray.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"  # after the engines' own log lines
