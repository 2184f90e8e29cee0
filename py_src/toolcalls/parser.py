"""parse_tool_calls: which tool calls in raw model text may run (SPEC.md section 5).

Precision over recall. A call counts only when it stands on its own line, because a model that
calls a tool emits the call on its own line and a model that talks about a call embeds it in a
sentence: a bare JSON object or `call:name{...}` must be the whole of its line, a tag or XML
function must share its line with nothing but other tags (json fences and a whole-response
array are lines of their own). Reasoning inside <think> never runs. And a response runs all of
its calls or none: one refused attempt, an unsafe key, or more than 16 calls stop them all.

The passes run in a fixed order over a *masked* copy of the text: each pass blanks what it has
claimed, so later passes cannot see it twice. Masking keeps offsets and line feeds intact.
"""

import re
from operator import itemgetter

from . import json_core as jc
from .json_core import JsonReject

MAX_TEXT_UNITS = 10_000
# More calls than this in one response refuse the whole response (too-many-calls, SPEC.md 5.12).
MAX_CALLS = 16
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
PLAIN_KEYS = frozenset(("name", "arguments", "parameters", "id"))
OPENAI_KEYS = frozenset(("type", "function", "id"))
OPENAI_FUNCTION_KEYS = frozenset(("name", "arguments", "parameters"))
# Keys that let a JS consumer who merges arguments into an object (assignment, Object.assign)
# reach a prototype: a call whose arguments hold one at any depth is refused (unsafe-key).
UNSAFE_KEYS = ("__proto__", "constructor", "prototype")
# Only a call whose text holds one of these can hold an unsafe key: the key itself, or a \u
# escape that could spell it. The text is searched first (at memory speed), the arguments only then.
UNSAFE_KEY_MARKS = (*UNSAFE_KEYS, "\\u")
# Formats of explicit syntax: every refusal in them is a committed call attempt (SPEC.md 5.12).
EXPLICIT_FORMATS = frozenset(("array", "tagged", "tagged-call", "xml"))
# Refusals that are never attempts: narration, and the consequence of another refusal.
NOT_ATTEMPTS = frozenset(("not-own-line", "sibling-rejected"))


class Rejected:
    """A candidate was recognised as a call attempt and refused for `reason`. Validators return
    it in place of a call (name, arguments), as the JSON reader returns a JsonReject: hostile
    text can hold thousands of refused candidates, and an exception for each is slow.

    `attempt` is False for text that has no call's shape (JSON that is not an object with a
    name, or text that breaks JSON's grammar): outside explicit syntax such a refusal is data,
    not a committed attempt."""

    __slots__ = ("reason", "name", "attempt")

    def __init__(self, reason: str, name=None, attempt=True):
        self.reason = reason
        self.name = name
        self.attempt = attempt


# A Rejected is never changed once made, so the commonest refusal, which names no tool, is one
# shared object (an array can hold thousands of elements that are not calls).
NOT_A_CALL = Rejected("not-a-call", attempt=False)


