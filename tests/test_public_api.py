"""extparity.api, the library surface: typed (mypy --strict on the public modules) and the same
answers as the commands give."""

from __future__ import annotations

import subprocess
import sys

import pytest

from extparity import api

from support import ROOT
from support.cli import call_cli
from support.copies import copy_shaped

PUBLIC = ["py_src/extparity/__init__.py", "py_src/extparity/api.py", "py_src/extparity/pytest_plugin.py"]
ENGINES = ["quickjs-chrome", "quickjs-firefox", "v8-chrome"]


def test_the_public_modules_pass_mypy_strict():
    # Imported modules are analysed for their types but not reported: only these are held to
    # --strict (the rest of the package is held to mypy's defaults below).
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", *PUBLIC],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"Success: no issues found in {len(PUBLIC)} source files")


@pytest.mark.slow
def test_the_whole_package_passes_mypy():
    """Every module, at mypy's default strictness (the public ones also pass --strict above)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "py_src/extparity"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in ")


@pytest.fixture(scope="module")
def shaped(tmp_path_factory):
    """A copy of the shaped extension with identical twins, run through the API and the command."""
    root = copy_shaped(tmp_path_factory.mktemp("api") / "shaped", twins=True)
    project = api.load_project(root / "pyproject.toml")
    outcome = api.run(project, engines=ENGINES)
    code = call_cli("--config", str(root / "pyproject.toml"), "run", "--engines", ",".join(ENGINES),
                    "--json", str(root / "run.json"))[0]
    return root, project, outcome, code


def test_run_gives_the_bytes_and_the_verdict_of_extparity_run(shaped):
    root, _, outcome, code = shaped
    assert code == 0 and outcome.ok and outcome.failures == []
    api.write_result(outcome.document, root / "api.json")
    assert (root / "api.json").read_bytes() == (root / "run.json").read_bytes()
    assert api.read_result(root / "api.json") == outcome.document


def test_judge_is_the_judgement_run_applied(shaped):
    _, project, outcome, _ = shaped
    judged = api.judge(project, [r.case for r in outcome.result.results], outcome.result.runs)
    assert [r.cells for r in judged] == [r.cells for r in outcome.result.results]
    flipped = {**outcome.result.runs["quickjs-chrome"].verdicts, "one-call": '{"calls":[]}'}
    runs = {**outcome.result.runs, "quickjs-chrome": api.EngineRun(verdicts=flipped)}
    cells = {r.case.id: r.cells for r in api.judge(project, [r.case for r in outcome.result.results], runs)}
    assert cells["one-call"] == {"quickjs-chrome": "diverges", "quickjs-firefox": "pass", "v8-chrome": "pass"}


def test_behaviour_changes_names_a_call_that_now_executes(shaped):
    _, _, outcome, _ = shaped
    old = outcome.document
    new = {**old, "cases": [dict(case) for case in old["cases"]]}
    (prose,) = [case for case in new["cases"] if case["id"] == "prose-only"]
    prose["verdict"] = '{"calls":[{"name":"open","arguments":{}}]}'
    changes = api.behaviour_changes(old, new)
    assert {(c.case, c.engine, c.kind, c.detail) for c in changes} == {
        ("prose-only", engine, "now-executes", "open") for engine in ENGINES}


def test_an_unknown_engine_and_a_bad_result_file_are_one_line_errors(shaped, tmp_path):
    _, project, _, _ = shaped
    with pytest.raises(api.SelectionError, match=r"unknown engine\(s\) nosuch; choose from quickjs-chrome"):
        api.run(project, engines=["nosuch"])
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    with pytest.raises(api.ResultError, match=r"bad.json: not an extparity result"):
        api.read_result(tmp_path / "bad.json")
