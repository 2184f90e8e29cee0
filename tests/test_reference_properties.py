"""Hypothesis properties of the Python reference parser and repair.

Random text (surrogates included) and structured texts glued from JSON fragments, braces, quotes,
tags and line breaks: the public functions never raise, their canonical output is valid JSON that
says the same as the plain verdict and is byte-stable, and:

* repair: the actions only delete trailing commas / excess closers and append closers, and applying
  them reproduces the arguments; a strict prefix of a JSON object is never "valid", never gains a
  key, and never carries a string that the original did not contain (strings are never cut);
* parser: on generated conversations of prose, own-line calls, narrated calls, tagged, XML and
  fenced calls, the calls found are exactly the ones a reader would run, with spans that point
  at the call text.
"""

import json
import re
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolcalls import json_core as jc
from toolcalls import parser
from toolcalls import parse_tool_calls, parse_tool_calls_canonical, repair_arguments, repair_arguments_canonical

SETTINGS = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

ALLOWED = ["click", "read_page", "navigate"]
FORMATS = {"bare", "bare-call", "tagged", "tagged-call", "xml", "fenced", "array"}
PARSE_REASONS = {
    "not-own-line", "not-allowed", "not-a-call", "unknown-key", "bad-name", "bad-arguments",
    "ambiguous-arguments", "sibling-rejected", "unclosed-tag", "empty-tag", "invalid-json",
    "invalid-call-syntax", "xml-malformed", "duplicate-key", "lone-surrogate", "number-out-of-range",
    "too-deep",
}
REPAIR_REASONS = {
    "not-a-string", "too-long", "truncated-in-string", "truncated-after-comma", "truncated-after-colon",
    "truncated-after-key", "truncated-after-open", "excess-closer", "mismatched-closer", "too-deep",
    "invalid-json", "not-an-object", "duplicate-key", "lone-surrogate", "number-out-of-range",
}
JSON_WS = " \t\r\n"

ANY_CHAR = st.characters(codec=None, categories=None, exclude_categories=[])  # surrogates included
ANY_TEXT = st.text(ANY_CHAR, max_size=300)

PARSER_FRAGMENTS = [
    "{", "}", "[", "]", '"', "\\", ",", ":", " ", "\n", "\r\n", "\t", "\u2028", "\x85", "\ufeff", "\xa0",
    "<tool_call>", "</tool_call>", "<|tool_call|>", "<|/tool_call|>", "<functioncall>", "</functioncall>",
    "<function=click>", '<function name="read_page">', "<function=", "</function>", "<parameter=x>",
    '<parameter name="y">', "</parameter>", "<think>", "</think>", "```", "```json\n", "```python\n", "\n```\n",
    "call:click", "call:", '"name"', '"click"', '"arguments"', '"parameters"', '"type":"function"', '"function"',
    '{"name":"click","arguments":{"x":1}}', '{"name":"read_page"}', '{"name":"rm_rf","arguments":{}}',
    '{"x":', "1", "-", "1e999", "NaN", "true", "null", "\\u", "d800", "\ud800", "\udc00", "\U0001f600",
    "I will not run ", " here.",
]
REPAIR_FRAGMENTS = [
    "{", "}", "[", "]", '"', "\\", ",", ":", " ", "\n", "\t", "\r", "1", "-", ".", "e", "0", "23", "true",
    "null", "false", '"a"', '"b"', '"k":', '"\\u', "d800", "dc00", "\\n", '\\"', "\x1c", "\u2028", "\xa0",
    "1e999", "NaN", "9007199254740992", "\U0001f600", "\ud800",
]


def glued(fragments):
    return st.lists(st.one_of(st.sampled_from(fragments), st.text(ANY_CHAR, max_size=3)), max_size=40).map("".join)


PARSER_TEXT = st.one_of(ANY_TEXT, glued(PARSER_FRAGMENTS))
REPAIR_TEXT = st.one_of(ANY_TEXT, glued(REPAIR_FRAGMENTS))


def units(text):
    return jc.to_units(text)


