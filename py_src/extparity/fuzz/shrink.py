"""Minimising a failing case: delta debugging (Zeller's ddmin) over each text or list argument.

Engines take lists of cases, and a browser's round trip costs far more than one more case in
it, so each ddmin step tries all of its candidates at once (in slices of ``SLICE``) and keeps
the first that still fails, in a fixed order: the result depends only on the engines' verdicts,
never on timing. The budget ends shrinking early with the smallest failing case found so far.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

SLICE = 64  # candidates per round trip: enough to keep engines busy, small at 100,000-unit inputs

StillFails = Callable[[list[dict[str, Any]]], list[bool]]


def shrink(fields: dict[str, Any], order: Sequence[str], still_fails: StillFails, *,
           budget_s: float = 60.0) -> dict[str, Any]:
    """The smallest fields found that still fail the same way; each text or list argument is
    reduced in turn until a whole pass changes nothing (1-minimal per argument)."""
    deadline = time.perf_counter() + budget_s
    changed = True
    while changed and time.perf_counter() < deadline:
        changed = False
        for name in order:
            value = fields[name]
            if not isinstance(value, (str, list)) or not value:
                continue

            def fails(values: list[Any], name: str = name) -> list[bool]:
                return still_fails([{**fields, name: candidate} for candidate in values])

            smaller = ddmin(value, fails, deadline)
            if len(smaller) < len(value):
                fields = {**fields, name: smaller}
                changed = True
    return fields


def ddmin(value: Any, fails: Callable[[list[Any]], list[bool]], deadline: float) -> Any:
    """A 1-minimal failing subsequence of ``value`` (a str or a list) by removal of chunks."""
    if _first_failing([value[:0]], fails) is not None:  # the empty value settles it at once
        return value[:0]
    granularity = 2
    while len(value) >= 2 and time.perf_counter() < deadline:
        chunks = _split(len(value), granularity)
        subsets = [value[start:end] for start, end in chunks]
        complements = [value[:start] + value[end:] for start, end in chunks] if granularity > 2 else []
        candidates = subsets + complements
        found = _first_failing(candidates, fails)
        if found is not None and found < len(subsets):
            value, granularity = candidates[found], 2
        elif found is not None:
            value, granularity = candidates[found], max(granularity - 1, 2)
        elif granularity >= len(value):
            break
        else:
            granularity = min(len(value), granularity * 2)
    return value


def _split(length: int, parts: int) -> list[tuple[int, int]]:
    bounds = [length * k // parts for k in range(parts + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(parts) if bounds[k] < bounds[k + 1]]


def _first_failing(candidates: list[Any], fails: Callable[[list[Any]], list[bool]]) -> int | None:
    """Index of the first candidate that still fails, asking in slices of ``SLICE``."""
    for start in range(0, len(candidates), SLICE):
        for offset, failed in enumerate(fails(candidates[start:start + SLICE])):
            if failed:
                return start + offset
    return None
