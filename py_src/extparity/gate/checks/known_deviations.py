"""known deviations: every entry is valid, still deviates (a stale one fails unless
--allow-stale), and deviates with the very bytes it records (``gate.pinned_deviations``), so a
deviation accepted for one quirk cannot hide another divergence on the same case."""

from __future__ import annotations

from ...project.words import count
from ...reports import summary
from ...run.outcomes import Outcome
from .. import pinned_deviations
from ..context import Gate
from ..registry import ENGINES, Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    tested, result = gate.tested, gate.result
    where = tested.relative(tested.known_deviations) if tested.known_deviations else None
    problems = list(result.deviation_problems)  # each names the file and the entry
    problems += pinned_deviations.pinned_verdict_problems(tested, result)
    stale = [(r.case.id, [name for name, cell in r.cells.items() if cell == Outcome.STALE])
             for r in result.results if Outcome.STALE in r.cells.values()]
    if not gate.options.allow_stale:
        problems += [f"stale entry: {case} no longer deviates on {', '.join(engines)}: remove it "
                     f"(or pass --allow-stale)" for case, engines in stale]
    known_cases = sum(Outcome.KNOWN in r.cells.values() for r in result.results)
    known_cells = sum(cell == Outcome.KNOWN for r in result.results for cell in r.cells.values())
    line = summary.known_deviations(known_cases, known_cells) + (
        f" in {where}, each with a reason, a link and the hash of its deviating verdicts" if where
        else " (no known_deviations file configured)")
    if stale:
        line += (f"; {count(len(stale), 'stale entry', 'stale entries')} allowed by --allow-stale "
                 f"({', '.join(case for case, _ in stale)})")
    return problems, line


CHECK = Spec("known deviations",
             "a stale entry, one without a reason or an http(s) link, a deviating verdict whose "
             "SHA-256 is not the one recorded",
             "known_deviations", verdict, needs=(ENGINES,))
