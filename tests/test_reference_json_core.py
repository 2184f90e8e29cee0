"""Direct tests of the Python reference's shared JSON machinery (py_src/toolcalls/json_core.py).

These pin the strict reader (what it accepts, what it refuses and with which reason code), the
RFC 8785 canonical serializer (ECMAScript number formatting, UTF-16 key order, escaping) and the
balanced-object scanner. Everything in json_core works on *unit strings* (one Python character
per UTF-16 code unit), so the helpers below convert with to_units / from_units.
"""

import json
import math
import random
import sys
from pathlib import Path
from unittest import mock

import pytest

from toolcalls import json_core as jc
from toolcalls import repair_arguments
from toolcalls.json_core import JsonReject

sys.path.insert(0, str(Path(__file__).parent.parent / "fixtures" / "generators"))
import _numbers  # noqa: E402  (hard literals and an exact rounding oracle)


def strict(text):
    """Strictly parse a real string; returns the value with strings turned back to real text."""
    units = jc.to_units(text)
    value = jc.parse_strict(units, 0, len(units))
    assert not isinstance(value, JsonReject), value.reason
    return jc.to_real(value)


def reject_reason(text):
    """The reason the strict reader returns (the reader returns a JsonReject, never raises)."""
    units = jc.to_units(text)
    value = jc.parse_strict(units, 0, len(units))
    assert isinstance(value, JsonReject), value
    return value.reason


def canon(value_text):
    """Canonical text (real string) of the strictly parsed JSON document `value_text`."""
    units = jc.to_units(value_text)
    return jc.from_units(jc.canonical(jc.parse_strict(units, 0, len(units))))


def canon_units_value(value):
    """Canonical text of a Python value built from real strings (converted to unit strings)."""

    def to_u(v):
        if isinstance(v, str):
            return jc.to_units(v)
        if isinstance(v, list):
            return [to_u(item) for item in v]
        if isinstance(v, dict):
            return {jc.to_units(key): to_u(item) for key, item in v.items()}
        return v

    return jc.from_units(jc.canonical(to_u(value)))


# ---------------------------------------------------------------- unit strings


def test_to_units_splits_astral_characters_into_surrogate_pairs():
    assert jc.to_units("😀") == "\ud83d\ude00"
    assert len(jc.to_units("a😀b")) == 4
    assert jc.to_units("abc") == "abc"
    assert jc.to_units("") == ""


def test_from_units_joins_pairs_and_keeps_lone_surrogates():
    assert jc.from_units("\ud83d\ude00") == "😀"
    assert jc.from_units("x\ud800y") == "x\ud800y"
    assert jc.from_units("\udc00\ud800") == "\udc00\ud800"
    assert jc.from_units(jc.to_units("héllo 😀 \u2028")) == "héllo 😀 \u2028"


def units_one_by_one(text):
    """The UTF-16 units of `text`, a string each: what to_units must give, however it gets there."""
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[k : k + 2], "little")) for k in range(0, len(data), 2))


@pytest.mark.parametrize(
    "text",
    ["", "abc", "h\xe9llo \u2028", "\uffff\ud7ff\ue000", "x\ud800y\udc00", "\ud83d\ude00 as units", "a\U0001F600b",
     "\U00010000\U0010ffff\ud800", "\xe9" * 50 + "\U0001F600"],
    ids=repr,
)
def test_to_units_gives_the_utf16_units_with_or_without_astral_characters(text):
    # A text with no astral character is its own unit string (the shortcut); one with any is
    # split unit by unit. Lone surrogates are one unit either way.
    assert jc.to_units(text) == units_one_by_one(text)
    assert jc.from_units(jc.to_units(text)) == text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def test_skip_ws_back_measures_long_runs_and_stops_at_other_units():
    for run in (0, 1, 63, 64, 65, 200, 90_000):
        for head in ("", "x", "\x0b", "\u2028", "\ufeff"):
            for tail in ("", " \t\r\n" * 3):
                text = head + (" \t\n\r" * run)[:run] + tail
                expected = len(head)
                assert jc.skip_ws_back(text, 0, len(text)) == expected, (head, run, tail)
                assert jc.skip_ws_back(text, len(text), len(text)) == len(text)
                if head:  # a start inside the run stops there
                    assert jc.skip_ws_back(text, len(head) + 1, len(text)) == min(len(head) + 1, len(text))


@pytest.mark.parametrize("code", [0x20, 0x09, 0x0A, 0x0D])
def test_json_whitespace_is_exactly_four_characters(code):
    assert jc.is_json_ws(code)


