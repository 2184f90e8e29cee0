"""Run one engine over a case list: chunks, per-case time limits, restarts, soft failure.

Everything here used to be repeated per engine. What it guarantees, for every kind:

* a case that hangs is a TIMEOUT cell naming that case; a case that takes its engine down is a
  CRASH cell; the session is restarted and the other cases of its chunk still run;
* sessions that run whole chunks (browsers) cannot name the culprit, so after a broken chunk
  the driver reruns its unanswered cases one at a time until the culprit shows itself;
* a session that broke for a cause it cannot attribute (a browser shared with another engine)
  blames no case: its unanswered cases run again in the next session;
* an engine that cannot start is reported once, with the engine's own words;
* the overall budget, an interrupt, or too many restarts end the engine with the results it
  already has kept.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Callable

from .base import CaseFailure, Engine, EngineRun, EngineStartError, Session, SessionBroken, WireCase

MAX_RESTARTS = 20


class Controller:
    """Shared by the engines of one run: the interrupt flag and the sessions to kill on it."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._sessions: set[Session] = set()
        self._lock = threading.Lock()

    def track(self, session: Session) -> bool:
        """Remember a session to kill on interrupt; False (and killed) if that came already."""
        with self._lock:
            self._sessions.add(session)
        if self.stop.is_set():
            session.kill()
            return False
        return True

    def forget(self, session: Session) -> None:
        with self._lock:
            self._sessions.discard(session)

    def interrupt(self) -> None:
        """Called from the main thread on SIGINT/SIGTERM: every session stops now."""
        self.stop.set()
        with self._lock:
            sessions = list(self._sessions)
        for session in sessions:
            try:
                session.kill()
            except Exception:  # a session half torn down already; keep stopping the others
                pass


def run_engine(engine: Engine, cases: list[WireCase], *, case_timeout_s: float = 10.0,
               budget_s: float = 600.0, controller: Controller | None = None,
               progress: Callable[[int], None] = lambda done: None) -> EngineRun:
    """One engine over one case list, in sessions it opens and closes itself."""
    driver = EngineDriver(engine, controller or Controller(), case_timeout_s=case_timeout_s)
    try:
        driver.feed(cases, budget_s=budget_s, progress=progress)
    finally:
        driver.close()
    return driver.run


