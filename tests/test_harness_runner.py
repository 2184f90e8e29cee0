"""`extparity run` / `extparity diff` end to end, on a temporary copy of the project.

Each scenario copies extension/chrome and extension/firefox into tmp_path (the Firefox copy gets
the Chrome copy's configured modules, so the copies are twins even mid-edit of the real trees),
writes a small corpus whose expectations come from the Python reference, and a pyproject.toml
whose [tool.extparity] is the real table pointed at the copies. Then one thing is broken on purpose (a comment byte in
one twin, one rule in both twins, a missing browser, a bad corpus line, a known-deviations
entry) and the run must fail for exactly that reason and no other, naming what broke.

Browsers are launched once (the Firefox run of the flipped-comment copy); everything else runs
on Python and QuickJS.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

from support import PARSER, ROOT, bundled_table
from support.cli import call_cli
from support.config_files import write_pyproject
from support.run_copy import (COMMA_CASES, MODULES, PARSE_INPUTS, QJS, REPAIR_INPUTS, WRONG_EXPECT, Project, deviation,
                              drop_comma_rule, parse_case, repair_case)

ALL_IDS = [*PARSE_INPUTS, *REPAIR_INPUTS]


def flip_comment_byte(path: Path) -> None:
    """Change one byte inside the first line's comment: same behaviour, different file."""
    data = bytearray(path.read_bytes())
    assert data.startswith(b"// parseToolCalls: which"), "the comment this test flips has moved"
    index = data.index(b"which")
    data[index] = ord("W")
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------ scenarios run once per module

@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("clean"))
    return project, project.run(QJS, "first.json")


@pytest.fixture(scope="module")
def flipped(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("flipped"))
    flip_comment_byte(project.module("firefox"))
    return project, project.run(QJS)


@pytest.fixture(scope="module")
def diverging(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("diverging"))
    for tree in ("chrome", "firefox"):
        drop_comma_rule(project.module(tree))
    return project, project.run(QJS)


# ------------------------------------------------------------------ (a) clean copies

def test_clean_copies_pass(clean):
    project, outcome = clean
    assert outcome.code == 0, outcome.err
    assert outcome.json["ok"] is True
    assert outcome.json["modules"]["problems"] == []
    assert outcome.cells() == {case_id: {e: "pass" for e in QJS.split(",")} for case_id in ALL_IDS}
    assert f"all {len(ALL_IDS)} cases agree across {QJS.replace(',', ', ')}" in outcome.out


def test_clean_copies_report_on_disk_hashes_equal_per_tree_and_loaded_hashes_equal_to_disk(clean):
    project, outcome = clean
    on_disk = outcome.json["modules"]["on_disk"]
    assert sorted(on_disk) == sorted(MODULES)
    for module in MODULES:
        assert on_disk[module] == {"chrome": project.disk_hash("chrome", module),
                                   "firefox": project.disk_hash("firefox", module)}
        assert on_disk[module]["chrome"] == on_disk[module]["firefox"]
    for engine, tree in (("quickjs-chrome", "chrome"), ("quickjs-firefox", "firefox")):
        assert outcome.json["engines"][engine]["status"] == "ok"
        assert outcome.json["engines"][engine]["module_hashes"] == {m: on_disk[m][tree] for m in MODULES}
    reference = outcome.json["engines"]["python"]["module_hashes"]
    assert reference["toolcalls/parser.py"] == hashlib.sha256((ROOT / "py_src/toolcalls/parser.py").read_bytes()).hexdigest()


def test_the_json_result_lists_the_corpus_and_the_reference_verdicts(clean):
    project, outcome = clean
    assert outcome.json["corpus"] == {"files": ["corpus/parse/basic.jsonl", "corpus/repair/basic.jsonl"],
                                      "cases": len(ALL_IDS), "problems": [],
                                      "tags": {"harness": "written by test_harness_runner"}}
    by_id = {case["id"]: case for case in outcome.json["cases"]}
    assert by_id["parse-tagged"]["group"] == "parse/basic"
    assert by_id["repair-truncated"]["verdict"] == repair_arguments_canonical(REPAIR_INPUTS["repair-truncated"])
    assert outcome.json["engines"]["quickjs-firefox"]["versions"]["tree"] == "ext/firefox"


# ------------------------------------------------------------------ (b) one byte of a comment in one twin

