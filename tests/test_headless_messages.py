"""The headless message path: a background as a bundler builds it, judged in QuickJS, V8 and
SpiderMonkey through its runtime messages (``via = "message"``, js/webext-shim.js).

The background here is shaped as WXT 0.20 builds one (an IIFE with the parser inlined and no
exports, picking ``browser`` or ``chrome`` at run time, logging through ``console`` when its
start-up throws), small enough that every verdict is written down by hand. The errors a module
engine gives on such a file must name the real cause, not the engine's "console is not defined".
"""

from __future__ import annotations

import json

import pytest

from extparity.engines.base import WireCase
from extparity.engines.driver import run_engine
from extparity.project.kinds import build_engine

from support.fake_extension import ENTRIES, MODULES, make_tree, sha256, write_project

# V8 and SpiderMonkey start in about 2 s each; QuickJS keeps the path in `make test-fast`.
HEADLESS = ["quickjs", *(pytest.param(kind, marks=pytest.mark.slow) for kind in ("v8", "spidermonkey"))]

# As WXT builds it: the parser inlined, the listener replying through sendResponse at once.
IIFE_BACKGROUND = (
    "var background=(function(){var t=globalThis.browser?.runtime?.id?globalThis.browser:globalThis.chrome;"
    "function o(e,t){if(typeof e!=`string`)return JSON.stringify({calls:[],error:`text-not-string`});"
    "return JSON.stringify({calls:e.split(`\n`).filter(l=>t.includes(l.trim())),error:null})}"
    "var s={main(){t.runtime.onMessage.addListener((e,t,n)=>(e?.type===`calls`&&n({verdict:o(e.text,e.allowed)}),!1))}},"
    "c={error:(...e)=>console.error(...e)},l;try{l=s.main()}catch(e){throw c.error(`The background crashed on startup!`),e}"
    "return l})();\n")
ADAPTER = """\
export default async function (send, modules, text, allowed) {
  const reply = await send({ type: "calls", text, allowed });
  return typeof reply?.verdict === "string" ? reply.verdict : JSON.stringify({ unexpected_reply: reply ?? null });
}
"""
ENTRY = {"calls": {"module": "background.js", "export": "extractToolCalls", "args": ["text", "allowed"]}}
MANIFEST = {"manifest_version": 3, "name": "Bundled", "version": "1.0.0", "background": {"scripts": ["background.js"]},
            "browser_specific_settings": {"gecko": {"id": "bundled@extparity.test"}}}


def bundled_project(tmp_path, kind: str, via: str, background: str = IIFE_BACKGROUND):
    tree = tmp_path / "firefox"
    tree.mkdir()
    (tree / "manifest.json").write_text(json.dumps(MANIFEST))
    (tree / "background.js").write_text(background)
    (tmp_path / "calls.js").write_text(ADAPTER)
    project = write_project(tmp_path, {"firefox": tree}, {"e": {"kind": kind, "tree": "firefox", "via": via}},
                            entries=ENTRY, gate={"messages": {"calls": "calls.js"}})
    return build_engine(project.engines["e"], project), tree


CASES = [WireCase("two", "calls", ("open\nclose\nclick", ["open", "click"])),
         WireCase("none", "calls", ("x", [])),
         WireCase("not-text", "calls", (5, ["open"]))]


@pytest.mark.parametrize("kind", HEADLESS)
def test_a_bundled_background_answers_its_messages_headless(kind, tmp_path):
    engine, tree = bundled_project(tmp_path, kind, "message")
    run = run_engine(engine, CASES)
    assert run.status == "ok", run.detail
    assert run.verdicts == {"two": '{"calls":["open","click"],"error":null}', "none": '{"calls":[],"error":null}',
                            "not-text": '{"calls":[],"error":"text-not-string"}'}
    assert run.module_hashes == {"background.js": sha256(tree / "background.js")}  # the bytes it ran


@pytest.mark.parametrize("kind", HEADLESS)
def test_a_bundled_background_as_a_module_names_the_real_cause(kind, tmp_path):
    engine, _ = bundled_project(tmp_path, kind, "module")
    run = run_engine(engine, CASES)
    assert run.status == "crashed"
    # Its start-up ran without an extension API and logged through console, which a bare engine
    # lacks; the engine's own words say only that.
    assert "console is not defined" in run.detail
    assert "extension code that runs at once" in run.detail and 'via = "message"' in run.detail


@pytest.mark.parametrize("kind", HEADLESS)
def test_a_script_with_no_exports_says_the_parser_is_inlined(kind, tmp_path):
    engine, _ = bundled_project(tmp_path, kind, "module", background="var background = (function () { return 1; })();\n")
    run = run_engine(engine, CASES)
    assert run.status == "crashed"
    assert "background.js has no exports at all" in run.detail and "message path" in run.detail


@pytest.mark.parametrize("kind", HEADLESS)
def test_an_api_the_shim_lacks_throws_naming_it(kind, tmp_path):
    uses_storage = IIFE_BACKGROUND.replace("n({verdict:o(e.text,e.allowed)})",
                                           "(t.storage.local.get(`x`),n({verdict:o(e.text,e.allowed)}))")
    engine, _ = bundled_project(tmp_path, kind, "message", background=uses_storage)
    run = run_engine(engine, CASES[:1])
    # The listener threw: no listener answered, and the adapter saw no reply.
    assert run.status == "ok" and not run.verdicts
    assert "the background sent no reply" in run.failures["two"].detail


@pytest.mark.parametrize("kind", HEADLESS)
def test_a_background_that_throws_at_start_up_names_the_shim(kind, tmp_path):
    throws = "browser.i18n.getMessage('name');\n" + IIFE_BACKGROUND
    engine, _ = bundled_project(tmp_path, kind, "message", background=throws)
    run = run_engine(engine, CASES)
    assert run.status == "crashed"
    assert "background.js: the background failed to start on the headless message path" in run.detail
    assert "i18n.getMessage is not in extparity's headless message path" in run.detail


@pytest.mark.parametrize("kind", HEADLESS)
def test_a_module_service_worker_is_linked_and_messaged(kind, tmp_path):
    """The background as a module (the bundled extension's shape): linked with its imports, each
    module evaluated once, and the adapter's namespaces are the entries' modules."""
    background = ('import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";\n'
                  "chrome.runtime.onMessage.addListener((m, s, reply) => {\n"
                  "  reply({ verdict: parseToolCallsCanonical(m.text, m.allowed) });\n"
                  "});\n")
    tree = make_tree(tmp_path / "chrome", "chrome", {"background.js": background})
    adapter = ("export default async function (send, modules, text, allowed) {\n"
               "  const reply = await send({ text, allowed });\n"
               "  return modules['src/agent/json-core.js'].canon(JSON.parse(reply.verdict));\n}\n")
    (tmp_path / "parse.js").write_text(adapter)
    entries = {"parse": ENTRIES["parse"]}
    project = write_project(tmp_path, {"chrome": tree}, {"e": {"kind": kind, "tree": "chrome", "via": "message"}},
                            entries=entries, gate={"messages": {"parse": "parse.js"}})
    run = run_engine(build_engine(project.engines["e"], project), [WireCase("a", "parse", ("hi", []))])
    assert run.status == "ok", run.detail
    assert run.verdicts == {"a": '{"calls":[],"echo":"hi"}'}
    assert set(run.module_hashes) == {"background.js", *[p for p in MODULES if p != "src/agent/argument-repair.js"]}
