"""What every engine kind promises the driver, and the result shape they all fill.

eshost's idea, in Python: one agent per host, one result shape. An engine is a *kind* (python,
quickjs, v8, spidermonkey, chromium, firefox) bound by config to a tree and options. It opens
*sessions*; a session runs lists of cases and can break (hang, crash) without taking the
harness with it. The driver (``driver.py``) owns everything engines would otherwise each
repeat: chunking, per-case time limits, restarting a broken session, the overall budget.

Cases cross every bridge as ASCII-only JSON text (see ``js/batch-runner.js`` for why).
"""

from __future__ import annotations

import abc
import json
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..project.kinds import IN_PROCESS

if TYPE_CHECKING:
    from ..project.config import Project
    from ..project.environments import Environment

JS_DIR = Path(__file__).resolve().parent.parent / "js"

# What coverage (``coverage.record``) measures in an engine whose kind offers it (``Engine.COVERAGE``).
# BLOCK_COVERAGE: V8's precise block coverage through DevTools, in a Chromium-family kind whose
# sessions give ``devtools_channel()`` on the realm that runs their cases, whose ``extra_args``
# take V8 flags and which calls ``before_subject_loads``. BRANCH_COVERAGE: coverage.py in the
# worker that runs a Python reference, started by the ``coverage`` job the engine is given.
BLOCK_COVERAGE, BRANCH_COVERAGE = "v8-blocks", "coverage.py"

EngineStatus = Literal["ok", "crashed", "timeout", "interrupted"]
FailureKind = Literal["error", "timeout", "crash"]


class EngineStartError(Exception):
    """The engine could not start (missing binary, module that throws at import, bad tree).

    The message is the engine's own words, one line where possible: it is shown once for the
    engine, not once per case.
    """


@dataclass(frozen=True)
class WireCase:
    """What engines receive of a case: never the expectation, so no engine can peek."""

    id: str
    fn: str
    args: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "fn": self.fn, "args": list(self.args)}

    @cached_property
    def ascii_json(self) -> str:
        """Encoded once, however many engines the case goes to (a fuzz batch goes to five)."""
        return json.dumps(self.to_json(), ensure_ascii=True)


def wire_json(cases: list[WireCase]) -> str:
    """A case list as ASCII-only JSON text, the form every bridge carries unchanged."""
    return "[" + ", ".join(case.ascii_json for case in cases) + "]"


@dataclass(frozen=True)
class CaseFailure:
    """A case that gave no verdict: it threw (error), hung (timeout) or took its engine down."""

    kind: FailureKind
    detail: str


@dataclass(frozen=True)
class SessionBroken:
    """Why a session cannot go on; ``case_id`` names the culprit when the engine knows it.
    ``attributable`` is False when the cause may lie outside this engine's own cases (a browser
    it shared broke): its cases are then run again, none of them blamed."""

    kind: Literal["timeout", "crash"]
    detail: str
    case_id: str | None = None
    attributable: bool = True


@dataclass
class Batch:
    """What a session returned for a list of cases: results for some or all of them."""

    verdicts: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # case id -> "Name: message" it threw
    timeouts: dict[str, str] = field(default_factory=dict)  # case id -> why, when the engine stopped it itself
    broken: SessionBroken | None = None

    def add_runner_output(self, ascii_json: str) -> None:
        """Merge one batch-runner result ({id: {"verdict"} | {"error"} | {"timeout"}})."""
        self.add_results(json.loads(ascii_json))

    def add_results(self, results: dict[str, dict[str, str]]) -> None:
        """Merge a decoded batch-runner result."""
        for case_id, result in results.items():
            if "verdict" in result:
                self.verdicts[case_id] = result["verdict"]
            elif "timeout" in result:
                self.timeouts[case_id] = result["timeout"]
            else:
                self.errors[case_id] = result["error"]

    def answered(self) -> set[str]:
        return set(self.verdicts) | set(self.errors) | set(self.timeouts)


@dataclass
class Evidence:
    """What a browser engine showed while it ran one case again, alone, with its recorders on
    (``record_evidence``): the verdict of that run, or why it gave none, and files named by what
    they hold (``"trace.zip"``, ``"png"``, ``"console.txt"``). ``missing`` says, a line each,
    what could not be recorded and why."""

    verdict: str | None = None
    failure: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


@dataclass
class EngineRun:
    """One engine over one case list; partial when ``status`` is not "ok"."""

    verdicts: dict[str, str] = field(default_factory=dict)
    failures: dict[str, CaseFailure] = field(default_factory=dict)
    status: EngineStatus = "ok"
    detail: str = ""
    module_hashes: dict[str, str] = field(default_factory=dict)  # path -> sha256 of what it loaded
    description: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)

    def fail(self, status: EngineStatus, detail: str) -> "EngineRun":
        """Record the first engine-wide failure only: later ones are usually its consequences."""
        if self.status == "ok":
            self.status, self.detail = status, detail
        return self


