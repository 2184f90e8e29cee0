"""The speed layer of json_core: the same reader and writer, at the standard library's C speed.

json_core holds the contract's design (the strict reader, the scanner, the canonical writer)
in the shape its JS twin json-core.js has, so the two can be read side by side. What makes the
Python reference fast lives here, and only here: the C reader tried first on whole values and
on runs of simple items (a value it accepts is read exactly as the exact reader would read it),
bracket counting at memory speed, and the rewriting of repr's float text into ECMAScript's
layout. Nothing here decides a verdict: each shortcut either gives the exact reader's answer or
declines (None), and then json_core's exact code decides. The JS twin's speed layer is
json-fast.js; the two differ, as their languages do.
"""

import array
import gc
import itertools
import json
import math
import re

# Regex searches find the units some loops must look at one by one (or their absence) at C
# speed. Classes only, never \s or other built-in notions of whitespace or digits.
SURROGATE = re.compile("[\ud800-\udfff]")
# A high surrogate with no low one after it, or a low one with no high one before it.
LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
# Any JSON whitespace, none given back: a piece of the patterns that match runs of items.
JSON_WS_PATTERN = r"[ \t\n\r]*+"

# ---------------------------------------------------------------- the brackets of JSON text

# In JSON a backslash is only ever inside a string, where it escapes the next unit: blanking
# escaped backslashes, then escaped quotes (same length, left to right as a reader pairs them),
# leaves only the quotes that open and close strings. What lies outside them holds the brackets
# and braces; bytes.translate, str.split and the like read them at memory speed.
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_DEPTH_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # read as signed bytes: +1, -1


def blank_escapes(json_text: str) -> str:
    """JSON text (or a prefix of it) with its escaped backslashes and quotes blanked, same length."""
    return json_text.replace("\\\\", "__").replace('\\"', "__")


def brackets_outside_strings(plain: str) -> bytes:
    """The brackets and braces of blank_escapes text, in order, strings left out (all closed)."""
    return "".join(plain.split('"')[::2]).encode("ascii", "replace").translate(None, _NOT_BRACKETS)


def nesting(json_text: str) -> int:
    """How many levels deep the JSON text's arrays and objects nest (0 for a scalar)."""
    steps = array.array("b", brackets_outside_strings(blank_escapes(json_text)).translate(_DEPTH_STEPS))
    return max(itertools.accumulate(steps), default=0)


_STRING_OR_BRACKET = re.compile(r'"[^"]*+"|[\[\]{}]')


def first_opener_past(json_text: str, levels: int) -> int | None:
    """Index of the first bracket or brace of the JSON text that opens a level deeper than
    `levels`, or None. A step per string and bracket: called only for text known to nest deeper."""
    plain, level = blank_escapes(json_text), 0
    for token in _STRING_OR_BRACKET.finditer(plain):
        unit = plain[token.start()]
        if unit == "[" or unit == "{":
            level += 1
            if level > levels:
                return token.start()
        elif unit != '"':
            level -= 1
    return None


# ---------------------------------------------------------------- the C reader

# A value that passes every check reads the same in the standard library's C reader as in the
# exact reader (json_core), with hooks for the policies the C reader does not know: a duplicate key, a
# number out of range, NaN and Infinity. Each hook raises _Doubt, as does anything else the C
# reader cannot judge exactly (an escaped surrogate, which it would join into one character; a
# lone raw surrogate; nesting deeper than allowed), and then the exact reader reads the value and
# finds its first failure in document order. The C reader's grammar is JSON's, its whitespace
# JSON's, and its numbers float() and int() of the literal, as here. A short value costs about
# 0.2 us this way, against several microseconds in the exact reader.
#
# parse_strict first tries the whole document. If that is doubted, the exact reader tries each
# array or object it meets again, within a window of WINDOW units: what passes is taken whole,
# so a document with one failure near its end is read at about C speed up to it. The window
# bounds what a failed try can cost: only the containers around the failure fail, at most
# MAX_DEPTH of them, each after at most WINDOW units.
WINDOW = 4096


class _Doubt(Exception):
    pass


class _Duplicate(_Doubt):
    pass


_DOUBT, _DUPLICATE = _Doubt(), _Duplicate()


