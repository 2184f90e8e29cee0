"""Progress says how fast each engine goes and when it should be done: cases per second since the
run started, and the time left at that rate (or the time it took, once done)."""

from __future__ import annotations

import io

from extparity.reports.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_carry_the_rate_and_the_time_left_then_the_time_taken():
    clock, stream = Clock(), io.StringIO()
    bars = Progress(stream, ["python"], line_every_s=0, clock=clock)
    clock.now += 4
    bars.update("python", 200, 1000)
    clock.now += 96
    bars.update("python", 1000, 1000)
    assert stream.getvalue().splitlines() == ["python: 200/1000 cases, 50 cases/s, 16s left",
                                              "python: 1000/1000 cases, 10 cases/s, took 1m40s"]


def test_a_bar_shows_the_rate_and_eta_and_nothing_before_the_first_case():
    clock = Clock()
    bars = Progress(io.StringIO(), ["quickjs-chrome", "python"], clock=clock)
    assert bars.bar("python").endswith("] 0/0 cases")
    clock.now += 2
    bars.update("python", 0, 10)
    assert bars.bar("python").endswith("] 0/10 cases")
    clock.now += 2
    bars.update("python", 3, 10)
    assert bars.bar("python").endswith("] 3/10 cases, 0.8 cases/s, 9s left")