class Verdict:
    """Collects accepted calls and rejected candidates while the passes run."""

    def __init__(self, allowed, raw):
        self.allowed = allowed
        self.raw = raw
        self.calls = []
        self.rejected = []  # (start, end, reason, format, name)
        self.unlisted = 0  # rejections only counted (see begin_pass)
        self.filed_in_pass = 0
        self.narrating = False  # inside explicit syntax that does not stand on its own line
        self.attempt_refused = False  # a committed call attempt was refused: nothing runs

    def begin_pass(self):
        """Every pass files its rejections in verdict order (span, then reason), so once a pass
        has filed MAX_LISTED_REJECTIONS of them, its later ones can never be listed: they are
        only counted. A flood of refused candidates then costs little more than finding them."""
        self.filed_in_pass = 0

    def lists_more(self):
        """Whether a rejection filed now may be listed; if not, only the count of it matters,
        so a pass may skip working out its reason or name (see begin_pass)."""
        return self.filed_in_pass < MAX_LISTED_REJECTIONS

    def count_unlisted(self, count):
        """File `count` rejections that lists_more() says cannot be listed."""
        self.unlisted += count

    def is_attempt(self, reason, fmt, attempt=True):
        """Whether a refusal is of a committed call attempt (SPEC.md 5.12): any refusal in
        explicit syntax, and one of a candidate with a call's shape elsewhere; never narration
        or a sibling-rejected consequence."""
        return not self.narrating and reason not in NOT_ATTEMPTS and (attempt or fmt in EXPLICIT_FORMATS)

    def accept(self, name, arguments, fmt, start, end):
        if self.narrating:
            self.reject("not-own-line", fmt, start, end, name)
            return
        self.calls.append({"name": name, "arguments": arguments, "format": fmt, "span": [start, end]})

    def reject(self, reason, fmt, start, end, name=None, attempt=True):
        """`name` may be a function that works the name out: only listed rejections call it.
        While narrating, every refusal is filed as not-own-line, its span, format and name kept."""
        if not (self.attempt_refused or self.narrating) and self.is_attempt(reason, fmt, attempt):  # (once is enough)
            self.attempt_refused = True
        if self.narrating:
            reason = "not-own-line"
        if not self.lists_more():
            self.unlisted += 1
            return
        self.filed_in_pass += 1
        self.rejected.append((start, end, reason, fmt, name))

    def file(self, fmt, start, end, outcome):
        """File a validator's outcome: a call (name, arguments) or a Rejected."""
        if isinstance(outcome, Rejected):
            self.reject(outcome.reason, fmt, start, end, outcome.name, outcome.attempt)
        else:
            self.accept(outcome[0], outcome[1], fmt, start, end)

    def judge_response(self):
        """The rules for the response as a whole (SPEC.md 5.12), once every pass has run: a call
        whose arguments hold an unsafe key is refused; then, if a committed attempt was refused,
        every call is refused as sibling-rejected, or else, past MAX_CALLS calls, as
        too-many-calls. All or nothing: the calls that may run are every call, or none."""
        if not self.calls:
            return
        calls = []
        marked = may_hold_unsafe_key(self.raw, 0, len(self.raw))  # most texts have no mark at all
        for call in self.calls:
            start, end = call["span"]
            if marked and may_hold_unsafe_key(self.raw, start, end) and holds_unsafe_key(call["arguments"]):
                self.reject("unsafe-key", call["format"], start, end, call["name"])
            else:
                calls.append(call)
        if self.attempt_refused:
            reason = "sibling-rejected"
        elif len(calls) > MAX_CALLS:
            reason = "too-many-calls"
        else:
            self.calls = calls
            return
        self.calls = []
        self.rejected.extend((call["span"][0], call["span"][1], reason, call["format"], call["name"]) for call in calls)

    def result(self):
        self.judge_response()
        self.calls.sort(key=itemgetter("span"))
        self.rejected.sort(key=itemgetter(0, 1, 2))
        listed = [
            {"format": fmt, "name": name() if callable(name) else name, "reason": reason, "span": [start, end]}
            for start, end, reason, fmt, name in self.rejected[:MAX_LISTED_REJECTIONS]
        ]
        omitted = len(self.rejected) - len(listed) + self.unlisted
        return {"calls": self.calls, "error": None, "rejected": listed, "rejected_omitted": omitted}


def error_verdict(code):
    return {"calls": [], "error": code, "rejected": [], "rejected_omitted": 0}


# ---------------------------------------------------------------- call objects


def string_or_none(value):
    return value if isinstance(value, str) else None


def has_only_keys(obj, keys):
    """True when every key of `obj` is one of `keys` (a frozenset)."""
    return obj.keys() <= keys


def call_from_value(value, allowed):
    """Validate a decoded JSON value as one call; returns (name, arguments) or a Rejected."""
    if not isinstance(value, dict):
        return NOT_A_CALL
    if "function" in value or "type" in value:
        function = value.get("function")
        if not has_only_keys(value, OPENAI_KEYS):
            return Rejected("unknown-key", string_or_none(function.get("name")) if isinstance(function, dict) else None)
        if value.get("type") != "function" or not isinstance(function, dict):
            return NOT_A_CALL
        if not has_only_keys(function, OPENAI_FUNCTION_KEYS):
            return Rejected("unknown-key", string_or_none(function.get("name")))
        value = function
    elif "name" not in value:
        return NOT_A_CALL
    elif not has_only_keys(value, PLAIN_KEYS):
        return Rejected("unknown-key", string_or_none(value["name"]))
    name = value.get("name")
    if not isinstance(name, str) or name == "":
        return Rejected("bad-name")
    if name not in allowed:
        return Rejected("not-allowed", name)
    if "arguments" in value:
        if "parameters" in value:
            return Rejected("ambiguous-arguments", name)
        arguments = value["arguments"]
    elif "parameters" in value:
        arguments = value["parameters"]
    else:
        return name, {}  # no arguments: an empty object of the call's own
    arguments = decode_arguments(arguments, name)
    return arguments if isinstance(arguments, Rejected) else (name, arguments)


