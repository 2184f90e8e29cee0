"""Judging one case across engines: parity first, then the corpus's expectation.

Parity does not need a reference. Engines are grouped by identical verdict bytes; when a
reference engine gave a verdict, every engine that differs from it diverges; without one, every
engine outside the unique largest group diverges, and with no unique largest group every engine
does (two engines that disagree are both suspects). A verdict that agrees is then checked
against the case's expectation. Known deviations are data (wptrunner's expectation files): a
failing cell they cover becomes "known", and a covered cell that now passes is a stale entry.
The engines a case's known deviation covers do not vote on that case's baseline: it is the
reference's, or the majority of the engines expected to agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..corpus import expect
from ..corpus.cases import PARITY_ONLY, Case
from ..corpus.deviations import Deviation
from ..engines.base import EngineRun
from ..project.config import Entry
from .outcomes import PASSES, Outcome


@dataclass
class CaseResult:
    case: Case
    cells: dict[str, str] = field(default_factory=dict)  # engine -> cell
    notes: dict[str, list[str]] = field(default_factory=dict)  # engine -> why the cell is not "pass"
    verdicts: dict[str, str] = field(default_factory=dict)  # engine -> verdict, for engines that gave one
    groups: list[list[str]] = field(default_factory=list)  # engines with identical verdicts, largest first
    baseline: str | None = None  # the reference's verdict, or the majority's

    @property
    def odd_one_out(self) -> str | None:
        """The single engine that differs when every other engine agrees."""
        if len(self.groups) == 2 and len(self.groups[1]) == 1 and len(self.groups[0]) >= 2:
            return self.groups[1][0]
        return None

    @property
    def failed(self) -> bool:
        return any(cell not in PASSES for cell in self.cells.values())


def judge(cases: list[Case], runs: Mapping[str, EngineRun], reference: str | None,
          entries: Mapping[str, Entry], deviations: Mapping[str, Deviation]) -> list[CaseResult]:
    return [judge_case(case, runs, reference, entries[case.fn], deviations.get(case.id)) for case in cases]


def _grouped(verdicts: Mapping[str, str]) -> list[tuple[str, list[str]]]:
    """(verdict, engines that gave it), the largest group first (ties in run order)."""
    by_verdict: dict[str, list[str]] = {}
    for name, verdict in verdicts.items():
        by_verdict.setdefault(verdict, []).append(name)
    return sorted(by_verdict.items(), key=lambda item: -len(item[1]))


def judge_case(case: Case, runs: Mapping[str, EngineRun], reference: str | None, entry: Entry,
               known: Deviation | None) -> CaseResult:
    result = CaseResult(case)
    result.verdicts = {name: run.verdicts[case.id] for name, run in runs.items() if case.id in run.verdicts}
    ordered = _grouped(result.verdicts)
    result.groups = [names for _, names in ordered]
    # Engines a known deviation covers take no part in the vote: whether the others pass must not
    # depend on how many deviating engines run. Only when none of the others gave a verdict do
    # they vote, so there is still a baseline to call them stale against.
    voters = {name: verdict for name, verdict in result.verdicts.items() if not (known and name in known.engines)}
    votes = _grouped(voters or result.verdicts)
    if reference in voters:
        result.baseline, against = result.verdicts[reference], f"differs from {reference}"
    elif len(votes) == 1 or (votes and len(votes[0][1]) > len(votes[1][1])):
        result.baseline, against = votes[0][0], f"differs from the majority ({', '.join(votes[0][1])})"
    else:
        against = "no majority: " + " | ".join(", ".join(names) for _, names in votes)
    checked: dict[str, list[str]] = {}
    for name, run in runs.items():
        notes: list[str] = []
        if case.id in run.failures:
            failure = run.failures[case.id]
            cell, notes = Outcome(failure.kind), [failure.detail]
        elif name not in result.verdicts:
            cell = Outcome.MISSING
            notes = [f"engine {run.status}: {run.detail}" if run.status != "ok" else "no verdict returned"]
        elif len(ordered) > 1 and result.verdicts[name] != result.baseline:
            cell, notes = Outcome.DIVERGES, [against]
        elif not isinstance(case.expect, dict):  # PARITY_ONLY: agreement is all it asks
            cell = Outcome.PASS
        else:
            verdict = result.verdicts[name]
            if verdict not in checked:  # engines that agree share one verdict text: check it once
                checked[verdict] = expect.mismatches(entry.list_items, case.expect, verdict)
            notes = list(checked[verdict])
            cell = Outcome.UNEXPECTED if notes else Outcome.PASS
        if known and name in known.engines:
            cell = Outcome.KNOWN if cell != Outcome.PASS else Outcome.STALE
            notes = notes + [f"known deviation: {known.reason} ({known.link})"]
        result.cells[name] = cell
        if notes:
            result.notes[name] = notes
    return result
