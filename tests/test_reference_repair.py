"""repair_arguments / repair_arguments_canonical of the Python reference (py_src/toolcalls/repair.py).

The first block is the behaviour table of the repair PR discussion (seed
python-repair-pr-discussion.txt), one parametrized case per row, with the verdicts the reference
produces: a row that the seed maps to "{}" is a fail-closed rejection here, with a reason code.
The rest covers every reason code, the policies the repair shares with the parser (duplicate keys,
lone surrogates, non-finite numbers, safe integers, depth) and the exact actions and offsets.
"""

import json
from unittest import mock

import pytest

from toolcalls import json_core as jc
from toolcalls import repair
from toolcalls import repair_arguments, repair_arguments_canonical

VERDICT_KEYS = {"actions", "arguments", "reason", "status"}


def units_len(text):
    return len(jc.to_units(text))


def apply_actions(raw, actions):
    """Independent re-implementation of what the actions mean, on UTF-16 units."""
    u = jc.to_units(raw)
    deleted = set()
    appended = []
    # A delete removes len(text) units at `at`; an append adds text at the end.
    last = 0
    for action in actions:
        text = jc.to_units(action["text"])
        assert action["at"] >= last, "actions come in document order"
        if action["op"] == "delete":
            assert text and u[action["at"] : action["at"] + len(text)] == text
            deleted.update(range(action["at"], action["at"] + len(text)))
            last = action["at"] + len(text)
        else:
            assert action["op"] == "append"
            assert action["at"] == len(u)
            appended.append(text)
            last = len(u)
    kept = "".join(ch for k, ch in enumerate(u) if k not in deleted)
    return jc.from_units(kept + "".join(appended))


def check_shape(verdict):
    assert set(verdict) == VERDICT_KEYS
    assert verdict["reason"] != "internal-error"  # a caught defect, never a legitimate verdict
    if verdict["status"] == "rejected":
        assert verdict["actions"] == []
        assert verdict["arguments"] is None
        assert isinstance(verdict["reason"], str) and verdict["reason"]
    else:
        assert verdict["status"] in ("valid", "repaired")
        assert verdict["reason"] is None
        assert isinstance(verdict["arguments"], dict)
        assert (verdict["status"] == "valid") == (verdict["actions"] == [])


def rejected(reason):
    return {"actions": [], "arguments": None, "reason": reason, "status": "rejected"}


# ---------------------------------------------------------------- the seed's behaviour table