def span_text(text, span):
    return jc.from_units(units(text)[span[0] : span[1]])


def strict_or_none(text):
    u = units(text)
    value = jc.parse_strict(u, 0, len(u))
    return None if isinstance(value, jc.JsonReject) else jc.to_real(value)




# ================================================================ the rejection cap


# Snippets that each make a rejection (or a call) in some pass, and what separates them.
REFUSAL_PIECES = [
    "{}", '{"name":"nope"}', '{"name":"click"}', "call:click{}", "call:x{", "<tool_call>x</tool_call>",
    "<tool_call>[{},1]</tool_call>", "<tool_call>", "<function=nope></function>", "<function=",
    "```json\n[{},2]\n```", "```\n{}\n```", "[{}]", " ", "\n", "x ", ",", "x", "call:nope{}",
]
MANY_REFUSALS = st.tuples(st.sampled_from(["", "\n", " "]), st.lists(st.sampled_from(REFUSAL_PIECES), max_size=30)).map(
    lambda parts: parts[0].join(parts[1]))


@SETTINGS
@given(st.one_of(PARSER_TEXT, MANY_REFUSALS), st.integers(min_value=0, max_value=3))
@example("```json\n[{},2]\n```\n<tool_call>x</tool_call>", 1)  # a later pass, an earlier span
@example("{}\n```json\n[{},2]\n```\n", 1)
@example("[{},{},{}]", 2)
def test_capped_rejections_are_the_first_of_the_full_list(text, cap):
    """Each pass files its rejections in verdict order, so the verdict may keep only the first
    MAX_LISTED_REJECTIONS of each pass and count the rest (parser.Verdict.begin_pass). With a
    tiny cap, the listed ones must be exactly the first of the uncapped, fully sorted list."""
    with mock.patch.object(parser, "MAX_LISTED_REJECTIONS", 10**9):
        full = parse_tool_calls(text, ALLOWED)
    with mock.patch.object(parser, "MAX_LISTED_REJECTIONS", cap):
        capped = parse_tool_calls(text, ALLOWED)
    assert capped["calls"] == full["calls"]
    assert capped["rejected"] == full["rejected"][:cap]
    assert capped["rejected_omitted"] == len(full["rejected"]) - len(capped["rejected"])


NUMBER_LITERAL = st.one_of(
    st.integers(min_value=-(10**17), max_value=10**17).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).map(lambda t: t.replace("inf", "1e999")),
    st.integers(min_value=2**53 - 3, max_value=10**16).map(str),  # 16 digits, safe or not
    st.sampled_from(["1e400", "-0", "-0.0", "1E+2", "0.5e-3", "1.", "01", "1e", "-", "2.5.5", "x"]),
)


@SETTINGS
@given(st.lists(st.tuples(NUMBER_LITERAL, st.sampled_from([",", ", ", " ,\t", ",\n", " "])), max_size=12),
       st.sampled_from(["]", "", ",]", "]x"]))
@example([("1", ","), ("9007199254740992", ","), ("2", ",")], "]")
def test_number_runs_read_as_one_by_one(items, close):
    """Arrays of number literals (and near-literals) read the same with and without the C reader,
    and so do their items' spans when asked for."""
    text = "[" + "".join(literal + separator for literal, separator in items)[:-1] + close
    units = jc.to_units(text)
    fast_spans, slow_spans = [], []
    fast = jc.parse_strict(units, 0, len(units))
    fast_with_spans = jc.parse_strict(units, 0, len(units), fast_spans)
    with mock.patch.object(jc, "_read_run", lambda *run: None), mock.patch.object(jc, "_read_accepted", lambda *value: None):
        slow = jc.parse_strict(units, 0, len(units))
        slow_with_spans = jc.parse_strict(units, 0, len(units), slow_spans)
    if isinstance(slow, jc.JsonReject):
        for refusal in (fast, fast_with_spans):
            assert refusal.reason == slow.reason
            assert refusal.at == slow.at or refusal.reason == "duplicate-key"
    else:
        assert json.dumps(fast) == json.dumps(slow) == json.dumps(fast_with_spans) == json.dumps(slow_with_spans)
        assert fast_spans == slow_spans


