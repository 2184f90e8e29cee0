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
  that a function mutates (assigns or deletes a property of it or of a value inside it, calls a
  mutating method on it, hands it to ``Object.assign`` and the like), a top-level container that
  a function passes on, keeps in a local, stores or returns unless it is frozen where it is declared
  (whoever receives it could mutate it out of sight of these rules: ``bump(STATE)``), and a
  top-level ``/g`` or ``/y`` regular expression whose ``exec``/``test`` a function calls (its
  ``lastIndex`` carries over: ``RE.test("x")`` alternates between calls), and a top-level value
  the module made at load by calling a function, or an instance of a class of its own, that a
  function calls or calls a method of (a closure or ``this`` can count calls:
  ``const next = (() => { let n = 0; return () => ++n; })()``). A container is an object,
  array, ``new`` or call result; frozen means ``Object.freeze(...)`` of a literal whose nested
  containers are frozen too, or of a ``new`` with plain arguments.

The entry and message adapters (harness-side code every verdict of their engines passes
through) are held to the same rules, file by file: a message adapter that keeps state could
answer the gate's replay of a case (the same reply, other arguments) from memory.

Exceptions are data (``[tool.extparity.gate].purity``: identifier, module, reason), and one that
no longer occurs is stale and fails: an exception must never outlive the code it excuses. The
headless engines back this at run time (``js/purity-guard.js``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...project.config import Declared, Project
from ...project.words import count
from ...subject.linker import LinkError, parse_source, parsed_modules, resolve_specifier, walk
from ..context import Gate
from ..registry import Spec
from ..scopes import Reference, line, resolve, text

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
# Calls that read what they are handed and keep nothing of it: a top-level container may be passed to them.
READING_CALLS = {"Array.isArray", "Object.keys", "Object.values", "Object.entries", "Object.isFrozen",
                 "JSON.stringify", "String", "Number", "Boolean"}
PRIMITIVES = {"number", "string", "true", "false", "null", "undefined", "template_string"}
STATEFUL_REGEXP_CALLS = {"exec", "test"}


@dataclass(frozen=True)
class Finding:
    module: str
    line: int
    identifier: str
    why: str
    column: int = 0  # 0-based, for the module's source map
    source: str | None = None  # where it was written (``utils/toolcalls.ts:42``), through that map

    def text(self) -> str:
        if self.source is not None:
            return f"{self.source}: {self.identifier}: {self.why} (built {self.module}:{self.line})"
        return f"{self.module}:{self.line}: {self.identifier}: {self.why}"


def in_sources(project: Project, findings: list[Finding]) -> list[Finding]:
    """Each finding with its source location, where its module's file has a source map."""
    from dataclasses import replace as with_source

    from ...subject.sourcemap import located

    out = []
    for finding in findings:
        tree = next((root for root in project.trees.values() if (root / finding.module).is_file()), None)
        where = located(tree / finding.module, finding.line, finding.column, project.root) if tree else None
        out.append(with_source(finding, source=where) if where else finding)
    return out


def purity_problems(project: Project) -> tuple[list[str], int, list[Declared]]:
    """Problems (findings no exception covers, stale exceptions), the number of modules read,
    and the exceptions that were used."""
    findings, problems, modules = verified_findings(project)
    findings = in_sources(project, findings)
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
        values = {path: top_level_values(syntax.root_node, source) for path, syntax, source in graph}
        for path, syntax, source in graph:
            modules.add(path)
            known = {**values[path], **imported_values(path, syntax.root_node, source, values)}
            for finding in module_findings(path, syntax.root_node, source, known):
                findings.setdefault((finding.module, finding.line, finding.identifier), finding)
    for adapter in adapters(project):
        path = project.relative(adapter)
        try:
            syntax, source = parse_source(adapter.read_bytes(), path)
        except (OSError, LinkError) as exc:
            problems.append(f"adapter {path} cannot be read: {exc}")
            continue
        for finding in module_findings(path, syntax.root_node, source, top_level_values(syntax.root_node, source)):
            findings.setdefault((finding.module, finding.line, finding.identifier), finding)
    return list(findings.values()), problems, modules


def adapters(project: Project) -> list[Path]:
    """The entry and message adapters: harness-side code every verdict of their engines passes
    through. Held to the same rules: one that keeps state could tell the gate's replay of a case
    (same reply, other arguments) from the case, and hand back a verdict of its own."""
    found = [entry.adapter for entry in project.entries.values() if entry.adapter is not None]
    found += list(project.gate.messages.values())
    return sorted(set(found))


def top_level_values(root, source: bytes) -> dict[str, tuple[str, str]]:
    """What each top-level ``const``/``let``/``var`` of one name holds, as far as the rules need:
    name -> (kind, detail): ``container``, ``frozen``, ``other``, ``regexp`` (detail: its flags),
    ``made`` (detail: the call that made it) or ``instance`` (detail: its class)."""
    values: dict[str, tuple[str, str]] = {}
    for child in root.named_children:
        if child.type == "export_statement" and child.child_by_field_name("declaration") is not None:
            child = child.child_by_field_name("declaration")
        if child.type not in ("lexical_declaration", "variable_declaration"):
            continue
        for declarator in child.named_children:
            name, value = declarator.child_by_field_name("name"), declarator.child_by_field_name("value")
            if declarator.type == "variable_declarator" and name is not None and name.type == "identifier":
                values[text(name, source)] = _what_it_holds(value, source, values)
    return values


def imported_values(path: str, root, source: bytes, values: dict[str, dict]) -> dict[str, tuple[str, str]]:
    """The values of the names a module imports by name from a module of the graph."""
    found: dict[str, tuple[str, str]] = {}
    for statement in root.named_children:
        spec = statement.child_by_field_name("source")
        clause = next((c for c in statement.children if c.type == "import_clause"), None)
        if statement.type != "import_statement" or spec is None or clause is None:
            continue
        try:
            exporter = resolve_specifier(path, text(spec, source)[1:-1], path)
        except LinkError:
            continue
        for named in (c for c in clause.named_children if c.type == "named_imports"):
            for item in (c for c in named.named_children if c.type == "import_specifier"):
                imported, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
                value = values.get(exporter, {}).get(text(imported, source))
                if value is not None:
                    found[text(alias or imported, source)] = value
    return found


def _what_it_holds(value, source: bytes, known: dict[str, tuple[str, str]]) -> tuple[str, str]:
    if value is None or value.type in PRIMITIVES or value.type in ("unary_expression", "binary_expression",
                                                                    "arrow_function", "function_expression", "class"):
        return "other", ""
    if value.type == "regex":
        flags = value.child_by_field_name("flags")
        return "regexp", text(flags, source) if flags is not None else ""
    if _frozen(value, source, known):
        return "frozen", ""
    if value.type == "call_expression":
        callee = value.child_by_field_name("function")
        named = callee.type in ("identifier", "member_expression")
        return "made", text(callee, source) + "()" if named else "an inline function's call"
    if value.type == "new_expression":
        constructor = text(value.child_by_field_name("constructor"), source)
        return ("container", "") if constructor in INTRINSICS else ("instance", constructor)
    return "container", ""


def _frozen(value, source: bytes, known: dict[str, tuple[str, str]]) -> bool:
    """``Object.freeze(...)`` of a literal whose nested containers are frozen too, or of a ``new``
    whose arguments are plain values. A member may be a name declared above that holds a plain or a
    frozen value, or the spread of a frozen one."""
    if value.type != "call_expression" or text(value.child_by_field_name("function"), source) != "Object.freeze":
        return False
    arguments = value.child_by_field_name("arguments").named_children
    if len(arguments) != 1:
        return False
    inner = arguments[0]
    if inner.type == "new_expression":
        given = inner.child_by_field_name("arguments")
        return all(a.type in PRIMITIVES for a in (given.named_children if given is not None else ()))
    if inner.type == "array":
        members = inner.named_children
    elif inner.type == "object":
        members = [pair.child_by_field_name("value") for pair in inner.named_children if pair.type == "pair"]
        if len(members) != len(inner.named_children):
            return False  # a spread, a method or a shorthand name: not read here
    else:
        return False
    return all(_plain_or_frozen(m, source, known) for m in members)


def _plain_or_frozen(member, source: bytes, known: dict[str, tuple[str, str]]) -> bool:
    if member.type == "spread_element":
        spread = member.named_children[0]
        return spread.type == "identifier" and known.get(text(spread, source), ("", ""))[0] == "frozen"
    if member.type == "identifier":
        return known.get(text(member, source), ("", ""))[0] in ("other", "frozen")
    if member.type in ("member_expression", "subscript_expression"):  # inside a frozen value: frozen or plain
        owner = member.child_by_field_name("object")
        return owner.type == "identifier" and known.get(text(owner, source), ("", ""))[0] == "frozen"
    return member.type in PRIMITIVES or member.type == "unary_expression" or _frozen(member, source, known)


def module_findings(path: str, root, source: bytes, values: dict[str, tuple[str, str]]) -> list[Finding]:
    """Findings in one module; ``values``: what its top-level and imported names hold
    (``top_level_values``, ``imported_values``), which the rules on passed-on containers need."""
    findings: list[Finding] = []

    def found(node, identifier: str, why: str) -> None:
        findings.append(Finding(path, line(node), identifier, why, node.start_point[1]))

    for reference in resolve(root, source):
        if reference.binding is None:
            _free_name(reference, source, found)
        elif reference.binding.scope.top and reference.in_function:
            _top_level_state(reference, source, found, values.get(reference.name, ("other", "")))
    for node in walk(root):
        if node.type == "meta_property" and text(node, source).startswith("import"):
            found(node, "import.meta", "a host object: the module's own URL differs per browser and install")
        elif node.type in ("member_expression", "subscript_expression"):
            _property(node, _property_name(node, source), found)
    return sorted(findings, key=lambda f: (f.line, f.identifier))


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


def _outermost_member(node):
    """``a.b.c`` for the ``a`` in it: the outermost member expression rooted at ``node`` (itself if none)."""
    chain, outer = node, _member_of(node)
    while outer is not None:
        chain, outer = outer, _member_of(outer)
    return chain


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


def _top_level_state(reference: Reference, source: bytes, found, holds: tuple[str, str]) -> None:
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
        return
    kind, flags = holds
    if kind == "regexp" and ("g" in flags or "y" in flags):
        member = _member_of(node)
        method = _property_name(member, source) if member is not None else None
        if method in STATEFUL_REGEXP_CALLS:
            found(node, reference.name, f"module-level mutable state: this top-level /{flags} regular expression "
                                        f"keeps its lastIndex from one call to the next (.{method}(); {declared})")
    elif kind in ("container", "made", "instance"):
        how = _passed_on(node, source) or _value_inside_passed_on(node, source)
        if how:
            found(node, reference.name, f"module-level mutable state: a function {how} this top-level container, "
                                        f"where these rules cannot see what is done to it (freeze it where it is "
                                        f"declared; {declared})")
        elif kind != "container" and _called(node, source):
            made = f"made at load by {flags}" if kind == "made" else f"a {flags} made at load"
            found(node, reference.name, f"module-level mutable state: a function {_called(node, source)} this "
                                        f"top-level value ({made}), which can keep state from one call to the next "
                                        f"in a closure or in its fields ({declared})")


def _called(node, source: bytes) -> str | None:
    """``NAME(...)`` or ``NAME.method(...)``: code the value carries runs."""
    parent, member = node.parent, _member_of(node)
    if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node:
        return "calls"
    if member is not None and member.parent is not None and member.parent.type == "call_expression" and \
            member.parent.child_by_field_name("function") == member:
        return "calls a method of"
    return None


def _value_inside_passed_on(node, source: bytes) -> str | None:
    """``NAME[i]`` or ``NAME.a`` handed on as ``_passed_on`` says: a value inside the container,
    itself perhaps a container (its length and size are numbers)."""
    chain = _outermost_member(node)
    if chain is node or _property_name(chain, source) in ("length", "size"):
        return None
    how = _passed_on(chain, source)
    return f"{how} a value inside" if how else None


def _passed_on(node, source: bytes) -> str | None:
    """How a function lets the value of ``node`` go somewhere the rules do not follow, if it does."""
    parent = node.parent
    while parent is not None and (parent.type in ("parenthesized_expression", "sequence_expression") or
                                  parent.type == "ternary_expression" and
                                  parent.child_by_field_name("condition").start_byte != node.start_byte or
                                  parent.type == "binary_expression" and
                                  text(parent.child_by_field_name("operator"), source) in ("||", "&&", "??")):
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "arguments":
        call = parent.parent
        callee = call.child_by_field_name("function") if call.type == "call_expression" else None
        if callee is not None and text(callee, source) in READING_CALLS:
            return None
        return "passes on"
    if parent.type == "variable_declarator" and parent.child_by_field_name("value") == node:
        return "keeps in a local"
    if parent.type in ("assignment_expression", "augmented_assignment_expression") and \
            parent.child_by_field_name("right") == node:
        return "stores"
    if parent.type in ("array", "spread_element", "pair", "object"):
        return "stores"
    if parent.type == "return_statement" or parent.type == "arrow_function" and \
            parent.child_by_field_name("body") == node:
        return "returns"
    if parent.type in ("yield_expression", "throw_statement"):
        return "passes on"
    return None


def _mutated_container(node, source: bytes) -> str | None:
    """How a function mutates the value a top-level name holds, if it visibly does."""
    chain = _outermost_member(node)
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
    call = chain.parent.parent if chain.parent is not None else None  # Object.assign(NAME, ...), (NAME.x, ...)
    if chain.parent is not None and chain.parent.type == "arguments" and call is not None and \
            call.type == "call_expression" and chain.parent.named_children[0].start_byte == chain.start_byte:
        callee = call.child_by_field_name("function")
        if callee.type == "member_expression":
            owner = text(callee.child_by_field_name("object"), source)
            method = text(callee.child_by_field_name("property"), source)
            if method in OBJECT_WRITERS.get(owner, ()):
                return f"passes it to {owner}.{method}()"
    return None


def verdict(gate: Gate) -> tuple[list[str], str]:
    """The gate's purity check: its problems, and the line it says when there are none."""
    project = gate.project
    problems, modules, used = purity_problems(project)
    excused = "; exceptions: " + ", ".join(f"{e.what} in {e.where} ({e.reason})" for e in used) if used else \
        "; no exceptions"
    held = len(adapters(project))
    return problems, (f"{modules} verified modules" + (f" and {count(held, 'adapter')}" if held else "") +
                      f" read no environment and keep no state between calls{excused}")


CHECK = Spec("purity",
             "a verified module or adapter that reads its environment (host objects, clocks, "
             "randomness, the locale, timers, code from strings) or keeps state between calls, without "
             "a `purity` exception",
             "[tool.extparity.gate].purity", verdict)
