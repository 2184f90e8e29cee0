"""`extparity compare` and `run --baseline`: which verdicts a release changed, in the subject's terms.

End to end on a throwaway copy of the subject: a run of the clean copy, then the comma rule
removed from both twins and a second run. The comparison must list exactly the cases the rule
decides, for exactly the engines that load the twins, and say how (a call no longer runs, a
rejection reason appeared). Read the other way round, the same change is a call that now
runs: the kind `--fail-on-new-calls` stops unless an acknowledgement (data, like known
deviations) covers it. `explain` itself is then held to its cases with hand-written verdicts.
"""

from __future__ import annotations

import json

import pytest

from extparity.results.compare import (CHANGED_CALL, CHANGED_ITEMS, CHANGED_VERDICT, NO_LONGER_EXECUTES, NOW_EXECUTES,
                               behaviour_changes, explain)

from support.cli import call_cli
from support.run_copy import COMMA_CASES, QJS, Project, drop_comma_rule

JS = ["quickjs-chrome", "quickjs-firefox"]
PARSE = {"args": ["input", "allowed"], "executes": "calls", "items": {"calls": "name", "rejected": "reason"}}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """(project, old result path, new result path): before and after the rule change."""
    project = Project(tmp_path_factory.mktemp("compare"))
    old = project.run(QJS, "old.json")
    assert old.code == 0, old.err
    for tree in ("chrome", "firefox"):
        drop_comma_rule(project.module(tree))
    new = project.run(QJS, "new.json", "--baseline", str(old.path))
    return project, old, new


def test_compare_lists_exactly_the_cases_the_rule_changed(two_runs):
    _, old, new = two_runs
    changes = behaviour_changes(old.json, new.json)
    assert {(c.case, c.engine) for c in changes} == {(case, engine) for case in COMMA_CASES for engine in JS}
    by_case = {(c.case, c.engine, c.kind): c.detail for c in changes}
    assert by_case[("parse-trailing-comma", "quickjs-chrome", NO_LONGER_EXECUTES)] == "click"
    assert by_case[("parse-trailing-comma-spaced", "quickjs-firefox", NO_LONGER_EXECUTES)] == "read_page"
    assert by_case[("parse-trailing-comma", "quickjs-firefox", CHANGED_ITEMS)] == 'rejected: [] -> ["not-own-line"]'
    assert {c.kind for c in changes} == {NO_LONGER_EXECUTES, CHANGED_ITEMS}


def test_the_compare_command_prints_one_line_per_case_and_change(two_runs):
    _, old, new = two_runs
    code, out, err = call_cli("compare", str(old.path), str(new.path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"behaviour changes from {old.path} to {new.path}: 8 in 2 cases"
    assert sorted(lines[1:]) == sorted(
        f"  {case} [quickjs-chrome, quickjs-firefox] {kind}" for case, kind in [
            ("parse-trailing-comma", "no-longer-executes: click"),
            ("parse-trailing-comma", 'changed-items: rejected: [] -> ["not-own-line"]'),
            ("parse-trailing-comma-spaced", "no-longer-executes: read_page"),
            ("parse-trailing-comma-spaced", 'changed-items: rejected: [] -> ["not-own-line"]')])


def test_run_with_a_baseline_prints_the_same_changes(two_runs):
    _, old, new = two_runs
    assert f"behaviour changes from {old.path} to this run: 8 in 2 cases" in new.out
    assert "  parse-trailing-comma [quickjs-chrome, quickjs-firefox] no-longer-executes: click" in new.out


def test_the_reverse_comparison_is_a_new_call_and_the_gate_option_fails_on_it(two_runs):
    _, old, new = two_runs
    changes = [c for c in behaviour_changes(new.json, old.json) if c.kind == NOW_EXECUTES]
    assert {(c.case, c.engine, c.detail) for c in changes} == {
        ("parse-trailing-comma", e, "click") for e in JS} | {("parse-trailing-comma-spaced", e, "read_page") for e in JS}
    code, out, err = call_cli("compare", str(new.path), str(old.path), "--fail-on-new-calls")
    assert code == 1
    failed = err.split("FAILED:\n")[1].splitlines()
    assert sorted(line.strip() for line in failed) == [
        "new call not acknowledged: parse-trailing-comma [quickjs-chrome, quickjs-firefox] now-executes: click",
        "new call not acknowledged: parse-trailing-comma-spaced [quickjs-chrome, quickjs-firefox] now-executes: read_page"]
    code, _, _ = call_cli("compare", str(old.path), str(new.path), "--fail-on-new-calls")
    assert code == 0  # calls that stopped running are listed, not a failure


def acknowledgement(case: str, engines: list[str]) -> dict:
    return {"case": case, "engines": engines, "reason": "the comma rule was relaxed on purpose",
            "link": "https://example.invalid/release-notes"}


def test_acknowledged_new_calls_pass_and_a_stale_acknowledgement_fails(two_runs, tmp_path):
    project, old, new = two_runs
    acks = tmp_path / "acknowledged.json"
    acks.write_text(json.dumps([acknowledgement(case, JS) for case in sorted(COMMA_CASES)]))
    code, out, err = call_cli("compare", str(new.path), str(old.path), "--fail-on-new-calls", "--acknowledged", str(acks))
    assert code == 0, err
    assert out.splitlines()[-1] == "no unacknowledged new calls"
    acks.write_text(json.dumps([acknowledgement(case, JS) for case in sorted(COMMA_CASES)]
                               + [acknowledgement("parse-tagged", ["quickjs-chrome"])]))
    code, _, err = call_cli("compare", str(new.path), str(old.path), "--fail-on-new-calls", "--acknowledged", str(acks))
    assert code == 1
    assert "acknowledged: parse-tagged [quickjs-chrome]: acknowledged, but it executes no new call (remove the entry)" in err
    acks.write_text(json.dumps([acknowledgement("parse-trailing-comma", JS)]))
    code, _, err = call_cli("compare", str(new.path), str(old.path), "--fail-on-new-calls", "--acknowledged", str(acks))
    assert code == 1 and "parse-trailing-comma-spaced [quickjs-chrome, quickjs-firefox] now-executes" in err
    acks.write_text(json.dumps([{"case": "parse-trailing-comma", "engines": JS, "reason": "r"}]))
    code, _, err = call_cli("compare", str(new.path), str(old.path), "--fail-on-new-calls", "--acknowledged", str(acks))
    assert code == 1 and "acknowledged: acknowledged.json[0]: needs case, engines (a non-empty list), reason and link" in err


def test_an_engine_without_verdicts_cannot_pass_the_gate(tmp_path):
    project = Project(tmp_path, browsers={"firefox": "/nonexistent/firefox"})
    first = project.run("python,quickjs-chrome,firefox", "first.json")
    second = project.run("python,quickjs-chrome,firefox", "second.json")
    code, out, err = call_cli("compare", str(first.path), str(second.path), "--fail-on-new-calls")
    assert code == 1
    cases = len(first.json["cases"])
    assert f"not compared: firefox: no verdict in NEW: {cases} cases not compared" in err
    assert "0 in 0 cases" in out


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"), ('{"schema": 1, "cases": []}', "result schema 1, this extparity reads schema 2"),
    ("[]", "not an extparity result")])
