"""The release gate: every check a release must pass, each a line that says why.

Why a gate and not `run`: a parity run answers "do the verdicts agree?" about the modules the
entries reach. A release ships more than that: whole trees, manifests, a background that must
start and answer, version strings, packed files. Each was a way to fool `run` (a second, laxer
parser copy the Firefox manifest pointed at; a module outside the verified set; a background
that threw at start-up; a parser that changed only inside the service worker; a known deviation
hiding a divergence; an empty corpus), so each is a check of its own. The checks are modules
found by name (``registry``); this module is the loop that prepares what the selected ones need
(the artifacts, the engines' run) and runs them in the registry's order.

A gate that ran only some checks (`--only`) is partial: its checks pass or fail as usual, but
it is never a release's verdict (``GateResult.ok`` is False, and it cannot be a baseline).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..corpus.cases import Corpus
from ..project.config import Project
from ..run.evidence import Seen
from ..run.evidence import record as record_evidence
from ..run.parity import RunResult, run_parity
from ..subject import tree_checks
from ..subject.weblint import LintResult
from . import artifacts as packing
from . import policy, shipped_files
from .context import Gate, Options, browsers_by_tree
from .recorded import recorded_run
from .registry import ARTIFACTS, ENGINES, Spec, all_checks

UNPACKED = ".unpacked"  # inside dist/: the artifacts as the engines load them, removed afterwards


@dataclass
class Check:
    name: str
    ok: bool
    line: str  # the one-line reason
    problems: list[str] = field(default_factory=list)  # everything behind a failing line

    def text(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'} {self.name}: {self.line}"

    def to_json(self) -> dict:
        return {"name": self.name, "ok": self.ok, "line": self.line, "problems": self.problems}


def check(name: str, problems: list[str], passing: str) -> Check:
    """A failing check says its first problem, and how many more there are."""
    if not problems:
        return Check(name, True, passing)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return Check(name, False, problems[0] + more, list(problems))


@dataclass
class GateResult:
    checks: list[Check]
    not_run: list[str]  # checks left out by --only: a partial gate is no release verdict
    run: RunResult  # the engines' run; empty when no selected check needed one
    tested: Project  # the project as the engines saw it: trees are the unpacked artifacts
    artifacts: list[packing.Artifact]
    lint: dict[str, LintResult]
    policy: dict  # what this run applied (``policy.record``): the next release's baseline
    coverage: dict | None = None  # the coverage document (``coverage.record``); None when not measured
    # Wall seconds of each preparation ("artifacts", "engine run") and check: said, never judged.
    timings: dict[str, float] = field(default_factory=dict)
    # What the browsers showed of the failures only they have (``run.evidence``), with
    # ``Options.browser_evidence``: for the repro folder, never judged.
    browser_evidence: Seen = field(default_factory=lambda: ({}, []))

    @property
    def passed(self) -> bool:
        """Every check that ran passed."""
        return all(c.ok for c in self.checks)

    @property
    def ok(self) -> bool:
        """The release's verdict: every check ran, and passed."""
        return self.passed and not self.not_run

    def section(self) -> dict:
        """The gate's part of the JSON report (deterministic: hashes, no times)."""
        return {
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "not_run": self.not_run,
            "artifacts": {a.tree: {"path": self.tested.relative(a.path), "sha256": a.sha256, "files": a.files}
                          for a in self.artifacts},
            "web_ext": {tree: lint.messages for tree, lint in sorted(self.lint.items())},
            "policy": self.policy,
        }


