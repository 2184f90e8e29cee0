"""Shared text and JSON machinery for the parser and the repair (SPEC.md sections 1-4).

Everything here works on *unit strings*: Python strings holding one character per UTF-16 code
unit. Offsets, lengths and key order then mean exactly what they mean in JavaScript, and the
JS twin (`json-core.js`) can mirror this module line for line. Only `to_units` and `from_units`
cross between real strings and unit strings.

One implementation of each idea: one strict JSON reader, one balanced-object scanner, one
canonical serializer (RFC 8785), used by every format that needs them.
"""

import array
import math
import re
import sys

MAX_DEPTH = 64
MAX_SAFE_INTEGER = 2**53 - 1

SPACE, TAB, LF, CR = 0x20, 0x09, 0x0A, 0x0D
QUOTE, BACKSLASH = 0x22, 0x5C
LBRACE, RBRACE, LBRACKET, RBRACKET = 0x7B, 0x7D, 0x5B, 0x5D
COMMA, COLON = 0x2C, 0x3A


class JsonReject:
    """A document broke the grammar or a policy; `reason` is a SPEC.md reason code.

    The reader returns it in place of a value rather than raising it: hostile text can hold
    thousands of refused candidates, and an exception per candidate is slow, in V8 above all."""

    __slots__ = ("reason", "at")

    def __init__(self, reason: str, at: int):
        self.reason = reason
        self.at = at


