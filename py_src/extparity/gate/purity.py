"""Verified modules are pure: checked on their syntax, before any engine starts.

Why: every engine agrees under the gate, and still users' browsers can take another branch when
the verified code reads its environment. A module that looks at ``navigator.webdriver``, the
user agent, the date, the locale or time zone, the network, or a counter of its own calls gives
the gate's engines one verdict and a user another, and no corpus shows it. So, over the module
graph the entries reach (the graph the engines link), every free identifier must be a
deterministic ECMAScript intrinsic that reads no environment, and no function may keep state at
the module's top level. What is refused, each named with file, line and identifier:

* host objects: ``globalThis``, ``window``, ``self``, ``navigator``, ``document``, ``location``,
  ``chrome``, ``browser``, ``importScripts`` and any other name an engine does not define;
* clocks and randomness: ``Date``, ``performance``, ``crypto``, ``Math.random``, ``Temporal``;
* locale: ``Intl``, ``toLocale*``, ``localeCompare``;
* I/O and timers: ``fetch``, ``XMLHttpRequest``, ``WebSocket``, ``setTimeout``, ``console``...;
* code from strings: ``eval``, ``Function``, ``.constructor``, and ``import()`` with a computed
  specifier (the graph cannot be read past it: the linker's error is the problem);
* evasions: a property name computed at run time on a global, ``Reflect``/``Proxy`` over a
  global, legacy ``RegExp`` statics, engine-specific ``Error`` hooks, ``import.meta`` (``with`` needs
  no rule: module code is strict, and no engine loads a module that uses it);
* module-level mutable state: a top-level binding that a function assigns, a top-level container
  that a function mutates (assigns or deletes a property of it, or calls a mutating method on it).

Exceptions are data (``[tool.extparity.gate].purity``: identifier, module, reason), and one that
no longer occurs is stale and fails: an exception must never outlive the code it excuses. The
headless engines back this at run time (``js/purity-guard.js``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..project.config import Declared, Project
from ..subject.linker import LinkError, parsed_modules
from .scopes import Reference, line, resolve, text

# Deterministic intrinsics that read no environment (ECMA-262 global object properties).
INTRINSICS = {
    "Object", "Array", "Number", "String", "Boolean", "Symbol", "BigInt", "Math", "JSON", "RegExp", "Promise",
    "Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError",
    "Map", "Set", "WeakMap", "WeakSet", "ArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray",
    "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array",
    "BigUint64Array", "Atomics", "Iterator", "Reflect", "Proxy", "parseInt", "parseFloat", "isNaN", "isFinite",
    "encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent", "escape", "unescape",
    "undefined", "NaN", "Infinity",
}
KINDS = {
    "a host object": {"globalThis", "window", "self", "navigator", "document", "location", "chrome", "browser",
                      "importScripts", "frames", "top", "parent", "opener", "screen", "history", "localStorage",
                      "sessionStorage", "indexedDB", "caches", "origin", "ServiceWorkerGlobalScope",
                      "WorkerGlobalScope", "process", "require", "module", "Deno", "Bun"},
    "a clock or randomness": {"Date", "performance", "crypto", "Temporal", "Math.random"},
    "the locale": {"Intl"},
    "I/O or a timer": {"fetch", "XMLHttpRequest", "WebSocket", "EventSource", "setTimeout", "setInterval",
                       "clearTimeout", "clearInterval", "setImmediate", "requestAnimationFrame",
                       "requestIdleCallback", "queueMicrotask", "postMessage", "BroadcastChannel", "Worker",
                       "SharedWorker", "console", "print", "structuredClone"},
    "code from a string": {"eval", "Function"},
    "non-deterministic (garbage collection, cross-origin isolation)": {"WeakRef", "FinalizationRegistry",
                                                                       "SharedArrayBuffer"},
}
KIND_OF = {name: kind for kind, names in KINDS.items() for name in names}
LOCALE_PROPERTY = re.compile(r"toLocale\w*|localeCompare\Z")
ERROR_HOOKS = {"captureStackTrace", "stackTraceLimit", "prepareStackTrace"}
MUTATORS = {"push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin", "set", "add",
            "delete", "clear"}
DATA_VIEW_SETTER = re.compile(r"set(Int|Uint|Float|BigInt|BigUint)\d+\Z")
OBJECT_WRITERS = {"Object": {"assign", "defineProperty", "defineProperties", "setPrototypeOf"},
                  "Reflect": {"set", "defineProperty", "deleteProperty", "setPrototypeOf"}}
CONFIG = "[tool.extparity.gate].purity"


@dataclass(frozen=True)
class Finding:
    module: str
    line: int
    identifier: str
    why: str

    def text(self) -> str:
        return f"{self.module}:{self.line}: {self.identifier}: {self.why}"


def purity_problems(project: Project) -> tuple[list[str], int, list[Declared]]:
    """Problems (findings no exception covers, stale exceptions), the number of modules read,
    and the exceptions that were used."""
    findings, problems, modules = verified_findings(project)
    exceptions = project.gate.purity
    used: list[Declared] = []
    for finding in findings:
        covering = [e for e in exceptions if e.what == finding.identifier and e.where == finding.module]
        if covering:
            used += [e for e in covering if e not in used]
        else:
            problems.append(finding.text())
    for exception in exceptions:
        if exception not in used:
            problems.append(f"stale exception: {exception.what} no longer occurs in {exception.where}: "
                            f"remove it from {CONFIG}")
    return problems, len(modules), used


def verified_findings(project: Project) -> tuple[list[Finding], list[str], set[str]]:
    """Every finding in the graph the entries reach, in any tree (each once), the trees whose
    graph cannot be read, and the modules read."""
    entries = [entry.module for entry in project.entries.values()]
    findings: dict[tuple, Finding] = {}
    problems: list[str] = []
    modules: set[str] = set()
    for name, tree in project.trees.items():
        try:
            graph = parsed_modules(Path(tree), entries)
        except LinkError as exc:
            problems.append(f"{name}: the verified modules cannot be read: {exc}")
            continue
        for path, syntax, source in graph:
            modules.add(path)
            for finding in module_findings(path, syntax.root_node, source):
                findings.setdefault((finding.module, finding.line, finding.identifier), finding)
    return list(findings.values()), problems, modules


def module_findings(path: str, root, source: bytes) -> list[Finding]:
    findings: list[Finding] = []

    def found(node, identifier: str, why: str) -> None:
        findings.append(Finding(path, line(node), identifier, why))

    for reference in resolve(root, source):
        if reference.binding is None:
            _free_name(reference, source, found)
        elif reference.binding.scope.top and reference.in_function:
            _top_level_state(reference, source, found)
    for node in _walk(root):
        if node.type == "meta_property" and text(node, source).startswith("import"):
            found(node, "import.meta", "a host object: the module's own URL differs per browser and install")
        elif node.type in ("member_expression", "subscript_expression"):
            _property(node, _property_name(node, source), found)
    return sorted(findings, key=lambda f: (f.line, f.identifier))


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _property_name(node, source: bytes) -> str | None:
    """``a.b`` and ``a["b"]`` name ``b``; any other ``a[...]`` is computed (None)."""
    if node.type == "member_expression":
        return text(node.child_by_field_name("property"), source)
    index = node.child_by_field_name("index")
    if index is not None and index.type == "string":
        return "".join(text(c, source) for c in index.named_children if c.type == "string_fragment")
    if index is not None and index.type == "template_string" and not any(
            c.type == "template_substitution" for c in index.named_children):
        return text(index, source)[1:-1]
    return None


def _property(node, name: str | None, found) -> None:
    if name is None:
        return
    if LOCALE_PROPERTY.fullmatch(name):
        found(node, name, "the locale: its result depends on the user's language and region")
    elif name == "constructor":
        found(node, name, "code from a string: a .constructor chain reaches Function")


def _member_of(node):
    """The member expression ``node.x`` / ``node[...]`` when ``node`` is its object."""
    parent = node.parent
    if parent is not None and parent.type in ("member_expression", "subscript_expression") and \
            parent.child_by_field_name("object").start_byte == node.start_byte:
        return parent
    return None


def _free_name(reference: Reference, source: bytes, found) -> None:
    name, node = reference.name, reference.node
    member = _member_of(node)
    prop = _property_name(member, source) if member is not None else None
    dotted = f"{name}.{prop}" if prop is not None else name
    if name in INTRINSICS:
        if member is not None and prop is None:
            found(node, f"{name}[...]", f"an evasion: a property name computed at run time on the global {name}")
        elif dotted in KIND_OF:
            found(node, dotted, KIND_OF[dotted])
        elif name == "RegExp" and prop not in (None, "prototype"):
            found(node, dotted, "global mutable state: RegExp's legacy statics hold the last match")
        elif name == "Error" and prop in ERROR_HOOKS:
            found(node, dotted, "an evasion: engine-specific stack hooks")
        elif name in ("Reflect", "Proxy"):
            _over_a_global(reference, member, source, found)
        return
    found(node, dotted, KIND_OF.get(name, KIND_OF.get(dotted, "not a deterministic ECMAScript intrinsic "
                                                           "(verified modules may not read their environment)")))


def _over_a_global(reference: Reference, member, source: bytes, found) -> None:
    """``Reflect.get(navigator, ...)``, ``new Proxy(globalThis, ...)``: the target is checked as a
    name of its own, except an intrinsic, which is then reached around the rules above."""
    call = (member.parent if member is not None else reference.node.parent)
    if call is None or call.type not in ("call_expression", "new_expression"):
        return
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if first is not None and first.type == "identifier" and text(first, source) in INTRINSICS:
        found(reference.node, reference.name, f"an evasion: {reference.name} over the global "
                                              f"{text(first, source)} reaches around its rules")


def _top_level_state(reference: Reference, source: bytes, found) -> None:
    binding, node = reference.binding, reference.node
    assert binding is not None  # called for references that resolve to a top-level binding
    declared = f"declared at line {binding.line}"
    if reference.writes:
        found(node, reference.name, f"module-level mutable state: a function assigns this top-level "
                                    f"{binding.kind} ({declared})")
        return
    target = _mutated_container(node, source)
    if target:
        found(node, reference.name, f"module-level mutable state: a function mutates this top-level value "
                                    f"({target}; {declared})")


def _mutated_container(node, source: bytes) -> str | None:
    """How a function mutates the value a top-level name holds, if it visibly does."""
    chain, outer = node, _member_of(node)
    while outer is not None:  # a.b.c: the outermost member expression rooted at the name
        chain, outer = outer, _member_of(outer)
    if chain is not node:
        parent = chain.parent
        if parent.type in ("assignment_expression", "augmented_assignment_expression") and \
                parent.child_by_field_name("left").start_byte == chain.start_byte:
            return "assigns a property"
        if parent.type == "update_expression" or (parent.type == "unary_expression" and
                                                  text(parent.child_by_field_name("operator"), source) == "delete"):
            return "updates or deletes a property"
        if parent.type == "call_expression" and parent.child_by_field_name("function").start_byte == chain.start_byte:
            method = _property_name(chain, source)
            if method in MUTATORS or (method and DATA_VIEW_SETTER.fullmatch(method)):
                return f"calls .{method}()"
    call = node.parent.parent if node.parent is not None else None  # Object.assign(NAME, ...)
    if node.parent is not None and node.parent.type == "arguments" and call is not None and \
            call.type == "call_expression" and node.parent.named_children[0].start_byte == node.start_byte:
        callee = call.child_by_field_name("function")
        if callee.type == "member_expression":
            owner = text(callee.child_by_field_name("object"), source)
            method = text(callee.child_by_field_name("property"), source)
            if method in OBJECT_WRITERS.get(owner, ()):
                return f"passes it to {owner}.{method}()"
    return None


def verdict(project: Project) -> tuple[list[str], str]:
    """The gate's purity check: its problems, and the line it says when there are none."""
    problems, modules, used = purity_problems(project)
    excused = "; exceptions: " + ", ".join(f"{e.what} in {e.where} ({e.reason})" for e in used) if used else \
        "; no exceptions"
    return problems, (f"{modules} verified modules read no environment and keep no state between calls"
                      f"{excused}")
