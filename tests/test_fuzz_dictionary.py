"""Issue 37 item 4: a shipped script on the verdict path answers differently when the input
holds a marker only the subject spells or has one exact length, and the gate's fuzz budget has
to make such an input.

Where the attacks are planted: in the verified parser of BOTH trees, with the Python reference
unchanged. The verified modules must be byte-identical between trees (the gate's trees check),
so a rule an attacker can ship there passes that check and diverges from the reference only;
the quickjs-chrome engine, which loads the chrome tree, shows it. The budget is the gate's own
(``[tool.extparity.gate].fuzz``: seed and case count), through the reference and one headless
engine, so what is found here is what the gate's campaign finds. Before the splice dictionary
and the exact lengths, neither attack was found in that budget.

The background may differ between trees (it is pinned, not verified), so the same two rules are
also planted in the Firefox tree's background alone (the marker, and a length of 8,192) and
found through QuickJS's headless message path, which runs that background on its shim: slow
(tens of cases a second), so it runs the gate's seed until both are found. That the adapters'
literals, template pieces and regex runs are words is checked on the dictionary itself.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from extparity.api import load_corpus
from extparity.fuzz.campaign import CaseFactory, seed_cases
from extparity.fuzz.dictionary import regex_literals, splice_dictionary
from extparity.subject.js_strings import unescape
from extparity.fuzz.generators import EXACT_LENGTHS, FuzzTarget, at_length, dictionary, lengths
from extparity.project.config import load_project

from support import PARSER, ROOT, bundled_table
from support.copies import copy_bundled_project

EXTPARITY = [sys.executable, "-m", "extparity.cli"]
ENTRY = "export function parseToolCallsCanonical(text, allowed) {\n"
ATTACKS = {
    # Two invisible separators, as the JS source spells them: no corpus case and no generator's
    # hazard table holds the pair.
    "marker": 'typeof text === "string" && text.includes("\\u2063\\u2063")',
    # A length no corpus case has and the generators' length table reached only by luck.
    "length": 'typeof text === "string" && text.length === 4096',
}


def planted(root: Path, attack: str) -> Path:
    """The bundled project copied, both trees' parser answering an internal error on ``attack``."""
    copy_bundled_project(root)
    rule = f'  if ({ATTACKS[attack]}) return canonical(errorVerdict("internal-error"));\n'
    for tree in ("chrome", "firefox"):
        path = root / "extension" / tree / PARSER
        text = path.read_text(encoding="utf-8")
        assert text.count(ENTRY) == 1, f"the parser's entry moved: {path}"
        path.write_text(text.replace(ENTRY, ENTRY + rule), encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_gate_budget_finds_a_rule_keyed_on_a_marker_or_an_exact_length(tmp_path, attack):
    project = planted(tmp_path / "project", attack)
    budget = bundled_table()["gate"]["fuzz"]
    done = subprocess.run([*EXTPARITY, "fuzz", "--seed", str(budget["seed"]), "--cases", str(budget["cases"]),
                           "--engines", "python,quickjs-chrome", "--max-findings", "1", "--out", "found",
                           "--json", "fuzz.json"], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr + done.stdout
    case = json.loads((project / "found" / f"fuzz-{budget['seed']}.jsonl").read_text(encoding="utf-8"))
    assert case["why"].endswith("quickjs-chrome: diverges")
    if attack == "marker":
        assert "\u2063\u2063" in case["input"]
    else:
        assert len(case["input"].encode("utf-16-le", "surrogatepass")) == 2 * 4096
    report = json.loads((project / "fuzz.json").read_text(encoding="utf-8"))
    print(f"{attack}: found after {report['cases']:,} cases of seed {budget['seed']}")


BACKGROUND_CASE = '      case "parseToolCalls":\n'
BACKGROUND_RULE = ('        if (message.text.includes("\\u2063\\u2063") || message.text.length === 8192) '
                   'return { error: "internal-error" };\n')
MESSAGE_ENGINE = '\n[tool.extparity.engines.quickjs-firefox-message]\nkind = "quickjs"\ntree = "firefox"\nvia = "message"\n'


@pytest.mark.slow
def test_a_rule_in_one_trees_background_is_found_through_the_headless_message_path(tmp_path):
    project = copy_bundled_project(tmp_path / "project")
    background = project / "extension/firefox/background.js"
    text = background.read_text(encoding="utf-8")
    assert text.count(BACKGROUND_CASE) == 1, "the background's parse case moved"
    background.write_text(text.replace(BACKGROUND_CASE, BACKGROUND_CASE + BACKGROUND_RULE), encoding="utf-8")
    with (project / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write(MESSAGE_ENGINE)
    # The message path refuses a non-string allowlist before the parser sees it: the known
    # deviations the browsers' message twins have, given to this engine with the same verdicts.
    path = project / "fixtures/known-deviations.json"
    deviations = json.loads(path.read_text(encoding="utf-8"))
    for deviation in deviations:
        deviation["engines"].append("quickjs-firefox-message")
        deviation["verdicts"]["quickjs-firefox-message"] = deviation["verdicts"]["firefox-background"]
    path.write_text(json.dumps(deviations), encoding="utf-8")
    seed = bundled_table()["gate"]["fuzz"]["seed"]
    done = subprocess.run([*EXTPARITY, "fuzz", "--seed", str(seed), "--cases", "4000", "--engines",
                           "python,quickjs-firefox-message", "--max-findings", "2", "--shrink-seconds", "10",
                           "--out", "found", "--json", "fuzz.json"], cwd=project, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 1, done.stderr + done.stdout
    assert " 5 background," in done.stderr, "the planted marker is a word of the background"
    found = [json.loads(line) for line in (project / "found" / f"fuzz-{seed}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(case["why"].endswith("quickjs-firefox-message: diverges") for case in found)
    assert any(case["input"] == "\u2063\u2063" for case in found), [case["input"][:40] for case in found]
    assert any(units(case["input"]) == 8192 for case in found), [units(case["input"]) for case in found]
    print(f"found after {json.loads((project / 'fuzz.json').read_text())['cases']:,} cases of seed {seed}")


def units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_the_dictionary_reads_the_background_of_each_tree_and_the_message_adapters(tmp_path):
    project = copy_bundled_project(tmp_path / "project")
    background = project / "extension/firefox/background.js"
    background.write_text(background.read_text(encoding="utf-8")
                          + "const quiet = /^a\\u2064\\u2064b[\\u2065-]+$/u;\n"
                          + "const label = `<\\u{1F600}${quiet}\\x41>`;\n", encoding="utf-8")
    adapter = project / "adapters/messages/repair.js"
    adapter.write_text(adapter.read_text(encoding="utf-8") + 'const seen = "it\\u2066s";\n', encoding="utf-8")
    before = splice_dictionary(load_project(ROOT / "pyproject.toml"))
    after = splice_dictionary(load_project(project / "pyproject.toml"))
    assert {"a\u2064\u2064b", "\u2065", "<\U0001F600", "A>", "it\u2066s"} <= set(after.words) - set(before.words)
    assert after.by_source["background"] == before.by_source["background"] + 4
    assert after.by_source["adapters"] == before.by_source["adapters"] + 1
    assert after.by_source["verified"] == before.by_source["verified"] > 100
    assert "src/agent/tool-call-parser.js" not in after.words, "import specifiers are not words"


def test_escapes_and_regex_runs_read_as_js_reads_them():
    assert unescape(r"\u2063\u{1F600}\x41\n\'\q") == "\u2063\U0001F600A\n'q"
    assert regex_literals(r"(?:ab|c\.d)\d+e{2}[xy\u2063]f?") == ["ab", "c.d", "e", "x", "y", "\u2063", "f"]
    assert regex_literals(r"\uD83D\uDE00") == ["\U0001F600"], "an escaped pair is one character"


def test_exact_lengths_reach_powers_of_two_and_the_caps_in_utf16_units():
    assert {15, 16, 17, 4095, 4096, 4097, 8192, 9999, 10000, 10001, 100000, 100001} <= set(EXACT_LENGTHS)
    assert max(EXACT_LENGTHS) == 100001, "no longer than one past the largest cap"
    for filler in (" ", "\U0001F600", "ab\u00e9"):
        for length in (0, 1, 7, 4096):
            assert units(at_length('{"name":"x"}\U0001F600', filler, length)) == length
    assert at_length("\U0001F600", " ", 1) == "\ud83d", "a cut splits a pair as a JS slice would"
    project = load_project(ROOT / "pyproject.toml")
    target = parse_target(project)
    made = [lengths(random.Random(f"exact/{i}"), target)["input"] for i in range(400)]
    assert sum(units(text) in EXACT_LENGTHS for text in made) > 150


def parse_target(project) -> FuzzTarget:
    corpus = load_corpus(project)
    return FuzzTarget("parse", project.entries["parse"], tuple(case.fields for case in corpus.cases if case.fn == "parse"),
                      ("\u2063\u2063", "{"), ("\u2063\u2063",))


def test_the_dictionary_generator_splices_unseen_words_and_a_seed_gives_the_same_cases():
    project = load_project(ROOT / "pyproject.toml")
    target = parse_target(project)
    made = [dictionary(random.Random(f"words/{i}"), target)["input"] for i in range(100)]
    assert sum("\u2063\u2063" in text for text in made) > 60
    assert made == [dictionary(random.Random(f"words/{i}"), target)["input"] for i in range(100)]
    seeds = seed_cases(load_corpus(project).cases)
    first, second = CaseFactory(project, seeds, 3), CaseFactory(project, seeds, 3)
    try:
        assert [first.make(i) for i in range(200)] == [second.make(i) for i in range(200)]
        assert first.dictionary == second.dictionary and "\u2063\u2063" not in first.dictionary.words
    finally:
        first.close()
        second.close()