def _refuse(_literal):
    raise _DOUBT


def _object_with_unique_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DUPLICATE
    return obj


def _finite_float(literal):
    value = float(literal)
    if math.isinf(value):
        raise _DOUBT
    return value


def c_scan(reader: json.JSONDecoder, text: str, i: int):
    """reader.scan_once(text, i), with Python's cycle collector paused. The C reader builds trees
    of lists and dicts, which hold no cycles, and its allocations trigger collections that walk
    them (and all else alive) again and again: that tripled the cost of reading 25,000 small
    arrays. The collector is put back as it was, also when the read fails."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return reader.scan_once(text, i)
    finally:
        if enabled:
            gc.enable()


_ACCEPTING = json.JSONDecoder(object_pairs_hook=_object_with_unique_keys, parse_constant=_refuse)
_LAST_KEY_WINS = json.JSONDecoder(parse_constant=_refuse)  # once a duplicate key is known
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
# The prechecks below read the text as bytes: bytes.translate and `in` go at memory speed, where
# a regular-expression search for a class of units costs 10-25 ns a unit.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
# Sixteen digits in a row (bytes `in`, at memory speed), or an exponent of three digits: a pattern
# that begins with a class of bytes, which the regular-expression engine skips to at C speed (an
# alternation of the two took 25 ns a byte, most of a 9 KB document's read).
_SIXTEEN_DIGITS = b"0" * 16
_LONG_EXPONENT = re.compile(rb"[eE][+-]?+000")


# Runs of simple items, each followed by a comma (items of an array, "key": item members of an
# object), are matched at once and read by the C reader, where one by one each would cost a few
# Python calls; this is what keeps a document that the C reader doubts (a duplicate key at its
# end, say) from costing many times as much as one it accepts. An item is simple when nothing in
# it can fail but a duplicate key: a string with no escape and no surrogate, true, false, null,
# a number that is always in range (at most 15 integer digits, an exponent of at most two), or an
# array or object of those, or of such arrays and objects (two levels: the caller checks the
# depth). A matched item is followed by whitespace and a comma, so it is all of what read_value reads
# there; any other item ends the run, and read_value reads it, as it reads the last item, which no
# comma follows. Possessive quantifiers give nothing back: no backtracking records.
_RUN_WS = JSON_WS_PATTERN
_RUN_STRING = '"[^\x00-\x1f"\\\\\ud800-\udfff]*+"'
_RUN_SCALAR = rf"(?:{_RUN_STRING}|-?+(?:0|[1-9][0-9]{{0,14}}+)(?:\.[0-9]++)?+(?:[eE][+-]?+[0-9]{{1,2}}+)?+(?![0-9])|true|false|null)"
_RUN_MEMBER = rf"{_RUN_STRING}{_RUN_WS}:{_RUN_WS}"


def or_containers_of(element: str, string: str) -> str:
    """A regular expression: `element`, or an array of them, or an object whose keys match
    `string` and whose values are them (JSON whitespace between tokens)."""
    ws = JSON_WS_PATTERN
    array = rf"\[{ws}(?:{element}(?:{ws},{ws}{element})*+{ws})?+\]"
    member = rf"{string}{ws}:{ws}{element}"
    obj = rf"\{{{ws}(?:{member}(?:{ws},{ws}{member})*+{ws})?+\}}"
    return rf"(?:{element}|{array}|{obj})"


_RUN_ITEM = or_containers_of(or_containers_of(_RUN_SCALAR, _RUN_STRING), _RUN_STRING)
ITEM_RUN = re.compile(rf"(?:{_RUN_ITEM}{_RUN_WS},{_RUN_WS})++")
RUN_ITEM_SPAN = re.compile(rf"({_RUN_ITEM}){_RUN_WS},{_RUN_WS}")  # one item of a matched run and its separator
MEMBER_RUN = re.compile(rf"(?:{_RUN_MEMBER}{_RUN_ITEM}{_RUN_WS},{_RUN_WS})++")




class Accepting:
    """The C reader's tries, told the policies it checks by json_core (this module imports
    nothing of it): the largest safe integer, and the reject a failure is returned as."""

    def __init__(self, max_safe_integer: int, reject):
        self.reject = reject

        def safe_int(literal):
            value = int(literal)
            if abs(value) > max_safe_integer:
                raise _DOUBT
            return value

        self.numbers_in_range = json.JSONDecoder(parse_constant=_refuse, parse_int=safe_int, parse_float=_finite_float)

    def value(self, u: str, i: int, end: int, levels: int):
        """(value, index after it) for the value at u[i] (before `end`) when it passes every check
        and nests at most `levels` levels deep (the value's own brackets count); (a reject, index
        after it) when a duplicate key is its only failure; else None. The checks look at the
        value's own text only, whatever lies after it in the window."""
        text = u[i:end]
        try:
            value, j = c_scan(_ACCEPTING, text, 0)
        except _Duplicate:
            # The hook runs as an object closes, after its members: a failure later in the value
            # may still come first in document order. If the value passes every other check, read
            # keeping the last of each key, the first failure is a duplicate key.
            try:
                j = c_scan(_LAST_KEY_WINS, text, 0)[1]
            except (StopIteration, _Doubt, ValueError, RecursionError):
                return None
            value = self.reject("duplicate-key", i)
        except (StopIteration, _Doubt, ValueError, RecursionError):  # JSONDecodeError is a ValueError
            return None
        if j < len(text):
            text = text[:j]
        try:
            data = text.encode("utf-8")  # fails on any surrogate unit
        except UnicodeEncodeError:
            if LONE_SURROGATE.search(text) is not None:
                return None
            data = text.encode("utf-8", "surrogatepass")
        if b"\\" in data and b"\\u" in data and _ESCAPED_SURROGATE.search(text) is not None:  # (memchr first)
            return None
        # Only a literal with 16 digits in a row, or an exponent of three digits, can be out of
        # range: then the value is read again with a hook on every number (a Python call each).
        digits = data.translate(_DIGITS_AS_ZERO)
        if b"0" in digits and b"000" in digits and (_SIXTEEN_DIGITS in digits or _LONG_EXPONENT.search(digits) is not None):
            try:
                c_scan(self.numbers_in_range, text, 0)
            except (_Doubt, ValueError):
                return None
        if text.count("{") + text.count("[") > levels and nesting(text) > levels:
            # Valid but for its depth, and holding no duplicate key (that would have failed the
            # C reader first): the exact reader's first failure is the opener past the limit.
            # Declining instead made the exact reader try each level inside again, one C read
            # of the rest per level: a value 65 levels deep cost 65 reads of itself.
            if type(value) is not dict and type(value) is not list:
                return None
            deepest = first_opener_past(text, levels)
            return self.reject("too-deep", i + deepest), i + deepest
        return value, i + j

    def run(self, run_pattern, u: str, i: int, end: int, brackets: str):
        """(list of items or dict of members, index after the run) for a run at u[i], or
        (a reject, index) if it holds a duplicate key; None if there is no run."""
        run = run_pattern.match(u, i, end)
        if run is None:
            return None
        last_comma = u.rfind(",", i, run.end())
        try:
            value = c_scan(_ACCEPTING, brackets[0] + u[i:last_comma] + brackets[1], 0)[0]
        except _Doubt:  # only a duplicate key can fail in a run
            return self.reject("duplicate-key", i), run.end()
        return value, run.end()


