"""Progress of a run on stderr: cases done per engine, the rate, and the time left at that rate.

On a terminal, one bar per engine is redrawn in place, and only once the run has taken a few
seconds (a quick run prints nothing extra); log lines are printed above the bars. Anywhere
else (CI logs, files, pipes) redrawing would leave escape codes behind, so each engine gets a
plain line now and then instead. Engines report from their own threads, hence the lock.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TextIO

BAR = 24


class Progress:
    def __init__(self, stream: TextIO, engines: list[str], *, draw_after_s: float = 2.0, redraw_every_s: float = 0.1,
                 line_every_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.engines = list(engines)
        self.tty = _is_tty(stream)
        self.draw_after_s, self.redraw_every_s, self.line_every_s = draw_after_s, redraw_every_s, line_every_s
        self.clock = clock
        self.started = clock()
        self.state: dict[str, tuple[int, int]] = {}
        self.last_line: dict[str, float] = {}
        self.last_draw = float("-inf")
        self.drawn = 0  # bar lines currently on screen
        self.lock = threading.Lock()
        self.width = max([len(name) for name in self.engines] + [6])

    def update(self, engine: str, done: int, total: int) -> None:
        """The ``progress`` callback of ``run_parity``."""
        with self.lock:
            self.state[engine] = (done, total)
            now = self.clock()
            if self.tty:
                if now - self.started >= self.draw_after_s and (now - self.last_draw >= self.redraw_every_s or done == total):
                    self._draw(now)
            elif now - self.last_line.get(engine, self.started) >= self.line_every_s:
                self.last_line[engine] = now
                self.stream.write(f"{engine}: {self.counts(engine, now)}\n")
                self.stream.flush()

    def log(self, line: str) -> None:
        """The ``log`` callback: a line that stays, above the bars."""
        with self.lock:
            if self.drawn:
                self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
                self.drawn = 0
            self.stream.write(line + "\n")
            if self.state and self.tty and self.last_draw > float("-inf"):
                self._draw(self.clock())
            self.stream.flush()

    def finish(self) -> None:
        """Leave the final counts on screen if bars were shown."""
        with self.lock:
            if self.drawn:
                self._draw(self.clock())

    def bar(self, engine: str) -> str:
        done, total = self.state.get(engine, (0, 0))
        filled = BAR * done // total if total else 0
        return f"{engine:<{self.width}} [{'#' * filled}{'.' * (BAR - filled)}] {self.counts(engine, self.clock())}"

    def counts(self, engine: str, now: float) -> str:
        """`done/total cases`, then the rate since the run started and the time left at that
        rate (the time taken once done); no rate before the first case."""
        done, total = self.state.get(engine, (0, 0))
        elapsed = now - self.started
        if not done or elapsed <= 0:
            return f"{done}/{total} cases"
        rate = done / elapsed
        when = f"took {_duration(elapsed)}" if done >= total else f"{_duration((total - done) / rate)} left"
        shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.1f}"
        return f"{done}/{total} cases, {shown} cases/s, {when}"

    def _draw(self, now: float) -> None:
        up = f"\x1b[{self.drawn}F" if self.drawn else ""
        lines = "".join(f"\x1b[2K{self.bar(name)}\n" for name in self.engines)
        self.stream.write(up + lines)
        self.stream.flush()
        self.drawn = len(self.engines)
        self.last_draw = now


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
