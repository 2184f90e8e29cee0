"""Which browser a browser engine launches without an ``executable`` key: Playwright's own build
when it is installed, Debian's otherwise, and the run's engine description says which.

This machine cannot download Playwright's builds, so the test installs "builds" the way
Playwright lays them out (``PLAYWRIGHT_BROWSERS_PATH/chromium-REVISION/chrome-linux64/chrome``,
``firefox-REVISION/firefox/firefox``, the revisions from the installed Playwright's
``browsers.json``) as links to Debian's real browsers, and runs real Chromium and Firefox
through them.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from extparity.engines.base import EngineStartError
from extparity.engines.executables import LAYOUT, _revision, choose_executable
from extparity.engines.kinds.firefox import refuse_known_broken_pair

from support.fake_extension import make_tree, write_project

DEBIAN = {"chromium": "/usr/bin/chromium", "firefox": "/usr/lib/firefox-esr/firefox-esr"}


def install_builds(registry: Path, revision: dict[str, str] | None = None) -> dict[str, Path]:
    """Playwright-shaped installs of both browsers in ``registry``, linked to Debian's binaries."""
    builds = {}
    for browser, target in DEBIAN.items():
        executable = registry.joinpath(f"{browser}-{(revision or {}).get(browser) or _revision(browser)}",
                                       *LAYOUT[(browser, platform.machine())])
        executable.parent.mkdir(parents=True)
        executable.symlink_to(target)
        builds[browser] = executable
    return builds


def test_a_playwright_build_is_chosen_over_debians_and_the_config_over_both(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    assert choose_executable("chromium", None, "/usr/bin/chromium") == ("/usr/bin/chromium", "debian")
    builds = install_builds(tmp_path)
    assert choose_executable("chromium", None, "/usr/bin/chromium") == (str(builds["chromium"]), "playwright")
    assert choose_executable("firefox", None, "/usr/bin/firefox-esr") == (str(builds["firefox"]), "playwright")
    assert choose_executable("firefox", "/opt/ff/firefox", "/usr/bin/firefox-esr") == ("/opt/ff/firefox", "config")


def test_a_build_of_another_playwright_release_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    install_builds(tmp_path, {"chromium": "1", "firefox": "1"})
    assert choose_executable("chromium", None, "/usr/bin/chromium") == ("/usr/bin/chromium", "debian")


def test_the_refusal_of_playwright_1_65_with_firefox_153_holds_for_a_build_found_this_way(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    install_builds(tmp_path)
    found, source = choose_executable("firefox", None, "/usr/bin/firefox-esr")
    assert source == "playwright"
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.65.2" if name == "playwright" else real(name))
    with pytest.raises(EngineStartError, match=r"Playwright 1\.65\.2 cannot drive Firefox 153 over WebDriver BiDi"):
        refuse_known_broken_pair(found)


@pytest.mark.browser
def test_real_browsers_run_from_playwright_builds_and_the_description_says_so(tmp_path):
    builds = install_builds(tmp_path / "ms-playwright")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tags.json").write_text('{"t": "test"}')
    (corpus / "c.jsonl").write_text("".join(json.dumps(
        {"id": f"parse-{i}", "fn": "parse", "input": text, "allowed": [], "expect": "reference", "tags": ["t"],
         "why": "w"}) + "\n" for i, text in enumerate(["plain", "two words"])))
    project = write_project(tmp_path, {"chrome": make_tree(tmp_path / "chrome", "chrome"),
                                       "firefox": make_tree(tmp_path / "firefox", "firefox")}, {
        "quickjs-chrome": {"kind": "quickjs", "tree": "chrome"},
        "chromium": {"kind": "chromium", "tree": "chrome"},
        "firefox": {"kind": "firefox", "tree": "firefox"},
    })
    done = subprocess.run([sys.executable, "-m", "extparity.cli", "--config", str(project.path), "run",
                           "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "ms-playwright")})
    assert done.returncode == 0, done.stdout + done.stderr
    engines = json.loads((tmp_path / "r.json").read_text())["engines"]
    for browser in ("chromium", "firefox"):
        versions = engines[browser]["versions"]
        assert (versions["executable"], versions["executable_source"]) == (str(builds[browser]), "playwright")
        assert versions["browser_version"]  # the browser that answered is the one started from there
    assert "executable_source" not in engines["quickjs-chrome"]["versions"]
