"""parse_tool_calls: which tool calls in raw model text may run (SPEC.md section 5).

Precision over recall. Explicit syntaxes (tags, XML functions, json fences, a whole-response
array) are taken where they stand; a bare JSON object or `call:name{...}` counts only when it is
the whole of its line, because a model that calls a tool emits the call on its own line and a
model that talks about a call embeds it in a sentence. Reasoning inside <think> never runs.

The passes run in a fixed order over a *masked* copy of the text: each pass blanks what it has
claimed, so later passes cannot see it twice. Masking keeps offsets and line feeds intact.
"""

from operator import itemgetter

from . import json_core as jc
from .json_core import JsonReject

MAX_TEXT_UNITS = 10_000
# A verdict lists at most this many rejections, the first in verdict order, and counts the rest
# in "rejected_omitted" (SPEC.md 5.1): the verdict stays proportional to the text.
MAX_LISTED_REJECTIONS = 64

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TAGS = (
    ("<tool_call>", "</tool_call>"),
    ("<|tool_call|>", "<|/tool_call|>"),
    ("<functioncall>", "</functioncall>"),
)
FENCE = "```"
FUNCTION_OPENERS = ("<function=", '<function name="')
FUNCTION_CLOSE = "</function>"
PARAMETER_OPENERS = ("<parameter=", '<parameter name="')
PARAMETER_CLOSE = "</parameter>"
CALL_PREFIX = "call:"
FILLER = "#"
# XML values have no escaping (as in Qwen3-Coder's format), so an XML closer ends its element
# wherever it stands: XML closer searches pass this level, which no unit ever reaches.
XML_CLOSERS_ALWAYS_COUNT = 3
PLAIN_KEYS = ("name", "arguments", "parameters", "id")
OPENAI_KEYS = ("type", "function", "id")
OPENAI_FUNCTION_KEYS = ("name", "arguments", "parameters")


class Rejected(Exception):
    """A candidate was recognised as a call attempt and refused for `reason`."""

    def __init__(self, reason: str, name=None):
        super().__init__(reason)
        self.reason = reason
        self.name = name


class Verdict:
    """Collects accepted calls and rejected candidates while the passes run."""

    def __init__(self, allowed):
        self.allowed = allowed
        self.calls = []
        self.rejected = []  # (start, end, reason, format, name)

    def accept(self, name, arguments, fmt, start, end):
        self.calls.append({"name": name, "arguments": arguments, "format": fmt, "span": [start, end]})

    def reject(self, reason, fmt, start, end, name=None):
        """`name` may be a function that works the name out: only listed rejections call it."""
        self.rejected.append((start, end, reason, fmt, name))

    def take(self, fmt, start, end, make_call):
        """Run make_call() -> (name, arguments); file the call or its rejection."""
        try:
            name, arguments = make_call()
        except JsonReject as error:
            self.reject(error.reason, fmt, start, end)
        except Rejected as error:
            self.reject(error.reason, fmt, start, end, error.name)
        else:
            self.accept(name, arguments, fmt, start, end)

    def result(self):
        self.calls.sort(key=lambda call: call["span"])
        self.rejected.sort(key=itemgetter(0, 1, 2))
        listed = [
            {"format": fmt, "name": name() if callable(name) else name, "reason": reason, "span": [start, end]}
            for start, end, reason, fmt, name in self.rejected[:MAX_LISTED_REJECTIONS]
        ]
        omitted = len(self.rejected) - len(listed)
        return {"calls": self.calls, "error": None, "rejected": listed, "rejected_omitted": omitted}


def error_verdict(code):
    return {"calls": [], "error": code, "rejected": [], "rejected_omitted": 0}


# ---------------------------------------------------------------- call objects


def string_or_none(value):
    return value if isinstance(value, str) else None


def call_from_value(value, allowed):
    """Validate a decoded JSON value as one call; returns (name, arguments) or raises Rejected."""
    if not isinstance(value, dict):
        raise Rejected("not-a-call")
    if "function" in value or "type" in value:
        function = value.get("function")
        if any(key not in OPENAI_KEYS for key in value):
            raise Rejected("unknown-key", string_or_none(function.get("name")) if isinstance(function, dict) else None)
        if value.get("type") != "function" or not isinstance(function, dict):
            raise Rejected("not-a-call")
        if any(key not in OPENAI_FUNCTION_KEYS for key in function):
            raise Rejected("unknown-key", string_or_none(function.get("name")))
        value = function
    elif "name" not in value:
        raise Rejected("not-a-call")
    elif any(key not in PLAIN_KEYS for key in value):
        raise Rejected("unknown-key", string_or_none(value["name"]))
    name = value.get("name")
    if not isinstance(name, str) or name == "":
        raise Rejected("bad-name")
    if name not in allowed:
        raise Rejected("not-allowed", name)
    if "arguments" in value and "parameters" in value:
        raise Rejected("ambiguous-arguments", name)
    key = "arguments" if "arguments" in value else "parameters"
    return name, decode_arguments(value.get(key, {}), name)