@pytest.mark.parametrize(
    "char",
    ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680", "\u2000", "\u2028", "\u2029",
     "\u202f", "\u3000", "\ufeff", "\x00"],
    ids=lambda c: "U+%04X" % ord(c),
)
def test_unicode_spaces_are_not_json_whitespace(char):
    assert not jc.is_json_ws(ord(char))
    # ... and the strict reader does not skip them around a value either.
    assert reject_reason(char + "1") == "invalid-json"
    assert reject_reason("1" + char) == "invalid-json"
    assert reject_reason("[1," + char + "2]") == "invalid-json"


def test_is_well_formed():
    assert jc.is_well_formed("")
    assert jc.is_well_formed("abc\ud83d\ude00")
    assert not jc.is_well_formed("\ud800")
    assert not jc.is_well_formed("\udc00")
    assert not jc.is_well_formed("\ud800x")
    assert not jc.is_well_formed("\udc00\ud800")
    assert not jc.is_well_formed("\ud83d\ude00\ud800")


# ---------------------------------------------------------------- strict reader: accept


ACCEPT = [
    ("0", 0),
    ("-0", 0),
    ("1", 1),
    ("-1", -1),
    ("1.5", 1.5),
    ("-1.5e3", -1500.0),
    ("1e5", 100000.0),
    ("1E+5", 100000.0),
    ("1e-5", 1e-5),
    ("0.0", 0.0),
    ("0e0", 0.0),
    ("10", 10),
    ("true", True),
    ("false", False),
    ("null", None),
    ('""', ""),
    ('"abc"', "abc"),
    ('"\\u0041\\u00e9"', "Aé"),
    ('"\\uD83D\\uDE00"', "😀"),
    ('"\\ud83d\\ude00"', "😀"),
    ('"😀"', "😀"),
    ('"\\/"', "/"),
    ('"\\b\\f\\n\\r\\t\\"\\\\"', "\b\f\n\r\t\"\\"),
    ('"\x7f"', "\x7f"),
    ('"\u2028\u2029"', "\u2028\u2029"),
    ('"\ufeff\xa0"', "\ufeff\xa0"),
    ("[]", []),
    ("{}", {}),
    (" \t\r\n[ 1 , 2 ]\n\r\t ", [1, 2]),
    ('{"a":{"b":[null,true]}}', {"a": {"b": [None, True]}}),
    ('{"a":1,"A":2}', {"a": 1, "A": 2}),
    ('[{"a":1},{"a":1}]', [{"a": 1}, {"a": 1}]),
    ("9007199254740991", 9007199254740991),
    ("-9007199254740991", -9007199254740991),
    ("1e308", 1e308),
    ("1e-400", 0.0),
]


@pytest.mark.parametrize("text,expected", ACCEPT, ids=[repr(t)[:40] for t, _ in ACCEPT])
def test_strict_reader_accepts(text, expected):
    value = strict(text)
    assert value == expected
    assert type(value) is type(expected)


# ---------------------------------------------------------------- strict reader: reject

REJECT_INVALID = [
    "",
    " ",
    "01",
    "-01",
    "00",
    "-",
    "--1",
    "+1",
    "1.",
    "2.",
    "0.e1",
    "-.5",
    ".5",
    "1e",
    "1e+",
    "1E-",
    "0x10",
    "1_000",
    "NaN",
    "-NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "inf",
    "True",
    "None",
    "nul",
    "tru",
    "truex",
    "'a'",
    '"a',
    '"\\x41"',
    '"\\a"',
    '"\\U0041"',
    '"\\u12"',
    '"\\u00G0"',
    '"\\u 041"',
    '"\\',
    '"\t"',
    '"\n"',
    '"\r"',
    '"\x00"',
    '"\x1f"',
    "[1,]",
    '{"a":1,}',
    "[,1]",
    "{,}",
    "[1 2]",
    "[1,,2]",
    '{"a" 1}',
    '{"a":}',
    "{a:1}",
    "{'a':1}",
    '{"a":1',
    "[",
    "{",
    "]",
    "}",
    "[1]]",
    "1 2",
    "/* c */ 1",
    "1 // c",
    "# c\n1",
    "[1] /**/",
    "\ufeff1",
    '{"a":1}x',
]


@pytest.mark.parametrize("text", REJECT_INVALID, ids=[repr(t)[:40] for t in REJECT_INVALID])
def test_strict_reader_rejects_invalid_json(text):
    assert reject_reason(text) == "invalid-json"


@pytest.mark.parametrize(
    "text",
    ["1e400", "-1e400", "1e309", "1.8e308", "9007199254740992", "-9007199254740992", "12345678901234567",
     "99999999999999999999", "1" + "0" * 5000, "[" + "9" * 5000 + "]", '{"n":-' + "9" * 20 + "}"],
    ids=["1e400", "-1e400", "1e309", "1.8e308", "2^53", "-2^53", "17-digits", "20-digits", "5001-digits",
         "5000-digits-in-array", "negative-20-digits"],
)
def test_numbers_out_of_range(text):
    assert reject_reason(text) == "number-out-of-range"