def call_from_text(u, start, end, allowed):
    """u[start:end] strictly parsed, then validated as one call: (name, arguments) or a Rejected.
    Text that breaks JSON's grammar has no call's shape: that refusal is not an attempt."""
    value = jc.parse_strict(u, start, end)
    if isinstance(value, JsonReject):
        return Rejected(value.reason, attempt=value.reason != "invalid-json")
    return call_from_value(value, allowed)


def may_hold_unsafe_key(raw, start, end):
    """False when raw[start:end] cannot hold an unsafe key: no such word and no \\u escape in it."""
    return any(raw.find(mark, start, end) != -1 for mark in UNSAFE_KEY_MARKS)


def holds_unsafe_key(value):
    """True when an object at any depth of `value` has one of UNSAFE_KEYS."""
    if isinstance(value, dict):
        if any(key in value for key in UNSAFE_KEYS):
            return True
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return False
    return any(holds_unsafe_key(item) for item in items if isinstance(item, (dict, list)))


def decode_arguments(arguments, name):
    """Arguments are an object, or a string holding exactly one JSON object. Never {} instead."""
    if isinstance(arguments, str):
        arguments = jc.parse_strict(arguments, 0, len(arguments))
        if isinstance(arguments, JsonReject):
            return Rejected("bad-arguments" if arguments.reason == "invalid-json" else arguments.reason, name)
    if not isinstance(arguments, dict):
        return Rejected("bad-arguments", name)
    return arguments


def calls_from_json(verdict, u, start, end, fmt):
    """A JSON object is one call; a JSON array is a list of calls that run all or nothing."""
    spans = []
    value = jc.parse_strict(u, start, end, spans)
    if isinstance(value, JsonReject):
        verdict.reject(value.reason, fmt, start, end)
        return
    file_calls(verdict, value, spans, start, end, fmt)


def file_calls(verdict, value, spans, start, end, fmt):
    """File the calls of a JSON value read from u[start:end]; `spans` are its elements' spans if
    it is an array."""
    if not isinstance(value, list):
        verdict.file(fmt, start, end, call_from_value(value, verdict.allowed))
        return
    file_all_or_nothing(verdict, [call_from_value(item, verdict.allowed) for item in value], spans, fmt)


def file_all_or_nothing(verdict, outcomes, spans, fmt):
    """File the outcomes of items that run together, the k-th spanning spans[k]: if any is
    refused, the calls among them are refused as sibling-rejected."""
    refused = any(isinstance(outcome, Rejected) for outcome in outcomes)
    if refused and any(isinstance(o, Rejected) and verdict.is_attempt(o.reason, fmt, o.attempt) for o in outcomes):
        verdict.attempt_refused = True  # (the refused one may be among those only counted below)
    for k, outcome in enumerate(outcomes):
        if refused and not verdict.lists_more():  # the rest are all refused, and only counted
            verdict.count_unlisted(len(outcomes) - k)
            return
        item_start, item_end = spans[k]
        if refused and not isinstance(outcome, Rejected):
            verdict.reject("sibling-rejected", fmt, item_start, item_end, outcome[0])
        else:
            verdict.file(fmt, item_start, item_end, outcome)


def call_syntax_name(u, i, end):
    """Length of the tool name at u[i] in `call:NAME{`: ASCII letters, digits, _ . -"""
    k = i
    while k < end and u[k] in CALL_NAME_UNITS:
        k += 1
    return k - i