class EngineDriver:
    """An engine's sessions across many case lists: what ``extparity fuzz`` needs to keep a
    browser open for a million cases. Every list fed adds to one ``EngineRun``; a session that
    broke is replaced on the next list, and an engine that failed as a whole takes no more."""

    def __init__(self, engine: Engine, controller: Controller, *, case_timeout_s: float = 10.0) -> None:
        self.engine = engine
        self.controller = controller
        self.case_timeout_s = case_timeout_s
        self.run = EngineRun(timings={"sessions": 0, "restarts": 0, "wall_s": 0.0})
        self.session: Session | None = None
        self.session_cases = 0  # cases the current session has run, for ``Engine.recycle_after``
        self._describe()

    @property
    def usable(self) -> bool:
        return self.run.status == "ok"

    def feed(self, cases: list[WireCase], *, budget_s: float = 600.0,
             progress: Callable[[int], None] = lambda done: None) -> None:
        """Run ``cases``, adding their verdicts and failures to ``self.run``."""
        run = self.run
        started = time.perf_counter()
        pending = deque(cases)
        isolate = 0  # cases to run one by one after a batch broke without naming its culprit
        try:
            while pending and self.usable:
                if self.controller.stop.is_set():
                    run.fail("interrupted", "interrupted")
                    break
                if time.perf_counter() - started > budget_s:
                    run.fail("timeout", f"engine budget of {budget_s:g}s spent with {len(pending)} cases left")
                    break
                if self.session is None:
                    self.session = _open(self.engine, run, self.controller)
                    if self.session is None:
                        break
                    self._describe()  # what the started session knows (a browser's own version)
                size = 1 if isolate else max(1, self.engine.chunk_size)
                chunk = [pending[i] for i in range(min(size, len(pending)))]
                t0 = time.perf_counter()
                batch = self.session.run(chunk, self.case_timeout_s)
                run.timings.setdefault("chunks_s", []).append(time.perf_counter() - t0)
                # Interned: engines that agree (most cells) hold one string for their verdicts, not one
                # each. A custom kind's verdict that is not a plain str is kept as given.
                run.verdicts.update((case_id, sys.intern(verdict) if type(verdict) is str else verdict)
                                    for case_id, verdict in batch.verdicts.items())
                run.failures.update((case_id, CaseFailure("error", text)) for case_id, text in batch.errors.items())
                run.failures.update((case_id, CaseFailure("timeout", text)) for case_id, text in batch.timeouts.items())
                answered = batch.answered()
                if batch.broken is None and len(answered & {c.id for c in chunk}) < len(chunk):
                    lost = next(c.id for c in chunk if c.id not in answered)
                    batch.broken = SessionBroken("crash", "the session returned no result for this case", lost)
                for _ in chunk:
                    pending.popleft()
                pending.extendleft(case for case in reversed(chunk) if case.id not in answered)
                progress(len(run.verdicts) + len(run.failures))
                if batch.broken is None:
                    isolate = max(0, isolate - len(chunk))
                    self.session_cases += len(chunk)
                    if self.engine.recycle_after and self.session_cases >= self.engine.recycle_after:
                        self._close_session()  # a fresh one opens for the next chunk
                    continue
                self._close_session()
                if self.controller.stop.is_set():
                    run.fail("interrupted", "interrupted")
                    break
                run.timings["restarts"] += 1
                culprit = batch.broken.case_id or (chunk[0].id if len(chunk) == 1 else None)
                if not batch.broken.attributable:
                    pass  # its unanswered cases are back in ``pending``, none of them blamed
                elif culprit is not None:
                    run.failures[culprit] = CaseFailure(batch.broken.kind, batch.broken.detail)
                    _drop(pending, culprit)
                    isolate = max(0, isolate - 1)
                else:
                    isolate = len([c for c in chunk if c.id not in answered])
                if run.timings["restarts"] > MAX_RESTARTS:
                    run.fail("crashed" if batch.broken.kind == "crash" else "timeout", f"gave up after {MAX_RESTARTS} restarts; last: {batch.broken.detail}")
                    break
        finally:
            run.timings["wall_s"] += time.perf_counter() - started

    def take(self) -> EngineRun:
        """The verdicts and failures gathered since the last call, handed over and forgotten,
        so a long campaign holds one batch at a time; status, hashes and description stay."""
        run = self.run
        taken = EngineRun(verdicts=run.verdicts, failures=run.failures, status=run.status, detail=run.detail,
                          module_hashes=dict(run.module_hashes), description=dict(run.description))
        run.verdicts, run.failures = {}, {}
        return taken

    def close(self) -> None:
        self._close_session()

    def _close_session(self) -> None:
        self.session_cases = 0
        if self.session is not None:
            session, self.session = self.session, None
            _close(session, self.controller)

    def _describe(self) -> None:
        try:
            self.run.description = self.engine.describe()
        except Exception as exc:  # describing must never cost the run
            self.run.description = {"engine": self.engine.name, "kind": self.engine.kind, "describe_error": str(exc)}


def _open(engine: Engine, run: EngineRun, controller: Controller) -> Session | None:
    t0 = time.perf_counter()
    try:
        session = engine.open()
    except EngineStartError as exc:
        run.fail("crashed", str(exc))
        return None
    if not controller.track(session):  # interrupted while it started
        controller.forget(session)
        run.fail("interrupted", "interrupted")
        return None
    run.timings["sessions"] += 1
    for key, value in session.timings.items():
        run.timings.setdefault(key, []).append(value)
    run.timings.setdefault("startup_s", time.perf_counter() - t0)
    if not run.module_hashes:
        run.module_hashes = dict(session.module_hashes)
    elif session.module_hashes != run.module_hashes:
        run.fail("crashed", "the modules changed on disk during the run (a restarted session loaded other bytes)")
    return session


def _close(session: Session, controller: Controller) -> None:
    controller.forget(session)
    session.close()


def _drop(pending: deque, case_id: str) -> None:
    for case in list(pending):
        if case.id == case_id:
            pending.remove(case)
            return
