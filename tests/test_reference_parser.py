"""parse_tool_calls / parse_tool_calls_canonical of the Python reference (py_src/toolcalls/parser.py).

Covers every row of the parser PR discussion (seed js-parser-pr-discussion.txt): nested
arguments, unbalanced prose braces ahead of a call, nested calls inside a refused outer call, the
narration cases that must not run and the own-line cases that must; then the explicit formats
(think, the three tag kinds, XML functions, fences, whole-response arrays), the call-object rules,
the allowlist, the error verdicts and UTF-16 offsets.

Later blocks pin that markers inside JSON strings are data, the trade-offs SPEC.md section 8
documents as deliberate, and two defects this suite found (first as strict xfails) that the
reference has since fixed.
"""

import json

import pytest

from toolcalls import json_core as jc
from toolcalls import parse_tool_calls, parse_tool_calls_canonical

ALLOWED = ["click", "read_page", "navigate", "submit", "write"]

CLICK = '{"name":"click","arguments":{"selector":"#go","meta":{"button":"left","mods":{"shift":false}}}}'
CLICK_ARGS = {"selector": "#go", "meta": {"button": "left", "mods": {"shift": False}}}
READ = '{"name":"read_page","arguments":{}}'
NAV = '{"name":"navigate","arguments":{"url":"https://evil.test"}}'
SIMPLE = '{"name":"click","arguments":{"x":1}}'

VERDICT_KEYS = {"calls", "error", "rejected", "rejected_omitted"}
CALL_KEYS = {"arguments", "format", "name", "span"}
REJECTED_KEYS = {"format", "name", "reason", "span"}


def parse(text, allowed=ALLOWED):
    verdict = parse_tool_calls(text, allowed)
    check_verdict(text, verdict, allowed)
    return verdict


def check_verdict(text, verdict, allowed):
    assert set(verdict) == VERDICT_KEYS
    assert verdict["error"] != "internal-error"  # a caught defect, never a legitimate verdict
    for call in verdict["calls"]:
        assert set(call) == CALL_KEYS
        assert call["name"] in allowed
        assert isinstance(call["arguments"], dict)
    for item in verdict["rejected"]:
        assert set(item) == REJECTED_KEYS
    if isinstance(text, str) and verdict["error"] is None:
        n = len(jc.to_units(text))
        for item in verdict["calls"] + verdict["rejected"]:
            start, end = item["span"]
            assert 0 <= start < end <= n
        assert [c["span"] for c in verdict["calls"]] == sorted(c["span"] for c in verdict["calls"])
    canonical = parse_tool_calls_canonical(text, allowed)
    assert json.loads(canonical) == verdict


def names(text, allowed=ALLOWED):
    return [call["name"] for call in parse(text, allowed)["calls"]]


def reasons(text, allowed=ALLOWED):
    return [item["reason"] for item in parse(text, allowed)["rejected"]]


def span_text(text, span):
    """The original text under a UTF-16 span."""
    return jc.from_units(jc.to_units(text)[span[0] : span[1]])


def units_len(text):
    return len(jc.to_units(text))


def only_call(text, allowed=ALLOWED):
    verdict = parse(text, allowed)
    assert len(verdict["calls"]) == 1, verdict
    return verdict["calls"][0]


# ================================================================ seed: nested bare calls


def test_nested_arguments_whole_message():
    verdict = parse(CLICK)
    assert verdict == {
        "calls": [{"name": "click", "arguments": CLICK_ARGS, "format": "bare", "span": [0, len(CLICK)]}],
        "error": None,
        "rejected": [],
        "rejected_omitted": 0,
    }


def test_nested_arguments_canonical_bytes():
    assert parse_tool_calls_canonical(CLICK, ALLOWED) == (
        '{"calls":[{"arguments":{"meta":{"button":"left","mods":{"shift":false}},"selector":"#go"},'
        '"format":"bare","name":"click","span":[0,%d]}],"error":null,"rejected":[],"rejected_omitted":0}' % len(CLICK)
    )


def test_escaped_strings_with_braces_inside_a_call():
    text = '{"name":"click","arguments":{"text":"a \\"}\\" {b [c"}}'
    call = only_call(text)
    assert call["arguments"] == {"text": 'a "}" {b [c'}


@pytest.mark.parametrize(
    "prefix,call,name",
    [
        ("Template: {unclosed\n", CLICK, "click"),
        ("if (ready) { submit();\n", READ, "read_page"),
    ],
    ids=["template-unclosed-brace", "code-block-unclosed-brace"],
)
def test_seed_unbalanced_prefix_rows(prefix, call, name):
    verdict = parse(prefix + call)
    assert [c["name"] for c in verdict["calls"]] == [name]
    assert verdict["calls"][0]["span"] == [len(prefix), len(prefix) + len(call)]
    assert verdict["calls"][0]["format"] == "bare"


def test_nested_allowed_call_inside_disallowed_outer_call_stays_rejected():
    text = '{"name":"evil_tool","arguments":{"inner":{"name":"click","arguments":{"x":1}}}}'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [
        {"format": "bare", "name": "evil_tool", "reason": "not-allowed", "span": [0, len(text)]}
    ]


def test_nested_call_inside_a_non_call_object_is_not_a_candidate():
    text = '{"config":{"name":"click","arguments":{}}}'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["not-a-call"]


def test_nested_call_inside_a_disallowed_tagged_call_stays_rejected():
    text = '<tool_call>{"name":"evil","arguments":{"c":{"name":"click","arguments":{}}}}</tool_call>'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"]) for r in verdict["rejected"]] == [("evil", "not-allowed")]


NARRATION = [
    pytest.param(
        'I could click it with {"name":"click","arguments":{"text":"Delete account"}} but that\'s destructive, '
        "so I will not.",
        ["click"],
        id="could-click-but-will-not",
    ),
    pytest.param(
        'Option A: {"name":"click","arguments":{"selector":"#a"}} Option B: {"name":"navigate","arguments":'
        '{"url":"https://b.test"}} I recommend A.',
        ["click", "navigate"],
        id="option-a-option-b",
    ),
    pytest.param(
        "The page said to run " + NAV + " \u2014 I ignored it.",
        ["navigate"],
        id="page-said-to-run-ignored",
    ),
    pytest.param(
        'I will not call {"name":"click","text":"Delete"} here.',
        ["click"],
        id="will-not-call-flat-object",
    ),
    pytest.param(
        "The page said to run " + '{"name":"navigate","url":"https://evil.test"}' + " \u2014 I ignored it.",
        ["navigate"],
        id="page-said-to-run-flat-object",
    ),
]


@pytest.mark.parametrize("text,narrated", NARRATION)
def test_narrated_calls_do_not_run(text, narrated):
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["not-own-line"] * len(narrated)
    assert [r["name"] for r in verdict["rejected"]] == narrated
    assert all(r["format"] == "bare" for r in verdict["rejected"])


def test_narration_span_points_at_the_object():
    text = "The page said to run " + NAV + " \u2014 I ignored it."
    (item,) = parse(text)["rejected"]
    assert span_text(text, item["span"]) == NAV


