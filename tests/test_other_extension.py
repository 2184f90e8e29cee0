"""extparity pointed at an extension that is not the bundled one, through config alone.

`tests/extensions/shaped` is shaped the way real agent extensions are and the bundled inspector
is not: its parser takes a Set of names inside an options object, is async, returns objects with
time-based ids, and is reached through multi-line, namespace and default imports and a
re-export; its Firefox tree has a background page and no gecko id; and one of its modules
differs between the trees by a comment (planted). Its config has no Python reference, so
engines are compared with each other.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from support import ROOT, SHAPED, WEB_EXT, bundled_table
from support.cli import call_cli
from support.config_files import write_pyproject
from support.copies import copy_shaped

# Every test runs Chromium or Firefox (the shaped config's engines include both).
pytestmark = pytest.mark.browser

ENGINES = ["quickjs-chrome", "quickjs-firefox", "v8-chrome", "spidermonkey-firefox", "chromium", "firefox"]
CASES = ["one-call", "two-calls", "not-allowed", "prose-only", "mid-sentence", "bad-json-line"]


def tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def shaped_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("shaped") / "result.json"
    before = {tree: tree_digest(SHAPED / tree) for tree in ("chrome", "firefox")}
    code, stdout, stderr = call_cli("--config", str(SHAPED / "pyproject.toml"), "run", "--json", str(out))
    after = {tree: tree_digest(SHAPED / tree) for tree in ("chrome", "firefox")}
    return code, stdout, stderr, json.loads(out.read_text()), before, after


def test_every_js_engine_runs_the_shaped_extension_with_config_and_an_adapter_only(shaped_run):
    _, _, stderr, result, _, _ = shaped_run
    assert {name: engine["status"] for name, engine in result["engines"].items()} == dict.fromkeys(ENGINES, "ok"), stderr
    assert {case["id"]: case["cells"] for case in result["cases"]} == {case: dict.fromkeys(ENGINES, "pass") for case in CASES}
    verdicts = {case["id"]: json.loads(case["verdict"]) for case in result["cases"]}
    assert verdicts["one-call"] == {"calls": [{"name": "open", "arguments": {"url": "https://example.com"}}]}
    assert result["reference"] is None


def test_the_planted_twin_difference_fails_the_run_naming_both_files(shaped_run):
    code, _, stderr, result, _, _ = shaped_run
    assert code == 1
    (problem,) = result["modules"]["problems"]
    assert problem.startswith("lib/parser/scan.js: twins differ on disk")
    assert "chrome/lib/parser/scan.js" in problem and "firefox/lib/parser/scan.js" in problem
    assert f"module: {problem}" in stderr


def test_every_module_the_entry_reaches_is_hashed_and_the_adapter_is_recorded(shaped_run):
    _, _, _, result, _, _ = shaped_run
    assert sorted(result["modules"]["on_disk"]) == ["lib/parser/ids.js", "lib/parser/index.js", "lib/parser/scan.js"]
    adapter = result["modules"]["adapters"]["calls"]
    assert adapter == {"path": "adapters/tool-calls.js",
                       "sha256": hashlib.sha256((SHAPED / "adapters/tool-calls.js").read_bytes()).hexdigest()}
    for name in ENGINES:
        tree = result["engines"][name]["tree"]
        assert result["engines"][name]["module_hashes"] == {m: by_tree[tree] for m, by_tree in result["modules"]["on_disk"].items()}


def test_a_run_leaves_the_extension_trees_byte_for_byte_as_they_were(shaped_run):
    _, _, _, _, before, after = shaped_run
    assert before == after


def test_without_a_reference_two_engines_whose_bytes_differ_both_fail(tmp_path):
    copy = copy_shaped(tmp_path / "shaped", twins=True)
    for tree in ("chrome", "firefox"):  # the same twin in both trees, branching on the host
        path = copy / tree / "lib/parser/scan.js"
        path.write_text(path.read_text().replace("{ name: value.name,", "{ name: value.name + (globalThis.chrome ? \"\" : \"-bare\"),"))
    code, _, stderr = call_cli("--config", str(copy / "pyproject.toml"), "run", "--engines", "quickjs-chrome,chromium",
                               "--json", str(tmp_path / "r.json"))
    result = json.loads((tmp_path / "r.json").read_text())
    assert code == 1
    cells = {case["id"]: case["cells"] for case in result["cases"]}
    assert cells["one-call"] == {"quickjs-chrome": "diverges", "chromium": "diverges"}
    assert cells["prose-only"] == {"quickjs-chrome": "pass", "chromium": "pass"}  # no call, nothing to differ
    one = next(case for case in result["cases"] if case["id"] == "one-call")
    assert one["notes"]["chromium"] == ["no majority: quickjs-chrome | chromium"]
    assert "one-call [quickjs-chrome] DIVERGES: no majority" in stderr


def test_without_a_reference_the_odd_engine_out_is_named_against_the_majority(tmp_path):
    copy = copy_shaped(tmp_path / "shaped", twins=True)
    for tree in ("chrome", "firefox"):
        path = copy / tree / "lib/parser/scan.js"
        path.write_text(path.read_text().replace("{ name: value.name,", "{ name: value.name + (globalThis.chrome ? \"-ext\" : \"\"),"))
    code, _, _ = call_cli("--config", str(copy / "pyproject.toml"), "run", "--engines", "quickjs-chrome,v8-chrome,chromium",
                          "--json", str(tmp_path / "r.json"))
    one = next(case for case in json.loads((tmp_path / "r.json").read_text())["cases"] if case["id"] == "one-call")
    assert code == 1
    assert one["cells"] == {"quickjs-chrome": "pass", "v8-chrome": "pass", "chromium": "diverges"}
    assert one["notes"]["chromium"] == ["differs from the majority (quickjs-chrome, v8-chrome)"]
    assert one["groups"] == [["quickjs-chrome", "v8-chrome"], ["chromium"]]


def test_renamed_trees_and_engines_keep_the_bundled_suite_green(tmp_path):
    table = bundled_table()
    table["corpus"] = [str(ROOT / "fixtures")]
    # The bundled known deviations are all on the message path (engines named *-background), and
    # without the gate table no engine here takes that path: none of them may deviate.
    del table["known_deviations"], table["gate"]
    table["trees"] = {"cr": str(ROOT / "extension/chrome"), "fx": str(ROOT / "extension/firefox")}
    table["reference"] = "ref"
    table["engines"] = {
        "ref": {**table["engines"]["python"], "path": str(ROOT / "py_src")},
        "qjs-a": {"kind": "quickjs", "tree": "cr"},
        "qjs-b": {"kind": "quickjs", "tree": "fx"},
        "stable": {"kind": "chromium", "tree": "cr"},
    }
    config = write_pyproject(tmp_path / "pyproject.toml", table)
    code, out, err = call_cli("--config", str(config), "run")
    assert code == 0, err
    assert re.fullmatch(r"all \d+ cases agree across ref, qjs-a, qjs-b, stable and meet their expectations",
                        out.strip().splitlines()[-1])


@pytest.mark.gate
def test_the_gate_reaches_its_background_page_and_async_listener_through_config_alone(tmp_path):
    """The message path and the background checks on an extension shaped unlike the bundled one:
    a Firefox background *page*, a listener that answers asynchronously, an adapter of its own.
    Its real problems still fail the gate, each on its own line: the planted twin difference,
    and the gecko id a Firefox MV3 add-on needs (which Mozilla's linter reports too)."""
    copy = copy_shaped(tmp_path / "shaped")
    (copy / "message.js").write_text(
        "export default async function (send, modules, text, allowed) {\n"
        "  const calls = await send({ type: \"tool-calls\", text, allowed });\n"
        "  return JSON.stringify({ calls: calls.map((c) => ({ name: c.function.name, "
        "arguments: JSON.parse(c.function.arguments) })) });\n}\n")
    with (copy / "pyproject.toml").open("a") as config:
        config.write('manifest_keys = ["background"]\nmessages = { calls = "message.js" }\n'
                     f'web_ext = {{ command = "{WEB_EXT}" }}\n')
    code, out, err = call_cli("--config", str(copy / "pyproject.toml"), "gate",
                              "--only", "trees,manifests,web-ext lint,entry points,background,parity")
    verdicts = {name: mark for mark, name in re.findall(r"^(PASS|FAIL) ([a-z -]+?): ", out, re.MULTILINE)}
    assert code == 1
    assert {name for name, mark in verdicts.items() if mark == "FAIL"} == {"trees", "manifests", "web-ext lint", "parity"}, out
    assert "PASS entry points: chromium-background, firefox-background answered all 6 cases" in out
    assert "PASS background: chrome and firefox backgrounds load the same 4 scripts (background.js, lib/parser/ids.js, " \
           "lib/parser/index.js, lib/parser/scan.js)" in out
    assert "FAIL trees: lib/parser/scan.js: differs between chrome and firefox" in out
    assert "FAIL manifests: firefox/manifest.json: browser_specific_settings.gecko.id is missing" in out
    assert "FAIL web-ext lint: firefox: error ADDON_ID_REQUIRED" in out
