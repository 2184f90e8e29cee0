"""`extparity init` on extensions as a new user has them: the shaped example (its planted twin
difference removed) and a fresh copy of the bundled one. The written config loads, its starter
corpus lints clean, and after the user writes the adapter and the cases by hand it runs green in
the four engines it names, browsers included. What init must not do: overwrite a table or a file,
or guess trees it cannot tell apart."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from extparity.subject.exports import candidate_entries

from support import SHAPED
from support.cli import call_cli
from support.copies import copy_bundled_trees, copy_shaped

ENGINES = "quickjs-chrome, quickjs-firefox, chromium, firefox"


def cases(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps({"expect": "reference", "tags": ["starter"], "why": "by hand", **row}) + "\n"
                            for row in rows), encoding="utf-8")


@pytest.fixture
def shaped(tmp_path) -> Path:
    """The shaped extension's two trees only, their planted difference removed."""
    return copy_shaped(tmp_path / "shaped", twins=True, trees_only=True)


@pytest.fixture
def bundled(tmp_path) -> Path:
    return copy_bundled_trees(tmp_path / "bundled")


def test_init_finds_the_trees_from_their_manifests_and_writes_what_it_found(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    code, out, err = call_cli("init")
    assert code == 0, err
    table = tomllib.loads((shaped / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "chrome", "firefox": "firefox"}
    assert table["entries"] == {"extractToolCalls": {
        "module": "lib/parser/index.js", "export": "extractToolCalls", "args": ["text", "options"],
        "adapter": "extparity/adapters/extractToolCalls.js"}}
    assert list(table["engines"]) == ENGINES.split(", ")
    gate = table["gate"]
    assert (gate["glue"], gate["manifest_keys"]) == ([], ["background"])
    assert [item["script"] for item in gate["glue_scripts"]] == ["background.js"]
    assert [(item["identifier"], item["module"]) for item in gate["purity"]] == \
        [("Date.now", "lib/parser/ids.js"), ("Math.random", "lib/parser/ids.js")]
    assert out.splitlines()[-1] == ("next: make each adapter return your verdict text, write cases in "
                                    "extparity/corpus/, then run: extparity --config pyproject.toml run")
    # It reads what it wrote: its adapters are held to the purity rules like the modules, and
    # were once read before they were written ("adapter ... cannot be read").
    assert "cannot be read" not in out and not any("adapter" in line for line in out.splitlines() if "check:" in line), out
    code, out, err = call_cli("corpus", "lint")
    assert code == 0, out + err


@pytest.mark.browser
def test_the_shaped_config_init_wrote_runs_green_once_the_adapter_and_cases_are_written(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    assert call_cli("init")[0] == 0
    (shaped / "extparity/adapters/extractToolCalls.js").write_text(
        (SHAPED / "adapters/tool-calls.js").read_text().replace("text, allowed)", "text, options)")
        .replace("new Set(allowed)", "new Set(options)"))
    cases(shaped / "extparity/corpus/starter.jsonl", [
        {"id": "one-call", "fn": "extractToolCalls", "text": "{\"name\": \"open\"}", "options": ["open"],
         "expect": {"calls": [{"name": "open", "arguments": {}}]}},
        {"id": "not-allowed", "fn": "extractToolCalls", "text": "{\"name\": \"rm\"}", "options": ["open"]},
        {"id": "prose", "fn": "extractToolCalls", "text": "Nothing to run.", "options": ["open"]},
    ])
    code, out, err = call_cli("run")
    assert code == 0, out + err
    assert out.splitlines()[-1] == f"all 3 cases agree across {ENGINES} and meet their expectations"


@pytest.mark.browser
def test_the_bundled_extensions_config_runs_green_with_the_trees_named_on_the_command_line(bundled, monkeypatch):
    monkeypatch.chdir(bundled)
    code, out, err = call_cli("init", "--chrome", "ext/chrome", "--firefox", "ext/firefox")
    assert code == 0, err
    table = tomllib.loads((bundled / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "ext/chrome", "firefox": "ext/firefox"}
    assert list(table["entries"]) == ["repairArguments", "repairArgumentsCanonical", "parseToolCalls",
                                      "parseToolCallsCanonical"]
    # The agent modules read no environment and keep no state; outside the purity allowlist they
    # use only Math.log10 (an estimate exact arithmetic corrects), which init drafts for a person.
    assert sorted((item["identifier"], item["module"]) for item in table["gate"]["purity"]) == \
        [("Math.log10", "src/agent/json-core.js"), ("Math.log10", "src/agent/json-fast.js")]
    assert all(item["reason"].startswith("found by extparity init") for item in table["gate"]["purity"])
    (bundled / "extparity/adapters/parseToolCallsCanonical.js").write_text(
        "export default (parseToolCallsCanonical, text, allowed) => parseToolCallsCanonical(text, allowed);\n")
    cases(bundled / "extparity/corpus/starter.jsonl", [
        {"id": "own-line-call", "fn": "parseToolCallsCanonical", "text": "{\"name\": \"open\", \"arguments\": {}}",
         "allowed": ["open"]},
        {"id": "cut-object", "fn": "repairArguments", "raw": "{\"a\": [1, 2"},
    ])
    code, out, err = call_cli("run")
    assert code == 0, out + err
    assert out.splitlines()[-1] == f"all 2 cases agree across {ENGINES} and meet their expectations"


def test_an_existing_table_is_refused_in_one_line_and_left_as_it_was(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    (shaped / "pyproject.toml").write_text("[project]\nname = \"theirs\"\n\n[tool.extparity]\ncorpus = []\n")
    before = (shaped / "pyproject.toml").read_bytes()
    code, out, err = call_cli("init")
    assert (code, out) == (2, "")
    assert err == f"extparity: {shaped / 'pyproject.toml'} already has a [tool.extparity] table; init writes only a new one\n"
    assert (shaped / "pyproject.toml").read_bytes() == before and not (shaped / "extparity").exists()


def test_a_pyproject_without_the_table_keeps_its_own_tables(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    (shaped / "pyproject.toml").write_text("[project]\nname = \"theirs\"\n")
    assert call_cli("init")[0] == 0
    document = tomllib.loads((shaped / "pyproject.toml").read_text())
    assert document["project"] == {"name": "theirs"} and "entries" in document["tool"]["extparity"]


def test_a_file_in_the_way_is_refused_before_anything_is_written(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    (shaped / "extparity/corpus").mkdir(parents=True)
    (shaped / "extparity/corpus/tags.json").write_text("{}")
    code, _, err = call_cli("init")
    assert code == 2 and err == f"extparity: {shaped / 'extparity/corpus/tags.json'} exists already; init writes only new files\n"
    assert not (shaped / "pyproject.toml").exists() and not (shaped / "extparity/adapters").exists()


def test_trees_it_cannot_tell_apart_are_one_line_asking_for_them(shaped, monkeypatch):
    monkeypatch.chdir(shaped)
    shutil.rmtree(shaped / "firefox")
    code, _, err = call_cli("init")
    assert code == 2
    assert err.startswith(f"extparity: need one Chrome and one Firefox manifest.json under {shaped} "
                          f"(chrome: chrome, firefox: none); name them with --chrome DIR --firefox DIR")
    assert call_cli("init", "--chrome", "chrome")[2] == \
        "extparity: give both --chrome DIR and --firefox DIR, or neither (then they are found from the manifests)\n"


def test_only_modules_both_trees_ship_byte_for_byte_are_candidates_and_helpers_are_not(shaped):
    (shaped / "firefox/lib/parser/index.js").write_bytes((shaped / "firefox/lib/parser/index.js").read_bytes() + b"\n")
    for tree in ("chrome", "firefox"):
        (shaped / tree / "lib/util.js").write_text(
            "import { candidateLines } from \"./parser/scan.js\";\n"
            "export const count = (text, [first] = [], ...rest) => candidateLines(text).length;\n")
    found, unreadable = candidate_entries(shaped / "chrome", shaped / "firefox")
    assert unreadable == []
    # index.js differs now; scan.js is imported by util.js, which exports: a helper, not the surface.
    assert [(e.module, e.name, e.params) for e in found] == [("lib/util.js", "count", ("text", "arg2", "rest"))]
