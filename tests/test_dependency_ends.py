"""The package as another team installs it: the built wheel in a venv of its own, at both ends of
the dependency ranges in pyproject.toml.

The lowest end pins every runtime and engine dependency to its lower bound; the newest end lets
pip take the newest releases the ranges allow (Playwright 1.65 among them, which cannot drive
Firefox ESR 153 here). At each end the headless engines must run the bundled corpus green, and
the wheel must carry its licence and ship the harness without the bundled reference.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from support import ROOT
from support.built_wheel import build_wheel, make_venv

pytestmark = pytest.mark.packaging

HEADLESS = "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox"


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _lower_bounds() -> list[str]:
    """`name==lower` for every runtime and engine dependency: each must state its lower bound."""
    project = _project()
    pins = []
    for requirement in project["dependencies"] + project["optional-dependencies"]["engines"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9.]*)(,.*)?", requirement)
        assert match, f"{requirement}: a dependency needs a lower bound written as name>=version"
        pins.append(f"{match[1]}=={match[2]}")
    return pins


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("source") / "extparity", tmp_path_factory.mktemp("wheel"))


def _installed(python: Path, name: str) -> str:
    return subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _runs_the_headless_engines_green(python: Path, out: Path) -> None:
    # Run from a folder of its own so nothing resolves through this checkout but the config.
    result = subprocess.run(
        [str(python.parent / "extparity"), "--config", str(ROOT / "pyproject.toml"), "run",
         "--engines", HEADLESS, "--json", str(out / "run.json")],
        cwd=out, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    document = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert document["ok"] is True and len(document["cases"]) > 2000
    assert set(document["engines"]) == set(HEADLESS.split(","))
    # One version: the wheel's result and its --version say pyproject.toml's (0.1.0 in a 0.2.0 wheel once).
    version = subprocess.run([str(python.parent / "extparity"), "--version"], capture_output=True, text=True,
                             check=True, cwd=out, env={**os.environ, "PYTHONPATH": ""}).stdout.strip()
    assert document["extparity"] == _project()["version"] and version == f"extparity {_project()['version']}"


def _ships_the_harness_only_with_its_licence(python: Path) -> None:
    probe = ("import importlib.metadata as m, importlib.util as u, extparity;"
             "print(m.metadata('extparity')['License-Expression']);"
             "print(u.find_spec('toolcalls') is None);"
             "print(sorted(f.name for f in m.files('extparity') if 'licenses' in str(f)))")
    lines = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True,
                           cwd="/", env={**os.environ, "PYTHONPATH": ""}).stdout.splitlines()
    assert lines == ["Apache-2.0", "True", "['LICENSE']"]


def test_the_wheel_at_the_lower_bounds_runs_the_headless_engines(wheel, tmp_path):
    pins = _lower_bounds()
    python = make_venv(tmp_path / "venv", wheel, pins)
    for pin in pins:
        name, version = pin.split("==")
        assert Version(_installed(python, name)) == Version(version), pin
    _ships_the_harness_only_with_its_licence(python)
    _runs_the_headless_engines_green(python, tmp_path)


def test_the_wheel_with_the_newest_releases_runs_the_headless_engines(wheel, tmp_path):
    python = make_venv(tmp_path / "venv", wheel, [])
    _ships_the_harness_only_with_its_licence(python)
    _runs_the_headless_engines_green(python, tmp_path)


def test_the_newest_playwright_is_refused_for_debians_firefox_in_one_line(wheel, tmp_path):
    """Playwright 1.65 cannot drive Firefox ESR 153 over BiDi: without the refusal its sessions
    crash minutes into a run. The firefox kind says so before it launches anything."""
    python = make_venv(tmp_path / "venv", wheel, [])
    assert tuple(map(int, _installed(python, "playwright").split(".")[:2])) >= (1, 65)
    result = subprocess.run(
        [str(python.parent / "extparity"), "--config", str(ROOT / "pyproject.toml"), "run", "--engines", "firefox"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 1
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "cannot drive Firefox" in line]
    assert lines and all("playwright<1.65" in line for line in lines), result.stdout[-2000:]


def _readme_install_line() -> list[str]:
    """The arguments of the README's `pip install` line for adopters, as written there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Install it for your extension"):]
    (line,) = [row for row in section[:section.index("\n## ")].splitlines() if "pip install" in row]
    return shlex.split(line.split("#", 1)[0])[2:]


@pytest.mark.browser
def test_the_readmes_install_line_gives_a_venv_that_runs_every_engine(wheel, tmp_path):
    """An adopter pastes the README's line into a fresh venv (the wheel standing in for the
    package's name): every engine of the bundled project, the browsers included, runs green."""
    arguments = _readme_install_line()
    assert arguments[0] == "extparity[engines]", arguments
    python = make_venv(tmp_path / "venv", wheel, [], extras="engines", also=tuple(arguments[1:]))
    result = subprocess.run(
        [str(python.parent / "extparity"), "--config", str(ROOT / "pyproject.toml"), "run", "--json", "run.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert {"chromium", "firefox"} <= set(document["engines"]) and len(document["engines"]) == 9
