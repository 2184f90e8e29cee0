"""The functions two browser trees share: candidates for a project's entries (``extparity init``).

Why these: an entry must be one file in every tree (the run compares the bytes), so only ES
modules that are byte-identical in both trees qualify. Of those, a module whose exports another
such module imports is a helper of that one; the modules no exporting module imports are the
shared code's surface, and their exported functions are what cases should call (an importer
that differs between the trees still makes a helper of what it imports). Parameters are
read as syntax: a plain name is kept, a destructured object is ``options`` (what such a
parameter nearly always is), anything else becomes ``argN``, since a case field needs a name.
Bundlers export through clauses (``export { g as extractToolCalls }``) and keep shared code in
chunks a module imports or re-exports from: an export is followed to the function it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import tree_checks
from .linker import LinkError, dependencies, parse_source, resolve_specifier, string_value, walk

_FUNCTION_VALUES = {"function_expression", "function", "arrow_function"}


@dataclass(frozen=True)
class Export:
    module: str  # tree-relative POSIX path
    name: str
    params: tuple[str, ...]
    line: int


def shared_modules(first: Path, second: Path) -> list[str]:
    """ES modules present with the same bytes in both trees, sorted."""
    common = tree_checks.tree_files(first) & tree_checks.tree_files(second)
    return sorted(rel for rel in common if rel.endswith(tree_checks.SCRIPT_EXTENSIONS)
                  and (first / rel).read_bytes() == (second / rel).read_bytes())


def candidate_entries(first: Path, second: Path) -> tuple[list[Export], list[str]]:
    """Exported functions of the shared modules that no exporting module of either tree imports,
    and the modules that could not be read (``path: why``), which are left out."""
    shared = set(shared_modules(first, second))
    exports: dict[str, list[Export]] = {}
    imported: set[str] = set()
    unreadable: list[str] = []
    for tree in (first, second):
        modules = _Modules(tree)
        for rel in sorted(tree_checks.tree_files(tree)):
            if not rel.endswith(tree_checks.SCRIPT_EXTENSIONS) or (tree == second and rel in shared):
                continue
            try:
                syntax, source = modules.parsed(rel)
                if not any(node.type == "export_statement" for node in syntax.root_node.children):
                    continue
                imported.update(dependencies(rel, syntax, source))
                if rel in shared:
                    exports[rel] = list(exported_functions(rel, syntax.root_node, source, modules))
            except LinkError as exc:
                if rel in shared:
                    unreadable.append(str(exc))
    return [export for rel in sorted(exports) if rel not in imported for export in exports[rel]], unreadable


class _Modules:
    """A tree's modules, each parsed once: an export clause may name a function of a chunk."""

    def __init__(self, tree: Path):
        self.tree = tree
        self.cache: dict[str, tuple[Any, bytes]] = {}

    def parsed(self, rel: str):
        if rel not in self.cache:
            try:
                data = (self.tree / rel).read_bytes()
            except OSError as exc:
                raise LinkError(f"{rel}: cannot be read ({exc.strerror})") from None
            self.cache[rel] = parse_source(data, rel)
        return self.cache[rel]


def exported_functions(path: str, root, source: bytes, modules: _Modules | None = None):
    """``export function f(a, b)``, ``export const f = (a, b) => ...`` and the export clauses
    bundlers write (``export { g as f, h }``, also of what the module imports from a chunk or
    re-exports from one, followed through ``modules``), in source order."""
    for statement in root.children:
        if statement.type != "export_statement":
            continue
        declaration = statement.child_by_field_name("declaration")
        clause = next((child for child in statement.named_children if child.type == "export_clause"), None)
        if declaration is not None:
            for name, function in _declared_functions(declaration):
                yield _export(path, name, function, source)
        elif clause is not None:
            origin = statement.child_by_field_name("source")
            for specifier in clause.named_children:
                local, alias = specifier.child_by_field_name("name"), specifier.child_by_field_name("alias")
                shown = alias or local
                if specifier.type != "export_specifier" or local.type != "identifier" or shown.type != "identifier":
                    continue
                name = _text(local, source)
                if origin is not None:
                    found = _imported_function(path, origin, name, source, modules, 0)
                else:
                    found = _local_function(path, root, name, source, modules, 0)
                if found is not None:
                    yield _export(path, shown, found[0], source, found[1])