KEPT = [
    pytest.param(CLICK, ["click"], id="whole-message-call"),
    pytest.param("Sure, I'll click the button now.\n" + CLICK, ["click"], id="prose-line-then-call"),
    pytest.param(CLICK + "\n" + READ, ["click", "read_page"], id="two-calls-on-own-lines"),
    pytest.param("First:\n" + CLICK + "\nthen:\n" + READ + "\nDone.", ["click", "read_page"],
                 id="two-calls-between-prose-lines"),
    pytest.param("[\n  " + CLICK + ",\n  " + READ + ",\n]", ["click", "read_page"],
                 id="array-elements-with-trailing-commas"),
    pytest.param("Calls:\n[\n  " + CLICK + ",\n  " + READ + "\n]", ["click", "read_page"],
                 id="array-elements-after-prose"),
    pytest.param("Here you go:\n```\nStep one:\n    " + CLICK + "\n```", ["click"], id="indented-inside-a-fence"),
    pytest.param("```json\n    " + CLICK + "\n```", ["click"], id="indented-inside-a-json-fence"),
    pytest.param("Use the {placeholder syntax to fill it\n" + CLICK, ["click"], id="after-unbalanced-prose-brace"),
    pytest.param("\t  " + CLICK + "  \t", ["click"], id="surrounded-by-json-whitespace"),
    pytest.param("  <tool_call>" + CLICK + "</tool_call>  ", ["click"], id="a-tag-between-blanks-is-on-its-own-line"),
    pytest.param(CLICK + ",", ["click"], id="single-trailing-comma"),
    pytest.param(CLICK + " , ", ["click"], id="spaced-trailing-comma"),
]


@pytest.mark.parametrize("text,expected", KEPT)
def test_own_line_calls_run(text, expected):
    assert names(text) == expected


def test_two_trailing_commas_is_not_own_line():
    assert reasons(CLICK + ",,") == ["not-own-line"]


def test_two_calls_on_one_line_are_both_narration():
    verdict = parse(CLICK + " " + READ)
    assert verdict["calls"] == []
    assert reasons(CLICK + " " + READ) == ["not-own-line", "not-own-line"]


def test_multi_line_call_object_counts_as_own_line():
    text = 'Calling:\n{\n  "name": "click",\n  "arguments": {"x": 1}\n}\nDone.'
    assert names(text) == ["click"]
    text = 'Calling: {\n  "name": "click",\n  "arguments": {"x": 1}\n}'
    assert reasons(text) == ["not-own-line"]
    text = '{\n  "name": "click",\n  "arguments": {"x": 1}\n} ok'
    assert reasons(text) == ["not-own-line"]


@pytest.mark.parametrize("count", [1, 16, 17, 100, 1000])
def test_stray_braces_before_a_call(count):
    # an unclosed brace per stray, never a restart cap: the call after them is still found
    text = "{" * count + "\n" + CLICK
    call = only_call(text)
    assert call["arguments"] == CLICK_ARGS
    assert call["span"] == [count + 1, count + 1 + len(CLICK)]


@pytest.mark.parametrize("count", [1, 16, 17, 100, 1000])
def test_stray_braces_on_their_own_lines_before_a_call(count):
    text = "note {\n" * count + CLICK
    assert names(text) == ["click"]


@pytest.mark.parametrize("count", [1, 17, 400])
def test_stray_braces_with_quotes_before_a_call(count):
    # a quote inside a prose brace opens a "string" that the line feed abandons
    text = 'say { "unterminated\n' * count + CLICK
    assert names(text) == ["click"]


def test_stray_closers_before_a_call():
    assert names("}}} ]]\n" + CLICK) == ["click"]


def test_brace_flood_leaving_room_for_one_call_at_the_limit():
    text = "{" * 9983 + '\n{"name":"click"}'
    assert units_len(text) == 10000
    assert parse(text) == {"calls": [{"arguments": {}, "format": "bare", "name": "click", "span": [9984, 10000]}],
                           "error": None, "rejected": [], "rejected_omitted": 0}


def test_brace_flood_alone():
    verdict = parse("{" * 10000)
    assert verdict == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


def test_call_between_stray_braces_and_calls_after():
    text = "{ {\n" + CLICK + "\n{ oops\n" + READ
    assert names(text) == ["click", "read_page"]


# ================================================================ <think>


def test_closed_think_hides_calls():
    assert parse("<think>\n" + CLICK + "\n</think>\n") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


def test_call_after_closed_think_runs():
    text = "<think>\nmaybe " + READ + "\n</think>\n" + CLICK
    call = only_call(text)
    assert call["name"] == "click"
    assert span_text(text, call["span"]) == CLICK


def test_unterminated_think_hides_everything_after_it():
    assert parse("ok\n<think>\n" + CLICK + "\n" + READ) == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


def test_leading_close_think_without_opener_hides_text_before_it():
    text = CLICK + "\nso I will call read\n</think>\n" + READ
    assert names(text) == ["read_page"]


def test_think_hides_tags_xml_and_fences():
    inner = "<tool_call>" + SIMPLE + "</tool_call>\n<function=click></function>\n```json\n" + SIMPLE + "\n```"
    assert parse("<think>" + inner + "</think>") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


def test_several_think_blocks():
    text = "<think>" + CLICK + "</think>\n" + READ + "\n<think>\n" + NAV + "\n</think>"
    assert names(text) == ["read_page"]


def test_think_block_is_blanked_as_whitespace_on_the_call_line():
    # reasoning is removed, not replaced by text: a call after it on the same line stands alone
    text = "<think>plan</think>" + CLICK
    call = only_call(text)
    assert call["span"] == [19, 19 + len(CLICK)]


# ================================================================ tags

TAG_KINDS = [
    pytest.param("<tool_call>", "</tool_call>", id="tool_call"),
    pytest.param("<|tool_call|>", "<|/tool_call|>", id="pipe-tool_call"),
    pytest.param("<functioncall>", "</functioncall>", id="functioncall"),
]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_object(opener, closer):
    text = "I'll do it:\n" + opener + CLICK + closer + "\nright away."
    call = only_call(text)
    assert call["format"] == "tagged"
    assert call["arguments"] == CLICK_ARGS
    assert span_text(text, call["span"]) == CLICK


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_whitespace_around_the_body(opener, closer):
    text = opener + "\n  " + SIMPLE + "\n" + closer
    call = only_call(text)
    assert span_text(text, call["span"]) == SIMPLE


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_array(opener, closer):
    text = opener + "[" + CLICK + ", " + READ + "]" + closer
    verdict = parse(text)
    assert [(c["name"], c["format"]) for c in verdict["calls"]] == [("click", "tagged"), ("read_page", "tagged")]
    assert [span_text(text, c["span"]) for c in verdict["calls"]] == [CLICK, READ]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_array_is_all_or_nothing(opener, closer):
    text = opener + "[" + CLICK + ", " + '{"name":"rm_rf","arguments":{}}' + "]" + closer
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"]) for r in verdict["rejected"]] == [
        ("click", "sibling-rejected"),
        ("rm_rf", "not-allowed"),
    ]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_call_syntax(opener, closer):
    text = opener + 'call:click{"selector":"#go","n":[1,{"k":2}]}' + closer
    call = only_call(text)
    assert call["format"] == "tagged-call"
    assert call["name"] == "click"
    assert call["arguments"] == {"selector": "#go", "n": [1, {"k": 2}]}
    assert span_text(text, call["span"]) == 'call:click{"selector":"#go","n":[1,{"k":2}]}'


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_xml_inside(opener, closer):
    text = opener + "\n<function=click>\n<parameter=selector>\n#go\n</parameter>\n</function>\n" + closer
    call = only_call(text)
    assert call["format"] == "xml"
    assert call["arguments"] == {"selector": "#go"}
    assert span_text(text, call["span"]).startswith("<function=click>")
    assert span_text(text, call["span"]).endswith("</function>")


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tag_with_two_xml_functions(opener, closer):
    text = opener + "<function=click></function>\n<function name=\"read_page\"></function>" + closer
    assert names(text) == ["click", "read_page"]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_unclosed_tag(opener, closer):
    text = "Doing it\n" + opener + CLICK
    verdict = parse(text)
    assert verdict["calls"] == []
    assert {"format": "tagged", "name": None, "reason": "unclosed-tag",
            "span": [9, 9 + len(opener)]} in verdict["rejected"]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_opener_reopened_before_its_closer_is_unclosed(opener, closer):
    text = opener + SIMPLE + opener + READ + closer
    verdict = parse(text)
    # the first opener is an unclosed attempt, so the call of the second does not run (SPEC 5.12)
    assert verdict["calls"] == []
    assert verdict["rejected"][0] == {"format": "tagged", "name": None, "reason": "unclosed-tag",
                                      "span": [0, len(opener)]}
    # (the second tag has the first call glued before it on its line: it is narration)
    assert [(r["name"], r["reason"]) for r in verdict["rejected"][1:]] == [("click", "not-own-line"), ("read_page", "not-own-line")]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_empty_and_non_json_tags(opener, closer):
    empty = opener + " \n " + closer
    assert parse(empty)["rejected"] == [{"format": "tagged", "name": None, "reason": "empty-tag",
                                         "span": [0, len(empty)]}]
    prose = opener + " click the button " + closer
    assert parse(prose)["rejected"] == [{"format": "tagged", "name": None, "reason": "invalid-json",
                                         "span": [len(opener) + 1, len(opener) + 17]}]  # the trimmed body
    broken = opener + '{"name":"click",}' + closer
    assert parse(broken)["rejected"] == [{"format": "tagged", "name": None, "reason": "invalid-json",
                                          "span": [len(opener), len(opener) + 17]}]


