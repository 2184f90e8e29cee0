"""The coverage model without a browser: V8's ranges read as blocks, the gate's judgement of a
coverage document (unrun, listed, stale, floors), and shards' documents joined.

The browser side (Chromium's profiler in the page and the service worker) runs in test_gate.py
and test_gate_results.py; these pin the rules on documents small enough to read."""

from __future__ import annotations

from dataclasses import replace

from extparity.coverage.blocks import ModuleBlocks, Take, counts_at, uncovered
from extparity.coverage.merge import merge
from extparity.coverage.record import module_entry
from extparity.coverage.sources import Function, Source, line_starts
from extparity.gate.checks import coverage
from extparity.project.config import GateConfig, Project, Unreachable

TEXT = "function f(x) {\n  if (x) {\n    return 1;\n  }\n  return 2;\n}\n"
F = (0, len(TEXT) - 1)  # the function, as V8 reports it: from `function` to its closing brace
IF_BODY = (TEXT.index("{\n    return 1"), TEXT.index("}\n  return 2") + 1)
SOURCE = Source("m.js", TEXT, "0" * 64, line_starts(TEXT), (Function(*F, "f", 1),))


def test_a_block_counts_as_the_innermost_range_that_holds_it():
    blocks = [(0, 5), (5, 10), (10, 20)]
    assert counts_at(blocks, [(0, 20, 3), (5, 10, 0)]) == {(0, 5): 3, (5, 10): 0, (10, 20): 3}
    assert counts_at(blocks, []) == {(0, 5): 0, (5, 10): 0, (10, 20): 0}


def test_a_merged_range_adds_no_block_and_a_split_one_keeps_its_count():
    model = ModuleBlocks(SOURCE)
    model.learn(Take(("a",), True, {"m.js": [(*F, 1), (*IF_BODY, 0)]}))
    assert model.blocks == [(F[0], IF_BODY[0]), IF_BODY, (IF_BODY[1], F[1])]
    totals, reached = model.tally([Take(("a",), True, {"m.js": [(*F, 1), (*IF_BODY, 0)]}),
                                   Take(("b",), True, {"m.js": [(*F, 1)]})])
    assert totals[IF_BODY] == 1 and reached[IF_BODY] == ["b"] and reached[(F[0], IF_BODY[0])] == ["a", "b"]


def entry(run_if_body: bool) -> dict:
    blocks = [(F[0], IF_BODY[0]), IF_BODY, (IF_BODY[1], F[1])]
    totals = {b: 1 for b in blocks} | {IF_BODY: int(run_if_body)}
    reached = {b: ["a"] if totals[b] else [] for b in blocks}
    return module_entry(SOURCE, blocks, {"chromium": (totals, reached)}, {"chromium": {F: 1}})


def test_blocks_that_ran_equally_often_are_one_block_however_the_takes_split_them():
    """A take that ran the if body as often as the function shows no place between them, so a
    shard whose takes did not tell them apart knows one block where another run knows three;
    joined where counts agree and trimmed to their code, both documents say the same."""
    told_apart = [(F[0], IF_BODY[0]), IF_BODY, (IF_BODY[1], F[1])]
    counts = {"chromium": ({b: 2 for b in told_apart}, {b: ["a"] for b in told_apart}), }
    one = module_entry(SOURCE, [F], {"chromium": ({F: 2}, {F: ["a"]})}, {"chromium": {F: 2}})
    assert module_entry(SOURCE, told_apart, counts, {"chromium": {F: 2}}) == one
    assert [(row["start"], row["end"]) for row in one["block_list"]] == [(0, TEXT.index("2;") + 1)]
    unequal = {"chromium": ({**counts["chromium"][0], IF_BODY: 1}, counts["chromium"][1])}
    assert len(module_entry(SOURCE, told_apart, unequal, {"chromium": {F: 2}})["block_list"]) == 3


def document(run_if_body: bool) -> dict:
    return {"schema": 1, "engines": {"chromium": {"status": "ok", "takes": 1, "rerun_takes": 0, "cases": 2}},
            "modules": {"m.js": entry(run_if_body)}, "reference": None, "problems": []}


def project(**gate) -> Project:
    return Project(path=None, root=None, trees={}, entries={}, engines={}, reference=None, corpus=(),
                   known_deviations=None, gate=replace(GateConfig(), **gate))


def test_an_unrun_block_fails_in_one_line_naming_module_and_line():
    problems, _ = coverage.judge(project(), document(run_if_body=False))
    assert problems == ["m.js:3: no case runs this block (return 1;); " + coverage.FIX]


def test_a_listed_block_passes_and_the_listing_goes_stale_once_a_case_runs_it():
    listed = project(unreachable=(Unreachable("m.js", 2, 4, "a reason"),))
    problems, line = coverage.judge(listed, document(run_if_body=False))
    assert problems == [] and "unreachable by config: 1 range with a reason (m.js 1)" in line
    assert coverage.judge(listed, document(run_if_body=True))[0] == [
        "unreachable m.js:2-4: stale, cases run these lines now: remove it"]


def test_a_floor_below_100_counts_unrun_blocks_until_the_rate_falls_below_it():
    problems, line = coverage.judge(project(block_coverage_floor=50), document(run_if_body=False))
    assert problems == [] and "1 range not run, allowed by block_coverage_floor 50%" in line
    assert coverage.judge(project(block_coverage_floor=90), document(run_if_body=False))[0][0].startswith("m.js:3:")


def test_the_reference_floor_and_a_coverage_of_other_bytes_or_fewer_cases_fail():
    with_reference = document(run_if_body=True) | {"reference": {"engine": "python", "files": {}, "branches": 10,
                                                                 "branches_run": 8}}
    assert coverage.judge(project(reference_branch_floor=90), with_reference)[0] == [
        "reference python: 80.0% of its branches ran, below the floor of 90% ([tool.extparity.gate].reference_branch_floor)"]
    problems, _ = coverage.judge(project(), document(run_if_body=True), cases=3, hashes={"m.js": {"1" * 64}})
    assert problems == ["chromium: its coverage saw 2 of 3 cases (a shard's coverage file missing?)",
                        "m.js: its coverage is of other bytes (000000000000) than the engines ran"]


def test_shards_joined_run_what_either_ran():
    joined = merge([document(run_if_body=False), document(run_if_body=True)])
    assert joined["modules"]["m.js"]["uncovered"] == [] and joined["engines"]["chromium"]["cases"] == 4
    assert merge([document(run_if_body=False)] * 2)["modules"]["m.js"]["uncovered"][0]["lines"] == [3, 3]


def test_uncovered_neighbours_join_over_what_is_no_code():
    assert uncovered([(0, 2), (2, 4), (5, 6)], set(), lambda end, start: end == start) == [(0, 4), (5, 6)]


def test_a_listing_inside_a_wider_unrun_range_is_not_stale_and_excuses_nothing():
    wider = document(run_if_body=False)
    wider["modules"]["m.js"]["uncovered"] = [{"start": 0, "end": F[1], "lines": [1, 6], "source": "function f(x) {"}]
    problems, _ = coverage.judge(project(unreachable=(Unreachable("m.js", 2, 4, "a reason"),)), wider)
    assert problems == ["m.js:1-6: no case runs this block (function f(x) {); " + coverage.FIX]