# ================================================================ ECMAScript numbers


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_es_number_round_trips_in_ecmascript_layout(x):
    text = jc.es_number(x)
    assert float(text) == x  # -0.0 prints "0", which reads back equal
    magnitude = abs(x)
    if x == 0:
        assert text == "0"
    elif 1e-6 <= magnitude < 1e21:
        assert re.fullmatch(r"-?[0-9]+(\.[0-9]*[1-9])?", text), text
    else:
        assert re.fullmatch(r"-?[1-9](\.[0-9]*[1-9])?e[+-][1-9][0-9]*", text), text
    # shortest round-trip digits: the same significant digits as Python's repr
    digits = re.sub(r"e.*", "", repr(magnitude)).replace(".", "").strip("0")
    assert re.sub(r"e.*", "", text).lstrip("-").replace(".", "").strip("0") == digits


# ================================================================ parser: total, well-formed, stable


@SETTINGS
@given(PARSER_TEXT)
def test_parse_never_raises_and_canonical_is_stable_json(text):
    verdict = parse_tool_calls(text, ALLOWED)
    assert set(verdict) == {"calls", "error", "rejected", "rejected_omitted"}
    assert verdict["error"] is None  # all generated texts are under the limit
    n = len(units(text))
    for call in verdict["calls"]:
        assert call["name"] in ALLOWED
        assert call["format"] in FORMATS
        assert isinstance(call["arguments"], dict)
        assert 0 <= call["span"][0] < call["span"][1] <= n
    for item in verdict["rejected"]:
        assert item["reason"] in PARSE_REASONS
        assert item["format"] in FORMATS
        assert 0 <= item["span"][0] < item["span"][1] <= n
    assert [c["span"] for c in verdict["calls"]] == sorted(c["span"] for c in verdict["calls"])
    canonical = parse_tool_calls_canonical(text, ALLOWED)
    assert canonical == parse_tool_calls_canonical(text, ALLOWED)
    assert json.loads(canonical) == verdict
    assert canonical == json.dumps(json.loads(canonical), ensure_ascii=False, separators=(",", ":"),
                                   sort_keys=True) or _has_non_bmp_keys(verdict)


def _has_non_bmp_keys(value):
    """json.dumps sorts keys by code point; JCS by UTF-16 unit: they differ only for such keys."""
    if isinstance(value, dict):
        return any(any(ord(ch) >= 0xE000 for ch in key) for key in value) or any(
            _has_non_bmp_keys(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_bmp_keys(v) for v in value)
    return False


@SETTINGS
@given(PARSER_TEXT)
def test_bare_calls_stand_alone_on_their_lines(text):
    """Every accepted bare call is the whole of its line(s), up to JSON whitespace and one comma."""
    if "think>" in text:  # reasoning is blanked to spaces, which legitimately frees a line
        return
    u = units(text)
    for call in parse_tool_calls(text, ALLOWED)["calls"]:
        if call["format"] not in ("bare", "bare-call"):
            continue
        start, end = call["span"]
        line_start = u.rfind("\n", 0, start) + 1
        assert all(ch in JSON_WS for ch in u[line_start:start])
        line_end = u.find("\n", end)
        tail = u[end : len(u) if line_end == -1 else line_end]
        stripped = tail.strip(JSON_WS)
        assert stripped in ("", ","), repr(tail)


@SETTINGS
@given(PARSER_TEXT, st.sampled_from([[], ["click"], ["read_page", "navigate"]]))
def test_only_allowed_names_run(text, allowed):
    for call in parse_tool_calls(text, allowed)["calls"]:
        assert call["name"] in allowed


# ================================================================ parser: model-based conversations

SAFE_PROSE = st.text(st.sampled_from(list("abcdefgh xyz.,!?:;'()-_=+*/%&0123456789") + ["\u00e9", "\U0001f600"]),
                     min_size=1, max_size=25)
BRACY_PROSE = st.text(st.sampled_from(list("abc {}[]\"\\'.,:()") + ["\U0001f600"]), min_size=1, max_size=25)
# JSON string content: any well-formed text, salted with markers. A marker inside a JSON string is
# data (json_core.quoted_mask): it must neither run nor be blanked out of the arguments.
MARKERS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|tool_call|>", "<functioncall>",
           "<function=click>", "</function>", "<parameter=x>", "</parameter>", "```", "```python",
           "call:click{}", "{", "}", "[", '"', "\\", "\n"]
