"""One divergence planted in one engine, followed through every report a person or CI reads.

A throwaway copy of the subject (support.run_copy's `Project`) loses one parsing rule (the
comma allowed after a bare call) in its Firefox twin only; the corpus holds one case that the
rule decides. With the reference and one QuickJS engine per tree, quickjs-firefox is then the
odd one out on exactly that case. The run writes JSON, HTML, JUnit and a repro folder, and
each must show that case and nothing else: the HTML in real Chromium (odd-one-out view, the
diff), the JUnit file through the JUnit parser CI publishers use, the repro file by rerunning
it alone. A missing browser fails, never skips.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from playwright.sync_api import sync_playwright

from extparity.project.config import load_project

from support.cli import call_cli
from support.result_schema import check_result
from support.run_copy import PARSE_INPUTS, Project, drop_comma_rule, parse_case

ENGINES = "python,quickjs-chrome,quickjs-firefox"
PLANTED = "parse-trailing-comma"
CHROMIUM = load_project().engines["chromium"].options["executable"]
QUIET_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# An input that would end the page's data <script> early if the data were not escaped.
HOSTILE = ('</script><script>document.title="pwned"</script><!--\n{"name":"click","arguments":{}}', ["click"])


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(project, outcome) of the run with one planted divergence, every report written."""
    inputs = [case_id for case_id in PARSE_INPUTS if case_id != "parse-trailing-comma-spaced"]
    PARSE_INPUTS["parse-hostile"] = HOSTILE
    try:
        lines = [parse_case(case_id) for case_id in inputs + ["parse-hostile"]]
    finally:
        del PARSE_INPUTS["parse-hostile"]
    project = Project(tmp_path_factory.mktemp("planted"), parse_lines=lines)
    drop_comma_rule(project.module("firefox"))
    root = project.root
    outcome = project.run(ENGINES, "result.json", "--html", str(root / "report.html"), "--junit", str(root / "junit.xml"),
                          "--save-failures", str(root / "repro"))
    return project, outcome


def test_the_planted_run_fails_on_the_planted_case_in_one_engine_only(planted):
    project, outcome = planted
    assert outcome.code == 1
    failing = {(case["id"], engine): cell for case in outcome.json["cases"] for engine, cell in case["cells"].items()
               if cell != "pass"}
    assert failing == {(PLANTED, "quickjs-firefox"): "diverges"}