def test_a_flipped_comment_byte_fails_the_run_and_names_the_module(flipped):
    project, outcome = flipped
    assert outcome.code == 1
    assert outcome.json["ok"] is False
    problems = outcome.json["modules"]["problems"]
    assert len(problems) == 1 and problems[0].startswith(f"{PARSER}: twins differ on disk")
    assert f"module: {PARSER}: twins differ on disk" in outcome.failure_lines()[0]
    # behaviour is unchanged: the module check is the only reason the run fails
    assert outcome.cells() == {case_id: {e: "pass" for e in QJS.split(",")} for case_id in ALL_IDS}
    assert len(outcome.failure_lines()) == 1


def test_a_flipped_comment_byte_shows_in_the_hashes_the_engines_loaded(flipped):
    project, outcome = flipped
    on_disk = outcome.json["modules"]["on_disk"]
    assert on_disk[PARSER]["firefox"] == project.disk_hash("firefox", PARSER) != on_disk[PARSER]["chrome"]
    loaded = {e: outcome.json["engines"][e]["module_hashes"] for e in ("quickjs-chrome", "quickjs-firefox")}
    assert loaded["quickjs-firefox"][PARSER] == on_disk[PARSER]["firefox"]
    assert loaded["quickjs-chrome"][PARSER] == on_disk[PARSER]["chrome"]
    others = [m for m in MODULES if m != PARSER]
    assert all(loaded["quickjs-chrome"][m] == loaded["quickjs-firefox"][m] == on_disk[m]["chrome"] for m in others)


@pytest.mark.browser
def test_the_firefox_browser_loads_and_hashes_the_flipped_module(tmp_path):
    """The in-browser hash path (bytes Firefox serves from moz-extension://) sees the flip too."""
    project = Project(tmp_path)
    flip_comment_byte(project.module("firefox"))
    outcome = project.run("python,firefox")
    assert outcome.json["engines"]["firefox"]["status"] == "ok", outcome.json["engines"]["firefox"]["detail"]
    assert outcome.code == 1
    loaded = outcome.json["engines"]["firefox"]["module_hashes"]
    on_disk = outcome.json["modules"]["on_disk"]
    assert loaded[PARSER] == project.disk_hash("firefox", PARSER)
    assert loaded[PARSER] != on_disk[PARSER]["chrome"] == project.disk_hash("chrome", PARSER)
    assert all(loaded[m] == on_disk[m]["chrome"] for m in MODULES if m != PARSER)
    assert outcome.json["modules"]["problems"] == [p for p in outcome.json["modules"]["problems"] if p.startswith(f"{PARSER}: twins differ")]
    assert len(outcome.json["modules"]["problems"]) == 1
    assert outcome.cells() == {case_id: {"python": "pass", "firefox": "pass"} for case_id in ALL_IDS}


# ------------------------------------------------------------------ (c) the same rule changed in both twins

def test_a_rule_changed_in_both_twins_is_a_divergence_of_exactly_the_affected_cases(diverging):
    project, outcome = diverging
    assert outcome.code == 1
    assert outcome.json["modules"]["problems"] == []  # twins are still one file
    cells = outcome.cells()
    for case_id in ALL_IDS:
        js = "diverges" if case_id in COMMA_CASES else "pass"
        assert cells[case_id] == {"python": "pass", "quickjs-chrome": js, "quickjs-firefox": js}, case_id
    by_id = {case["id"]: case for case in outcome.json["cases"]}
    for case_id in COMMA_CASES:
        divergent = by_id[case_id]["divergent"]
        assert set(divergent) == {"quickjs-chrome", "quickjs-firefox"}
        assert json.loads(divergent["quickjs-chrome"])["rejected"][0]["reason"] == "not-own-line"
    summary = {row["engine"]: row for row in outcome.json["summary"]}
    assert summary["quickjs-firefox"]["diverging"] == len(COMMA_CASES)


def test_the_matrix_has_one_row_per_case_and_one_column_per_engine(diverging):
    project, _ = diverging
    matrix_path = project.root / "matrix.md"
    project.run(QJS, "with-matrix.json", "--matrix", str(matrix_path))
    lines = matrix_path.read_text().splitlines()
    assert lines[0] == "| case | python | quickjs-chrome | quickjs-firefox |"
    rows = {line.split(" | ")[0].removeprefix("| "): line.split(" | ")[1:] for line in lines[2:]}
    assert set(rows) == set(ALL_IDS)
    for case_id, cells in rows.items():
        js = "DIVERGES" if case_id in COMMA_CASES else "ok"
        assert [cell.rstrip(" |") for cell in cells] == ["ok", js, js], case_id