SAFE_STRING = st.lists(st.one_of(st.sampled_from(MARKERS), st.text(st.characters(exclude_categories=["Cs"]),
                                                                   max_size=4)), max_size=4).map("".join)
KEY = st.text(st.sampled_from(list("abcdefghijk_")), min_size=1, max_size=6)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), SAFE_STRING,
                      st.floats(allow_nan=False, allow_infinity=False, width=64))
JSON_VALUE = st.recursive(JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                             st.dictionaries(KEY, inner, max_size=3)),
                          max_leaves=8)
ARGS = st.dictionaries(KEY, JSON_VALUE, max_size=4)
NAME = st.sampled_from(ALLOWED + ["rm_rf"])
# XML values come from the raw text, so they may quote tags and closed reasoning. They cannot hold
# </parameter> or </function> (the first one ends them), a raw line break at either end (one is
# stripped), or quotes: a '{"' in one value and a '"}' later on the line form a JSON-looking string
# that hides the next element's opener (fail closed, pinned in test_reference_parser.py).
XML_VALUE = st.lists(st.one_of(st.sampled_from(["<tool_call>x</tool_call>", "<think>x</think>", "```", "{", "}",
                                                "<function=click>", "call:click{}"]),
                               st.text(st.characters(exclude_characters='<"\r\n', exclude_categories=["Cs"]),
                                       max_size=6)), max_size=4).map("".join)


@st.composite
def piece(draw, prose):
    """One line-level piece of a conversation: (text, expected calls, expected narrated names,
    kind, tool name or None)."""
    kind = draw(st.sampled_from(["prose", "bare", "indented", "narrated", "tagged", "tagged-inline", "xml",
                                 "fenced", "python-fence", "bare-call"]))
    if kind == "prose":
        return draw(prose), [], [], kind, None
    name = draw(NAME)
    args = draw(ARGS)
    call_json = json.dumps({"name": name, "arguments": args}, ensure_ascii=draw(st.booleans()))
    ok = name in ALLOWED
    if kind == "bare":
        return call_json, [(name, args, "bare", call_json)] if ok else [], [], kind, name
    if kind == "indented":
        text = draw(st.sampled_from(["  ", "\t", " "])) + call_json + draw(st.sampled_from([",", " ,", "", " "]))
        return text, [(name, args, "bare", call_json)] if ok else [], [], kind, name
    if kind == "narrated":
        text = draw(prose).replace("\n", " ") + "x " + call_json + " " + draw(prose)
        return text, [], [name], kind, name
    if kind == "tagged":
        opener, closer = draw(st.sampled_from([("<tool_call>", "</tool_call>"), ("<|tool_call|>", "<|/tool_call|>"),
                                               ("<functioncall>", "</functioncall>")]))
        return opener + call_json + closer, [(name, args, "tagged", call_json)] if ok else [], [], kind, name
    if kind == "tagged-inline":  # a tag inside a sentence is narration (SPEC 5.6)
        # Words before it: blank prose would put the tag on a line of its own, a committed call
        # (hypothesis found "  <tool_call>...</tool_call>  " expected as narration).
        text = draw(prose.filter(str.strip)) + " <tool_call>" + call_json + "</tool_call> " + draw(prose)
        return text, [], [name], kind, name
    if kind == "xml":
        params = draw(st.dictionaries(KEY, XML_VALUE, max_size=3))
        body = "".join("<parameter=%s>%s</parameter>" % (k, v) for k, v in params.items())
        xml = "<function=%s>%s</function>" % (name, body)
        return xml, [(name, params, "xml", xml)] if ok else [], [], kind, name
    if kind == "fenced":
        return "```json\n" + call_json + "\n```", [(name, args, "fenced", call_json)] if ok else [], [], kind, name
    if kind == "python-fence":
        return "```python\n" + call_json + "\n```", [], [], kind, name
    # bare-call
    call_text = "call:%s%s" % (name, json.dumps(args))
    return call_text, [(name, args, "bare-call", call_text)] if ok else [], [], kind, name