def decode_arguments(arguments, name):
    """Arguments are an object, or a string holding exactly one JSON object. Never {} instead."""
    if isinstance(arguments, str):
        try:
            arguments = jc.parse_strict(arguments, 0, len(arguments))
        except JsonReject as error:
            reason = "bad-arguments" if error.reason == "invalid-json" else error.reason
            raise Rejected(reason, name) from None
    if not isinstance(arguments, dict):
        raise Rejected("bad-arguments", name)
    return arguments


def calls_from_json(verdict, u, start, end, fmt):
    """A JSON object is one call; a JSON array is a list of calls that run all or nothing."""
    try:
        value = jc.parse_strict(u, start, end)
    except JsonReject as error:
        verdict.reject(error.reason, fmt, start, end)
        return
    if not isinstance(value, list):
        verdict.take(fmt, start, end, lambda: call_from_value(value, verdict.allowed))
        return
    element_spans = array_element_spans(u, start, end)
    outcomes = []
    for item, (item_start, item_end) in zip(value, element_spans):
        try:
            outcomes.append((call_from_value(item, verdict.allowed), None, item_start, item_end))
        except Rejected as error:
            outcomes.append((None, error, item_start, item_end))
    refused = any(error for _, error, _, _ in outcomes)
    for call, error, item_start, item_end in outcomes:
        if error:
            verdict.reject(error.reason, fmt, item_start, item_end, error.name)
        elif refused:
            verdict.reject("sibling-rejected", fmt, item_start, item_end, call[0])
        else:
            verdict.accept(call[0], call[1], fmt, item_start, item_end)


def array_element_spans(u, start, end):
    """Spans of the elements of the (already validated) JSON array in u[start:end]."""
    i = jc.skip_ws(u, start, end) + 1
    spans = []
    while True:
        i = jc.skip_ws(u, i, end)
        if ord(u[i]) == jc.RBRACKET:
            return spans
        _, after = jc.read_value(u, i, end, 2)
        spans.append((i, after))
        i = jc.skip_ws(u, after, end)
        if ord(u[i]) == jc.COMMA:
            i += 1


def call_syntax_name(u, i, end):
    """Length of the tool name at u[i] in `call:NAME{`: ASCII letters, digits, _ . -"""
    k = i
    while k < end:
        c = ord(u[k])
        if not (0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A or c in (0x5F, 0x2E, 0x2D)):
            break
        k += 1
    return k - i


def call_syntax(u, start, end, allowed):
    """u[start:end] is exactly `call:NAME{...}`; returns (name, arguments)."""
    name_start = start + len(CALL_PREFIX)
    name_end = name_start + call_syntax_name(u, name_start, end)
    if name_end == name_start:
        raise Rejected("invalid-call-syntax")
    if name_end >= end or ord(u[name_end]) != jc.LBRACE:
        raise Rejected("invalid-call-syntax", u[name_start:name_end])
    name = u[name_start:name_end]
    if name not in allowed:
        raise Rejected("not-allowed", name)
    try:
        arguments, after = jc.read_value(u, name_end, end, 1)
    except JsonReject as error:
        raise Rejected(error.reason, name) from None
    if jc.skip_ws(u, after, end) != end:
        raise Rejected("invalid-call-syntax", name)
    return name, arguments


# ---------------------------------------------------------------- the text being parsed


class Text:
    """The response under parse: its raw units, a working copy that each pass blanks where it
    has claimed a region, and which units are quoted data.

    Quoted units lie inside a JSON string literal (see json_core.quoted_mask). A marker there
    (<think>, a tag, <function=...>) is part of a value, not markup, so `find` skips it; this
    keeps a call's arguments byte for byte what the model wrote. Openers that could make
    something run are skipped inside any string; tag closers and <think> only inside a closed
    string of a closed object, so an unterminated quote can neither unmask reasoning nor
    stretch a region over the markup after it; XML closers always count.
    """

    def __init__(self, raw):
        self.raw = raw
        self.quoted = jc.quoted_mask(raw)
        self.chars = list(raw)
        self.u = raw

    def blank(self, start, end, fill):
        """Overwrite [start, end) with `fill`, keeping line feeds so lines survive."""
        for k in range(start, end):
            if ord(self.chars[k]) != jc.LF:
                self.chars[k] = fill

    def commit(self):
        """Make the blanking done so far visible to the next pass."""
        self.u = "".join(self.chars)

    def find(self, word, start, end=None, quoted_from=jc.IN_STRING):
        """Next occurrence of `word` at or after `start` that does not begin in quoted data
        (units whose quoted level is `quoted_from` or more)."""
        end = len(self.u) if end is None else end
        i = self.u.find(word, start, end)
        while i != -1 and self.quoted[i] >= quoted_from:
            i = self.u.find(word, i + 1, end)
        return i