def test_the_html_report_is_one_file_without_external_assets(planted):
    project, _ = planted
    page = (project.root / "report.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page
    for reference in ("src=", "href=", "@import", "url(", "http://", "https://"):
        assert reference not in page.split('<script id="extparity-data"')[0], reference
    # the rows, the script and the cases' panes: the hostile input did not end one early
    assert page.count("</script>") == 3


@pytest.fixture(scope="module")
def browser_page(planted):
    project, _ = planted
    assert Path(CHROMIUM).exists(), f"Chromium is not installed at {CHROMIUM}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=QUIET_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        requests, errors = [], []
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((project.root / "report.html").as_uri())
        page.wait_for_selector("body[data-rendered]", timeout=20_000)
        yield page, requests, errors
        browser.close()


@pytest.mark.browser
def test_the_matrix_groups_rows_by_outcome_vector_and_colours_each_cell(browser_page, planted):
    page, requests, errors = browser_page
    _, outcome = planted
    assert errors == [] and requests == [(planted[0].root / "report.html").as_uri()]
    assert page.title() == "extparity report"  # the hostile input stayed data
    headers = page.locator("#list-head .c-cell").all_inner_texts()
    assert headers == ENGINES.split(",")
    groups = page.locator(".row.group").all_inner_texts()
    assert len(groups) == 2 and "1 case" in groups[0] and "1 cases" not in groups[0]  # the failing vector first
    rows = {row.get_attribute("data-case"): row for row in page.locator(".row[data-case]").all()}
    assert set(rows) == {case["id"] for case in outcome.json["cases"]}
    cells = rows[PLANTED].locator(".c-cell")
    assert cells.all_inner_texts() == ["pass", "pass", "diverges"]
    assert "k-diverges" in cells.nth(2).get_attribute("class")


@pytest.mark.browser
def test_the_odd_one_out_view_shows_the_planted_case_and_its_diff(browser_page):
    page, _, errors = browser_page
    page.click("nav .views button[data-view=odd]")
    assert page.locator(".row.group").all_inner_texts()[0].startswith("▾ quickjs-firefox differs alone: 1 case")
    assert [row.get_attribute("data-case") for row in page.locator(".row[data-case]").all()] == [PLANTED]
    page.click(f'.row[data-case="{PLANTED}"]')
    pane = page.locator("#case-pane")
    assert pane.locator("h2").inner_text() == PLANTED
    assert pane.locator("h3").first.inner_text() == "quickjs-firefox against python"
    changed = pane.locator("table.diff tr.added td.r").all_inner_texts()
    assert '"reason":"not-own-line",' in [text.strip() for text in changed]
    removed = pane.locator("table.diff tr.removed td.l").all_inner_texts()
    assert '"arguments":{},' in [text.strip() for text in removed]
    # the input, with the span of the call the reference would run highlighted
    marks = pane.locator("pre.input").first.locator("mark.runs").all_inner_texts()
    assert marks == [PARSE_INPUTS[PLANTED][0][:-1]]  # the call, without the trailing comma
    assert errors == []


@pytest.mark.browser
def test_a_link_to_a_case_opens_it_and_the_arrow_keys_walk_the_rows(browser_page, planted):
    page, _, _ = browser_page
    linked = page.context.browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    linked.on("pageerror", lambda error: errors.append(str(error)))
    linked.goto((planted[0].root / "report.html").as_uri() + "#case=" + PLANTED)
    linked.wait_for_selector("body[data-rendered]", timeout=20_000)
    assert linked.locator("#case-pane h2").inner_text() == PLANTED
    assert linked.locator(".row.selected").get_attribute("data-case") == PLANTED
    order = [row.get_attribute("data-case") for row in linked.locator(".row[data-case]").all()]
    linked.focus(f'.row[data-case="{PLANTED}"]')
    linked.keyboard.press("ArrowDown")
    after = order[order.index(PLANTED) + 1]
    assert linked.locator("#case-pane h2").inner_text() == after
    assert linked.evaluate("document.activeElement.dataset.case") == after
    assert linked.evaluate("location.hash") == "#case=" + after  # the address is a link to what is shown
    linked.keyboard.press("ArrowUp")
    assert linked.locator("#case-pane h2").inner_text() == PLANTED
    assert all(row.get_attribute("tabindex") == "0" for row in linked.locator(".row").all())
    assert errors == []
    linked.close()


@pytest.mark.browser
def test_the_filters_narrow_the_rows(browser_page):
    page, _, _ = browser_page
    page.click("nav .views button[data-view=matrix]")
    page.select_option("#f-outcome", label="diverges")
    assert [row.get_attribute("data-case") for row in page.locator(".row[data-case]").all()] == [PLANTED]
    page.select_option("#f-engine", label="quickjs-chrome")
    assert page.locator(".row[data-case]").count() == 0
    assert page.inner_text("#count").startswith("0 of ")
    page.select_option("#f-outcome", label="any")
    page.select_option("#f-engine", label="any")
    page.select_option("#f-file", label="corpus/repair/basic.jsonl")
    ids = [row.get_attribute("data-case") for row in page.locator(".row[data-case]").all()]
    assert ids and all(case_id.startswith("repair-") for case_id in ids)


def test_the_junit_file_has_exactly_the_planted_failure(planted):
    project, _ = planted
    xml = JUnitXml.fromfile(str(project.root / "junit.xml"))
    suites = {suite.name: suite for suite in xml}
    assert list(suites) == ["extparity", *ENGINES.split(",")]
    problems = {}
    for suite in xml:
        for case in suite:
            for result in case.result:
                problems[(suite.name, case.classname, case.name)] = result
    assert set(problems) == {("quickjs-firefox", "quickjs-firefox.parse.basic", PLANTED), ("extparity", "extparity", "modules")}
    failure = problems[("quickjs-firefox", "quickjs-firefox.parse.basic", PLANTED)]
    assert isinstance(failure, Failure) and failure.type == "diverges"
    assert failure.message == "differs from python"
    assert '+      "reason":"not-own-line",' in failure.text and "--- python" in failure.text
    assert "twins differ on disk" in problems[("extparity", "extparity", "modules")].message
    assert all(not isinstance(r, (Error, Skipped)) for r in problems.values())
    cases = sum(1 for suite in xml if suite.name != "extparity" for _ in suite)
    assert cases == 3 * len(planted[1].json["cases"])
    assert (xml.tests, xml.failures, xml.errors) == (cases + 4, 2, 0)


def test_the_repro_folder_holds_the_planted_case_and_reruns_it_alone(planted):
    project, outcome = planted
    repro = project.root / "repro"
    assert sorted(path.name for path in repro.iterdir()) == [
        ".extparity-repro", f"{PLANTED}.jsonl", f"{PLANTED}.verdicts.json", "tags.json"]
    verdicts = json.loads((repro / f"{PLANTED}.verdicts.json").read_text())
    by_id = {case["id"]: case for case in outcome.json["cases"]}
    assert verdicts["verdicts"]["quickjs-firefox"] == by_id[PLANTED]["divergent"]["quickjs-firefox"]
    assert verdicts["verdicts"]["python"] == by_id[PLANTED]["verdict"]
    rerun = project.run(ENGINES, "rerun.json", "--corpus", str(repro / f"{PLANTED}.jsonl"))
    assert rerun.code == 1
    assert rerun.json["corpus"]["problems"] == []
    assert rerun.cells() == {PLANTED: {"python": "pass", "quickjs-chrome": "pass", "quickjs-firefox": "diverges"}}
    assert rerun.json["cases"][0]["divergent"] == by_id[PLANTED]["divergent"]
    folder = project.run(ENGINES, "rerun-folder.json", "--corpus", str(repro))
    assert list(folder.cells()) == [PLANTED]


def test_reports_of_the_saved_result_are_byte_identical_to_the_run_s(planted):
    project, outcome = planted
    root = project.root
    code, _, err = call_cli("report", str(outcome.path), "--html", str(root / "again.html"), "--junit",
                            str(root / "again.xml"), "--save-failures", str(root / "repro"))
    assert code == 0, err
    assert (root / "again.html").read_bytes() == (root / "report.html").read_bytes()
    assert (root / "again.xml").read_bytes() == (root / "junit.xml").read_bytes()
    check_result(outcome.json)
