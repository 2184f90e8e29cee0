"""Fuzz generators that know the bundled subject's grammar (SPEC.md), for `extparity fuzz`.

Harness-side, like the message adapters in adapters/messages/: it describes the tool-call parser's
input language from the contract, not from the implementation, so it imports neither `toolcalls`
nor the harness config. The generic BUILTIN generators mutate the corpus; these build inputs
the corpus cannot reach by mutation: whole responses in every SPEC format, argument texts for
each repair rule, nesting and lengths exactly at the contract's limits.

Every generator is a pure function of its rng and returns the entry's own fields, looked up in
`target.entry.args`: the text first, and for `parse` the allowlist second.
"""

from __future__ import annotations

import json
import random

from extparity.fuzz.generators import FuzzTarget

# --- the contract's constants -------------------------------------------------------------

PARSE_CAP_UNITS = 10_000  # SPEC 1 "Size caps": parse_tool_calls accepts 10,000 units, not 10,001
REPAIR_CAP_UNITS = 100_000  # SPEC 1 "Size caps": repair_arguments
DEPTH_LIMIT = 64  # SPEC 2 "Policies": the outermost value is depth 1; a container at 65 is too-deep
LISTED_REJECTIONS = 64  # SPEC 5.1: rejections past the 64th are only counted (rejected_omitted)
MAX_CALLS = 16  # SPEC 5.12: a 17th call refuses the response (too-many-calls)
WHITESPACE = (" ", "\t", "\n", "\r")  # SPEC 1 "Whitespace": these four units and nothing else
NOT_WHITESPACE = ("\u000b", "\u000c", "\u001c", "\u001f", "\u0085", "\u00a0", "\u1680", "\u2000",
                  "\u200a", "\u202f", "\u205f", "\u3000", "\u2028", "\u2029", "\ufeff")  # SPEC 1 table
TAGS = (("<tool_call>", "</tool_call>"), ("<|tool_call|>", "<|/tool_call|>"),
        ("<functioncall>", "</functioncall>"))  # SPEC 5.6
XML_FORMS = (("<function=", ">"), ('<function name="', '">'))  # SPEC 5.7, step 1
PARAMETER_FORMS = (("<parameter=", ">"), ('<parameter name="', '">'))  # SPEC 5.7, step 4
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"  # SPEC 5.3: exact and case-sensitive
CALL_PREFIX = "call:"  # SPEC 5.8: the name is a run of [A-Za-z0-9_.-]
JSON_FENCE_INFOS = ("json", "JSON", "Json", "", " json")  # SPEC 5.5: json fences
OTHER_FENCE_INFOS = ("python", "jsonc", "json5", "json title", "bash", "`")  # SPEC 5.5: quoted code

# --- vocabulary ---------------------------------------------------------------------------

ALLOWED_LISTS = (("click", "navigate", "read_page"), ("click", "navigate", "read_page"), ("click",),
                 (), ("search", "get_weather"), ("constructor", "click"), ("a.b", "x-y_z"),
                 ("click", "Click"))
UNKNOWN_NAMES = ("delete_all", "nope", "constructor", "__proto__", "hasOwnProperty", "toString",
                 "run_shell", "clicks")
CONFUSABLE = {"a": "\u0430", "o": "\u03bf", "i": "\u0131", "k": "\u212a", "s": "\u017f",
              "e": "\u0435", "c": "\u0441"}
# The three unsafe keys of SPEC 5.12, one spelled with an escape (keys compare unescaped), and a
# near miss that is an ordinary key.
KEYS = ("selector", "url", "text", "n", "options", "path", "q", "", "mode", "id", "timeout", "x", "__proto",
        "__proto__", "constructor", "\\u0070rototype")
STRING_PIECES = ("x", "hello", "#ok", "div > a", "\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00",
                 "\u00e9", "\U0001F600", "</tool_call>", "<think>", "{}", "a b", "https://example.test/?q=1",
                 "\\t", "\\/", "</function>")
