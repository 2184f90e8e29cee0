"""The extension's ES module graph, and linking it for engines that have no module loader.

QuickJS, V8 (mini-racer) and SpiderMonkey (pythonmonkey) are reached through bindings that can
evaluate source text but cannot resolve ``import``. The browsers import the modules natively;
every engine, though, must load the same files, so one module graph serves them all: the entry
modules named in the config and everything they import, statically or through ``import()``
with a literal specifier, dependencies first.

Parsing uses tree-sitter's JavaScript grammar, so imports and exports are found as syntax
(multi-line statements, strings, comments, template literals and regular expressions that
merely contain the words are not mistaken for them). Each module is rewritten into a *script
form*:

    REGISTRY["src/a.js"] = (function () { "use strict"; <module text, import/export rewritten>
    return Object.freeze({ ...exports }); })();

Rewrites keep every line where it was (error line numbers stay true): an import becomes
``const { a, b: c } = REGISTRY["src/x.js"];``, ``export`` keywords disappear, ``export
default EXPR`` becomes ``const __extparity_default = EXPR``, and re-exports are resolved to
the exporting module's values. What a script cannot express faithfully is refused with a
``LinkError`` naming file and line, never approximated: live ``let``/``var`` exports, import
cycles, bare specifiers, computed ``import()``, ``import.meta``, top-level ``await``, and
anything tree-sitter cannot parse. Two approximations are documented instead: imported
bindings are read once, after the exporter ran (exact for ``const``, functions and classes),
and a module reached only through ``import()`` is evaluated eagerly with the rest.

Engines that evaluate module code (QuickJS's ``Context.module``) take the *module form*: the
same rewritten text without the function around it, ending in the line that registers its
exports. It is the more faithful form (module scope, strict by definition) and, in QuickJS,
about a third faster than the function wrapper.
"""

from __future__ import annotations

import json
import posixpath
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..project.hashing import sha256_hex
from ..project.words import quote

REGISTRY = "globalThis.__extparity_linked"
PRELUDE = f"{REGISTRY} = {REGISTRY} || Object.create(null);"
DEFAULT_LOCAL = "__extparity_default"

_FUNCTION_NODES = {"function_declaration", "generator_function_declaration", "function_expression",
                   "function", "generator_function", "arrow_function", "method_definition",
                   "class_static_block"}


class LinkError(Exception):
    """The modules cannot be linked faithfully; the message names file and line."""


@dataclass(frozen=True)
class LinkedModule:
    path: str  # tree-relative POSIX path ("adapter:NAME" for harness-side adapters)
    sha256: str  # of the bytes on disk
    imports: tuple[str, ...]  # resolved paths this module needs, static and dynamic
    exports: tuple[str, ...]
    module: str  # module form: the module text rewritten, then a line that registers its exports
    script: str  # script form: the same inside a strict function, for engines without modules


@dataclass
class _Edits:
    """Byte-range replacements on one module; each keeps the newlines it replaces."""

    source: bytes
    items: list[tuple[int, int, str]] = field(default_factory=list)

    def replace(self, start: int, end: int, text: str) -> None:
        newlines = self.source.count(b"\n", start, end) - text.count("\n")
        self.items.append((start, end, text + "\n" * max(0, newlines)))

    def apply(self) -> str:
        out, at = [], 0
        for start, end, text in sorted(self.items):
            out.append(self.source[at:start].decode("utf-8"))
            out.append(text)
            at = end
        out.append(self.source[at:].decode("utf-8"))
        return "".join(out)


def _parser():
    try:
        import tree_sitter_javascript
        from tree_sitter import Language, Parser
    except ImportError as exc:  # a broken install, not a user error: say which package
        raise LinkError(f"the module linker needs tree-sitter and tree-sitter-javascript: {exc}") from None
    return Parser(Language(tree_sitter_javascript.language()))


# Linked graphs by entry modules, each with the bytes of every file it was linked from. A link
# depends only on tree-relative paths and bytes, so engines that load the same tree, or trees
# holding byte-identical files, share one link (about 0.15 s of parsing each) instead of redoing
# it while the browsers start.
_GRAPHS: dict[tuple[str, ...], tuple[dict[str, bytes], list[LinkedModule]]] = {}
_GRAPHS_LOCK = threading.Lock()


