"""Every shipped script is accounted for: verified, or declared glue with a reason.

Why: the engines verify the modules the entries reach, and a release ships more than that. A
popup or a content script that imports its own copy of a parser, a background page that loads
a script whose name does not end in ``.js``, a page that calls a laxer second export of the
verified module: each runs code no case ever went through. So the gate enumerates every script
that can run: each entry point every manifest declares (background service worker, scripts or
page; action, browser_action and page_action popups; options; side panel and sidebar; devtools
page; content scripts; sandbox pages; URL overrides; web-accessible resources; user-script API
scripts), every ``<script src>`` of every shipped HTML page whatever the file's name, their static
and literal dynamic imports, what scripts start at run time (workers, ``importScripts``,
content scripts registered or injected through the ``scripting``/``tabs``/``contentScripts`` APIs:
the file a string literal names, whatever its name; a computed one fails, since nothing can follow
it), and every ``.js``/``.mjs``/``.cjs``/``.jsm`` file of the tree, the suffix in any case (browsers
read an extension file's type from it case-insensitively: ``worker.JS`` runs). Each is in the
verified graph, or listed in ``[tool.extparity.gate].glue_scripts`` with a reason, or the gate
fails naming it. A script outside the graph may import from a verified module only exports that
are an entry (the same binding as an entry's export); ``[tool.extparity.gate].imports`` names
the exceptions, each with a reason. Inline ``<script>`` code cannot be accounted for and fails.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ...project import globs
from ...project.config import Declared, Project
from ...subject import tree_checks
from ...subject.linker import LinkError, dependencies, import_closure, normalize_path, parse_source, \
    resolve_specifier, string_value
from ..context import Gate
from ..registry import Spec
from ..scopes import line, text

PAGES = (".html", ".htm", ".xhtml")
SCRIPTS = (".js", ".mjs", ".cjs", ".jsm")  # what browsers serve as JavaScript
GLUE = "[tool.extparity.gate].glue_scripts"
IMPORTS = "[tool.extparity.gate].imports"
ALL = "*"


@dataclass(frozen=True)
class Imported:
    script: str
    line: int
    module: str
    name: str  # an export name, or ALL for a namespace / import()


def _obj(value) -> dict:
    return value if isinstance(value, dict) else {}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def declared_entry_points(manifest: dict, files: set[str]) -> list[tuple[str, str, str]]:
    """``(path, "script" | "page", where the manifest names it)`` for every entry point."""
    found: list[tuple[str, str, str]] = []

    def add(values, kind: str, where: str) -> None:
        for value in _strings(values):
            if not tree_checks._is_url(value):
                found.append((value.split("#")[0].split("?")[0].lstrip("/"), kind, where))

    background = _obj(manifest.get("background"))
    add(background.get("service_worker"), "script", "background.service_worker")
    add(background.get("scripts"), "script", "background.scripts")
    add(background.get("page"), "page", "background.page")
    for key in tree_checks.ACTIONS:
        add(_obj(manifest.get(key)).get("default_popup"), "page", f"{key}.default_popup")
    add(manifest.get("options_page"), "page", "options_page")
    add(_obj(manifest.get("options_ui")).get("page"), "page", "options_ui.page")
    add(_obj(manifest.get("side_panel")).get("default_path"), "page", "side_panel.default_path")
    add(_obj(manifest.get("sidebar_action")).get("default_panel"), "page", "sidebar_action.default_panel")
    add(manifest.get("devtools_page"), "page", "devtools_page")
    for i, script in enumerate(manifest.get("content_scripts") or []):
        add(_obj(script).get("js"), "script", f"content_scripts[{i}].js")
    add(_obj(manifest.get("sandbox")).get("pages"), "page", "sandbox.pages")
    add(list(_obj(manifest.get("chrome_url_overrides")).values()), "page", "chrome_url_overrides")
    add(_obj(manifest.get("user_scripts")).get("api_script"), "script", "user_scripts.api_script")
    for item in manifest.get("web_accessible_resources") or []:
        patterns = _strings(item) if isinstance(item, str) else _strings(_obj(item).get("resources"))
        for pattern in patterns:
            pattern = pattern.lstrip("/")
            for path in sorted(files):
                if path == pattern or fnmatch.fnmatchcase(path, pattern):
                    if is_page(path):
                        found.append((path, "page", "web_accessible_resources"))
                    elif is_script(path):
                        found.append((path, "script", "web_accessible_resources"))
    return found


def is_script(path: str) -> bool:
    return path.lower().endswith(SCRIPTS)


def is_page(path: str) -> bool:
    return path.lower().endswith(PAGES)


def shipped_pages(tree: Path, manifest: dict) -> dict[str, str]:
    """Every HTML page of the tree -> how it is reached (its manifest key, or "shipped")."""
    files = tree_checks.tree_files(tree)
    pages = {path: "shipped" for path in sorted(files) if is_page(path)}
    for path, kind, where in declared_entry_points(manifest, files):
        if kind == "page" and path in files:  # the manifests check names a reference to a missing file
            pages[path] = f"manifest.json {where}"
    return pages


def shipped_scripts(tree: Path, manifest: dict) -> tuple[dict[str, str], list[str]]:
    """Every script that can run from this tree -> how it is reached; and what cannot be read."""
    files = tree_checks.tree_files(tree)
    reached: dict[str, str] = {}
    problems: list[str] = []
    for path, kind, where in declared_entry_points(manifest, files):
        if kind == "script":
            reached.setdefault(path, f"manifest.json {where}")
    for page in shipped_pages(tree, manifest):
        scripts, inline = tree_checks.page_scripts(tree, page)
        problems += [f"{page}:{at}: an inline <script> cannot be accounted for: move its code into a file"
                     for at in inline]
        for script in scripts:
            reached.setdefault(script, f"a <script> of {page}")
    scanned: set[str] = set()
    for shipped in (False, True):  # what the manifest and pages load first, then every other script file
        if shipped:
            for path in sorted(files):
                if is_script(path):
                    reached.setdefault(path, "shipped")
        while pending := [script for script in reached if script in files and script not in scanned]:
            for script in pending:
                scanned.add(script)
                how = reached[script]
                try:
                    for module in import_closure(tree, [script]):
                        reached.setdefault(module, f"imported from {script}")
                except LinkError as exc:
                    problems.append(f"{script} ({how}): its imports cannot be followed: {exc}")
                started, unfollowed = run_time_loads(tree, script, files)
                problems += unfollowed
                for path, started_how in started:
                    reached.setdefault(path, started_how)
    return {path: how for path, how in reached.items() if path in files}, problems


WORKERS = ("Worker", "SharedWorker")
REGISTERS = ("registerContentScripts", "updateContentScripts", "executeScript", "register")
SCRIPT_KEYS = ("js", "files", "file")


def run_time_loads(tree: Path, script: str, files: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The scripts ``script`` starts at run time, each ``(path, how)``, and a problem for each it
    starts from a computed name. Workers' URLs are the document's (or with ``new URL(..., import.meta.url)``
    the module's): a relative one is looked up beside the script, then at the tree's root, where
    extension pages live; ``importScripts`` is the worker's own; the extension APIs take root paths."""
    try:
        syntax, source = parse_source((Path(tree) / script).read_bytes(), script)
    except (OSError, LinkError, UnicodeDecodeError):
        return [], []  # the import closure reports what cannot be read
    started: list[tuple[str, str]] = []
    problems: list[str] = []

    def named(node, what: str, how: str, bases: tuple[str, ...]) -> None:
        """``node`` names a script started as ``what``; reached, it is ``how``."""
        where = f"{script}:{line(node)}"
        if node.type != "string":
            problems.append(f"{where}: {what} from a computed name, which the gate cannot follow: "
                            f"name the file in a string literal ({text(node, source)[:80]})")
            return
        value = string_value(node, source, where)
        if "://" in value or value.startswith(("data:", "blob:")):
            problems.append(f"{where}: {what} from {value[:80]!r}, outside the tree")
            return
        for base in bases:
            try:
                path = normalize_path(value if value.startswith("/") else posixpath.join(base, value), where)
            except LinkError as error:
                problems.append(str(error))
                return
            if path in files:
                started.append((path, how))
                return
        problems.append(f"{where}: {what} from {value!r}, which the tree does not ship")

    here, worker = posixpath.dirname(script), f"a worker of {script}"
    stack = [syntax.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "new_expression" and text(node.child_by_field_name("constructor"), source) in WORKERS:
            arguments = node.child_by_field_name("arguments")
            first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
            if first is None:
                continue
            if (first.type == "new_expression" and text(first.child_by_field_name("constructor"), source) == "URL"
                    and first.child_by_field_name("arguments") is not None
                    and len(first.child_by_field_name("arguments").named_children) == 2
                    and text(first.child_by_field_name("arguments").named_children[1], source) == "import.meta.url"):
                named(first.child_by_field_name("arguments").named_children[0], "a worker", worker, (here,))
            else:
                named(first, "a worker", worker, (here, ""))
        elif node.type == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if arguments is None:
                continue
            if function.type == "identifier" and text(function, source) == "importScripts":
                for argument in arguments.named_children:
                    named(argument, "importScripts", f"imported by {script}", (here,))
            elif function.type == "member_expression" and text(function.child_by_field_name("property"), source) in REGISTERS:
                if text(function.child_by_field_name("property"), source) == "register" and \
                        not text(function.child_by_field_name("object"), source).endswith("contentScripts"):
                    continue  # serviceWorker.register and others: an extension's worker is its manifest's
                for pair in _pairs(arguments):
                    if text(pair.child_by_field_name("key"), source).strip("'\"") in SCRIPT_KEYS:
                        for value in _listed(pair.child_by_field_name("value")):
                            named(value, "a content script", f"a content script {script} registers", ("",))
    return started, problems


def _pairs(node):
    """Every ``key: value`` pair inside ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "pair":
            yield current
        stack.extend(current.named_children)


def _listed(value):
    """The names a ``js``/``files``/``file`` value gives: a string, an array of strings, or an
    array of ``{file: ...}`` objects (Firefox's ``contentScripts.register``; their pairs are
    walked on their own)."""
    if value.type == "array":
        return [item for item in value.named_children if item.type != "object"]
    return [value]


def imports_of(tree: Path, script: str) -> list[Imported]:
    """What a script takes from other modules: named imports, namespaces, re-exports, import()."""
    syntax, source = parse_source((Path(tree) / script).read_bytes(), script)
    found: list[Imported] = []
    stack = [syntax.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        where = f"{script}:{line(node)}"
        if node.type in ("import_statement", "export_statement") and node.child_by_field_name("source"):
            target = resolve_specifier(script, string_value(node.child_by_field_name("source"), source, where), where)
            for name in _taken_names(node, source):
                found.append(Imported(script, line(node), target, name))
        elif node.type == "call_expression" and node.child_by_field_name("function").type == "import":
            arguments = node.child_by_field_name("arguments").named_children
            if len(arguments) == 1 and arguments[0].type == "string":
                target = resolve_specifier(script, string_value(arguments[0], source, where), where)
                found.append(Imported(script, line(node), target, ALL))
    return sorted(found, key=lambda i: (i.line, i.module, i.name))


def _taken_names(node, source: bytes) -> list[str]:
    names = []
    for child in node.named_children:
        if child.type == "import_clause":
            for item in child.named_children:
                if item.type == "identifier":
                    names.append("default")
                elif item.type == "namespace_import":
                    names.append(ALL)
                elif item.type == "named_imports":
                    names += [text(s.child_by_field_name("name"), source) for s in item.named_children
                              if s.type == "import_specifier"]
        elif child.type == "export_clause":
            names += [text(s.child_by_field_name("name"), source) for s in child.named_children
                      if s.type == "export_specifier"]
        elif child.type == "namespace_export":
            names.append(ALL)
    if node.type == "export_statement" and not names:  # export * from "..."
        names.append(ALL)
    return names


class Exports:
    """Which local binding each export of a module is: two names for one binding are one export."""

    def __init__(self, tree: Path) -> None:
        self.tree = Path(tree)
        self.cache: dict[str, dict[str, tuple[str, str]]] = {}

    def of(self, module: str, trail: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
        """Export name -> (module, local binding) it comes from, re-exports followed."""
        if module in self.cache:
            return self.cache[module]
        if module in trail:
            return {}
        syntax, source = parse_source((self.tree / module).read_bytes(), module)
        out: dict[str, tuple[str, str]] = {}
        stars: list[str] = []
        for node in syntax.root_node.named_children:
            if node.type != "export_statement":
                continue
            declaration = node.child_by_field_name("declaration")
            default = any(c.type == "default" for c in node.children)
            origin = node.child_by_field_name("source")
            if declaration is not None:
                names = _declared_names(declaration, source)
                if default:
                    out["default"] = (module, names[0] if names else "default")
                for name in names if not default else ():
                    out[name] = (module, name)
            elif node.child_by_field_name("value") is not None:
                out["default"] = (module, "default")
            elif origin is not None:
                target = resolve_specifier(module, string_value(origin, source, module), module)
                clause = next((c for c in node.named_children if c.type == "export_clause"), None)
                if clause is not None:
                    exported = self.of(target, trail + (module,))
                    for spec in clause.named_children:
                        name = text(spec.child_by_field_name("name"), source)
                        alias = spec.child_by_field_name("alias")
                        out[text(alias, source) if alias else name] = exported.get(name, (target, name))
                elif any(c.type == "namespace_export" for c in node.named_children):
                    ns = next(c for c in node.named_children if c.type == "namespace_export")
                    out[text(ns.named_children[-1], source)] = (target, ALL)
                else:
                    stars.append(target)
            else:
                clause = next((c for c in node.named_children if c.type == "export_clause"), None)
                for spec in clause.named_children if clause is not None else ():
                    name = text(spec.child_by_field_name("name"), source)
                    alias = spec.child_by_field_name("alias")
                    out[text(alias, source) if alias else name] = (module, name)
        for target in stars:
            for name, origin in self.of(target, trail + (module,)).items():
                if name != "default":
                    out.setdefault(name, origin)
        self.cache[module] = out
        return out


def _declared_names(declaration, source: bytes) -> list[str]:
    name = declaration.child_by_field_name("name")
    if name is not None:
        return [text(name, source)]
    return [text(d.child_by_field_name("name"), source) for d in declaration.named_children
            if d.type == "variable_declarator" and d.child_by_field_name("name").type == "identifier"]


def scripts_problems(project: Project) -> tuple[list[str], int, int, dict[str, list[str]]]:
    """Problems, the number of scripts accounted for, how many of them are glue, and what each
    `glue_scripts` path or pattern matched."""
    glue = [d.what for d in project.gate.glue_scripts]  # paths or glob patterns
    allowed_imports = project.gate.imports
    per_tree: dict[str, list[str]] = {}
    seen: set[str] = set()
    verified_anywhere: set[str] = set()
    used_imports: set[Declared] = set()
    unaccounted: dict[str, tuple[str, list[str]]] = {}  # script -> how the first tree reaches it, trees
    entries = [(normalize_path(e.module), e.export) for e in project.entries.values()]
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        if manifest is None:
            continue  # the manifests check says why
        problems: list[str] = []
        try:
            verified = set(import_closure(tree, [module for module, _ in entries]))
        except LinkError as exc:
            per_tree[name] = [f"the verified modules cannot be read: {exc}"]
            continue
        verified_anywhere |= verified
        scripts, unreadable = shipped_scripts(tree, manifest)
        problems += unreadable
        seen |= set(scripts)
        exports = Exports(tree)
        entry_bindings = {exports.of(module).get(export) for module, export in entries if module in verified}
        for script, how in sorted(scripts.items()):
            if script in verified:
                continue
            if not globs.covered(script, glue):  # said once, by the most telling way a tree reaches it
                known_how, trees = unaccounted.get(script, (how, []))
                unaccounted[script] = (how if known_how == "shipped" else known_how, trees + [name])
            try:
                taken = imports_of(tree, script)
            except LinkError as exc:
                problems.append(f"{script} ({how}): cannot be read as a script: {exc}")
                continue
            for imported in taken:
                if imported.module not in verified:
                    continue
                names = exports.of(imported.module)
                wanted = sorted(names) if imported.name == ALL else [imported.name]
                for export in wanted:
                    if names.get(export) in entry_bindings:
                        continue
                    excuse = next((d for d in allowed_imports
                                   if d.what == export and globs.matches(d.where, script)), None)
                    if excuse is not None:
                        used_imports.add(excuse)
                        continue
                    via = "its namespace, including " if imported.name == ALL else ""
                    problems.append(f"{script}:{imported.line} imports {via}{export} from the verified module "
                                    f"{imported.module}, which is not an entry's export: only entries are verified")
        per_tree[name] = problems
    problems = [f"{'' if len(trees) == len(project.trees) else ', '.join(trees) + ': '}{script} ({how}) is neither "
                f"a verified module nor declared glue: declare it in {GLUE} with a reason"
                for script, (how, trees) in unaccounted.items()]
    problems += _merged(per_tree, list(project.trees))
    matched = globs.expand(glue, seen)
    for path, found in matched.items():
        if not globs.is_pattern(path) and path in verified_anywhere:
            problems.append(f"glue script {path} is a verified module: remove it from {GLUE}")
        elif not [script for script in found if script not in verified_anywhere]:
            problems.append(f"glue script {path}: no tree ships {'a script it matches' if globs.is_pattern(path) else 'it as a script'}"
                            f"{' outside the verified modules' if found else ''}: remove it from {GLUE}")
    for declared in allowed_imports:
        if declared not in used_imports:
            problems.append(f"stale exception: {declared.where} no longer imports {declared.what} from a verified "
                            f"module: remove it from {IMPORTS}")
    glued = [path for path in seen if path not in verified_anywhere and globs.covered(path, glue)]
    return problems, len(seen), len(glued), matched


def _merged(per_tree: dict[str, list[str]], trees: list[str]) -> list[str]:
    """A problem every tree has is said once; one that only some trees have names them."""
    order: dict[str, list[str]] = {}
    for tree in trees:
        for problem in per_tree.get(tree, []):
            order.setdefault(problem, []).append(tree)
    return [problem if len(where) == len(trees) else f"{', '.join(where)}: {problem}"
            for problem, where in order.items()]


def verdict(gate: Gate) -> tuple[list[str], str]:
    """The gate's scripts check: its problems, and the line it says when there are none."""
    project = gate.project
    problems, scripts, glue, matched = scripts_problems(project)
    declared = "; ".join(globs.described(path, found) for path, found in matched.items())
    return problems, (f"{scripts} shipped scripts: {scripts - glue} verified, {glue} declared glue "
                      f"({declared or 'none'}); entry exports "
                      f"only imported from verified modules"
                      + (f" but {len(project.gate.imports)} declared in {IMPORTS}" if project.gate.imports else ""))


CHECK = Spec("scripts",
             "a shipped script neither verified nor in `glue_scripts`, inline `<script>` code, a "
             "non-entry export of a verified module imported without an `imports` exception",
             f"{GLUE}, {IMPORTS}", verdict)
