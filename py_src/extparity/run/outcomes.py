"""The outcome of one cell (a case in one engine): the one vocabulary the judge writes and the
results, reports, gate and fuzzer read, and the one rule for "this run passed".

The values are the words of the JSON result (``cases[].cells``), so an ``Outcome`` compares
equal to the text read back from a saved result.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Iterable, Mapping


class Outcome(StrEnum):
    PASS = "pass"  # agrees with the baseline and meets the case's expectation
    KNOWN = "known"  # fails as a known deviation says it does
    DIVERGES = "diverges"  # differs from the reference's (or the majority's) verdict
    UNEXPECTED = "unexpected"  # agrees, but misses the case's expectation
    STALE = "unexpected-pass"  # passes although a known deviation says it fails
    ERROR = "error"  # the entry threw
    TIMEOUT = "timeout"  # no verdict within the case time limit
    CRASH = "crash"  # the case took its engine down
    MISSING = "missing"  # no verdict: the engine did not start, or stopped before the case


PASSES = frozenset({Outcome.PASS, Outcome.KNOWN})  # cells that let a run pass
NO_VERDICT = frozenset({Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASH, Outcome.MISSING})  # cells without a verdict


def run_passes(cells: Iterable[Mapping[str, str]], statuses: Iterable[str], problems: Iterable[Iterable]) -> bool:
    """Whether a run passed: at least one case, every engine ran ("ok"), no problem of any kind
    (modules, backgrounds, known deviations, corpus, ...), and every cell in ``PASSES``. The one
    rule for a run, a JSON result and merged shards."""
    rows = list(cells)
    return (bool(rows) and all(status == "ok" for status in statuses) and not any(list(p) for p in problems)
            and all(cell in PASSES for row in rows for cell in row.values()))