def module_graph(root: Path, entries: Iterable[str]) -> list[LinkedModule]:
    """Every module reachable from ``entries`` under ``root``, dependencies first."""
    key = tuple(normalize_path(entry, "config") for entry in entries)
    with _GRAPHS_LOCK:
        known = _GRAPHS.get(key)
        if known is not None and _same_bytes(root, known[0]):
            return list(known[1])
        order, parsed = _walk_imports(root, key, cycles_allowed=False)
        linked: dict[str, LinkedModule] = {}
        for path in order:
            data, syntax, source, imports = parsed[path]
            linked[path] = _link_one(path, data, syntax, source, linked, imports)
        graph = [linked[path] for path in order]
        _GRAPHS[key] = ({path: parsed[path][0] for path in order}, graph)
        return list(graph)


def _same_bytes(root: Path, files: dict[str, bytes]) -> bool:
    """Whether every file holds these bytes under ``root``: then walking the imports again would
    read the same files and link them the same way."""
    try:
        return all(_read(root, path, ()) == data for path, data in files.items())
    except LinkError:
        return False


def import_closure(root: Path, entries: Iterable[str], *, lazy: bool = True) -> list[str]:
    """Every file reachable from ``entries`` through static imports, re-exports and literal
    ``import()``, entries included, dependencies first. Nothing is linked, so what only a script
    form cannot express (cycles, live bindings) is fine here; a specifier that cannot be
    resolved (bare, computed) is still a ``LinkError``: the closure would be a guess.

    ``lazy=False`` leaves out the ``import()`` calls inside functions: what loading the entries
    runs at once, not what a later call may load on demand."""
    return _walk_imports(root, entries, cycles_allowed=True, lazy=lazy)[0]


def parsed_modules(root: Path, entries: Iterable[str]) -> list[tuple[str, Any, bytes]]:
    """Every module reachable from ``entries``, as ``(path, tree-sitter tree, source bytes)``,
    dependencies first: the graph the engines link, for checks that read its syntax (the gate's
    purity check). Raises ``LinkError`` as ``import_closure`` does."""
    order, parsed = _walk_imports(root, entries, cycles_allowed=True)
    return [(path, parsed[path][1], parsed[path][2]) for path in order]


def parse_source(data: bytes, path: str):
    """One file's tree-sitter tree and the UTF-8 bytes it was parsed from."""
    source = _decode(data, path).encode("utf-8")
    return _parser().parse(source), source


def dependencies(path: str, tree, source: bytes) -> list[str]:
    """Resolved specifiers of a parsed file's static imports, re-exports and literal ``import()``;
    ``LinkError`` names file and line for what cannot be resolved."""
    return _dependencies(path, tree, source)


def _walk_imports(root: Path, entries: Iterable[str], cycles_allowed: bool, lazy: bool = True):
    parser = _parser()
    parsed: dict[str, tuple[bytes, Any, bytes, tuple[str, ...]]] = {}  # Any: a tree-sitter tree
    order: list[str] = []
    state: dict[str, str] = {}  # path -> "visiting" | "done"

    def visit(path: str, trail: tuple[str, ...]) -> None:
        if state.get(path) == "done" or state.get(path) == "visiting" and cycles_allowed:
            return
        if state.get(path) == "visiting":
            cycle = " -> ".join(trail[trail.index(path):] + (path,))
            raise LinkError(f"import cycle: {cycle} (a script-form link needs dependencies first)")
        state[path] = "visiting"
        data = _read(root, path, trail)
        source = _decode(data, path).encode("utf-8")
        tree = parser.parse(source)
        imports = tuple(_dependencies(path, tree, source, lazy=lazy))
        parsed[path] = (data, tree, source, imports)
        for target in imports:
            visit(target, trail + (path,))
        state[path] = "done"
        order.append(path)

    for entry in entries:
        visit(normalize_path(entry, "config"), ())
    return order, parsed


