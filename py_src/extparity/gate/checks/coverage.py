"""The gate's coverage check: every block of the verified modules ran in some case.

A differential gate only judges the behaviour some case reaches: a rule that fires on an input
no case has passes every parity check. So each block that no case ran fails the gate, naming the
module and the line, unless ``[tool.extparity.gate].unreachable`` lists its lines with a reason;
a listed range that cases now run is stale and fails too, as stale deviations do. The reference's
branch coverage must reach ``reference_branch_floor`` percent. Without coverage (no Chromium
engine, or a merged result that carries none) the check fails: it cannot say the code ran.
"""

from __future__ import annotations

from ...project.config import Project, Unreachable
from ...project.words import count
from ..context import Gate
from ..registry import ENGINES, Spec

FIX = "add a case that reaches it, or list its lines under [tool.extparity.gate].unreachable with a reason"


def judge(project: Project, document: dict | None, missing: str = "", cases: int | None = None,
            hashes: dict[str, set[str]] | None = None) -> tuple[list[str], str]:
    """Problems and the passing line. ``cases``: how many cases the coverage must have seen in each
    engine; ``hashes``: module -> the SHA-256 the engines ran (a recorded document must match)."""
    if document is None:
        return [missing or "no coverage was recorded"], ""
    engines = document.get("engines", {})
    if not engines:
        return ["no coverage: no Chromium engine ran (block coverage is read from Chromium's DevTools profiler); "
                "configure an engine of kind chromium"], ""
    problems = [f"{name}: {info['status']}: its coverage is incomplete" for name, info in engines.items()
                if info["status"] != "ok"]
    if cases is not None:
        problems += [f"{name}: its coverage saw {info['cases']} of {count(cases, 'case')} (a shard's coverage file "
                     f"missing?)" for name, info in engines.items() if info["status"] == "ok" and info["cases"] != cases]
    for path, module in document.get("modules", {}).items():
        if hashes is not None and module["sha256"] not in hashes.get(path, set()):
            problems.append(f"{path}: its coverage is of other bytes ({module['sha256'][:12]}) than the engines ran")
    problems += list(document.get("problems", []))
    listed = list(project.gate.unreachable)
    used: set[Unreachable] = set()
    modules = document.get("modules", {})
    not_run = []
    for path, module in modules.items():
        for block in module["uncovered"]:
            first, last = block["lines"]
            # A listing is in use while any of its lines is unrun (a smaller corpus leaves a wider
            # range unrun around it); it excuses only a range that lies wholly inside it.
            used.update(u for u in listed if u.module == path and u.first <= last and first <= u.last)
            excuse = next((u for u in listed if u.module == path and u.first <= first and last <= u.last), None)
            if excuse is not None:
                continue
            code = block["source"].strip().splitlines()[0].strip() if block["source"].strip() else ""
            where = f"{path}:{first}" + (f"-{last}" if last != first else "")
            not_run.append(f"{where}: no case runs this block ({code[:80]}); {FIX}")
    for entry in listed:
        if entry.module not in modules:
            problems.append(f"unreachable {entry.module}:{entry.lines}: not a verified module "
                            f"({', '.join(modules) or 'none'})")
        elif entry not in used:
            problems.append(f"unreachable {entry.module}:{entry.lines}: stale, cases run these lines now: remove it")
    reference = document.get("reference")
    branch_floor = project.gate.reference_branch_floor
    ref_line = ""
    if reference is not None:
        if reference.get("problem"):
            problems.append(f"reference {reference['engine']}: {reference['problem']}")
        rate = 100.0 * reference["branches_run"] / reference["branches"] if reference["branches"] else 0.0
        ref_line = (f"; reference: {reference['branches_run']} of {reference['branches']} branches "
                    f"({rate:.1f}%, floor {branch_floor:g}%)")
        if rate < branch_floor:
            problems.append(f"reference {reference['engine']}: {rate:.1f}% of its branches ran, below the floor of "
                            f"{branch_floor:g}% ([tool.extparity.gate].reference_branch_floor)")
    elif branch_floor > 0:
        problems.append("reference: no branch coverage was recorded, but [tool.extparity.gate].reference_branch_floor "
                        "asks for one (name its files in [tool.extparity.coverage].reference)")
    blocks = sum(m["blocks"] for m in modules.values())
    run = sum(m["blocks_run"] for m in modules.values())
    floor = project.gate.block_coverage_floor
    block_rate = 100.0 * run / blocks if blocks else 100.0
    if floor >= 100 or block_rate < floor:
        problems = not_run + problems
    below = (f"; {count(len(not_run), 'range')} not run, allowed by block_coverage_floor {floor:g}%"
             if not_run and floor < 100 and block_rate >= floor else "")
    functions = sum(m["functions"] for m in modules.values())
    by_module: dict[str, int] = {}
    for u in listed:
        if u in used:
            by_module[u.module.rsplit("/", 1)[-1]] = by_module.get(u.module.rsplit("/", 1)[-1], 0) + 1
    excused = (f"{count(sum(by_module.values()), 'range')} with a reason "
               f"({', '.join(f'{name} {n}' for name, n in sorted(by_module.items()))})" if by_module else "none")
    line = (f"{count(len(modules), 'verified module')}: {run} of {blocks} blocks and "
            f"{sum(m['functions_run'] for m in modules.values())} of {functions} functions run in "
            f"{', '.join(engines)}; unreachable by config: {excused or 'none'}{below}{ref_line}")
    return problems, line


RECORDED_WITHOUT = ("gate --results: no coverage given; pass the shards' files (run --shard K/N --coverage PATH) "
                    "with --coverage-from")


def prepare(gate: Gate) -> None:
    """The engines' run records its coverage (Chromium's block coverage, the reference's
    branches); a merged result brings the shards' coverage instead."""
    from ...coverage.record import Recorder

    if gate.options.recorded is None:
        gate.recorder = Recorder(gate.tested)


def verdict(gate: Gate) -> tuple[list[str], str]:
    gate.coverage = (gate.recorder.document(gate.result) if gate.recorder is not None
                     else gate.options.recorded_coverage)
    ran = {path: set(by_tree.values()) for path, by_tree in gate.result.disk_hashes.items()}
    return judge(gate.tested, gate.coverage, RECORDED_WITHOUT, cases=len(gate.corpus.cases), hashes=ran)


CHECK = Spec("coverage",
             "a block of the verified modules no case runs that `unreachable` does not list, a stale "
             "listing, reference branches below `reference_branch_floor`",
             "[tool.extparity.gate].unreachable, block_coverage_floor, reference_branch_floor, [tool.extparity.coverage]",
             verdict, needs=(ENGINES,), prepare=prepare)
