"""What every engine promises the runner, and the plumbing they all share.

An engine runs the same case list through the extension's modules and hands back canonical
verdict strings. The runner compares engines, so engines must fail *softly*: a crash or a
timeout becomes ``EngineRun.status`` with whatever results arrived, never an exception,
because one broken browser must not hide the verdicts of the others.

Cases cross every bridge as ASCII-only JSON text (see ``js/batch-runner.js`` for why).
"""

from __future__ import annotations

import abc
import hashlib
import json
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

JS_DIR = Path(__file__).resolve().parent.parent / "js"
FN_KINDS = ("parse", "repair")
Status = Literal["ok", "crashed", "timeout"]


@dataclass(frozen=True)
class EntryPoint:
    """One callable under test: a module path relative to the tree and its export name."""

    module: str  # POSIX path relative to the tree root, e.g. "src/agent/tool-call-parser.js"
    export: str  # e.g. "parseToolCallsCanonical"


@dataclass(frozen=True)
class ModuleConfig:
    """Which modules an engine loads and which exports answer each case kind.

    ``modules`` is ordered: QuickJS evaluates them in exactly this order (dependencies first),
    browsers import them in this order, and every one of them is hashed.
    """

    modules: tuple[str, ...]
    entries: Mapping[str, EntryPoint]  # fn kind ("parse" | "repair") -> entry point

    def __post_init__(self) -> None:
        object.__setattr__(self, "modules", tuple(self.modules))
        for fn, entry in self.entries.items():
            if entry.module not in self.modules:
                raise ValueError(f"entry {fn!r}: module {entry.module!r} is not in the module list")

    def to_json(self) -> dict[str, Any]:
        """The shape the JS side (ext-realm.js) expects."""
        return {
            "modules": list(self.modules),
            "entries": {fn: {"module": e.module, "export": e.export} for fn, e in self.entries.items()},
        }


@dataclass
class EngineRun:
    """Result of one engine over one case list; partial when ``status`` is not "ok"."""

    verdicts: dict[str, str] = field(default_factory=dict)  # case id -> canonical verdict
    case_errors: dict[str, str] = field(default_factory=dict)  # case id -> "Name: message"
    status: Status = "ok"
    detail: str = ""
    module_hashes: dict[str, str] = field(default_factory=dict)  # module path -> sha256 hex
    timings: dict[str, Any] = field(default_factory=dict)  # startup_s, cases_s, chunks_s, ...

    def fail(self, status: Status, detail: str) -> "EngineRun":
        """Record the first failure only: later errors are usually consequences of it."""
        if self.status == "ok":
            self.status, self.detail = status, detail
        return self

    def add_batch(self, ascii_json: str) -> None:
        """Merge one batch-runner result ({id: {"verdict"} | {"error"}}) into this run."""
        for case_id, result in json.loads(ascii_json).items():
            if "verdict" in result:
                self.verdicts[case_id] = result["verdict"]
            else:
                self.case_errors[case_id] = result["error"]


class Engine(abc.ABC):
    """A JS engine that can run the extension's modules over a case list."""

    name: str

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """Exact versions of everything that could change a verdict (engine, browser, bridge)."""

    @abc.abstractmethod
    def run(self, cases: Sequence[Mapping[str, Any]], timeout_s: float) -> EngineRun:
        """Run every case; ``timeout_s`` bounds the case phase (start-up has its own bound).

        Never raises for engine failures: returns a partial ``EngineRun`` with ``status`` set.
        Raises ``ValueError`` only for malformed cases (a harness bug, not an engine one).
        """


class BrowserEngine(Engine):
    """What the Chromium and Firefox engines share: a tree, a browser binary, batching, and the
    exact build that ran (Playwright's report, known only after a run, next to `--version`)."""

    kind: str
    extra_description: dict[str, str] = {}

    def __init__(self, name: str, tree: Path | str, config: ModuleConfig, *, executable_path: str,
                 chunk_size: int = 500, startup_timeout_s: float = 60.0) -> None:
        self.name = name
        self.tree = Path(tree).resolve()
        self.config = config
        self.executable_path = executable_path
        self.chunk_size = chunk_size
        self.startup_timeout_s = startup_timeout_s
        self._browser_version: str | None = None

    def describe(self) -> dict[str, Any]:
        """``browser_version`` is what Playwright reported in the last run (None before one)."""
        return {
            "engine": self.name,
            "kind": self.kind,
            "tree": str(self.tree),
            "executable": self.executable_path,
            "executable_version": executable_version(self.executable_path),
            "browser_version": self._browser_version,
            "playwright": package_version("playwright"),
            **self.extra_description,
            **host_versions(),
        }

    def new_run(self, cases: Sequence[Mapping[str, Any]]) -> tuple[list[str], EngineRun]:
        """Batches for the browser, and the run they fill; a missing binary fails it at once."""
        chunks = chunk_cases(cases, self.chunk_size)
        run = EngineRun(timings={"chunk_size": self.chunk_size, "chunks": len(chunks), "chunks_s": []})
        if not Path(self.executable_path).exists():
            run.fail("crashed", f"browser not found: {self.executable_path}")
        return chunks, run


def validate_cases(cases: Sequence[Mapping[str, Any]]) -> None:
    """Reject case lists the batch runner would silently mangle (duplicate ids, bad kinds)."""
    seen: set[str] = set()
    for case in cases:
        case_id = case.get("id")
        if not isinstance(case_id, str):
            raise ValueError(f"case id must be a string: {case_id!r}")
        if case_id in seen:
            raise ValueError(f"duplicate case id {case_id!r}")
        seen.add(case_id)
        if case.get("fn") not in FN_KINDS:
            raise ValueError(f"case {case_id!r}: fn must be one of {FN_KINDS}, got {case.get('fn')!r}")


def chunk_cases(cases: Sequence[Mapping[str, Any]], chunk_size: int) -> list[str]:
    """Split cases into ASCII-only JSON texts; a timeout loses only the chunk it hit."""
    validate_cases(cases)
    step = max(1, chunk_size)
    return [
        json.dumps([_wire_case(c) for c in cases[i : i + step]], ensure_ascii=True)
        for i in range(0, len(cases), step)
    ]


def _wire_case(case: Mapping[str, Any]) -> dict[str, Any]:
    wire = {"id": case["id"], "fn": case["fn"], "input": case["input"]}
    if case["fn"] == "parse":
        wire["allowed"] = case.get("allowed")
    return wire


def js_source(name: str) -> str:
    """Text of a helper shipped in extparity/js (batch runner, realm helpers, probe)."""
    return (JS_DIR / name).read_text(encoding="utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def host_versions() -> dict[str, str]:
    """Versions common to every engine's report."""
    return {
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
    }


def package_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def executable_version(path: str) -> str | None:
    """``<browser> --version`` output: the build on disk, known without launching a session."""
    import subprocess

    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None
