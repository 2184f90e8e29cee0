"""JUnit files validate against Jenkins' junit-10.xsd (tests/schemas/, from jenkinsci/xunit-plugin),
the strictest schema CI publishers apply: for a passing run, and for one with failures, errors
(an engine without verdicts) and skipped cells (known deviations)."""

from __future__ import annotations

from pathlib import Path

import xmlschema

from extparity.reports import junit

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parent / "schemas" / "junit-10.xsd")
ENGINES = ["python", "quickjs-chrome", "firefox"]


def document(cells_by_case: dict[str, dict[str, str]], problems: list[str] = ()) -> dict:
    cases = [{"id": case_id, "fn": "parse", "group": "parse/basic", "file": "fixtures/parse/basic.jsonl", "line": n,
              "cells": cells, "verdict": '{"calls":[]}',
              "divergent": {name: '{"calls":[1]}' for name, cell in cells.items() if cell == "diverges"},
              "without_verdict": [name for name, cell in cells.items() if cell == "missing"],
              "notes": {name: [f"{cell} here"] for name, cell in cells.items() if cell != "pass"}}
             for n, (case_id, cells) in enumerate(cells_by_case.items(), start=1)]
    return {"schema": 2, "reference": "python", "corpus": {"files": [], "problems": []},
            "modules": {"problems": list(problems), "background_problems": []}, "known_deviation_problems": [],
            "problems": [], "summary": [{"engine": name} for name in ENGINES],
            "engines": {name: {"status": "ok", "detail": "", "versions": {"engine": name}, "module_hashes": {"a.js": "00"}}
                        for name in ENGINES},
            "cases": cases}


def test_a_passing_result_is_valid_junit_10():
    SCHEMA.validate(junit.render(document({"a": dict.fromkeys(ENGINES, "pass")})))


def test_failures_errors_and_skipped_cells_are_valid_junit_10():
    text = junit.render(document({
        "diverging": {"python": "pass", "quickjs-chrome": "diverges", "firefox": "pass"},
        "no-verdict": {"python": "pass", "quickjs-chrome": "pass", "firefox": "missing"},
        "known": {"python": "pass", "quickjs-chrome": "pass", "firefox": "known"},
    }, problems=["a.js: twins differ on disk"]))
    assert "<failure" in text and "<error" in text and "<skipped" in text
    assert "corpus line: fixtures/parse/basic.jsonl:1" in text  # where a file attribute is not allowed
    SCHEMA.validate(text)