def test_the_printed_failures_name_exactly_the_diverging_cells(diverging):
    project, outcome = diverging
    lines = outcome.failure_lines()
    named = sorted((line.split(" [")[0], line.split("[")[1].split("]")[0]) for line in lines)
    assert named == sorted((c, e) for c in COMMA_CASES for e in ("quickjs-chrome", "quickjs-firefox"))
    assert all(" DIVERGES: differs from python" in line for line in lines)
    line_of = {case_id: number for number, case_id in enumerate(PARSE_INPUTS, start=1)}
    for line in lines:
        assert line.endswith(f"(corpus/parse/basic.jsonl:{line_of[line.split(' [')[0]]})")


# ------------------------------------------------------------------ (d) determinism

def test_two_runs_write_byte_identical_json(clean):
    project, first = clean
    second = project.run(QJS, "second.json", "--timings", str(project.root / "timings.json"))
    assert second.code == 0
    assert first.path.read_bytes() == second.path.read_bytes()
    assert "wall_s" not in second.path.read_text() and "wall_s" in (project.root / "timings.json").read_text()


# ------------------------------------------------------------------ (e) a crashed engine keeps the others

def test_a_crashed_engine_fails_the_run_and_keeps_the_other_engines_results(tmp_path):
    project = Project(tmp_path, browsers={"firefox": "/nonexistent/firefox"})
    outcome = project.run("python,quickjs-chrome,firefox")
    assert outcome.code == 1
    engines = outcome.json["engines"]
    assert engines["firefox"]["status"] == "crashed" and "/nonexistent/firefox" in engines["firefox"]["detail"]
    assert engines["python"]["status"] == engines["quickjs-chrome"]["status"] == "ok"
    cells = outcome.cells()
    assert all(cells[c]["python"] == cells[c]["quickjs-chrome"] == "pass" for c in ALL_IDS)
    assert all(cells[c]["firefox"] == "missing" for c in ALL_IDS)
    assert any(line.startswith("engine firefox: crashed: browser not found") for line in outcome.failure_lines())


# ------------------------------------------------------------------ (f) a malformed corpus line

def test_a_malformed_corpus_line_is_reported_and_every_other_case_is_judged(tmp_path):
    broken = {**parse_case("parse-tagged"), "id": "parse-broken"}
    del broken["why"]
    lines = [parse_case(i) for i in PARSE_INPUTS]
    lines.insert(2, broken)  # line 3
    project = Project(tmp_path, parse_lines=lines)
    outcome = project.run("python,quickjs-chrome")
    assert outcome.code == 1
    assert outcome.json["corpus"]["problems"] == ["corpus/parse/basic.jsonl:3: field 'why': required: one line saying why the case exists"]
    assert "corpus: corpus/parse/basic.jsonl:3: field 'why'" in outcome.err
    assert outcome.failure_lines() == ["corpus: corpus/parse/basic.jsonl:3: field 'why': required: one line saying why the case exists"]
    assert outcome.cells() == {case_id: {"python": "pass", "quickjs-chrome": "pass"} for case_id in ALL_IDS}
    assert outcome.json["ok"] is False


def test_a_nan_in_one_corpus_line_does_not_cost_the_other_cases(tmp_path):
    nan_line = '{"id": "repair-nan", "fn": "repair", "input": NaN, "expect": {"status": "rejected"}, "tags": ["harness"], "why": "w"}'
    project = Project(tmp_path, repair_lines=[repair_case(i) for i in REPAIR_INPUTS] + [nan_line])
    outcome = project.run("python,quickjs-chrome")
    assert outcome.code == 1
    assert outcome.json["engines"]["quickjs-chrome"]["status"] == "ok"
    cells = outcome.cells()
    assert all(cells[c] == {"python": "pass", "quickjs-chrome": "pass"} for c in ALL_IDS)


def test_an_expect_of_the_wrong_type_is_reported_not_a_crash(tmp_path):
    lines = [parse_case(i) for i in PARSE_INPUTS] + [parse_case("parse-tagged", id="parse-null-calls", expect={"calls": None})]
    project = Project(tmp_path, parse_lines=lines)
    outcome = project.run("python")
    assert outcome.code == 1
    assert "corpus/parse/basic.jsonl:7" in outcome.err


# ------------------------------------------------------------------ (g) known deviations

def test_a_known_deviation_turns_a_failing_cell_into_known(tmp_path):
    project = Project(tmp_path, parse_lines=[parse_case(i) for i in PARSE_INPUTS] + [WRONG_EXPECT],
                      deviations=[deviation("parse-wrong-expect", ["python", "quickjs-chrome"])])
    outcome = project.run("python,quickjs-chrome")
    assert outcome.cells()["parse-wrong-expect"] == {"python": "known", "quickjs-chrome": "known"}
    assert outcome.code == 0, outcome.err
    assert outcome.json["ok"] is True
    notes = {c["id"]: c.get("notes") for c in outcome.json["cases"]}["parse-wrong-expect"]
    assert "known deviation: tracked upstream (https://example.invalid/1)" in notes["python"]
    assert {row["engine"]: row["known"] for row in outcome.json["summary"]} == {"python": 1, "quickjs-chrome": 1}


