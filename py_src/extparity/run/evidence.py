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

from typing import Any, Callable

from ..engines.base import EngineStartError, Evidence, WireCase
from ..project.config import Project
from ..project.errors import ConfigError
from ..project.kinds import IN_BROWSER, build_engine, engine_class
from .outcomes import PASSES


def in_browser(kind: str) -> bool:
    try:
        return bool(engine_class(kind).RUNS == IN_BROWSER)
    except ConfigError:  # a kind of one's own that no longer imports: not a browser the harness knows
        return False


def browser_only(document: dict[str, Any]) -> dict[str, list[str]]:
    """Case id -> the browser engines it fails in, for every case whose failing cells are all
    browser engines' (the reference and the headless engines pass it, or know its deviation).
    An engine that failed as a whole (it did not start) is left out: the run's line for it says
    more than a second start would, and none of its cells is a divergence of its own."""
    browsers = {name for name, engine in document["engines"].items()
                if in_browser(engine.get("kind", "")) and engine.get("status") == "ok"}
    found = {}
    for case in document["cases"]:
        failing = sorted(name for name, cell in case["cells"].items() if cell not in PASSES)
        if failing and set(failing) <= browsers:
            found[case["id"]] = failing
    return found


def wire_case(document: dict[str, Any], case: dict[str, Any]) -> WireCase:
    names = document["entries"][case["fn"]]["args"]
    return WireCase(case["id"], case["fn"], tuple(case["args"][name] for name in names))


def record(project: Project, document: dict[str, Any], case_timeout_s: float,
           log: Callable[[str], None]) -> tuple[dict[str, dict[str, Evidence]], list[str]]:
    """Case id -> engine -> ``Evidence`` for every browser-only failure of ``document``, and one
    line per engine whose browser could not record (the repro's other files are written anyway)."""
    wanted: dict[str, list[WireCase]] = {}
    cases = {case["id"]: case for case in document["cases"]}
    for case_id, engines in browser_only(document).items():
        for name in engines:
            wanted.setdefault(name, []).append(wire_case(document, cases[case_id]))
    found: dict[str, dict[str, Evidence]] = {}
    problems = []
    for name, chosen in wanted.items():
        spec = project.engines.get(name)
        if spec is None:
            problems.append(f"browser evidence: {name}: not an engine of this config; nothing recorded for it")
            continue
        log(f"browser evidence: running {len(chosen)} case(s) again in {name} with its recorders on")
        try:
            recorded = build_engine(spec, project).record_evidence(chosen, case_timeout_s)
        except EngineStartError as error:
            problems.append(f"browser evidence: {name}: the browser did not start for the trace: {error}")
            recorded = {case.id: Evidence(missing=[f"the browser did not start for the trace: {error}"])
                        for case in chosen}
        for case_id, evidence in recorded.items():
            found.setdefault(case_id, {})[name] = evidence
    return found, problems