def uses_module_syntax(data: bytes) -> bool:
    """Whether a script needs to be loaded as a module: it has an ``import`` or ``export``
    statement (``import()`` works in classic scripts too)."""
    tree = _parser().parse(data)
    return any(node.type in ("import_statement", "export_statement") for node in tree.root_node.children)


def link_adapter(path: Path, name: str) -> LinkedModule:
    """A harness-side adapter: one self-contained module with a default export."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LinkError(f"adapter {path}: cannot read it ({exc.strerror})") from None
    text = _decode(data, str(path))
    source = text.encode("utf-8")
    tree = _parser().parse(source)
    label = f"adapter:{name}"
    if _dependencies(label, tree, source):
        raise LinkError(f"{path}: an adapter must not import anything; it receives the entry's export")
    module = _link_one(label, data, tree, source, {}, ())
    if "default" not in module.exports:
        raise LinkError(f"{path}: an adapter needs `export default function (target, ...args)`")
    return module


def _read(root: Path, path: str, trail: tuple[str, ...]) -> bytes:
    try:
        return (root / path).read_bytes()
    except OSError as exc:
        via = f" (imported by {trail[-1]})" if trail else ""
        raise LinkError(f"{path}: cannot read it{via}: {exc.strerror or exc}") from None


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LinkError(f"{path}: not valid UTF-8 ({exc})") from None


def normalize_path(spec: str, where: str = "config") -> str:
    path = posixpath.normpath(spec.lstrip("/"))
    if path.startswith("../") or path == "..":
        raise LinkError(f"{where}: {spec!r} points outside the tree")
    return path


def resolve_specifier(importer: str, spec: str, where: str) -> str:
    """The tree-relative path an import specifier in ``importer`` names (``LinkError`` if none)."""
    return _resolve(importer, spec, where)


def string_value(node, source: bytes, where: str) -> str:
    """The value of a specifier's string literal (``LinkError`` for anything else)."""
    return _string_value(node, source, where)


def _resolve(importer: str, spec: str, where: str) -> str:
    if spec.startswith("/"):
        return normalize_path(spec, where)
    if not spec.startswith(("./", "../")):
        raise LinkError(f"{where}: bare specifier {spec!r}: only relative or root paths resolve inside an extension")
    return normalize_path(posixpath.join(posixpath.dirname(importer), spec), where)


def _line(node) -> int:
    return node.start_point[0] + 1


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")


def _string_value(node, source: bytes, where: str) -> str:
    if node is None or node.type != "string":
        raise LinkError(f"{where}: expected a string specifier")
    fragments = [c for c in node.children if c.type not in ('"', "'")]
    if any(c.type != "string_fragment" for c in fragments):
        raise LinkError(f"{where}: specifiers with escapes are not supported: {quote(_text(node, source))}")
    return "".join(_text(c, source) for c in fragments)