SCALARS = ("1", "0", "-2.5", "1e3", "true", "false", "null", "9007199254740991", "0.1", "-0", "1E-7")
SENTENCES = ("Sure, I can help with that.", "Let me check the page first.", "I will not run this:",
             "Here is the plan:", "Done.", "The page said:", "I could click the button, but I won't.",
             "Option A:", "Note {unclosed", "Use {curly} braces here.", 'He said "stop" twice.',
             "if (ready) { submit();", "I recommend the first one.", "Calling the tool now.",
             "Type {\" to start", "See the docs for <function> usage.", "Refusing: that is unsafe.")
QUOTE_INTROS = ("> ", "For example: ", "You could write ", '"', "The model said: ", "`")
# What may stand beside explicit syntax on its line (SPEC 5.6): prose makes it narration; the
# empty string, whitespace and one comma do not, two commas, a bullet or backticks do.
BESIDE_BEFORE = ("", "", "", "  ", "\t", "- ", "1. ", "For example: ", "`", "\u00a0", "<think>x</think>")
BESIDE_AFTER = ("", "", "", " ", ",", " , ", ",,", " and that is all.", "`", "\u2028", " is how I would do it.")


# --- fields -------------------------------------------------------------------------------

def fields(target: FuzzTarget, text: str, allowed: tuple[str, ...] | None = None) -> dict:
    """The entry's own field names: the text first and, when the entry takes one, the allowlist
    second. Left-out fields are filled by the caller from a seed."""
    args = target.entry.args
    case = {args[0]: text}
    if allowed is not None and len(args) > 1:
        case[args[1]] = list(allowed)
    return case


# --- JSON pieces --------------------------------------------------------------------------

def json_string(rng: random.Random) -> str:
    """A JSON string literal with escapes (\\n \\" \\\\ \\u00e9 a surrogate pair) and markup."""
    return '"' + "".join(rng.choice(STRING_PIECES) for _ in range(rng.randint(0, 3))) + '"'