def call_syntax(u, start, end, allowed):
    """u[start:end] is exactly `call:NAME{...}`; returns (name, arguments) or a Rejected."""
    name_start = start + len(CALL_PREFIX)
    name_end = name_start + call_syntax_name(u, name_start, end)
    if name_end == name_start:
        return Rejected("invalid-call-syntax")
    if name_end >= end or ord(u[name_end]) != jc.LBRACE:
        return Rejected("invalid-call-syntax", u[name_start:name_end])
    name = u[name_start:name_end]
    if name not in allowed:
        return Rejected("not-allowed", name)
    arguments, after = jc.read_value(u, name_end, end, 1)
    if isinstance(arguments, JsonReject):
        return Rejected(arguments.reason, name)
    if jc.skip_ws(u, after, end) != end:
        return Rejected("invalid-call-syntax", name)
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
        self.raw_objects = []  # the scanner's objects of the raw text, for a bare pass that sees it unblanked
        self.quoted = jc.quoted_mask(raw, self.raw_objects)
        self.chars = None  # the working copy as a list, made at the first commit that blanks (most texts have none)
        self.u = raw
        self.blanked = 0  # how many regions have been blanked so far
        self.pending = []  # (start, end, fill) of the regions blanked since the last commit

    def blank(self, start, end, fill):
        """Overwrite [start, end) with `fill`, keeping line feeds so lines survive; the next
        commit writes it. A region right after the one noted before, with the same fill, joins
        it: a flood of 900 unclosed openers is one region to write."""
        self.blanked += 1
        pending = self.pending
        if pending and pending[-1][1] == start and pending[-1][2] == fill:
            pending[-1] = (pending[-1][0], end, fill)
        else:
            pending.append((start, end, fill))

    def commit(self):
        """Make the blanking done so far visible to the next pass. Each region is overwritten
        whole at C speed and its line feeds are put back, found in the raw text: blanking never
        writes or removes one, so they stand where they stand there."""
        if not self.pending:
            return
        if self.chars is None:
            self.chars = list(self.u)
        for start, end, fill in self.pending:
            self.chars[start:end] = fill * (end - start)
            k = self.raw.find("\n", start, end)
            while k != -1:
                self.chars[k] = "\n"
                k = self.raw.find("\n", k + 1, end)
        self.pending.clear()
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


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(word):
    """Lower-case ASCII letters only: str.lower and toLowerCase disagree beyond ASCII."""
    return word.translate(_ASCII_LOWER)


def find_fences(u):
    """Closed ``` fences as (open line start, content start, content end, close line end, info).

    Only lines that hold ``` can open or close a fence, so the search jumps from one to the next."""
    fences = []
    opener = None
    i = u.find(FENCE)
    while i != -1:
        line_start = u.rfind("\n", 0, i) + 1
        line_end = u.find("\n", i)
        if line_end == -1:
            line_end = len(u)
        if jc.skip_ws(u, line_start, i) == i:  # the line, trimmed, starts with ```
            last = jc.skip_ws_back(u, i, line_end)
            if opener is None:
                info = ascii_lower(u[jc.skip_ws(u, i + 3, last) : last])
                opener = (line_start, min(line_end + 1, len(u)), info)
            elif last - i == 3:
                fences.append((opener[0], opener[1], line_start, line_end, opener[2]))
                opener = None
        i = u.find(FENCE, line_end + 1)
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
    spans = []
    value = jc.parse_strict(u, start, end, spans)
    if isinstance(value, JsonReject):
        return False
    file_calls(verdict, value, spans, start, end, "array")
    return True


def explicit_pass(verdict, text):
    """Tags (<tool_call>, <|tool_call|>, <functioncall>) and bare XML function elements, in
    document order: whichever opens first claims its region, and markers inside a claimed
    region are its content (an XML value may quote a tag, a tag may hold XML). An opener whose
    closer never comes, or comes after another opener of its kind, is refused on its own.

    Each region is judged by the own-line rule for regions (see file_run): one that does not
    stand on its own line is narration, and whatever it holds is refused as not-own-line."""
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
    u = text.u
    # The own-line rule for regions (SPEC.md 5.6): runs of regions linked by whitespace and at
    # most one comma. Regions are filed in document order, each as soon as its judgement is
    # known: an unclosed opener at once (it needs only its run to start its line), unless a closed
    # region of its run waits before it; a closed region when its run ends (file_run). So a
    # flood of openers costs a step or two each.
    run = []  # regions of the current run waiting for its end: (start, end, kind, body start, closer or -1)
    run_starts = False  # whether the current run starts its line
    run_end = -1  # where the current run's last region ends
    for k, (i, kind) in enumerate(positions):
        if i < claimed_until:
            continue
        opener, closer = kinds[kind]
        body_start = i + len(opener)
        if next_close.get(closer, 0) != -1 and next_close.get(closer, 0) < body_start:
            next_close[closer] = text.find(closer, body_start, quoted_from=closer_level[closer])
        close_at = next_close[closer]
        is_tag = kind < len(TAGS)
        unclosed = close_at == -1 or (is_tag and next_same[k] != -1 and next_same[k] < close_at)
        if run_end != i:  # (a region right after the last one continues its run)
            before = u[i - 1] if i > 0 else "\n"  # the unit before nearly always settles both
            inline_ws = before in INLINE_WS
            if not ((inline_ws or before == ",") and run_end != -1 and links(u, run_end, i)):
                if run:
                    file_run(verdict, text, run, run_starts)
                    run = []
                run_starts = before == "\n" or (inline_ws and starts_line(u, i))
        if unclosed:
            run_end = body_start
            if run:
                run.append((i, body_start, kind, body_start, -1))
            else:
                verdict.narrating = not run_starts
                verdict.reject("unclosed-tag", "tagged" if is_tag else "xml", i, body_start)
            text.blank(i, body_start, FILLER)
            continue
        claimed_until = run_end = close_at + len(closer)
        run.append((i, claimed_until, kind, body_start, close_at))
        text.blank(i, claimed_until, FILLER)
    if run:
        file_run(verdict, text, run, run_starts)
    verdict.narrating = False
    text.commit()


