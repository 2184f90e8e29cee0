"""`extparity init` on what bundlers emit: the export clauses of a bundled module
(`export { g as extractToolCalls }`, `export { a as b, c }`, names imported from an ES chunk or
re-exported from one) are entries like declared exports; and a parser inlined into a background
with no exports (WXT's default, examples/wxt) scaffolds the message path instead of failing."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from extparity.subject.exports import candidate_entries

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
