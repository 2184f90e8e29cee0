"""The harness's packages import one way: no module imports, even lazily or for type checks
only, a module that imports it back, and no stage package imports a package that imports it
back. A circle means two rooms of the layout are really one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "py_src" / "extparity"


def module_name(path: Path) -> str:
    parts = ["extparity", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every extparity module ``path`` imports, wherever the import statement stands."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}  # `from pkg import module`
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected set of more than one node (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def stage(module: str) -> str:
    """The stage package a module belongs to (``extparity.engines.kinds.v8`` -> ``engines``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else "extparity"


def test_no_module_imports_a_module_that_imports_it_back():
    assert circles(import_graph()) == []


def test_no_stage_package_imports_one_that_imports_it_back():
    stages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        if stage(module) != "extparity":  # the top level (cli, __init__) is the entry point above every stage
            stages.setdefault(stage(module), set()).update(stage(t) for t in targets if stage(t) not in ("extparity", stage(module)))
    assert circles(stages) == []


def test_the_check_sees_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def readme_rooms() -> list[str]:
    """The folders of the Architecture table (docs/architecture.md), in its order."""
    text = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.partition("\n## Architecture\n")[2].partition("\n#")[0]
    return [line.split("`")[1].rstrip("/") for line in section.splitlines() if line.startswith("| `")]


def test_the_readme_names_every_folder_of_the_harness_and_no_other():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert sorted(readme_rooms()) == folders


def test_each_stage_imports_only_stages_the_readme_lists_above_it():
    order = readme_rooms()
    backwards = sorted({(stage(m), stage(t)) for m, targets in import_graph().items() for t in targets
                        if "extparity" not in (stage(m), stage(t)) and stage(m) != stage(t)
                        and order.index(stage(t)) > order.index(stage(m))})
    assert backwards == []