def to_units(text: str) -> str:
    """Real string -> unit string (astral characters become two surrogate units)."""
    codes = array.array("H")
    codes.frombytes(text.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        codes.byteswap()
    return "".join(map(chr, codes))


def from_units(units: str) -> str:
    """Unit string -> real string; surrogate pairs join, lone surrogates stay lone."""
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def to_real(value):
    """A decoded JSON value with unit strings -> the same value with ordinary strings."""
    if isinstance(value, str):
        return from_units(value)
    if isinstance(value, list):
        return [to_real(item) for item in value]
    if isinstance(value, dict):
        return {from_units(key): to_real(item) for key, item in value.items()}
    return value


def is_json_ws(code: int) -> bool:
    return code == SPACE or code == TAB or code == LF or code == CR


JSON_WS = " \t\n\r"


def skip_ws(u: str, i: int, end: int) -> int:
    if i < end and u[i] in JSON_WS:
        i += 1
        if i < end and u[i] in JSON_WS:  # a longer run is one regex match; most calls see 0 or 1 unit
            i = _WS_RUN.match(u, i, end).end()
    return i


def skip_ws_back(u: str, start: int, end: int) -> int:
    """Index just past the last non-whitespace unit of u[start:end] (start if none)."""
    while end > start and u[end - 1] in JSON_WS:
        end -= 1
    return end


# Units some loops must look at one by one; regex searches find them (or their absence) at C
# speed. Classes only, never \s or other built-in notions of whitespace or digits.
_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_STRING_RUN = re.compile('[^\x00-\x1f"\\\\]*')  # units a string literal holds as they are
# A whole string literal that needs neither unescaping nor a check for lone surrogates.
_PLAIN_STRING = re.compile('"[^\x00-\x1f"\\\\\ud800-\udfff]*"')
_WS_RUN = re.compile("[ \t\n\r]+")


def is_well_formed(u: str) -> bool:
    """True when every surrogate unit belongs to a high+low pair."""
    if _SURROGATE.search(u) is None:
        return True
    i, n = 0, len(u)
    while i < n:
        c = ord(u[i])
        if 0xD800 <= c <= 0xDBFF:
            if i + 1 < n and 0xDC00 <= ord(u[i + 1]) <= 0xDFFF:
                i += 2
                continue
            return False
        if 0xDC00 <= c <= 0xDFFF:
            return False
        i += 1
    return True


# ---------------------------------------------------------------- strict JSON reader


def parse_strict(u: str, start: int, end: int, spans=None):
    """Parse u[start:end] as exactly one JSON value with JSON whitespace around it; returns the
    value, or a JsonReject. If `spans` is a list and the value is an array, the (start, end) of
    each element is appended to it."""
    i = skip_ws(u, start, end)
    value, i = read_value(u, i, end, 1, spans)
    if type(value) is JsonReject:
        return value
    i = skip_ws(u, i, end)
    if i != end:
        return JsonReject("invalid-json", i)
    return value


# Each reader returns (value, index after it), or (JsonReject, index) at the first failing check.


def read_value(u: str, i: int, end: int, depth: int, spans=None):
    """Read one value at u[i]. `depth` is this value's depth; `spans`, if a list, receives the
    spans of an array's elements."""
    if i >= end:
        return JsonReject("invalid-json", i), i
    c = ord(u[i])
    if c == LBRACE or c == LBRACKET:
        if depth > MAX_DEPTH:
            return JsonReject("too-deep", i), i
        if c == LBRACE:
            return read_object(u, i, end, depth)
        return read_array(u, i, end, depth, spans)
    if c == QUOTE:
        return read_string(u, i, end)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return read_number(u, i, end)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if u.startswith(word, i, end):
            return value, i + len(word)
    return JsonReject("invalid-json", i), i


def read_object(u: str, i: int, end: int, depth: int):
    obj = {}
    i = skip_ws(u, i + 1, end)
    if i < end and ord(u[i]) == RBRACE:
        return obj, i + 1
    while True:
        if i >= end or ord(u[i]) != QUOTE:
            return JsonReject("invalid-json", i), i
        key_at = i
        key, i = read_string(u, i, end)
        if type(key) is JsonReject:
            return key, i
        i = skip_ws(u, i, end)
        if i >= end or ord(u[i]) != COLON:
            return JsonReject("invalid-json", i), i
        i = skip_ws(u, i + 1, end)
        value, i = read_value(u, i, end, depth + 1)
        if type(value) is JsonReject:
            return value, i
        if key in obj:
            return JsonReject("duplicate-key", key_at), i
        obj[key] = value
        i = skip_ws(u, i, end)
        if i < end and ord(u[i]) == COMMA:
            i = skip_ws(u, i + 1, end)
            continue
        if i < end and ord(u[i]) == RBRACE:
            return obj, i + 1
        return JsonReject("invalid-json", i), i


def read_array(u: str, i: int, end: int, depth: int, spans=None):
    items = []
    i = skip_ws(u, i + 1, end)
    if i < end and ord(u[i]) == RBRACKET:
        return items, i + 1
    while True:
        if spans is None and i < end and u[i] in "-0123456789":  # (spans are asked for arrays of calls)
            run = _read_number_run(u, i, end)
            if run is not None:
                items.extend(run[0])
                i = run[1]
        item_start = i
        value, i = read_value(u, i, end, depth + 1)
        if type(value) is JsonReject:
            return value, i
        items.append(value)
        if spans is not None:
            spans.append((item_start, i))
        i = skip_ws(u, i, end)
        if i < end and ord(u[i]) == COMMA:
            i = skip_ws(u, i + 1, end)
            continue
        if i < end and ord(u[i]) == RBRACKET:
            return items, i + 1
        return JsonReject("invalid-json", i), i


_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}


def _hex4(u: str, i: int, end: int):
    """The unit written as four hex digits at u[i], or a JsonReject."""
    if i + 4 > end:
        return JsonReject("invalid-json", i)
    value = 0
    for k in range(i, i + 4):
        c = ord(u[k])
        if 0x30 <= c <= 0x39:
            digit = c - 0x30
        elif 0x61 <= c <= 0x66:
            digit = c - 0x57
        elif 0x41 <= c <= 0x46:
            digit = c - 0x37
        else:
            return JsonReject("invalid-json", k)
        value = value * 16 + digit
    return value


