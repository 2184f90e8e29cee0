"""The gate's checks are a registry (``extparity.gate.registry``): one module per check, listed in
order, selectable with `gate --only`, listed by `gate --list-checks`; a partial gate is never a
release's verdict."""

from __future__ import annotations

import json
import pkgutil

import pytest

from extparity.gate import checks as check_modules
from extparity.gate.registry import ORDER, UnknownCheck, all_checks, select

from support import ROOT
from support.cli import call_cli

CONFIG = str(ROOT / "pyproject.toml")
ACKNOWLEDGED = str(ROOT / "policy" / "acknowledged.json")  # the files the bundled first release trusts unreviewed
NAMES = ["corpus", "trees", "manifests", "release", "policy", "purity", "scripts", "surfaces", "artifacts",
         "web-ext lint", "entry points", "background", "page scripts", "parity", "known deviations", "environment",
         "coverage", "fuzz"]


def gate_cli(*argv: str) -> tuple[int, str, str]:
    return call_cli("--config", CONFIG, "gate", *argv)


def test_every_module_under_gate_checks_is_registered_once_and_declares_a_whole_check():
    modules = sorted(m.name for m in pkgutil.iter_modules(check_modules.__path__))
    assert sorted(ORDER) == modules and len(set(ORDER)) == len(ORDER)
    specs = all_checks()
    assert [spec.name for spec in specs] == NAMES
    for spec in specs:
        assert spec.doc and "\n" not in spec.doc and spec.config and callable(spec.verdict), spec.name


def test_list_checks_prints_every_check_in_order_and_runs_nothing():
    code, out, err = gate_cli("--list-checks")
    assert code == 0, err
    listed = [line.split("  ")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert listed == NAMES
    assert "fails when: a divergence, engine error or reference exception in the `fuzz.cases` generated cases" in out
    assert "needs: the artifacts, starts browsers" in out  # page scripts


def test_only_selects_by_name_or_module_in_the_gates_order():
    assert [spec.name for spec in select("policy, web_ext_lint,trees")] == ["trees", "policy", "web-ext lint"]
    with pytest.raises(UnknownCheck, match="no check named 'polcy'; the checks are corpus, trees"):
        select("trees,polcy")


def test_a_partial_gate_runs_only_its_checks_prepares_nothing_else_and_is_no_release_verdict(tmp_path):
    report = tmp_path / "gate.json"
    code, out, err = gate_cli("--only", "trees,policy", "--acknowledged", ACKNOWLEDGED, "--json", str(report))
    assert code == 0, out + err
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith(("PASS", "FAIL"))] == \
        ["PASS trees", "PASS policy"]
    assert "gate PASSED" not in out
    assert out.strip().endswith("16 checks not run (corpus, manifests, release, purity, scripts, surfaces, artifacts, "
                                "web-ext lint, entry points, background, page scripts, parity, known deviations, "
                                "environment, coverage, fuzz): not a release verdict (--only)")
    assert "gate PARTIAL: the 2 checks run passed" in out
    document = json.loads(report.read_text())
    assert document["ok"] is False and document["gate"]["ok"] is False
    assert document["gate"]["not_run"] == [name for name in NAMES if name not in ("trees", "policy")]
    assert document["engines"] == {} and document["cases"] == [] and document["gate"]["artifacts"] == {}


def test_a_partial_gate_cannot_be_the_next_releases_baseline(tmp_path):
    partial = tmp_path / "partial.json"
    assert gate_cli("--only", "policy", "--acknowledged", ACKNOWLEDGED, "--json", str(partial))[0] == 0
    code, _, err = gate_cli("--only", "policy", "--baseline", str(partial))
    assert code == 2
    assert f"{partial}: a partial gate (--only; not run: corpus, trees" in err
    assert "is no release's result: pass the --json of the last release's whole gate" in err


def test_an_unknown_check_is_a_usage_error_before_anything_runs():
    code, out, err = gate_cli("--only", "trees,coverge")
    assert code == 2 and out == ""
    assert err.strip() == ("extparity: --only: no check named 'coverge'; the checks are " + ", ".join(NAMES))


def readme_checks() -> list[tuple[str, str]]:
    """The README's table of checks, as (name, what fails it) rows."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").partition("\n## The gate's checks\n")[2]
    section = section.partition("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [(row.split("`")[1], row.split(" | ", 1)[1].removesuffix(" |")) for row in rows]


def test_the_readmes_table_of_checks_is_the_registry_word_for_word():
    assert readme_checks() == [(spec.name, spec.doc) for spec in all_checks()]


def test_docs_gate_md_has_a_section_for_every_check_in_the_gates_order():
    text = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    headings = [line[4:].strip() for line in text.partition("\n## The checks\n")[2].partition("\n## ")[0].splitlines()
                if line.startswith("### ")]
    assert headings == NAMES


def test_gate_html_shows_each_check_above_the_matrix_and_report_remakes_it_from_the_json(tmp_path):
    """`gate --html`: the run's page with the gate's checks first, a failing one open with every
    problem behind its line; `report` makes the same page from the gate's --json."""
    page, saved, again = tmp_path / "gate.html", tmp_path / "gate.json", tmp_path / "again.html"
    code, out, err = gate_cli("--only", "trees,policy", "--html", str(page), "--json", str(saved))
    assert code == 1 and "FAIL policy: not acknowledged: trusted unreviewed: chrome/background.js" in out, out + err
    html = page.read_text(encoding="utf-8")
    pane = html[html.index('<section id="gate-pane">'):html.index("</section>", html.index('id="gate-pane"'))]
    assert "<h2>gate FAILED: 1 of 2 checks (policy)</h2>" in pane
    assert '<details class="pass"><summary>PASS trees: ' in pane
    assert '<details class="fail" open><summary>FAIL policy: not acknowledged: ' in pane
    problems = json.loads(saved.read_text(encoding="utf-8"))["gate"]["checks"][1]["problems"]
    assert len(problems) > 1 and all(f"<li>{p}</li>" in pane for p in problems)  # no markup in these problems
    assert call_cli("report", str(saved), "--html", str(again))[0] == 0
    assert again.read_bytes() == page.read_bytes()
