"""What a browser showed of a divergence only browsers have: each such failing case run again,
alone, in the browser engines it failed in, with their recorders on (a Playwright trace, a
screenshot and the console in Chromium; what Firefox lets the harness see), for the repro folder
(`--save-failures`, ``results.repro``).

Why again, after the run, rather than recording during it: tracing every case of a run costs
time and disk for the few that fail, and a run with recorders on is no longer the run whose
bytes the result holds. Run again, the main run stays as it was, nothing is spent when no case
diverges only in browsers, and what the recorders saw is one case's doing. The price: the rerun
may not reproduce, so its verdict is recorded beside the files and said when it differs.
"""

from __future__ import annotations

from typing import Callable

from ..engines.base import EngineStartError, Evidence, WireCase
from ..project.config import Project
from ..project.kinds import IN_BROWSER, build_engine, engine_class
from .outcomes import PASSES
from .parity import RunResult

# What a caller hands on to the repro folder: case id -> engine -> Evidence, and one line for each
# browser that could not record.
Seen = tuple[dict[str, dict[str, Evidence]], list[str]]


def browser_only(project: Project, result: RunResult) -> dict[str, list[str]]:
    """Case id -> the browser engines it fails in, for every case whose failing cells are all
    browser engines' (the reference and the headless engines pass it, or know its deviation).
    An engine that failed as a whole (it did not start) is left out: the run's line for it says
    more than a second start would, and none of its cells is a divergence of its own."""
    browsers = {name for name in result.engines
                if engine_class(project.engines[name].kind).RUNS == IN_BROWSER and result.runs[name].status == "ok"}
    found = {}
    for judged in result.results:
        failing = sorted(name for name, cell in judged.cells.items() if cell not in PASSES)
        if failing and set(failing) <= browsers:
            found[judged.case.id] = failing
    return found


def record(project: Project, result: RunResult, case_timeout_s: float, log: Callable[[str], None]) -> Seen:
    """Case id -> engine -> ``Evidence`` for every browser-only failure of ``result``, and one
    line per engine whose browser could not record (the repro's other files are written anyway).
    ``project`` is the one the engines ran (the gate's: its unpacked artifacts, still on disk)."""
    wanted: dict[str, list[WireCase]] = {}
    cases = {judged.case.id: judged.case for judged in result.results}
    for case_id, engines in browser_only(project, result).items():
        case = cases[case_id]
        for name in engines:
            wanted.setdefault(name, []).append(case.wire(project.entries[case.fn]))
    found: dict[str, dict[str, Evidence]] = {}
    problems = []
    for name, chosen in wanted.items():
        engine = build_engine(project.engines[name], project)
        recorded = {case.id: Evidence(missing=[f"kind {engine.kind} records nothing"]) for case in chosen}
        if engine.RECORDS_EVIDENCE:  # a browser kind of one's own may offer no recorders
            log(f"browser evidence: running {len(chosen)} case(s) again in {name} with its recorders on")
            try:
                recorded = engine.record_evidence(chosen, case_timeout_s)
            except EngineStartError as error:
                problems.append(f"browser evidence: {name}: the browser did not start for the trace: {error}")
                recorded = {case.id: Evidence(missing=[f"the browser did not start for the trace: {error}"])
                            for case in chosen}
        for case_id, evidence in recorded.items():
            found.setdefault(case_id, {})[name] = evidence
    return found, problems