SEED_ROWS = [
    pytest.param(
        '{"items": [1, 2, 3',
        {"actions": [{"at": 18, "op": "append", "text": "]}"}], "arguments": {"items": [1, 2, 3]},
         "reason": None, "status": "repaired"},
        id="row01-items-array-closed-by-nesting",
    ),
    pytest.param(
        '{"edits": [{"line": 1',
        {"actions": [{"at": 21, "op": "append", "text": "}]}"}], "arguments": {"edits": [{"line": 1}]},
         "reason": None, "status": "repaired"},
        id="row02-edits-object-in-array",
    ),
    pytest.param(
        '{"a": {"b": [{"c": [1, 2',
        {"actions": [{"at": 24, "op": "append", "text": "]}]}}"}], "arguments": {"a": {"b": [{"c": [1, 2]}]}},
         "reason": None, "status": "repaired"},
        id="row03-four-levels-innermost-first",
    ),
    pytest.param(
        '{"sep": ", ]", "files": ["a"',
        {"actions": [{"at": 28, "op": "append", "text": "]}"}], "arguments": {"sep": ", ]", "files": ["a"]},
         "reason": None, "status": "repaired"},
        id="row04-comma-and-closer-inside-string-untouched",
    ),
    pytest.param(
        '{"s":"{","x":[1]}}',
        {"actions": [{"at": 17, "op": "delete", "text": "}"}], "arguments": {"s": "{", "x": [1]},
         "reason": None, "status": "repaired"},
        id="row05-excess-final-closer-trimmed-string-brace-ignored",
    ),
    pytest.param('{"n": ' + "9" * 5000, rejected("number-out-of-range"), id="row06-5000-digit-number"),
    pytest.param("[" * 100000, rejected("too-deep"), id="row07-bracket-flood-100000"),
    pytest.param('{"command":"echo X",\x1c}', rejected("invalid-json"), id="row08-x1c-posing-as-whitespace"),
    pytest.param('{"a": [1, 2,', rejected("truncated-after-comma"), id="row09-truncated-after-comma"),
    pytest.param('{"path":"x.txt","content":"hel', rejected("truncated-in-string"), id="row10-truncated-in-string"),
    pytest.param(
        '{"path": "x.txt", "n": [1, {"k": null}], "ok": true}',
        {"actions": [], "arguments": {"path": "x.txt", "n": [1, {"k": None}], "ok": True}, "reason": None,
         "status": "valid"},
        id="row11-balanced-input-unchanged",
    ),
    # From the prose of the same discussion.
    pytest.param('{"a": [1]]}', rejected("mismatched-closer"), id="prose-excess-closer-not-last-token"),
    pytest.param('{"c":"echo X","timeout":1e999,}', rejected("number-out-of-range"), id="prose-timeout-1e999"),
    pytest.param('{"c":"echo X","timeout":NaN}', rejected("invalid-json"), id="prose-NaN"),
    pytest.param('{"c":"echo X","timeout":Infinity}', rejected("invalid-json"), id="prose-Infinity"),
    pytest.param('{"c":"echo X","timeout":-Infinity}', rejected("invalid-json"), id="prose-minus-Infinity"),
    pytest.param('{"path":"\\uD800",}', rejected("lone-surrogate"), id="prose-lone-surrogate-escape"),
]


@pytest.mark.parametrize("raw,expected", SEED_ROWS)
def test_seed_behaviour_table(raw, expected):
    verdict = repair_arguments(raw)  # must not raise
    check_shape(verdict)
    assert verdict == expected
    # The canonical variant is the same verdict as RFC 8785 text.
    assert json.loads(repair_arguments_canonical(raw)) == expected


def test_seed_row01_canonical_bytes():
    assert repair_arguments_canonical('{"items": [1, 2, 3') == (
        '{"actions":[{"at":18,"op":"append","text":"]}"}],"arguments":{"items":[1,2,3]},'
        '"reason":null,"status":"repaired"}'
    )


def test_seed_row04_canonical_sorts_argument_keys():
    assert repair_arguments_canonical('{"sep": ", ]", "files": ["a"') == (
        '{"actions":[{"at":28,"op":"append","text":"]}"}],"arguments":{"files":["a"],"sep":", ]"},'
        '"reason":null,"status":"repaired"}'
    )


def test_rejected_canonical_bytes():
    assert repair_arguments_canonical('{"a": [1, 2,') == (
        '{"actions":[],"arguments":null,"reason":"truncated-after-comma","status":"rejected"}'
    )


# ---------------------------------------------------------------- trailing commas (string-aware)


@pytest.mark.parametrize(
    "raw,arguments,deleted_at",
    [
        ('{"a":1,}', {"a": 1}, [6]),
        ('{"a": 1 , \n }', {"a": 1}, [8]),
        ('{"a": 1,\r\n\t}', {"a": 1}, [7]),
        ('{"a":[1,2,]}', {"a": [1, 2]}, [9]),
        ('{"a":[1,],}', {"a": [1]}, [7, 9]),
        ('{"a":{"b":{},},}', {"a": {"b": {}}}, [12, 14]),
        ('{"s":",}","t":1,}', {"s": ",}", "t": 1}, [15]),
        ('{"s":", ]","t":[",]",],}', {"s": ", ]", "t": [",]"]}, [20, 22]),
        ('{"s":"a\\",}",}', {"s": 'a",}'}, [12]),
    ],
    ids=["object", "spaces-and-lf", "crlf-tab", "array", "array-then-object", "nested-objects",
         "comma-brace-in-string", "comma-bracket-in-strings", "escaped-quote-then-comma-in-string"],
)
def test_trailing_comma_before_closer_is_deleted(raw, arguments, deleted_at):
    verdict = repair_arguments(raw)
    check_shape(verdict)
    assert verdict["status"] == "repaired"
    assert verdict["arguments"] == arguments
    assert verdict["actions"] == [{"at": at, "op": "delete", "text": ","} for at in deleted_at]
    assert json.loads(apply_actions(raw, verdict["actions"])) == arguments


