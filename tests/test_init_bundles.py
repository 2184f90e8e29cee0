"""`extparity init` on what bundlers emit: the export clauses of a bundled module
(`export { g as extractToolCalls }`, `export { a as b, c }`, names imported from an ES chunk or
re-exported from one) are entries like declared exports; and a parser inlined into a background
with no exports (WXT's default, examples/wxt) scaffolds the message path instead of failing."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from extparity.subject.exports import candidate_entries

from support import ROOT
from support.cli import call_cli

CHROME = {"manifest_version": 3, "name": "X", "version": "1.0.0", "background": {"service_worker": "background.js"}}
FIREFOX = {**CHROME, "background": {"scripts": ["background.js"]},
           "browser_specific_settings": {"gecko": {"id": "x@extparity.test"}}}


def trees(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    for name, manifest in (("chrome", CHROME), ("firefox", FIREFOX)):
        for rel, text in {"manifest.json": json.dumps(manifest), **files}.items():
            (root / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / name / rel).write_text(text)
    return root / "chrome", root / "firefox"


def found(root: Path, files: dict[str, str]) -> list[tuple[str, str, tuple[str, ...], int]]:
    candidates, unreadable = candidate_entries(*trees(root, files))
    assert unreadable == []
    return [(e.module, e.name, e.params, e.line) for e in candidates]


def test_export_clauses_name_the_functions_they_export(tmp_path):
    assert found(tmp_path, {
        "background.js": "import { extractToolCalls } from './parser.js';\n",
        "parser.js": "function g(text, allowed) { return text; }\nconst a = ({ strict }) => strict, n = 1;\n"
                     "function c(raw) { return raw; }\nexport { g as extractToolCalls };\nexport { a as b, c, n };\n",
    }) == [("parser.js", "extractToolCalls", ("text", "allowed"), 4), ("parser.js", "b", ("options",), 5),
           ("parser.js", "c", ("raw",), 5)]


def test_a_function_in_a_chunk_is_the_surface_of_the_module_that_exports_it(tmp_path):
    """The chunk is imported by an exporting module, so it is a helper; the entry is the module's
    export, with the parameters of the chunk's function, however many re-exports away."""
    assert found(tmp_path, {
        "background.js": "import { extractToolCalls } from './index.js';\n",
        "index.js": "import { t as p } from './chunks/parser-B1x.js';\nexport { p as extractToolCalls };\n"
                    "export { r as repair } from './chunks/parser-B1x.js';\n",
        "chunks/parser-B1x.js": "export { o as t, r } from './parser-core-Q9.js';\n",
        "chunks/parser-core-Q9.js": "function o(text, allowed) { return text; }\nconst r = raw => raw;\nexport { o, r };\n",
    }) == [("index.js", "extractToolCalls", ("text", "allowed"), 2), ("index.js", "repair", ("raw",), 3)]


def test_init_writes_an_entry_for_an_export_clause(tmp_path, monkeypatch):
    trees(tmp_path, {"background.js": "import { extractToolCalls } from './parser.js';\n",
                     "parser.js": "function g(text, allowed) { return text; }\nexport { g as extractToolCalls };\n"})
    monkeypatch.chdir(tmp_path)
    code, out, err = call_cli("init")
    assert code == 0, out + err
    entries = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]["entries"]
    assert entries == {"extractToolCalls": {"module": "parser.js", "export": "extractToolCalls",
                                            "args": ["text", "allowed"], "adapter": "extparity/adapters/extractToolCalls.js"}}


WXT = ROOT / "examples" / "wxt"
LISTENER = "chrome.runtime.onMessage.addListener((m, _, reply) => { reply({ verdict: m.text }); });\n"


@pytest.fixture
def wxt_build(tmp_path) -> Path:
    """examples/wxt's two built trees, without the config, adapter and corpus written for them."""
    if not (WXT / ".output" / "firefox-mv3" / "manifest.json").is_file():
        pytest.fail("the WXT example is not built: `make wxt-example` (npm ci and the build, from its lock file)")
    copy = tmp_path / "wxt"
    shutil.copytree(WXT / ".output", copy / ".output", ignore=shutil.ignore_patterns("*.zip"))
    return copy


