"""parity: every engine agrees and meets the corpus's expectations, as `extparity run` judges."""

from __future__ import annotations

from ...reports import summary
from ..context import Gate
from ..registry import ENGINES, Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    return summary.failure_lines(gate.result, parity_only=True), summary.closing_line(gate.result)


CHECK = Spec("parity",
             "a verdict that differs from the reference's (or the majority's) in any engine, or misses "
             "its expectation",
             "[tool.extparity.engines], [tool.extparity.entries], corpus", verdict, needs=(ENGINES,))