@pytest.mark.parametrize(
    "raw",
    ['{,}', '{"a":[,]}', '{"a":[1,,]}', '{"a":1,,}', '{"a":[1],,}'],
    ids=["after-open", "array-after-open", "double-comma-array", "double-comma-object", "double-comma-after-array"],
)
def test_comma_not_after_a_value_is_not_deleted(raw):
    assert repair_arguments(raw) == rejected("invalid-json")


@pytest.mark.parametrize(
    "char",
    ["\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c", "\x85", "\xa0", "\u2028", "\u2029", "\ufeff", "\u3000"],
    ids=lambda c: "U+%04X" % ord(c),
)
def test_json_illegal_whitespace_is_never_skipped(char):
    # between a trailing comma and the closer (the seed's \x1c case)
    assert repair_arguments('{"command":"echo X",' + char + "}")["status"] == "rejected"
    # before the first token, at the end, and between tokens
    assert repair_arguments(char + '{"a":1}')["status"] == "rejected"
    assert repair_arguments('{"a":1}' + char)["status"] == "rejected"
    assert repair_arguments('{"a":' + char + "1}")["status"] == "rejected"
    # at the truncation point: completing it would need the character to vanish
    assert repair_arguments('{"a": [1' + char)["status"] == "rejected"
    # ... while the same character inside a string is data (raw C0 controls are invalid in strings)
    inside = repair_arguments('{"a":"' + char + '"}')
    if ord(char) < 0x20:
        assert inside == rejected("invalid-json")
        assert repair_arguments('{"a":"\\u%04x"}' % ord(char))["arguments"] == {"a": char}
    else:
        assert inside["arguments"] == {"a": char}


# ---------------------------------------------------------------- closing truncated structures


@pytest.mark.parametrize(
    "raw,arguments,appended",
    [
        ('{"a":1', {"a": 1}, "}"),
        ('{"a":"x"', {"a": "x"}, "}"),
        ('{"a":true', {"a": True}, "}"),
        ('{"a":null', {"a": None}, "}"),
        ('{"a":-1.5e3', {"a": -1500.0}, "}"),
        ('{"a":[1,2]', {"a": [1, 2]}, "}"),
        ('{"a":{}', {"a": {}}, "}"),
        ('{"a":[]', {"a": []}, "}"),
        ('{"a":[{"b":[{"c":{"d":"e"', {"a": [{"b": [{"c": {"d": "e"}}]}]}, "}}]}]}"),
        ('{"a":"x\\\\"', {"a": "x\\"}, "}"),
        ('{"a":"\\"}"', {"a": '"}'}, "}"),
        ('{"a": 1 \n ', {"a": 1}, "}"),
    ],
    ids=["number", "string", "true", "null", "float", "array-closed", "empty-object", "empty-array",
         "deep-alternating", "escaped-backslash-closes-string", "escaped-quote-in-string", "trailing-whitespace"],
)
def test_truncated_after_complete_value_is_closed(raw, arguments, appended):
    verdict = repair_arguments(raw)
    check_shape(verdict)
    assert verdict["status"] == "repaired"
    assert verdict["arguments"] == arguments
    assert verdict["actions"] == [{"at": units_len(raw), "op": "append", "text": appended}]


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("{", "truncated-after-open"),
        ('{"a":[', "truncated-after-open"),
        ('{"a":{', "truncated-after-open"),
        ('{"a":[1, {', "truncated-after-open"),
        ('{"a"', "truncated-after-key"),
        ('{"a":1,"b"', "truncated-after-key"),
        ('{"a" ', "truncated-after-key"),
        ('{"a":', "truncated-after-colon"),
        ('{"a": \n', "truncated-after-colon"),
        ('{"a":1,', "truncated-after-comma"),
        ('{"a":[1,', "truncated-after-comma"),
        ('{"a":1, ', "truncated-after-comma"),
        ('{"a":"x', "truncated-in-string"),
        ('{"a', "truncated-in-string"),
        ('{"', "truncated-in-string"),
        ('{"a":"x\\', "truncated-in-string"),
        ('{"a":"x\\"', "truncated-in-string"),
        ('{"a":"\\u00', "truncated-in-string"),
        ('{"a":["x", "y', "truncated-in-string"),
        ('"abc', "truncated-in-string"),
    ],
    ids=lambda v: v if not v.startswith(("{", '"')) else None,
)
def test_truncation_that_needs_a_guess_fails_closed(raw, reason):
    verdict = repair_arguments(raw)
    assert verdict == rejected(reason)


