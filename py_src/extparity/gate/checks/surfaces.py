"""Messaging surfaces are policy: every way in from outside the extension is declared, with a reason.

Why: the gate sends its cases from the extension's own pages. A background that answers other
senders (web pages through ``externally_connectable``, other extensions through
``onMessageExternal``/``onConnectExternal``) or content scripts that run on every site are
paths a case never takes, and a background can answer them differently. So each of these
fails the gate unless ``[tool.extparity.gate].surfaces`` declares it (``surface``, ``script``
where one applies, ``reason``); a declaration that no longer matches anything is stale and fails:

* ``externally_connectable`` in a manifest (``script`` left out);
* a listener on ``onMessageExternal`` or ``onConnectExternal`` (any reference to either, as
  ``a.onMessageExternal``, ``a["onMessage" + "External"]`` or ``const { onMessageExternal } = a``)
  in any shipped script; an event of ``runtime`` looked up by a computed name fails outright
  (``runtime[way]``: no declaration can say which event it is);
* a content script whose ``matches`` reach every site (``<all_urls>``, a ``*`` host, ``file:///*``),
  declared by its first script (surface ``content_scripts``).
"""

from __future__ import annotations

from pathlib import Path

from ...project import globs
from ...project.config import Declared, Project
from ...subject import tree_checks
from ...subject.js_strings import literal_value
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
    """``(listener, line)`` for each reference to an external-message event in a script, and
    ``(expression, line)`` with a listener of ``COMPUTED`` for each event of ``runtime`` looked up
    by a name the gate cannot read (``runtime[way]``)."""
    try:
        syntax, source = parse_source((Path(tree) / script).read_bytes(), script)
    except (LinkError, OSError):
        return []  # the scripts check says the script cannot be read
    found = []
    stack = [syntax.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in ("property_identifier", "shorthand_property_identifier_pattern", "identifier") \
                and text(node, source) in LISTENERS:  # a.onMessageExternal, { onMessageExternal } = a
            found.append((text(node, source), line(node)))
        elif node.type == "subscript_expression":  # a["onMessage" + "External"], runtime[way]
            index = node.child_by_field_name("index")
            name = constant_string(index, source)
            if name in LISTENERS:
                found.append((name, line(node)))
            elif name is None and text(node.child_by_field_name("object"), source).split(".")[-1] == "runtime":
                found.append((COMPUTED + text(node, source)[:80], line(node)))
        elif node.type == "string_fragment" and text(node, source) in LISTENERS:
            found.append((text(node, source), line(node)))
    return sorted(set(found), key=lambda f: (f[1], f[0]))


COMPUTED = "computed:"


def constant_string(node, source: bytes) -> str | None:
    """The value of a string written as literals joined by ``+`` (template literals without
    substitutions among them), or None for anything computed."""
    if node is None:
        return None
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return constant_string(node.named_children[0], source)
    if node.type in ("string", "template_string"):
        return literal_value(node, source)
    if node.type == "binary_expression" and text(node.child_by_field_name("operator"), source) == "+":
        left = constant_string(node.child_by_field_name("left"), source)
        right = constant_string(node.child_by_field_name("right"), source)
        return left + right if left is not None and right is not None else None
    return None


def surfaces_problems(project: Project) -> tuple[list[str], list[str]]:
    """Problems, and the surfaces found (declared ones included) as they are shown."""
    found: dict[tuple[str, str], str] = {}  # (surface, script) -> where it was seen first
    computed: dict[tuple[str, str], str] = {}  # (script, lookup) -> its problem: no declaration can cover it
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
                if listener.startswith(COMPUTED):
                    computed.setdefault((script, listener), f"{name}/{script}:{at}: {listener.removeprefix(COMPUTED)} looks "
                                        f"up an event of runtime by a computed name (it may be "
                                        f"{' or '.join(LISTENERS)}): name it")
                else:
                    found.setdefault((listener, script), f"{name}/{script}:{at}")
    def declares(d: Declared, surface: str, script: str) -> bool:  # a script may be a glob pattern
        return d.what == surface and (d.where == script or bool(script) and globs.matches(d.where, script))

    problems = list(computed.values()) + [f"{where}: {surface} is a messaging surface the gate's cases never reach: declare it in "
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
