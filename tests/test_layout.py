"""The harness's packages import one way: no module imports, even lazily or for type checks
only, a module that imports it back, and no stage package imports a package that imports it
back. A circle means two rooms of the layout are really one.

The engine kinds are reached only through the registry: no module outside
``extparity.engines.kinds`` imports one (the registry names them by import path, and the rest of
the harness asks a kind's class for what it can do), and Playwright is imported only by the
browser kinds and what they share, so ``import extparity.cli``, loading a config and building
its engines load neither Playwright nor a JS binding: those load when an engine starts."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "py_src" / "extparity"
KINDS_PACKAGE = "extparity.engines.kinds"
# Where ``playwright`` may be imported (inside a function: see the start-up check below). Why
# these: the two browser kinds start Playwright, and browser.py is what they share.
PLAYWRIGHT_IMPORTERS = {f"{KINDS_PACKAGE}.chromium", f"{KINDS_PACKAGE}.firefox", "extparity.engines.browser"}
# What an engine starts with, never before: Playwright, and the headless kinds' JS bindings.
STARTED_ONLY = ("playwright", "quickjs", "py_mini_racer", "pythonmonkey")


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


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def kind_importers(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, kind module) for every module outside the kinds package that imports one."""
    return sorted((module, target) for module, targets in graph.items() if not inside(module, KINDS_PACKAGE)
                  for target in targets if inside(target, KINDS_PACKAGE))


def playwright_importers() -> list[str]:
    """The harness's modules that import Playwright anywhere, outside PLAYWRIGHT_IMPORTERS."""
    return sorted(module_name(path) for path in PACKAGE.rglob("*.py")
                  if any(inside(name, "playwright") for name in imports_of(path))
                  and module_name(path) not in PLAYWRIGHT_IMPORTERS)


def test_no_module_outside_the_kinds_package_imports_a_kind():
    assert kind_importers(import_graph()) == []


def test_the_registry_names_the_kinds_it_does_not_import():
    from extparity.project import kinds

    assert all(inside(target.partition(":")[0], KINDS_PACKAGE) for target in kinds.KINDS.values())
    assert not any(inside(name, KINDS_PACKAGE) for name in imports_of(PACKAGE / "project" / "kinds.py"))


def test_only_the_browser_kinds_and_what_they_share_import_playwright():
    assert playwright_importers() == []


def test_the_check_sees_a_kind_imported_from_outside_its_package():
    graph = {"extparity.coverage.record": {f"{KINDS_PACKAGE}.chromium"}, f"{KINDS_PACKAGE}.v8": {"extparity.engines.child"}}
    assert kind_importers(graph) == [("extparity.coverage.record", f"{KINDS_PACKAGE}.chromium")]


START_UP = """
import json, sys
STARTED_ONLY = %r
loaded = lambda: sorted(m for m in STARTED_ONLY if m in sys.modules)
import extparity.cli
after = {"import extparity.cli": loaded()}
from extparity.project.config import load_project
from extparity.project.kinds import KINDS, build_engine, engine_class
project = load_project(sys.argv[1])
engines = [build_engine(spec, project) for spec in project.engines.values()]
facts = {kind: engine_class(kind).RUNS for kind in KINDS}
after["the config loaded and its engines built"] = loaded()
print(json.dumps({"after": after, "engines": sorted(project.engines), "kinds": facts}))
"""


def test_importing_the_cli_and_building_every_engine_loads_no_playwright_and_no_js_binding():
    """The bundled config names every built-in kind (the browser ones with their message-path
    twins): validating it, and building its engines without starting one, needs none of them."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE.parent), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", START_UP % (STARTED_ONLY,), str(PACKAGE.parents[1] / "pyproject.toml")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["after"] == {"import extparity.cli": [], "the config loaded and its engines built": []}
    assert {"chromium-background", "firefox", "python", "quickjs-chrome", "v8-chrome",
            "spidermonkey-firefox"} <= set(report["engines"])
    assert set(report["kinds"]) == {"python", "quickjs", "v8", "spidermonkey", "chromium", "firefox"}