@pytest.mark.parametrize(
    "raw",
    ['{"a":tru', '{"a":nul', '{"a":f', '{"a":1.', '{"a":-', '{"a":1e', '{"a":1e+', '{"a":[0.'],
)
def test_truncated_literal_or_number_is_invalid_json(raw):
    assert repair_arguments(raw) == rejected("invalid-json")


# ---------------------------------------------------------------- excess closers


@pytest.mark.parametrize(
    "raw,arguments,deleted",
    [
        ('{"a":1}}', {"a": 1}, [(7, "}")]),
        ('{"a":1}}}', {"a": 1}, [(7, "}}")]),
        ('{"a":1}]', {"a": 1}, [(7, "]")]),
        ('{"a":1} } \n] ', {"a": 1}, [(8, "} \n]")]),
        ('{"a":1}\n}\n', {"a": 1}, [(8, "}")]),
        ('{"a":[1,]}}', {"a": [1]}, [(7, ","), (10, "}")]),
    ],
    ids=["one", "two", "bracket", "inner-whitespace-kept-in-one-delete", "outer-whitespace-not-deleted",
         "with-trailing-comma"],
)
def test_excess_closers_at_the_very_end_are_deleted(raw, arguments, deleted):
    verdict = repair_arguments(raw)
    check_shape(verdict)
    assert verdict["status"] == "repaired"
    assert verdict["arguments"] == arguments
    assert verdict["actions"] == [{"at": at, "op": "delete", "text": text} for at, text in deleted]


@pytest.mark.parametrize(
    "raw,reason",
    [
        ('{"a":1}} x', "excess-closer"),
        ('{"a":1}}{"b":2}', "excess-closer"),
        ('{"a":1}], 1', "excess-closer"),
        ('{"a": [1]]}', "mismatched-closer"),
        ('{"a":[1}', "mismatched-closer"),
        ('{"a":1]', "mismatched-closer"),
        ("{]", "mismatched-closer"),
        ('{"a":{"b":1]}', "mismatched-closer"),
        ("}", "invalid-json"),
        ("]]]", "invalid-json"),
        ('{"a":1} x', "invalid-json"),
        ('{"a":1},', "invalid-json"),
        ('{"a":1}{"b":2}', "invalid-json"),
    ],
)
def test_closers_that_are_not_the_final_tokens_fail_closed(raw, reason):
    assert repair_arguments(raw) == rejected(reason)


# ---------------------------------------------------------------- reason codes, one by one


@pytest.mark.parametrize(
    "raw,reason",
    [
        (None, "not-a-string"),
        (5, "not-a-string"),
        (b'{"a":1}', "not-a-string"),
        ({"a": 1}, "not-a-string"),
        (["{}"], "not-a-string"),
        ("x" * 100001, "too-long"),
        ('{"a":"x', "truncated-in-string"),
        ('{"a":1,', "truncated-after-comma"),
        ('{"a":', "truncated-after-colon"),
        ('{"a"', "truncated-after-key"),
        ('{"a":[', "truncated-after-open"),
        ('{"a":1}}x', "excess-closer"),
        ('{"a":[}', "mismatched-closer"),
        ("[" * 65, "too-deep"),
        ("", "invalid-json"),
        ("[1, 2", "not-an-object"),
        ('{"a":1,"a":2}', "duplicate-key"),
        ('{"a":"\\udfff"}', "lone-surrogate"),
        ('{"a":1e999}', "number-out-of-range"),
    ],
    ids=["None", "int", "bytes", "dict", "list", "too-long", "truncated-in-string", "truncated-after-comma",
         "truncated-after-colon", "truncated-after-key", "truncated-after-open", "excess-closer",
         "mismatched-closer", "too-deep", "invalid-json", "not-an-object", "duplicate-key", "lone-surrogate",
         "number-out-of-range"],
)
def test_every_reason_code(raw, reason):
    verdict = repair_arguments(raw)
    assert verdict == rejected(reason)
    assert json.loads(repair_arguments_canonical(raw)) == rejected(reason)


