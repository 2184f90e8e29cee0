"""extparity as a library: the few calls another tool needs, typed and stable.

Everything here is what the commands do, not a second version of it: ``run`` is the
orchestration of `extparity run` (the command calls it), ``judge`` is the judgement
``run`` applies, and results are the JSON documents `run --json` writes and every report
reads. A typical use::

    from extparity import api

    project = api.load_project("path/to/pyproject.toml")
    outcome = api.run(project, engines=["quickjs-chrome", "quickjs-firefox"])
    api.write_result(outcome.document, "out/parity.json")
    for line in outcome.failures:
        print(line)
    changes = api.behaviour_changes(api.read_result("out/last-release.json"), outcome.document)

Import it as ``extparity.api``: the package root holds only ``__version__`` (the results import
it, so re-exporting this module there would be an import circle). The internals (stage packages
such as ``extparity.run.parity``) may change between minor versions; the names in ``__all__``
change only with the major version, and the CHANGELOG says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .corpus.cases import Case, Corpus, load_corpus as _load_corpus
from .engines.base import EngineRun
from .engines.driver import Controller
from .gate.acknowledgements import Acknowledgements
from .gate.context import Options as GateOptions
from .gate.policy import Baseline
from .gate.registry import Spec as GateCheck
from .gate.registry import select as select_checks
from .gate.runner import GateResult, run_gate
from .project.atomic import write_atomic
from .project.config import Project, load_project
from .project.errors import ConfigError
from .reports.summary import failure_lines
from .results import build
from .results.compare import Change, Comparison, behaviour_changes, compare
from .results.read import ResultError, load as _load_result
from .results.shards import in_shard
from .run.judge import CaseResult
from .run.parity import RunResult, SelectionError, judge_runs, run_parity, select_engines

__all__ = [
    "Case", "CaseResult", "Change", "Comparison", "ConfigError", "Corpus", "EngineRun", "Gate", "GateCheck",
    "Project", "ResultDocument", "ResultError", "Run", "RunResult", "SelectionError",
    "behaviour_changes", "compare", "gate", "gate_checks", "judge", "load_corpus", "load_project", "read_result",
    "result_bytes", "run", "write_result",
]

ResultDocument = dict[str, Any]
"""A JSON result as `extparity run --json` writes it; its shape is ``results/result.schema.json``."""


@dataclass(frozen=True)
class Run:
    """One finished parity run: what ran, how it was judged, and its JSON result."""

    project: Project
    corpus: Corpus
    result: RunResult  # every engine's raw run and every judged case, in memory
    document: ResultDocument  # the same result as data: what `--json` writes and reports read

    @property
    def failures(self) -> list[str]:
        """The lines `extparity run` prints under FAILED (empty when it would exit 0)."""
        return failure_lines(self.result)

    @property
    def ok(self) -> bool:
        """Whether the run passed (``run.outcomes.run_passes``): `extparity run` exits 0 on it."""
        return not self.result.failed


def load_corpus(project: Project, paths: Sequence[str | Path] | None = None) -> Corpus:
    """The project's configured corpus, or ``paths`` (folders or .jsonl files, relative to the
    current folder as on the command line). Bad lines are ``Corpus.problems``, not exceptions."""
    chosen = [Path(path) for path in paths] if paths else list(project.corpus)
    return _load_corpus(chosen, project.entries, base=project.root)


def run(
    project: Project,
    *,
    engines: Sequence[str] | None = None,
    corpus: Sequence[str | Path] | None = None,
    cases: Sequence[Case] | None = None,
    shard: tuple[int, int] | None = None,
    case_timeout_s: float = 10.0,
    budget_s: float = 600.0,
    jobs: int | None = None,
    controller: Controller | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    log: Callable[[str], None] | None = None,
    instrument: Callable[[Any], Any] | None = None,
) -> Run:
    """Run the corpus through the engines and judge it, exactly as `extparity run` does.

    ``engines`` are configured engine names (default: all, in config order; an unknown name
    raises ``SelectionError``); ``corpus`` replaces the configured corpus; ``cases`` runs these
    cases instead of any corpus, with no known deviation applied (inputs of `extparity diff`);
    ``shard`` is ``(K, N)`` of `--shard K/N`. Corpus problems are reported through ``log``
    before any engine starts, then kept in the result (they fail it). Engines that fail do not
    raise: their cases are cells without a verdict and their status says why."""
    say = log or (lambda line: None)
    names = select_engines(project, None if engines is None else ",".join(engines))
    loaded = load_corpus(project, corpus) if cases is None else Corpus(cases=list(cases))
    problems = [str(problem) for problem in loaded.problems]
    for problem in problems:
        say(f"corpus: {problem}")
    chosen = [case for case in loaded.cases if shard is None or in_shard(case.id, shard)]
    deviation_cases = None if corpus or cases is not None else {case.id for case in loaded.cases}
    result = run_parity(project, chosen, names, case_timeout_s=case_timeout_s, budget_s=budget_s, jobs=jobs,
                        deviation_cases=deviation_cases, controller=controller,
                        progress=progress or (lambda engine, done, total: None), log=say, instrument=instrument)
    result.extra_problems += [f"corpus: {problem}" for problem in problems]
    document = build.json_result(result, project, loaded.files, problems, loaded.tags)
    return Run(project, loaded, result, document)


@dataclass(frozen=True)
class Gate:
    """One finished release gate: its checks, and its JSON result (a run's, with the gate's section)."""

    corpus: Corpus
    result: GateResult  # the checks, the engines' run, the artifacts, the applied policy
    document: ResultDocument  # what `gate --json` writes; ``document["ok"]`` is the release's verdict

    @property
    def ok(self) -> bool:
        """Every check of the gate ran and passed: `extparity gate` exits 0 and prints PASSED."""
        return self.result.ok


def gate_checks(only: str | None = None) -> list[GateCheck]:
    """The gate's checks in order (``gate.registry``); ``only`` (comma-separated names) selects
    some, as `gate --only` does (a ``ValueError`` names an unknown one)."""
    return select_checks(only)


def gate(
    project: Project,
    *,
    only: str | None = None,
    corpus: Sequence[str | Path] | None = None,
    allow_stale: bool = False,
    baseline: Baseline | None = None,
    acknowledged: Acknowledgements | None = None,
    recorded: ResultDocument | None = None,
    recorded_coverage: dict[str, Any] | None = None,
    artifacts: Mapping[str, str | Path] | None = None,
    browser_evidence: bool = False,
    case_timeout_s: float = 10.0,
    budget_s: float = 600.0,
    jobs: int | None = None,
    controller: Controller | None = None,
    log: Callable[[str], None] | None = None,
) -> Gate:
    """The release gate, exactly as `extparity gate` runs it: the checks ``only`` names (all by
    default; a partial gate is never a release's verdict), over the configured corpus or
    ``corpus``. ``baseline`` and ``acknowledged`` are policy from outside the change
    (``gate.policy.load_baseline``, ``gate.acknowledgements.load``); ``recorded`` is a merged
    shard result judged instead of running the engines (refused with
    ``gate.recorded.RefusedResult`` unless it is about these bytes). ``artifacts`` maps a tree to
    the team's own zip of it, which then ships (and runs) instead of the gate's own pack.
    ``browser_evidence`` runs each failure only browsers have again with their recorders on, for
    `--save-failures` (``GateResult.browser_evidence``, ``run.evidence``)."""
    checks = select_checks(only)
    loaded = load_corpus(project, corpus)
    problems = [str(problem) for problem in loaded.problems]
    options = GateOptions(allow_stale=allow_stale, case_timeout_s=case_timeout_s, budget_s=budget_s, jobs=jobs,
                          controller=controller, log=log or (lambda line: None), baseline=baseline,
                          acknowledged=acknowledged, recorded=recorded, recorded_coverage=recorded_coverage,
                          artifacts={tree: Path(path) for tree, path in (artifacts or {}).items()},
                          browser_evidence=browser_evidence)
    result = run_gate(project, loaded, checks, options)
    document = build.json_result(result.run, result.tested, loaded.files, problems)
    document["ok"] = result.ok
    document["gate"] = result.section()
    return Gate(loaded, result, document)


def judge(project: Project, cases: list[Case], runs: Mapping[str, EngineRun]) -> list[CaseResult]:
    """Judge engines' verdicts case by case as ``run`` does: against the project's reference
    when it is among ``runs``, else pairwise (the unique largest group of identical verdicts
    is right; with no unique largest group every engine diverges); agreeing verdicts against
    the case's expectation; the project's known deviations applied. ``runs`` maps engine names
    to their ``EngineRun`` (verdicts and failures by case id)."""
    results, _ = judge_runs(project, cases, runs)
    return results


def read_result(path: str | Path) -> ResultDocument:
    """A JSON result from disk; ``ResultError`` (naming the file) when it is not one."""
    return _load_result(path)


def result_bytes(document: ResultDocument) -> str:
    """The text `--json` writes for ``document``: deterministic, one case a line."""
    return build.dumps(document)


def write_result(document: ResultDocument, path: str | Path) -> None:
    """Write ``document`` as `--json` does, atomically (a failed write leaves the old file)."""
    write_atomic(Path(path), build.chunks(document))