def conversation(prose):
    return st.lists(piece(prose), min_size=1, max_size=6)


# The kinds of piece that are committed call attempts: one of them refused (its name is not
# allowed) stops every call of the conversation (SPEC 5.12). Narration and quoted code are not.
COMMITTED = ("bare", "indented", "tagged", "xml", "fenced", "bare-call")


def assemble(pieces):
    text = "\n".join(p[0] for p in pieces)
    expected = [call for p in pieces for call in p[1]]
    narrated = [name for p in pieces for name in p[2]]
    return text, expected, narrated


def refused_attempts(pieces):
    """How many pieces are committed attempts of a tool that is not allowed."""
    return sum(1 for p in pieces if p[3] in COMMITTED and p[4] not in ALLOWED)


def _same_args(actual, expected):
    # compare through the canonical JSON model (1.0 == 1, -0.0 == 0)
    return json.loads(json.dumps(actual)) == json.loads(json.dumps(expected))


@pytest.mark.slow
@SETTINGS
@given(conversation(SAFE_PROSE))
def test_conversations_yield_exactly_the_committed_calls(pieces):
    text, expected, narrated = assemble(pieces)
    if len(units(text)) > 10000:
        return
    if refused_attempts(pieces):
        expected = []  # all or nothing per response
    verdict = parse_tool_calls(text, ALLOWED)
    got = [(c["name"], c["format"], span_text(text, c["span"])) for c in verdict["calls"]]
    assert got == [(name, fmt, call_text) for name, _, fmt, call_text in expected]
    for call, (_, args, _, _) in zip(verdict["calls"], expected):
        assert _same_args(call["arguments"], args)
    narrated_rejections = [r["name"] for r in verdict["rejected"] if r["reason"] == "not-own-line"]
    assert narrated_rejections == narrated


@pytest.mark.slow
@SETTINGS
@given(conversation(BRACY_PROSE))
def test_conversations_with_prose_braces_never_run_anything_else(pieces):
    """Prose braces and quotes may hide a call (fail closed) but never change or invent one."""
    text, expected, _ = assemble(pieces)
    if len(units(text)) > 10000:
        return
    verdict = parse_tool_calls(text, ALLOWED)
    emitted = [(name, fmt, call_text) for name, _, fmt, call_text in expected]
    for call in verdict["calls"]:
        key = (call["name"], call["format"], span_text(text, call["span"]))
        assert key in emitted
        args = expected[emitted.index(key)][1]
        assert _same_args(call["arguments"], args)


@SETTINGS
@given(SAFE_PROSE, NAME, ARGS, SAFE_PROSE)
def test_a_call_inside_a_sentence_never_runs(before, name, args, after):
    call_json = json.dumps({"name": name, "arguments": args})
    text = before.replace("\n", " ") + "x " + call_json + " " + after
    verdict = parse_tool_calls(text, ALLOWED)
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"]) for r in verdict["rejected"]] == [(name, "not-own-line")]


@SETTINGS
@given(st.integers(0, 2000), NAME, ARGS)
def test_stray_open_braces_never_hide_a_later_own_line_call(count, name, args):
    call_json = json.dumps({"name": name, "arguments": args})
    text = "{" * count + "\n" + call_json
    if len(units(text)) > 10000:
        return
    verdict = parse_tool_calls(text, ALLOWED)
    if name in ALLOWED:
        assert [c["name"] for c in verdict["calls"]] == [name]
        assert span_text(text, verdict["calls"][0]["span"]) == call_json
    else:
        assert verdict["calls"] == []


# ================================================================ repair: total, well-formed, stable


