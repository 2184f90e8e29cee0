"""A divergence only browsers have, saved with what the browsers showed of it (`--save-failures`).

A throwaway copy of the subject (support.run_copy's `Project`) gets a rule in its verified parser
that runs only where a document exists (an extension page in Chromium, the add-on's background
page in Firefox), and loses one rule in its Firefox twin (a divergence the headless
quickjs-firefox shares with the firefox engine). The repro folder must then hold, beside the
browser-only case, a Playwright trace, a screenshot and the console of Chromium's rerun, and
Firefox's console saying what Firefox cannot show; the other failing case, which a headless
engine has too, gets nothing of the kind. A browser that cannot start for the rerun is one line,
and the repro's other files are written.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import replace

import pytest

from extparity import api
from extparity.project.config import load_project
from extparity.results import repro
from extparity.run import evidence

from support import ROOT
from support.cli import call_cli
from support.run_copy import (BROWSER_ONLY_CASE, Project, browser_only_case, drop_comma_rule, parse_case,
                              plant_browser_only_rule)

ENGINES = "python,quickjs-chrome,quickjs-firefox,chromium,firefox"
HEADLESS_TOO = "parse-trailing-comma"  # diverges in quickjs-firefox and firefox
PLANTED_MESSAGE = "planted browser-only rule dropped the calls of"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(project, outcome, repro folder) of the planted run."""
    lines = [parse_case("parse-own-line"), parse_case(HEADLESS_TOO), browser_only_case()]
    project = Project(tmp_path_factory.mktemp("browser-only"), parse_lines=lines, repair_lines=[])
    for tree in ("chrome", "firefox"):
        plant_browser_only_rule(project.module(tree))
    drop_comma_rule(project.module("firefox"))
    folder = project.root / "repro"
    outcome = project.run(ENGINES, "result.json", "--save-failures", str(folder))
    return project, outcome, folder


@pytest.mark.browser
def test_the_plant_fails_only_in_the_browsers_and_the_other_case_also_headless(planted):
    _, outcome, _ = planted
    assert outcome.code == 1
    failing = {case["id"]: sorted(e for e, cell in case["cells"].items() if cell != "pass")
               for case in outcome.json["cases"]}
    assert failing == {"parse-own-line": [], HEADLESS_TOO: ["firefox", "quickjs-firefox"],
                       BROWSER_ONLY_CASE: ["chromium", "firefox"]}


@pytest.mark.browser
def test_chromium_leaves_a_trace_a_screenshot_and_its_console_naming_the_case(planted):
    _, _, folder = planted
    trace = folder / f"{BROWSER_ONLY_CASE}.chromium.trace.zip"
    with zipfile.ZipFile(trace) as archive:
        events = [json.loads(line) for line in archive.read("trace.trace").decode().splitlines()]
    assert events[0]["title"] == BROWSER_ONLY_CASE  # the trace's chunk is the case's
    assert any(e["type"] == "console" and PLANTED_MESSAGE in e["text"] for e in events)
    assert any(e.get("method") == "tracingGroup" and e["title"] == f"run case {BROWSER_ONLY_CASE}"
               for e in events)  # the run of the case, marked
    screenshot = (folder / f"{BROWSER_ONLY_CASE}.chromium.png").read_bytes()
    assert screenshot.startswith(b"\x89PNG") and len(screenshot) > 1000
    console = (folder / f"{BROWSER_ONLY_CASE}.chromium.console.txt").read_text()
    assert console.splitlines()[0] == f"console of engine chromium while it ran case {BROWSER_ONLY_CASE} again, alone"
    assert f"page warning: {PLANTED_MESSAGE}" in console and "(src/agent/tool-call-parser.js:" in console


@pytest.mark.browser
def test_firefox_says_what_it_cannot_show(planted):
    _, _, folder = planted
    console = (folder / f"{BROWSER_ONLY_CASE}.firefox.console.txt").read_text()
    assert BROWSER_ONLY_CASE in console.splitlines()[0]
    assert "not recorded: trace: Playwright records no trace of the add-on's background" in console
    assert "not recorded: screenshot: no page shows this engine's cases in Firefox" in console
    assert not list(folder.glob(f"{BROWSER_ONLY_CASE}.firefox.*.zip")) + list(folder.glob("*.firefox.png"))


@pytest.mark.browser
def test_the_verdicts_file_names_every_file_and_the_reruns_verdict(planted):
    _, _, folder = planted
    record = json.loads((folder / f"{BROWSER_ONLY_CASE}.verdicts.json").read_text())
    seen = record["browser_evidence"]
    assert sorted(seen) == ["chromium", "firefox"]
    assert seen["chromium"]["files"] == [f"{BROWSER_ONLY_CASE}.chromium.{what}" for what in ("console.txt", "png", "trace.zip")]
    assert seen["firefox"]["files"] == [f"{BROWSER_ONLY_CASE}.firefox.console.txt"]
    for engine, entry in seen.items():
        assert entry["rerun"] == "the same verdict as in the run"
        assert entry["rerun_verdict"] == record["verdicts"][engine]
        assert all((folder / name).stat().st_size > 0 for name in entry["files"])
    listed = {name for entry in seen.values() for name in entry["files"]}
    assert {p.name for p in folder.iterdir() if p.name.startswith(f"{BROWSER_ONLY_CASE}.")} == listed | {
        f"{BROWSER_ONLY_CASE}.jsonl", f"{BROWSER_ONLY_CASE}.verdicts.json"}