def test_safe_integer_boundary():
    assert strict("9007199254740991") == 2**53 - 1
    assert strict("-9007199254740991") == -(2**53 - 1)
    assert strict("1234567890123456") == 1234567890123456  # 16 digits, safe
    assert reject_reason("9007199254740992") == "number-out-of-range"
    assert reject_reason("9007199254740993") == "number-out-of-range"
    assert reject_reason("-9007199254740992") == "number-out-of-range"


def test_integer_and_float_types():
    assert type(strict("5")) is int
    assert type(strict("5.0")) is float
    assert type(strict("5e0")) is float


def test_depth_64_accepted_65_too_deep():
    assert strict("[" * 64 + "]" * 64) is not None
    assert reject_reason("[" * 65 + "]" * 65) == "too-deep"
    obj64 = '{"a":' * 63 + "{}" + "}" * 63
    obj65 = '{"a":' * 64 + "{}" + "}" * 64
    assert isinstance(strict(obj64), dict)
    assert reject_reason(obj65) == "too-deep"
    # Scalars nested at the limit do not count as a level of their own.
    assert strict("[" * 64 + "1" + "]" * 64) is not None


def test_depth_flood_does_not_recurse_out():
    assert reject_reason("[" * 100000) == "too-deep"
    assert reject_reason('{"a":' * 20000) == "too-deep"


@pytest.mark.parametrize(
    "text",
    ['{"a":1,"a":2}', '{"a":1,"a":1}', '{"a":1,"\\u0061":2}', '{"o":{"k":1,"b":2,"k":3}}', '[{"x":[{"y":1,"y":1}]}]',
     '{"😀":1,"\\ud83d\\ude00":2}'],
    ids=["plain", "same-value", "escaped-equivalent", "nested", "inside-array", "astral-escaped-equivalent"],
)
def test_duplicate_keys_rejected(text):
    assert reject_reason(text) == "duplicate-key"


@pytest.mark.parametrize(
    "text, reason",
    [('[{"a":1,"a":2},1e999]', "duplicate-key"), ('{"a":{"b":1,"b":2},"c":x}', "duplicate-key"),
     ('[1e999,{"a":1,"a":2}]', "number-out-of-range"), ('[1e999,{"a":1,"a":2},x]', "number-out-of-range"),
     ('["\\ud800",{"a":1,"a":2}]', "lone-surrogate"), ('[' * 64 + '{"a":1,"a":2}' + ']' * 64, "too-deep")],
    ids=["then-out-of-range", "then-invalid", "after-out-of-range", "after-out-of-range-then-invalid",
         "after-lone-surrogate", "deeper-than-allowed"],
)
def test_a_duplicate_key_is_the_failure_only_when_nothing_fails_before_it(text, reason):
    """The C reader's hook sees a duplicate as its object closes; what failed before it in the
    document (a check made after the C reader) must still win, as in the exact reader."""
    assert reject_reason(text) == reason
    assert read_one_by_one(jc.to_units(text)).reason == reason


@pytest.mark.parametrize(
    "text",
    ['"\\ud800"', '"\\udc00"', '"\\uDBFF\\u0041"', '"\\udc00\\ud800"', '"x\\ud83d"', '"\ud800"', '"\udfff"',
     '{"\\ud800":1}', '{"\ud800":1}', '["ok","\\ude00"]', '"\\ud83d\\ude00\\ud83d"'],
    ids=["escaped-high", "escaped-low", "high-then-letter", "reversed-pair", "trailing-high", "raw-high",
         "raw-low", "escaped-key", "raw-key", "in-array", "pair-then-lone"],
)
def test_lone_surrogates_rejected(text):
    assert reject_reason(text) == "lone-surrogate"


def test_json_reject_carries_position():
    units = jc.to_units('{"a":1,"a":2}')
    assert read_one_by_one(units).at == 7  # the exact reader: the second key
    assert jc.parse_strict(units, 0, len(units)).at == 0  # the C reader: the start of what it read
    units = jc.to_units("[1, x]")
    assert jc.parse_strict(units, 0, len(units)).at == 4


def test_parse_strict_respects_bounds():
    units = jc.to_units('xx{"a":1}yy')
    assert jc.parse_strict(units, 2, 9) == {"a": 1}
    assert isinstance(jc.parse_strict(units, 0, 9), JsonReject)
    assert isinstance(jc.parse_strict(units, 2, 8), JsonReject)  # the closing brace is outside the window