def test_an_inlined_parser_gets_the_message_path_scaffolded(wxt_build, monkeypatch):
    monkeypatch.chdir(wxt_build)
    code, out, err = call_cli("init")
    assert code == 0, out + err
    assert out.splitlines()[0] == ("background.js exports nothing and no shared ES module exports a function: the parser "
                                   "is inlined into the background, so init writes the message path (via = \"message\")")
    table = tomllib.loads((wxt_build / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": ".output/chrome-mv3", "firefox": ".output/firefox-mv3"}
    assert table["per_browser"] == ["background.js"]  # the minifier named the two builds apart
    assert table["entries"] == {"calls": {"module": "background.js", "export": "calls", "args": ["text"]}}
    assert {name: (spec["tree"], spec["via"]) for name, spec in table["engines"].items()} == {
        "quickjs-chrome": ("chrome", "message"), "quickjs-firefox": ("firefox", "message"),
        "chromium": ("chrome", "message"), "firefox": ("firefox", "message")}
    gate = table["gate"]
    assert gate["messages"] == {"calls": "extparity/adapters/calls.js"}
    # what the hand-written config of examples/wxt declares, each reason drafted for a person to write
    assert (gate["glue"], gate["manifest_keys"]) == ([], ["background"])
    assert [item["script"] for item in gate["glue_scripts"]] == ["chunks/popup-CWP5EVop.js"]
    assert [item["identifier"] for item in gate["purity"]] == ["globalThis.browser", "globalThis.chrome", "console.warn"]
    adapter = (wxt_build / "extparity/adapters/calls.js").read_text()
    assert "export default async function (send, modules, text) {" in adapter
    assert "drift" not in out and "cannot be read" not in out, out
    assert call_cli("corpus", "lint")[0] == 0
    code, out, _ = call_cli("gate", "--only", "trees,scripts")
    assert code == 0, out
    # The drafted reasons fail the gate's policy check until someone writes their own.
    code, _, err = call_cli("gate", "--only", "policy")
    assert code == 1
    drafted = [line.split(" (")[0] for line in err.splitlines() if "its reason is still the placeholder" in line]
    assert drafted == ["  policy: [tool.extparity.gate].purity[0]", "  policy: [tool.extparity.gate].purity[1]",
                       "  policy: [tool.extparity.gate].purity[2]", "  policy: [tool.extparity.gate].glue_scripts[0]"]


def test_a_background_the_same_in_both_trees_is_not_declared_per_browser(tmp_path, monkeypatch):
    trees(tmp_path, {"background.js": LISTENER})
    monkeypatch.chdir(tmp_path)
    code, out, err = call_cli("init")
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert "per_browser" not in table and table["entries"]["calls"]["module"] == "background.js"
    (tmp_path / "pyproject.toml").unlink()
    shutil.rmtree(tmp_path / "extparity")
    (tmp_path / "firefox/background.js").write_text(LISTENER.replace("m.text", "String(m.text)"))
    assert call_cli("init")[0] == 0
    assert tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]["per_browser"] == ["background.js"]


def test_a_background_that_exports_nothing_but_is_not_shared_is_still_the_old_one_line(tmp_path, monkeypatch):
    trees(tmp_path, {"background.js": LISTENER})
    manifest = tmp_path / "firefox/manifest.json"
    manifest.write_text(json.dumps({**FIREFOX, "background": {"scripts": ["bg-firefox.js"]}}))
    (tmp_path / "firefox/bg-firefox.js").write_text(LISTENER)
    monkeypatch.chdir(tmp_path)
    code, out, err = call_cli("init")
    assert (code, out) == (2, "")
    assert err == (f"extparity: no ES module that is the same in {tmp_path / 'chrome'} and {tmp_path / 'firefox'} "
                   f"exports a function: the entries must be one file in both trees\n")
    assert not (tmp_path / "extparity").exists() and not (tmp_path / "pyproject.toml").exists()


@pytest.mark.browser
@pytest.mark.slow
def test_the_scaffold_runs_once_the_adapter_and_the_cases_are_the_teams(wxt_build, monkeypatch):
    """What a team then writes: the message its background answers (examples/wxt's adapter), the
    case fields, the cases. The scaffold's engines and per-browser declaration run them as written."""
    monkeypatch.chdir(wxt_build)
    assert call_cli("init")[0] == 0
    config = wxt_build / "pyproject.toml"
    config.write_text(config.read_text().replace('args = ["text"]', 'args = ["text", "allowed"]'))
    shutil.copy(WXT / "extparity/adapters/calls.js", wxt_build / "extparity/adapters/calls.js")
    (wxt_build / "extparity/corpus/starter.jsonl").unlink()
    shutil.copy(WXT / "extparity/corpus/calls.jsonl", wxt_build / "extparity/corpus/calls.jsonl")
    shutil.copy(WXT / "extparity/corpus/tags.json", wxt_build / "extparity/corpus/tags.json")
    code, out, err = call_cli("run")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("all 30 cases agree across quickjs-chrome, quickjs-firefox, chromium, firefox")
