"""The HTML report's durations (from `--timings`) and its "changed since baseline" view (from
`--baseline`), on a throwaway copy of the subject: a clean run is the baseline, then one parsing
rule is dropped from the Firefox twin and the run is repeated with both options. The page, opened
in real Chromium, must show each engine's durations as the timings file says and, in the new
view, exactly the case whose verdict changed, with the change in its pane; `extparity report`
given the saved result, the timings and the baseline makes the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from extparity.project.config import load_project

from support.cli import call_cli
from support.run_copy import Project, drop_comma_rule

ENGINES = "python,quickjs-chrome,quickjs-firefox"
CHANGED = "parse-trailing-comma"
CHROMIUM = load_project().engines["chromium"].options["executable"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("since"))
    root = project.root
    baseline = project.run(ENGINES, "baseline.json")
    assert baseline.code == 0, baseline.err
    drop_comma_rule(project.module("chrome"))
    drop_comma_rule(project.module("firefox"))
    now = project.run(ENGINES, "now.json", "--baseline", str(baseline.path), "--timings", str(root / "timings.json"),
                      "--html", str(root / "report.html"))
    return project, now


def page_data(html: Path) -> dict:
    text = html.read_text(encoding="utf-8")
    return json.loads(text.split('<script id="extparity-data" type="application/json">', 1)[1].split("</script>", 1)[0])


def test_the_page_data_holds_the_durations_and_exactly_the_changed_cases(runs):
    project, now = runs
    data = page_data(project.root / "report.html")
    timings = json.loads((project.root / "timings.json").read_text())
    assert list(data["timings"]["engines"]) == ENGINES.split(",")
    for name, row in data["timings"]["engines"].items():
        assert row["wall_ms"] == round(timings["engines"][name]["wall_s"] * 1000)
        assert row["startup_ms"] == round(timings["engines"][name]["startup_s"] * 1000)
    ids = [case["id"] for case in now.json["cases"]]
    changed = {ids[int(row)] for row in data["baseline"]["changes"]}
    # the reference kept its verdicts, so the cases whose JS verdicts changed are the diverging ones
    diverging = {case["id"] for case in now.json["cases"] if case["cells"]["quickjs-firefox"] != "pass"}
    assert CHANGED in changed and changed == diverging
    assert data["baseline"]["new"] == [] and data["baseline"]["gone"] == []


def test_without_the_options_the_page_has_neither(runs):
    project, now = runs
    code, _, err = call_cli("report", str(now.path), "--html", str(project.root / "plain.html"))
    assert code == 0, err
    data = page_data(project.root / "plain.html")
    assert data["timings"] is None and data["baseline"] is None


def test_report_with_the_saved_timings_and_baseline_makes_the_same_page(runs):
    project, now = runs
    root = project.root
    code, _, err = call_cli("report", str(now.path), "--timings", str(root / "timings.json"), "--baseline",
                            str(root / "baseline.json"), "--html", str(root / "again.html"))
    assert code == 0, err
    assert (root / "again.html").read_bytes() == (root / "report.html").read_bytes()


def test_a_timings_file_that_is_not_one_is_a_one_line_usage_error(runs):
    project, now = runs
    (project.root / "bad.json").write_text("[1, 2]")
    code, _, err = call_cli("report", str(now.path), "--timings", str(project.root / "bad.json"), "--html",
                            str(project.root / "x.html"))
    assert code == 2 and err.strip().endswith('not a timings file of `extparity run --timings` (no "engines" object)')


@pytest.mark.browser
def test_the_page_in_chromium_shows_the_durations_and_the_changed_view(runs):
    project, now = runs
    data = page_data(project.root / "report.html")
    changed_ids = sorted(now.json["cases"][int(row)]["id"] for row in data["baseline"]["changes"])
    assert Path(CHROMIUM).exists(), f"Chromium is not installed at {CHROMIUM}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((project.root / "report.html").as_uri())
        page.wait_for_selector("body[data-rendered]", timeout=20_000)
        rows = page.locator("#durations tr[data-engine]")
        assert rows.count() == 3
        first = rows.first.locator("td").all_inner_texts()
        assert first[0] == "python" and first[3] == f"{data['timings']['engines']['python']['wall_ms'] / 1000:.2f} s"
        assert page.inner_text("#baseline-line").startswith(f"since the baseline: {len(changed_ids)} case")
        page.click("nav .views button[data-view=changed]")
        for group in page.locator(".row.group").all():
            if group.inner_text().startswith("▸"):
                group.click()
        shown = sorted(row.get_attribute("data-case") for row in page.locator(".row[data-case]").all())
        assert shown == changed_ids
        page.click(f'.row[data-case="{CHANGED}"]')
        since = page.locator("#case-pane ul.since li").all_inner_texts()
        assert since and all(line.split(":")[0] in ENGINES.split(",") for line in since), since
        browser.close()
    assert errors == []
