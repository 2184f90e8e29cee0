"""Engines against a fake extension tree whose answers are known exactly.

Why a fake tree: these tests check the engine plumbing (linking, bridges, hashing, failure
handling), not the real parser, so the modules must be trivial enough that every expected
verdict can be written down by hand. Browser tests fail (never skip) when a browser is
missing: a parity gate that silently drops an engine would pass for the wrong reason.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from extparity.engines import ChromiumEngine, EngineRun, EntryPoint, FirefoxEngine, ModuleConfig, QuickJSEngine

MODULES = ("src/agent/json-core.js", "src/agent/tool-call-parser.js", "src/agent/argument-repair.js")
CONFIG = ModuleConfig(
    modules=MODULES,
    entries={
        "parse": EntryPoint("src/agent/tool-call-parser.js", "parseToolCallsCanonical"),
        "repair": EntryPoint("src/agent/argument-repair.js", "repairArgumentsCanonical"),
    },
)

JSON_CORE = """\
export function canon(value) {
  return JSON.stringify(value);
}
"""
PARSER = """\
import { canon } from "./json-core.js";

export function parseToolCallsCanonical(text, allowed) {
  if (text === "THROW") throw new RangeError("asked to throw");
  if (text === "LOOP") { for (;;) {} }
  return canon({ calls: [], echo: text });
}
"""
REPAIR = """\
import { canon } from "./json-core.js";

export const repairArgumentsCanonical = (raw) => canon(raw.length);
"""
BACKGROUND = """\
import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";
globalThis.fakeReady = typeof parseToolCallsCanonical;
"""

# Inputs that break naive bridges: lone surrogate, NUL, U+2028, an astral char (2 code units).
CASES = [
    {"id": "lone-surrogate", "fn": "parse", "input": "a\ud800b", "allowed": ["f"]},
    {"id": "nul", "fn": "parse", "input": "a\x00b", "allowed": []},
    {"id": "u2028", "fn": "parse", "input": "a\u2028b\u2029", "allowed": []},
    {"id": "astral", "fn": "parse", "input": "\U0001d11e", "allowed": []},
    {"id": "repair-astral", "fn": "repair", "input": "x\U0001d11e"},
    {"id": "repair-empty", "fn": "repair", "input": ""},
    {"id": "throws", "fn": "parse", "input": "THROW", "allowed": []},
    {"id": "__proto__", "fn": "repair", "input": "abc"},
]
EXPECTED = {
    # JSON.stringify escapes lone surrogates and NUL, keeps U+2028 and astral chars raw.
    "lone-surrogate": '{"calls":[],"echo":"a\\ud800b"}',
    "nul": '{"calls":[],"echo":"a\\u0000b"}',
    "u2028": '{"calls":[],"echo":"a\u2028b\u2029"}',
    "astral": '{"calls":[],"echo":"\U0001d11e"}',
    "repair-astral": "3",  # UTF-16 length
    "repair-empty": "0",
    "__proto__": "3",
}


def make_tree(root: Path, flavor: str, parser: str = PARSER) -> Path:
    """A minimal extension tree with the contract's layout and the fake modules above."""
    background = ({"service_worker": "background.js", "type": "module"} if flavor == "chrome"
                  else {"scripts": ["background.js"], "type": "module"})
    manifest = {"manifest_version": 3, "name": "Fake inspector", "version": "0.0.1",
                "background": background, "action": {"default_popup": "inspector.html"}}
    if flavor == "firefox":
        manifest["browser_specific_settings"] = {"gecko": {"id": "tool-call-inspector@extparity.dev"}}
    (root / "src" / "agent").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (root / "inspector.html").write_text('<!doctype html><meta charset="utf-8"><title>fake</title>')
    (root / "background.js").write_text(BACKGROUND)
    for path, text in zip(MODULES, (JSON_CORE, parser, REPAIR)):
        (root / path).write_text(text, encoding="utf-8")
    return root


def disk_hashes(tree: Path) -> dict[str, str]:
    return {m: hashlib.sha256((tree / m).read_bytes()).hexdigest() for m in MODULES}


ENGINES = {
    "quickjs": lambda tree: QuickJSEngine("quickjs-chrome", tree, CONFIG, chunk_size=3),
    "chromium": lambda tree: ChromiumEngine("chromium", tree, CONFIG, chunk_size=3),
    "firefox": lambda tree: FirefoxEngine("firefox", tree, CONFIG, chunk_size=3),
}
FLAVOR = {"quickjs": "chrome", "chromium": "chrome", "firefox": "firefox"}


