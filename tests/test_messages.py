"""The messages a new user meets first, each as a user met it (issue 23, point 4): they must say
what is wrong and what to do, in plain words, without reading as the opposite.

Each runs the real command on a copy of `tests/extensions/subfolder`, changed the way a user's
extension was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import SUBFOLDER
from support.cli import call_cli
from support.copies import copy_subfolder


def both_trees(copy: Path, rel: str, old: str, new: str) -> None:
    for tree in ("chrome", "firefox"):
        path = copy / tree / rel
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))


def test_an_entry_that_returns_an_object_is_pointed_at_adapters(tmp_path):
    copy = copy_subfolder(tmp_path)
    both_trees(copy, "src/lib/parser.js", "return JSON.stringify({ calls });", "return { calls };")
    code, _, stderr = call_cli("--config", str(copy / "pyproject.toml"), "run", "--engines", "quickjs-chrome",
                               "--json", str(tmp_path / "r.json"))
    result = json.loads((tmp_path / "r.json").read_text())
    assert code == 1
    note = result["cases"][0]["notes"]["quickjs-chrome"][0]
    assert note == ('TypeError: entry calls returned object, not a string: give the entry an adapter that returns '
                    'the verdict text ([tool.extparity.entries.calls].adapter, or its message adapter on the message '
                    'path; docs/quickstart.md, "Pointing extparity at your own extension", step 3)')
    # the engine itself ran to the end: its own state is said apart from its cases'
    assert "quickjs-chrome: 0 verdicts, 4 cases that threw, timed out or crashed in " in stderr
    assert "; engine ran to the end" in stderr
    assert "failed cases" not in stderr and "(ok)" not in stderr


def test_counts_agree_with_their_nouns(tmp_path):
    code, stdout, stderr = call_cli("--config", str(SUBFOLDER / "pyproject.toml"), "run",
                                    "--engines", "quickjs-chrome,quickjs-firefox,v8-chrome")
    assert code == 0, stderr
    assert stdout.splitlines()[-1] == ("3 of 4 cases agree across quickjs-chrome, quickjs-firefox, v8-chrome and meet "
                                       "their expectations; 1 case (2 cells) is a known deviation")
    assert "quickjs-chrome: 4 verdicts in " in stderr
    code, stdout, _ = call_cli("--config", str(SUBFOLDER / "pyproject.toml"), "corpus", "lint")
    assert (code, stdout) == (0, "4 cases in 1 file, 0 problems\n")


def test_failure_lines_go_case_by_case_and_engine_by_engine(tmp_path):
    """Three kinds of failing cell over three cases and two engines: the lines follow the corpus,
    and within a case the run's engine order, however the causes group."""
    copy = copy_subfolder(tmp_path)
    (copy / "corpus/known-deviations.json").write_text("[]\n")
    lines = (copy / "corpus/calls.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["expect"] = {"calls": ["close"]}  # both engines agree, and both miss the expectation
    again = json.loads(lines[3])
    again["id"], again["text"] = "tiny-factor-again", again["text"].replace("zoom", "pan")
    again["allowed"] = ["pan"]
    (copy / "corpus/calls.jsonl").write_text("\n".join([json.dumps(first), *lines[1:], json.dumps(again)]) + "\n")
    code, _, stderr = call_cli("--config", str(copy / "pyproject.toml"), "run", "--engines", "quickjs-chrome,v8-chrome")
    assert code == 1
    failed = stderr.split("FAILED:\n")[1].splitlines()
    assert [line.split(":")[0].strip() for line in failed] == [
        "one-call [quickjs-chrome] UNEXPECTED", "one-call [v8-chrome] UNEXPECTED",
        "tiny-factor [quickjs-chrome] DIVERGES", "tiny-factor [v8-chrome] DIVERGES",
        "tiny-factor-again [quickjs-chrome] DIVERGES", "tiny-factor-again [v8-chrome] DIVERGES",
    ]


@pytest.mark.browser
def test_chromiums_console_error_reads_as_one_sentence_without_the_logs_quoting(tmp_path):
    copy = copy_subfolder(tmp_path)
    background = copy / "chrome/src/background.js"
    background.write_text(background.read_text() + 'throw new Error("boom at start-up");\n')
    code, _, _ = call_cli("--config", str(copy / "pyproject.toml"), "run", "--engines", "chromium",
                          "--json", str(tmp_path / "r.json"))
    engine = json.loads((tmp_path / "r.json").read_text())["engines"]["chromium"]
    assert code == 1 and engine["status"] == "crashed"
    assert engine["detail"] == ("the extension's service worker failed at start-up: Uncaught Error: boom at start-up "
                                "(src/background.js:19)")


def test_a_console_line_without_chromiums_source_suffix_is_kept_as_it_is():
    from extparity.engines.kinds.chromium import console_text

    assert console_text('Uncaught Error: x", source: chrome-extension://abcdefghijklmnopabcdefghijklmnop/a/b.js (7)') \
        == "Uncaught Error: x (a/b.js:7)"
    assert console_text("Extension error: Manifest is not valid JSON.") == "Extension error: Manifest is not valid JSON."


def test_config_is_accepted_after_the_subcommand_too(tmp_path):
    config = str(SUBFOLDER / "pyproject.toml")
    for argv in (["--config", config, "corpus", "lint"], ["corpus", "lint", "--config", config],
                 ["corpus", "--config", config, "lint"], ["--config", "/nonexistent.toml", "corpus", "lint", "--config", config]):
        assert call_cli(*argv) == (0, "4 cases in 1 file, 0 problems\n", ""), argv
    code, _, err = call_cli("corpus", "lint", "--config", str(tmp_path / "missing.toml"))
    assert code == 2 and "missing.toml" in err


def test_a_reference_function_that_returns_an_object_is_told_to_return_the_verdict_text(tmp_path):
    copy = copy_subfolder(tmp_path)
    (copy / "reference.py").write_text("def parse_calls(text, allowed):\n    return {'calls': []}\n")
    config = copy / "pyproject.toml"
    config.write_text(config.read_text() + '\n[tool.extparity.engines.python]\nkind = "python"\npath = ["."]\n'
                                           'functions = { calls = "reference:parse_calls" }\n')
    code, _, _ = call_cli("--config", str(config), "run", "--engines", "python", "--json", str(tmp_path / "r.json"))
    note = json.loads((tmp_path / "r.json").read_text())["cases"][0]["notes"]["python"][0]
    assert code == 1
    assert note == ("TypeError: reference for calls returned dict, not a string: name a function that returns the "
                    "verdict text (one that serialises what the parser returns, as a JS entry's adapter does)")
