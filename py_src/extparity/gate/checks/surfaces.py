"""Messaging surfaces are policy: every way in from outside the extension is declared, with a reason.

Why: the gate sends its cases from the extension's own pages. A background that answers other
senders (web pages through ``externally_connectable``, other extensions through
``onMessageExternal``/``onConnectExternal``) or content scripts that run on every site are
paths a case never takes, and a background can answer them differently. So each of these
fails the gate unless ``[tool.extparity.gate].surfaces`` declares it (``surface``, ``script``
where one applies, ``reason``); a declaration that no longer matches anything is stale and fails:

* ``externally_connectable`` in a manifest (``script`` left out);
* a listener on ``onMessageExternal`` or ``onConnectExternal`` (any reference to either, as
  ``a.onMessageExternal`` or ``a["onMessageExternal"]``) in any shipped script;
* a content script whose ``matches`` reach every site (``<all_urls>``, a ``*`` host, ``file:///*``),
  declared by its first script (surface ``content_scripts``).
"""

from __future__ import annotations

from pathlib import Path

from ...project import globs
from ...project.config import Declared, Project
from ...subject import tree_checks
from ...subject.linker import LinkError, parse_source
from ..context import Gate
from ..registry import Spec
from ..scopes import line, text
from .scripts import shipped_scripts

LISTENERS = ("onMessageExternal", "onConnectExternal")
CONFIG = "[tool.extparity.gate].surfaces"


def is_broad(pattern: str) -> bool:
    """Whether a match pattern reaches every site (or every local file)."""
    if pattern == "<all_urls>":
        return True
    scheme, _, rest = pattern.partition("://")
    host = rest.split("/", 1)[0]
    return host == "*" or (scheme == "file" and rest.startswith("/"))


def listener_lines(tree: Path, script: str) -> list[tuple[str, int]]:
    """``(listener, line)`` for each reference to an external-message event in a script."""
    try:
        syntax, source = parse_source((Path(tree) / script).read_bytes(), script)
    except (LinkError, OSError):
        return []  # the scripts check says the script cannot be read
    found = []
    stack = [syntax.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "property_identifier" and text(node, source) in LISTENERS:
            found.append((text(node, source), line(node)))
        elif node.type == "string_fragment" and text(node, source) in LISTENERS:
            found.append((text(node, source), line(node)))
    return sorted(found, key=lambda f: f[1])


def surfaces_problems(project: Project) -> tuple[list[str], list[str]]:
    """Problems, and the surfaces found (declared ones included) as they are shown."""
    found: dict[tuple[str, str], str] = {}  # (surface, script) -> where it was seen first
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        if manifest is None:
            continue
        if "externally_connectable" in manifest:
            found.setdefault(("externally_connectable", ""), f"{name}/manifest.json")
        for i, entry in enumerate(manifest.get("content_scripts") or []):
            entry = entry if isinstance(entry, dict) else {}
            scripts = [s for s in entry.get("js") or [] if isinstance(s, str)]
            broad = [m for m in entry.get("matches") or [] if isinstance(m, str) and is_broad(m)]
            if scripts and broad:
                found.setdefault(("content_scripts", scripts[0].lstrip("/")),
                                 f"{name}/manifest.json content_scripts[{i}] matches {broad[0]}")
        for script in shipped_scripts(tree, manifest)[0]:
            for listener, at in listener_lines(tree, script):
                found.setdefault((listener, script), f"{name}/{script}:{at}")
    def declares(d: Declared, surface: str, script: str) -> bool:  # a script may be a glob pattern
        return d.what == surface and (d.where == script or bool(script) and globs.matches(d.where, script))

    problems = [f"{where}: {surface} is a messaging surface the gate's cases never reach: declare it in "
                f"{CONFIG} with a reason" + (f" (surface = {surface!r}, script = {script!r})" if script else "")
                for (surface, script), where in found.items()
                if not any(declares(d, surface, script) for d in project.gate.surfaces)]
    problems += [f"stale declaration: {d.what}{' in ' + d.where if d.where else ''} no longer occurs: "
                 f"remove it from {CONFIG}" for d in project.gate.surfaces
                 if not any(declares(d, surface, script) for surface, script in found)]
    shown = [f"{surface}{' in ' + script if script else ''}" for surface, script in found]
    return problems, shown


def declared_text(declared: tuple[Declared, ...]) -> str:
    return ", ".join(f"{d.what}{' in ' + d.where if d.where else ''}" for d in declared)


def verdict(gate: Gate) -> tuple[list[str], str]:
    """The gate's surfaces check: its problems, and the line it says when there are none."""
    project = gate.project
    problems, shown = surfaces_problems(project)
    return problems, ("no way in from outside the extension" if not shown else
                      f"declared: {declared_text(project.gate.surfaces)}")


CHECK = Spec("surfaces",
             "an undeclared way in from outside: `externally_connectable`, external message listeners, "
             "a content script on every site", CONFIG, verdict)
