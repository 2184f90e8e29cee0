"""Shared text and JSON machinery for the parser and the repair (SPEC.md sections 1-4).

Everything here works on *unit strings*: Python strings holding one character per UTF-16 code
unit. Offsets, lengths and key order then mean exactly what they mean in JavaScript, and the
JS twin (`json-core.js`) can mirror this module line for line. Only `to_units` and `from_units`
cross between real strings and unit strings.

One implementation of each idea: one strict JSON reader, one balanced-object scanner, one
canonical serializer (RFC 8785), used by every format that needs them.
"""

import array
import sys

MAX_DEPTH = 64
MAX_SAFE_INTEGER = 2**53 - 1

SPACE, TAB, LF, CR = 0x20, 0x09, 0x0A, 0x0D
QUOTE, BACKSLASH = 0x22, 0x5C
LBRACE, RBRACE, LBRACKET, RBRACKET = 0x7B, 0x7D, 0x5B, 0x5D
COMMA, COLON = 0x2C, 0x3A


class JsonReject(Exception):
    """A document broke the grammar or a policy; `reason` is a SPEC.md reason code."""

    def __init__(self, reason: str, at: int):
        super().__init__(reason)
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


def skip_ws(u: str, i: int, end: int) -> int:
    while i < end and is_json_ws(ord(u[i])):
        i += 1
    return i


def skip_ws_back(u: str, start: int, end: int) -> int:
    """Index just past the last non-whitespace unit of u[start:end] (start if none)."""
    while end > start and is_json_ws(ord(u[end - 1])):
        end -= 1
    return end


def is_well_formed(u: str) -> bool:
    """True when every surrogate unit belongs to a high+low pair."""
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


def parse_strict(u: str, start: int, end: int):
    """Parse u[start:end] as exactly one JSON value with JSON whitespace around it."""
    i = skip_ws(u, start, end)
    value, i = read_value(u, i, end, 1)
    i = skip_ws(u, i, end)
    if i != end:
        raise JsonReject("invalid-json", i)
    return value


def read_value(u: str, i: int, end: int, depth: int):
    """Read one value at u[i]; returns (value, index after it). `depth` is this value's depth."""
    if i >= end:
        raise JsonReject("invalid-json", i)
    c = ord(u[i])
    if c == LBRACE or c == LBRACKET:
        if depth > MAX_DEPTH:
            raise JsonReject("too-deep", i)
        if c == LBRACE:
            return read_object(u, i, end, depth)
        return read_array(u, i, end, depth)
    if c == QUOTE:
        return read_string(u, i, end)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return read_number(u, i, end)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if u.startswith(word, i, end):
            return value, i + len(word)
    raise JsonReject("invalid-json", i)


def read_object(u: str, i: int, end: int, depth: int):
    obj = {}
    i = skip_ws(u, i + 1, end)
    if i < end and ord(u[i]) == RBRACE:
        return obj, i + 1
    while True:
        if i >= end or ord(u[i]) != QUOTE:
            raise JsonReject("invalid-json", i)
        key_at = i
        key, i = read_string(u, i, end)
        i = skip_ws(u, i, end)
        if i >= end or ord(u[i]) != COLON:
            raise JsonReject("invalid-json", i)
        i = skip_ws(u, i + 1, end)
        value, i = read_value(u, i, end, depth + 1)
        if key in obj:
            raise JsonReject("duplicate-key", key_at)
        obj[key] = value
        i = skip_ws(u, i, end)
        if i < end and ord(u[i]) == COMMA:
            i = skip_ws(u, i + 1, end)
            continue
        if i < end and ord(u[i]) == RBRACE:
            return obj, i + 1
        raise JsonReject("invalid-json", i)


def read_array(u: str, i: int, end: int, depth: int):
    items = []
    i = skip_ws(u, i + 1, end)
    if i < end and ord(u[i]) == RBRACKET:
        return items, i + 1
    while True:
        value, i = read_value(u, i, end, depth + 1)
        items.append(value)
        i = skip_ws(u, i, end)
        if i < end and ord(u[i]) == COMMA:
            i = skip_ws(u, i + 1, end)
            continue
        if i < end and ord(u[i]) == RBRACKET:
            return items, i + 1
        raise JsonReject("invalid-json", i)


_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}


def _hex4(u: str, i: int, end: int) -> int:
    if i + 4 > end:
        raise JsonReject("invalid-json", i)
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
            raise JsonReject("invalid-json", k)
        value = value * 16 + digit
    return value


