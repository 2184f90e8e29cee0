"""A known deviation covers one verdict, not a cell: the gate compares each deviating engine's
verdict with the SHA-256 its entry records (``verdicts`` in the known-deviations file).

Why: the judge turns any failing cell an entry covers into "known". Without the bytes, a
deviating case could change what it returns (accept a call it refused, say) and still read
"known" on every later release; with them, the change fails here, even without a baseline,
and the entry must be recorded again, in review, with the new verdict's hash.
"""

from __future__ import annotations

from ..corpus.deviations import load_deviations
from ..project.config import Project
from ..project.hashing import sha256_hex
from ..run.outcomes import Outcome
from ..run.parity import RunResult


def verdict_hash(verdict: str) -> str:
    return sha256_hex(verdict.encode("utf-8"))


def pinned_verdict_problems(tested: Project, result: RunResult) -> list[str]:
    """One line per deviating engine whose verdict the entry does not pin, or pins to other bytes."""
    deviations, _ = load_deviations(tested.known_deviations, tested.engines, None)  # its problems: the run's
    by_case = {r.case.id: r for r in result.results}
    problems = []
    for case, entry in deviations.items():
        found = by_case.get(case)
        if found is None:
            continue  # a case the corpus lacks: the run's problems say so
        for engine in entry.engines:
            if found.cells.get(engine) == Outcome.STALE:
                continue  # no longer deviates: the stale entry is the problem, said once
            recorded = entry.verdicts.get(engine)
            if engine not in found.verdicts:
                problems.append(f"{case} [{engine}]: no verdict ({found.cells.get(engine, 'not run')}), so the "
                                f"known deviation cannot be held to the verdict it records")
                continue
            now = verdict_hash(found.verdicts[engine])
            if recorded is None:
                problems.append(f"{case} [{engine}]: the entry pins no verdict: after review, record "
                                f"\"verdicts\": {{\"{engine}\": \"{now}\"}}")
            elif recorded != now:
                problems.append(f"{case} [{engine}]: the deviating verdict changed (sha256 {recorded[:12]} "
                                f"recorded, {now[:12]} now): review it, then record {now}")
    return problems