# ---------------------------------------------------------------- correctly rounded literals

HALF_2_53 = "9007199254740993"  # the midpoint between 2**53 and 2**53 + 2
MIDPOINT_MAX = str(2**1024 - 2**970)  # between the largest double and 2**1024: rounds to Infinity
HALF_MIN = _numbers.spell(*_numbers.exact_digits(_numbers.Fraction(1, 2**1075)), 0)  # 2**-1075


def bits(x):
    return _numbers.double_to_bits(float(x))


ROUNDING = [
    (HALF_2_53 + ".0", 2.0**53),  # a tie: to the even significand, down
    (HALF_2_53 + ".00000000000000000000001", 2.0**53 + 2),  # 40 digits, just past the tie
    (HALF_2_53 + "." + "0" * 60 + "1", 2.0**53 + 2),
    ("9007199254740992." + "9" * 60, 2.0**53),  # just below the tie
    (HALF_2_53 + "." + "0" * 1000, 2.0**53),  # a tie written with 1,017 digits
    (HALF_2_53 + "." + "0" * 1000 + "1", 2.0**53 + 2),  # past the tie at the 1,018th digit
    ("9007199254740995." + "0" * 800, 2.0**53 + 4),  # a tie to the even side, up
    ("-" + HALF_2_53 + ".00000000000000000000001", -(2.0**53 + 2)),
    ("0." + "0" * 30 + HALF_2_53 + "000000000000000000001e+46", 2.0**53 + 2),
    ("1.7976931348623157e308", 1.7976931348623157e308),
    (MIDPOINT_MAX[:-1] + "9" * 5 + "e1", math.inf),
    (HALF_MIN, 0.0),  # exactly half the smallest subnormal (751 digits): a tie, to zero
    (HALF_MIN.replace("e-324", "0" * 100 + "1e-324"), 5e-324),  # just past it
    (HALF_MIN[:90] + "e-324", 0.0),  # its first 89 digits: below it
    ("1e-324", 0.0),
    ("1" + "0" * 308 + ".0", 1e308),
    ("0.1000000000000000055511151231257827021181583404541015625", 0.1),  # 0.1 written out exactly
]


@pytest.mark.parametrize("literal,expected", ROUNDING, ids=[lit[:24] + "~%d" % len(lit) for lit, _ in ROUNDING])
def test_long_literals_round_to_nearest_even(literal, expected):
    assert _numbers.correctly_rounded(literal) == expected  # the oracle agrees with the table
    if math.isinf(expected):
        assert reject_reason(literal) == "number-out-of-range"
        assert repair_arguments('{"n":' + literal + "}")["reason"] == "number-out-of-range"
    else:
        assert bits(strict(literal)) == bits(expected)
        assert bits(repair_arguments('{"n":' + literal + "}")["arguments"]["n"]) == bits(expected)


def test_the_overflow_midpoint_rounds_to_infinity():
    assert reject_reason(MIDPOINT_MAX + ".0") == "number-out-of-range"
    below = MIDPOINT_MAX[:-1] + str(int(MIDPOINT_MAX[-1]) - 1) + "." + "9" * 40
    assert strict(below) == 1.7976931348623157e308


def test_generated_near_midpoint_literals_round_correctly():
    """Near-midpoint literals of 17 to 800 digits (both signs, subnormals, around 2**53, the largest
    doubles), checked against the exact oracle. They go through repair_arguments so that
    test_twins_replay.py sends each one through the JS twins as well."""
    cases = _numbers.near_midpoint_literals(random.Random(20261201), 1500) + _numbers.overflow_literals()
    wrong = []
    for literal, expected in cases:
        verdict = repair_arguments('{"n":' + literal + "}")
        if math.isinf(expected):
            ok = verdict["reason"] == "number-out-of-range"
        else:
            ok = verdict["status"] == "valid" and bits(verdict["arguments"]["n"]) == bits(expected)
        if not ok:
            wrong.append(literal)
    assert wrong == []
    assert len({len(literal) for literal, _ in cases}) > 100  # many lengths, not one shape


# ---------------------------------------------------------------- ECMAScript Number::toString

ES_NUMBERS = [
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (123456789012345680000.0, "123456789012345680000"),
    (1e-7, "1e-7"),
    (2e-7, "2e-7"),
    (1.23e-7, "1.23e-7"),
    (-1e-7, "-1e-7"),
    (0.000001, "0.000001"),
    (1.2e-6, "0.0000012"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-0.0, "0"),
    (0.0, "0"),
    (0.1 + 0.2, "0.30000000000000004"),
    (100.0, "100"),
    (1.0, "1"),
    (-1.5, "-1.5"),
    (0.5, "0.5"),
    (4.35, "4.35"),
    (0.002, "0.002"),
    (1e100, "1e+100"),
    (1e22, "1e+22"),
    (2.0**53, "9007199254740992"),
    (12345678.9, "12345678.9"),
    (1.5e300, "1.5e+300"),
    (123e-20, "1.23e-18"),
    (9007199254740991, "9007199254740991"),
    (-5, "-5"),
    (0, "0"),
]


