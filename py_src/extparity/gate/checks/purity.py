"""Verified modules are pure: checked on their syntax, before any engine starts.

Why: every engine agrees under the gate, and still users' browsers can take another branch when
the verified code reads its environment. A module that looks at ``navigator.webdriver``, the
user agent, the date, the locale or time zone, its own stack, the engine's Unicode version, or a
counter of its own calls gives the gate's engines one verdict and a user another, and no corpus
shows it. A list of banned names always misses a door, so this is an allowlist (after Hardened
JavaScript and Jessie: no ambient authority): over the module graph the entries reach (the graph
the engines link), a free identifier must be a deterministic ECMAScript intrinsic, used as
declared (called, constructed, or one of its allowlisted members: ``Object.keys``,
``String.prototype.slice``), and no function may keep state where a later call can find it.
What is refused, each named with file, line and identifier:

* host objects: ``globalThis``, ``window``, ``self``, ``navigator``, ``document``, ``location``,
  ``chrome``, ``browser``, ``importScripts`` and any other name an engine does not define;
* an intrinsic's member that is not allowlisted (``STATIC_MEMBERS``, ``PROTOTYPE_MEMBERS``), and
  an intrinsic or its prototype handed on as a value (``f(Math)``, ``const P = Number.prototype``),
  past which these rules cannot follow it;
* clocks and randomness: ``Date``, ``performance``, ``crypto``, ``Math.random``, ``Temporal``;
* the locale: ``Intl``, ``toLocale*``, ``localeCompare``;
* an engine's Unicode tables, which grow with each Unicode version: ``normalize``,
  ``toUpperCase``/``toLowerCase`` (a newer version gives more characters a case), ``/i`` in a
  regular expression (it matches by those case mappings, or with /u by case folding), ``\\p{..}``
  under /u or /v, and a ``RegExp`` given a pattern or flags at run time. Math's
  implementation-approximated functions (``log``, ``sin``, ``pow``...: engines ship different
  libm ports) are left out of the allowlist too;
* stacks: ``.stack``, ``captureStackTrace``, ``prepareStackTrace``, ``stackTraceLimit`` on
  anything, also destructured or under a name a local holds (``const k = "stack"; e[k]``): a stack
  holds the extension's URL, and so its id;
* reflection: ``getOwnPropertyDescriptor(s)``, ``getPrototypeOf``, ``getOwnPropertyNames``,
  ``__lookupGetter__`` and the like on anything, and ``Reflect``: a descriptor read tells the
  run-time guard from the real function;
* I/O and timers: ``fetch``, ``XMLHttpRequest``, ``WebSocket``, ``setTimeout``, ``console``...;
* code from strings: ``eval``, ``Function``, ``.constructor``, and ``import()`` with a computed
  specifier (the graph cannot be read past it: the linker's error is the problem);
* evasions: a property name computed at run time on an intrinsic or on a literal
  (``"a"[k]``), or put together from the module's own text on anything (``x["toLocale" + "String"]``,
  a template, ``.join``, ``String.fromCharCode``, or a local holding one); ``Reflect``/``Proxy``
  over a global, legacy ``RegExp`` statics, ``import.meta`` (``with`` needs no rule: module code is
  strict, and no engine loads a module that uses it). A computed read of a local value by an
  index or a key from the input is data, and passes;
* mutable state reachable through ``this`` where its object outlives the call: a write, a
  mutating call or ``this`` handed on in an object literal's method, a static member or a plain
  function (a class's own methods write to the instance a call made);
* module-level mutable state: a top-level binding that a function assigns, a top-level container
  that a function mutates (assigns or deletes a property of it or of a value inside it, calls a
  mutating method on it, hands it to ``Object.assign`` and the like), a top-level container that
  a function passes on, keeps in a local, stores or returns unless it is frozen where it is declared
  (whoever receives it could mutate it out of sight of these rules: ``bump(STATE)``), and a
  top-level ``/g`` or ``/y`` regular expression whose ``exec``/``test`` a function calls (its
  ``lastIndex`` carries over: ``RE.test("x")`` alternates between calls), and a top-level value
  the module made at load by calling a function, an instance of a class of its own (frozen or
  not: its fields need not be), or an object literal holding either, that a function calls or
  calls a method of, at any depth (a closure or ``this`` can count calls:
  ``const next = (() => { let n = 0; return () => ++n; })()``). A container is an
  object, array, ``new`` or call result; frozen means ``Object.freeze(...)`` of a literal whose
  nested containers are frozen too, or of a ``new`` with plain arguments.

What a syntax check cannot see (a name computed from the input, a function's source read through
``String(fn)``) is the run-time guard's.

The entry and message adapters (harness-side code every verdict of their engines passes
through) are held to the same rules, file by file: a message adapter that keeps state could
answer the gate's replay of a case (the same reply, other arguments) from memory.

Exceptions are data (``[tool.extparity.gate].purity``: identifier, module, reason), and one that
no longer occurs is stale and fails: an exception must never outlive the code it excuses. Every
realm where the harness loads the verified modules (the headless engines', the browsers' page
and module frame) backs this at run time (``js/purity-guard.js``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...project.config import Declared, Project
from ...project.words import count
from ...subject.js_strings import literal_value
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

# The allowlist: what a verified module may read of an intrinsic. A free intrinsic's own members
# (``Object.keys``) must be listed here, and ``X.prototype.m`` must name a PROTOTYPE_MEMBERS
# method; the intrinsic itself may be called or constructed, not handed on as a value (a parameter
# or local holding ``Math`` or ``Number.prototype`` is out of these rules' sight). Math keeps only
# its exactly specified functions: the rest (log, sin, pow...) are "implementation-approximated"
# (ECMA-262 21.3.2), and engines ship different libm ports.
STATIC_MEMBERS = {
    "Object": {"keys", "values", "entries", "fromEntries", "freeze", "isFrozen", "seal", "isSealed",
               "preventExtensions", "isExtensible", "create", "assign", "hasOwn", "is"},
    "Array": {"isArray", "from", "of"},
    "Number": {"isFinite", "isInteger", "isSafeInteger", "isNaN", "parseFloat", "parseInt", "MAX_SAFE_INTEGER",
               "MIN_SAFE_INTEGER", "MAX_VALUE", "MIN_VALUE", "EPSILON", "POSITIVE_INFINITY", "NEGATIVE_INFINITY",
               "NaN"},
    "String": {"fromCharCode", "fromCodePoint", "raw"},
    "Math": {"abs", "ceil", "floor", "round", "trunc", "sign", "max", "min", "sqrt", "fround", "imul", "clz32",
             "E", "LN10", "LN2", "LOG10E", "LOG2E", "PI", "SQRT1_2", "SQRT2"},
    "JSON": {"parse", "stringify"},
    "Symbol": {"iterator", "asyncIterator", "toPrimitive", "toStringTag"},
    "BigInt": {"asIntN", "asUintN"},
    "Promise": {"resolve", "reject", "all", "allSettled", "any", "race"},
    "ArrayBuffer": {"isView"},
    "Iterator": {"from"},
    **{typed: {"from", "of", "BYTES_PER_ELEMENT"} for typed in (
        "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
        "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array")},
}
PROTOTYPE_MEMBERS = {
    # Object, Function
    "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toString", "valueOf", "call", "apply", "bind",
    # String
    "at", "charAt", "charCodeAt", "codePointAt", "concat", "endsWith", "includes", "indexOf", "lastIndexOf",
    "padEnd", "padStart", "repeat", "replace", "replaceAll", "search", "match", "matchAll", "slice", "split",
    "startsWith", "substring", "trim", "trimEnd", "trimStart", "isWellFormed", "toWellFormed",
    # Array, typed arrays
    "copyWithin", "entries", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex", "flat",
    "flatMap", "forEach", "join", "keys", "map", "pop", "push", "reduce", "reduceRight", "reverse", "shift",
    "some", "sort", "splice", "unshift", "values", "toReversed", "toSorted", "toSpliced", "with", "subarray",
    # Number, RegExp, Map, Set, DataView, Promise
    "toFixed", "toExponential", "toPrecision", "exec", "test", "get", "set", "has", "add", "delete", "clear",
    "getInt8", "getUint8", "getInt16", "getUint16", "getInt32", "getUint32", "getFloat32", "getFloat64",
    "getBigInt64", "getBigUint64", "setInt8", "setUint8", "setInt16", "setUint16", "setInt32", "setUint32",
    "setFloat32", "setFloat64", "setBigInt64", "setBigUint64", "then", "catch", "finally",
}
# Intrinsics that are plain values or functions without members worth reaching: handed on freely.
PLAIN_VALUES = {"undefined", "NaN", "Infinity", "parseInt", "parseFloat", "isNaN", "isFinite", "encodeURI",
                "encodeURIComponent", "decodeURI", "decodeURIComponent", "escape", "unescape"}
# Names refused on any value, in ``a.b``, ``a["b"]`` and ``const { b } = a``.
STACK = {"stack", "captureStackTrace", "prepareStackTrace", "stackTraceLimit"}
REFLECTION = {"getOwnPropertyDescriptor", "getOwnPropertyDescriptors", "getPrototypeOf", "getOwnPropertyNames",
              "getOwnPropertySymbols", "__lookupGetter__", "__lookupSetter__", "__defineGetter__",
              "__defineSetter__", "__proto__"}
# Unicode tables the engine ships with, which grow with each Unicode version: normalization and
# case mapping (a character a newer version gives a case maps to itself in an older one), and in
# regular expressions case-insensitive matching (/i canonicalizes by those same case mappings,
# /iu by case folding) and, under /u or /v, property escapes.
UNICODE_METHODS = {"normalize", "toUpperCase", "toLowerCase"}
WHY_STACK = "a stack: it holds the extension's URL, and so its id, and its shape differs per engine"
WHY_REFLECTION = "reflection: a descriptor or prototype read can tell the run-time guard from the real function"
WHY_UNICODE = "an engine's Unicode tables: the answer changes with the engine's Unicode version"
WHY_NOT_LISTED = "not a declared pure member of an intrinsic (verified modules use only the allowlisted ones)"


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
        inner = value.child_by_field_name("arguments").named_children[0]
        if inner.type == "new_expression" and text(inner.child_by_field_name("constructor"), source) not in INTRINSICS:
            # Handed on freely (frozen), but its methods run on fields that need not be.
            return "frozen instance", text(inner.child_by_field_name("constructor"), source)
        return "frozen", ""
    if value.type == "call_expression":
        callee = value.child_by_field_name("function")
        named = callee.type in ("identifier", "member_expression")
        return "made", text(callee, source) + "()" if named else "an inline function's call"
    if value.type == "new_expression":
        constructor = text(value.child_by_field_name("constructor"), source)
        return ("container", "") if constructor in INTRINSICS else ("instance", constructor)
    if value.type == "object" and _runs_code(value, source):
        return "made", "a call inside its literal"  # { next: (() => { let n = 0; return () => ++n; })() }
    return "container", ""


def _runs_code(literal, source: bytes) -> bool:
    """An object literal holding, at any depth, a call's result or an instance of the module's
    own class: a closure or fields that a method called through it can count with."""
    for node in walk(literal):
        if node.type == "call_expression" and text(node.child_by_field_name("function"), source) != "Object.freeze":
            return True
        if node.type == "new_expression" and text(node.child_by_field_name("constructor"), source) not in INTRINSICS:
            return True
    return False


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
    built, named = _names_of_text(root, source)
    for node in walk(root):
        if node.type == "meta_property" and text(node, source).startswith("import"):
            found(node, "import.meta", "a host object: the module's own URL differs per browser and install")
        elif node.type in ("member_expression", "subscript_expression"):
            _property(node, _property_name(node, source), found)
            if node.type == "subscript_expression" and _property_name(node, source) is None:
                _computed(node, source, built, named, found)
        elif node.type in ("shorthand_property_identifier_pattern", "pair_pattern"):
            key = node if node.type.startswith("shorthand") else node.child_by_field_name("key")
            if key.type in ("property_identifier", "shorthand_property_identifier_pattern", "string"):
                _property(node, text(key, source).strip("'\""), found)
        elif node.type == "regex":
            _regex(node, source, found)
        elif node.type == "this":
            _through_this(node, source, found)
    return sorted(findings, key=lambda f: (f.line, f.identifier))


def _regex(node, source: bytes, found) -> None:
    flags_node = node.child_by_field_name("flags")
    flags = text(flags_node, source) if flags_node is not None else ""
    if _unicode_pattern(text(node.child_by_field_name("pattern"), source), flags):
        found(node, text(node, source), WHY_UNICODE)


def _regexp_call(node, source: bytes, found) -> None:
    """``RegExp(pattern, flags)``: as a literal, unless what it is given is not plain text; a
    pattern put together at run time could hold what a literal may not."""
    arguments = node.parent.child_by_field_name("arguments")
    given = [_unwrapped(a) for a in arguments.named_children] if arguments is not None else []
    if not all(a.type == "string" for a in given):
        if len(given) > 1 and given[1].type == "string" and not set("uvi") & set(text(given[1], source)):
            return  # without /u, /v or /i no Unicode table is consulted
        found(node, "RegExp", WHY_UNICODE + " (a pattern or flags given at run time may consult them)")
        return
    pattern = text(given[0], source)[1:-1].replace("\\\\", "\\") if given else ""
    flags = text(given[1], source)[1:-1] if len(given) > 1 else ""
    if _unicode_pattern(pattern, flags):
        found(node, "RegExp", WHY_UNICODE)


def _unicode_pattern(pattern: str, flags: str) -> bool:
    """Case-insensitive matching, or property escapes in a /u or /v pattern (see UNICODE_METHODS)."""
    unicode = "u" in flags or "v" in flags
    return "i" in flags or unicode and (re.search(r"(?<!\\)(\\\\)*\\[pP]\{", pattern) is not None)


def _unwrapped(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _built_from_text(node, source: bytes, built: set[tuple[int, str]]) -> bool:
    """An index that is a name put together at run time from text the module wrote: a literal
    joined with ``+``, a template with a substitution, a call given a literal or building one
    from char codes, or a name declared with such a value. A key read from the input is data."""
    node = _unwrapped(node)
    if node is None:
        return False
    if node.type == "identifier":
        return any((scope, text(node, source)) in built for scope in _functions_around(node))
    if node.type == "template_string":
        return any(c.type == "template_substitution" for c in node.named_children)
    if node.type == "binary_expression":
        return text(node.child_by_field_name("operator"), source) == "+" and any(
            c.type in ("string", "template_string") or _built_from_text(c, source, built)
            for c in (node.child_by_field_name("left"), node.child_by_field_name("right")))
    if node.type == "call_expression":  # ["toLocale", "String"].join(""), String.fromCharCode(...)
        callee = node.child_by_field_name("function")
        return text(callee, source) in ("String.fromCharCode", "String.fromCodePoint") or any(
            n.type in ("string", "template_string") for n in walk(node))
    return False


FUNCTIONS = {"function_expression", "function_declaration", "arrow_function", "method_definition",
             "generator_function", "generator_function_declaration"}


def _functions_around(node) -> list[int]:
    """The functions a node is in, innermost first, by start byte; -1 is the module."""
    around = [n.start_byte for n in _ancestors(node) if n.type in FUNCTIONS]
    return around + [-1]


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _names_of_text(root, source: bytes) -> tuple[set[tuple[int, str]], dict[tuple[int, str], str]]:
    """(function, name) for each name declared with a value built from text, in order, and for
    each declared with a plain string, its text; a use looks it up in the functions around it
    (close enough to scope for names a module chose)."""
    built: set[tuple[int, str]] = set()
    named: dict[tuple[int, str], str] = {}
    for node in walk(root):
        if node.type == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None or name.type != "identifier" or value is None:
                continue
            key = (_functions_around(node)[0], text(name, source))
            if _built_from_text(value, source, built):
                built.add(key)
            elif (declared := literal_value(value, source)) is not None:
                named[key] = declared
    return built, named


def _literal_name(index, source: bytes, named: dict[tuple[int, str], str]) -> str | None:
    """The text a name was declared with (``const k = "stack"; e[k]``), so the named rules apply."""
    index = _unwrapped(index)
    if index is None or index.type != "identifier":
        return None
    return next((named[(scope, text(index, source))] for scope in _functions_around(index)
                 if (scope, text(index, source)) in named), None)


def _computed(node, source: bytes, built: set[tuple[int, str]], named: dict[tuple[int, str], str], found) -> None:
    """``a[expr]``: an indexed read of a local value passes; a literal's members, or a name put
    together at run time, reach methods the allowlist does not see (``"a"["locale" + "Compare"]``).
    An intrinsic's own are ``_free_name``'s."""
    owner = _unwrapped(node.child_by_field_name("object"))
    if owner.type in PRIMITIVES or owner.type in ("array", "object", "regex"):
        found(node, f"{text(owner, source)}[...]", "an evasion: a property name computed at run time on a literal "
                                                   "reaches its built-in methods")
    elif _literal_name(node.child_by_field_name("index"), source, named):
        _property(node, _literal_name(node.child_by_field_name("index"), source, named), found)
    elif _built_from_text(node.child_by_field_name("index"), source, built):
        found(node, f"{text(owner, source)}[...]", "an evasion: a property name built at run time reaches methods "
                                                   "these rules cannot name")


def _through_this(node, source: bytes, found) -> None:
    """Writes through ``this`` where it names an object that outlives the call: an object
    literal's method, a static method, a plain function (``f.call(anything)``). A class's own
    methods and constructor write to the instance a call made (an instance made at load is the
    top-level rules')."""
    owner = node.parent
    while owner is not None and owner.type not in ("function_expression", "function_declaration", "method_definition",
                                                   "generator_function", "generator_function_declaration",
                                                   "class_static_block", "field_definition"):
        owner = owner.parent
    if owner is None:
        return
    static = any(c.type == "static" for c in owner.children)
    if owner.type in ("method_definition", "field_definition") and owner.parent.type == "class_body" and not static:
        return
    how = _mutated_container(node, source) or _passed_on(node, source) or _value_inside_passed_on(node, source)
    if how:
        where = "a static member" if owner.parent is not None and owner.parent.type == "class_body" else \
            "an object literal's method" if owner.type == "method_definition" or owner.parent.type == "pair" else \
            "a function"
        found(node, "this", f"module-level mutable state: {where} {how} through this, whose object outlives the "
                            f"call and can count calls")


def _property_name(node, source: bytes) -> str | None:
    """``a.b`` and ``a["b"]`` name ``b``; any other ``a[...]`` is computed (None)."""
    if node.type == "member_expression":
        return text(node.child_by_field_name("property"), source)
    return literal_value(node.child_by_field_name("index"), source)


def _property(node, name: str | None, found) -> None:
    if name is None:
        return
    if LOCALE_PROPERTY.fullmatch(name):
        found(node, name, "the locale: its result depends on the user's language and region")
    elif name in STACK:
        found(node, name, WHY_STACK)
    elif name in REFLECTION:
        found(node, name, WHY_REFLECTION)
    elif name in UNICODE_METHODS:
        found(node, name, WHY_UNICODE)
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
        elif name in ("Reflect", "Proxy") and _over_a_global(reference, member, source, found):
            pass
        elif name == "Reflect":
            found(node, dotted, WHY_REFLECTION)
        else:
            _allowlisted(reference, member, prop, source, found)
        return
    found(node, dotted, KIND_OF.get(name, KIND_OF.get(dotted, "not a deterministic ECMAScript intrinsic "
                                                           "(verified modules may not read their environment)")))


def _allowlisted(reference: Reference, member, prop: str | None, source: bytes, found) -> None:
    """A free intrinsic used as the allowlist lets it: called, constructed, tested, or a declared
    member read (``Object.keys``, ``String.prototype.slice``); see STATIC_MEMBERS."""
    name, node = reference.name, reference.node
    if member is None and name == "RegExp" and node.parent is not None and \
            node.parent.type in ("call_expression", "new_expression"):
        _regexp_call(node, source, found)
    if member is None:
        if name not in PLAIN_VALUES and _passed_on(node, source) and not _reflected(node, source):
            found(node, name, "an intrinsic handed on as a value: what is done with it is out of these rules' sight")
        return
    dotted = f"{name}.{prop}"
    if prop != "prototype":
        if prop in STACK:
            found(node, dotted, WHY_STACK)
        elif prop in REFLECTION:
            found(node, dotted, WHY_REFLECTION)
        elif prop not in STATIC_MEMBERS.get(name, ()):
            found(node, dotted, WHY_NOT_LISTED)
        return
    method = _member_of(member)
    if method is None:
        if _passed_on(member, source):
            found(node, dotted, "an intrinsic handed on as a value: what is done with it is out of these rules' sight")
        return
    inner = _property_name(method, source)
    if inner is None:
        found(node, f"{dotted}[...]", f"an evasion: a property name computed at run time on {dotted}")
    elif inner not in PROTOTYPE_MEMBERS and not (LOCALE_PROPERTY.fullmatch(inner) or inner in STACK | REFLECTION |
                                                 UNICODE_METHODS | {"constructor"}):
        found(node, f"{dotted}.{inner}", WHY_NOT_LISTED)  # the named refusals are _property's


def _reflected(node, source: bytes) -> bool:
    """``Reflect.get(Math, ...)``, ``new Proxy(Math, ...)``: ``_over_a_global`` names it."""
    call = node.parent.parent if node.parent is not None and node.parent.type == "arguments" else None
    callee = call.child_by_field_name("function") or call.child_by_field_name("constructor") if call else None
    return callee is not None and (text(callee, source).startswith("Reflect.") or text(callee, source) == "Proxy")


def _over_a_global(reference: Reference, member, source: bytes, found) -> bool:
    """``Reflect.get(navigator, ...)``, ``new Proxy(globalThis, ...)``: the target is checked as a
    name of its own, except an intrinsic, which is then reached around the rules above."""
    call = (member.parent if member is not None else reference.node.parent)
    if call is None or call.type not in ("call_expression", "new_expression"):
        return False
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if first is not None and first.type == "identifier" and text(first, source) in INTRINSICS:
        found(reference.node, reference.name, f"an evasion: {reference.name} over the global "
                                              f"{text(first, source)} reaches around its rules")
        return True
    return False


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
    elif kind == "frozen instance" and _called(node, source):
        found(node, reference.name, f"module-level mutable state: a function {_called(node, source)} this "
                                    f"top-level value (a frozen {flags} made at load), whose fields can still keep "
                                    f"state from one call to the next ({declared})")


def _called(node, source: bytes) -> str | None:
    """``NAME(...)``, ``NAME.method(...)`` or ``NAME.inner.method(...)``: code the value carries runs."""
    parent, member = node.parent, _member_of(node)
    if member is not None:
        member = _outermost_member(node)
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
             "a verified module or adapter that uses more than its allowlist of pure intrinsics (host "
             "objects, clocks, randomness, the locale, Unicode tables, stacks, reflection, timers, code from "
             "strings) or keeps state between calls, also through `this`, without a `purity` exception",
             "[tool.extparity.gate].purity", verdict)