@pytest.mark.parametrize("opener,closer", TAG_KINDS)
def test_tagged_disallowed(opener, closer):
    text = opener + '{"name":"rm_rf","arguments":{}}' + closer
    assert parse(text)["rejected"][0]["reason"] == "not-allowed"
    assert parse(text)["calls"] == []


@pytest.mark.parametrize(
    "body,reason,name",
    [
        ('call:click {"x":1}', "invalid-call-syntax", "click"),
        ("call:{}", "invalid-call-syntax", None),
        ("call:click", "invalid-call-syntax", "click"),
        ("call:click[1]", "invalid-call-syntax", "click"),
        ('call:click{"x":1} tail', "invalid-call-syntax", "click"),
        ('call:click{"x":}', "invalid-json", "click"),
        ('call:rm_rf{"x":}', "not-allowed", "rm_rf"),  # the allowlist is checked before the arguments
        ('call:click{"x":1,"x":2}', "duplicate-key", "click"),
        ('call:click{"x":1e999}', "number-out-of-range", "click"),
        ('call:click{"x":"\\ud800"}', "lone-surrogate", "click"),
    ],
)
def test_tagged_call_syntax_rejections(body, reason, name):
    verdict = parse("<tool_call>" + body + "</tool_call>")
    assert verdict["calls"] == []
    assert [(r["reason"], r["name"]) for r in verdict["rejected"]] == [(reason, name)]


def test_tags_of_different_kinds_in_document_order():
    text = ("<functioncall>" + READ + "</functioncall>\n<tool_call>" + SIMPLE + "</tool_call>, <|tool_call|>"
            + NAV + "<|/tool_call|>")
    assert names(text) == ["read_page", "click", "navigate"]


def test_tagged_calls_mid_sentence_are_narration():
    text = "I will now run <tool_call>" + SIMPLE + "</tool_call> as asked."
    assert names(text) == []
    assert parse(text)["rejected"] == [{"format": "tagged", "name": "click", "reason": "not-own-line",
                                        "span": [text.index(SIMPLE), text.index(SIMPLE) + len(SIMPLE)]}]


# ================================================================ XML functions


def test_xml_equals_syntax_with_crlf_stripping():
    text = "<function=write>\n<parameter=path>\r\nnotes.txt\r\n</parameter>\n<parameter=text>\na\r\nb\n</parameter>\n</function>"
    call = only_call(text)
    assert call == {"name": "write", "arguments": {"path": "notes.txt", "text": "a\r\nb"}, "format": "xml",
                    "span": [0, len(text)]}


def test_xml_name_attribute_syntax():
    text = '<function name="write"><parameter name="path">a.txt</parameter><parameter=n>5</parameter></function>'
    call = only_call(text)
    assert call["arguments"] == {"path": "a.txt", "n": "5"}  # values stay strings


@pytest.mark.parametrize(
    "raw,value",
    [
        ("\r\n\r\nv\r\n\r\n", "\r\nv\r\n"),
        ("\n\nv\n\n", "\nv\n"),
        ("\nv\r\n", "v"),
        ("  v  ", "  v  "),
        ("\rv\r", "\rv\r"),
        ("\tv\n ", "\tv\n "),
        ("\n", ""),
        ("", ""),
        ("\r\n", ""),
    ],
    ids=["crlf-one-each-side", "lf-one-each-side", "lf-then-crlf", "spaces-kept", "lone-cr-kept", "tab-kept",
         "single-lf", "empty", "single-crlf"],
)
def test_xml_parameter_strips_exactly_one_line_break_each_side(raw, value):
    call = only_call("<function=write><parameter=text>" + raw + "</parameter></function>")
    assert call["arguments"] == {"text": value}


def test_xml_duplicate_parameter():
    text = "<function=write><parameter=x>1</parameter><parameter=x>2</parameter></function>"
    assert parse(text)["rejected"] == [{"format": "xml", "name": "write", "reason": "duplicate-key",
                                        "span": [0, len(text)]}]


@pytest.mark.parametrize(
    "text,reason",
    [
        ("<function=click><parameter=x>1</function>", "xml-malformed"),
        ("<function=click><parameter x>1</parameter></function>", "xml-malformed"),
        ("<function=click>junk</function>", "xml-malformed"),
        ("<function=click><parameter=>1</parameter></function>", "xml-malformed"),
        ('<function name="click></function>', "xml-malformed"),
        ("<function=></function>", "xml-malformed"),
        ('<function name=""></function>', "xml-malformed"),
        ("<function=click<parameter=x>1</parameter></function>", "xml-malformed"),
        ("<function=click><parameter=x>1</parameter>", "unclosed-tag"),
        ("<function=click>", "unclosed-tag"),
        ("<function=rm_rf></function>", "not-allowed"),
        ("<function=Click></function>", "not-allowed"),
        ("<function=click\n></function>", "xml-malformed"),
    ],
)
def test_xml_rejections(text, reason):
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == [reason]
    assert all(r["format"] == "xml" for r in verdict["rejected"])


@pytest.mark.parametrize("opener", ["<function=", '<function name="'])
def test_xml_unclosed_function_is_refused_on_its_own(opener):
    text = opener + "click><parameter=x>1</parameter>\n" + READ
    verdict = parse(text)
    # only the opener is claimed, so the own-line call after it is still a candidate; but the
    # unclosed opener is a refused attempt, and the call is refused with it (SPEC 5.12)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "xml", "name": None, "reason": "unclosed-tag", "span": [0, len(opener)]},
                                   {"format": "bare", "name": "read_page", "reason": "sibling-rejected",
                                    "span": [text.index(READ), text.index(READ) + len(READ)]}]


def test_xml_lone_surrogate_in_value_is_rejected():
    text = "<function=write><parameter=x>a\ud800b</parameter></function>"
    assert reasons(text) == ["lone-surrogate"]


def test_xml_calls_on_their_own_lines_run_in_order_and_mid_sentence_are_narration():
    text = "Run these:\n<function=click></function>\n<function=read_page></function>\nthen stop."
    verdict = parse(text)
    assert [c["name"] for c in verdict["calls"]] == ["click", "read_page"]
    assert [span_text(text, c["span"]) for c in verdict["calls"]] == [
        "<function=click></function>",
        "<function=read_page></function>",
    ]
    text = "Run <function=click></function> then <function=read_page></function>."
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"]) for r in verdict["rejected"]] == [("click", "not-own-line"), ("read_page", "not-own-line")]