def file_run(verdict, text, run, starts):
    """File the regions of a run that has ended, in order. A closed region stands on its own
    line when the run starts its line and ends it (the bare rule's tail after its last region);
    an unclosed opener needs only the first: its body is cut off, so what follows it cannot tell
    narration (a truncated call, or nested openers, are attempts). A region that does not stand
    alone is narration: whatever it holds is filed as not-own-line."""
    ends = starts and (run[-1][4] == -1 or ends_line(text.u, run[-1][1]))
    for start, end, kind, body_start, close_at in run:
        verdict.narrating = not (starts and (ends or close_at == -1))
        if close_at == -1:
            verdict.reject("unclosed-tag", "tagged" if kind < len(TAGS) else "xml", start, end)
        elif kind < len(TAGS):
            tagged_body(verdict, text, start, body_start, close_at, end)
        else:
            verdict.file("xml", start, end, xml_call(text, start, close_at, verdict.allowed))


def links(u, end, start):
    """True when only JSON whitespace other than LF, with at most one comma, lies in u[end:start]."""
    if u[end] not in LINE_TAIL_UNITS:  # the unit after a region nearly always settles it
        return False
    i = end
    while i < start and u[i] in INLINE_WS:
        i += 1
    if i < start and u[i] == ",":
        i += 1
        while i < start and u[i] in INLINE_WS:
            i += 1
    return i == start


def starts_with_function(u, i, end):
    return any(u.startswith(opener, i, end) for opener in FUNCTION_OPENERS)


def tagged_body(verdict, text, tag_start, body_start, body_end, tag_end):
    u = text.u
    start = jc.skip_ws(u, body_start, body_end)
    end = jc.skip_ws_back(u, start, body_end)
    if start == end:
        verdict.reject("empty-tag", "tagged", tag_start, tag_end)
    elif u.startswith(CALL_PREFIX, start, end):
        verdict.file("tagged-call", start, end, call_syntax(u, start, end, verdict.allowed))
    elif starts_with_function(u, start, end):
        xml_sequence(verdict, text, start, end)
    elif ord(u[start]) in (jc.LBRACE, jc.LBRACKET):
        calls_from_json(verdict, u, start, end, "tagged")
    else:
        verdict.reject("invalid-json", "tagged", start, end)


def xml_sequence(verdict, text, start, end):
    """Function elements separated by whitespace, inside one tag: all run or none does."""
    outcomes, spans = [], []
    i = start
    while i < end:
        if not starts_with_function(text.u, i, end):
            outcomes.append(Rejected("xml-malformed"))
            spans.append((i, end))
            break
        close_at = text.find(FUNCTION_CLOSE, i, end, quoted_from=XML_CLOSERS_ALWAYS_COUNT)
        if close_at == -1:
            outcomes.append(Rejected("unclosed-tag"))
            spans.append((i, end))
            break
        stop = close_at + len(FUNCTION_CLOSE)
        outcomes.append(xml_call(text, i, close_at, verdict.allowed))
        spans.append((i, stop))
        i = jc.skip_ws(text.u, stop, end)
    file_all_or_nothing(verdict, outcomes, spans, "xml")


