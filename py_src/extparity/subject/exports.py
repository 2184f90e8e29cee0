"""The functions two browser trees share: candidates for a project's entries (``extparity init``).

Why these: an entry must be one file in every tree (the run compares the bytes), so only ES
modules that are byte-identical in both trees qualify. Of those, a module whose exports another
such module imports is a helper of that one; the modules no exporting module imports are the
shared code's surface, and their exported functions are what cases should call (an importer
that differs between the trees still makes a helper of what it imports). Parameters are
read as syntax: a plain name is kept, a destructured object is ``options`` (what such a
parameter nearly always is), anything else becomes ``argN``, since a case field needs a name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import tree_checks
from .linker import LinkError, dependencies, parse_source

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
        for rel in sorted(tree_checks.tree_files(tree)):
            if not rel.endswith(tree_checks.SCRIPT_EXTENSIONS) or (tree == second and rel in shared):
                continue
            try:
                syntax, source = parse_source((tree / rel).read_bytes(), rel)
                if not any(node.type == "export_statement" for node in syntax.root_node.children):
                    continue
                imported.update(dependencies(rel, syntax, source))
                if rel in shared:
                    exports[rel] = list(exported_functions(rel, syntax.root_node, source))
            except LinkError as exc:
                if rel in shared:
                    unreadable.append(str(exc))
    return [export for rel in sorted(exports) if rel not in imported for export in exports[rel]], unreadable


def exported_functions(path: str, root, source: bytes):
    """``export function f(a, b)`` and ``export const f = (a, b) => ...``, in source order."""
    for statement in root.children:
        if statement.type != "export_statement":
            continue
        declaration = statement.child_by_field_name("declaration")
        if declaration is None:
            continue
        if declaration.type in ("function_declaration", "generator_function_declaration"):
            yield _export(path, declaration.child_by_field_name("name"), declaration, source)
        elif declaration.type == "lexical_declaration":
            for declarator in declaration.named_children:
                value = declarator.child_by_field_name("value")
                if declarator.type == "variable_declarator" and value is not None and value.type in _FUNCTION_VALUES:
                    yield _export(path, declarator.child_by_field_name("name"), value, source)


def _export(path: str, name_node, function, source: bytes) -> Export:
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    nodes = [parameters] if parameters is not None and parameters.type == "identifier" else \
        (parameters.named_children if parameters is not None else [])
    params = tuple(_param_name(node, index, source) for index, node in enumerate(nodes, 1) if node.type != "comment")
    return Export(path, source[name_node.start_byte:name_node.end_byte].decode("utf-8"), params,
                  name_node.start_point[0] + 1)


def _param_name(node, index: int, source: bytes) -> str:
    if node.type == "assignment_pattern":
        node = node.child_by_field_name("left")
    elif node.type == "rest_pattern" and node.named_children:
        node = node.named_children[0]
    if node.type == "identifier":
        return source[node.start_byte:node.end_byte].decode("utf-8")
    return "options" if node.type == "object_pattern" else f"arg{index}"