# ---------------------------------------------------------------- ECMAScript layout of repr text

# repr() of a finite float is already ECMAScript's Number::toString (both are the shortest digits
# that round-trip, the nearest to x of them) except in three layouts: repr writes an integral
# float with ".0" ("5.0", "-0.0"; ECMAScript "5", "0"), and it switches to exponents below 1e-4
# and from 1e16 with at least two exponent digits, where ECMAScript is positional from 1e-6 to
# below 1e21 and pads nothing ("1e-05", "1e-07", "1e+16"; ECMAScript "0.00001", "1e-7",
# "10000000000000000"). Where one of these marks is in the text (str.find at memory speed),
# every number that has it is rewritten without a Python call per number: 20,000 of them are a
# hostile input, and a call each (or a regular-expression template, which is one in Python 3.11)
# cost 2-5 us a number. Only str.replace and literal-led regular expressions whose replacement
# is a constant run; a search that begins with a class of units would cost 25-30 ns a unit.
#
# What the rewrites rely on: in the encoder's text, wrapped in brackets, a number follows an
# opener, a separator or its sign and ends at a separator or a closer; repr writes a mantissa as
# one digit, or one nonzero digit, a dot and digits that do not end in 0 (at most 17 digits in
# all), and never an exponent of three digits that begins with 0.
REPR_MARKS = (".0", "e-0", "e+1", "e+20")