# How far an export is followed through chunks that re-export it (bundlers write one step).
_MAX_HOPS = 4


def _declared_functions(declaration):
    """(name node, function node) of a function declaration or of declarators with function values."""
    if declaration.type in ("function_declaration", "generator_function_declaration"):
        yield declaration.child_by_field_name("name"), declaration
    elif declaration.type in ("lexical_declaration", "variable_declaration"):
        for declarator in declaration.named_children:
            value = declarator.child_by_field_name("value")
            if declarator.type == "variable_declarator" and value is not None and value.type in _FUNCTION_VALUES:
                yield declarator.child_by_field_name("name"), value


def _local_function(path: str, root, name: str, source: bytes, modules, hops: int):
    """The function node bound to ``name`` at the top of a module and the bytes it is in, following
    an import of that name into the chunk it comes from; None for anything else."""
    for statement in root.children:
        node = statement.child_by_field_name("declaration") if statement.type == "export_statement" else statement
        for bound, function in _declared_functions(node) if node is not None else ():
            if bound is not None and _text(bound, source) == name:
                return function, source
        if statement.type == "import_statement":
            for specifier in walk(statement):
                if specifier.type != "import_specifier":
                    continue
                imported, alias = specifier.child_by_field_name("name"), specifier.child_by_field_name("alias")
                if _text(alias or imported, source) == name and imported.type == "identifier":
                    return _imported_function(path, statement.child_by_field_name("source"), _text(imported, source),
                                              source, modules, hops)
    return None


def _imported_function(path: str, origin, name: str, source: bytes, modules, hops: int):
    """The function a module's export ``name`` is, read in the module ``origin`` names."""
    if modules is None or hops >= _MAX_HOPS:
        return None
    where = f"{path}:{origin.start_point[0] + 1}"
    target = resolve_specifier(path, string_value(origin, source, where), where)
    syntax, target_source = modules.parsed(target)
    for statement in syntax.root_node.children:
        if statement.type != "export_statement":
            continue
        declaration = statement.child_by_field_name("declaration")
        for bound, function in _declared_functions(declaration) if declaration is not None else ():
            if _text(bound, target_source) == name:
                return function, target_source
        clause = next((child for child in statement.named_children if child.type == "export_clause"), None)
        for specifier in clause.named_children if clause is not None else ():
            local, alias = specifier.child_by_field_name("name"), specifier.child_by_field_name("alias")
            if specifier.type != "export_specifier" or _text(alias or local, target_source) != name:
                continue
            further = statement.child_by_field_name("source")
            if further is not None:
                return _imported_function(target, further, _text(local, target_source), target_source, modules, hops + 1)
            return _local_function(target, syntax.root_node, _text(local, target_source), target_source, modules,
                                   hops + 1)
    return None


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")


def _export(path: str, name_node, function, source: bytes, function_source: bytes | None = None) -> Export:
    """The export ``name_node`` names (its line in ``path``), with the parameters of ``function``,
    which is in ``function_source`` when a chunk holds it."""
    body = source if function_source is None else function_source
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    nodes = [parameters] if parameters is not None and parameters.type == "identifier" else \
        (parameters.named_children if parameters is not None else [])
    params = tuple(_param_name(node, index, body) for index, node in enumerate(nodes, 1) if node.type != "comment")
    return Export(path, _text(name_node, source), params, name_node.start_point[0] + 1)


def _param_name(node, index: int, source: bytes) -> str:
    if node.type == "assignment_pattern":
        node = node.child_by_field_name("left")
    elif node.type == "rest_pattern" and node.named_children:
        node = node.named_children[0]
    if node.type == "identifier":
        return source[node.start_byte:node.end_byte].decode("utf-8")
    return "options" if node.type == "object_pattern" else f"arg{index}"