def walk(node):
    """Every node of a tree-sitter tree below ``node`` (itself included), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


FUNCTION_NODES = frozenset({"function_declaration", "function_expression", "function", "arrow_function",
                            "method_definition", "generator_function_declaration", "generator_function"})


def _inside_function(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in FUNCTION_NODES:
            return True
        parent = parent.parent
    return False


def _dependencies(path: str, tree, source: bytes, *, lazy: bool = True) -> list[str]:
    """Resolved specifiers of static imports, re-exports and literal ``import()`` calls (without
    ``lazy``, not those inside a function, which run only when it is called)."""
    found: list[str] = []
    root = tree.root_node
    if root.has_error:
        bad = next(n for n in walk(root) if n.type == "ERROR" or n.is_missing)
        raise LinkError(f"{path}:{_line(bad)}:{bad.start_point[1] + 1}: cannot parse this module here "
                        f"(tree-sitter JavaScript grammar): {quote(_text(bad, source))!r}")
    for node in walk(root):
        where = f"{path}:{_line(node)}"
        if node.type in ("import_statement", "export_statement") and node.child_by_field_name("source"):
            found.append(_resolve(path, _string_value(node.child_by_field_name("source"), source, where), where))
        elif node.type == "call_expression" and node.child_by_field_name("function").type == "import":
            if not lazy and _inside_function(node):
                continue
            arguments = [c for c in node.child_by_field_name("arguments").named_children]
            if len(arguments) != 1 or arguments[0].type != "string":
                raise LinkError(f"{where}: import() with a computed specifier cannot be linked: {quote(_text(node, source))}")
            found.append(_resolve(path, _string_value(arguments[0], source, where), where))
    return list(dict.fromkeys(found))


def _link_one(path: str, data: bytes, tree, source: bytes, linked: dict[str, LinkedModule],
              imports: tuple[str, ...]) -> LinkedModule:
    edits = _Edits(source)
    exports: dict[str, str] = {}  # exported name -> JS expression giving its value

    def export(name: str, value: str, where: str) -> None:
        if name in exports:
            raise LinkError(f"{where}: {name} is exported twice")
        exports[name] = value

    def target_of(node, where: str) -> tuple[str, LinkedModule]:
        target = _resolve(path, _string_value(node.child_by_field_name("source"), source, where), where)
        return target, linked[target]

    def needs(module: LinkedModule, target: str, name: str, where: str) -> None:
        if name not in module.exports:
            raise LinkError(f"{where}: {target} does not export {name}")

    stars: list[tuple[str, str, str]] = []  # (name, value, where) from `export * from`, applied last

    def star(name: str, value: str, where: str) -> None:
        stars.append((name, value, where))

    _refuse_outside_grammar(path, tree.root_node, source)
    for node in tree.root_node.children:
        where = f"{path}:{_line(node)}"
        if node.type == "import_statement":
            edits.replace(node.start_byte, node.end_byte, _rewrite_import(node, source, where, target_of, needs))
        elif node.type == "export_statement":
            _rewrite_export(node, source, where, edits, export, star, target_of, needs)
    # ES semantics: a local export shadows a star export of the same name; two stars that
    # bring one name from different modules make it ambiguous, which is refused here.
    starred: dict[str, str] = {}
    for name, value, where in stars:
        if name in exports:
            continue
        if name in starred and starred[name] != value:
            raise LinkError(f"{where}: {name} comes from two `export *` sources (ambiguous)")
        starred[name] = value
    exports.update(starred)
    for node in walk(tree.root_node):  # literal import(): the module is linked, hand it over
        if node.type == "call_expression" and node.child_by_field_name("function").type == "import":
            arg = node.child_by_field_name("arguments").named_children[0]
            target = _resolve(path, _string_value(arg, source, f"{path}:{_line(node)}"), path)
            edits.replace(node.start_byte, node.end_byte, f"Promise.resolve({REGISTRY}[{json.dumps(target)}])")
    body = edits.apply()
    publish = f"Object.freeze({{ {', '.join(f'{json.dumps(name)}: {value}' for name, value in exports.items())} }})"
    module = f"{body}\n{REGISTRY}[{json.dumps(path)}] = {publish};\n"
    script = f'{REGISTRY}[{json.dumps(path)}] = (function () {{ "use strict"; {body}\nreturn {publish};\n}})();\n'
    return LinkedModule(path, sha256_hex(data), imports, tuple(exports), module, script)


def _refuse_outside_grammar(path: str, root, source: bytes) -> None:
    """What a script cannot do faithfully: ``import.meta`` and top-level ``await``."""
    stack = [(root, False)]
    while stack:
        node, in_function = stack.pop()
        where = f"{path}:{_line(node)}"
        if node.type == "meta_property" or (node.type == "member_expression" and _text(node, source).startswith("import.meta")):
            raise LinkError(f"{where}: import.meta cannot be linked into a script")
        if node.type == "await_expression" and not in_function:
            raise LinkError(f"{where}: top-level await cannot be linked into a script")
        if node.type == "for_in_statement" and not in_function and any(c.type == "await" for c in node.children):
            raise LinkError(f"{where}: top-level for await cannot be linked into a script")
        inner = in_function or node.type in _FUNCTION_NODES
        stack.extend((child, inner) for child in node.children)


def _rewrite_import(node, source, where, target_of, needs) -> str:
    target, module = target_of(node, where)
    registry = f"{REGISTRY}[{json.dumps(target)}]"
    clause = next((c for c in node.children if c.type == "import_clause"), None)
    if clause is None:
        return ";"  # side-effect import: the module is in the graph, so it already ran
    parts = []
    for item in clause.named_children:
        if item.type == "identifier":
            needs(module, target, "default", where)
            parts.append(f"{_text(item, source)} = {registry}.default")
        elif item.type == "namespace_import":
            parts.append(f"{_text(item.named_children[-1], source)} = {registry}")
        elif item.type == "named_imports":
            names = []
            for spec in item.named_children:
                if spec.type != "import_specifier":
                    continue
                name = _text(spec.child_by_field_name("name"), source)
                alias = spec.child_by_field_name("alias")
                needs(module, target, name, where)
                local = _text(alias, source) if alias else name
                names.append(f"{json.dumps(name)}: {local}")
            parts.append(f"{{ {', '.join(names)} }} = {registry}")
        else:
            raise LinkError(f"{where}: unsupported import form: {quote(_text(node, source))}")
    return f"const {', '.join(parts)};"


def _rewrite_export(node, source, where, edits, export, star, target_of, needs) -> None:
    declaration = node.child_by_field_name("declaration")
    value = node.child_by_field_name("value")
    is_default = any(c.type == "default" for c in node.children)
    if declaration is not None:
        kind = declaration.type
        name_node = declaration.child_by_field_name("name")
        if kind in ("lexical_declaration", "variable_declaration"):
            keyword = _text(declaration.children[0], source)
            if keyword != "const":
                raise LinkError(f"{where}: `export {keyword}` is a live binding a script cannot share; export a const")
            for declarator in declaration.named_children:
                if declarator.type != "variable_declarator":
                    continue
                name = declarator.child_by_field_name("name")
                if name.type != "identifier":
                    raise LinkError(f"{where}: destructuring exports are not supported: {quote(_text(declarator, source))}")
                export(_text(name, source), _text(name, source), where)
            edits.replace(node.start_byte, declaration.start_byte, "")
        elif is_default and name_node is None:  # export default function () {} / class {}
            export("default", DEFAULT_LOCAL, where)
            edits.replace(node.start_byte, declaration.start_byte, f"const {DEFAULT_LOCAL} = ")
            edits.replace(declaration.end_byte, declaration.end_byte, ";")
        else:  # function, async function, generator, class: the declaration stays, hoisting kept
            export("default" if is_default else _text(name_node, source), _text(name_node, source), where)
            edits.replace(node.start_byte, declaration.start_byte, "")
        return
    if value is not None:  # export default EXPRESSION;
        export("default", DEFAULT_LOCAL, where)
        edits.replace(node.start_byte, value.start_byte, f"const {DEFAULT_LOCAL} = ")
        return
    source_node = node.child_by_field_name("source")
    clause = next((c for c in node.children if c.type == "export_clause"), None)
    namespace = next((c for c in node.children if c.type == "namespace_export"), None)
    if source_node is None:  # export { a, b as c };
        for spec in clause.named_children if clause is not None else ():
            local = _text(spec.child_by_field_name("name"), source)
            alias = spec.child_by_field_name("alias")
            export(_text(alias, source) if alias else local, local, where)
    else:
        target, module = target_of(node, where)
        registry = f"{REGISTRY}[{json.dumps(target)}]"
        if clause is not None:  # export { a as b } from "./x.js";
            for spec in clause.named_children:
                name = _text(spec.child_by_field_name("name"), source)
                alias = spec.child_by_field_name("alias")
                needs(module, target, name, where)
                export(_text(alias, source) if alias else name, f"{registry}[{json.dumps(name)}]", where)
        elif namespace is not None:  # export * as ns from "./x.js";
            export(_text(namespace.named_children[-1], source), registry, where)
        else:  # export * from "./x.js"; (never re-exports default)
            for name in module.exports:
                if name != "default":
                    star(name, f"{registry}[{json.dumps(name)}]", where)
    edits.replace(node.start_byte, node.end_byte, ";")
