"""The pieces every report shares, on inputs written down here: the byte-exact verdict layout
and diff, reading verdicts back from a result, and JUnit text that XML cannot carry."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from junitparser import JUnitXml

from extparity.reports import html_report, junit
from extparity.results import verdict_diff
from extparity.results.read import judged_against, odd_one_out, verdicts
from support.result_schema import check_result

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_in(item)]]
    return []


@given(JSON_VALUES)
def test_the_layout_keeps_every_byte_of_a_canonical_verdict(value):
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    lines = verdict_diff.lines(text)
    assert "".join(line.lstrip(" ") for line in lines) == text
    for string in strings_in(value):  # a string is never broken across lines
        assert any(json.dumps(string, ensure_ascii=False) in line for line in lines)


def test_structure_inside_strings_is_text():
    assert verdict_diff.lines('{"a":"x, {[\\"]}","b":[1,2]}') == ['{', '  "a":"x, {[\\"]}",', '  "b":[1,2]', '}']


@given(JSON_VALUES, JSON_VALUES)
def test_aligned_rows_hold_both_verdicts_in_order(left, right):
    a, b = (json.dumps(v, separators=(",", ":")) for v in (left, right))
    rows = verdict_diff.aligned(a, b)
    assert [row.left for row in rows if row.left is not None] == verdict_diff.lines(a)
    assert [row.right for row in rows if row.right is not None] == verdict_diff.lines(b)
    assert all((row.op == "same") == (row.left == row.right) for row in rows)


def test_numbers_that_parse_alike_still_differ_in_the_diff():
    rows = verdict_diff.aligned('{"n":1e-7}', '{"n":1e-07}')
    assert [(row.op, row.left, row.right) for row in rows if row.op != "same"] == [("changed", '  "n":1e-7', '  "n":1e-07')]


def test_side_by_side_wraps_long_lines_instead_of_cutting_them():
    left, right = json.dumps({"a": "x" * 70 + "END"}), json.dumps({"a": "y" * 70 + "FIN"})
    shown = "\n".join(verdict_diff.side_by_side(left, right, width=30))
    assert "END" in shown and "FIN" in shown
    assert all(len(line) <= 30 + 3 + 30 for line in shown.splitlines())


def result_with(case: dict, engines=("python", "quickjs-chrome", "quickjs-firefox"), reference="python") -> dict:
    """A minimal, schema-valid result holding one case."""
    document = {
        "extparity": "0", "schema": 2, "ok": False, "reference": reference,
        "corpus": {"files": ["c.jsonl"], "cases": 1, "problems": [], "tags": {"t": "a tag"}},
        "entries": {"parse": {"args": ["input", "allowed"], "executes": "calls", "items": {"calls": "name"}}},
        "summary": [{"engine": e, "status": "ok", "cases": 1, "agreeing": 0, "diverging": 0, "unexpected": 0,
                     "failed": 0, "known": 0} for e in engines],
        "engines": {e: {"kind": "quickjs", "tree": None, "status": "ok", "detail": "", "versions": {}, "module_hashes": {}}
                    for e in engines},
        "modules": {"on_disk": {}, "background": {}, "adapters": {}, "problems": [], "background_problems": []},
        "known_deviation_problems": [], "problems": [],
        "cases": [{"id": "c", "fn": "parse", "group": "g", "file": "c.jsonl", "line": 1,
                   "args": {"allowed": [], "input": "x"}, "expect": "reference", "tags": ["t"], "why": "w", **case}],
    }
    return check_result(document)


def test_verdicts_are_read_back_per_engine_and_failed_engines_have_none():
    document = result_with({"cells": {"python": "pass", "quickjs-chrome": "error", "quickjs-firefox": "diverges"},
                            "verdict": "A", "divergent": {"quickjs-firefox": "B"}, "without_verdict": ["quickjs-chrome"],
                            "notes": {"quickjs-chrome": ["TypeError: x\x00"], "quickjs-firefox": ["differs from python"]}})
    case = document["cases"][0]
    assert verdicts(case) == {"python": "A", "quickjs-firefox": "B"}
    assert odd_one_out(case) is None  # three different outcomes: nobody is the odd one
    assert judged_against(document, case) == ("python", "A")


def test_without_a_baseline_diffs_are_against_the_first_group():
    document = result_with({"cells": {"quickjs-chrome": "diverges", "quickjs-firefox": "diverges"},
                            "divergent": {"quickjs-chrome": "A", "quickjs-firefox": "B"},
                            "groups": [["quickjs-chrome"], ["quickjs-firefox"]]},
                           engines=("quickjs-chrome", "quickjs-firefox"), reference=None)
    assert judged_against(document, document["cases"][0]) == ("quickjs-chrome", "A")
    detail = html_report.page_data(document)["details"][0]
    assert detail["against"] == ["quickjs-chrome", 0] and list(detail["diffs"]) == ["1"]


def test_junit_carries_text_xml_cannot_hold_as_escapes():
    document = result_with({"cells": {"python": "pass", "quickjs-chrome": "error", "quickjs-firefox": "diverges"},
                            "verdict": '{"s":"\ud800"}', "divergent": {"quickjs-firefox": '{"s":"\x01"}'},
                            "without_verdict": ["quickjs-chrome"],
                            "notes": {"quickjs-chrome": ["TypeError: \x00 in \ud800"], "quickjs-firefox": ["differs"]}})
    text = junit.render(document)
    text.encode("utf-8")  # no lone surrogate left
    suites = {suite.name: suite for suite in JUnitXml.fromstring(text.encode("utf-8"))}
    chrome = next(iter(suites["quickjs-chrome"]))
    assert chrome.result[0].message == "TypeError: \\u0000 in \\ud800"
    firefox = next(iter(suites["quickjs-firefox"]))
    assert '+  "s":"\\u0001"' in firefox.result[0].text