@pytest.mark.parametrize("raw", ["[1, 2]", '"x"', "42", "null", "true", "[{}", '[{"a":1}]'])
def test_only_objects_are_arguments(raw):
    assert repair_arguments(raw) == rejected("not-an-object")


def test_str_subclass_is_a_string():
    class S(str):
        pass

    assert repair_arguments(S('{"a":1}'))["status"] == "valid"


# ---------------------------------------------------------------- length limit (UTF-16 units)


def test_length_limit_is_100000_utf16_units():
    exact = '{"a":"' + "x" * (100000 - 8) + '"}'
    assert len(exact) == 100000
    assert repair_arguments(exact)["status"] == "valid"
    over = '{"a":"' + "x" * (100000 - 7) + '"}'
    assert repair_arguments(over) == rejected("too-long")


def test_length_limit_counts_astral_characters_twice():
    raw = '{"a":"' + "😀" * 49997 + '"}'
    assert len(raw) == 50005  # code points: well under the limit
    assert units_len(raw) == 100002  # UTF-16 units: over it
    assert repair_arguments(raw) == rejected("too-long")
    ok = '{"a":"' + "😀" * 49996 + '"}'
    assert repair_arguments(ok)["status"] == "valid"


def test_floods_do_not_raise():
    assert repair_arguments("[" * 100000) == rejected("too-deep")
    assert repair_arguments("{" * 100000) == rejected("too-deep")
    assert repair_arguments('{"a":' * 20000) == rejected("too-deep")
    assert repair_arguments("]" * 100000) == rejected("invalid-json")
    assert repair_arguments("[" * 100001) == rejected("too-long")
    assert repair_arguments('"' * 99999) == rejected("truncated-in-string")
    assert repair_arguments('{"n":' + "1" * 99990 + "}") == rejected("number-out-of-range")
    assert repair_arguments('{"n":0.' + "1" * 99990 + "}")["status"] == "valid"
    assert repair_arguments('{"n":1e' + "9" * 99990 + "}") == rejected("number-out-of-range")


# ---------------------------------------------------------------- depth


def test_depth_64_repaired_65_too_deep():
    ok = '{"a":' * 63 + "[1"
    verdict = repair_arguments(ok)
    assert verdict["status"] == "repaired"
    assert verdict["actions"] == [{"at": units_len(ok), "op": "append", "text": "]" + "}" * 63}]
    assert repair_arguments('{"a":' * 64 + "[1") == rejected("too-deep")
    assert repair_arguments('{"a":' * 63 + "{}" + "}" * 63)["status"] == "valid"
    assert repair_arguments('{"a":' * 64 + "{}" + "}" * 64) == rejected("too-deep")


# ---------------------------------------------------------------- shared policies


@pytest.mark.parametrize(
    "raw",
    ['{"a":1,"a":2}', '{"a":1,"a":1}', '{"a":1,"\\u0061":2}', '{"o":{"k":1,"k":2}}', '{"l":[{"k":1,"k":2}]}',
     '{"a":1,"a":2', '{"a":1,"a":2,}'],
    ids=["plain", "same-value", "escape-equivalent", "nested", "in-array", "truncated", "trailing-comma"],
)
def test_duplicate_keys_rejected(raw):
    assert repair_arguments(raw) == rejected("duplicate-key")


