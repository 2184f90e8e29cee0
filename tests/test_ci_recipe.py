"""docs/ci-gate.yml, the GitHub Actions recipe for the release gate, cannot run here: it is held
to its shape instead. It must parse as YAML, install Debian's browsers and a Node.js web-ext can
run on, set the project up the README's way, run the gate with a JSON report against the last
release's result, upload the reports and artifacts even when the gate fails, and attach the result
of a tag that passed to its release. The README must link it."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "docs" / "ci-gate.yml"


def workflow() -> dict:
    return yaml.safe_load(RECIPE.read_text(encoding="utf-8"))


def steps() -> list[dict]:
    jobs = workflow()["jobs"]
    assert list(jobs) == ["gate"]
    return jobs["gate"]["steps"]


def test_the_recipe_is_a_workflow_with_triggers_and_one_job_in_debian():
    document = workflow()
    triggers = document.get("on", document.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"pull_request", "push"} <= set(triggers)
    job = document["jobs"]["gate"]
    assert job["runs-on"] == "ubuntu-latest" and job["container"].startswith("debian:")


def test_it_installs_debians_browsers_and_node_20_before_setting_up():
    runs = [step.get("run", "") for step in steps()]
    uses = [step.get("uses", "") for step in steps()]
    install = next(i for i, run in enumerate(runs) if "apt-get install" in run)
    assert "chromium" in runs[install] and "firefox-esr" in runs[install] and "python3-venv" in runs[install]
    node = uses.index("actions/setup-node@v4")
    assert str(steps()[node]["with"]["node-version"]) == "20"
    setup = runs.index("make setup")
    assert install < uses.index("actions/checkout@v4") < setup and node < setup


def test_it_runs_the_gate_with_reports_and_uploads_them_even_on_failure():
    gate = next(step for step in steps() if "extparity gate" in step.get("run", ""))
    assert "--json out/gate.json" in gate["run"]
    upload = next(step for step in steps() if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()"
    paths = upload["with"]["path"].split()
    assert {"out/gate.json", "dist/*.zip", "dist/*.xpi"} <= set(paths)
    assert steps().index(gate) < steps().index(upload)


def test_the_gate_is_compared_with_the_last_releases_result_which_tags_that_pass_publish():
    runs = [step.get("run", "") for step in steps()]
    fetch = next(i for i, run in enumerate(runs) if "gh release download" in run)
    assert "--pattern gate.json --dir previous" in runs[fetch]
    gate = next(i for i, run in enumerate(runs) if "extparity gate" in run)
    assert "--baseline previous/gate.json --acknowledged gate/acknowledged.json" in runs[gate] and fetch < gate
    publish = next(i for i, run in enumerate(runs) if "gh release upload" in run)
    assert "out/gate.json" in runs[publish] and gate < publish
    assert steps()[publish]["if"] == "success() && startsWith(github.ref, 'refs/tags/v')"
    assert workflow()["jobs"]["gate"]["permissions"] == {"contents": "write"}
    assert "gh" in runs[next(i for i, run in enumerate(runs) if "apt-get install" in run)].split()
    assert (ROOT / "gate" / "acknowledged.json").read_text() == "[]\n"


def test_the_readme_links_the_recipe():
    assert "(docs/ci-gate.yml)" in (ROOT / "README.md").read_text(encoding="utf-8")
