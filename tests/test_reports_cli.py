"""The terminal side of the reports: grouped failure lines, progress, `extparity diff` over many
inputs, and the checks that keep report options from losing anything.

Runs use the real subject (a throwaway copy with the comma rule removed from both twins, or the
bundled project itself) on Python and QuickJS; the missing-browser run uses the whole bundled
corpus, so "one line, not one per case" is checked at the size where it matters.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import sys
import threading

import pytest
from junitparser import Error, JUnitXml, Skipped

from extparity.corpus.cases import load_corpus
from extparity.project.config import load_project
from extparity.project.errors import ConfigError
from extparity.reports.progress import Progress
from extparity.run.parity import run_parity

from support import ROOT, bundled_table
from support.cli import call_cli
from support.config_files import write_pyproject
from support.fake_extension import make_tree, write_project
from support.run_copy import (COMMA_CASES, PARSE_INPUTS, QJS, WRONG_EXPECT, Project, deviation, drop_comma_rule,
                              parse_case)

BUNDLED = load_project(ROOT / "pyproject.toml")


# ------------------------------------------------------------------ grouped failure lines

def failure_lines(err: str) -> list[str]:
    return [line.strip() for line in err.partition("\nFAILED:\n")[2].splitlines() if line.strip()]


def test_a_missing_browser_prints_one_grouped_line_for_the_whole_bundled_corpus(tmp_path):
    table = bundled_table()
    table.update(corpus=[str(ROOT / "fixtures")], known_deviations=str(ROOT / "fixtures" / "known-deviations.json"),
                 trees={name: str(ROOT / rel) for name, rel in table["trees"].items()})
    table["engines"]["python"]["path"] = str(ROOT / "py_src")
    table["engines"]["firefox"]["executable"] = "/nonexistent/firefox"
    config = write_pyproject(tmp_path / "pyproject.toml", table)
    code, _, err = call_cli("--config", str(config), "run", "--engines", "python,firefox", "--json", str(tmp_path / "r.json"))
    assert code == 1
    cases = json.loads((tmp_path / "r.json").read_text())["corpus"]["cases"]
    assert cases > 2000
    lines = failure_lines(err)
    assert len(lines) == 1, lines
    assert re.fullmatch(rf"engine firefox: crashed: browser not found: .*/nonexistent/firefox.* \({cases} cases without a verdict\)",
                        lines[0]), lines[0]


def test_cells_that_fail_for_one_cause_are_one_line_with_a_count(tmp_path):
    trees = {name: make_tree(tmp_path / name, name) for name in ("chrome", "firefox")}
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "tags.json").write_text('{"t": "test"}')
    lines = [{"id": f"throws-{i}", "fn": "parse", "input": "THROW", "allowed": [], "expect": "reference",
              "tags": ["t"], "why": "w"} for i in range(6)]
    lines.append({"id": "fine", "fn": "parse", "input": "ok", "allowed": [], "expect": "reference", "tags": ["t"], "why": "w"})
    (tmp_path / "corpus" / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    project = write_project(tmp_path, trees, {"quickjs-chrome": {"kind": "quickjs", "tree": "chrome"},
                                              "quickjs-firefox": {"kind": "quickjs", "tree": "firefox"}})
    code, _, err = call_cli("--config", str(project.path), "run")
    assert code == 1
    assert failure_lines(err) == [
        f"{engine} ERROR: RangeError: asked to throw: 6 cases (first throws-0, corpus/c.jsonl:1)"
        for engine in ("quickjs-chrome", "quickjs-firefox")]


# ------------------------------------------------------------------ progress

def some_cases(count: int):
    corpus = load_corpus(BUNDLED.corpus, BUNDLED.entries, base=BUNDLED.root)
    return corpus.cases[:count]


def test_progress_off_a_terminal_is_plain_lines(tmp_path):
    stream = io.StringIO()
    bars = Progress(stream, ["python", "quickjs-chrome"], line_every_s=0)
    result = run_parity(BUNDLED, some_cases(250), ["python", "quickjs-chrome"], progress=bars.update, log=bars.log)
    bars.finish()
    assert not result.failed
    text = stream.getvalue()
    assert "\x1b" not in text and "\r" not in text
    lines = text.splitlines()
    counted = lambda engine: [line.split(",")[0] for line in lines if line.startswith(f"{engine}: ") and "/" in line]  # noqa: E731
    assert counted("quickjs-chrome") == [
        "quickjs-chrome: 100/250 cases", "quickjs-chrome: 200/250 cases", "quickjs-chrome: 250/250 cases"]
    assert counted("python") == ["python: 200/250 cases", "python: 250/250 cases"]
    assert all(" cases/s, " in line for line in lines if "/250 cases" in line)
    assert "python: running 250 cases" in lines


def test_progress_off_a_terminal_stays_quiet_in_a_short_run():
    stream = io.StringIO()
    bars = Progress(stream, ["python"])
    run_parity(BUNDLED, some_cases(50), ["python"], progress=bars.update)
    bars.finish()
    assert stream.getvalue() == ""


def test_progress_on_a_terminal_redraws_one_bar_per_engine():
    main, secondary = pty.openpty()
    chunks: list[bytes] = []

    def drain():
        while True:
            ready, _, _ = select.select([main], [], [], 5)
            if not ready:
                return
            try:
                data = os.read(main, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    with open(secondary, "w", encoding="utf-8", closefd=True) as stream:
        assert stream.isatty()
        bars = Progress(stream, ["python", "quickjs-chrome"], draw_after_s=0, redraw_every_s=0)
        run_parity(BUNDLED, some_cases(250), ["python", "quickjs-chrome"], progress=bars.update, log=bars.log)
        bars.finish()
    reader.join(timeout=10)
    os.close(main)
    screen = b"".join(chunks).decode("utf-8")
    assert "\x1b[2F" in screen  # moved back up over its two bars to redraw them
    assert "\x1b[2Kquickjs-chrome [" in screen
    final = screen.rsplit("\x1b[2F", 1)[1]
    assert re.findall(r"\x1b\[2K(\S+)\s+\[(#+)\] (\d+/\d+) cases", final) == [
        ("python", "#" * 24, "250/250"), ("quickjs-chrome", "#" * 24, "250/250")]
    assert re.search(r"\x1b\[2F\x1b\[Jpython: 250 verdicts", screen)  # a log line printed above the bars


# ------------------------------------------------------------------ extparity diff, many inputs

@pytest.fixture(scope="module")
def rule_dropped(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("diff-many"))
    for tree in ("chrome", "firefox"):
        drop_comma_rule(project.module(tree))
    return project


def lines_file(tmp_path, texts: list[str]) -> str:
    path = tmp_path / "inputs.txt"
    path.write_bytes("".join(text + "\n" for text in texts).encode("utf-8"))
    return str(path)


def test_diff_each_line_shows_only_the_differing_input_side_by_side(rule_dropped, tmp_path):
    texts = [PARSE_INPUTS["parse-own-line"][0], PARSE_INPUTS["parse-trailing-comma"][0], "", "no calls here"]
    code, out, _ = rule_dropped.diff("--text-file", lines_file(tmp_path, texts), "--each-line", "--allowed", "click",
                                     "--engines", QJS)
    assert code == 1
    assert out.splitlines()[-1] == "verdicts DIFFER on 1 of 3 inputs"
    headers = [line for line in out.splitlines() if line.startswith("≠ ")]
    assert len(headers) == 1 and headers[0].startswith(f"≠ line-2 ({tmp_path / 'inputs.txt'}:2): ")
    assert re.search(r'^  python +quickjs-chrome$', out, re.M) and re.search(r'^  python +quickjs-firefox$', out, re.M)
    assert re.search(r'^ +> +"reason":"not-own-line",$', out, re.M)
    assert re.search(r'^ +"arguments":\{\}, +<$', out, re.M)


def test_diff_reads_inputs_from_stdin_and_compares_left_with_right(rule_dropped, monkeypatch):
    data = (PARSE_INPUTS["parse-trailing-comma"][0] + "\n" + PARSE_INPUTS["parse-tagged"][0] + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = rule_dropped.diff("--text-file", "-", "--each-line", "--allowed", "click",
                                     "--left", "quickjs-firefox", "--right", "python")
    assert code == 1
    assert re.search(r"^  quickjs-firefox +python$", out, re.M)
    assert re.search(r'^ +"calls":\[\], +\| +"calls":\[$', out, re.M)
    assert out.splitlines()[-1] == "verdicts DIFFER on 1 of 2 inputs"


def test_diff_over_a_corpus_names_exactly_the_affected_cases(rule_dropped):
    code, out, _ = rule_dropped.diff("--corpus", str(rule_dropped.root / "corpus"), "--engines", QJS)
    assert code == 1
    assert {line.split()[1] for line in out.splitlines() if line.startswith("≠ ")} == COMMA_CASES
    assert out.splitlines()[-1] == "verdicts DIFFER on 2 of 9 inputs"


def test_diff_of_inputs_that_agree_exits_0(rule_dropped, tmp_path):
    code, out, _ = rule_dropped.diff("--text-file", lines_file(tmp_path, ["a", PARSE_INPUTS["parse-tagged"][0]]),
                                     "--each-line", "--left", "python", "--right", "quickjs-chrome")
    assert code == 0 and out.splitlines() == ["verdicts agree on all 2 inputs"]


@pytest.mark.parametrize("argv, message", [
    (["--left", "python"], "--left and --right name two different engines"),
    (["--left", "python", "--right", "python"], "--left and --right name two different engines"),
    (["--left", "python", "--right", "quickjs-chrome", "--engines", "python"], "leave out --engines"),
    (["--left", "python", "--right", "safari"], "unknown engine(s) safari"),
    (["--each-line"], "--each-line reads --text-file or --raw-file"),
])
def test_diff_usage_errors_exit_2_before_any_engine_starts(rule_dropped, argv, message):
    code, out, err = rule_dropped.diff("--text", "x", *argv)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_a_line_that_is_not_utf8_is_a_clear_error(rule_dropped, tmp_path):
    path = tmp_path / "inputs.txt"
    path.write_bytes(b"fine\n\xc3\x28 broken\n")
    code, out, err = rule_dropped.diff("--text-file", str(path), "--each-line", "--engines", "python")
    assert code == 2 and out == ""
    assert err == f"extparity: {path}:2: not UTF-8 (byte 1 is 0xc3)\n"


# ------------------------------------------------------------------ report options lose nothing

def test_save_failures_never_overwrites_a_folder_of_someone_s_own(tmp_path):
    project = Project(tmp_path)
    own = tmp_path / "mine"
    own.mkdir()
    (own / "notes.txt").write_text("keep me")
    code, out, err = call_cli("--config", project.config, "run", "--engines", "python", "--save-failures", str(own))
    assert code == 2 and out == ""
    assert "not empty and not a repro folder written by extparity" in err and "running" not in err
    assert [p.name for p in own.iterdir()] == ["notes.txt"]


def test_junit_marks_known_deviations_skipped_and_engines_without_verdicts_errors(tmp_path):
    project = Project(tmp_path, parse_lines=[parse_case(i) for i in PARSE_INPUTS] + [WRONG_EXPECT],
                      deviations=[deviation("parse-wrong-expect", ["python"])], browsers={"firefox": "/nonexistent/firefox"})
    outcome = project.run("python,firefox", "r.json", "--junit", str(tmp_path / "j.xml"))
    assert outcome.code == 1
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(tmp_path / "j.xml"))}
    python = {case.name: case.result for case in suites["python"]}
    assert [type(r) for r in python.pop("parse-wrong-expect")] == [Skipped]
    assert all(result == [] for result in python.values())
    firefox = [case.result for case in suites["firefox"]]
    assert len(firefox) == len(outcome.json["cases"])
    assert all(len(r) == 1 and isinstance(r[0], Error) and r[0].type == "missing" and "browser not found" in r[0].message
               for r in firefox)


def test_an_entry_s_executes_key_must_be_one_of_its_expect_keys(tmp_path):
    trees = {name: make_tree(tmp_path / name, name) for name in ("chrome", "firefox")}
    entries = {"parse": {"module": "src/agent/tool-call-parser.js", "export": "parseToolCallsCanonical",
                         "args": ["input"], "expect": {"keys": ["calls"]}, "executes": "call"}}
    with pytest.raises(ConfigError, match=r"\[tool.extparity.entries.parse\].executes: 'call' is not one of expect.keys \(calls\)"):
        write_project(tmp_path, trees, {"q": {"kind": "quickjs", "tree": "chrome"}}, entries=entries)
    entries["parse"]["executes"] = ["calls"]
    with pytest.raises(ConfigError, match=r"\[tool.extparity.entries.parse\].executes: expected a non-empty string, got a list of 1 item"):
        write_project(tmp_path, trees, {"q": {"kind": "quickjs", "tree": "chrome"}}, entries=entries)