def apply_actions(raw, actions):
    u = units(raw)
    out = []
    i = 0
    appended = ""
    for action in actions:
        at, text = action["at"], units(action["text"])
        assert at >= i
        if action["op"] == "delete":
            assert u[at : at + len(text)] == text
            out.append(u[i:at])
            i = at + len(text)
        else:
            assert action["op"] == "append" and at == len(u)
            appended += text
    out.append(u[i:])
    return jc.from_units("".join(out) + appended)


def check_actions(raw, verdict):
    actions = verdict["actions"]
    appends = [a for a in actions if a["op"] == "append"]
    assert len(appends) <= 1
    if appends:
        assert actions[-1] is appends[0]
        assert appends[0]["text"] and set(appends[0]["text"]) <= set("}]")
    for action in actions:
        if action["op"] == "delete":
            text = action["text"]
            assert text == "," or (text[0] in "}]" and text[-1] in "}]" and set(text) <= set("}]" + JSON_WS))
    repaired = apply_actions(raw, actions)
    assert strict_or_none(repaired) == verdict["arguments"]


@SETTINGS
@given(REPAIR_TEXT)
def test_repair_never_raises_and_is_consistent(raw):
    verdict = repair_arguments(raw)
    assert set(verdict) == {"actions", "arguments", "reason", "status"}
    canonical = repair_arguments_canonical(raw)
    assert canonical == repair_arguments_canonical(raw)
    assert json.loads(canonical) == verdict
    if verdict["status"] == "rejected":
        assert verdict["reason"] in REPAIR_REASONS
        assert verdict["actions"] == [] and verdict["arguments"] is None
        return
    assert verdict["reason"] is None
    assert isinstance(verdict["arguments"], dict)
    if verdict["status"] == "valid":
        assert verdict["actions"] == []
        assert strict_or_none(raw) == verdict["arguments"]
    else:
        assert verdict["status"] == "repaired" and verdict["actions"]
        assert strict_or_none(raw) is None
    check_actions(raw, verdict)


@SETTINGS
@given(REPAIR_TEXT)
def test_valid_exactly_when_the_strict_reader_accepts_an_object(raw):
    value = strict_or_none(raw)
    verdict = repair_arguments(raw)
    if isinstance(value, dict):
        assert verdict["status"] == "valid"
        assert verdict["arguments"] == value
    else:
        assert verdict["status"] != "valid"


# ---------------------------------------------------------------- repair on serialised objects

REPAIR_STRING = st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
REPAIR_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), REPAIR_STRING,
                        st.floats(allow_nan=False, allow_infinity=False, width=64))
REPAIR_VALUE = st.recursive(REPAIR_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(REPAIR_STRING, inner, max_size=3)),
                            max_leaves=10)
REPAIR_OBJECT = st.dictionaries(REPAIR_STRING, REPAIR_VALUE, max_size=4)