@pytest.mark.parametrize("value,expected", ES_NUMBERS, ids=[e for _, e in ES_NUMBERS])
def test_es_number(value, expected):
    assert jc.es_number(value) == expected


def ecmascript_layout(x: float) -> str:
    """Number::toString's layout (ECMA-262 6.1.6.1.20) of the shortest digits repr finds: an
    oracle written from the standard's steps, independent of the rewriting es_number does."""
    if x == 0:
        return "0"
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent = (int(exp) if exp else 0) - len(frac) + len(digits) - len(digits.rstrip("0"))
    digits = digits.rstrip("0")
    k, n = len(digits), len(digits) + exponent
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        head = digits if k == 1 else digits[0] + "." + digits[1:]
        body = head + "e" + ("+" if n - 1 >= 0 else "-") + str(abs(n - 1))
    return ("-" if x < 0 else "") + body


def test_es_number_is_the_ecmascript_layout_of_repr_digits():
    """es_number rewrites repr's text with regular expressions where a mark says its layout
    differs; every number, alone and in a list through canonical, must come out as the standard
    lays it out."""
    doubles = _numbers.random_doubles(random.Random(12), 20000)
    doubles += [5.0, -0.0, 0.0, 100.0, 1e-5, 1.5e-5, -2.5e-6, 1e-6, 1e-7, 1.5e-9, 1e-10, 1e15, 1e16,
                1.2345678901234567e16, 1e20, -9.999999999999999e20, 1e21, 1e-4]
    assert [jc.es_number(x) for x in doubles] == [ecmascript_layout(x) for x in doubles]
    assert [jc.canonical(x) for x in doubles] == [ecmascript_layout(x) for x in doubles]
    assert [jc.canonical({"x": x}) for x in doubles] == ['{"x":%s}' % ecmascript_layout(x) for x in doubles]
    for k in range(0, len(doubles), 7):
        group = doubles[k : k + 7] + [k, -k, "1.0e+16 e-05 -0.0"]  # the string keeps its marks
        expected = ",".join(map(ecmascript_layout, group[:-3])) + f",{k},{-k},\"1.0e+16 e-05 -0.0\""
        assert jc.canonical(group) == "[" + expected + "]"


def test_canonical_lists_of_numbers():
    assert canon("[5.0, 1e-5, 1e-7, 1e16, 1e20, 1e21, -0.0, 100, 1.5, 0.000123]") == (
        "[5,0.00001,1e-7,10000000000000000,100000000000000000000,1e+21,0,100,1.5,0.000123]")
    assert canon("[1, 2.5, true, null, 3]") == "[1,2.5,true,null,3]"  # not only numbers
    assert canon('{"a":[{},{ },[]],"b":{}}') == '{"a":[{},{},[]],"b":{}}'


def test_canonical_numbers_from_parsed_text():
    assert canon("[1.0, -0.0, -0, 1E2, 0.1e1, 1e21, 1e-7, 5e-324]") == "[1,0,0,100,1,1e+21,1e-7,5e-324]"


def read_one_by_one(units, spans=None):
    """parse_strict with the C reader turned off: each item and member read by read_value."""
    with mock.patch.object(jc, "_read_run", lambda *run: None), mock.patch.object(jc, "_read_accepted", lambda *value: None):
        return jc.parse_strict(units, 0, len(units), spans)


def same_reading(fast, slow):
    """The same value of the same types (int or float, -0.0), or the same refusal at the same
    place (a duplicate key in a run is placed at the run's start)."""
    if isinstance(slow, JsonReject):
        assert fast.reason == slow.reason
        assert fast.at == slow.at or fast.reason == "duplicate-key"
    else:
        assert json.dumps(fast) == json.dumps(slow)  # also tells 1 from 1.0 and 0.0 from -0.0