class Session(abc.ABC):
    """A started engine with the subject loaded; runs case lists until it is closed."""

    module_hashes: dict[str, str]
    timings: dict[str, Any] = {}  # facts about this session for ``EngineRun.timings`` (a list per key)

    @abc.abstractmethod
    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        """Run ``cases``; give every case a result unless the session broke (``Batch.broken``).

        ``case_timeout_s`` is what one case may take. Sessions that see cases one at a time
        enforce it per case and name the culprit; batch sessions (browsers) bound the whole
        list by it and leave isolating the culprit to the driver.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Stop every process and remove every file the session made. Safe to call twice."""

    def kill(self) -> None:
        """Called from another thread on interrupt: stop at once. Defaults to ``close``."""
        self.close()


class Engine(abc.ABC):
    """One configured engine: a kind bound to a tree and options.

    The class says what its kind is (``project.kinds`` reads these facts before any engine is
    built) and what it can do beyond running cases (its capabilities, read by whoever needs
    them); each default here is the answer of a kind that says nothing."""

    RUNS: str = IN_PROCESS  # where its sessions run: one of project.kinds.RUNS_WHERE
    HOST: str | None = None  # "package.module:Class" of the host its worker loads (RUNS = "worker")
    EXTENSION: str | None = None  # the browser ("chromium", "firefox") whose extension it loads
    NEEDS_TREE = True
    OPTIONS: dict[str, type | tuple[type, ...]] = {}  # option -> accepted type(s)
    OPTION_CHOICES: dict[str, tuple[str, ...]] = {}  # option -> the words it takes
    INSTALL_HINT = ""  # what to install when the binding its worker imports is missing

    RECORDS_PAGE_SCRIPTS = False  # has record_page_scripts(pages, content, launch) and PAGE_SCRIPTS_SEEN (the gate)
    SENDS_FROM_CONTENT = False  # can send a tree's messages from a content script (its option ``sender``)
    COVERAGE: str | None = None  # what coverage.record measures in it: BLOCK_COVERAGE, BRANCH_COVERAGE or nothing
    RECORDS_EVIDENCE = False  # has record_evidence(cases, case_timeout_s) (`--save-failures`, run.evidence)

    kind: str
    chunk_size: int = 100
    recycle_after: int | None = None  # cases after which the driver replaces a healthy session

    def __init__(self, name: str, project: "Project", tree: str | None, options: dict[str, Any]) -> None:
        self.name = name
        self.project = project
        self.tree_name = tree
        self.options = options

    @property
    def tree(self) -> Path:
        """The tree the engine loads; asked only by kinds that load one (the config makes sure
        those have one)."""
        if self.tree_name is None:
            raise EngineStartError(f"{self.name}: a {self.kind} engine loads no tree")
        return self.project.trees[self.tree_name]

    environment: "Environment | None" = None  # a second environment its sessions start in (the gate's)

    def environment_reach(self, environment: "Environment") -> dict[str, str]:
        """Setting of ``environment`` -> how this kind applies it, for the settings it can; a
        kind that applies none is not run in that environment. Each kind says its own."""
        return {}

    def ui_language_missing(self, locale: str) -> str | None:
        """Why this engine cannot choose an extension's ``_locales/`` messages for ``locale``
        (the browser has no such UI language installed), or None: it can, or it reads none."""
        return None

    def in_process_host(self) -> Any:
        """The host its worker would load, loaded in this process instead, for a caller that
        traces the Python code it runs (guided fuzzing follows the reference with
        ``sys.settrace``); None where the kind has none to offer."""
        return None

    def use_environment(self, environment: "Environment") -> None:
        """Open every later session under ``environment`` (only the settings it reaches apply)."""
        self.environment = environment

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """Exact versions of everything that could change a verdict (engine, browser, bridge)."""

    @abc.abstractmethod
    def open(self) -> Session:
        """Start the engine and load the subject; raise ``EngineStartError`` if it cannot."""


def js_source(name: str) -> str:
    """Text of a helper shipped in extparity/js (batch runner, realm helpers, probe)."""
    return (JS_DIR / name).read_text(encoding="utf-8")


def purity_allowed(project: "Project") -> list[str]:
    """What ``[tool.extparity.gate].purity`` allows (its identifiers, e.g. "Date.now"), which stays
    callable under the run-time guard."""
    return sorted({exception.what for exception in project.gate.purity})


def purity_guard(allowed: list[str]) -> str:
    """Statement that installs js/purity-guard.js in the realm that runs it: every realm where
    the harness loads the verified modules (the headless engines' one, the browsers' pages and
    Firefox's module frame) runs this same text before their first line."""
    return f"({js_source('purity-guard.js')})({json.dumps(allowed)});\n"


def host_versions() -> dict[str, str]:
    """Versions common to every engine's report."""
    return {"python": sys.version.split()[0], "python_implementation": platform.python_implementation()}


def package_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def executable_version(path: str) -> str | None:
    """``<browser> --version`` output: the build on disk, known without launching a session."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None