def read_string(u: str, i: int, end: int):
    """Read a string literal at u[i] == '"'; the result is a unit string.

    Lone surrogates, escaped or raw, are rejected: they cannot be encoded as UTF-8 and the
    bridges between engines mangle them differently.
    """
    start = i
    i += 1
    parts = []
    run = i
    while True:
        if i >= end:
            raise JsonReject("invalid-json", i)
        c = ord(u[i])
        if c == QUOTE:
            parts.append(u[run:i])
            text = "".join(parts)
            if not is_well_formed(text):
                raise JsonReject("lone-surrogate", start)
            return text, i + 1
        if c < 0x20:
            raise JsonReject("invalid-json", i)
        if c == BACKSLASH:
            parts.append(u[run:i])
            if i + 1 >= end:
                raise JsonReject("invalid-json", i)
            e = ord(u[i + 1])
            if e == 0x75:
                parts.append(chr(_hex4(u, i + 2, end)))
                i += 6
            elif e in _ESCAPES:
                parts.append(_ESCAPES[e])
                i += 2
            else:
                raise JsonReject("invalid-json", i)
            run = i
            continue
        i += 1


def _is_digit(u: str, i: int, end: int) -> bool:
    return i < end and 0x30 <= ord(u[i]) <= 0x39


def read_number(u: str, i: int, end: int):
    """Read a number; integers must be safe integers and every value must be finite."""
    start = i
    if ord(u[i]) == 0x2D:
        i += 1
    if not _is_digit(u, i, end):
        raise JsonReject("invalid-json", i)
    if ord(u[i]) == 0x30:
        i += 1
    else:
        while _is_digit(u, i, end):
            i += 1
    is_integer = True
    if i < end and ord(u[i]) == 0x2E:
        is_integer = False
        i += 1
        if not _is_digit(u, i, end):
            raise JsonReject("invalid-json", i)
        while _is_digit(u, i, end):
            i += 1
    if i < end and ord(u[i]) in (0x65, 0x45):
        is_integer = False
        i += 1
        if i < end and ord(u[i]) in (0x2B, 0x2D):
            i += 1
        if not _is_digit(u, i, end):
            raise JsonReject("invalid-json", i)
        while _is_digit(u, i, end):
            i += 1
    literal = u[start:i]
    if is_integer:
        digits = len(literal) - (1 if literal[0] == "-" else 0)
        if digits > 16 or abs(int(literal)) > MAX_SAFE_INTEGER:
            raise JsonReject("number-out-of-range", start)
        return int(literal), i
    value = float(literal)  # correctly rounded at any length (SPEC.md 2, "Rounding"); JS: literalToDouble
    if value in (float("inf"), float("-inf")):
        raise JsonReject("number-out-of-range", start)
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
    frames = []  # [open index, closed children]
    in_string = False
    escaped = False
    string_start = 0

    def abandon_open_frames():
        for frame in frames:
            found.extend(frame[1])
        frames.clear()

    for i in range(start, end):
        c = ord(u[i])
        if in_string:
            if c == LF:
                if strings is not None:
                    strings.append((string_start, i, False))
                abandon_open_frames()
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
            frames.append([i, []])
        elif c == RBRACE and frames:
            opened = frames.pop()[0]
            (frames[-1][1] if frames else found).append((opened, i + 1))
        elif c == QUOTE and frames:
            in_string = True
            escaped = False
            string_start = i
    if in_string and strings is not None:
        strings.append((string_start, end, False))
    abandon_open_frames()
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
    mask = bytearray(len(u))
    k = 0
    for string_start, string_end, closed in strings:
        while k < len(objects) and objects[k][1] <= string_start:
            k += 1
        in_object = k < len(objects) and objects[k][0] < string_start and string_end <= objects[k][1]
        level = IN_VALUE if closed and in_object else IN_STRING
        for i in range(string_start + 1, string_end - 1 if closed else string_end):
            mask[i] = level
    return mask


# ---------------------------------------------------------------- canonical form (RFC 8785)


def canonical(value) -> str:
    """RFC 8785 (JCS) text of a value whose strings are unit strings; returns a unit string."""
    out = []
    _emit(value, out)
    return "".join(out)


def _emit(value, out) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        _emit_string(value, out)
    elif isinstance(value, (int, float)):
        out.append(es_number(value))
    elif isinstance(value, list):
        out.append("[")
        for k, item in enumerate(value):
            if k:
                out.append(",")
            _emit(item, out)
        out.append("]")
    else:
        out.append("{")
        for k, key in enumerate(sorted(value)):
            if k:
                out.append(",")
            _emit_string(key, out)
            out.append(":")
            _emit(value[key], out)
        out.append("}")


_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def _emit_string(u: str, out) -> None:
    """Escape as ECMAScript's well-formed JSON.stringify does: lone surrogates as \\uXXXX."""
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


def es_number(x) -> str:
    """ECMAScript Number::toString for a finite number (what JCS prescribes)."""
    if isinstance(x, int):
        return str(x)
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
