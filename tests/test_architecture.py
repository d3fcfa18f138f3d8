"""The package's shape: `ls otelgrade/` reads as the data flow, no step imports a later one, and no import cycles.

core (the shared words) -> intake -> rebuild -> grade -> export -> config -> pipeline -> tools, service -> cli.
A package may import an earlier one, never a later one; `core` imports nothing outside itself.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

import otelgrade

# Earliest first; packages (or entry modules) in one tuple are one step.
STEPS: list[tuple[str, ...]] = [
    ("core",),
    ("intake",),
    ("rebuild",),
    ("grade",),
    ("export",),
    ("config",),
    ("pipeline",),
    ("tools", "service"),
    ("cli", "__main__"),
]
PACKAGE = Path(otelgrade.__file__).parent
DATA = {"defaults", "examples", "py.typed"}  # shipped files, not code


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("otelgrade", cache_dir=None)


def step_of(module: str) -> tuple[int, str] | None:
    """(step index, step name) of a module; the package's own `__init__` is None."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    for index, names in enumerate(STEPS):
        if parts[1] in names:
            return index, parts[1]
    raise AssertionError(f"{module} belongs to no step: add its package to STEPS in this test")


def test_the_top_level_is_the_steps_and_the_entry_points() -> None:
    listed = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir() if not p.name.startswith("__")}
    listed |= {"__main__"}
    assert listed - DATA == {name for step in STEPS for name in step}


def test_every_step_package_says_what_it_takes_and_gives() -> None:
    for name in (n for step in STEPS for n in step):
        if (PACKAGE / name).is_dir():
            doc = (PACKAGE / name / "__init__.py").read_text().split('"""')[1]
            assert 1 <= doc.strip().count("\n") + 1 <= 6, f"otelgrade/{name}/__init__.py: a two or three line docstring"


def test_every_module_belongs_to_a_step(graph: grimp.ImportGraph) -> None:
    for module in graph.modules:
        step_of(module)


def test_no_step_imports_a_later_one(graph: grimp.ImportGraph) -> None:
    backwards = []
    for importer in sorted(graph.modules):
        here = step_of(importer)
        for imported in graph.find_modules_directly_imported_by(importer):
            there = step_of(imported)
            if here is not None and there is not None and there[0] > here[0]:
                backwards.append(f"{importer} imports {imported} ({here[1]} is before {there[1]})")
    assert not backwards, "\n".join(backwards)


def test_core_imports_nothing_outside_itself(graph: grimp.ImportGraph) -> None:
    outside = {
        f"{module} imports {imported}"
        for module in graph.find_children("otelgrade.core") | graph.find_descendants("otelgrade.core")
        for imported in graph.find_modules_directly_imported_by(module)
        if not imported.startswith("otelgrade.core")
    }
    assert not outside, sorted(outside)


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    """Tarjan's strongly connected components over module imports: every component is one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


def test_importing_the_assembler_loads_no_grader_or_judge(graph: grimp.ImportGraph) -> None:
    upstream = graph.find_upstream_modules("otelgrade.intake.assemble")
    assert not {m for m in upstream if m.startswith(("otelgrade.grade.graders", "otelgrade.grade.judges"))}
