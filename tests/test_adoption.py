"""Issue 24's "done when", end to end: another team adopts extparity in a folder of its own.

A venv outside this repository gets the built wheel (with pytest and pytest-xdist, under the
constraints Debian's browsers need) and nothing of this checkout. In a copy of
`tests/extensions/shaped` (its twins made identical), `extparity init` writes the config, the
team writes the adapter and a few cases by hand, and `extparity run` and `pytest --extparity
-n 2` give one answer, in all four engines init names: green first, then with a planted
divergence (the adapter writes `2 ** -24`, which QuickJS-ng prints with 17 digits and the
browsers' engines with 16) that both report on exactly the same cells.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from support import ROOT
from support.built_wheel import build_wheel, make_venv
from support.copies import copy_shaped
from support.plugin_outcomes import OUTCOME, expected_outcomes

pytestmark = [pytest.mark.packaging, pytest.mark.browser]

ADAPTER = """\
export default async function (extractToolCalls, text, options) {
  const calls = await extractToolCalls(text, { allowedTools: new Set(options) });
  const verdict = { calls: calls.map((call) => ({ name: call.function.name, arguments: JSON.parse(call.function.arguments) })) };
  if (text.includes("PLANTED")) verdict.tiny = String(2 ** -24);
  return JSON.stringify(verdict);
}
"""
CASES = [
    {"id": "one-call", "text": "{\"name\": \"open\", \"arguments\": {\"url\": \"https://example.com\"}}",
     "options": ["open"], "expect": {"calls": [{"name": "open", "arguments": {"url": "https://example.com"}}]}},
    {"id": "two-calls", "text": "{\"name\": \"open\"}\n{\"name\": \"click\"}", "options": ["open", "click"],
     "expect": {"calls": [{"name": "open", "arguments": {}}, {"name": "click", "arguments": {}}]}},
    {"id": "not-allowed", "text": "{\"name\": \"delete_all\"}", "options": ["open"], "expect": {"calls": []}},
    {"id": "prose", "text": "Nothing to run here.", "options": ["open"], "expect": "reference"},
]
PLANTED = {"id": "planted", "text": "PLANTED", "options": ["open"], "expect": "reference"}


def case_lines(cases: list[dict]) -> str:
    return "".join(json.dumps({"fn": "extractToolCalls", "tags": ["starter"], "why": "by hand", **case}) + "\n"
                   for case in cases)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    wheel = build_wheel(tmp_path_factory.mktemp("source") / "extparity", tmp_path_factory.mktemp("wheel"))
    constraints = [line for line in (ROOT / "constraints/debian-browsers.txt").read_text().splitlines()
                   if line and not line.startswith("#")]
    return make_venv(tmp_path_factory.mktemp("team") / "venv", wheel, constraints, extras="",
                     also=("pytest>=8", "pytest-xdist>=3.6")).parent.parent


def in_venv(venv: Path, project: Path, *argv: str) -> subprocess.CompletedProcess:
    """A command of the venv, run in the team's folder with nothing of this checkout on any path."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(venv / "bin" / argv[0]), *argv[1:]], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)


def run_and_pytest(venv: Path, project: Path) -> tuple[subprocess.CompletedProcess, dict, subprocess.CompletedProcess]:
    run = in_venv(venv, project, "extparity", "run", "--json", "out/run.json")
    plugin = in_venv(venv, project, "python", "-m", "pytest", "--extparity", "-n", "2", "-p", "no:cacheprovider", "-rA")
    return run, json.loads((project / "out/run.json").read_text()), plugin


def test_a_team_adopts_it_from_the_wheel_and_run_and_the_plugin_agree(venv, tmp_path):
    project = copy_shaped(tmp_path / "their-extension", twins=True, trees_only=True)
    located = in_venv(venv, project, "python", "-c", "import extparity, importlib.util as u;"
                      "print(extparity.__file__); print(u.find_spec('toolcalls'))")
    assert located.stdout.startswith(str(venv)) and located.stdout.splitlines()[1] == "None", located.stdout

    init = in_venv(venv, project, "extparity", "init")
    assert init.returncode == 0, init.stdout + init.stderr
    assert init.stdout.splitlines()[-1].endswith("then run: extparity --config pyproject.toml run")
    (project / "extparity/adapters/extractToolCalls.js").write_text(ADAPTER)
    corpus = project / "extparity/corpus/starter.jsonl"
    corpus.write_text(case_lines(CASES))

    run, document, plugin = run_and_pytest(venv, project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == ("all 4 cases agree across quickjs-chrome, quickjs-firefox, chromium, "
                                           "firefox and meet their expectations")
    outcomes = dict((node, outcome) for outcome, node in OUTCOME.findall(plugin.stdout))
    assert plugin.returncode == 0 and outcomes == expected_outcomes(document), plugin.stdout[-3000:]
    assert len(outcomes) == 4 * 4 + 3 + 4  # a cell per engine and case, the run checks, an item per engine
    assert re.search(r"\b23 passed\b", plugin.stdout.splitlines()[-1]), plugin.stdout[-500:]

    corpus.write_text(case_lines([*CASES, PLANTED]))
    run, document, plugin = run_and_pytest(venv, project)
    assert run.returncode == 1, run.stdout + run.stderr
    (planted,) = [case for case in document["cases"] if case["id"] == "planted"]
    assert set(planted["cells"].values()) != {"pass"}
    failing = {f"pyproject.toml::{engine}::{case['id']}" for case in document["cases"]
               for engine, cell in case["cells"].items() if cell != "pass"}
    assert failing and all(node.endswith("::planted") for node in failing)
    outcomes = dict((node, outcome) for outcome, node in OUTCOME.findall(plugin.stdout))
    assert plugin.returncode == 1 and outcomes == expected_outcomes(document), plugin.stdout[-3000:]
    assert {node for node, outcome in outcomes.items() if outcome == "FAILED"} == failing
