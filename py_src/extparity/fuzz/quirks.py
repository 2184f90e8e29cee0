"""Known deviations in a fuzz campaign: an engine quirk the project accepted on a corpus case is
accepted on generated inputs that show only that quirk, and nothing else is.

Why: a known deviation covers one corpus case, and a campaign generates thousands of others. A
quirk the team accepted with a reason and a link (QuickJS misrounding a near-midpoint number
literal of 39 digits) turns up again in many generated inputs, each with other digits, and
failed the fuzz check at every run. So the campaign learns, from each known deviation's own
case, how the deviating engine's verdict differs from the reference's: the changed JSON tokens
(``hunks``). A generated case whose every failing cell is such an engine, whose verdict differs
from the baseline by those very hunks, is that quirk again. With ``"fuzz": "numbers"`` in the
entry, any change of one JSON number to another, in an otherwise identical verdict, is the quirk
(the entry's own case must differ in numbers alone). A case with any other difference, in any
engine, is a finding as before.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass
from typing import Iterable

from ..corpus.cases import Case
from ..corpus.deviations import NUMBERS, Deviation, load_deviations
from ..project.config import Project
from ..run.judge import CaseResult
from ..run.outcomes import PASSES, Outcome

TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}\[\]:,])')
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")

Hunk = tuple[tuple[str, ...], tuple[str, ...]]


def tokens(text: str) -> list[str]:
    """A verdict's JSON tokens; a text that is not JSON is one token (any change is all of it)."""
    found, at, end = [], 0, len(text.rstrip())
    while at < end:
        match = TOKEN.match(text, at)
        if match is None:
            return [text]
        found.append(match.group(1))
        at = match.end()
    return found


def hunks(baseline: str, verdict: str) -> frozenset[Hunk]:
    """The token runs ``verdict`` changes in ``baseline``, each as (old tokens, new tokens)."""
    old, new = tokens(baseline), tokens(verdict)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return frozenset((tuple(old[a:b]), tuple(new[c:d])) for op, a, b, c, d in matcher.get_opcodes() if op != "equal")


def numbers_only(found: Iterable[Hunk]) -> bool:
    """Every change replaces numbers by as many numbers: the verdict's shape and its other values stay."""
    return all(len(old) == len(new) and all(NUMBER.match(token) for token in old + new) for old, new in found)


@dataclass(frozen=True)
class Quirk:
    deviation: Deviation
    engine: str
    hunks: frozenset[Hunk]

    def explains(self, found: frozenset[Hunk]) -> bool:
        if not found:
            return False
        return numbers_only(found) if self.deviation.fuzz == NUMBERS else found <= self.hunks


class Quirks:
    """What the known deviations accept, learnt from their cases' verdicts in the campaign's engines."""

    def __init__(self, quirks: list[Quirk], problems: list[str]) -> None:
        self.quirks = quirks
        self.problems = problems  # entries that say more than their own case shows: they fail the campaign

    @classmethod
    def learn(cls, known: list[tuple[Deviation, Case]], judged: list[CaseResult], where: str) -> "Quirks":
        """``judged``: the known deviations' cases through the campaign's engines, with no
        deviation applied (so the deviating cells show)."""
        quirks: list[Quirk] = []
        problems: list[str] = []
        by_id = {result.case.id: result for result in judged}
        for deviation, case in known:
            result = by_id[case.id]
            for engine in deviation.engines:
                verdict = result.verdicts.get(engine)
                if verdict is None or result.baseline is None or verdict == result.baseline:
                    continue  # not in this campaign, or not deviating here: the gate's known deviations check says so
                pinned = deviation.verdicts.get(engine)
                if pinned is not None and hashlib.sha256(verdict.encode("utf-8")).hexdigest() != pinned:
                    continue  # other bytes than pinned: no quirk is learnt from it, and the gate fails it
                found = hunks(result.baseline, verdict)
                if deviation.fuzz == NUMBERS and not numbers_only(found):
                    problems.append(f"{where}: {case.id}: \"fuzz\": \"{NUMBERS}\", but {engine} differs from the "
                                    f"baseline there in more than numbers")
                    continue
                quirks.append(Quirk(deviation, engine, found))
        return cls(quirks, problems)

    def accepts(self, result: CaseResult) -> Deviation | None:
        """The known deviation a failing case shows and nothing else, if there is one."""
        failing = {engine: cell for engine, cell in result.cells.items() if cell not in PASSES}
        if not failing or result.baseline is None or any(cell != Outcome.DIVERGES for cell in failing.values()):
            return None
        used = None
        for engine in failing:
            found = hunks(result.baseline, result.verdicts[engine])
            quirk = next((q for q in self.quirks if q.engine == engine and q.explains(found)), None)
            if quirk is None:
                return None
            used = used or quirk.deviation
        return used


def known_cases(project: Project, cases: list[Case]) -> list[tuple[Deviation, Case]]:
    """The project's known deviations with the corpus cases they name (a malformed file or entry
    is the run's and the gate's to report: here it accepts nothing)."""
    by_id = {case.id: case for case in cases}
    deviations, _ = load_deviations(project.known_deviations, project.engines, set(by_id))
    return [(deviation, by_id[deviation.case]) for deviation in deviations.values()]