NUMBER_RUNS = [
    "[1,2, 3 ,\t4\n,\r5]", "[1.5,-2.5e-3,0.0,-0.0,-0,0,1E+2,1e-2]", "[1,2.5,3,4.5,5]",
    "[999999999999999,-999999999999999,1]",  # 15 digits: in a run
    "[9007199254740991,-9007199254740991,1]",  # 16 digits: read one by one
    "[1,2,9007199254740992,3]", "[1,2,10000000000000000,3]", "[1,2,-9007199254740992]",
    "[1.5,2.5,1e400,3.5]", "[1,-1e999,2]", "[1e308,1.7976931348623158e308,2]",
    "[1.5,2.5e,3]", "[1,2.,3]", "[1,2.5.5,3]", "[1,01,2]", "[1,-,2]", "[1,2 3]", "[1,2,]", "[1,,2]",
    "[1,2", "[1,2,", "[1.5,2.5]x", "[0.1,0.2,{},0.3]", '[1,"a",2]', "[[1,2],[3.5,4.5]]",
    "[12345678901234567890.5,1]", "[1e-400,-1e-400,5e-324]", "[" + "1," * 500 + "2]",
    # runs of other simple items: strings, literals, flat arrays and objects
    '["a", "b" ,"c"]', '[true,false,null,"x",1]', '[[1,2],[],{"a":1},{},["x",true]]', '[{"a":1},{"a":1,"a":2},3]',
    '{"a":1,"b":[1],"c":{"d":2},"e":3}', '{"a":1,"b":2,"a":3,"c":4}', '{"a":{"b":1,"b":2},"c":1}',
    '["a\\n","b"]', '["\ud83d\ude00","a"]', '[1e99,1e100,2]', '[123456789012345,1234567890123456,1]',
    '[[1,2,],3]', '[{"a":1,},3]', '[{"a" 1},3]', '[[1e999],2]', '{"a":1,"b":2', '[' + '[1],' * 300 + '[2]]',
    '[' + '{"a":[1]},' * 100 + '{"a":[1]}]', '[' + '{"a":[1]},' * 100 + '{"a":[1],"a":2}]',
]


@pytest.mark.parametrize("text", NUMBER_RUNS, ids=[t[:30] for t in NUMBER_RUNS])
def test_number_runs_read_as_one_by_one(text):
    """A run of number items read at once gives exactly what reading them one by one gives: the
    same values of the same types (int or float, -0.0), or the same refusal at the same place."""
    units = jc.to_units(text)
    same_reading(jc.parse_strict(units, 0, len(units)), read_one_by_one(units))


@pytest.mark.parametrize("text", NUMBER_RUNS, ids=[t[:30] for t in NUMBER_RUNS])
def test_runs_give_the_spans_of_one_by_one(text):
    """The parser asks for the spans of an array's items (its calls' spans, used only when the
    array is read whole); a run gives each item's span, as reading the items one by one does."""
    units = jc.to_units(text)
    fast_spans, slow_spans = [], []
    fast, slow = jc.parse_strict(units, 0, len(units), fast_spans), read_one_by_one(units, slow_spans)
    if not isinstance(slow, JsonReject):
        assert json.dumps(fast) == json.dumps(slow)
        assert fast_spans == slow_spans


def nested(levels: int, inner: str = "1") -> str:
    """`levels` containers around `inner`, objects and arrays in turn, a string with brackets and
    escaped quotes in every object so that counting must leave strings out."""
    text = inner
    for k in range(levels):
        text = f'{{"s\\"[{{": "]}}\\\\", "v{k}": {text}}}' if k % 2 else f"[0, {text}]"
    return text


M = jc.MAX_DEPTH
DEEP = [  # (text, the exact reader's refusal or None)
    (nested(M - 1), None), (nested(M), None), (nested(M + 1), "too-deep"), (nested(M + 4), "too-deep"),
    (f"[[1], {nested(M)}]", "too-deep"),  # the deep branch is not the first
    (f"[{nested(M - 1)}, {nested(M + 2)}]", "too-deep"),  # the second branch is the one past the limit
    ('{"a": 1, "b": ' + nested(M) + "}", "too-deep"),
    ('{"a": 1, "b": ' + nested(M) + ', "a": 2}', "too-deep"),  # a duplicate key after the depth
    ('{"a": 1, "a": 2, "b": ' + nested(M) + "}", "duplicate-key"),  # ... and before it
    ("[" + nested(M) + ", 1e999]", "too-deep"),  # a number out of range after it
    ("[1e999, " + nested(M) + "]", "number-out-of-range"),  # ... and before it
    ("[" * M + "]" * M, None), ("[" * (M + 1) + "]" * (M + 1), "too-deep"), ("[" * 300 + "]" * 300, "too-deep"),
]


@pytest.mark.parametrize(("text", "refusal"), DEEP, ids=[f"{len(t)}-units-{r}" for t, r in DEEP])
def test_deep_values_read_as_one_by_one(text, refusal):
    """Where the C reader accepts a value but for its depth, the shortcut places too-deep where
    the exact reader does (it used to decline, and the exact reader then tried each level again)."""
    units = jc.to_units(text)
    fast, slow = jc.parse_strict(units, 0, len(units)), read_one_by_one(units)
    assert (slow.reason if isinstance(slow, JsonReject) else None) == refusal
    same_reading(fast, slow)


