"""expect.mismatches: how a case's partial expectation is matched against a canonical verdict.

Verdict texts here are written the way the engines return them (canonical JSON), so every rule
of docs/corpus.md's "expect is partial" paragraph is checked against the shape the runner sees.
"""

from __future__ import annotations

import json

import pytest

from extparity.corpus import expect

# The bundled entries' list rules: a bare string names a call, or a rejection's reason.
LIST_ITEMS = {"parse": {"calls": "name", "rejected": "reason"}, "repair": {}}


def mismatches(fn: str, wanted: dict, verdict: str) -> list[str]:
    return expect.mismatches(LIST_ITEMS[fn], wanted, verdict)

CLICK = {"name": "click", "arguments": {"selector": "#a", "n": 1}, "format": "bare", "span": [0, 40]}
READ = {"name": "read_page", "arguments": {}, "format": "tagged", "span": [41, 90]}
NARRATED = {"format": "bare", "name": "click", "reason": "not-own-line", "span": [10, 26]}
NOT_ALLOWED = {"format": "bare", "name": "run_script", "reason": "not-allowed", "span": [30, 60]}


def parse_verdict(calls=(), rejected=(), error=None) -> str:
    return json.dumps({"calls": list(calls), "error": error, "rejected": list(rejected)}, separators=(",", ":"), sort_keys=True)


def repair_verdict(status="repaired", arguments=None, reason=None, actions=()) -> str:
    return json.dumps({"actions": list(actions), "arguments": arguments, "reason": reason, "status": status},
                      separators=(",", ":"), sort_keys=True)


# ------------------------------------------------------------------ names vs objects

def test_a_bare_string_names_the_call():
    assert mismatches("parse", {"calls": ["click", "read_page"]}, parse_verdict([CLICK, READ])) == []


def test_a_bare_string_that_names_another_call_is_reported_with_its_index():
    found = mismatches("parse", {"calls": ["click", "navigate"]}, parse_verdict([CLICK, READ]))
    assert found == ['calls[1].name: expected "navigate", got "read_page"']


def test_a_bare_string_names_the_reason_of_a_rejection():
    verdict = parse_verdict(rejected=[NARRATED, NOT_ALLOWED])
    assert mismatches("parse", {"rejected": ["not-own-line", "not-allowed"]}, verdict) == []
    # ... and not the name: a rejected item's bare string is its reason
    assert mismatches("parse", {"rejected": ["click", "run_script"]}, verdict) != []


def test_an_object_item_matches_on_the_keys_it_lists_only():
    expect = {"calls": [{"name": "click", "arguments": {"selector": "#a", "n": 1}}]}
    assert mismatches("parse", expect, parse_verdict([CLICK])) == []


def test_an_object_item_with_a_wrong_listed_key_is_reported():
    expect = {"calls": [{"name": "click", "span": [0, 41]}]}
    assert mismatches("parse", expect, parse_verdict([CLICK])) == ["calls[0].span: expected [0, 41], got [0, 40]"]


def test_nested_values_inside_an_item_are_compared_whole():
    """Partiality stops at the item's own keys: `arguments` must match exactly."""
    expect = {"calls": [{"name": "click", "arguments": {"selector": "#a"}}]}
    assert mismatches("parse", expect, parse_verdict([CLICK])) != []


def test_an_object_item_against_a_non_object_is_a_mismatch():
    verdict = json.dumps({"calls": ["click"], "error": None, "rejected": []})
    assert mismatches("parse", {"calls": [{"name": "click"}]}, verdict) != []


# ------------------------------------------------------------------ lengths and order

@pytest.mark.parametrize(("wanted", "calls"), [
    (["click"], [CLICK, READ]),
    (["click", "read_page"], [CLICK]),
    ([], [CLICK]),
    (["click"], []),
])
def test_a_listed_list_must_match_in_length(wanted, calls):
    found = mismatches("parse", {"calls": wanted}, parse_verdict(calls))
    assert len(found) == 1 and found[0].startswith(f"calls: expected {len(wanted)} (")
    assert f"got {len(calls)} (" in found[0]


def test_a_listed_list_must_match_in_order():
    found = mismatches("parse", {"calls": ["read_page", "click"]}, parse_verdict([CLICK, READ]))
    assert found == ['calls[0].name: expected "read_page", got "click"', 'calls[1].name: expected "click", got "read_page"']


def test_an_empty_list_means_none():
    assert mismatches("parse", {"calls": []}, parse_verdict(rejected=[NARRATED])) == []
    assert mismatches("parse", {"rejected": []}, parse_verdict(rejected=[NARRATED])) != []


def test_unlisted_keys_are_not_checked():
    verdict = parse_verdict([CLICK], rejected=[NARRATED, NOT_ALLOWED])
    assert mismatches("parse", {"calls": ["click"]}, verdict) == []