def test_not_a_function_opener_is_ignored():
    assert parse("<functionX=click></functionX>") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


# ================================================================ fences


def test_json_fence_object():
    text = "Here:\n```json\n" + CLICK + "\n```\nThat's it."
    call = only_call(text)
    assert call["format"] == "fenced"
    assert span_text(text, call["span"]) == CLICK


def test_json_fence_array():
    text = "```json\n[" + CLICK + ",\n " + READ + "]\n```"
    verdict = parse(text)
    assert [(c["name"], c["format"]) for c in verdict["calls"]] == [("click", "fenced"), ("read_page", "fenced")]
    assert [span_text(text, c["span"]) for c in verdict["calls"]] == [CLICK, READ]


def test_json_fence_array_is_all_or_nothing():
    text = "```json\n[" + CLICK + ", {\"name\":\"rm_rf\",\"arguments\":{}}]\n```"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["sibling-rejected", "not-allowed"]


def test_untagged_fence_with_json():
    assert [c["format"] for c in parse("```\n" + CLICK + "\n```")["calls"]] == ["fenced"]
    assert [c["format"] for c in parse("``` json\n" + CLICK + "\n```")["calls"]] == ["fenced"]


def test_json_fence_with_json_that_is_not_a_call():
    text = '```json\n{"theme":"dark"}\n```'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "fenced", "name": None, "reason": "not-a-call", "span": [8, 24]}]


def test_json_fence_whose_content_is_not_all_json_falls_back_to_own_line():
    text = "```json\n// the call\n" + CLICK + "\n```"
    assert [(c["name"], c["format"]) for c in parse(text)["calls"]] == [("click", "bare")]


@pytest.mark.parametrize("info", ["python", "js", "bash", "text", "jsonc", "json5", "json x", "\uff2a\uff33\uff2f\uff2e",
                                  "j\u0455on"])
def test_non_json_fences_are_blanked(info):
    inner = CLICK + "\n<tool_call>" + SIMPLE + "</tool_call>\n<function=click></function>\ncall:click{}\n[" + READ + "]"
    text = "Example code:\n```" + info + "\n" + inner + "\n```\nDone."
    assert parse(text) == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


@pytest.mark.parametrize("info", ["json", "JSON", "Json", " json ", ""])
def test_json_fence_info_is_ascii_case_insensitive(info):
    text = "```" + info + "\n" + SIMPLE + "\n```"
    assert [c["format"] for c in parse(text)["calls"]] == ["fenced"]


def test_non_json_fence_does_not_hide_calls_outside_it():
    text = "```python\nprint(" + SIMPLE + ")\n```\n" + CLICK
    call = only_call(text)
    assert span_text(text, call["span"]) == CLICK


# ================================================================ whole-response array


def test_whole_response_array():
    text = " \n[" + CLICK + ", " + READ + "]\n "
    verdict = parse(text)
    assert [(c["name"], c["format"]) for c in verdict["calls"]] == [("click", "array"), ("read_page", "array")]
    assert [span_text(text, c["span"]) for c in verdict["calls"]] == [CLICK, READ]


def test_whole_response_array_multi_line():
    text = "[\n  " + CLICK + ",\n  " + READ + "\n]"
    assert [c["format"] for c in parse(text)["calls"]] == ["array", "array"]


def test_whole_response_array_all_or_nothing():
    text = "[" + CLICK + ', {"name":"rm_rf","arguments":{}}, ' + READ + "]"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"]) for r in verdict["rejected"]] == [
        ("click", "sibling-rejected"),
        ("rm_rf", "not-allowed"),
        ("read_page", "sibling-rejected"),
    ]


def test_whole_response_array_non_object_element():
    text = "[" + SIMPLE + ", 5]"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"][-1] == {"format": "array", "name": None, "reason": "not-a-call",
                                       "span": [len(SIMPLE) + 3, len(SIMPLE) + 4]}


NUMBER_ITEMS = ["1", "-0", "0", "23", "999999999999999", "-999999999999999", "9007199254740991", "1.5", "1e3", "01", "00"]


@pytest.mark.parametrize("separator", [",", " , ", ",\n\t", "\r,"])
@pytest.mark.parametrize("opener,closer", [("", ""), ("<tool_call>", "</tool_call>"), ("```json\n", "\n```")])
def test_number_items_are_refused_with_their_own_spans(opener, closer, separator):
    """Arrays of numbers are read in runs (Python) or item by item without readValue (JS) when
    their items are short integers; each item is still refused on its own span, before and after
    a call and a literal that is no short integer, and an array that fails to read (`01`, `00`)
    is not a batch."""
    for items in (NUMBER_ITEMS[:7], NUMBER_ITEMS[:9], NUMBER_ITEMS):
        body = "[" + separator.join(items[:3] + [SIMPLE] + items[3:]) + "]"
        text = opener + body + closer
        verdict = parse(text)
        if items[-1] in ("01", "00"):
            continue  # not JSON: no batch, its parts go to the other passes
        assert verdict["calls"] == []
        listed = [(span_text(text, r["span"]), r["reason"]) for r in verdict["rejected"]]
        assert listed == [(item, "not-a-call") for item in items[:3]] + [(SIMPLE, "sibling-rejected")] + [
            (item, "not-a-call") for item in items[3:]]


def test_whole_response_array_bad_arguments_refuses_siblings():
    text = "[" + SIMPLE + ', {"name":"read_page","arguments":"{"}]'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["sibling-rejected", "bad-arguments"]


def test_empty_whole_response_array():
    assert parse("[]") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


def test_array_with_prose_is_not_a_whole_response_array():
    verdict = parse("[" + SIMPLE + "] is what I would send")
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["not-own-line"]


# ================================================================ call objects


def test_openai_shape():
    text = '{"type":"function","id":"call_1","function":{"name":"click","arguments":"{\\"x\\":1}"}}'
    call = only_call(text)
    assert call == {"name": "click", "arguments": {"x": 1}, "format": "bare", "span": [0, len(text)]}


def test_openai_shape_with_object_arguments_and_parameters():
    assert only_call('{"type":"function","function":{"name":"click","arguments":{"x":1}}}')["arguments"] == {"x": 1}
    assert only_call('{"type":"function","function":{"name":"click","parameters":{"y":2}}}')["arguments"] == {"y": 2}
    assert only_call('{"type":"function","function":{"name":"click"}}')["arguments"] == {}


@pytest.mark.parametrize(
    "text,reason",
    [
        ('{"type":"function","function":{"name":"click","arguments":{}},"extra":1}', "unknown-key"),
        ('{"type":"function","function":{"name":"click","arguments":{},"id":"x"}}', "unknown-key"),
        ('{"type":"tool","function":{"name":"click"}}', "not-a-call"),
        ('{"function":{"name":"click"}}', "not-a-call"),
        ('{"type":"function"}', "not-a-call"),
        ('{"type":"function","function":"click"}', "not-a-call"),
        ('{"type":"function","function":{"arguments":{}}}', "bad-name"),
        ('{"type":"function","function":{"name":"rm_rf"}}', "not-allowed"),
        ('{"type":"function","function":{"name":"click","arguments":{},"parameters":{}}}', "ambiguous-arguments"),
        ('{"type":"function","function":{"name":"click","arguments":"nope"}}', "bad-arguments"),
    ],
)
def test_openai_shape_rejections(text, reason):
    assert parse(text)["calls"] == []
    assert reasons(text) == [reason]