def test_distinct_keys_that_only_differ_in_case_are_fine():
    assert repair_arguments('{"a":1,"A":2}')["arguments"] == {"a": 1, "A": 2}


@pytest.mark.parametrize(
    "raw",
    ['{"p":"\\ud800"}', '{"p":"\\udc00"}', '{"p":"\\ud800x"}', '{"p":"\\udc00\\ud800"}', '{"p":"\ud800"}',
     '{"\\ud800":1}', '{"p":["\\ude00"', '{"path":"\\uD800",}'],
    ids=["escaped-high", "escaped-low", "high-then-letter", "reversed-pair", "raw-python-surrogate",
         "in-key", "truncated-array", "seed-trailing-comma"],
)
def test_lone_surrogates_rejected(raw):
    assert repair_arguments(raw) == rejected("lone-surrogate")


def test_escaped_surrogate_pair_is_one_character():
    verdict = repair_arguments('{"p":"\\ud83d\\ude00"}')
    assert verdict["status"] == "valid"
    assert verdict["arguments"] == {"p": "😀"}
    assert repair_arguments_canonical('{"p":"\\ud83d\\ude00"}') == (
        '{"actions":[],"arguments":{"p":"😀"},"reason":null,"status":"valid"}'
    )


@pytest.mark.parametrize(
    "raw,reason",
    [
        ('{"x":1e999}', "number-out-of-range"),
        ('{"x":-1e999}', "number-out-of-range"),
        ('{"x":1e309}', "number-out-of-range"),
        ('{"x":[1e400', "number-out-of-range"),
        ('{"x":NaN}', "invalid-json"),
        ('{"x":nan}', "invalid-json"),
        ('{"x":Infinity}', "invalid-json"),
        ('{"x":-Infinity}', "invalid-json"),
        ('{"x":Infinity', "invalid-json"),
    ],
)
def test_non_finite_numbers_rejected(raw, reason):
    assert repair_arguments(raw) == rejected(reason)


@pytest.mark.parametrize(
    "raw,expected",
    [
        ('{"n":9007199254740991}', {"n": 9007199254740991}),
        ('{"n":-9007199254740991}', {"n": -9007199254740991}),
        ('{"n":[9007199254740991', {"n": [9007199254740991]}),
        ('{"n":9007199254740992}', None),
        ('{"n":-9007199254740992}', None),
        ('{"n":10000000000000000}', None),
        ('{"n":[9007199254740992', None),
    ],
    ids=["max-safe", "min-safe", "max-safe-truncated", "2^53", "-2^53", "1e16-integer", "2^53-truncated"],
)
def test_safe_integer_boundary(raw, expected):
    verdict = repair_arguments(raw)
    if expected is None:
        assert verdict == rejected("number-out-of-range")
    else:
        assert verdict["arguments"] == expected
        assert verdict["status"] in ("valid", "repaired")


def test_numbers_canonicalise_like_ecmascript():
    text = repair_arguments_canonical('{"a":1.0,"b":-0.0,"c":1e21,"d":1E-7,"e":0.000001,"f":5e-324')
    assert text == (
        '{"actions":[{"at":59,"op":"append","text":"}"}],'
        '"arguments":{"a":1,"b":0,"c":1e+21,"d":1e-7,"e":0.000001,"f":5e-324},'
        '"reason":null,"status":"repaired"}'
    )


# ---------------------------------------------------------------- actions: content and offsets


def test_valid_input_has_no_actions_even_with_outer_whitespace():
    assert repair_arguments(' \t\n{"a":1}\r\n ') == {"actions": [], "arguments": {"a": 1}, "reason": None,
                                                      "status": "valid"}


def test_offsets_are_utf16_units_after_astral_characters():
    raw = '{"e":"😀","a":[1,],"b":[2'
    assert len(raw) == 24 and units_len(raw) == 25
    verdict = repair_arguments(raw)
    assert verdict["actions"] == [
        {"at": 16, "op": "delete", "text": ","},
        {"at": 25, "op": "append", "text": "]}"},
    ]
    assert verdict["arguments"] == {"e": "😀", "a": [1], "b": [2]}
    assert apply_actions(raw, verdict["actions"]) == '{"e":"😀","a":[1],"b":[2]}'