def test_a_list_key_missing_from_the_verdict_is_reported():
    assert mismatches("parse", {"calls": []}, '{"error":null}') == ["calls: expected a list, got null"]


# ------------------------------------------------------------------ JSON equality

def test_numbers_compare_by_value_1_equals_1_0():
    as_float = json.dumps({"calls": [{**CLICK, "arguments": {"selector": "#a", "n": 1.0}}], "error": None, "rejected": []})
    assert mismatches("parse", {"calls": [{"name": "click", "arguments": {"selector": "#a", "n": 1}}]}, as_float) == []
    assert mismatches("repair", {"arguments": {"a": [1.0, {"b": 2.0}]}}, repair_verdict(arguments={"a": [1, {"b": 2}]})) == []
    assert mismatches("repair", {"arguments": {"a": [1, {"b": 2}]}}, '{"arguments":{"a":[1.0,{"b":2.0}]},"status":"valid"}') == []


def test_different_numbers_still_differ():
    assert mismatches("repair", {"arguments": {"a": 1}}, repair_verdict(arguments={"a": 1.5})) != []


@pytest.mark.parametrize(("wanted", "actual"), [(True, 1), (1, True), (False, 0), (0, False), (None, 0),
                                                ("1", 1), (None, False), ([], {}), ("", None)])
def test_json_types_are_kept_apart(wanted, actual):
    assert mismatches("repair", {"arguments": {"v": wanted}}, repair_verdict(arguments={"v": actual})) != []


def test_object_key_order_does_not_matter():
    verdict = '{"actions":[],"arguments":{"b":2,"a":1},"reason":null,"status":"valid"}'
    assert mismatches("repair", {"arguments": {"a": 1, "b": 2}}, verdict) == []


# ------------------------------------------------------------------ parse error and repair keys

def test_parse_error_is_compared_as_a_value():
    assert mismatches("parse", {"error": None}, parse_verdict()) == []
    assert mismatches("parse", {"error": "too-long", "calls": []}, parse_verdict(error="too-long")) == []
    assert mismatches("parse", {"error": "too-long"}, parse_verdict()) == ['error: expected "too-long", got null']


def test_repair_keys_each_compared_whole():
    actions = [{"at": 11, "op": "append", "text": "]}"}]
    verdict = repair_verdict("repaired", {"a": [1, 2]}, None, actions)
    assert mismatches("repair", {"status": "repaired", "arguments": {"a": [1, 2]}, "reason": None, "actions": actions}, verdict) == []
    assert mismatches("repair", {"status": "valid"}, verdict) == ['status: expected "valid", got "repaired"']
    assert mismatches("repair", {"reason": "truncated"}, verdict) == ['reason: expected "truncated", got null']
    assert mismatches("repair", {"arguments": {"a": [1]}}, verdict) != []
    assert mismatches("repair", {"arguments": {"a": [1, 2], "b": 0}}, verdict) != []


def test_repair_actions_are_not_matched_by_bare_names():
    """Bare-string items are a parse convenience (calls, rejected); repair lists compare whole."""
    actions = [{"at": 11, "op": "append", "text": "]}"}]
    verdict = repair_verdict("repaired", {"a": [1, 2]}, None, actions)
    assert mismatches("repair", {"actions": ["append"]}, verdict) != []
    assert mismatches("repair", {"actions": [{"op": "append"}]}, verdict) != []
    assert mismatches("repair", {"actions": []}, verdict) != []


def test_every_mismatching_key_is_reported():
    verdict = repair_verdict("rejected", None, "not-an-object")
    assert len(mismatches("repair", {"status": "valid", "reason": None, "arguments": {}}, verdict)) == 3


def test_a_verdict_that_is_not_a_json_object_never_meets_an_expectation():
    assert mismatches("parse", {"calls": []}, "{not json") == ["verdict is not JSON"]
    assert mismatches("parse", {"calls": []}, "[]") == ["verdict is not an object"]
    assert mismatches("repair", {"status": "valid"}, '"valid"') == ["verdict is not an object"]


def test_the_reference_verdict_meets_an_expectation_written_from_it():
    from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

    text = 'ok\n{"name":"click","arguments":{"n":1}}\nI will not call {"name":"navigate"} here.'
    verdict = parse_tool_calls_canonical(text, ["click", "navigate"])
    assert mismatches("parse", {"calls": [{"name": "click", "arguments": {"n": 1.0}}], "rejected": ["not-own-line"], "error": None}, verdict) == []
    repaired = repair_arguments_canonical('{"a": [1, 2')
    assert mismatches("repair", {"status": "repaired", "arguments": {"a": [1, 2]}}, repaired) == []
