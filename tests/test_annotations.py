"""GitHub annotations (`--annotations PATH`, `-` for stdout): one `::error` per failing case with
its corpus file and line, one per run-level problem and failed gate check, escaped as GitHub's
workflow commands require, and none for a passing result."""

from __future__ import annotations

import json

from extparity.reports.annotations import github

from support.cli import call_cli

ENGINES = ["python", "quickjs-chrome", "firefox"]


def document(cases: list[dict], **extra) -> dict:
    base = {"schema": 2, "reference": "python", "corpus": {"files": ["fixtures/a.jsonl"], "problems": []},
            "modules": {"problems": [], "background_problems": []}, "known_deviation_problems": [], "problems": [],
            "engines": {name: {"status": "ok", "detail": ""} for name in ENGINES},
            "summary": [{"engine": name} for name in ENGINES], "cases": cases}
    base.update(extra)
    return base


def case(case_id: str, line: int, **cells) -> dict:
    return {"id": case_id, "file": "fixtures/a.jsonl", "line": line, "cells": {name: cells.get(name, "pass") for name in ENGINES},
            "notes": {name: [f"why {name}, 100%:\nsecond line"] for name in cells}}


def test_a_failing_case_is_one_error_at_its_corpus_line_naming_every_failing_engine():
    text = github(document([case("ok-case", 1), case("bad,case", 7, firefox="diverges", **{"quickjs-chrome": "timeout"}),
                            case("known-case", 9, firefox="known")]))
    assert text == ("::error file=fixtures/a.jsonl,line=7,title=extparity%3A bad%2Ccase::"
                    "quickjs-chrome timeout: why quickjs-chrome, 100%25:%0Asecond line; "
                    "firefox diverges: why firefox, 100%25:%0Asecond line\n")


def test_run_level_problems_failed_engines_and_failed_gate_checks_are_errors_without_a_file():
    failing = document([case("c", 1)], problems=["corpus: fixtures/a.jsonl:3: not JSON"],
                       gate={"checks": [{"name": "trees", "ok": False, "line": "x.js: differs"},
                                        {"name": "release", "ok": True, "line": "0.1.0"}]})
    failing["engines"]["firefox"] = {"status": "crashed", "detail": "no browser"}
    assert github(failing).splitlines() == [
        "::error title=extparity gate%3A trees::x.js: differs",
        "::error title=extparity run::corpus: fixtures/a.jsonl:3: not JSON",
        "::error title=extparity engine firefox::firefox: crashed: no browser",
    ]


def test_a_passing_result_has_no_annotations():
    assert github(document([case("c", 1), case("d", 2)])) == ""


def test_report_writes_annotations_of_a_saved_result_to_stdout(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document([case("bad", 4, firefox="unexpected")])), encoding="utf-8")
    code, out, err = call_cli("report", str(path), "--annotations", "-")
    assert code == 0, err
    assert out.startswith("::error file=fixtures/a.jsonl,line=4,title=extparity%3A bad::firefox unexpected")
    assert not (tmp_path / "-").exists()