def may_hold_repr_marks(text: str) -> bool:
    """Whether one of REPR_MARKS is in the text. Each holds a 0 or a +, looked for first: a search
    for one unit goes at memory speed, one for two or more at about 1 ns a unit (a 100,000-unit
    string without digits took 0.3 ms for the four)."""
    if "0" in text and (".0" in text or "e-0" in text):
        return True
    return "+" in text and ("e+1" in text or "e+20" in text)


def is_utf8_encodable(text: str) -> bool:
    """False when the text holds a surrogate unit (C speed, where a search of a class of units
    costs several nanoseconds a unit)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
# e-05, e-06: "0.0000" goes before the mantissa (one more 0 for e-06) and the exponent goes. A
# dotted mantissa begins right before its dot; a one-digit one right before its exponent (once
# the dotted ones are rewritten, the only digit there with no digit before it). The inserted "0."
# is never matched again: each pattern begins with a nonzero digit.
_DOTTED_NEGATIVE = tuple((f"{d}.", re.compile(rf"{d}\.(?=[0-9]++e-0[56])"), f"0.0000{d}") for d in "123456789")
_UNDOTTED_NEGATIVE = tuple(
    (f"{d}e-0{e}", re.compile(rf"{d}e-0{e}(?<=[^0-9]{d}e-0{e})"), "0." + "0" * (e - 1) + d)
    for e in (5, 6)
    for d in "123456789"
)
_SIXTH_DIGIT = re.compile(r"0\.0000(?=[0-9]++e-06)")
# e+16..e+20: the dot goes and the exponent becomes a marker (a control unit: the encoder writes
# none outside strings) and e zeros; then the marker and n - 1 of the zeros go, n being the number
# of digits before the marker (1 to 17, told by a look back of fixed width for each n), which
# leaves e + 1 digits.
_POSITIVE_DOT = re.compile(r"\.(?=[0-9]++e\+(?:1[6-9]|20)(?![0-9]))")


def _padding_of(e: int):
    marker = chr(e - 15)
    excess = "|".join(rf"(?<=[^0-9][0-9]{{{n}}}{marker})0{{{n - 1}}}" for n in range(1, 18))
    return f"e+{e}", re.compile(rf"e\+{e}(?![0-9])"), marker + "0" * e, re.compile(f"{marker}(?:{excess})")


_PADDED = tuple(_padding_of(e) for e in range(16, 21))


def es_layout(text: str) -> str:
    """The encoder's text with its string literals left out, every float as repr writes it -> as
    ECMAScript does."""
    text = f"[{text}]"
    if ".0" in text:  # "5.0" -> "5", "-0.0" -> "0"
        for end in ",]}":
            text = text.replace(".0" + end, end).replace("-0" + end, "0" + end)
    if "e-0" in text:
        for digit in "789":  # "1e-07" -> "1e-7"
            text = text.replace("e-0" + digit, "e-" + digit)
        if "e-05" in text or "e-06" in text:
            text = _positional_negative(text)
    if "e+" in text and any(marker in text for marker, _, _, _ in _PADDED):
        text = _positional_positive(text)
    return text[1:-1]


def _positional_negative(text: str) -> str:
    for literal, mantissa, replacement in _DOTTED_NEGATIVE + _UNDOTTED_NEGATIVE:
        if literal in text:
            text = mantissa.sub(replacement, text)
    if "e-06" in text:
        text = _SIXTH_DIGIT.sub("0.00000", text).replace("e-06", "")
    return text.replace("e-05", "")


def _positional_positive(text: str) -> str:
    text = _POSITIVE_DOT.sub("", text)
    for marker, exponent, padding, excess in _PADDED:
        if marker in text:
            text = excess.sub("", exponent.sub(padding, text))
    return text
