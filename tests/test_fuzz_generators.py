"""The fuzzer's input generators: their contract with the campaign, and that they reach what
they are for.

The contract (fields from entry.args only, JSON values, same output for the same rng seed) is
what makes a case replayable from (seed, index). The reach checks run outputs through the
Python reference: a generator that silently stopped producing calls, or numbers at a midpoint,
would keep the campaign green while testing nothing.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

import toolcalls
from extparity.corpus.cases import load_corpus
from extparity.fuzz.generators import BUILTIN, NUMBER, FuzzTarget, GeneratorError, load_plugin
from extparity.project.config import load_project

from support import ROOT

PROJECT = load_project(ROOT / "pyproject.toml")
CORPUS = load_corpus([ROOT / "fixtures"], PROJECT.entries, base=ROOT)
TARGETS = {name: FuzzTarget(name, entry, tuple(case.fields for case in CORPUS.cases if case.fn == name))
           for name, entry in PROJECT.entries.items()}
PLUGIN = load_plugin("adapters/fuzz_grammar.py", ROOT)
ALL = {**BUILTIN, **PLUGIN}
REPAIR_STATUSES = {"valid", "repaired", "rejected"}  # SPEC 6
PARSE_FORMATS = {"array", "tagged", "tagged-call", "xml", "fenced", "bare", "bare-call"}  # SPEC 5.11


def generate(name: str, entry: str, index: int, seed: str = "test") -> dict:
    return ALL[name](random.Random(f"{seed}/{index}"), TARGETS[entry])


def parse_verdicts(name: str, count: int) -> list[dict]:
    verdicts = []
    for index in range(count):
        case = generate(name, "parse", index)
        allowed = case.get("allowed", ["click", "navigate", "read_page"])
        verdicts.append(json.loads(toolcalls.parse_tool_calls_canonical(case["input"], allowed)))
    return verdicts


def repair_verdicts(name: str, count: int) -> list[dict]:
    return [json.loads(toolcalls.repair_arguments_canonical(generate(name, "repair", index)["input"]))
            for index in range(count)]


def test_the_corpus_gives_seeds_to_both_entries():
    assert not CORPUS.problems
    assert set(PLUGIN) == {"responses", "arguments", "depth", "caps"}
    assert all(len(target.seeds) > 100 for target in TARGETS.values())


@pytest.mark.parametrize("entry", sorted(TARGETS))
@pytest.mark.parametrize("name", sorted(ALL))
def test_a_generator_returns_the_entrys_fields_as_json_and_repeats_itself(name, entry):
    args = TARGETS[entry].entry.args
    for index in range(300):
        case = generate(name, entry, index)
        assert case and set(case) <= set(args), f"{name} case {index}: fields {sorted(case)}, entry takes {args}"
        json.dumps(case)  # lone surrogates are fine: they cross as \uXXXX escapes
        assert generate(name, entry, index) == case, f"{name} case {index} differs on a second run"


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_builtin_generator_falls_back_to_a_short_string_without_string_seeds(name):
    target = FuzzTarget("parse", PROJECT.entries["parse"], ({"input": 42, "allowed": []}, {"input": None, "allowed": []}))
    for index in range(20):
        case = BUILTIN[name](random.Random(f"empty/{index}"), target)
        assert set(case) == {"input"} and isinstance(case["input"], str) and len(case["input"]) <= 12


def test_responses_reach_calls_rejections_and_every_format():
    verdicts = parse_verdicts("responses", 2000)
    first = verdicts[:500]
    called = sum(bool(verdict["calls"]) for verdict in first) / len(first)
    refused = sum(bool(verdict["rejected"]) for verdict in first) / len(first)
    assert called >= 0.15 and refused >= 0.15, f"with a call: {called:.1%}, with a rejection: {refused:.1%}"
    formats = {call["format"] for verdict in verdicts for call in verdict["calls"]}
    assert formats == PARSE_FORMATS, f"formats never called over 2,000 cases: {sorted(PARSE_FORMATS - formats)}"


def test_arguments_reach_every_repair_status_and_many_reasons():
    verdicts = repair_verdicts("arguments", 1000)
    statuses = {verdict["status"] for verdict in verdicts}
    outcomes = {verdict["reason"] for verdict in verdicts} | {
        action["op"] for verdict in verdicts for action in verdict["actions"]}
    assert statuses == REPAIR_STATUSES, f"statuses: {sorted(statuses)}"
    assert len(outcomes - {None}) >= 5, f"reasons and actions: {sorted(map(str, outcomes))}"


def significant_digits(literal: str) -> str:
    mantissa = literal.lstrip("-+").split("e")[0].split("E")[0]
    return mantissa.replace(".", "").lstrip("0")


def truncated_to_17_digits(literal: str) -> str:
    """The literal with its significant digits past the 17th dropped (as zeros before the point)."""
    value = Decimal(literal)
    sign, digits, exponent = value.as_tuple()
    kept = len(digits) - 17
    return str(Decimal((sign, digits[:17], exponent + kept)))


def is_read_as_double(literal: str) -> bool:
    """Integer literals of 17+ digits are refused outright (SPEC 2), so only a literal with a
    fraction or an exponent is rounded, and can be a midpoint hazard."""
    return any(mark in literal for mark in ".eE")


def test_numbers_write_literals_whose_rounding_needs_more_than_17_digits():
    # Seeds without numbers: the corpus has midpoint literals of its own, which must not count.
    target = FuzzTarget("repair", PROJECT.entries["repair"], ({"input": '{"a":"x","b":[]}'}, {"input": "{}"}))
    for index in range(500):
        text = BUILTIN["numbers"](random.Random(f"numbers/{index}"), target)["input"]
        for match in NUMBER.finditer(text):
            literal = match.group()
            if is_read_as_double(literal) and len(significant_digits(literal)) >= 40 and float(literal) != float(truncated_to_17_digits(literal)):
                return
    pytest.fail("no literal of 40+ significant digits that its 17-digit truncation misrounds in 500 cases")


def test_depth_lands_on_both_sides_of_the_limit():
    verdicts = parse_verdicts("depth", 300)
    too_deep = sum(rejection["reason"] == "too-deep" for verdict in verdicts for rejection in verdict["rejected"])
    accepted = sum(len(verdict["calls"]) for verdict in verdicts)
    assert too_deep and accepted, f"too-deep rejections: {too_deep}, accepted deep calls: {accepted}"
    repaired = repair_verdicts("depth", 300)
    assert {"too-deep", None} <= {verdict["reason"] for verdict in repaired}


def test_caps_land_on_both_sides_of_the_length_cap():
    errors = {verdict["error"] for verdict in parse_verdicts("caps", 300)}
    assert errors == {None, "too-long"}
    reasons = {verdict["reason"] for verdict in repair_verdicts("caps", 100)}
    assert "too-long" in reasons and len(reasons) > 1


@pytest.mark.parametrize(("source", "problem"), [
    (None, "no such file"),
    ("raise RuntimeError('broken plugin\\nsecond line')", "import failed: RuntimeError: broken plugin"),
    ("X = 1", "defines no GENERATORS"),
    ("GENERATORS = {'g': 42}", "GENERATORS['g'] is not callable"),
])
def test_a_broken_plugin_is_one_line_naming_its_ref(tmp_path, source, problem):
    if source is not None:
        (tmp_path / "plugin.py").write_text(source, encoding="utf-8")
    with pytest.raises(GeneratorError) as raised:
        load_plugin("plugin.py", tmp_path)
    message = str(raised.value)
    assert "plugin.py" in message and problem in message and "\n" not in message, message


def test_a_plugin_can_be_a_module_name(tmp_path, monkeypatch):
    (tmp_path / "fuzz_plugin_by_name.py").write_text("GENERATORS = {'g': lambda rng, target: {}}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert list(load_plugin("fuzz_plugin_by_name", ROOT)) == ["g"]
    with pytest.raises(GeneratorError, match="no_such_module_for_fuzz: import failed: ModuleNotFoundError"):
        load_plugin("no_such_module_for_fuzz", ROOT)


def test_an_entry_without_arguments_is_left_out_of_generation_and_said_not_a_crash():
    """`init` writes an entry for an export that takes nothing; the generators read the first
    argument and raised IndexError on it. Every call of such an entry is the one its corpus case
    makes, so the campaign leaves it out and says so; with nothing else, there is nothing to do."""
    from dataclasses import replace

    from extparity.fuzz.campaign import CaseFactory, seed_cases
    from extparity.project.config import Entry

    bare = Entry(name="version", module="src/agent/json-core.js", export="canonical", args=())
    project = replace(PROJECT, entries={**PROJECT.entries, "version": bare})
    seeds = seed_cases(CORPUS.cases)
    factory = CaseFactory(project, seeds, 7)
    assert factory.without_arguments == ["version"] and factory.entry_names == ["parse", "repair"]
    assert {factory.make(index)[0].fn for index in range(200)} == {"parse", "repair"}
    with pytest.raises(GeneratorError, match=r"^nothing to generate: version takes no argument$"):
        CaseFactory(replace(PROJECT, entries={"version": bare}), seeds, 7)
    with pytest.raises(GeneratorError, match=r"^nothing to generate: version takes no argument$"):
        CaseFactory(project, seeds, 7, entries=("version",))
