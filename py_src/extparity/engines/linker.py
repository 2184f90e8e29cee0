"""A tiny deterministic linker for the extension's ES modules, for engines without a loader.

QuickJS (through the Python binding) can evaluate one module at a time but cannot resolve
``import``. The extension keeps its module grammar restricted on purpose so that this linker
stays trivial and obviously faithful:

* imports: one line each, at top level: ``import { a, b } from "./other.js";``
* exports: ``export function NAME(`` and ``export const NAME =`` only.

Each module is still evaluated *as a module* (strict mode, own scope, ``this`` undefined);
the only rewrite is the import line, replaced on the same line (so error line numbers stay
true) by ``const { a, b } = <registry>["src/agent/other.js"];``. After the module body one
line is appended that publishes its exports into the registry. Anything outside the grammar
is a ``LinkError`` naming file and line, never a best-effort guess.

Known approximation: the scan is line-based, so a line of a template literal or block
comment that starts with ``import``/``export`` is treated as code (and rejected or rewritten).
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from .base import sha256_hex

REGISTRY = "globalThis.__extparity_linked"

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
_IMPORT_RE = re.compile(
    rf"^\s*import\s*\{{\s*({_IDENT}(?:\s*,\s*{_IDENT})*)\s*,?\s*\}}\s*from\s*"
    r"(?P<q>[\"'])(?P<spec>\.{1,2}/[^\"'\\]+)(?P=q)\s*;\s*(?://.*)?$"
)
_EXPORT_RE = re.compile(rf"^\s*export\s+(?:function\s+(?P<fn>{_IDENT})\s*\(|const\s+(?P<const>{_IDENT})\s*=)")
# A line that starts an import/export statement (or dynamic import / import.meta).
_STARTS_IMPORT = re.compile(r"^\s*import\s*[\s{*(.\"']")
_STARTS_EXPORT = re.compile(r"^\s*export[\s{*]")


class LinkError(Exception):
    """The modules cannot be linked faithfully; the message names file and line."""


@dataclass(frozen=True)
class LinkedModule:
    path: str  # tree-relative POSIX path
    sha256: str  # of the on-disk bytes that were read
    source: str  # module text to evaluate, imports rewritten, exports published
    exports: tuple[str, ...]


def link(tree: Path, modules: tuple[str, ...] | list[str]) -> list[LinkedModule]:
    """Read, hash and rewrite ``modules`` (evaluation order, dependencies first)."""
    exported: dict[str, tuple[str, ...]] = {}
    linked: list[LinkedModule] = []
    for path in modules:
        data = (tree / path).read_bytes()
        try:
            # Browsers decode module scripts as UTF-8 and drop a leading BOM; do the same.
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise LinkError(f"{path}: not valid UTF-8 ({exc})") from None
        module = _link_one(path, text, exported)
        exported[path] = module.exports
        linked.append(LinkedModule(path, sha256_hex(data), module.source, module.exports))
    return linked


def _link_one(path: str, text: str, exported: dict[str, tuple[str, ...]]) -> LinkedModule:
    lines = text.split("\n")  # keep "\r" where it was: only the line count must match
    names: list[str] = []
    for number, line in enumerate(lines, start=1):
        where = f"{path}:{number}"
        if _STARTS_IMPORT.match(line):
            lines[number - 1] = _rewrite_import(where, path, line, exported)
        elif _STARTS_EXPORT.match(line):
            m = _EXPORT_RE.match(line)
            if not m:
                raise LinkError(f"{where}: unsupported export form (only `export function NAME(` "
                                f"and `export const NAME =`): {line.strip()[:120]}")
            name = m.group("fn") or m.group("const")
            if name in names:
                raise LinkError(f"{where}: {name} exported twice")
            names.append(name)
    publish = ", ".join(f"{json.dumps(n)}: {n}" for n in names)
    lines.append(f"{REGISTRY}[{json.dumps(path)}] = Object.freeze({{ {publish} }});")
    return LinkedModule(path, "", "\n".join(lines), tuple(names))


def _rewrite_import(where: str, path: str, line: str, exported: dict[str, tuple[str, ...]]) -> str:
    m = _IMPORT_RE.match(line)
    if not m:
        raise LinkError(f"{where}: unsupported import form (only single-line "
                        f"`import {{ a, b }} from \"./x.js\";`): {line.strip()[:120]}")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), m.group("spec")))
    if target not in exported:
        raise LinkError(f"{where}: imports {target}, which is not listed before {path} in the module "
                        f"order (missing from the config, misordered, or an import cycle)")
    wanted = [n.strip() for n in m.group(1).split(",") if n.strip()]
    for name in wanted:
        if name not in exported[target]:
            raise LinkError(f"{where}: {target} does not export {name}")
    return f"const {{ {', '.join(wanted)} }} = {REGISTRY}[{json.dumps(target)}];"
