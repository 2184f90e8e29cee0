"""`extparity diff --entry NAME --arg FIELD=VALUE` sends one input to any configured entry
(`FIELD:=JSON` for a value that is not a string); `--text`/`--raw` stay shorthands for the
bundled subject's `parse`/`repair`, and say so in one line on a project without them."""

from __future__ import annotations

import pytest

from support.cli import call_cli
from support.copies import copy_shaped

HEADLESS = "python,quickjs-chrome,quickjs-firefox"


@pytest.mark.slow
def test_entry_and_args_give_what_the_shorthands_give_for_the_bundled_subject():
    text = '{"name":"click","arguments":{}}\n{"name":"run","arguments":{}}'
    shorthand = call_cli("diff", "--text", text, "--allowed", "click", "--engines", HEADLESS)
    general = call_cli("diff", "--entry", "parse", "--arg", f"input={text}", "--arg", 'allowed:=["click"]',
                       "--engines", HEADLESS)
    assert shorthand[0] == general[0] == 0, general
    assert general[1] == shorthand[1] and "verdicts agree" in general[1] and '"name":"click"' in general[1]
    repaired = call_cli("diff", "--entry", "repair", "--arg", 'input={"a": [1, 2', "--engines", HEADLESS)
    assert repaired[1] == call_cli("diff", "--raw", '{"a": [1, 2', "--engines", HEADLESS)[1]


def test_an_entry_of_another_extension_takes_its_own_fields(tmp_path):
    shaped = copy_shaped(tmp_path / "shaped", twins=True)  # without its planted twin difference
    config = str(shaped / "pyproject.toml")
    code, out, err = call_cli("--config", config, "diff", "--entry", "calls", "--arg", 'text={"name":"go","arguments":{}}',
                              "--arg", 'allowed:=["go"]', "--engines", "quickjs-chrome,v8-chrome")
    assert code == 0, err
    assert out.splitlines()[-1] == "verdicts agree" and '"go"' in out
    shorthand = call_cli("--config", config, "diff", "--text", "x", "--engines", "quickjs-chrome")
    assert shorthand[0] == 2
    assert shorthand[2].strip() == ("extparity: --text is a shorthand for the bundled subject's 'parse' entry, which this "
                                    "project does not have: use --entry NAME --arg FIELD=VALUE (entries: calls)")


@pytest.mark.parametrize("argv, message", [
    (["--entry", "nope", "--arg", "input=x"], "--entry nope: no such entry (entries: parse, repair)"),
    (["--entry", "parse", "--arg", "input=x"], "--entry parse needs --arg allowed=... (its fields: input, allowed)"),
    (["--entry", "parse", "--arg", "input=x", "--arg", "allowed:=[]", "--arg", "colour=red"],
     "--arg colour: entry parse has no such field (its fields: input, allowed)"),
    (["--entry", "parse", "--arg", "input"], "--arg input: expected FIELD=VALUE or FIELD:=JSON"),
    (["--entry", "parse", "--arg", "input=x", "--arg", "allowed:=[nope"], "--arg allowed:=[nope: not JSON"),
    (["--text", "x", "--arg", "input=x"], "--arg goes with --entry"),
])
def test_entry_usage_errors_are_one_line_exit_2(argv, message):
    code, _, err = call_cli("diff", *argv, "--engines", "python")
    assert code == 2 and err.strip().startswith(f"extparity: {message}"), err
