"""`extparity init` finds the trees where bundlers put them: Plasmo's `build/chrome-mv3-prod` and
`build/firefox-mv3-prod`, and a plain Vite build's `dist/` (one folder per browser). Tiny layouts
written here, each with one ES module both trees ship byte for byte, so that only the finding of
the trees is under test (docs/wxt.md; the export clauses bundlers emit are init's own tests)."""

from __future__ import annotations

import json
import tomllib

import pytest

from support.cli import call_cli

PARSER = "export function parseCalls(text, allowed) {\n  return JSON.stringify({ text, allowed });\n}\n"
CHROME = {"manifest_version": 3, "name": "X", "version": "1.0.0",
          "background": {"service_worker": "static/background/index.js"}}
FIREFOX = {**CHROME, "background": {"scripts": ["static/background/index.js"]},
           "browser_specific_settings": {"gecko": {"id": "x@extparity.test"}}}
# `init` skips build/ and dist/ today (its own outputs and a project's); finding a bundler's trees
# there is init's part of the work on bundles, outside this change.
PENDING = pytest.mark.xfail(strict=True, reason="init does not look in build/ or dist/ yet (commands/init.py)")


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


@PENDING
def test_init_finds_plasmos_build_folders(tmp_path, monkeypatch):
    layout(tmp_path, "build/chrome-mv3-prod", "build/firefox-mv3-prod")
    code, out, err = init_in(tmp_path, monkeypatch)
    assert code == 0, out + err
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["extparity"]
    assert table["trees"] == {"chrome": "build/chrome-mv3-prod", "firefox": "build/firefox-mv3-prod"}


@PENDING
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