def read_string(u: str, i: int, end: int):
    """Read a string literal at u[i] == '"'; the result is a unit string.

    Lone surrogates, escaped or raw, are rejected: they cannot be encoded as UTF-8 and the
    bridges between engines mangle them differently. Most literals have no escape and no
    surrogate: those are matched whole.
    """
    plain = _PLAIN_STRING.match(u, i, end)
    if plain is not None:
        return u[i + 1 : plain.end() - 1], plain.end()
    start = i
    i += 1
    parts = []
    run = i
    while True:
        i = _STRING_RUN.match(u, i, end).end()  # up to the next quote, backslash or control unit
        if i >= end:
            return JsonReject("invalid-json", i), i
        c = ord(u[i])
        if c == QUOTE:
            parts.append(u[run:i])
            text = "".join(parts)
            if not is_well_formed(text):
                return JsonReject("lone-surrogate", start), i
            return text, i + 1
        if c < 0x20:
            return JsonReject("invalid-json", i), i
        if c == BACKSLASH:
            parts.append(u[run:i])
            if i + 1 >= end:
                return JsonReject("invalid-json", i), i
            e = ord(u[i + 1])
            if e == 0x75:
                unit = _hex4(u, i + 2, end)
                if type(unit) is JsonReject:
                    return unit, i
                parts.append(chr(unit))
                i += 6
            elif e in _ESCAPES:
                parts.append(_ESCAPES[e])
                i += 2
            else:
                return JsonReject("invalid-json", i), i
            run = i


# A number: the grammar's longest match; the groups tell a missing fraction or exponent digit.
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


# Runs of array items that are number literals of one kind, each followed by a comma, are matched
# at once and read at C speed, where one by one each would cost a few Python calls: literals with a
# fraction or an exponent, read by float(), or integers of at most 15 digits, read by int() and
# always safe integers (below 10^15 < 2^53). Any other item ends a run and read_value reads it, as
# it reads the last item, which no comma follows. A literal matched here is followed by whitespace
# and a comma, so it is all of what read_number would read there, and in a matched run the
# literals are simply what lies between the separators. Possessive quantifiers (*+, ++) give
# nothing back, which changes no match here and spares the regex engine its backtracking records.
_FRACTIONAL = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++(?:[eE][+-]?[0-9]++)?+|[eE][+-]?[0-9]++)"
_INTEGER = r"-?(?:0|[1-9][0-9]{0,14}+)"
_FRACTIONAL_RUN = re.compile(rf"(?:{_FRACTIONAL}[ \t\n\r]*+,[ \t\n\r]*+)++")
_INTEGER_RUN = re.compile(rf"(?:{_INTEGER}[ \t\n\r]*+,[ \t\n\r]*+)++")
_RUN_LITERAL = re.compile("[^ \t\n\r,]++")


def _read_number_run(u: str, i: int, end: int):
    """(values, index after the run) for a run of number items at u[i], read as read_number reads
    them; None if there is none, or if one is out of range (read_value then refuses it)."""
    run = _FRACTIONAL_RUN.match(u, i, end)
    if run is not None:
        values = list(map(float, _RUN_LITERAL.findall(u, i, run.end())))
        return None if any(map(math.isinf, values)) else (values, run.end())
    run = _INTEGER_RUN.match(u, i, end)
    if run is not None:
        return list(map(int, _RUN_LITERAL.findall(u, i, run.end()))), run.end()
    return None


def read_number(u: str, i: int, end: int):
    """Read a number; integers must be safe integers and every value must be finite.

    The grammar is matched by one regular expression (C speed on a 100,000-digit literal); a `.`
    or an exponent marker right after what it matched has no digits after it, an error."""
    start = i
    m = _NUMBER.match(u, i, end)
    if m is None:  # a `-` without a digit after it
        return JsonReject("invalid-json", i + 1), i
    i = m.end()
    fraction, exponent = m.group(1), m.group(2)
    if fraction is None and exponent is None and i < end and u[i] == ".":
        return JsonReject("invalid-json", i + 1), i
    if exponent is None and i < end and u[i] in "eE":
        return JsonReject("invalid-json", i + 1), i
    literal = m.group()
    if fraction is None and exponent is None:
        digits = len(literal) - (1 if literal[0] == "-" else 0)
        if digits > 16 or abs(int(literal)) > MAX_SAFE_INTEGER:
            return JsonReject("number-out-of-range", start), i
        return int(literal), i
    value = float(literal)  # correctly rounded at any length (SPEC.md 2, "Rounding"); JS: literalToDouble
    if value in (float("inf"), float("-inf")):
        return JsonReject("number-out-of-range", start), i
    return value, i