def test_arguments_as_json_string():
    assert only_call('{"name":"click","arguments":"{\\"x\\":[1,{\\"y\\":null}]}"}')["arguments"] == {"x": [1, {"y": None}]}
    assert only_call('{"name":"click","arguments":" \\n{\\"x\\":1} "}')["arguments"] == {"x": 1}


def test_parameters_alias_and_missing_arguments():
    assert only_call('{"name":"click","parameters":{"x":1}}')["arguments"] == {"x": 1}
    assert only_call('{"name":"click","parameters":"{\\"x\\":1}"}')["arguments"] == {"x": 1}
    assert only_call('{"name":"click"}')["arguments"] == {}
    assert only_call('{"name":"click","id":"call_9","arguments":{}}') == {
        "name": "click", "arguments": {}, "format": "bare", "span": [0, 45]}


@pytest.mark.parametrize(
    "arguments,reason",
    [
        ('"{\\"x\\":"', "bad-arguments"),
        ('"{\\"x\\":1"', "bad-arguments"),
        ('""', "bad-arguments"),
        ('"   "', "bad-arguments"),
        ('"[1]"', "bad-arguments"),
        ('"null"', "bad-arguments"),
        ('"\\"{}\\""', "bad-arguments"),
        ('"{\\"x\\":1}trailing"', "bad-arguments"),
        ('"\\u00a0{}"', "bad-arguments"),
        ('"{\\"x\\":NaN}"', "bad-arguments"),
        ("null", "bad-arguments"),
        ("[]", "bad-arguments"),
        ("5", "bad-arguments"),
        ("true", "bad-arguments"),
        ('"{\\"x\\":1,\\"x\\":2}"', "duplicate-key"),
        ('"{\\"x\\":1e999}"', "number-out-of-range"),
        ('"{\\"x\\":9007199254740992}"', "number-out-of-range"),
        ('"{\\"x\\":\\"\\\\ud800\\"}"', "lone-surrogate"),
        ('"' + "[" * 70 + '"', "too-deep"),
    ],
)
def test_malformed_arguments_are_rejected_never_replaced_by_empty_object(arguments, reason):
    text = '{"name":"click","arguments":' + arguments + "}"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare", "name": "click", "reason": reason, "span": [0, len(text)]}]


def test_ambiguous_arguments():
    text = '{"name":"click","arguments":{},"parameters":{}}'
    assert parse(text)["rejected"] == [{"format": "bare", "name": "click", "reason": "ambiguous-arguments",
                                        "span": [0, len(text)]}]


@pytest.mark.parametrize(
    "text,reason,name",
    [
        ('{"name":"click","args":{}}', "unknown-key", "click"),
        ('{"name":"click","arguments":{},"confirm":true}', "unknown-key", "click"),
        ('{"name":5,"args":{}}', "unknown-key", None),
        ('{"name":"","arguments":{}}', "bad-name", None),
        ('{"name":5,"arguments":{}}', "bad-name", None),
        ('{"name":null}', "bad-name", None),
        ('{"foo":1}', "not-a-call", None),
        ("{}", "not-a-call", None),
        ('{"name":"click","arguments":{"x":1,"x":2}}', "duplicate-key", None),
        ('{"name":"click","arguments":{"x":NaN}}', "invalid-json", None),
        ('{"name":"click","arguments":{"x":1e999}}', "number-out-of-range", None),
        ('{"name":"click","arguments":{"x":"\\udc00"}}', "lone-surrogate", None),
    ],
)
def test_call_object_rejections(text, reason, name):
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare", "name": name, "reason": reason, "span": [0, len(text)]}]


def test_bare_call_syntax_on_its_own_line():
    text = 'Go:\ncall:click{"x":1}\n'
    call = only_call(text)
    assert call == {"name": "click", "arguments": {"x": 1}, "format": "bare-call", "span": [4, 21]}


def test_bare_call_syntax_mid_sentence_is_narration():
    text = 'You could use call:click{"x":1} here.'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare-call", "name": "click", "reason": "not-own-line",
                                    "span": [14, 31]}]


def test_bare_call_syntax_names_and_rejections():
    assert names('call:read_page{}') == ["read_page"]
    assert only_call('call:a.b-c_9{}', ["a.b-c_9"])["name"] == "a.b-c_9"
    assert reasons('call:rm_rf{"x":1}') == ["not-allowed"]
    assert reasons('call:click{"x":1},') == []


# ================================================================ allowlist


@pytest.mark.parametrize(
    "name",
    ["Click", "CLICK", "click ", " click", "cl\u200bick", "\u0441lick", "\uff43lick", "click\u0000", "clic"],
    ids=["capitalised", "upper", "trailing-space", "leading-space", "zero-width-space", "cyrillic-es",
         "fullwidth-c", "nul", "prefix"],
)
def test_allowlist_is_exact_and_case_sensitive(name):
    text = json.dumps({"name": name, "arguments": {}})
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare", "name": name, "reason": "not-allowed",
                                    "span": [0, units_len(text)]}]


def test_allowlist_unicode_normalisation_is_not_applied():
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert names(json.dumps({"name": composed}), [composed]) == [composed]
    assert names(json.dumps({"name": decomposed}), [composed]) == []
    assert names("<function=" + decomposed + "></function>", [composed]) == []


def test_allowlist_with_non_ascii_and_astral_names():
    assert names('{"name":"\u00fcbersetzen"}', ["\u00fcbersetzen"]) == ["\u00fcbersetzen"]
    assert names('{"name":"\U0001f600tool"}', ["\U0001f600tool"]) == ["\U0001f600tool"]
    assert names('<function=\U0001f600tool></function>', ["\U0001f600tool"]) == ["\U0001f600tool"]


def test_empty_allowlist_runs_nothing():
    text = CLICK + "\n<tool_call>" + READ + "</tool_call>\n<function=navigate></function>"
    verdict = parse(text, [])
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["not-allowed"] * 3


def test_allowlist_may_be_a_tuple():
    assert names(SIMPLE, ("click",)) == ["click"]


@pytest.mark.parametrize(
    "allowed",
    ["click", None, {"click"}, {"click": 1}, ["click", 5], ["click", None], [b"click"], 5,
     (name for name in ["click"])],
    ids=["str", "None", "set", "dict", "list-with-int", "list-with-None", "bytes-item", "int", "generator"],
)
def test_bad_allowlist_is_an_error_verdict(allowed):
    assert parse_tool_calls(SIMPLE, allowed) == {"calls": [], "error": "allowed-not-list", "rejected": [], "rejected_omitted": 0}
    assert parse_tool_calls_canonical(SIMPLE, allowed) == '{"calls":[],"error":"allowed-not-list","rejected":[],"rejected_omitted":0}'


# ================================================================ error verdicts and length


@pytest.mark.parametrize("text", [None, 5, b"{}", ["x"], {"name": "click"}, 1.5], ids=repr)
def test_non_string_text_is_an_error_verdict(text):
    assert parse_tool_calls(text, ALLOWED) == {"calls": [], "error": "text-not-string", "rejected": [], "rejected_omitted": 0}
    assert parse_tool_calls_canonical(text, ALLOWED) == '{"calls":[],"error":"text-not-string","rejected":[],"rejected_omitted":0}'


def test_text_is_checked_before_the_allowlist():
    assert parse_tool_calls(None, None)["error"] == "text-not-string"


def test_exactly_10000_units_is_parsed():
    text = "x" * (10000 - len(CLICK) - 1) + "\n" + CLICK
    assert len(text) == 10000
    assert names(text) == ["click"]