@pytest.fixture(scope="module", params=list(ENGINES))
def engine_runs(request, tmp_path_factory):
    """Per engine: the run over CASES on tree A, and a run on tree B whose parser differs by a comment."""
    kind = request.param
    tree_a = make_tree(tmp_path_factory.mktemp(f"{kind}-a"), FLAVOR[kind])
    tree_b = make_tree(tmp_path_factory.mktemp(f"{kind}-b"), FLAVOR[kind], PARSER + "// changed\n")
    run_a = ENGINES[kind](tree_a).run(CASES, timeout_s=60)
    run_b = ENGINES[kind](tree_b).run(CASES[:1], timeout_s=60)
    return kind, tree_a, run_a, tree_b, run_b


def test_verdicts_survive_every_bridge(engine_runs):
    kind, _, run, _, _ = engine_runs
    assert run.status == "ok", f"{kind}: {run.detail}"
    assert run.verdicts == EXPECTED


def test_a_throwing_case_is_a_case_error_and_others_still_run(engine_runs):
    _, _, run, _, _ = engine_runs
    assert run.case_errors == {"throws": "RangeError: asked to throw"}
    assert len(run.verdicts) == len(CASES) - 1


def test_in_engine_hashes_equal_on_disk_hashes(engine_runs):
    _, tree_a, run_a, tree_b, run_b = engine_runs
    assert run_a.module_hashes == disk_hashes(tree_a)
    assert run_b.module_hashes == disk_hashes(tree_b)


def test_a_module_that_differs_between_trees_has_different_hashes(engine_runs):
    _, _, run_a, _, run_b = engine_runs
    changed = "src/agent/tool-call-parser.js"
    assert run_a.module_hashes[changed] != run_b.module_hashes[changed]
    assert {k: v for k, v in run_a.module_hashes.items() if k != changed} == \
        {k: v for k, v in run_b.module_hashes.items() if k != changed}


def test_timings_are_reported(engine_runs):
    _, _, run, _, _ = engine_runs
    assert run.timings["startup_s"] > 0
    assert len(run.timings["chunks_s"]) == run.timings["chunks"] == 3


@pytest.mark.parametrize("kind", list(ENGINES))
def test_an_infinite_loop_times_out_and_keeps_earlier_chunks(kind, tmp_path):
    tree = make_tree(tmp_path / "tree", FLAVOR[kind])
    ok = [{"id": f"ok{i}", "fn": "repair", "input": "x" * i} for i in range(6)]
    loop = [{"id": "loop", "fn": "parse", "input": "LOOP", "allowed": []}]
    cases = ok + loop + [{"id": "after", "fn": "repair", "input": ""}]
    run: EngineRun = ENGINES[kind](tree).run(cases, timeout_s=3)  # chunks: ok0-2, ok3-5, loop+after
    assert run.status == "timeout", run.detail
    assert run.verdicts == {f"ok{i}": str(i) for i in range(6)}
    assert "loop" not in run.verdicts and "after" not in run.verdicts


def test_quickjs_rejects_imports_outside_the_restricted_grammar(tmp_path):
    tree = make_tree(tmp_path / "tree", "chrome", PARSER.replace(
        'import { canon } from "./json-core.js";', 'import * as core from "./json-core.js";'))
    run = QuickJSEngine("quickjs-chrome", tree, CONFIG).run(CASES, timeout_s=10)
    assert run.status == "crashed"
    assert "src/agent/tool-call-parser.js:1" in run.detail and "unsupported import" in run.detail
    assert run.verdicts == {}


def test_quickjs_rejects_a_module_listed_after_its_importer(tmp_path):
    tree = make_tree(tmp_path / "tree", "chrome")
    misordered = ModuleConfig(modules=(MODULES[1], MODULES[0], MODULES[2]), entries=CONFIG.entries)
    run = QuickJSEngine("quickjs-chrome", tree, misordered).run(CASES, timeout_s=10)
    assert run.status == "crashed"
    assert "src/agent/tool-call-parser.js:1" in run.detail and "json-core.js" in run.detail


def test_quickjs_evaluates_modules_as_modules(tmp_path):
    """Strict mode and an undefined top-level `this`, as in a browser's module loader."""
    parser = PARSER.replace("export function", "const probe = [this === undefined, (function () { return this; })() === undefined];\nexport function")
    parser = parser.replace("canon({ calls: [], echo: text })", "canon(probe)")
    tree = make_tree(tmp_path / "tree", "chrome", parser)
    run = QuickJSEngine("quickjs-chrome", tree, CONFIG).run(CASES[:1], timeout_s=10)
    assert run.status == "ok", run.detail
    assert run.verdicts == {"lone-surrogate": "[true,true]"}


@pytest.mark.parametrize("engine_cls", [ChromiumEngine, FirefoxEngine])
def test_a_missing_browser_is_a_crash_not_a_skip(engine_cls, tmp_path):
    tree = make_tree(tmp_path / "tree", "firefox")
    run = engine_cls("x", tree, CONFIG, executable_path=str(tmp_path / "no-such-browser")).run(CASES, 5)
    assert run.status == "crashed" and "not found" in run.detail