# ---------------------------------------------------------------- balanced-object scanner


def scan_objects(u: str, start: int, end: int, strings=None) -> list:
    """Top-level balanced {...} ranges in u[start:end], in document order, in linear time.

    String- and escape-aware inside braces; quotes outside any brace are prose and ignored.
    Recovery without restarts: an object that closes inside a brace that never closes is
    promoted to top level, and a string cannot span a line feed (JSON forbids it), so a line
    feed inside a string abandons every open brace. Objects nested in a closed object are
    never candidates. If `strings` is a list, every string literal begun inside braces is
    appended to it as (start, end, closed): an unterminated one ends at the line feed or the
    end of the text that cut it off.
    """
    found = []
    opens = []  # the index of each open brace
    pending = []  # objects closed inside open braces, in document order
    in_string = False
    escaped = False
    string_start = 0

    for i in range(start, end):
        c = ord(u[i])
        if in_string:
            if c == LF:
                if strings is not None:
                    strings.append((string_start, i, False))
                found.extend(pending)  # abandon the open braces: their closed children are promoted
                pending.clear()
                opens.clear()
                in_string = False
            elif escaped:
                escaped = False
            elif c == BACKSLASH:
                escaped = True
            elif c == QUOTE:
                in_string = False
                if strings is not None:
                    strings.append((string_start, i + 1, True))
            continue
        if c == LBRACE:
            opens.append(i)
        elif c == RBRACE and opens:
            opened = opens.pop()
            # Objects nested in this one are not candidates: they are the pending ones that
            # start after its brace, at the end of the list (all of it when no brace stays open).
            if opens:
                while pending and pending[-1][0] > opened:
                    pending.pop()
                pending.append((opened, i + 1))
            else:
                pending.clear()
                found.append((opened, i + 1))
        elif c == QUOTE and opens:
            in_string = True
            escaped = False
            string_start = i
    if in_string and strings is not None:
        strings.append((string_start, end, False))
    found.extend(pending)
    return found


IN_STRING = 1  # inside any string literal begun within braces, even an unterminated one
IN_VALUE = 2  # inside a closed string literal of a closed object: certainly a JSON value


def quoted_mask(u: str) -> bytearray:
    """Per unit: 0 outside string literals, IN_STRING or IN_VALUE inside them.

    A marker written inside a JSON string is part of a value, not markup. Markers that could
    make something run (tags, XML) are ignored at IN_STRING and above; <think>, which stops
    things running, is ignored only at IN_VALUE, so a stray quote can never unmask reasoning.
    Linear: the scanner reports strings and objects in document order.
    """
    strings = []
    objects = scan_objects(u, 0, len(u), strings)
    objects.append((len(u) + 1, len(u) + 1))  # past every string, so the walk needs no bounds check
    mask = bytearray(len(u))
    k = 0
    obj_start, obj_end = objects[0]  # the first object that does not end before the string
    for string_start, string_end, closed in strings:
        while obj_end <= string_start:
            k += 1
            obj_start, obj_end = objects[k]
        stop = string_end - 1 if closed else string_end
        if stop > string_start + 1:
            in_object = obj_start < string_start and string_end <= obj_end
            level = IN_VALUE if closed and in_object else IN_STRING
            mask[string_start + 1 : stop] = bytes((level,)) * (stop - string_start - 1)
    return mask


# ---------------------------------------------------------------- canonical form (RFC 8785)


def canonical(value) -> str:
    """RFC 8785 (JCS) text of a value whose strings are unit strings; returns a unit string."""
    out = []
    _emit(value, out, _QuotedStrings())
    return "".join(out)


class _QuotedStrings(dict):
    """String -> its JSON text, worked out on first use, once per canonical text: a verdict
    repeats the same few strings (its keys, formats and tool names) once per call or rejection."""

    def __missing__(self, u: str) -> str:
        out = []
        _emit_string(u, out)
        text = self[u] = "".join(out)
        return text


