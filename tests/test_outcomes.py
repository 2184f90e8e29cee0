"""One vocabulary of cell outcomes, and one rule for a passing run, read by every consumer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from extparity.reports import html_report
from extparity.results.build import document_ok
from extparity.results.read import SCHEMA_FILE
from extparity.run.outcomes import NO_VERDICT, PASSES, Outcome, run_passes

PAGE = Path(html_report.PAGE_DIR)


def test_the_schema_names_exactly_the_outcomes():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$defs"]["cell"]["enum"] == [outcome.value for outcome in Outcome]


def test_passes_and_no_verdict_are_disjoint_outcomes():
    assert PASSES == {"pass", "known"}
    assert NO_VERDICT == {"error", "timeout", "crash", "missing"}
    assert not PASSES & NO_VERDICT


def test_the_page_reads_the_vocabulary_from_its_data_and_colours_every_outcome():
    script = (PAGE / "report.js").read_text(encoding="utf-8")
    spelled = [word for word in (o.value for o in Outcome) if re.search(rf"[\"']{re.escape(word)}[\"']", script)]
    assert spelled == [], f"report.js spells outcomes itself: {spelled}"
    style = (PAGE / "report.css").read_text(encoding="utf-8")
    assert [o.value for o in Outcome if f".k-{o.value} " not in style] == []
    data = html_report.page_data({"cases": [], "engines": {}, "summary": [], "modules": {}, "corpus": {}})
    assert list(data["cells"]) == [o.value for o in Outcome] and data["passes"] == ["known", "pass"]


def document(cells: list[dict], **changes) -> dict:
    doc = {"cases": [{"cells": row} for row in cells], "engines": {"a": {"status": "ok"}},
           "corpus": {"problems": []}, "modules": {"problems": [], "background_problems": []},
           "known_deviation_problems": [], "problems": []}
    for key, value in changes.items():
        if key == "background_problems":
            doc["modules"]["background_problems"] = value
        elif key == "status":
            doc["engines"]["a"]["status"] = value
        else:
            doc[key] = value
    return doc


@pytest.mark.parametrize("doc, passes", [
    (document([{"a": "pass"}, {"a": "known"}]), True),
    (document([]), False),  # zero cases prove nothing
    (document([{"a": "unexpected-pass"}]), False),  # a stale known deviation
    (document([{"a": "missing"}]), False),
    (document([{"a": "pass"}], status="crashed"), False),
    (document([{"a": "pass"}], problems=["corpus: bad line"]), False),
    (document([{"a": "pass"}], background_problems=["firefox-background loaded other scripts"]), False),
])
def test_a_result_passes_by_the_one_rule(doc, passes):
    assert document_ok(doc) is passes
    problems = [doc["corpus"]["problems"], doc["modules"]["problems"], doc["modules"]["background_problems"],
                doc["known_deviation_problems"], doc["problems"]]
    assert run_passes([case["cells"] for case in doc["cases"]], [e["status"] for e in doc["engines"].values()],
                      problems) is passes
