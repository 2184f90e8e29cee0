"""Purity as an allowlist: the doors to the environment that a list of banned names left open.

Each attack keeps the parser's allowlist rule in every engine the gate runs and can drop it in a
user's browser: the stack names the extension's URL (and so its id), a method name built at run
time reaches the locale, a descriptor read tells the run-time guard from the real function, a
Unicode table differs between engine versions, and ``this`` counts calls. Several per class,
some built to slip past the rule that catches the first. Static check alone: no engine starts.
"""

from __future__ import annotations

import pytest

from support import PARSER
from support.gate_copy import Copy, only, rule_line, skip_allowlist_when, top_level_line


R = rule_line()
T = top_level_line()  # where a declaration goes
# class -> {attack: (top-level declaration or None, condition, the problem it must raise)}.
# A declaration moves the rule one line down.
ATTACKS = {
    "stack": {
        "stack of a new Error": (None, 'typeof new Error().stack === "string"', f"{R}: stack: a stack"),
        "stack under a computed name": (
            None, '(() => { try { return null.x; } catch (e) { return e["st" + "ack"] !== "x"; } })()',
            f"{R}: e[...]: an evasion: a property name built at run time"),
        "stack destructured": (None, '(({ stack }) => stack !== "x")(new Error())', f"{R}: stack: a stack"),
        "stack hook through an alias": (None, '(E => typeof E.captureStackTrace !== "number")(Error)',
                                        f"{R}: captureStackTrace: a stack"),
        "stack under a quoted name": (None, 'typeof new Error()["stack"] === "string"', f"{R}: stack: a stack"),
        "stack under a name kept in a local": (
            None, '(() => { const k = "stack"; return typeof new Error()[k] === "string"; })()',
            f"{R}: stack: a stack"),
        "stack under a name spelled with escapes": (
            None, 'typeof new Error()["st\\u0061ck"] === "string"', f"{R}: stack: a stack"),
        "stack under an escaped name kept in a local": (
            None, '(() => { const k = `st\\x61ck`; return typeof new Error()[k] === "string"; })()',
            f"{R}: stack: a stack"),
    },
    "computed member": {
        "on a built-in prototype": (None, 'Number.prototype["toLocale" + "String"].call(1) === "1"',
                                    f"{R}: Number.prototype[...]: an evasion: a property name computed at run time"),
        "on a string literal": (None, '"a"["locale" + "Compare"]("b") < 0',
                                f'{R}: "a"[...]: an evasion: a property name computed at run time on a literal'),
        "on a parameter, name built from strings": (
            None, '(p => p["toLocale" + "String"].call(1) === "1")(Number.prototype)',
            f"{R}: p[...]: an evasion: a property name built at run time"),
        "on a number, name passed in": (None, '(k => (1)[k]() === "1")("toLocale" + "String")',
                                        f"{R}: 1[...]: an evasion: a property name computed at run time on a literal"),
        "on a local alias of a prototype": (
            None, '(() => { const P = String.prototype; const k = ["toLocale", "UpperCase"].join(""); '
                  'return P[k].call(name) === name.toUpperCase(); })()',
            f"{R}: P[...]: an evasion: a property name built at run time"),
        "template name": (None, 'name[`toLocale${"Upper"}Case`]() !== "x"',
                          f"{R}: name[...]: an evasion: a property name built at run time"),
    },
    "descriptor": {
        "Object.getOwnPropertyDescriptor": (
            None, 'Object.getOwnPropertyDescriptor(String.prototype, "localeCompare").writable',
            f"{R}: Object.getOwnPropertyDescriptor: reflection"),
        "destructured from Object": (
            None, '(({ getOwnPropertyDescriptor: d }) => d(Math, "abs").writable)(Object)',
            f"{R}: getOwnPropertyDescriptor: reflection"),
        "Reflect": (None, 'Reflect.getOwnPropertyDescriptor(String.prototype, "at").writable',
                    f"{R}: Reflect.getOwnPropertyDescriptor: reflection"),
        "prototype of a value": (None, "Object.getPrototypeOf(name) === String.prototype",
                                 f"{R}: Object.getPrototypeOf: reflection"),
        "legacy getter lookup": (None, 'typeof name.__lookupGetter__ === "function"',
                                 f"{R}: __lookupGetter__: reflection"),
        "through an alias": (None, '(O => O.getOwnPropertyDescriptors(Math).abs.writable)(Object)',
                             f"{R}: getOwnPropertyDescriptors: reflection"),
    },
    "unicode table": {
        "property escape": (None, "/^\\p{L}/u.test(name)", f"{R}: /^\\p{{L}}/u: an engine's Unicode tables"),
        "property escape, v flag": (None, "/^\\P{Cn}/v.test(name)", f"{R}: /^\\P{{Cn}}/v: an engine's Unicode tables"),
        "property escape in a RegExp string": (None, 'new RegExp("^\\\\p{L}", "u").test(name)',
                                               f"{R}: RegExp: an engine's Unicode tables"),
        "case-insensitive unicode regex": (None, "/^[a-z]/iu.test(name)",
                                           f"{R}: /^[a-z]/iu: an engine's Unicode tables"),
        "normalize": (None, 'name.normalize("NFC") === name', f"{R}: normalize: an engine's Unicode tables"),
        "case mapping": (None, "name.toUpperCase().toLowerCase() === name",
                         f"{R}: toLowerCase: an engine's Unicode tables"),
        "case-insensitive regex without u": (None, "/^[a-z]/i.test(name)",
                                             f"{R}: /^[a-z]/i: an engine's Unicode tables"),
        "RegExp with flags given at run time": (
            None, '(f => new RegExp("^[a-z]", f).test(name))("i" + "u")', f"{R}: RegExp: an engine's Unicode tables"),
    },
    "this": {
        "object-literal method": ("const calls = { n: 0, bump() { return ++this.n; } };", "calls.bump() < 1000",
                                  f"{T}: this: module-level mutable state"),
        "function-valued property": ("const calls = { n: 0, bump: function () { this.n += 1; return this.n; } };",
                                     "calls.bump() < 1000", f"{T}: this: module-level mutable state"),
        "frozen object, nested array": (
            "const calls = Object.freeze({ seen: [], bump() { this.seen.push(0); return this.seen.length; } });",
            "calls.bump() < 1000", f"{T}: this: module-level mutable state"),
        "static method": ("class Count { static n = 0; static bump() { return ++this.n; } }", "Count.bump() < 1000",
                          f"{T}: this: module-level mutable state"),
        "this kept in a local": ("const calls = { n: 0, bump() { const self = this; return ++self.n; } };",
                                 "calls.bump() < 1000", f"{T}: this: module-level mutable state"),
        "this handed to Object.assign": (
            "const calls = { n: 0, bump() { return Object.assign(this, { n: this.n + 1 }).n; } };",
            "calls.bump() < 1000", f"{T}: this: module-level mutable state"),
        "arrow inside a method": ("const calls = { n: 0, bump() { return (() => ++this.n)(); } };",
                                  "calls.bump() < 1000", f"{T}: this: module-level mutable state"),
        "getter": ("const calls = { n: 0, get bump() { return ++this.n; } };", "calls.bump < 1000",
                   f"{T}: this: module-level mutable state"),
        "closure inside a top-level object literal": (
            "const api = { next: (() => { let n = 0; return () => ++n; })() };", "api.next() < 1000",
            f"{R + 1}: api: module-level mutable state"),
        "instance inside a top-level object literal": (
            "class Tally { constructor() { this.n = 0; } bump() { return ++this.n; } }\n"
            "const box = { tally: new Tally() };", "box.tally.bump() < 1000", f"{R + 2}: box: module-level mutable state"),
        "frozen instance of a class of its own": (
            "class Tally { constructor() { this.seen = []; } bump() { this.seen.push(0); return this.seen.length; } }\n"
            "const tally = Object.freeze(new Tally());", "tally.bump() < 1000",
            f"{R + 2}: tally: module-level mutable state"),
    },
}
CASES = [(kind, name) for kind, attacks in ATTACKS.items() for name in attacks]


@pytest.mark.parametrize("kind,name", CASES, ids=[f"{k}: {n}" for k, n in CASES])
def test_an_attack_through_a_door_the_banned_names_left_open_fails_purity(tmp_path, kind, name):
    declaration, condition, expected = ATTACKS[kind][name]
    copy = Copy(tmp_path)
    if declaration:
        copy.edit(PARSER, "const NOT_A_CALL = ", declaration + "\nconst NOT_A_CALL = ")
    skip_allowlist_when(condition)(copy)
    result = only(copy, "purity")
    assert not result.ok, result.line
    assert any(p.startswith(f"{PARSER}:{expected}") for p in result.problems), result.problems