def test_10001_units_is_too_long():
    text = "x" * (10001 - len(CLICK) - 1) + "\n" + CLICK
    assert parse_tool_calls(text, ALLOWED) == {"calls": [], "error": "too-long", "rejected": [], "rejected_omitted": 0}
    assert parse_tool_calls_canonical(text, ALLOWED) == '{"calls":[],"error":"too-long","rejected":[],"rejected_omitted":0}'


def test_astral_character_makes_the_unit_count_cross_the_limit():
    text = "\U0001f600" + "x" * (10000 - len(CLICK) - 2) + "\n" + CLICK
    assert len(text) == 10000  # 10000 code points ...
    assert units_len(text) == 10001  # ... but 10001 UTF-16 units
    assert parse_tool_calls(text, ALLOWED)["error"] == "too-long"
    shorter = text[:1] + text[2:]
    assert units_len(shorter) == 10000
    assert names(shorter) == ["click"]


def test_empty_and_whitespace_text():
    assert parse("") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}
    assert parse(" \n\t\r\n") == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}


# ================================================================ at most 64 rejections are listed (SPEC.md 5.1)


@pytest.mark.parametrize("count,listed,omitted", [(63, 63, 0), (64, 64, 0), (65, 64, 1), (5000, 64, 4936)])
def test_rejections_past_64_are_counted_not_listed(count, listed, omitted):
    verdict = parse("{}" * count)
    assert len(verdict["rejected"]) == listed
    assert verdict["rejected_omitted"] == omitted
    assert [item["span"] for item in verdict["rejected"]] == [[2 * k, 2 * k + 2] for k in range(listed)]


def test_the_listed_rejections_are_the_first_in_verdict_order_across_passes():
    # The bare pass runs last but its rejections come first in the text, so they are listed and
    # the tag's rejection, at the end, is the one counted.
    tail = "\n<tool_call>nope</tool_call>"
    verdict = parse("{}" * 64 + tail)
    assert {item["reason"] for item in verdict["rejected"]} == {"not-own-line"}
    assert verdict["rejected_omitted"] == 1
    verdict = parse("<tool_call>nope</tool_call>\n" + "{}" * 64)
    assert verdict["rejected"][0]["reason"] == "invalid-json"
    assert verdict["rejected"][-1]["span"] == [28 + 2 * 62, 28 + 2 * 63]
    assert verdict["rejected_omitted"] == 1


def test_calls_are_never_cut():
    verdict = parse("{}" * 100 + "\n" + "\n".join([CLICK] * 16))  # 16: the most a response may hold
    assert len(verdict["calls"]) == 16
    assert (len(verdict["rejected"]), verdict["rejected_omitted"]) == (64, 36)


def test_listed_rejections_keep_their_narrated_names():
    one = '{"name":"click"}'
    verdict = parse("x " + " ".join([one] * 70))
    assert [item["name"] for item in verdict["rejected"]] == ["click"] * 64
    assert verdict["rejected_omitted"] == 6


def test_a_batch_past_the_cap_counts_its_refusal():
    batch = "[" + ",".join(['{"name":"click"}'] * 70 + ['{"name":"delete_all"}']) + "]"
    verdict = parse(batch)
    assert verdict["calls"] == []
    assert {item["reason"] for item in verdict["rejected"]} == {"sibling-rejected"}
    assert verdict["rejected_omitted"] == 7  # 6 more siblings and the not-allowed element


# Past the cap a refusal is only counted, so the parser skips working out its reason or name; a
# candidate that may be a call is still validated.


def test_past_the_cap_a_call_syntax_line_still_runs():
    verdict = parse("{}" * 70 + "\ncall:click{}")
    assert [(call["name"], call["format"]) for call in verdict["calls"]] == [("click", "bare-call")]
    assert verdict["rejected_omitted"] == 6


def test_past_the_cap_a_refused_object_with_a_call_prefix_is_another_candidate():
    verdict = parse("\n".join(["{}"] * 70 + ["call:click{}"]))
    assert [(call["name"], call["format"]) for call in verdict["calls"]] == [("click", "bare-call")]
    assert verdict["rejected_omitted"] == 6


def test_past_the_cap_a_narrated_call_written_on_its_own_line_runs():
    # Refused 70 times for where it stood, not for its text.
    verdict = parse("\n".join(["x " + SIMPLE] * 70 + [SIMPLE]))
    assert [call["span"] for call in verdict["calls"]] == [[70 * (len(SIMPLE) + 3), 70 * (len(SIMPLE) + 3) + len(SIMPLE)]]
    assert verdict["rejected_omitted"] == 6


def test_past_the_cap_refusals_of_every_kind_are_counted():
    text = "\n".join(["{}"] * 70 + ["x{}", "{} x", "x call:click{}", SIMPLE, "{}x{}"])
    verdict = parse(text)
    assert [call["name"] for call in verdict["calls"]] == ["click"]
    assert verdict["rejected_omitted"] == 6 + 3 + 2
    # a refused call:nope past the cap is only counted, and still an attempt: the call stops too
    verdict = parse(text + "\ncall:nope{}\ncall:nope{}")
    assert verdict["calls"] == []
    assert verdict["rejected_omitted"] == 6 + 3 + 2 + 2 + 1


def test_a_batch_refused_first_lists_63_siblings_and_counts_the_rest():
    batch = "[" + ",".join(['{"name":"delete_all"}'] + ['{"name":"click"}'] * 70) + "]"
    verdict = parse(batch)
    assert [item["reason"] for item in verdict["rejected"]] == ["not-allowed"] + ["sibling-rejected"] * 63
    assert verdict["rejected_omitted"] == 7


def test_error_verdicts_count_nothing():
    assert parse_tool_calls("{}" * 5001, ALLOWED) == {"calls": [], "error": "too-long", "rejected": [], "rejected_omitted": 0}


# ================================================================ UTF-16 spans


def test_spans_count_utf16_units_after_astral_characters():
    prefix = "\U0001f600\U0001f600\n"
    text = prefix + '{"name":"click","arguments":{"t":"\U0001d11e"}}'
    call = only_call(text)
    assert call["span"] == [5, 5 + units_len(text[len(prefix):])]
    assert call["span"][1] == units_len(text)
    assert call["arguments"] == {"t": "\U0001d11e"}
    assert span_text(text, call["span"]) == text[len(prefix):]


def test_spans_after_astral_characters_in_every_format():
    p = "\U0001f600 "
    cases = {
        "tagged": p + "\n<tool_call>" + SIMPLE + "</tool_call>",
        "xml": p + "\n<function=click></function>",
        "fenced": p + "\n```json\n" + SIMPLE + "\n```",
        "bare": p + "\n" + SIMPLE,
        "bare-call": p + '\ncall:click{"x":1}',
    }
    expected_text = {
        "tagged": SIMPLE,
        "xml": "<function=click></function>",
        "fenced": SIMPLE,
        "bare": SIMPLE,
        "bare-call": 'call:click{"x":1}',
    }
    for fmt, text in cases.items():
        call = only_call(text)
        assert call["format"] == fmt
        assert span_text(text, call["span"]) == expected_text[fmt]
        assert call["span"][0] == units_len(text[: text.index(expected_text[fmt])])


# ================================================================ line structure


@pytest.mark.parametrize(
    "char",
    ["\u2028", "\u2029", "\x85", "\ufeff", "\xa0", "\x0b", "\x0c", "\x1c", "\x1f", "\u3000"],
    ids=lambda c: "U+%04X" % ord(c),
)
def test_unicode_line_breaks_and_spaces_are_not_line_ends(char):
    after = SIMPLE + char + "\nmore"
    assert parse(after)["calls"] == []
    assert reasons(after) == ["not-own-line"]
    before = "more\n" + char + SIMPLE
    assert parse(before)["calls"] == []
    assert reasons(before) == ["not-own-line"]
    # a "line break" that JSON does not know is just part of the sentence
    sentence = "I won't" + char + SIMPLE + char + "do that"
    assert parse(sentence)["calls"] == []


