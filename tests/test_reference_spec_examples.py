"""Every example in SPEC.md is the reference's real output.

SPEC.md promises that its examples are pasted, unedited, from the Python reference. This test
reads every one back: the `fn(args)` / `→ verdict` pairs of the ~~~text blocks and the rows of the
repair tables (input in the first cell, verdict in the last), evaluates the input notation
(JSON string literals, `"x" × N` for repetition, `+` to join) and compares the reference's
canonical verdict with the text, byte for byte. Being a reference test, its inputs are also
replayed through the JS twins by test_twins_replay.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

SPEC = Path(__file__).parent.parent / "SPEC.md"
DEFAULT_ALLOWED = ["click", "navigate", "read_page"]
FUNCTIONS = {"parse_tool_calls": parse_tool_calls_canonical, "repair_arguments": repair_arguments_canonical}
_decoder = json.JSONDecoder()


def _term(text: str, i: int):
    value, i = _decoder.raw_decode(text, i)
    repeat = re.match(r" × (\d+)", text[i:])
    if repeat:
        value *= int(repeat.group(1))
        i += repeat.end()
    return value, i


def arguments(text: str) -> list:
    """The arguments of an example call, in SPEC.md's notation."""
    out, i = [], 0
    while i < len(text):
        value, i = _term(text, i)
        while text.startswith(" + ", i):
            more, i = _term(text, i + 3)
            value += more
        out.append(value)
        if text.startswith(", ", i):
            i += 2
        elif i != len(text):
            raise ValueError(f"cannot read {text[i:]!r}")
    return out


def examples():
    lines = SPEC.read_text(encoding="utf-8").split("\n")
    found = []
    for number, line in enumerate(lines, start=1):
        call = re.fullmatch(r"(parse_tool_calls|repair_arguments)\((.*)\)", line)
        if call and number < len(lines) and lines[number].startswith("→ "):
            found.append((number, call.group(1), call.group(2), lines[number][2:]))
        row = re.fullmatch(r"\| `(\".*?)` \|(?:.* \|)? `(\{\"actions\".*\})` \|", line)
        if row:
            found.append((number, "repair_arguments", row.group(1), row.group(2)))
    return found


EXAMPLES = examples()


def test_spec_has_its_examples():
    assert len(EXAMPLES) >= 200
    assert {fn for _, fn, _, _ in EXAMPLES} == set(FUNCTIONS)


@pytest.mark.parametrize("line,fn,call,verdict", EXAMPLES, ids=[f"SPEC.md:{e[0]}" for e in EXAMPLES])
def test_spec_example_is_the_reference_output(line, fn, call, verdict):
    args = arguments(call)
    if fn == "parse_tool_calls" and len(args) == 1:
        args.append(DEFAULT_ALLOWED)
    assert FUNCTIONS[fn](*args) == verdict


def rewrite_spec() -> int:
    """Replace every example verdict in SPEC.md with the reference's output; returns how many
    changed. `python tests/test_reference_spec_examples.py --write`, then read the diff."""
    lines = SPEC.read_text(encoding="utf-8").split("\n")
    changed = 0
    for number, fn, call, verdict in examples():
        args = arguments(call)
        if fn == "parse_tool_calls" and len(args) == 1:
            args.append(DEFAULT_ALLOWED)
        actual = FUNCTIONS[fn](*args)
        if actual != verdict:
            index = number if lines[number].startswith("→ ") else number - 1
            lines[index] = lines[index].replace(verdict, actual)
            changed += 1
    SPEC.write_text("\n".join(lines), encoding="utf-8")
    return changed


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_reference_spec_examples.py --write")
    print(f"{rewrite_spec()} example verdicts rewritten in {SPEC}")