def leaves(value, strings, ints, keys):
    if isinstance(value, dict):
        for key, item in value.items():
            keys.add(key)
            leaves(item, strings, ints, keys)
    elif isinstance(value, list):
        for item in value:
            leaves(item, strings, ints, keys)
    elif isinstance(value, str):
        strings.add(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        ints.add(value)


NUMBER_LITERAL = re.compile(r"-?[0-9][0-9.eE+-]*")


def ends_inside_string(text):
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
    return in_string


@pytest.mark.slow
@SETTINGS
@given(REPAIR_OBJECT, st.booleans(), st.sampled_from([None, 0, 1, 2]))
def test_prefixes_of_an_object_never_invent_anything(obj, ascii_only, indent):
    full = json.dumps(obj, ensure_ascii=ascii_only, indent=indent)
    whole = repair_arguments(full)
    assert whole["status"] == "valid"
    assert whole["arguments"] == obj
    strings, ints, keys = set(), set(), set()
    leaves(obj, strings, ints, keys)
    literals = NUMBER_LITERAL.findall(full)
    for k in range(len(full)):
        prefix = full[:k]
        verdict = repair_arguments(prefix)
        assert verdict["status"] != "valid", prefix  # a strict prefix is never a complete object
        tail = prefix.rstrip(JSON_WS)
        if ends_inside_string(prefix):
            assert verdict["reason"] == "truncated-in-string", prefix
            continue
        if tail.endswith(","):
            assert verdict["reason"] == "truncated-after-comma", prefix
        elif tail.endswith(":"):
            assert verdict["reason"] == "truncated-after-colon", prefix
        elif tail.endswith(("{", "[")):
            assert verdict["reason"] == "truncated-after-open", prefix
        if verdict["status"] != "repaired":
            continue
        check_actions(prefix, verdict)
        got_strings, got_ints, got_keys = set(), set(), set()
        leaves(verdict["arguments"], got_strings, got_ints, got_keys)
        assert got_keys <= keys, prefix
        assert got_strings <= strings | keys, prefix  # strings are never cut short
        for value in got_ints:  # a number may stop early, but only inside a literal of the original
            assert any(lit.startswith(str(value)) or lit.startswith("-" + str(value)) for lit in literals), prefix


def _serialise_with_noise(draw, value):
    """JSON text of `value` with random trailing commas before closers and random JSON whitespace."""
    ws = st.sampled_from(["", " ", "\n", "\t", "\r\n  "])
    if isinstance(value, dict):
        parts = ["%s%s:%s%s" % (draw(ws), json.dumps(k), draw(ws), _serialise_with_noise(draw, v))
                 for k, v in value.items()]
        comma = "," + draw(ws) if parts and draw(st.booleans()) else ""
        return "{" + ",".join(parts) + comma + draw(ws) + "}"
    if isinstance(value, list):
        parts = [draw(ws) + _serialise_with_noise(draw, v) for v in value]
        comma = "," + draw(ws) if parts and draw(st.booleans()) else ""
        return "[" + ",".join(parts) + comma + draw(ws) + "]"
    return json.dumps(value)


@SETTINGS
@given(REPAIR_OBJECT, st.data())
def test_trailing_commas_and_excess_closers_are_removed_without_touching_values(obj, data):
    text = _serialise_with_noise(data.draw, obj)
    excess = data.draw(st.text(st.sampled_from(["}", "]", " ", "\n"]), max_size=6))
    if excess.strip(JSON_WS):
        excess = excess.lstrip(JSON_WS)
    raw = text + excess
    verdict = repair_arguments(raw)
    assert verdict["status"] in ("valid", "repaired"), raw
    assert verdict["arguments"] == obj
    check_actions(raw, verdict)
    assert not any(a["op"] == "append" for a in verdict["actions"])


@SETTINGS
@given(REPAIR_OBJECT, st.data())
def test_cutting_an_object_after_a_complete_value_is_closed_innermost_first(obj, data):
    """Drop any number of final closers from a complete object: the repair appends exactly them."""
    full = json.dumps(obj, ensure_ascii=data.draw(st.booleans()))
    drop = data.draw(st.integers(0, len(full)))
    cut = full
    removed = ""
    while drop and cut and cut[-1] in "}]":
        removed = cut[-1] + removed
        cut = cut[:-1]
        drop -= 1
    verdict = repair_arguments(cut)
    if not removed:
        assert verdict["status"] == "valid"
        return
    if ends_inside_string(cut) or cut.rstrip(JSON_WS).endswith(("{", "[", ",", ":")):
        return  # e.g. {"a":{} -> {"a":{ : needs a guess
    assert verdict["status"] == "repaired", cut
    assert verdict["actions"] == [{"at": len(units(cut)), "op": "append", "text": removed}]
    assert verdict["arguments"] == obj


@pytest.mark.parametrize("seed_raw", ['{"items": [1, 2, 3', '{"a": {"b": [{"c": [1, 2'])
def test_seed_rows_hold_for_the_property_helpers(seed_raw):
    # keeps the helpers above honest on a known input
    verdict = repair_arguments(seed_raw)
    check_actions(seed_raw, verdict)
    assert not ends_inside_string(seed_raw)