_NUMBER_TYPES = {int, float}


def _emit(value, out, quoted) -> None:
    kind = type(value)  # exact types: a bool is not an int here
    if kind is str:
        out.append(quoted[value])
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        out.append("{")
        for k, key in enumerate(sorted(value)):
            if k:
                out.append(",")
            out.append(quoted[key])
            out.append(":")
            _emit(value[key], out, quoted)
        out.append("}")
    elif kind is list:
        if value and set(map(type, value)) <= _NUMBER_TYPES:  # a list of numbers: one C-speed pass
            out.append("[" + es_numbers(value) + "]")
            return
        out.append("[")
        for k, item in enumerate(value):
            if k:
                out.append(",")
            _emit(item, out, quoted)
        out.append("]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    else:
        out.append(es_number(value))


_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def _emit_string(u: str, out) -> None:
    """Escape as ECMAScript's well-formed JSON.stringify does: lone surrogates as \\uXXXX."""
    if _NEEDS_ESCAPE.search(u) is None:
        out.append('"' + u + '"')
        return
    out.append('"')
    n = len(u)
    i = 0
    while i < n:
        c = ord(u[i])
        if c in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[c])
        elif c < 0x20:
            out.append("\\u%04x" % c)
        elif 0xD800 <= c <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(u[i + 1]) <= 0xDFFF:
            out.append(u[i : i + 2])
            i += 1
        elif 0xD800 <= c <= 0xDFFF:
            out.append("\\u%04x" % c)
        else:
            out.append(u[i])
        i += 1
    out.append('"')


# repr() of a finite number is already ECMAScript's Number::toString (for a float both are the
# shortest digits that round-trip, the nearest to x of them) except in three layouts: repr writes
# an integral float with ".0" ("5.0", "-0.0"; ECMAScript "5", "0"), and it switches to exponents
# below 1e-4 and from 1e16 with at least two exponent digits, where ECMAScript is positional from
# 1e-6 to below 1e21 and pads nothing ("1e-05", "1e-07", "1e+16"; ECMAScript "0.00001", "1e-7",
# "10000000000000000"). These find the mark of each such layout in repr text, at most one in each
# number's text; _es_layout is right for every number, a mark only says where repr is not. Over a
# long text three searches, each led by its own first unit, are several times faster than one
# search for any of them; one number's short text takes the one search.
_REPR_MARKS = (re.compile(r"\.0(?![0-9])"), re.compile(r"e-0[5-9]"), re.compile(r"e\+(?:1[6-9]|20)(?![0-9])"))
_REPR_MARK = re.compile("|".join(mark.pattern for mark in _REPR_MARKS))  # any of them, in one number's text


def es_number(x) -> str:
    """ECMAScript Number::toString for a finite number (what JCS prescribes)."""
    if isinstance(x, int):
        return str(x)
    text = repr(x)
    return text if _REPR_MARK.search(text) is None else _es_layout(x)


def es_numbers(values) -> str:
    """es_number of each of a list of finite numbers, comma-joined: repr and the search for marks
    at C speed, and only the marked numbers laid out again."""
    text = ",".join(map(repr, values))
    if "." not in text and "e" not in text:  # integers only (a span, say): no mark to look for
        return text
    parts, done = [], 0
    for at in sorted(found.start() for mark in _REPR_MARKS for found in mark.finditer(text)):
        start = text.rfind(",", 0, at) + 1  # the marked number's text
        end = text.find(",", at)
        end = len(text) if end == -1 else end
        parts += (text[done:start], _es_layout(float(text[start:end])))
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _es_layout(x: float) -> str:
    """ECMAScript's layout of the digits repr finds for x."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent = (int(exp) if exp else 0) - len(frac)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mark = "+" if e >= 0 else "-"
        head = digits if k == 1 else digits[0] + "." + digits[1:]
        body = head + "e" + mark + str(abs(e))
    return sign + body
