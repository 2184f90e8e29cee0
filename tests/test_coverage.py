"""The coverage model without a browser: V8's ranges read as blocks, the gate's judgement of a
coverage document (unrun, marked unreachable, stale or misplaced markers, floors), and shards'
documents joined.

The browser side (Chromium's profiler in the page and the service worker) runs in test_gate.py
and test_gate_results.py; these pin the rules on documents small enough to read."""

from __future__ import annotations

from dataclasses import replace

from extparity.coverage.blocks import ModuleBlocks, Take, counts_at, uncovered
from extparity.coverage.markers import read_markers
from extparity.coverage.merge import merge
from extparity.coverage.record import module_entry
from extparity.coverage.sources import Function, Source, line_starts
from extparity.gate.checks import coverage
from extparity.project.config import GateConfig, Project

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


def module_of(text: str, run_if_body: bool) -> dict:
    """The document's entry for a module whose last function is ``f`` with an ``if (x) {`` body
    that ran or not (three blocks, as V8 reports them: before the body, the body, after it)."""
    f = (text.index("function f"), text.rindex("}") + 1)
    body = (text.index("{", text.index("if (x)")), text.index("}", text.index("return 1")) + 1)
    source = Source("m.js", text, "0" * 64, line_starts(text), (Function(*f, "f", text[:f[0]].count("\n") + 1),))
    blocks = [(f[0], body[0]), body, (body[1], f[1])]
    totals = {b: 1 for b in blocks} | {body: int(run_if_body)}
    reached = {b: ["a"] if totals[b] else [] for b in blocks}
    return module_entry(source, blocks, {"chromium": (totals, reached)}, {"chromium": {f: 1}})


def entry(run_if_body: bool) -> dict:
    return module_of(TEXT, run_if_body)


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


def document(run_if_body: bool, text: str = TEXT) -> dict:
    return {"schema": 1, "engines": {"chromium": {"status": "ok", "takes": 1, "rerun_takes": 0, "cases": 2}},
            "modules": {"m.js": module_of(text, run_if_body)}, "reference": None, "problems": []}


def project(**gate) -> Project:
    return Project(path=None, root=None, trees={}, entries={}, engines={}, reference=None, corpus=(),
                   known_deviations=None, gate=replace(GateConfig(), **gate))


def test_an_unrun_block_fails_in_one_line_naming_module_and_line():
    problems, _ = coverage.judge(project(), document(run_if_body=False))
    assert problems == ["m.js:3: no case runs this block (return 1;); " + coverage.FIX]


def test_an_unrun_block_in_a_minified_line_is_quoted_from_its_column_and_capped():
    """A bundle is one line thousands of characters long: every unrun block of it quoted the line's
    first 80 characters, the same for each. Each now names its column and shows its own code, at
    most about 200 characters, and how much more there is."""
    minified = "const pad = " + '"' + "x" * 3000 + '";' + "function f(x) {if (x) {return 1;} return 2;}\n"
    problems, _ = coverage.judge(project(), document(run_if_body=False, text=minified))
    column = minified.index("return 1") + 1  # the block trimmed to its code, as in any module
    assert problems == [f"m.js:1:{column}: no case runs this block (return 1); " + coverage.FIX
                        + " (no source map for m.js: lines are built lines)"]
    long_body = minified.replace("return 1;", "g(); " * 100 + "return 1;")
    (problem,) = coverage.judge(project(), document(run_if_body=False, text=long_body))[0]
    quoted = problem[problem.index("(") + 1:problem.index("); add a case")]
    assert quoted.startswith("g(); g();") and quoted.endswith(" more characters)"), quoted
    assert len(quoted) < 230


# The if statement of TEXT, marked beside its first line: the marker exempts lines 2-4.
MARKED = TEXT.replace("  if (x) {\n", "  if (x) { // extparity-unreachable: a reason\n")
# The if body's return, marked above it with a reason that goes on over a second comment line.
MARKED_ABOVE = TEXT.replace("    return 1;\n", "    // extparity-unreachable: a reason\n    // that goes on\n    return 1;\n")


def test_a_marked_block_passes_and_the_marker_goes_stale_once_a_case_runs_it():
    problems, line = coverage.judge(project(), document(False, MARKED))
    assert problems == [] and line.endswith("; 1 unrun range exempted by 1 marker (m.js 1)"), (problems, line)
    assert coverage.judge(project(), document(True, MARKED))[0] == [
        "m.js:2: marker (a reason) is stale: every block of lines 2-4 ran (case a reaches them): remove the marker"]


def test_a_marker_above_a_statement_exempts_it_and_the_comments_are_no_code_of_the_block():
    """The unrun body begins at its brace, two comment lines above the return: comments are no
    code, so the block is the return alone and the marker's one line holds all of it."""
    module = document(False, MARKED_ABOVE)["modules"]["m.js"]
    assert [block["lines"] for block in module["uncovered"]] == [[5, 5]]
    [marker], problems = read_markers("m.js", MARKED_ABOVE)
    assert problems == [] and (marker.line, marker.lines, marker.reason) == (3, "5", "a reason that goes on")
    problems, line = coverage.judge(project(), document(False, MARKED_ABOVE))
    assert problems == [] and "1 unrun range exempted by 1 marker" in line


PLANTED = """const TOP = 1; // extparity-unreachable: top-level code runs at import
function f(x) {
  // extparity-unreachable
  const y = x;
  if (x) { // extparity-unreachable:
    return 1;
  } // extparity-unreachable: a lone brace begins nothing
  /* extparity-unreachable: a block comment */
  // extparity-unreachable: above a blank line

  return 2;
}
"""


def test_a_marker_without_a_reason_or_that_marks_nothing_fails_naming_its_line():
    assert read_markers("m.js", PLANTED)[1] == [
        "m.js:3: extparity-unreachable marker without a reason (// extparity-unreachable: REASON)",
        "m.js:5: extparity-unreachable marker without a reason (// extparity-unreachable: REASON)",
        "m.js:7: extparity-unreachable marker marks nothing: no code begins on line 7 (it marks its own line)",
        "m.js:8: an extparity-unreachable marker is a // line comment (// extparity-unreachable: REASON); "
        "this /* */ one marks nothing",
        "m.js:9: extparity-unreachable marker marks nothing: no code begins on line 10 (it marks the line below it)"]
    problems, _ = coverage.judge(project(), document(True, PLANTED))
    assert problems[-1] == ("m.js:1: marker (top-level code runs at import) marks nothing: no block lies in line 1 "
                            "(code outside every function runs at import and is not counted)")
    assert len(problems) == 6


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


def test_a_marker_inside_a_wider_unrun_range_is_not_stale_and_excuses_nothing():
    wider = document(False, MARKED)
    wider["modules"]["m.js"]["uncovered"] = [{"start": 0, "end": F[1], "lines": [1, 6], "source": "function f(x) {"}]
    problems, _ = coverage.judge(project(), wider)
    assert problems == ["m.js:1-6: no case runs this block (function f(x) {); " + coverage.FIX]