def test_excess_closer_offset_after_astral_characters():
    raw = '{"k":"𝄞𝄞"}}'
    verdict = repair_arguments(raw)
    assert verdict["actions"] == [{"at": 12, "op": "delete", "text": "}"}]


def test_actions_are_deletes_in_order_then_one_append():
    raw = '{"a":[1,],"b":{"c":2,},"d":[3'
    verdict = repair_arguments(raw)
    assert verdict["status"] == "repaired"
    assert verdict["actions"] == [
        {"at": 7, "op": "delete", "text": ","},
        {"at": 20, "op": "delete", "text": ","},
        {"at": 29, "op": "append", "text": "]}"},
    ]
    assert verdict["arguments"] == {"a": [1], "b": {"c": 2}, "d": [3]}


@pytest.mark.parametrize(
    "raw",
    [row.values[0] for row in SEED_ROWS]
    + ['{"a":[1,],}', '{"a":1} } \n] ', '{"e":"😀","a":[1,],"b":[2', '{"a":{"b":{},},"c":"x'],
    ids=lambda r: repr(r)[:30],
)
def test_applying_the_actions_reproduces_the_arguments(raw):
    verdict = repair_arguments(raw)
    check_shape(verdict)
    if verdict["status"] == "rejected":
        return
    repaired = apply_actions(raw, verdict["actions"])
    units = jc.to_units(repaired)
    assert json.loads(jc.from_units(jc.canonical(jc.parse_strict(units, 0, len(units))))) == verdict["arguments"]
    for action in verdict["actions"]:
        if action["op"] == "delete":
            # a trailing comma, or the run of excess closers (with any whitespace between them)
            text = action["text"]
            assert text == "," or (text[0] in "}]" and text[-1] in "}]" and set(text) <= set("}] \t\r\n"))
        else:
            assert action["text"] and set(action["text"]) <= {"}", "]"}


def test_same_input_same_canonical_bytes():
    raw = '{"b":[1,{"y":2,"x":1,}],"a":"z"'
    first = repair_arguments_canonical(raw)
    assert first == repair_arguments_canonical(raw)
    assert first == (
        '{"actions":[{"at":20,"op":"delete","text":","},{"at":31,"op":"append","text":"}"}],'
        '"arguments":{"a":"z","b":[1,{"x":1,"y":2}]},"reason":null,"status":"repaired"}'
    )


def test_control_characters_in_arguments_are_escaped_in_canonical_form():
    text = repair_arguments_canonical('{"s":"\\u001f\\u2028\\/"}')
    assert text == '{"actions":[],"arguments":{"s":"\\u001f\u2028/"},"reason":null,"status":"valid"}'


def plan_outcome(raw):
    units = jc.to_units(raw)
    try:
        return repair.plan_repair(units)
    except repair.RepairRejected as error:
        return error.reason


VALUE_LISTS = [
    '{"a":[1,2,3]', '{"a":[1, 2 ,3],"b":[4,5,]}', '{"a":[1,2,3,', '{"a":[1,2,3,]}', '{"a":[1,2,3,],', '{"a":[{},[],{ },[\t]]',
    '{"a":[{},{},]}', '{"a":[{},{"b":1},{}]', '{"a":[1,"x",2,"y"', '{"a":1,"b":2,"c":3,}', '{"a":[1,2]]]}}', '{"a":[1,2}',
    '{"a":[true,null,junk,1e5', '{"a":[1,2:3]}', '{"a":' + "[" * 63 + '1,{},"x', '{"a":' + "[" * 62 + '1,{},"x',
    '{"a":' + "[" * 63 + "1,[]" + "]" * 63 + "}", "1,2,{}", "[1,2],{}",
    # strings and flat containers after a value; a string after a comma in an object is a key
    '{"a":["x","y", "z"],"b":{"c":1,"d":"e"},"f":[[1],{"g":2}]', '{"a":1,"b"', '{"a":1,"b":', '{"a":1, "b" :2,"c"',
    '{"a":[[1,2],[3,]]}', '{"a":[{"b":1,},2]}', '{"a":[{"b":1},{"c"', '{"a":["x",{"b":[1]}]', '{"a":[1,"x\\"y",2]',
    '{"a":[1,{"b":1}}', '{"a":[1,[2}]}', '{"a":' + "[" * 62 + '1,[2],{"b":3}', '{"a":' + "[" * 63 + '1,[2]',
]


