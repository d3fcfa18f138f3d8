"""The package's shape: no import cycles, and no step of the data flow importing a later one.

receive -> decode -> assemble -> rebuild -> route -> grade -> export, with the leaves (settings, records,
metrics) below every step, the plugin registry helper under every step that has plugins, and the entry points
(config, the pipeline it builds, offline, server, cli) above them. A later step may import an earlier one; never
the reverse.
"""

from __future__ import annotations

import grimp
import pytest

# Earliest first; modules in one tuple are one step.
STEPS: list[tuple[str, ...]] = [
    ("registry",),
    ("receivers",),
    ("decode", "shard"),
    ("assemble", "ingest", "spool"),
    ("rebuild",),
    ("route",),
    ("conversations", "turns"),
    ("judges",),
    ("graders",),
    ("grading", "gathering"),
    ("sinks", "export", "ui"),
    ("config",),
    ("pipeline",),
    ("offline", "stream", "server", "backfill", "compare", "admin", "reload", "backpressure"),
    ("workers",),
    ("cli", "__main__"),
]
LEAVES = ("settings", "errors", "results", "spans", "trajectory", "metrics", "patterns")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("otelgrade", cache_dir=None)


def step_of(module: str) -> tuple[int, str] | None:
    """(step index, step name) of a module; leaves are step -1; the package's own __init__ is None."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    name = parts[1]
    if name in LEAVES:
        return -1, name
    for index, names in enumerate(STEPS):
        if name in names:
            return index, name
    raise AssertionError(f"{module} belongs to no step: add it to STEPS or LEAVES in this test")


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


def test_leaves_import_nothing_of_the_package(graph: grimp.ImportGraph) -> None:
    for leaf in LEAVES:
        imported = graph.find_modules_directly_imported_by(f"otelgrade.{leaf}")
        assert not imported, f"otelgrade.{leaf} is a leaf but imports {sorted(imported)}"


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
    upstream = graph.find_upstream_modules("otelgrade.assemble")
    assert not {m for m in upstream if m.startswith(("otelgrade.graders", "otelgrade.judges"))}