def test_an_unreadable_result_is_a_one_line_usage_error(two_runs, tmp_path, content, message):
    _, old, _ = two_runs
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, err = call_cli("compare", str(old.path), str(bad))
    assert code == 2 and out == ""
    assert err.startswith(f"extparity: {bad}: ") and message in err and len(err.splitlines()) == 1


# ------------------------------------------------------------------ explain, verdict by verdict

def verdict(calls=(), rejected=(), error=None) -> str:
    return json.dumps({"calls": list(calls), "error": error, "rejected": list(rejected)}, separators=(",", ":"))


def call(name, **arguments) -> dict:
    return {"arguments": arguments, "format": "bare", "name": name, "span": [0, 10]}


def test_a_call_with_other_arguments_is_a_changed_call_not_a_new_one():
    found = explain(verdict([call("click", selector="#a")]), verdict([call("click", selector="#b")]), PARSE)
    assert found == [(CHANGED_CALL, 'click: arguments: {"selector": "#a"} -> {"selector": "#b"}')]


def test_calls_are_matched_by_name_and_occurrence_not_position():
    old = verdict([call("navigate"), call("click"), call("click", n=2)])
    new = verdict([call("read_page"), call("navigate"), call("click"), call("click", n=2), call("click", n=3)])
    assert explain(old, new, PARSE) == [(NOW_EXECUTES, "read_page"), (NOW_EXECUTES, "click (#3)")]


def test_only_the_order_of_calls_changing_is_a_changed_verdict():
    found = explain(verdict([call("a"), call("b")]), verdict([call("b"), call("a")]), PARSE)
    assert [kind for kind, _ in found] == [CHANGED_VERDICT] and found[0][1].startswith("calls: ")


def test_what_executes_comes_from_the_config_not_from_the_name_calls():
    entry = {**PARSE, "executes": None}
    found = explain(verdict([]), verdict([call("click")]), entry)
    assert [kind for kind, _ in found] == [CHANGED_ITEMS] and found[0][1] == 'calls: [] -> ["click"]'
    runs = {"args": ["text"], "executes": "run", "items": {"run": "tool"}}
    found = explain('{"run":[]}', '{"run":[{"tool":"rm"}]}', runs)
    assert found == [(NOW_EXECUTES, "rm")]


def test_other_keys_and_non_json_verdicts_are_changed_verdicts():
    repair = {"args": ["input"], "executes": None, "items": {}}
    assert explain('{"status":"repaired"}', '{"status":"rejected"}', repair) == [
        (CHANGED_VERDICT, 'status: "repaired" -> "rejected"')]
    assert explain(verdict(error=None), verdict(error="too-long"), PARSE) == [(CHANGED_VERDICT, 'error: null -> "too-long"')]
    assert explain("<oops", "{}", PARSE) == [(CHANGED_VERDICT, "<oops -> {}")]