def json_value(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth <= 0 or roll < 0.5:
        return rng.choice(SCALARS) if roll < 0.25 else json_string(rng)
    if roll < 0.8:
        return json_object(rng, depth - 1)
    return "[" + ",".join(json_value(rng, depth - 1) for _ in range(rng.randint(0, 3))) + "]"


def json_object(rng: random.Random, depth: int = 2) -> str:
    """An object of 0-3 members with distinct keys: nested objects, arrays and scalars."""
    keys = rng.sample(KEYS, rng.randint(0, 3))
    colon = rng.choice((":", ": "))
    comma = rng.choice((",", ", "))
    return "{" + comma.join(f'"{key}"{colon}{json_value(rng, depth)}' for key in keys) + "}"


def string_encoded(text: str) -> str:
    """The text as a JSON string literal: arguments the way OpenAI-style calls carry them."""
    return json.dumps(text, ensure_ascii=False)


# --- names and call objects ---------------------------------------------------------------

def near_miss(rng: random.Random, name: str) -> str:
    """A name that must not match: other case, a confusable letter, a suffix, or padding."""
    roll = rng.randrange(4)
    if roll == 0:
        return name.swapcase() or "X"
    if roll == 1:
        for index, char in enumerate(name):
            if char in CONFUSABLE:
                return name[:index] + CONFUSABLE[char] + name[index + 1:]
        return name + "\u0301"
    if roll == 2:
        return name + rng.choice(("_", "s", " ", "\u200b"))
    return rng.choice(UNKNOWN_NAMES)


def call_name(rng: random.Random, allowed: tuple[str, ...]) -> str:
    # Mostly an allowed name: one refused attempt stops every call of a response (SPEC 5.12), so
    # responses of several segments still reach calls.
    if allowed and rng.random() < 0.8:
        return rng.choice(allowed)
    return near_miss(rng, rng.choice(allowed) if allowed else "click")


def call_object(rng: random.Random, name: str) -> str:
    """A call object in one of the SPEC 5.8 shapes, mostly valid, sometimes refused at a step."""
    quoted = f'"{name}"'
    arguments = json_object(rng, rng.randint(0, 2))
    roll = rng.random()
    if roll < 0.5:
        return '{"name":' + quoted + ',"arguments":' + arguments + "}"
    if roll < 0.6:
        return '{"name":' + quoted + "}"
    if roll < 0.65:
        return '{"name":' + quoted + ',"parameters":' + arguments + ',"id":5}'
    if roll < 0.75:
        return ('{"type":"function","function":{"name":' + quoted + ',"arguments":'
                + string_encoded(arguments) + '},"id":"c1"}')
    if roll < 0.88:
        return '{"name":' + quoted + ',"arguments":' + string_encoded(arguments) + "}"
    return refused_call_object(rng, quoted, arguments)


def refused_call_object(rng: random.Random, quoted: str, arguments: str) -> str:
    """One step of call validation failing: unknown key, ambiguity, bad arguments or name."""
    return rng.choice((
        '{"name":' + quoted + ',"extra":1}',
        '{"name":' + quoted + ',"arguments":' + arguments + ',"parameters":{}}',
        '{"name":' + quoted + ',"arguments":"[1]"}',
        '{"name":' + quoted + ',"arguments":null}',
        '{"name":' + quoted + ',"arguments":' + arguments + ',"name":' + quoted + "}",
        '{"name":7}',
        '{"name":""}',
        '{"type":"function","name":' + quoted + ',"parameters":{}}',
        '{"type":"tool","function":{"name":' + quoted + "}}",
        '{"a":1}',
        '{"name":' + quoted + ',"arguments":{"a":"\\ud800"}}',
        '{"name":' + quoted + ',"arguments":{"n":1e400}}',
    ))


def call_syntax(rng: random.Random, name: str) -> str:
    """`call:NAME{...}` (SPEC 5.8), sometimes with the space or trailing text that refuses it."""
    gap = " " if rng.random() < 0.1 else ""
    return CALL_PREFIX + name + gap + json_object(rng)


def call_array(rng: random.Random, allowed: tuple[str, ...]) -> str:
    separator = rng.choice((",", ", ", ",\n"))
    return "[" + separator.join(call_object(rng, call_name(rng, allowed))
                                for _ in range(rng.randint(1, 3))) + "]"


# --- segments of a response ---------------------------------------------------------------

def prose(rng: random.Random, allowed: tuple[str, ...]) -> str:
    return rng.choice(SENTENCES)


def bare_own_line(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """A bare call alone on its line (SPEC 5.9): indentation, one comma and whitespace allowed;
    sometimes a unit that only looks like whitespace, which refuses it."""
    tail = rng.choice(("", "", ",", " ,  \r", rng.choice(NOT_WHITESPACE)))
    return rng.choice(("", "  ", "\t")) + call_object(rng, call_name(rng, allowed)) + tail


def bare_mid_sentence(rng: random.Random, allowed: tuple[str, ...]) -> str:
    return f"I could run {call_object(rng, call_name(rng, allowed))} but I will not."


def call_syntax_own_line(rng: random.Random, allowed: tuple[str, ...]) -> str:
    return rng.choice(("", "  ")) + call_syntax(rng, call_name(rng, allowed)) + rng.choice(("", ","))


def call_syntax_inline(rng: random.Random, allowed: tuple[str, ...]) -> str:
    return rng.choice(("Then ", "re")) + call_syntax(rng, call_name(rng, allowed)) + " please"


def tag_body(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """What a tag holds (SPEC 5.6 table): a call, an array, call: syntax, XML, or nothing valid."""
    roll = rng.random()
    if roll < 0.45:
        return call_object(rng, call_name(rng, allowed))
    if roll < 0.55:
        return call_array(rng, allowed)
    if roll < 0.7:
        return call_syntax(rng, call_name(rng, allowed)) + rng.choice(("", "", " extra"))
    if roll < 0.85:
        return " ".join(xml_element(rng, allowed) for _ in range(rng.randint(1, 2)))
    return rng.choice(("", "  ", "hello", "{bad}", "<functions>", "[1]"))


def tagged(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """One of the three tags around a body; sometimes unclosed, so its opener is refused, or
    nested in more openers of its kind (SPEC 5.6, 5.12)."""
    opener, closer = rng.choice(TAGS)
    padding = rng.choice(("", "\n", " "))
    closing = "" if rng.random() < 0.1 else padding + closer
    nested = rng.choice((1, 2, 3, 34)) if rng.random() < 0.08 else 1
    return opener * nested + padding + tag_body(rng, allowed) + closing * rng.choice((1, nested))


def beside(rng: random.Random, explicit: str) -> str:
    """Explicit syntax with what stands beside it on its line: the own-line rule for regions."""
    return rng.choice(BESIDE_BEFORE) + explicit + rng.choice(BESIDE_AFTER)


def explicit_on_a_line(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """One to three tags or XML functions sharing a line, with what stands beside them."""
    regions = [rng.choice((tagged, xml_element))(rng, allowed) for _ in range(rng.choice((1, 1, 2, 3)))]
    return beside(rng, rng.choice(("", " ", ",", ", ", ",,")).join(regions))


def xml_parameter(rng: random.Random, key: str) -> str:
    opener, end = rng.choice(PARAMETER_FORMS)
    value = rng.choice(("#ok", "\n2\n", "\r\n2\r\n\r\n", "&lt;b&gt;", "```bash\nrm\n```", "x <think>y</think> z",
                        '{"x":1}', "\ud800", ""))
    return opener + key + end + value + "</parameter>"


def xml_element(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """A function element in either SPEC 5.7 form; sometimes malformed at one of its steps."""
    opener, end = rng.choice(XML_FORMS)
    keys = rng.sample(("a", "selector", "n", "url"), rng.randint(0, 2))
    parameters = "\n".join(xml_parameter(rng, key) for key in keys)
    roll = rng.random()
    if roll < 0.05:
        parameters += " junk"
    elif roll < 0.1:
        parameters += "<parameter=a>1"
    elif roll < 0.13:
        parameters = xml_parameter(rng, "a") + xml_parameter(rng, "a")
    name = call_name(rng, allowed)
    if rng.random() < 0.04:
        name = '"' + name + '"'
    return opener + name + end + "\n" + parameters + "\n</function>"


def xml_unclosed(rng: random.Random, allowed: tuple[str, ...]) -> str:
    opener, end = rng.choice(XML_FORMS)
    return "see " + opener + call_name(rng, allowed) + rng.choice((end, "\n"))


def fence(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """A code fence (SPEC 5.5): json or untagged ones run, others are quoted code; 3+ backticks
    or tildes, sometimes unclosed (then it is no fence at all)."""
    info = rng.choice(JSON_FENCE_INFOS) if rng.random() < 0.7 else rng.choice(OTHER_FENCE_INFOS)
    marker = rng.choice(("```", "```", "```", "````", "~~~"))
    content = call_array(rng, allowed) if rng.random() < 0.25 else call_object(rng, call_name(rng, allowed))
    if rng.random() < 0.15:
        content = tagged(rng, allowed)
    closing = "" if rng.random() < 0.1 else "\n" + rng.choice(("```", "```", " ``` ", marker))
    return marker + info + "\n" + content + closing


def think_block(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """Reasoning (SPEC 5.3): closed, unclosed, or a leading closer whose opener was the prompt's."""
    inside = "\n" + call_object(rng, call_name(rng, allowed)) + "\n"
    roll = rng.randrange(4)
    if roll == 0:
        return THINK_OPEN + inside
    if roll == 1:
        return inside + THINK_CLOSE
    return THINK_OPEN + rng.choice((inside, "plan")) + THINK_CLOSE


def quoted_call(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """A call narrated, refused or quoted: a blockquote, an example, quotation marks."""
    intro = rng.choice(QUOTE_INTROS)
    call = rng.choice((call_object, call_syntax))(rng, call_name(rng, allowed))
    closing = {'"': '"', "`": "`"}.get(intro, "")
    return intro + call + closing


SEGMENT_COUNTS = (1, 1, 2, 2, 2, 3, 3, 4, 5, 6)  # mostly short responses, up to six segments
SEGMENTS = (prose, prose, prose, bare_own_line, bare_own_line, bare_mid_sentence, call_syntax_own_line,
            call_syntax_inline, tagged, tagged, xml_element, xml_unclosed, fence, fence, think_block,
            quoted_call, explicit_on_a_line)


def whole_response_array(rng: random.Random, allowed: tuple[str, ...]) -> str:
    """A response that is only an array of calls (SPEC 5.4), maybe after reasoning."""
    prefix = rng.choice(("", "", "\n ", THINK_OPEN + "plan" + THINK_CLOSE + "\n"))
    return prefix + call_array(rng, allowed) + rng.choice(("", "\n", ","))


def responses(rng: random.Random, target: FuzzTarget) -> dict:
    """Model responses from SPEC 5's formats: prose, bare calls, call:, tags, XML, fences,
    whole arrays, reasoning and quotation, 1-6 segments, with an allowlist that matches some
    names and misses others."""
    allowed = rng.choice(ALLOWED_LISTS)
    if rng.random() < 0.08:
        return fields(target, whole_response_array(rng, allowed), allowed)
    segments = [rng.choice(SEGMENTS)(rng, allowed) for _ in range(rng.choice(SEGMENT_COUNTS))]
    separator = rng.choice(("\n", "\n", "\n\n", " "))
    return fields(target, separator.join(segments), allowed)


# --- repair arguments ---------------------------------------------------------------------

def with_trailing_comma(rng: random.Random, text: str) -> str:
    """A comma before a closer: deleted when it follows a value (SPEC 6), invalid otherwise."""
    closer = max(text.rfind("}"), text.rfind("]"))
    return text[:closer] + rng.choice((",", ", ", ",\n ", ",,")) + text[closer:] if closer > 0 else text + ","


def with_mismatched_closer(rng: random.Random, text: str) -> str:
    closer = text.rfind("}")
    return text[:closer] + "]" + text[closer + 1:] if closer >= 0 else '{"a":[}'


def with_excess_closers(rng: random.Random, text: str) -> str:
    """Closers after the end: deleted when nothing but closers and whitespace follow."""
    return text + rng.choice(("}", "]", " ] } ", "}\n]\n", "}}x", "]x", "} ,"))


def with_lexical_liberty(rng: random.Random, text: str) -> str:
    """What lenient readers accept and SPEC 2 refuses: single quotes, comments, unquoted keys,
    Python literals, NaN."""
    roll = rng.randrange(6)
    if roll == 0:
        return text.replace('"', "'")
    if roll == 1:
        return text[:-1] + "/* note */}" if text.endswith("}") else text + "// note"
    if roll == 2:
        return '{a: 1, "b": 2}'
    if roll == 3:
        python = text.replace("true", "True").replace("false", "False").replace("null", "None")
        return python if python != text else '{"a": True, "b": None}'
    if roll == 4:
        return '{"a": ' + rng.choice(("NaN", "Infinity", "-Infinity", "+1", ".5", "1.", "01", "tru")) + "}"
    return text[:1] + rng.choice(NOT_WHITESPACE) + text[1:]


def with_policy_violation(rng: random.Random, text: str) -> str:
    """Grammatical documents the policies refuse: duplicate keys, lone surrogates, out-of-range
    numbers, depth past the limit."""
    return rng.choice((
        '{"a":1,"\\u0061":2}', '{"a":"\\ud800"}', '{"\\udc00":1}', '{"a":"\\ud800\\x"}', '{"a":9007199254740992}',
        '{"a":12345678901234567}', '{"a":1e400}', '{"a":9007199254740991}', '{"a":1,"a":tru}',
        '{"a":' + "[" * DEPTH_LIMIT + "]" * DEPTH_LIMIT + "}",
    ))


def arguments_text(rng: random.Random) -> str:
    """A raw argument text as models emit it, covering each SPEC 6 rule and its boundary."""
    text = json_object(rng, rng.randint(0, 3))
    roll = rng.random()
    if roll < 0.15:
        return text
    if roll < 0.4:
        return text[:rng.randrange(len(text) + 1)]  # every prefix: each truncated-after-* reason
    if roll < 0.5:
        return with_trailing_comma(rng, text)
    if roll < 0.58:
        return with_excess_closers(rng, text)
    if roll < 0.62:
        return with_mismatched_closer(rng, text)
    if roll < 0.72:
        return with_lexical_liberty(rng, text)
    if roll < 0.76:
        return "```json\n" + text + "\n```"
    if roll < 0.81:
        return string_encoded(text)  # double-encoded: a string, not an object
    if roll < 0.86:
        return rng.choice(("[1,2", "[1, ]", '"abc"', "", "]", "  ", "[,]", '{"a":1},', "{}", "[]", "null"))
    if roll < 0.94:
        return with_policy_violation(rng, text)
    return rng.choice(WHITESPACE) + text + rng.choice(WHITESPACE)


def arguments(rng: random.Random, target: FuzzTarget) -> dict:
    """Raw tool-call argument texts (SPEC 6): valid, truncated, repairable and refused."""
    return fields(target, arguments_text(rng))


# --- depth --------------------------------------------------------------------------------

def levels_around_limit(rng: random.Random) -> int:
    if rng.random() < 0.85:
        return DEPTH_LIMIT + rng.choice((-1, 0, 1))
    return DEPTH_LIMIT + rng.randint(-3, 3)


def nested_object(rng: random.Random, levels: int) -> str:
    """Exactly `levels` nested containers, the outermost an object: objects, or objects and
    arrays mixed level by level."""
    if levels <= 0:
        return "1"
    if rng.random() < 0.5:
        return '{"a":' * (levels - 1) + '{"a":1' + "}" * levels
    opens, closes = ["{"], ["}"]
    inside_object = True
    for _ in range(levels - 1):
        key = '"a":' if inside_object else ""
        inside_object = rng.random() < 0.5
        opens.append(key + ("{" if inside_object else "["))
        closes.append("}" if inside_object else "]")
    innermost = '"a":1' if inside_object else "1"
    return "".join(opens) + innermost + "".join(reversed(closes))


def deep_call(rng: random.Random, levels: int) -> str:
    """A call object whose document is `levels` deep: its arguments hold levels - 1."""
    if rng.random() < 0.2:  # a string argument restarts the count at 1 (SPEC 5.8)
        return '{"name":"click","arguments":' + string_encoded(nested_object(rng, levels)) + "}"
    return '{"name":"click","arguments":' + nested_object(rng, levels - 1) + "}"


def deep_response(rng: random.Random, levels: int) -> str:
    """A response whose deepest JSON is `levels` deep, in each place a document is read."""
    roll = rng.randrange(7)
    if roll == 0:
        return deep_call(rng, levels)
    if roll == 1:
        opener, closer = rng.choice(TAGS)
        return opener + deep_call(rng, levels) + closer
    if roll == 2:
        return CALL_PREFIX + "click" + nested_object(rng, levels)
    if roll == 3:
        return "<tool_call>" + CALL_PREFIX + "click" + nested_object(rng, levels) + "</tool_call>"
    if roll == 4:
        return "[" + deep_call(rng, levels - 1) + "]"
    if roll == 5:
        return "```json\n" + deep_call(rng, levels) + "\n```"
    return "Sure:\n" + nested_object(rng, levels)


def deep_arguments(rng: random.Random, levels: int) -> str:
    """Argument texts at the limit: complete, missing closers (repair appends them, but the
    planner counts the depth first), or with a trailing comma."""
    text = nested_object(rng, levels)
    roll = rng.randrange(4)
    if roll == 0:
        return text
    if roll == 1:
        return text[:len(text) - rng.randint(1, levels)]
    if roll == 2:
        return with_trailing_comma(rng, text)
    return '{"a":' + "[" * (levels - 1) + "1"


def depth(rng: random.Random, target: FuzzTarget) -> dict:
    """Nesting at DEPTH_LIMIT - 1, DEPTH_LIMIT and DEPTH_LIMIT + 1 (mostly), for either entry."""
    levels = levels_around_limit(rng)
    if target.entry_name == "parse":
        return fields(target, deep_response(rng, levels), ("click", "navigate", "read_page"))
    return fields(target, deep_arguments(rng, levels))


# --- caps ---------------------------------------------------------------------------------

# Fill pieces with their UTF-16 length: astral ones are one Python character but two units.
PROSE_FILL = (("x", 1), ("{", 1), (" ", 1), ("\u2028", 1), ("}", 1), ("{}", 2), ("\U0001F600", 2))
STRING_FILL = (("x", 1), ("\u00e9", 1), ("\\n", 2), ("\U0001F600", 2), ("\\ud83d\\ude00", 12))
ASTRAL = "\U0001F600"


def fill(rng: random.Random, pieces: tuple[tuple[str, int], ...], units: int) -> str:
    """Exactly `units` UTF-16 units of one repeated piece, topped up with "x"."""
    piece, size = rng.choice(pieces)
    count = max(0, units) // size
    return piece * count + "x" * (max(0, units) - count * size)


def units_around(rng: random.Random, cap: int) -> int:
    return cap + rng.randint(-2, 2)


def astral_straddling(rng: random.Random, head: str, head_units: int, cap: int) -> str:
    """An astral character whose two units sit at cap-2..cap-1, cap-1..cap or cap..cap+1, so
    a twin that counts characters instead of units sees a different length."""
    start = cap + rng.randint(-2, 0)
    return head + "x" * (start - head_units) + ASTRAL + "x" * rng.randint(0, 1)


def parse_text_near_cap(rng: random.Random) -> str:
    call = '{"name":"click"}'  # 16 units, ASCII
    total = units_around(rng, PARSE_CAP_UNITS)
    roll = rng.randrange(5)
    if roll == 0:
        return fill(rng, PROSE_FILL, total - len(call) - 1) + "\n" + call
    if roll == 1:
        return call + "\n" + fill(rng, PROSE_FILL, total - len(call) - 1)
    if roll == 2:
        return astral_straddling(rng, call + "\n", len(call) + 1, PARSE_CAP_UNITS)
    if roll == 3:
        return "{}" * (LISTED_REJECTIONS + rng.randint(-1, 1))  # the listed-rejections cap
    if rng.random() < 0.5:
        return calls_around_the_cap(rng, call)
    return "\n".join([call] * (LISTED_REJECTIONS + rng.randint(-1, 1))) + "\n{\"name\":\"nope\"}"


def calls_around_the_cap(rng: random.Random, call: str) -> str:
    """MAX_CALLS - 1 .. MAX_CALLS + 2 calls in one response (SPEC 5.12): tags on a line, own
    lines, or a whole-response array; sometimes with a refused one among them."""
    calls = [call] * (MAX_CALLS + rng.randint(-1, 2))
    if rng.random() < 0.2:
        calls[rng.randrange(len(calls))] = '{"name":"nope"}'
    layout = rng.randrange(3)
    if layout == 0:
        return "".join("<tool_call>" + c + "</tool_call>" for c in calls)
    if layout == 1:
        return "\n".join(calls)
    return "[" + ",".join(calls) + "]"


def repair_text_near_cap(rng: random.Random) -> str:
    total = units_around(rng, REPAIR_CAP_UNITS)
    roll = rng.randrange(4)
    if roll == 0:
        return '{"a":"' + fill(rng, STRING_FILL, total - 8) + '"}'
    if roll == 1:
        return astral_straddling(rng, '{"a":"', 6, REPAIR_CAP_UNITS - 2) + '"}'
    if roll == 2:
        return '{"a":"' + fill(rng, STRING_FILL, total - 6)  # truncated in the string, or too long
    return "[" * total


def caps(rng: random.Random, target: FuzzTarget) -> dict:
    """Texts of cap-2 .. cap+2 UTF-16 units, astral characters across the boundary, the
    64-entry rejection list's edge, and responses of about 16 calls (the calls' cap)."""
    if target.entry_name == "parse":
        return fields(target, parse_text_near_cap(rng), ("click", "navigate", "read_page"))
    return fields(target, repair_text_near_cap(rng))


GENERATORS = {
    "responses": responses,
    "arguments": arguments,
    "depth": depth,
    "caps": caps,
}
