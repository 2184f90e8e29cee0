"""One parity run: every selected engine over the same cases, then every cell compared.

The Python reference defines the verdict; every other engine must return the same bytes. Each
verdict must also meet the case's expectation, unless a known deviation (data, with a reason)
says otherwise. Module checks make sure the bytes that ran are the bytes on disk, and that the
twins in every tree are one file.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import expect
from .config import Config
from .corpus import Case
from .engines.base import Engine, EngineRun, sha256_hex

ENGINE_NAMES = ("python", "quickjs-chrome", "quickjs-firefox", "chromium", "firefox")
REFERENCE = "python"


class SelectionError(Exception):
    """An engine name that does not exist was asked for."""


def parse_engine_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ENGINE_NAMES]
    if unknown or not names:
        raise SelectionError(f"unknown engine(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(ENGINE_NAMES)}")
    return [name for name in ENGINE_NAMES if name in names]


def build_engine(name: str, config: Config) -> Engine:
    """Engines are imported lazily: the Python-only path needs neither QuickJS nor Playwright."""
    if name == "python":
        from .engines.python_engine import PythonEngine

        return PythonEngine(config.reference)
    if name.startswith("quickjs-"):
        from .engines.quickjs_engine import QuickJSEngine

        return QuickJSEngine(name, config.tree(name.removeprefix("quickjs-")), config.modules)
    if name == "chromium":
        from .engines.chromium_engine import ChromiumEngine

        return ChromiumEngine(name, config.tree("chrome"), config.modules, executable_path=config.chromium, page=config.page)
    if name == "firefox":
        from .engines.firefox_engine import FirefoxEngine

        return FirefoxEngine(name, config.tree("firefox"), config.modules, executable_path=config.firefox)
    raise SelectionError(f"unknown engine {name!r}")


def engine_tree(name: str) -> str | None:
    """Which configured tree an engine loads its modules from (None for the reference)."""
    if name.startswith("quickjs-"):
        return name.removeprefix("quickjs-")
    return {"chromium": "chrome", "firefox": "firefox"}.get(name)


@dataclass(frozen=True)
class Deviation:
    case: str
    engines: tuple[str, ...]
    reason: str
    link: str


def load_deviations(path: Path | None) -> tuple[dict[str, Deviation], list[str]]:
    """Known deviations, wptrunner style: data with a reason and a link, never code."""
    if path is None or not path.exists():
        return {}, []
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        return {}, [f"{path.name}: not JSON: {error}"]
    deviations, problems = {}, []
    for index, entry in enumerate(entries if isinstance(entries, list) else [None]):
        ok = isinstance(entry, dict) and all(isinstance(entry.get(k), str) and entry[k] for k in ("case", "reason", "link"))
        ok = ok and isinstance(entry.get("engines"), list) and all(e in ENGINE_NAMES for e in entry["engines"])
        if not ok:
            problems.append(f"{path.name}[{index}]: needs case, engines (known names), reason and link")
            continue
        deviations[entry["case"]] = Deviation(entry["case"], tuple(entry["engines"]), entry["reason"], entry["link"])
    return deviations, problems


@dataclass
class CaseResult:
    case: Case
    cells: dict[str, str] = field(default_factory=dict)  # engine -> pass|diverges|unexpected|error|missing|known
    notes: dict[str, list[str]] = field(default_factory=dict)  # engine -> why the cell is not "pass"
    divergent: dict[str, str] = field(default_factory=dict)  # engine -> its verdict where it differs


@dataclass
class RunResult:
    engines: list[str]
    runs: dict[str, EngineRun]
    descriptions: dict[str, dict]
    results: list[CaseResult]
    module_problems: list[str]
    disk_hashes: dict[str, dict[str, str]]  # module -> tree -> sha256
    deviation_problems: list[str]
    startup_failures: dict[str, str]

    @property
    def failed(self) -> bool:
        return bool(
            self.module_problems or self.deviation_problems or self.startup_failures
            or any(run.status != "ok" for run in self.runs.values())
            or any(cell not in ("pass", "known") for r in self.results for cell in r.cells.values())
        )


def disk_hashes(config: Config, trees: list[str]) -> dict[str, dict[str, str]]:
    hashes: dict[str, dict[str, str]] = {}
    for module in config.modules.modules:
        for tree in trees:
            path = config.tree(tree) / module
            hashes.setdefault(module, {})[tree] = sha256_hex(path.read_bytes()) if path.is_file() else "missing"
    return hashes


def module_problems(config: Config, hashes: dict[str, dict[str, str]], runs: dict[str, EngineRun]) -> list[str]:
    """Twins must be one file on disk, and every engine must have loaded exactly those bytes."""
    problems = []
    for module, by_tree in hashes.items():
        missing = [tree for tree, digest in by_tree.items() if digest == "missing"]
        if missing:
            problems.append(f"{module}: missing in tree(s) {', '.join(missing)}")
        elif len(set(by_tree.values())) > 1:
            shown = ", ".join(f"{tree} {digest[:12]}" for tree, digest in sorted(by_tree.items()))
            problems.append(f"{module}: twins differ on disk ({shown})")
    for name, run in runs.items():
        tree = engine_tree(name)
        if tree is None or run.status != "ok":
            continue
        for module in config.modules.modules:
            loaded = run.module_hashes.get(module)
            on_disk = hashes.get(module, {}).get(tree)
            if loaded != on_disk:
                problems.append(f"{module}: {name} loaded {str(loaded)[:12]}, but {tree} tree on disk is {str(on_disk)[:12]}")
    return problems


def judge(cases: list[Case], runs: dict[str, EngineRun], deviations: dict[str, Deviation]) -> list[CaseResult]:
    reference = runs.get(REFERENCE)
    results = []
    for case in cases:
        result = CaseResult(case)
        expected_verdict = reference.verdicts.get(case.id) if reference else None
        for name, run in runs.items():
            verdict = run.verdicts.get(case.id)
            notes = []
            if case.id in run.case_errors:
                cell, notes = "error", [run.case_errors[case.id]]
            elif verdict is None:
                cell, notes = "missing", [f"engine {run.status}: {run.detail}" if run.status != "ok" else "no verdict returned"]
            elif name != REFERENCE and expected_verdict is not None and verdict != expected_verdict:
                cell, notes = "diverges", [f"differs from {REFERENCE}"]
                result.divergent[name] = verdict
            else:
                notes = expect.mismatches(case.fn, case.expect, verdict)
                cell = "unexpected" if notes else "pass"
            known = deviations.get(case.id)
            if known and name in known.engines:
                cell = "known" if cell != "pass" else "unexpected-pass"
                notes = notes + [f"known deviation: {known.reason} ({known.link})"]
            result.cells[name] = cell
            if notes:
                result.notes[name] = notes
        results.append(result)
    return results


def run_parity(
    config: Config,
    cases: list[Case],
    engine_names: list[str],
    timeout_s: float = 300.0,
    progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> RunResult:
    wire = [case.wire() for case in cases]
    runs: dict[str, EngineRun] = {}
    descriptions: dict[str, dict] = {}
    startup_failures: dict[str, str] = {}
    for name in engine_names:
        progress(f"{name}: running {len(wire)} cases ...")
        started = time.perf_counter()
        try:
            engine = build_engine(name, config)
        except Exception as error:  # e.g. a missing optional dependency: report, keep the others
            startup_failures[name] = f"{type(error).__name__}: {error}"
            runs[name] = EngineRun().fail("crashed", startup_failures[name])
            progress(f"{name}: could not start: {startup_failures[name]}")
            continue
        runs[name] = engine.run(wire, timeout_s)
        descriptions[name] = engine.describe()
        run = runs[name]
        run.timings["wall_s"] = time.perf_counter() - started
        state = "ok" if run.status == "ok" else f"{run.status.upper()}: {run.detail}"
        progress(f"{name}: {len(run.verdicts)} verdicts, {len(run.case_errors)} case errors in {run.timings['wall_s']:.2f}s ({state})")
    trees = sorted({tree for tree in map(engine_tree, engine_names) if tree} | set(config.trees))
    hashes = disk_hashes(config, trees)
    deviations, deviation_problems = load_deviations(config.known_deviations)
    return RunResult(
        engines=list(engine_names),
        runs=runs,
        descriptions=descriptions,
        results=judge(cases, runs, deviations),
        module_problems=module_problems(config, hashes, runs),
        disk_hashes=hashes,
        deviation_problems=deviation_problems,
        startup_failures=startup_failures,
    )
