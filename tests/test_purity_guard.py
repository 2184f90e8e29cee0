"""The run-time purity guard cannot be told from the engine it guards (js/purity-guard.js).

A module that could detect the guard would call the real function only where there is none, in
users' browsers. So what a module can read of a guarded function without calling it (its
property's descriptor, its name, length, ``prototype``, the text Function.prototype.toString
shows) is read before and after the guard in one engine and must not change; and calling it
still throws. In QuickJS and V8 in this process, SpiderMonkey in a child (its global is the
process's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extparity.engines.worker import js_source

GUARDED = ["String.prototype.localeCompare", "String.prototype.toLocaleUpperCase", "Number.prototype.toLocaleString",
           "Math.random", "Date.now", "Date", "Date.prototype.constructor", "Function.prototype.toString", "eval",
           "Function"]
# What a module could read of each, without calling it.
PROBE = """JSON.stringify([%s].map(function (path) {
  var parts = path.split("."), key = parts.pop(), owner = parts.reduce(function (o, k) { return o[k]; }, globalThis);
  var d = Object.getOwnPropertyDescriptor(owner, key), f = owner[key];
  return [path, d.writable, d.enumerable, d.configurable, typeof f, f.name, f.length, "prototype" in f,
          Function.prototype.toString.call(f), String(f), JSON.stringify(Object.getOwnPropertyNames(f).sort())];
}))""" % ", ".join(json.dumps(path) for path in GUARDED)
GUARD = f"({js_source('purity-guard.js')})([]);"
REFUSED = """(function () { try { "a".localeCompare("b"); return "called"; } catch (e) { return e.message; } })()"""


def quickjs() -> list:
    import quickjs as engine

    context = engine.Context()
    return [context.eval(PROBE), context.eval(GUARD) and None, context.eval(PROBE), context.eval(REFUSED)]


def v8() -> list:
    from py_mini_racer import MiniRacer

    context = MiniRacer()
    return [context.eval(PROBE), context.eval(GUARD) and None, context.eval(PROBE), context.eval(REFUSED)]


def spidermonkey() -> list:
    script = ("import json, sys, pythonmonkey as pm\n"
              "probe, guard, refused = json.load(sys.stdin)\n"
              "print(json.dumps([pm.eval(probe), None, (pm.eval(guard), pm.eval(probe))[1], pm.eval(refused)]))\n")
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([PROBE, GUARD, REFUSED]),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("engine", [quickjs, v8, spidermonkey], ids=["quickjs", "v8", "spidermonkey"])
def test_a_guarded_function_reads_as_the_real_one_and_still_refuses(engine):
    before, _, after, refused = engine()
    assert json.loads(after) == json.loads(before)
    assert refused.startswith("localeCompare is not allowed in a verified module")