@pytest.mark.parametrize("raw", VALUE_LISTS, ids=[r[:30] for r in VALUE_LISTS])
def test_value_lists_plan_as_unit_by_unit(raw):
    """Jumping over ", item" and ", key: item" runs at once plans exactly what stepping through
    them does: the same actions, or the same refusal (too-deep at depth 64 included)."""
    fast = plan_outcome(raw)
    with mock.patch.object(repair, "after_value", lambda u, i, stack: i):
        assert plan_outcome(raw) == fast


PREFIX_DOCUMENTS = [
    '{"a": [1, 2.5e-3, -0, true, null], "b\\"": {"c\\\\": "x\\\\\\"y", "d": [{}, [], [[]]]}, "e": "\\u00e9\\n"}',
    ' { "k" : [ "s" , { "t" : [ NaN , -Infinity , 1e999 ] } ] , "z" : "\\\\" } ',
    '[[[[{"a": "]}[{"}]]]], "tail", {"x": {"y": {"z": "\\"\\\\\\""}}}]',
    '{"a":' + "[" * 63 + '"deep"' + "]" * 63 + ',"b":1}',
    '{"a":' + "[" * 64 + "1" + "]" * 64 + "}",
]


def plan_unit_by_unit(raw):
    """plan_outcome with every shortcut turned off: the pass of SPEC.md 6 as written."""
    with mock.patch.object(repair, "plan_of_json_prefix", lambda u: None), \
            mock.patch.object(repair, "complete_value_end", lambda u, i, openers: None), \
            mock.patch.object(repair, "after_value", lambda u, i, stack: i):
        return plan_outcome(raw)


@pytest.mark.parametrize("document", PREFIX_DOCUMENTS, ids=[d[:30] for d in PREFIX_DOCUMENTS])
def test_every_prefix_plans_as_unit_by_unit(document):
    """Cut after every unit, followed by nothing, by closers or by a trailing comma: the plan found
    at C speed (or with runs jumped over) is the plan of the unit-by-unit pass."""
    for cut in range(len(document) + 1):
        for ending in ("", "]", "}}", " ] } ", ",]", "x"):
            raw = document[:cut] + ending
            assert plan_outcome(raw) == plan_unit_by_unit(raw), raw


LONG_DOCUMENTS = [
    # An integer past int()'s digit limit (4,300 digits): the C reader refuses it with a
    # ValueError, and the plan reads the text again with integers left as text.
    '{"a":[1,' + "9" * 4_400 + ',{"b":[2, -' + "7" * 4_301 + ']}],"c":"x"}',
    # Openers past the depth limit, and nested values after them: complete_value_end reads up to
    # the first opener too many, the C reader no longer a thousand levels deep.
    '{"a":' + "[" * 70 + "1" + "]" * 70 + ',"b":[' + "[{}]," * 40 + "[[[[1]]]]]}",
    '{"a":' + "[" * 60 + '{"x":[[[[1]]],{"y":{"z":[]}}]}' + "]" * 60 + "}",
]


@pytest.mark.parametrize("document", LONG_DOCUMENTS, ids=[d[:30] for d in LONG_DOCUMENTS])
def test_long_integers_and_deep_openers_plan_as_unit_by_unit(document):
    cuts = sorted({*range(0, len(document) + 1, 97), *range(max(0, len(document) - 120), len(document) + 1)})
    for cut in cuts:
        for ending in ("", "]", "}}", ",]", "x"):
            raw = document[:cut] + ending
            assert plan_outcome(raw) == plan_unit_by_unit(raw), raw[:80]
