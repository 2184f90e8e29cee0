"""The run-time purity guard cannot be told from the engine it guards (js/purity-guard.js).

A module that could detect the guard would call the real function only where there is none, in
users' browsers. So what a module can read of a guarded function without calling it (its
property's descriptor, its name, length, ``prototype``, the text Function.prototype.toString
shows) is read before and after the guard in one engine and must not change; and calling it
still throws. In QuickJS and V8 in this process, SpiderMonkey in a child (its global is the
process's). In Chromium and Firefox, in the realm where each kind loads the verified modules:
the entry module reads them there and in a fresh frame of the same browser, which no guard
reaches, and calls what the guard refuses.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extparity.engines.base import WireCase
from extparity.engines.driver import run_engine
from extparity.engines.worker import js_source
from extparity.project.kinds import build_engine

from support.fake_extension import make_tree, write_project

GUARDED = ["String.prototype.localeCompare", "String.prototype.toLocaleUpperCase", "Number.prototype.toLocaleString",
           "Math.random", "Date.now", "Date", "Date.prototype.constructor", "Function.prototype.toString", "eval",
           "Function"]
# What a module could read of each, without calling it, in the realm whose global is `root`.
READ = """(function read(root) {
  return [%s].map(function (path) {
    var parts = path.split("."), key = parts.pop(), owner = parts.reduce(function (o, k) { return o[k]; }, root);
    var d = root.Object.getOwnPropertyDescriptor(owner, key), f = owner[key];
    return [path, d.writable, d.enumerable, d.configurable, typeof f, f.name, f.length, "prototype" in f,
            root.Function.prototype.toString.call(f), root.String(f), JSON.stringify(root.Object.getOwnPropertyNames(f).sort())];
  });
})""" % ", ".join(json.dumps(path) for path in GUARDED)
PROBE = f"JSON.stringify({READ}(globalThis))"
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


# Each call the guard refuses, and the name its refusal gives, as in the headless engines.
CALLS = {"Date.now()": "Date.now", "new Date()": "Date", "Date()": "Date", "Math.random()": "Math.random",
         "Intl": "Intl", "(1).toLocaleString()": "toLocaleString", '"a".localeCompare("b")': "localeCompare",
         'eval("1")': "eval", '(function () {}).constructor("")': "Function"}
REFUSAL = " is not allowed in a verified module (extparity purity"
# The entry module of a fake extension: the reads in its own realm and in a fresh frame's, what
# each call above says, and what the first said at the module's top level.
BROWSER_PARSER = """\
const read = %s;
const CALLS = [%s];
const said = (call) => { try { call(); return "called"; } catch (e) { return e.message; } };
const atLoad = said(CALLS[0]);
export function parseToolCallsCanonical() {
  const frame = document.createElement("iframe");
  document.documentElement.appendChild(frame);
  try {
    return JSON.stringify({ guarded: read(globalThis), fresh: read(frame.contentWindow), refused: CALLS.map(said),
                            atLoad });
  } finally {
    frame.remove();
  }
}
""" % (READ, ", ".join(f"() => {call}" for call in CALLS))


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["chromium", "firefox"])
def test_in_the_browser_realm_of_the_verified_modules_a_guarded_function_reads_as_the_real_one_and_refuses(
        kind, tmp_path):
    tree = make_tree(tmp_path / "tree", "chrome" if kind == "chromium" else "firefox",
                     {"src/agent/tool-call-parser.js": BROWSER_PARSER})
    project = write_project(tmp_path, {"t": tree}, {"e": {"kind": kind, "tree": "t"}})
    run = run_engine(build_engine(project.engines["e"], project), [WireCase("read", "parse", ("", []))])
    assert run.status == "ok" and "read" in run.verdicts, (run.detail, run.failures)
    seen = json.loads(run.verdicts["read"])
    assert seen["guarded"] == seen["fresh"]
    assert [message.partition(REFUSAL)[0] for message in seen["refused"]] == list(CALLS.values()), seen["refused"]
    assert seen["atLoad"].startswith("Date.now" + REFUSAL)  # the modules were imported under the guard