# ---------------------------------------------------------------- canonical serializer (RFC 8785)


def test_canonical_sorts_keys_and_drops_whitespace():
    assert canon('{ "b" : [ 1 , { "d" : true , "c" : null } ] , "a" : "x" }') == '{"a":"x","b":[1,{"c":null,"d":true}]}'


def test_canonical_key_order_is_by_utf16_code_units():
    # U+E000 is one unit (0xE000); U+1F600 is the pair D83D DE00, and 0xD83D < 0xE000, so the astral
    # key sorts FIRST. Code-point order (Python's sorted on real strings) would put it last.
    value = {"\ue000": 1, "😀": 2, "a": 3, "": 0, "A": 4, "aa": 5, "b": 6, "\uffff": 7}
    assert canon_units_value(value) == '{"":0,"A":4,"a":3,"aa":5,"b":6,"😀":2,"\ue000":1,"\uffff":7}'
    assert sorted(["\ue000", "😀"]) == ["\ue000", "😀"]  # what a naive implementation would do


def test_canonical_literals():
    assert canon_units_value([True, False, None]) == "[true,false,null]"
    assert canon_units_value({"t": True, "z": 0}) == '{"t":true,"z":0}'
    assert canon_units_value([]) == "[]"
    assert canon_units_value({}) == "{}"


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("\x1f", '"\\u001f"'),
        ("\x00", '"\\u0000"'),
        ("\x0b", '"\\u000b"'),
        ("\x1c", '"\\u001c"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ('"\\', '"\\"\\\\"'),
        ("/", '"/"'),
        ("\x7f", '"\x7f"'),
        ("\x85", '"\x85"'),
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("\ufeff", '"\ufeff"'),
        ("é😀", '"é😀"'),
        ("\ud800", '"\\ud800"'),
        ("\udc00", '"\\udc00"'),
        ("a\ud800b", '"a\\ud800b"'),
        ("\udc00\ud800", '"\\udc00\\ud800"'),
        ("\ud83d\ude00\ud83d", '"😀\\ud83d"'),
    ],
    ids=["x1f-lowercase", "nul", "vt", "x1c", "short-escapes", "quote-backslash", "slash-literal", "del-literal",
         "nel-literal", "u2028-literal", "bom-literal", "non-ascii-literal", "lone-high", "lone-low",
         "lone-in-middle", "reversed-pair", "pair-then-lone"],
)
def test_canonical_string_escaping(raw, expected):
    units = jc.to_units(raw)
    out = jc.canonical(units)
    assert jc.from_units(out) == expected


def test_canonical_repeated_strings_keep_their_own_escaping():
    # Each distinct string's JSON text is worked out once per canonical text and then reused: as a
    # key and as a value, plain or escaped, and a string that differs only in an escaped unit.
    value = {"a\n": ["a\n", "a\n", "a", "a\r"], "a": {"a\n": "a"}, "\ud800": "\ud800"}
    assert jc.canonical(value) == '{"a":{"a\\n":"a"},"a\\n":["a\\n","a\\n","a","a\\r"],"\\ud800":"\\ud800"}'


