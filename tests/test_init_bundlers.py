"""`extparity init` finds the trees where bundlers put them: Plasmo's `build/chrome-mv3-prod` and
`build/firefox-mv3-prod`, a plain Vite build's `dist/` (one folder per browser), WXT's `.output/`,
and not the copies of the trees extparity itself leaves in its `dist/`. Tiny layouts written
here, each with one ES module both trees ship byte for byte, so that only the finding of the
trees is under test (the export clauses bundlers emit and the message path are in
test_init_bundles.py)."""

from __future__ import annotations

import json
import tomllib

from support.cli import call_cli

PARSER = "export function parseCalls(text, allowed) {\n  return JSON.stringify({ text, allowed });\n}\n"
CHROME = {"manifest_version": 3, "name": "X", "version": "1.0.0",
          "background": {"service_worker": "static/background/index.js"}}
FIREFOX = {**CHROME, "background": {"scripts": ["static/background/index.js"]},
           "browser_specific_settings": {"gecko": {"id": "x@extparity.test"}}}


def layout(root, chrome: str, firefox: str) -> None:
    for folder, manifest in ((chrome, CHROME), (firefox, FIREFOX)):
        tree = root / folder
        (tree / "static" / "background").mkdir(parents=True)
        (tree / "manifest.json").write_text(json.dumps(manifest))
        (tree / "static" / "background" / "index.js").write_text("import { parseCalls } from '../../parser.js';\n")
        (tree / "parser.js").write_text(PARSER)


def init_in(root, monkeypatch):
    monkeypatch.chdir(root)
    return call_cli("init")


def test_init_finds_plasmos_build_folders(tmp_path, monkeypatch):
    layout(tmp_path, "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "build/chrome-mv3-prod", "firefox": "build/firefox-mv3-prod"}


def test_init_finds_a_plain_vite_build_in_dist(tmp_path, monkeypatch):
    layout(tmp_path, "dist/chrome", "dist/firefox")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "dist/chrome", "firefox": "dist/firefox"}


def test_the_same_layout_outside_build_and_dist_is_found_today(tmp_path, monkeypatch):
    """The layouts themselves are sound: under another name init finds them and writes a table."""
    layout(tmp_path, "out-plasmo/chrome-mv3-prod", "out-plasmo/firefox-mv3-prod")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "out-plasmo/chrome-mv3-prod", "firefox": "out-plasmo/firefox-mv3-prod"}


def test_a_build_in_dist_moves_the_gates_artifacts_out_of_its_way(tmp_path, monkeypatch):
    """The gate packs into dist/ and fails on anything else there: the table points it elsewhere."""
    layout(tmp_path, "dist/chrome", "dist/firefox")
    assert init_in(tmp_path, monkeypatch)[0] == 0
    gate = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]["gate"]
    assert gate["dist"] == "out/artifacts"
    layout(tmp_path / "other", "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    assert init_in(tmp_path / "other", monkeypatch)[0] == 0
    assert "dist" not in tomllib.loads((tmp_path / "other/pyproject.toml").read_text())["tool"]["extparity"]["gate"]


def test_the_gates_own_unpacked_artifacts_are_not_taken_for_trees(tmp_path, monkeypatch):
    """A gate stopped midway leaves dist/.unpacked/NAME, copies of the trees it packed (under
    whatever dist the config names): init finds the build, not those copies."""
    layout(tmp_path, "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    layout(tmp_path, "dist/.unpacked/chrome", "dist/.unpacked/firefox")
    layout(tmp_path, "out/artifacts/.unpacked/chrome", "out/artifacts/.unpacked/firefox")
    (tmp_path / "dist/.extparity-built.json").write_text("{}")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "build/chrome-mv3-prod", "firefox": "build/firefox-mv3-prod"}


def test_plasmos_development_build_beside_the_production_one_is_left_out(tmp_path, monkeypatch):
    layout(tmp_path, "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    layout(tmp_path, "build/chrome-mv3-dev", "build/firefox-mv3-dev")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "build/chrome-mv3-prod", "firefox": "build/firefox-mv3-prod"}


def test_two_builds_in_two_folders_are_still_asked_for(tmp_path, monkeypatch):
    layout(tmp_path, "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    layout(tmp_path, "dist/chrome", "dist/firefox")
    code, _, err = init_in(tmp_path, monkeypatch)
    assert code == 2 and err.startswith("extparity: need one Chrome and one Firefox manifest.json under ")
    assert "(chrome: build/chrome-mv3-prod, dist/chrome, firefox: build/firefox-mv3-prod, dist/firefox)" in err


def test_wxts_chrome_manifest_is_chromes_though_it_carries_the_gecko_id(tmp_path, monkeypatch):
    """WXT writes browser_specific_settings into both trees; only Chrome's background is a service worker."""
    layout(tmp_path, ".output/chrome-mv3", ".output/firefox-mv3")
    manifest = tmp_path / ".output/chrome-mv3/manifest.json"
    manifest.write_text(json.dumps({**CHROME, "browser_specific_settings": FIREFOX["browser_specific_settings"]}))
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": ".output/chrome-mv3", "firefox": ".output/firefox-mv3"}