def run_gate(project: Project, corpus: Corpus, checks: list[Spec], options: Options = Options()) -> GateResult:
    """Run ``checks`` (``registry.select``), preparing first what they need: the artifacts, then
    the engines' run on them, or with ``options.recorded`` (a merged shard result) that result,
    accepted only for these bytes (``recorded.recorded_run``)."""
    needs = {need for spec in checks for need in spec.needs}
    timings: dict[str, float] = {}
    gate = Gate(project, corpus, options, policy.record(project, corpus, [spec.name for spec in all_checks()]),
                browsers_by_tree(project), tested=project)
    chosen = [spec for spec in checks if spec.applies is None or spec.applies(gate)]
    unpacked_root = project.gate.dist / UNPACKED
    shutil.rmtree(unpacked_root, ignore_errors=True)
    try:
        if needs & {ARTIFACTS, ENGINES}:
            started = time.perf_counter()
            gate.built, gate.artifact_problems, unpacked = build_artifacts(project, gate.browsers, unpacked_root,
                                                                           options.artifacts)
            gate.tested = replace(project, trees={**project.trees, **unpacked})
            timings["artifacts"] = time.perf_counter() - started
        for spec in chosen:
            if spec.prepare is not None:
                spec.prepare(gate)
        if ENGINES in needs:
            started = time.perf_counter()
            gate.result = (recorded_run(options.recorded, gate.tested, corpus) if options.recorded is not None else
                           run_parity(gate.tested, corpus.cases, list(project.engines),
                                      case_timeout_s=options.case_timeout_s, budget_s=options.budget_s,
                                      jobs=options.jobs, controller=options.controller, log=options.log,
                                      deviation_cases={case.id for case in corpus.cases},
                                      instrument=gate.recorder.instrument if gate.recorder is not None else None,
                                      kept=gate.kept_browsers))
            timings["engine run"] = time.perf_counter() - started
        results = []
        for spec in chosen:
            started = time.perf_counter()
            results.append(check(spec.name, *spec.verdict(gate)))
            timings[spec.name] = time.perf_counter() - started
        seen: Seen = {}, []
        if ENGINES in needs and options.browser_evidence and options.recorded is None:
            # here, while the unpacked artifacts the engines ran are still on disk
            started = time.perf_counter()
            seen = record_evidence(gate.tested, gate.result, options.case_timeout_s, options.log)
            timings["browser evidence"] = time.perf_counter() - started
    finally:
        for cleanup in gate.cleanups:
            cleanup()
        shutil.rmtree(unpacked_root, ignore_errors=True)
    selected = {spec.name for spec in checks}
    not_run = [spec.name for spec in all_checks() if spec.name not in selected]
    if not not_run and all(c.ok for c in results):  # a release's verdict: what it packed is released
        packing.write_record(project.gate.dist, gate.built, released=True)
    return GateResult(results, not_run, gate.result, gate.tested, gate.built, gate.lint, gate.policy, gate.coverage,
                      timings, seen)


def build_artifacts(project: Project, browsers: dict[str, set[str]], unpacked_root: Path,
                    theirs: dict[str, Path] | None = None):
    """One artifact per tree in dist/, each unpacked for the engines; and what went wrong. A tree
    in ``theirs`` (`--artifact TREE=ZIP`) ships the team's own zip instead: the engines run on its
    bytes, and its entries must be the tree's files, as the gate's own pack's must."""
    base = _release_name(project)
    built, problems, unpacked = [], [], {}
    record = packing.read_record(project.gate.dist)
    for name, path in (theirs or {}).items():
        try:
            artifact = packing.theirs(name, path)
            unpacked[name] = packing.unpack(artifact.data, unpacked_root / name)
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: cannot read the artifact {path}: {getattr(exc, 'strerror', None) or exc}")
            continue
        built.append(artifact)
        problems += shipped_files.tree_problems(name, project.trees[name])
        problems += shipped_files.entry_problems(path.name, artifact.data, project.trees[name], unpacked[name])
    for name, tree in project.trees.items():
        if name in (theirs or {}):
            continue
        manifest, _ = tree_checks.load_manifest(name, tree)
        version = (manifest or {}).get("version")
        suffix = ".xpi" if "firefox" in browsers[name] else ".zip"
        path = project.gate.dist / packing.artifact_name(base, version if isinstance(version, str) else None, name, suffix)
        refused = shipped_files.tree_problems(name, tree)
        try:
            artifact, found = packing.build(name, tree, path, write=not refused, record=record)
            unpacked[name] = packing.unpack(artifact.data, unpacked_root / name)
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: cannot build {path.name}: {exc}")
            continue
        problems += refused + found
        if refused:
            problems.append(f"{name}: not packed into {project.relative(project.gate.dist)}/: its files are refused above")
            continue
        built.append(artifact)
        problems += shipped_files.entry_problems(path.name, artifact.data if found else path.read_bytes(), tree,
                                                 unpacked[name])
    problems += shipped_files.stray_files(project.gate.dist, [a.path for a in built], unpacked_root, packing.RECORD)
    # Written now, not when the gate ends: a gate stopped half-way leaves artifacts it can rebuild.
    packing.write_record(project.gate.dist, built, released=False)
    return built, problems, unpacked


def _release_name(project: Project) -> str:
    """package.json's name when configured, else the first manifest's name."""
    if project.gate.package_json is not None:
        try:
            name = json.loads(project.gate.package_json.read_text(encoding="utf-8")).get("name")
            if isinstance(name, str) and name:
                return name.split("/")[-1]
        except (OSError, ValueError, AttributeError):
            pass
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        if manifest and isinstance(manifest.get("name"), str):
            return manifest["name"]
    return "extension"