def tag_attribute(u, i, end, openers, owner=None):
    """Name in `<tag=NAME>` or `<tag name="NAME">` at u[i]: (name, index after '>') or a Rejected."""
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
                return Rejected("xml-malformed", owner)
            return name, k + len(tail)
    return Rejected("xml-malformed", owner)


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
    attribute = tag_attribute(u, start, body_end, FUNCTION_OPENERS)
    if isinstance(attribute, Rejected):
        return attribute
    name, i = attribute
    if not jc.is_well_formed(name):
        return Rejected("lone-surrogate")
    if name not in allowed:
        return Rejected("not-allowed", name)
    arguments = {}
    while True:
        i = jc.skip_ws(u, i, body_end)
        if i == body_end:
            return name, arguments
        attribute = tag_attribute(u, i, body_end, PARAMETER_OPENERS, name)
        if isinstance(attribute, Rejected):
            return attribute
        key, i = attribute
        value_end = text.find(PARAMETER_CLOSE, i, body_end, quoted_from=XML_CLOSERS_ALWAYS_COUNT)
        if value_end == -1:
            return Rejected("xml-malformed", name)
        value_start, value_stop = strip_one_newline(text.raw, i, value_end)
        value = text.raw[value_start:value_stop]
        if not (jc.is_well_formed(key) and jc.is_well_formed(value)):
            return Rejected("lone-surrogate", name)
        if key in arguments:
            return Rejected("duplicate-key", name)
        arguments[key] = value
        i = value_end + len(PARAMETER_CLOSE)


def fence_pass(verdict, text, fences):
    """A json (or untagged) fence whose whole content is JSON is calls. `fences` are those of
    find_fences(text.u)."""
    u = text.u
    for open_start, content_start, content_end, close_end, info in fences:
        if not is_json_fence(info):
            continue
        start = jc.skip_ws(u, content_start, content_end)
        end = jc.skip_ws_back(u, start, content_end)
        if start == end:
            continue
        spans = []
        value = jc.parse_strict(u, start, end, spans)
        if isinstance(value, JsonReject):
            continue
        file_calls(verdict, value, spans, start, end, "fenced")
        text.blank(open_start, close_end, FILLER)
    text.commit()


INLINE_WS = " \t\r"  # JSON whitespace other than LF


# The own-line rule: a candidate u[start:end] is the whole of its line(s) when starts_line(u,
# start) and ends_line(u, end). Only the gaps around it are scanned, never the candidate, so
# checking every candidate of a long line stays linear.


def starts_line(u, start):
    """True when only JSON whitespace precedes u[start] on its line."""
    i = start
    while i > 0 and u[i - 1] in INLINE_WS:
        i -= 1
    return i == 0 or u[i - 1] == "\n"


# What may follow a candidate on its line: JSON whitespace other than LF, at most one comma and
# more such whitespace, then the end of the line.
LINE_TAIL = re.compile("[ \t\r]*(?:,[ \t\r]*)?(?:\n|\\Z)")
LINE_TAIL_UNITS = INLINE_WS + ","  # the units the tail may hold before its LF


def ends_line(u, end):
    """True when only JSON whitespace with at most one comma follows u[end] on its line.

    ends_line runs for every candidate, and the unit right after one nearly always settles it
    (a line feed, the end of the text, or a unit no tail holds, as in `{}{}`); the match runs only
    when that unit may begin a longer tail."""
    if end == len(u) or u[end] == "\n":
        return True
    if u[end] not in LINE_TAIL_UNITS:
        return False
    return LINE_TAIL.match(u, end) is not None


CALL_NAME_UNITS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def call_prefix_start(u, obj_start):
    """Start of `call:NAME` right before the object at obj_start, or -1."""
    k = obj_start
    while k > 0 and u[k - 1] in CALL_NAME_UNITS:
        k -= 1
    prefix_start = k - len(CALL_PREFIX)
    if k == obj_start or prefix_start < 0 or not u.startswith(CALL_PREFIX, prefix_start):
        return -1
    return prefix_start


def narrated_name(u, start, end):
    """The name a refused candidate would have called, so a person can see what was narrated."""
    value = jc.parse_strict(u, start, end)
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