def test_crlf_line_ends_are_fine():
    text = "Calling now:\r\n" + CLICK + "\r\n" + READ + "\r\n"
    verdict = parse(text)
    assert [c["name"] for c in verdict["calls"]] == ["click", "read_page"]
    assert [span_text(text, c["span"]) for c in verdict["calls"]] == [CLICK, READ]


def test_lone_cr_is_not_a_line_end():
    assert reasons("prose\r" + SIMPLE) == ["not-own-line"]


# ================================================================ robustness and determinism

WEIRD = [
    "\ud800",
    "\udc00{",
    "{\ud800}",
    '{"name":"click","arguments":{"x":"\ud800"}}',
    "\x00" * 100,
    "{" * 10000,
    "[" * 10000,
    "]" * 10000,
    '"' * 10000,
    "\\" * 10000,
    '{"' * 5000,
    "[{" * 5000,
    "<tool_call>" * 900,
    "</tool_call>" * 800,
    "<tool_call></tool_call>" * 400,
    "<|tool_call|>{" * 700,
    "<function=" * 1000,
    "<function=click>" * 600,
    "</function>" * 900,
    "<parameter=x>" * 700,
    "```\n" * 2500,
    "```json\n" * 1200,
    "<think>" * 1400,
    "</think>" * 1200,
    "<think></think>" * 600,
    "call:" * 2000,
    "call:click{" * 900,
    "call:click{}" * 800,
    "\n" * 10000,
    "\r\n" * 5000,
    "\u2028" * 10000,
    "\U0001f600" * 5000,
    "{\n" * 5000,
    '{"a":"\n' * 1400,
    "[" * 65 + "]" * 65,
    "[" + SIMPLE + "," * 100 + "]",
    '{"name":"click","arguments":' + "[" * 100 + "]" * 100 + "}",
    '{"name":"click","arguments":{"n":' + "9" * 5000 + "}}",
    '{"name":"click","arguments":"' + "[" * 3000 + '"}',
    "<tool_call>" + "[" * 5000 + "</tool_call>",
    "```json\n" + "[" * 5000 + "\n```",
    "<function=click><parameter=x>" + "\ud800" * 10 + "</parameter></function>",
]


@pytest.mark.parametrize("text", WEIRD, ids=lambda t: repr(t[:20]) + "x%d" % len(t))
def test_never_raises_on_weird_inputs(text):
    verdict = parse(text)
    assert verdict["error"] in (None, "too-long")
    first = parse_tool_calls_canonical(text, ALLOWED)
    assert first == parse_tool_calls_canonical(text, ALLOWED)


def test_document_order_across_formats():
    text = ("<function=navigate></function>\n" + CLICK + "\n<tool_call>" + READ + "</tool_call>\n```json\n"
            + '{"name":"submit"}' + "\n```\ncall:write{}\nI won't " + SIMPLE + " now.")
    verdict = parse(text)
    assert [(c["name"], c["format"]) for c in verdict["calls"]] == [
        ("navigate", "xml"),
        ("click", "bare"),
        ("read_page", "tagged"),
        ("submit", "fenced"),
        ("write", "bare-call"),
    ]
    starts = [c["span"][0] for c in verdict["calls"]]
    assert starts == sorted(starts)
    assert [r["reason"] for r in verdict["rejected"]] == ["not-own-line"]


def test_rejections_are_in_document_order():
    text = "<tool_call>nope</tool_call>\n" + '{"name":"rm_rf"}' + "\n<function=zap></function>\nsay " + SIMPLE
    verdict = parse(text)
    assert [r["reason"] for r in verdict["rejected"]] == ["invalid-json", "not-allowed", "not-allowed",
                                                          "not-own-line"]
    starts = [r["span"][0] for r in verdict["rejected"]]
    assert starts == sorted(starts)


def test_no_ids_or_timestamps_same_input_same_bytes():
    text = 'x\n{"type":"function","id":"call_abc","function":{"name":"click","arguments":"{}"}}\n'
    first = parse_tool_calls_canonical(text, ALLOWED)
    second = parse_tool_calls_canonical(text, list(reversed(ALLOWED)))
    assert first == second == (
        '{"calls":[{"arguments":{},"format":"bare","name":"click","span":[2,82]}],"error":null,"rejected":[],"rejected_omitted":0}'
    )
    assert "call_abc" not in first


def test_canonical_is_rfc8785():
    text = '{"name":"click","arguments":{"z":1.0,"\ue000":2,"\U0001f600":3,"a":1e21,"c":"\\u001f\u2028"}}'
    canonical = parse_tool_calls_canonical(text, ALLOWED)
    assert canonical == (
        '{"calls":[{"arguments":{"a":1e+21,"c":"\\u001f\u2028","z":1,"\U0001f600":3,"\ue000":2},'
        '"format":"bare","name":"click","span":[0,%d]}],"error":null,"rejected":[],"rejected_omitted":0}' % units_len(text)
    )


def test_json_fence_and_bare_call_are_not_counted_twice():
    text = "```json\n" + SIMPLE + "\n```"
    verdict = parse(text)
    assert len(verdict["calls"]) == 1 and verdict["rejected"] == []
    text = "<tool_call>\n" + SIMPLE + "\n</tool_call>"
    verdict = parse(text)
    assert len(verdict["calls"]) == 1 and verdict["rejected"] == []


# ================================================================ markers inside JSON strings are data
# A <think>, tag, XML or fence marker written inside a JSON string value is part of the value: it is
# neither taken as markup nor blanked out of the arguments.


def test_think_text_inside_a_json_string_is_kept_in_the_arguments():
    text = '{"name":"write","arguments":{"text":"<think>draft</think>"}}'
    assert only_call(text)["arguments"] == {"text": "<think>draft</think>"}


def test_unclosed_think_inside_a_json_string_does_not_hide_later_calls():
    text = '{"name":"click","arguments":{"t":"<think>"}}\n{"name":"navigate"}'
    assert names(text) == ["click", "navigate"]


def test_leading_close_think_inside_a_json_string_is_data():
    text = '{"name":"click","arguments":{"t":"</think>"}}'
    assert only_call(text)["arguments"] == {"t": "</think>"}


def test_close_think_quoted_inside_reasoning_does_not_end_it():
    text = '<think>maybe {"name":"click","arguments":{"t":"</think>"}}\n</think>\n' + READ
    assert names(text) == ["read_page"]


def test_a_stray_quote_never_unmasks_reasoning():
    # an unterminated string is not certainly a value: <think> inside it still opens reasoning
    text = 'Note {"a": "<think>\n' + CLICK
    assert parse(text) == {"calls": [], "error": None, "rejected": [], "rejected_omitted": 0}
    # ... and a </think> inside it still closes reasoning
    text = '<think>so {"x</think>\n' + CLICK
    assert names(text) == ["click"]


def test_tag_text_inside_a_json_string_is_data():
    text = '{"name":"write","arguments":{"text":"<tool_call>x</tool_call>"}}'
    assert parse(text) == {"calls": [{"name": "write", "arguments": {"text": "<tool_call>x</tool_call>"},
                                      "format": "bare", "span": [0, len(text)]}], "error": None, "rejected": [], "rejected_omitted": 0}


def test_tag_closer_inside_a_json_string_does_not_end_the_tag():
    text = '<tool_call>{"name":"click","arguments":{"t":"</tool_call>"}}</tool_call>'
    call = only_call(text)
    assert call["arguments"] == {"t": "</tool_call>"}
    assert call["span"] == [11, 60]