def jcs_string(units):
    """A unit string as JCS writes it, unit by unit: the escapes JSON.stringify uses, a lone
    surrogate as \\uXXXX, everything else as it is (DEL and every unit past ASCII included)."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for k, c in enumerate(units):
        code = ord(c)
        paired = (0xD800 <= code <= 0xDBFF and k + 1 < len(units) and 0xDC00 <= ord(units[k + 1]) <= 0xDFFF) or (
            0xDC00 <= code <= 0xDFFF and k > 0 and 0xD800 <= ord(units[k - 1]) <= 0xDBFF)
        if c in short:
            out.append(short[c])
        elif code < 0x20 or (0xD800 <= code <= 0xDFFF and not paired):
            out.append("\\u%04x" % code)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def test_canonical_strings_are_written_as_jcs_writes_them_whichever_encoder_writes_them():
    # canonical takes the ASCII encoder's text when it holds no \u escape: a string of ASCII
    # units, escaped or not, must read the same as one with DEL, units past ASCII or surrogates.
    rng = random.Random(8785)
    alphabet = ["a", "Z", " ", "~", "\x7f", '"', "\\", "/", "\n", "\x00", "\x1f", "\xe9", "\u2028", "\ud800", "\udc00", "\uffff"]
    for _ in range(3_000):
        units = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8)))
        assert jc.canonical([units]) == "[" + jcs_string(units) + "]", repr(units)
        assert jc.canonical({units: 0}) == "{" + jcs_string(units) + ":0}", repr(units)


def test_canonical_output_round_trips_through_json_loads():
    doc = '{"z":[1,2.5,-3e-7,"\\u0001\\u2028"],"a":{"\\ue000":1,"😀":2}}'
    text = canon(doc)
    assert json.loads(text) == json.loads(doc)


# ---------------------------------------------------------------- balanced-object scanner


def scan(text, start=0, end=None):
    units = jc.to_units(text)
    return jc.scan_objects(units, start, len(units) if end is None else end)


def test_scan_finds_top_level_objects_in_order():
    assert scan('a {"x":1} b {"y":{"z":2}} c') == [(2, 9), (12, 25)]


def test_scan_nested_objects_are_not_candidates():
    assert scan('{"a":{"b":{}}}') == [(0, 14)]


def test_scan_drops_the_children_of_a_closing_object_and_keeps_earlier_promoted_ones():
    # Objects closed inside braces that never close are promoted; the ones nested in an object
    # that does close are not, however deep, and whichever brace level they closed at.
    assert scan('{ {a} { {b} {c} } \n') == [(2, 5), (6, 17)]
    assert scan('{ {a} {"x\n{b}') == [(2, 5), (10, 13)]
    assert scan('{{}{{}}}{}') == [(0, 8), (8, 10)]


def test_scan_is_string_and_escape_aware():
    assert scan('{"a":"}"}') == [(0, 9)]
    assert scan('{"a":"\\"}"}') == [(0, 11)]
    assert scan('{"a":"\\\\"}') == [(0, 10)]
    assert scan('{"a":"{{{"} {"b":1}') == [(0, 11), (12, 19)]


def test_scan_quotes_outside_braces_are_prose():
    assert scan('He said "hi {"a":1}') == [(12, 19)]
    assert scan('"}" {"a":1}') == [(4, 11)]


def test_scan_unclosed_brace_promotes_closed_children():
    text = 'Template: {unclosed\n{"name":"x"}'
    assert scan(text) == [(20, 32)]
    assert scan("{ {a} {b}") == [(2, 5), (6, 9)]


def test_scan_line_feed_inside_string_abandons_open_braces():
    text = 'if { "oops\n{"a":1}'
    assert scan(text) == [(11, 18)]
    # the children closed before the line feed are kept, in order
    assert scan('{ {a} "x\n{b}') == [(2, 5), (9, 12)]


def test_scan_stray_closers_are_ignored():
    assert scan('}} ] {"a":1} }') == [(5, 12)]


def test_scan_brace_flood_is_empty():
    assert scan("{" * 10000) == []
    assert scan("{" * 9999 + "}") == [(9998, 10000)]
    assert scan("{" * 5000 + "}" * 5000) == [(0, 10000)]
    assert scan('{"' * 5000) == []


def scan_unit_by_unit(u, start, end, strings):
    """The scanner's rules stepped through one unit at a time, as the JS twin does: the oracle of
    json_core.scan_objects, which jumps from token to token."""
    found, opens, pending = [], [], []
    in_string = escaped = False
    string_start = 0
    for i in range(start, end):
        c = u[i]
        if in_string:
            if c == "\n":
                strings.append((string_start, i, False))
                found.extend(pending)
                pending.clear()
                opens.clear()
                in_string = False
            elif escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
                strings.append((string_start, i + 1, True))
        elif c == "{":
            opens.append(i)
        elif c == "}" and opens:
            opened = opens.pop()
            if opens:
                while pending and pending[-1][0] > opened:
                    pending.pop()
                pending.append((opened, i + 1))
            else:
                pending.clear()
                found.append((opened, i + 1))
        elif c == '"' and opens:
            in_string, escaped, string_start = True, False, i
    if in_string:
        strings.append((string_start, end, False))
    return found + pending


def test_scan_gives_the_ranges_and_strings_of_the_unit_by_unit_rules():
    rng = random.Random(26)
    for _ in range(5_000):
        text = "".join(rng.choice('{{}}""\\\nab :') for _ in range(rng.randrange(0, 40)))
        start = rng.randrange(0, len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        strings, expected_strings = [], []
        expected = scan_unit_by_unit(text, start, end, expected_strings)
        assert jc.scan_objects(text, start, end, strings) == expected, (text, start, end)
        assert strings == expected_strings, (text, start, end)


def test_scan_respects_window():
    text = '{"a":1} {"b":2}'
    assert scan(text, 1, len(text)) == [(8, 15)]
    assert scan(text, 0, 7) == [(0, 7)]
    assert scan(text, 0, 6) == []


def test_scan_offsets_are_utf16_units():
    assert scan('😀 {"a":1}') == [(3, 10)]