def bare_pass(verdict, text):
    """Balanced top-level objects (and `call:NAME{...}`) that stand alone on their lines.

    The outcome of a candidate on its own line depends on its text alone, so a refusal is worked
    out once per distinct text (a flood of identical objects costs little); calls are validated
    each time, so no two calls share an arguments object. Once no more rejections can be listed,
    bare_pass_unlisted takes the rest of the candidates."""
    u = text.u
    refusals = {}  # candidate text -> Rejected
    objects = text.raw_objects if text.blanked == 0 else jc.scan_objects(u, 0, len(u))  # (unblanked: scanned)
    for k, (obj_start, obj_end) in enumerate(objects):
        if not verdict.lists_more():  # from here on it never does again (Verdict.begin_pass)
            bare_pass_unlisted(verdict, u, objects, k, refusals)
            return
        ends = ends_line(u, obj_end)
        starts = starts_line(u, obj_start)  # if so, no call: prefix can stand before it
        prefix_start = -1 if starts else call_prefix_start(u, obj_start)
        if prefix_start != -1:
            starts = starts_line(u, prefix_start)
        start, fmt = (prefix_start, "bare-call") if prefix_start != -1 else (obj_start, "bare")
        if not (starts and ends):
            if prefix_start != -1:
                name = u[prefix_start + len(CALL_PREFIX) : obj_start]
            else:
                name = lambda s=obj_start, e=obj_end: narrated_name(u, s, e)
            verdict.reject("not-own-line", fmt, start, obj_end, name)
            continue
        candidate = u[start:obj_end]
        outcome = refusals.get(candidate)
        if outcome is None:
            if prefix_start != -1:
                outcome = call_syntax(u, start, obj_end, verdict.allowed)
            else:
                outcome = call_from_text(u, start, obj_end, verdict.allowed)
            if isinstance(outcome, Rejected):
                refusals[candidate] = outcome
        verdict.file(fmt, start, obj_end, outcome)


def bare_pass_unlisted(verdict, u, objects, first, refusals):
    """The bare pass from objects[first] on, when no rejection filed now can be listed: what a
    refused candidate is refused for no longer matters, only that it is. So a candidate is
    validated only if it may be a call, on its own line with a text not refused before; every
    other one is counted, and the count is filed once. A flood of refused candidates then costs
    little more than the own-line checks."""
    unlisted = 0
    for obj_start, obj_end in objects[first:]:
        if not ends_line(u, obj_end):
            unlisted += 1
            continue
        start = obj_start
        if not starts_line(u, obj_start):
            start = call_prefix_start(u, obj_start)
            if start == -1 or not starts_line(u, start):
                unlisted += 1
                continue
        candidate = u[start:obj_end]
        if candidate in refusals:
            unlisted += 1
            continue
        if start != obj_start:
            outcome = call_syntax(u, start, obj_end, verdict.allowed)
        else:
            outcome = call_from_text(u, start, obj_end, verdict.allowed)
        if isinstance(outcome, Rejected):
            refusals[candidate] = outcome
            unlisted += 1
            if verdict.is_attempt(outcome.reason, "bare" if start == obj_start else "bare-call", outcome.attempt):
                verdict.attempt_refused = True
        else:
            verdict.accept(outcome[0], outcome[1], "bare" if start == obj_start else "bare-call", start, obj_end)
    verdict.count_unlisted(unlisted)


# ---------------------------------------------------------------- entry points


def parse_units(text_units, allowed_units):
    """The whole pipeline on unit strings; returns a verdict whose strings are unit strings."""
    if len(text_units) > MAX_TEXT_UNITS:
        return error_verdict("too-long")
    verdict = Verdict(set(allowed_units), text_units)
    text = Text(text_units)
    mask_think(text)
    verdict.begin_pass()
    if whole_response_array(verdict, text.u):
        return verdict.result()
    fences = find_fences(text.u)
    for open_start, _, _, close_end, info in fences:
        if not is_json_fence(info):
            text.blank(open_start, close_end, FILLER)  # quoted code: nothing inside it runs
    text.commit()
    blanked = text.blanked
    verdict.begin_pass()
    explicit_pass(verdict, text)
    if text.blanked != blanked:  # the explicit pass claimed regions: find the fences again
        fences = find_fences(text.u)
    verdict.begin_pass()
    fence_pass(verdict, text, fences)
    verdict.begin_pass()
    bare_pass(verdict, text)
    return verdict.result()