@pytest.mark.browser
def test_a_divergence_a_headless_engine_shares_gets_no_browser_evidence(planted):
    _, outcome, folder = planted
    assert "browser_evidence" not in json.loads((folder / f"{HEADLESS_TOO}.verdicts.json").read_text())
    assert sorted(p.name for p in folder.glob(f"{HEADLESS_TOO}.*")) == [f"{HEADLESS_TOO}.jsonl", f"{HEADLESS_TOO}.verdicts.json"]
    assert outcome.err.count("browser evidence: running") == 2  # chromium and firefox, for the plant alone


@pytest.mark.browser
def test_the_folder_with_its_evidence_still_reruns_as_a_corpus(planted):
    project, _, folder = planted
    rerun = project.run("python,quickjs-firefox", "rerun.json", "--corpus", str(folder))
    assert rerun.code == 1
    assert {case["id"] for case in rerun.json["cases"]} == {HEADLESS_TOO, BROWSER_ONLY_CASE}


@pytest.fixture(scope="module")
def chromium_run(planted):
    """The planted copy through the API with one browser: the plant fails in chromium alone, the
    other divergence in quickjs-firefox alone."""
    project, _, _ = planted
    return api.run(load_project(project.config), engines=["python", "quickjs-firefox", "chromium"])


@pytest.mark.browser
def test_only_a_failure_of_browsers_alone_that_ran_is_run_again(chromium_run):
    project, result = chromium_run.project, chromium_run.result
    assert evidence.browser_only(project, result) == {BROWSER_ONLY_CASE: ["chromium"]}
    crashed = replace(result, runs={**result.runs, "chromium": replace(result.runs["chromium"], status="crashed")})
    logged: list[str] = []
    assert evidence.browser_only(project, crashed) == {}
    assert evidence.record(project, crashed, 10.0, logged.append) == ({}, [])
    assert logged == []


@pytest.mark.browser
def test_a_browser_that_cannot_start_for_the_trace_is_one_line_and_the_repro_is_kept(planted, chromium_run, tmp_path):
    project, _, _ = planted
    config = project.root / "pyproject.toml"
    text = config.read_text()
    assert text.count('executable = "/usr/bin/chromium"') == 1
    config.write_text(text.replace('executable = "/usr/bin/chromium"', 'executable = "/nonexistent/chromium"'))
    try:
        broken = load_project(str(config))
    finally:
        config.write_text(text)
    logged: list[str] = []
    seen, problems = evidence.record(broken, chromium_run.result, 10.0, logged.append)
    assert problems == ["browser evidence: chromium: the browser did not start for the trace: "
                        "browser not found: /nonexistent/chromium"]
    folder = tmp_path / "repro"
    assert repro.save_failures(chromium_run.document, folder, seen) == 2
    record = json.loads((folder / f"{BROWSER_ONLY_CASE}.verdicts.json").read_text())
    assert record["browser_evidence"] == {"chromium": {
        "files": [], "rerun": "not run again", "rerun_verdict": None, "rerun_failure": None,
        "not_recorded": ["the browser did not start for the trace: browser not found: /nonexistent/chromium"]}}
    assert (folder / f"{BROWSER_ONLY_CASE}.jsonl").is_file() and (folder / f"{HEADLESS_TOO}.jsonl").is_file()


@pytest.mark.browser
@pytest.mark.gate
def test_the_gate_saves_the_evidence_of_its_message_path_too(planted):
    """The gate runs the packed artifacts, unpacked only while it runs, and the background twins:
    Firefox's background page has a document (the plant fails there), Chromium's service worker
    none (it passes)."""
    project, _, _ = planted
    shutil.copytree(ROOT / "adapters", project.root / "adapters", dirs_exist_ok=True)
    folder = project.root / "gate-repro"
    code, _, err = call_cli("--config", project.config, "gate", "--only", "parity", "--save-failures", str(folder))
    assert code == 1
    record = json.loads((folder / f"{BROWSER_ONLY_CASE}.verdicts.json").read_text())
    assert sorted(record["browser_evidence"]) == ["chromium", "firefox", "firefox-background"]
    assert "did not start" not in err
    for entry in record["browser_evidence"].values():
        assert entry["rerun"] == "the same verdict as in the run"
        assert all((folder / name).stat().st_size > 0 for name in entry["files"])
    assert (folder / f"{BROWSER_ONLY_CASE}.chromium.trace.zip").is_file()
    assert "browser_evidence" not in json.loads((folder / f"{HEADLESS_TOO}.verdicts.json").read_text())
