"""The pytest plugin, run the way a user runs it: `pytest --extparity` in a project of its own.

Each test builds a copy of `tests/extensions/shaped` (no Python reference: engines are compared
with each other) in pytester's folder, runs pytest on it in a subprocess, runs `extparity run`
on the same copy and engines, and holds the two to one answer: every item's outcome is what
the run's JSON result says of its cell or check, and pytest fails exactly when `run` fails.
The copies plant what a hand-written per-case test passed while `run` failed: a divergence on
a parity-only case with no reference, and twins that differ on disk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.cli import call_cli
from support.copies import copy_shaped
from support.plugin_outcomes import OUTCOME, expected_outcomes

pytest_plugins = ["pytester"]

ENGINES = "quickjs-chrome,quickjs-firefox,v8-chrome"
# QuickJS-ng prints 2**-24 with 17 digits, V8 with 16: a real engine difference, in a module that
# stays byte-identical in both trees (and one the headless engines' purity guard allows, unlike
# toLocaleString).
ANCHOR = "    return calls.map((call) => ({\n"
PLANTED = ('    if (text.includes("PLANTED")) calls.push({ name: "open", arguments: { n: String(2 ** -24) } });\n'
           + ANCHOR)
PLANTED_CASE = {"id": "planted", "fn": "calls", "text": "PLANTED", "allowed": ["open"], "expect": "reference",
                "tags": ["prose"], "why": "parity only: every engine must give the same verdict"}


def shaped_copy(pytester: pytest.Pytester, *, identical_twins: bool = True, planted: bool = False) -> Path:
    root = copy_shaped(pytester.path, twins=identical_twins)  # the shipped copy's twins differ by a comment, on purpose
    if planted:
        for tree in ("chrome", "firefox"):
            module = root / tree / "lib/parser/index.js"
            text = module.read_text(encoding="utf-8")
            assert text.count(ANCHOR) == 1
            module.write_text(text.replace(ANCHOR, PLANTED), encoding="utf-8")
        with (root / "corpus/calls.jsonl").open("a", encoding="utf-8") as corpus:
            corpus.write(json.dumps(PLANTED_CASE) + "\n")
    return root


def run_pytest(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, str], str]:
    """pytest in a subprocess, as a user runs it: (exit code, node id -> outcome, output)."""
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", "--extparity-engines", ENGINES, *args)
    output = result.stdout.str() + result.stderr.str()
    return int(result.ret), {node: outcome for outcome, node in OUTCOME.findall(output)}, output


def run_extparity(root: Path) -> tuple[int, dict, str, str]:
    """`extparity run --json` on the same project and engines: (exit code, result, its bytes, stderr)."""
    target = root / "out" / "run.json"
    code, _, err = call_cli("--config", str(root / "pyproject.toml"), "run", "--engines", ENGINES, "--json", str(target))
    text = target.read_text(encoding="ascii")
    return code, json.loads(text), text, err




@pytest.mark.slow
def test_no_reference_a_divergence_on_a_parity_only_case_fails_its_item_as_run_fails_it(pytester):
    root = shaped_copy(pytester, planted=True)
    pytester.makepyfile(test_result="""
        from pathlib import Path
        from extparity import api

        def test_the_fixture_is_the_result_run_writes(extparity_result, extparity_project):
            assert extparity_project.reference is None
            Path("out").mkdir(exist_ok=True)
            Path("out/plugin.json").write_text(api.result_bytes(extparity_result), encoding="ascii")
    """)
    code, outcomes, output = run_pytest(pytester, "--extparity")
    run_code, document, run_bytes, run_err = run_extparity(root)
    assert run_code == 1 and "planted [v8-chrome] DIVERGES: differs from the majority (quickjs-chrome, quickjs-firefox)" in run_err
    assert code == 1, output
    assert outcomes.pop("test_result.py::test_the_fixture_is_the_result_run_writes") == "PASSED", output
    assert outcomes == expected_outcomes(document), output
    assert [node for node, outcome in outcomes.items() if outcome != "PASSED"] == ["pyproject.toml::v8-chrome::planted"]
    assert "v8-chrome diverges (corpus/calls.jsonl:7): differs from the majority (quickjs-chrome, quickjs-firefox)" in output
    assert '--- majority\n+++ v8-chrome\n' in output and '-        "n":"5.9604644775390625e-8"\n+        "n":"5.960464477539063e-8"' in output
    assert (root / "out/plugin.json").read_text(encoding="ascii") == run_bytes
    assert output.count("extparity: ran 3 engines over 7 cases once, in this process") == 1


@pytest.mark.slow
def test_twins_that_differ_on_disk_fail_the_modules_item_as_run_fails_them(pytester):
    root = shaped_copy(pytester, identical_twins=False)
    code, outcomes, output = run_pytest(pytester, "--extparity")
    run_code, document, _, run_err = run_extparity(root)
    assert run_code == 1 and "module: lib/parser/scan.js: twins differ on disk" in run_err
    assert code == 1, output
    assert outcomes == expected_outcomes(document), output
    assert [node for node, outcome in outcomes.items() if outcome != "PASSED"] == ["pyproject.toml::modules"]
    assert re.search(r"lib/parser/scan.js: twins differ on disk \(chrome/lib/parser/scan.js \w+, "
                     r"firefox/lib/parser/scan.js \w+\)", output)


@pytest.mark.slow
def test_known_deviations_and_corpus_problems_are_items_judged_as_in_run(pytester):
    root = shaped_copy(pytester, planted=True)
    link = "https://example.com/issue/1"
    (root / "known.json").write_text(json.dumps([
        {"case": "planted", "engines": ["v8-chrome"], "reason": "QuickJS-ng prints 2**-24 with 17 digits, V8 with 16", "link": link},
        {"case": "one-call", "engines": ["quickjs-firefox"], "reason": "stale: it agrees now", "link": link},
        {"case": "no-such-case", "engines": ["v8-chrome"], "reason": "names no case", "link": link},
    ]), encoding="utf-8")
    config = root / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        'corpus = ["corpus"]', 'corpus = ["corpus"]\nknown_deviations = "known.json"'), encoding="utf-8")
    with (root / "corpus/calls.jsonl").open("a", encoding="utf-8") as corpus:
        corpus.write('{"id": "broken", "fn": "calls"\n')
    code, outcomes, output = run_pytest(pytester, "--extparity")
    run_code, document, _, _ = run_extparity(root)
    assert run_code == 1 and code == 1
    assert outcomes == expected_outcomes(document), output
    assert {node: outcome for node, outcome in outcomes.items() if outcome != "PASSED"} == {
        "pyproject.toml::corpus": "FAILED",
        "pyproject.toml::known-deviations": "FAILED",
        "pyproject.toml::quickjs-firefox::one-call": "FAILED",
        "pyproject.toml::v8-chrome::planted": "XFAIL",
    }
    assert "corpus/calls.jsonl:8: " in output and "known.json[2]: no case 'no-such-case' in the corpus" in output


@pytest.mark.slow
def test_an_engine_that_cannot_start_fails_its_engine_item_and_every_cell_of_it(pytester):
    root = shaped_copy(pytester)
    config = root / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8") + '\n[tool.extparity.engines.chromium-nowhere]\n'
                      'kind = "chromium"\ntree = "chrome"\nexecutable = "/nonexistent/chromium"\n', encoding="utf-8")
    code, outcomes, output = run_pytest(pytester, "--extparity", "--extparity-engines", "quickjs-chrome,chromium-nowhere")
    assert code == 1
    failing = {node for node, outcome in outcomes.items() if outcome != "PASSED"}
    assert failing == {"pyproject.toml::engine[chromium-nowhere]",
                       *(f"pyproject.toml::chromium-nowhere::{case}" for case in
                         ["one-call", "two-calls", "not-allowed", "prose-only", "mid-sentence", "bad-json-line"])}, output
    assert "chromium-nowhere: crashed: browser not found: /nonexistent/chromium" in output
    assert "chromium-nowhere missing (corpus/calls.jsonl:1): engine crashed: browser not found" in output


@pytest.mark.slow
def test_workers_share_one_run_and_k_and_x_select_without_changing_the_judgement(pytester):
    root = shaped_copy(pytester, planted=True)
    _, document, _, _ = run_extparity(root)
    expected = expected_outcomes(document)
    code, outcomes, output = run_pytest(pytester, "--extparity", "-n", "2")
    assert code == 1 and outcomes == expected, output
    assert len(re.findall(r"extparity: ran 3 engines over 7 cases once, in worker gw\d", output)) == 1, output
    assert "2 workers [" in output
    code, outcomes, output = run_pytest(pytester, "--extparity", "-n", "2", "-k", "v8-chrome")
    assert code == 1 and outcomes == {node: outcome for node, outcome in expected.items() if "v8-chrome" in node}, output
    code, outcomes, output = run_pytest(pytester, "--extparity", "-x")
    assert code == 1 and list(outcomes.values()).count("FAILED") == 1 and "stopping after 1 failures" in output, output
    assert outcomes["pyproject.toml::v8-chrome::planted"] == "FAILED"


@pytest.mark.slow
def test_the_ini_option_enables_it_and_named_paths_or_o_extparity_false_leave_it_out(pytester):
    root = shaped_copy(pytester)
    config = root / "pyproject.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[tool.pytest.ini_options]\nextparity = true\n",
                      encoding="utf-8")
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--extparity-engines", "quickjs-chrome")
    collected = [line for line in result.stdout.lines if "::" in line]
    assert collected[:5] == ["pyproject.toml::corpus", "pyproject.toml::modules", "pyproject.toml::known-deviations",
                             "pyproject.toml::engine[quickjs-chrome]", "pyproject.toml::quickjs-chrome::one-call"]
    assert len(collected) == 4 + 6 + 1 and "test_other.py::test_other" in collected
    for leave_out in (["test_other.py"], ["-o", "extparity=false"]):
        result = pytester.runpytest_subprocess("--collect-only", "-q", *leave_out)
        assert [line for line in result.stdout.lines if "::" in line] == ["test_other.py::test_other"]
    result = pytester.runpytest_subprocess("--collect-only", "-q", "pyproject.toml", "--extparity-engines", "v8-chrome")
    assert [line for line in result.stdout.lines if "::" in line][-1] == "pyproject.toml::v8-chrome::bad-json-line"


def test_a_bad_config_or_engine_name_is_a_one_line_usage_error(pytester):
    shaped_copy(pytester)
    result = pytester.runpytest_subprocess("--extparity", "--extparity-engines", "quickjs-chrome,nosuch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "extparity: unknown engine(s) nosuch; choose from quickjs-chrome" in result.stderr.str()
    result = pytester.runpytest_subprocess("--extparity", "--extparity-config", "missing/pyproject.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(r"extparity: \S*missing/pyproject.toml: cannot read it", result.stderr.str())