def test_a_known_deviation_covers_only_the_engines_it_lists(tmp_path):
    project = Project(tmp_path, parse_lines=[parse_case(i) for i in PARSE_INPUTS] + [WRONG_EXPECT],
                      deviations=[deviation("parse-wrong-expect", ["python"])])
    outcome = project.run("python,quickjs-chrome")
    assert outcome.cells()["parse-wrong-expect"] == {"python": "known", "quickjs-chrome": "unexpected"}
    assert outcome.code == 1
    assert [line.split(":")[0] for line in outcome.failure_lines()] == ["parse-wrong-expect [quickjs-chrome] UNEXPECTED"]


def test_a_known_deviation_for_a_passing_case_is_an_unexpected_pass(tmp_path):
    project = Project(tmp_path, deviations=[deviation("parse-tagged", ["python"])])
    outcome = project.run("python")
    assert outcome.code == 1
    assert outcome.cells()["parse-tagged"] == {"python": "unexpected-pass"}
    assert all(cells == {"python": "pass"} for case_id, cells in outcome.cells().items() if case_id != "parse-tagged")
    assert [line.split(":")[0] for line in outcome.failure_lines()] == ["parse-tagged [python] STALE"]


def test_malformed_known_deviation_entries_are_reported_and_good_ones_still_apply(tmp_path):
    entries = [deviation("parse-wrong-expect", ["python"]),
               deviation("parse-tagged", ["safari"]),
               {k: v for k, v in deviation("parse-tagged", ["python"]).items() if k != "link"},
               deviation("parse-tagged", ["python"], reason=""),
               "parse-tagged"]
    project = Project(tmp_path, parse_lines=[parse_case(i) for i in PARSE_INPUTS] + [WRONG_EXPECT], deviations=entries)
    outcome = project.run("python")
    assert outcome.code == 1
    assert outcome.json["ok"] is False
    assert outcome.json["known_deviation_problems"] == [
        "known-deviations.json[1]: engine safari is not configured",
        *(f"known-deviations.json[{i}]: needs case, engines (a non-empty list), reason and link" for i in (2, 3, 4))]
    assert outcome.cells()["parse-wrong-expect"] == {"python": "known"}
    assert outcome.cells()["parse-tagged"] == {"python": "pass"}
    assert sum(line.startswith("known-deviations: ") for line in outcome.failure_lines()) == 4


@pytest.mark.parametrize("text", ["{not json", '{"case": "parse-tagged"}'])
def test_a_known_deviations_file_that_is_not_a_list_of_entries_is_reported(tmp_path, text):
    project = Project(tmp_path, deviations=text)
    outcome = project.run("python")
    assert outcome.code == 1
    assert len(outcome.json["known_deviation_problems"]) == 1
    assert outcome.json["known_deviation_problems"][0].startswith("known-deviations.json")


def test_a_configured_known_deviations_file_that_does_not_exist_is_reported(tmp_path):
    project = Project(tmp_path, deviations=[])
    (tmp_path / "known-deviations.json").unlink()  # a typo in the config reads the same
    outcome = project.run("python")
    assert outcome.code == 1
    assert outcome.json["known_deviation_problems"] == [
        f"known-deviations.json: the configured known-deviations file does not exist ({tmp_path / 'known-deviations.json'})"]


# ------------------------------------------------------------------ (h) extparity diff

DIFF_TEXT = PARSE_INPUTS["parse-trailing-comma"][0]


def test_diff_agrees_on_the_clean_copies(clean):
    project, _ = clean
    code, out, _ = project.diff("--text", DIFF_TEXT, "--allowed", "click", "--engines", QJS)
    assert code == 0
    assert out.strip().splitlines()[-1] == "verdicts agree"
    expected = parse_tool_calls_canonical(DIFF_TEXT, ["click"])
    assert [line for line in out.splitlines() if line.startswith("= ")] == [f"= {e}: {expected}" for e in QJS.split(",")]


def test_diff_of_a_repair_agrees_on_the_clean_copies(clean):
    project, _ = clean
    code, out, _ = project.diff("--raw", REPAIR_INPUTS["repair-truncated"], "--engines", QJS)
    assert code == 0 and out.strip().endswith("verdicts agree")
    assert f"= quickjs-firefox: {repair_arguments_canonical(REPAIR_INPUTS['repair-truncated'])}" in out