def test_xml_call_inside_string_of_disallowed_outer_call_does_not_run():
    text = '{"name":"evil_tool","arguments":{"note":"<function=click></function>"}}'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare", "name": "evil_tool", "reason": "not-allowed",
                                    "span": [0, len(text)]}]


def test_tag_inside_string_of_unclosed_object_does_not_run():
    assert parse('{"a":"<tool_call>' + SIMPLE + "</tool_call>")["calls"] == []
    # the quoting of an unterminated string ends at the line feed
    text = '{"a":"x\n<tool_call>' + SIMPLE + "</tool_call>"
    assert names(text) == ["click"]


def test_quotes_outside_braces_are_prose():
    text = 'say "\n<tool_call>' + SIMPLE + '</tool_call>\n"'
    assert names(text) == ["click"]


def test_markdown_fence_inside_xml_parameter_is_kept_in_the_value():
    text = "<function=write>\n<parameter=content>\n# Title\n```bash\nls\n```\n</parameter>\n</function>"
    assert only_call(text)["arguments"] == {"content": "# Title\n```bash\nls\n```"}


def test_xml_value_may_quote_tags_and_reasoning():
    text = '<function=write><parameter=c>"<tool_call>{}</tool_call>" <think>x</think></parameter></function>'
    verdict = parse(text)
    assert verdict["calls"] == [{"name": "write", "arguments": {"c": '"<tool_call>{}</tool_call>" <think>x</think>'},
                                 "format": "xml", "span": [0, len(text)]}]
    assert verdict["rejected"] == []


def test_tag_may_hold_xml_and_xml_may_hold_a_tag_in_document_order():
    text = "<tool_call><function=write><parameter=c><tool_call>x</tool_call></parameter></function></tool_call>"
    verdict = parse(text)
    # the outer tag's closer comes after another <tool_call>, so only its opener is refused; the
    # XML element then claims its region (the quoted tag is its value), and the stray
    # </tool_call> after it on the line makes it narration
    assert verdict["rejected"] == [{"format": "tagged", "name": None, "reason": "unclosed-tag", "span": [0, 11]},
                                   {"format": "xml", "name": "write", "reason": "not-own-line", "span": [11, 87]}]
    assert verdict["calls"] == []
    text = "<function=write><parameter=c><tool_call>x</tool_call></parameter></function>"
    assert only_call(text)["arguments"] == {"c": "<tool_call>x</tool_call>"}


# ================================================================ XML sequences inside one tag


def test_xml_sequence_in_a_tag_is_all_or_nothing():
    text = "<tool_call><function=click></function>\n<function=rm_rf></function></tool_call>"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [
        {"format": "xml", "name": "click", "reason": "sibling-rejected", "span": [11, 38]},
        {"format": "xml", "name": "rm_rf", "reason": "not-allowed", "span": [39, 66]},
    ]


def test_junk_after_xml_in_a_tag_refuses_the_sequence():
    text = "<tool_call><function=click></function> junk</tool_call>"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [
        {"format": "xml", "name": "click", "reason": "sibling-rejected", "span": [11, 38]},
        {"format": "xml", "name": None, "reason": "xml-malformed", "span": [39, 43]},
    ]


def test_unclosed_xml_in_a_tag_refuses_the_sequence():
    text = "<tool_call><function=click></function><function=read_page></tool_call>"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [r["reason"] for r in verdict["rejected"]] == ["sibling-rejected", "unclosed-tag"]


# ================================================================ documented trade-offs (SPEC.md 8)


def test_stray_brace_that_closes_later_swallows_the_call():
    text = "Note {\n" + SIMPLE + "\n}"
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "bare", "name": None, "reason": "not-own-line",
                                    "span": [5, len(text)]}]


def test_unclosed_tag_then_call_on_its_own_line_is_refused_with_it():
    text = "<tool_call>\n" + SIMPLE
    verdict = parse(text)
    assert verdict["calls"] == []
    assert [(r["reason"], r["format"]) for r in verdict["rejected"]] == [("unclosed-tag", "tagged"), ("sibling-rejected", "bare")]


def test_strict_array_fails_so_elements_are_judged_one_by_one():
    text = '[\n{"name":"click"},\n{"name":"delete_all"},\n]'
    verdict = parse(text)
    # bare candidates on their own lines, in one response: the refused one stops the other
    assert verdict["calls"] == []
    assert [(r["name"], r["reason"], r["format"]) for r in verdict["rejected"]] == [
        ("click", "sibling-rejected", "bare"), ("delete_all", "not-allowed", "bare")]


# ================================================================ unterminated quotes in XML values
# Found by this suite (then a strict xfail), fixed in b2803fa: closers are skipped only inside
# closed strings of closed objects, so an unterminated quote cannot run an element on.


def test_unterminated_quote_in_xml_value_does_not_swallow_the_next_function():
    text = ('<function=write><parameter=c>{"a</parameter></function>\n'
            "<function=click><parameter=x>1</parameter></function>")
    verdict = parse(text, ["write", "click"])
    assert verdict == {"calls": [
        {"name": "write", "arguments": {"c": '{"a'}, "format": "xml", "span": [0, 55]},
        {"name": "click", "arguments": {"x": "1"}, "format": "xml", "span": [56, 109]},
    ], "error": None, "rejected": [], "rejected_omitted": 0}


def test_unterminated_quote_hides_openers_on_the_rest_of_its_line():
    # openers still skip any string begun within braces: the second element is quoted data
    text = ('<function=write><parameter=c>{"a</parameter></function> '
            "<function=click><parameter=x>1</parameter></function>")
    verdict = parse(text, ["write", "click"])
    # the hidden opener's element is text after write on its line: write is narration
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "xml", "name": "write", "reason": "not-own-line", "span": [0, 55]}]


def test_unterminated_quote_in_a_tag_body_does_not_swallow_the_next_tag():
    text = '<tool_call>{"a</tool_call>\n<tool_call>{"name":"click"}</tool_call>'
    verdict = parse(text)
    # the second tag is its own region (its call's span is exact), refused with the first (SPEC 5.12)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "tagged", "name": None, "reason": "invalid-json", "span": [11, 14]},
                                   {"format": "tagged", "name": "click", "reason": "sibling-rejected", "span": [38, 54]}]


# ================================================================ XML closers always count
# Found by this suite (then a strict xfail), fixed in c6e6e98: XML values have no escaping, so the
# first </parameter> ends a value and the first </function> ends an element, even when a
# JSON-looking string seems to continue past them.


def test_quoted_string_spanning_two_functions_does_not_merge_them():
    text = ('<function=write><parameter=a>{"</parameter></function><function=click><parameter=b>"}</parameter>'
            "</function>")
    verdict = parse(text, ["write", "click"])
    # write ends at its own closer (its span is exactly its element); click's opener sits inside
    # the JSON-looking string, and openers skip strings, so click is never a region, and the text
    # it leaves after write on the line makes write narration (fail closed)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "xml", "name": "write", "reason": "not-own-line", "span": [0, 54]}]


def test_quoted_string_spanning_two_parameters_does_not_merge_them():
    text = '<function=write><parameter=a>{"</parameter><parameter=b>"}</parameter></function>'
    assert only_call(text)["arguments"] == {"a": '{"', "b": '"}'}


def test_parameter_closer_inside_a_json_looking_value_ends_the_value():
    text = '<function=write><parameter=c>{"a":"</parameter>"}</parameter></function>'
    verdict = parse(text)
    assert verdict["calls"] == []
    assert verdict["rejected"] == [{"format": "xml", "name": "write", "reason": "xml-malformed",
                                    "span": [0, len(text)]}]
