"""What the gate's checks read: one ``Gate`` per `extparity gate`, filled by the loop in
``runner`` with what the selected checks need (``registry.NEEDS``) before any of them runs.

Why one object: the checks share expensive things (the artifacts, the engines' run, its
coverage), and a check module should read them by name rather than be handed a different
argument list each. What a check did not declare it needs is not there: ``tested`` is the
project itself and ``result`` an empty run until the loop builds and runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..corpus.cases import Corpus
from ..engines.driver import Controller
from ..engines.sharing import KeptBrowsers
from ..project.config import Project
from ..project.kinds import engine_class
from ..run.parity import RunResult
from ..subject.weblint import Lint, LintResult
from . import artifacts as packing
from .acknowledgements import Acknowledgements
from .policy import Baseline

if TYPE_CHECKING:
    from ..coverage.record import Recorder


@dataclass(frozen=True)
class Options:
    """The command line's part of a gate: limits, outputs of policy from outside the change, and
    with ``recorded`` a merged shard result judged instead of a run of the engines."""

    allow_stale: bool = False
    case_timeout_s: float = 10.0
    budget_s: float = 600.0
    jobs: int | None = None
    controller: Controller | None = None
    log: Callable[[str], None] = lambda line: None
    baseline: Baseline | None = None
    acknowledged: Acknowledgements | None = None
    recorded: dict | None = None  # a merged result (`gate --results`), accepted only for these bytes
    recorded_coverage: dict | None = None  # its shards' coverage files, merged
    artifacts: dict[str, Path] = field(default_factory=dict)  # tree -> the team's own zip (`--artifact`)
    browser_evidence: bool = False  # run browser-only failures again with recorders on (`--save-failures`)


def no_run() -> RunResult:
    """The run of a gate whose checks need no engine: nothing ran, nothing is claimed."""
    return RunResult(engines=[], reference=None, runs={}, results=[], module_problems=[], disk_hashes={},
                     background_hashes={}, background_problems=[], background_on_demand={}, per_browser={}, adapters={},
                     deviation_problems=[])


def browsers_by_tree(project: Project) -> dict[str, set[str]]:
    """Tree -> the browsers that load it as an extension (their rules apply to its manifest)."""
    found: dict[str, set[str]] = {tree: set() for tree in project.trees}
    for spec in project.engines.values():
        browser = engine_class(spec.kind).EXTENSION
        if browser and spec.tree is not None:
            found[spec.tree].add(browser)
    return found


@dataclass
class Gate:
    project: Project  # as configured: its trees are the source trees
    corpus: Corpus
    options: Options
    policy: dict  # what this gate applies (``policy.record``): the next release's baseline
    browsers: dict[str, set[str]]  # ``browsers_by_tree``
    tested: Project  # the project as the engines saw it: trees are the unpacked artifacts once built
    built: list[packing.Artifact] = field(default_factory=list)
    artifact_problems: list[str] = field(default_factory=list)
    result: RunResult = field(default_factory=no_run)
    coverage: dict | None = None  # the coverage document (``coverage.record``) of the run, or the recorded one
    recorder: Recorder | None = None  # set before the run by a check that needs its coverage
    lints: dict[str, Lint] = field(default_factory=dict)  # started before the run, read by web-ext lint
    lint: dict[str, LintResult] = field(default_factory=dict)  # what it read: the JSON report's web_ext
    cleanups: list[Callable[[], None]] = field(default_factory=list)  # run when the gate ends, however it ends
    # Set before the run by a check that opens pages in the run's browsers once its cases are done
    # (page scripts): the browsers the engines shared, kept open past the run.
    kept_browsers: KeptBrowsers | None = None