def mask_think(text):
    """Blank reasoning: <think>...</think>, an unterminated <think>, and text before a
    </think> that has no opener (templates that put <think> in the prompt)."""
    first_close = text.find(THINK_CLOSE, 0, quoted_from=jc.IN_VALUE)
    first_open = text.find(THINK_OPEN, 0, quoted_from=jc.IN_VALUE)
    i = 0
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        i = first_close + len(THINK_CLOSE)
        text.blank(0, i, " ")
    while True:
        opened = text.find(THINK_OPEN, i, quoted_from=jc.IN_VALUE)
        if opened == -1:
            break
        closed = text.find(THINK_CLOSE, opened + len(THINK_OPEN), quoted_from=jc.IN_VALUE)
        i = len(text.u) if closed == -1 else closed + len(THINK_CLOSE)
        text.blank(opened, i, " ")
    text.commit()


def ascii_lower(word):
    """Lower-case ASCII letters only: str.lower and toLowerCase disagree beyond ASCII."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in word)


def find_fences(u):
    """Closed ``` fences as (open line start, content start, content end, close line end, info)."""
    fences = []
    line_start = 0
    opener = None
    while line_start <= len(u):
        line_end = u.find("\n", line_start)
        if line_end == -1:
            line_end = len(u)
        first = jc.skip_ws(u, line_start, line_end)
        last = jc.skip_ws_back(u, first, line_end)
        if u.startswith(FENCE, first, last):
            if opener is None:
                info = ascii_lower(u[jc.skip_ws(u, first + 3, last) : last])
                opener = (line_start, min(line_end + 1, len(u)), info)
            elif last - first == 3:
                fences.append((opener[0], opener[1], line_start, line_end, opener[2]))
                opener = None
        line_start = line_end + 1
    return fences


def is_json_fence(info):
    return info in ("json", "")


# ---------------------------------------------------------------- passes


def whole_response_array(verdict, u):
    """A response that is nothing but a JSON array is a batch of calls, all or nothing."""
    start = jc.skip_ws(u, 0, len(u))
    end = jc.skip_ws_back(u, start, len(u))
    if start == end or ord(u[start]) != jc.LBRACKET:
        return False
    try:
        jc.parse_strict(u, start, end)
    except JsonReject:
        return False
    calls_from_json(verdict, u, start, end, "array")
    return True


def explicit_pass(verdict, text):
    """Tags (<tool_call>, <|tool_call|>, <functioncall>) and bare XML function elements, in
    document order: whichever opens first claims its region, and markers inside a claimed
    region are its content (an XML value may quote a tag, a tag may hold XML). An opener whose
    closer never comes, or comes after another opener of its kind, is refused on its own."""
    kinds = [*TAGS, *((opener, FUNCTION_CLOSE) for opener in FUNCTION_OPENERS)]
    closer_level = {closer: jc.IN_VALUE for _, closer in TAGS}
    closer_level[FUNCTION_CLOSE] = XML_CLOSERS_ALWAYS_COUNT
    positions = []
    for kind, (opener, _) in enumerate(kinds):
        i = text.find(opener, 0)
        while i != -1:
            positions.append((i, kind))
            i = text.find(opener, i + len(opener))
    positions.sort()
    next_same = [-1] * len(positions)  # where the next opener of the same closer starts
    last_seen = {}
    for k in range(len(positions) - 1, -1, -1):
        closer = kinds[positions[k][1]][1]
        next_same[k] = last_seen.get(closer, -1)
        last_seen[closer] = positions[k][0]
    next_close = {}  # memo per closer: searches move forward only, so the pass stays linear
    claimed_until = 0
    for k, (i, kind) in enumerate(positions):
        if i < claimed_until:
            continue
        opener, closer = kinds[kind]
        body_start = i + len(opener)
        if next_close.get(closer, 0) != -1 and next_close.get(closer, 0) < body_start:
            next_close[closer] = text.find(closer, body_start, quoted_from=closer_level[closer])
        close_at = next_close[closer]
        is_tag = kind < len(TAGS)
        fmt = "tagged" if is_tag else "xml"
        if close_at == -1 or (is_tag and next_same[k] != -1 and next_same[k] < close_at):
            verdict.reject("unclosed-tag", fmt, i, body_start)
            text.blank(i, body_start, FILLER)
            continue
        claimed_until = close_at + len(closer)
        if is_tag:
            tagged_body(verdict, text, i, body_start, close_at, claimed_until)
        else:
            verdict.take("xml", i, claimed_until, lambda: xml_call(text, i, close_at, verdict.allowed))
        text.blank(i, claimed_until, FILLER)
    text.commit()


def starts_with_function(u, i, end):
    return any(u.startswith(opener, i, end) for opener in FUNCTION_OPENERS)


def tagged_body(verdict, text, tag_start, body_start, body_end, tag_end):
    u = text.u
    start = jc.skip_ws(u, body_start, body_end)
    end = jc.skip_ws_back(u, start, body_end)
    if start == end:
        verdict.reject("empty-tag", "tagged", tag_start, tag_end)
    elif u.startswith(CALL_PREFIX, start, end):
        verdict.take("tagged-call", start, end, lambda: call_syntax(u, start, end, verdict.allowed))
    elif starts_with_function(u, start, end):
        xml_sequence(verdict, text, start, end)
    elif ord(u[start]) in (jc.LBRACE, jc.LBRACKET):
        calls_from_json(verdict, u, start, end, "tagged")
    else:
        verdict.reject("invalid-json", "tagged", start, end)


def xml_sequence(verdict, text, start, end):
    """Function elements separated by whitespace, inside one tag: all run or none does."""
    outcomes = []
    i = start
    while i < end:
        if not starts_with_function(text.u, i, end):
            outcomes.append((None, Rejected("xml-malformed"), i, end))
            break
        close_at = text.find(FUNCTION_CLOSE, i, end, quoted_from=XML_CLOSERS_ALWAYS_COUNT)
        if close_at == -1:
            outcomes.append((None, Rejected("unclosed-tag"), i, end))
            break
        stop = close_at + len(FUNCTION_CLOSE)
        try:
            outcomes.append((xml_call(text, i, close_at, verdict.allowed), None, i, stop))
        except Rejected as error:
            outcomes.append((None, error, i, stop))
        i = jc.skip_ws(text.u, stop, end)
    refused = any(error for _, error, _, _ in outcomes)
    for call, error, item_start, item_end in outcomes:
        if error:
            verdict.reject(error.reason, "xml", item_start, item_end, error.name)
        elif refused:
            verdict.reject("sibling-rejected", "xml", item_start, item_end, call[0])
        else:
            verdict.accept(call[0], call[1], "xml", item_start, item_end)


def tag_attribute(u, i, end, openers, owner=None):
    """Name in `<tag=NAME>` or `<tag name="NAME">` at u[i]; returns (name, index after '>')."""
    for opener in openers:
        if u.startswith(opener, i, end):
            quoted = opener.endswith('"')
            k = i + len(opener)
            name_start = k
            while k < end and u[k] not in ('"', ">", "<", "\n"):
                k += 1
            name = u[name_start:k]
            tail = '">' if quoted else ">"
            if name == "" or not u.startswith(tail, k, end):
                raise Rejected("xml-malformed", owner)
            return name, k + len(tail)
    raise Rejected("xml-malformed", owner)


def strip_one_newline(u, start, end):
    """Parameter values drop one leading and one trailing line break (LF or CRLF)."""
    if u.startswith("\r\n", start, end):
        start += 2
    elif u.startswith("\n", start, end):
        start += 1
    if end - start >= 2 and u.startswith("\r\n", end - 2, end):
        end -= 2
    elif end > start and u[end - 1] == "\n":
        end -= 1
    return start, end


def xml_call(text, start, body_end, allowed):
    """`<function=NAME>` + `<parameter=K>value</parameter>`*; values stay strings.

    Structure is read from the masked text, values from the raw text: a value may hold a
    markdown fence or a <think> the model meant literally (a README, a prompt)."""
    u = text.u
    name, i = tag_attribute(u, start, body_end, FUNCTION_OPENERS)
    if not jc.is_well_formed(name):
        raise Rejected("lone-surrogate")
    if name not in allowed:
        raise Rejected("not-allowed", name)
    arguments = {}
    while True:
        i = jc.skip_ws(u, i, body_end)
        if i == body_end:
            return name, arguments
        key, i = tag_attribute(u, i, body_end, PARAMETER_OPENERS, name)
        value_end = text.find(PARAMETER_CLOSE, i, body_end, quoted_from=XML_CLOSERS_ALWAYS_COUNT)
        if value_end == -1:
            raise Rejected("xml-malformed", name)
        value_start, value_stop = strip_one_newline(text.raw, i, value_end)
        value = text.raw[value_start:value_stop]
        if not (jc.is_well_formed(key) and jc.is_well_formed(value)):
            raise Rejected("lone-surrogate", name)
        if key in arguments:
            raise Rejected("duplicate-key", name)
        arguments[key] = value
        i = value_end + len(PARAMETER_CLOSE)


def fence_pass(verdict, text):
    """A json (or untagged) fence whose whole content is JSON is calls."""
    u = text.u
    for open_start, content_start, content_end, close_end, info in find_fences(u):
        if not is_json_fence(info):
            continue
        start = jc.skip_ws(u, content_start, content_end)
        end = jc.skip_ws_back(u, start, content_end)
        if start == end:
            continue
        try:
            jc.parse_strict(u, start, end)
        except JsonReject:
            continue
        calls_from_json(verdict, u, start, end, "fenced")
        text.blank(open_start, close_end, FILLER)
    text.commit()


def own_line(u, start, end):
    """True when u[start:end] is the whole of its line(s): only JSON whitespace before it and
    only JSON whitespace with at most one comma after it. Scans only the gaps around the
    candidate, so checking every candidate of a long line stays linear."""
    i = start
    while i > 0 and ord(u[i - 1]) != jc.LF and jc.is_json_ws(ord(u[i - 1])):
        i -= 1
    if i > 0 and ord(u[i - 1]) != jc.LF:
        return False
    i = skip_inline_ws(u, end)
    if i < len(u) and ord(u[i]) == jc.COMMA:
        i = skip_inline_ws(u, i + 1)
    return i == len(u) or ord(u[i]) == jc.LF


def skip_inline_ws(u, i):
    """Skip JSON whitespace other than LF: stays on the current line."""
    while i < len(u) and ord(u[i]) != jc.LF and jc.is_json_ws(ord(u[i])):
        i += 1
    return i


def call_prefix_start(u, obj_start):
    """Start of `call:NAME` right before the object at obj_start, or -1."""
    k = obj_start
    while k > 0 and call_syntax_name(u, k - 1, k) == 1:
        k -= 1
    prefix_start = k - len(CALL_PREFIX)
    if k == obj_start or prefix_start < 0 or not u.startswith(CALL_PREFIX, prefix_start):
        return -1
    return prefix_start


def narrated_name(u, start, end):
    """The name a refused candidate would have called, so a person can see what was narrated."""
    try:
        value = jc.parse_strict(u, start, end)
    except JsonReject:
        return None
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


def bare_pass(verdict, u):
    """Balanced top-level objects (and `call:NAME{...}`) that stand alone on their lines."""
    for obj_start, obj_end in jc.scan_objects(u, 0, len(u)):
        prefix_start = call_prefix_start(u, obj_start)
        if prefix_start != -1:
            start, fmt = prefix_start, "bare-call"
            make_call = lambda s=prefix_start, e=obj_end: call_syntax(u, s, e, verdict.allowed)
        else:
            start, fmt = obj_start, "bare"
            make_call = lambda s=obj_start, e=obj_end: call_from_value(jc.parse_strict(u, s, e), verdict.allowed)
        if not own_line(u, start, obj_end):
            if prefix_start != -1:
                name = u[prefix_start + len(CALL_PREFIX) : obj_start]
            else:
                name = lambda s=obj_start, e=obj_end: narrated_name(u, s, e)
            verdict.reject("not-own-line", fmt, start, obj_end, name)
            continue
        verdict.take(fmt, start, obj_end, make_call)


# ---------------------------------------------------------------- entry points


def parse_units(text_units, allowed_units):
    """The whole pipeline on unit strings; returns a verdict whose strings are unit strings."""
    if len(text_units) > MAX_TEXT_UNITS:
        return error_verdict("too-long")
    verdict = Verdict(set(allowed_units))
    text = Text(text_units)
    mask_think(text)
    if whole_response_array(verdict, text.u):
        return verdict.result()
    for open_start, _, _, close_end, info in find_fences(text.u):
        if not is_json_fence(info):
            text.blank(open_start, close_end, FILLER)  # quoted code: nothing inside it runs
    text.commit()
    explicit_pass(verdict, text)
    fence_pass(verdict, text)
    bare_pass(verdict, text.u)
    return verdict.result()