def test_diff_differs_on_the_diverging_copies(diverging):
    project, _ = diverging
    code, out, _ = project.diff("--text", DIFF_TEXT, "--allowed", "click", "--engines", QJS)
    assert code == 1
    assert out.strip().splitlines()[-1] == "verdicts DIFFER"
    marks = {line.split(": ")[0][2:]: line[0] for line in out.splitlines() if line[:1] in "=≠"}
    assert marks == {"python": "=", "quickjs-chrome": "≠", "quickjs-firefox": "≠"}


def test_diff_of_an_unaffected_input_agrees_on_the_diverging_copies(diverging):
    project, _ = diverging
    code, out, _ = project.diff("--text", PARSE_INPUTS["parse-own-line"][0], "--allowed", "click", "--engines", QJS)
    assert code == 0 and out.strip().endswith("verdicts agree")


def test_diff_differs_when_the_twins_differ_even_if_the_verdicts_agree(flipped):
    project, _ = flipped
    code, out, _ = project.diff("--text", DIFF_TEXT, "--allowed", "click", "--engines", QJS)
    assert code == 1
    assert f"module: {PARSER}: twins differ on disk" in out
    assert out.strip().endswith("verdicts DIFFER")


@pytest.mark.parametrize("broken", ["an engine that does not start", "a case that throws"])
def test_diff_without_a_verdict_from_every_engine_is_incomplete_and_fails(tmp_path, broken):
    if broken == "an engine that does not start":
        project, engines, missing = Project(tmp_path, browsers={"firefox": "/nonexistent/firefox"}), "python,quickjs-chrome,firefox", "firefox"
        shown = "= python: ", "<crashed: browser not found: /nonexistent/firefox>"
    else:  # the same throw in both twins, so the trees stay identical
        project, engines, missing = Project(tmp_path), QJS, "quickjs-chrome, quickjs-firefox"
        throws = (f"export function parseToolCallsCanonical(text, allowed) {{\n"
                  f"  if (text === {json.dumps(DIFF_TEXT)}) throw new Error(\"thrown\");")
        for tree in ("chrome", "firefox"):
            path = project.module(tree)
            path.write_text(path.read_text().replace("export function parseToolCallsCanonical(text, allowed) {", throws))
        shown = "= python: ", "<error: Error: thrown>"
    code, out, _ = project.diff("--text", DIFF_TEXT, "--allowed", "click", "--engines", engines)
    assert code == 1
    assert out.strip().splitlines()[-1] == f"verdicts INCOMPLETE: no verdict from {missing}"
    assert "verdicts agree" not in out and "verdicts DIFFER" not in out
    assert out.startswith(shown[0]) and shown[1] in out


# ------------------------------------------------------------------ (i) usage and config errors

@pytest.mark.parametrize("command", [["run"], ["diff", "--text", "x"]])
@pytest.mark.parametrize("engines", ["python,safari", "", "python,QuickJS-chrome"])
def test_an_unknown_engine_exits_2_listing_the_valid_names(clean, command, engines):
    project, _ = clean
    code, out, err = call_cli("--config", project.config, *command, "--engines", engines)
    assert code == 2
    assert "choose from python, quickjs-chrome, quickjs-firefox, v8-chrome, spidermonkey-firefox, chromium, firefox" in err
    assert "running" not in err and out == ""


def test_a_config_without_the_extparity_table_exits_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.other]\nkey = 1\n')
    for command in (["run", "--engines", "python"], ["corpus", "lint"], ["diff", "--text", "x"]):
        code, out, err = call_cli("--config", str(tmp_path / "pyproject.toml"), *command)
        assert code == 2, command
        assert "[tool.extparity]" in err and err.startswith("extparity: ")


@pytest.mark.parametrize("drop", ["trees", "entries", "corpus"])
def test_a_config_missing_a_required_key_exits_2_naming_it(tmp_path, drop):
    table = bundled_table()
    table["trees"] = {name: str(ROOT / rel) for name, rel in table["trees"].items()}
    del table[drop]
    config = write_pyproject(tmp_path / "pyproject.toml", table)
    code, _, err = call_cli("--config", str(config), "run", "--engines", "python")
    assert code == 2
    assert f"missing key {drop!r}" in err


def test_a_missing_config_file_exits_2(tmp_path):
    code, _, err = call_cli("--config", str(tmp_path / "nope.toml"), "corpus", "lint")
    assert code == 2 and "nope.toml: cannot read it" in err
