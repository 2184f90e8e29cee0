"""Coverage inside Chromium: a DevTools Profiler on the realm that runs the cases.

The session gives a DevTools channel on the realm that runs its cases (``devtools_channel``, a
capability of kinds of ``BLOCK_COVERAGE``): a page engine's is its extension page's CDP session,
a message engine's the extension's service worker, attached through the browser (the Chromium
kind's ``WorkerDebugSession``, as it reads the scripts the worker parsed). Precise coverage
starts with ``callCount`` and ``detailed`` (block counts) once the session has loaded the
subject and before the first case.

Which cases reach a block, at what cost: a take per case costs about 7 ms more than the case
(measured: 100 cases alone with a take each 0.95 s, without 0.21 s), 20 s over the bundled
corpus. So cases run in batches of ``BATCH`` with one take each, which gives the totals; only a
batch that reached a block no case was named for yet is split in halves, each half run again with
a take, down to single cases, leftmost first: every block that ran gets the first case in run
order that reaches it (and up to ``CASES_PER_BLOCK`` from the takes of single cases made anyway),
the reruns end once the corpus's blocks have a case each (the document counts the takes of each
kind; benchmarks/README.md what they cost), and no rerun adds to the totals. A rerun's verdicts
must equal the first run's (the gate's purity rule says a verified module keeps no state between
calls); a difference is a problem of the run.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..engines.base import Batch, Engine, EngineStartError, Session, SessionBroken, WireCase
from .blocks import ModuleBlocks, counts_at, read_take
from .sources import Source

BATCH = 32
START = {"callCount": True, "detailed": True}
# V8's optimizing tiers make counts, and so blocks and case ids, differ from run to run: optimized
# code does not count calls of the functions it inlines, and tiers up on background threads at
# moments no run controls. Without them (the interpreter and Sparkplug count every call) two runs
# give the same document; the headless v8 engine still runs the optimized tiers.
NO_OPTIMIZING_TIERS = ["--no-maglev", "--no-turbofan"]


def without_optimizing_tiers(args: list[str]) -> list[str]:
    """Chromium's launch arguments with the tiers off, in the one ``--js-flags`` Chromium reads
    (it takes the last of several), after any V8 flags the engine's config gave."""
    given = [a.split("=", 1)[1] for a in args if a.startswith("--js-flags=")]
    others = [a for a in args if not a.startswith("--js-flags=")]
    return [*others, "--js-flags=" + " ".join([*given, *NO_OPTIMIZING_TIERS])]


class Profiler:
    """``Profiler`` commands on the target that runs a Chromium session's cases.

    Started before the subject's modules load in the page (``before_subject_loads``): V8 gives a
    function block counters only when it compiles it with coverage on, so a function the modules
    call as they load would otherwise show no blocks at all. The service worker loaded its scripts
    before any session could attach; there, the functions its scripts call at load (a class the
    modules instantiate at their top level) show only how often they ran, and the page engine's
    coverage, which the gate joins, has their blocks."""

    def __init__(self, session: Any, modules: list[str]) -> None:
        self.session, self.modules = session, modules
        self.url_prefix = f"chrome-extension://{session.launch.extension_id}/"
        self.worker = session.engine.via == "message"
        self.script_ids: set[str] | None = None
        self._parsed: dict[str, str] = {}

    async def start(self) -> None:
        """Start coverage. A take covers the whole isolate, and the extension's other pages (a
        message engine's host page in the same browser) share the page's isolate: so in a page
        the takes are kept to the scripts its own document loads, which its session's
        ``Debugger.scriptParsed`` names (on until ``loaded``)."""
        self.channel = await self.session.devtools_channel()
        if not self.worker:
            self.channel.on("Debugger.scriptParsed", lambda event: self._parsed.__setitem__(event["scriptId"], event.get("url", "")))
            await self.channel.send("Debugger.enable")
        await self.channel.send("Profiler.enable")
        await self.channel.send("Profiler.startPreciseCoverage", START)

    def loaded(self, timeout_s: float) -> None:
        """The subject has loaded: fix the page's scripts, and drop what ran while it loaded."""
        if not self.worker:
            self.session.loop.call(lambda: self.channel.send("Debugger.disable"), timeout_s)
            missing = [m for m in self.modules if self.url_prefix + m not in self._parsed.values()]
            if missing:  # a take kept to no script of the module would read as code that never ran
                raise EngineStartError(f"coverage: the page's debugger did not list {', '.join(missing)}")
            self.script_ids = set(self._parsed)
        self.take(timeout_s)

    def take(self, timeout_s: float) -> list[dict]:
        result = self.session.loop.call(lambda: self.channel.send("Profiler.takePreciseCoverage"), timeout_s)["result"]
        return result if self.script_ids is None else [s for s in result if s["scriptId"] in self.script_ids]


class CoveredSession(Session):
    """A Chromium session whose cases run in batches with a coverage take after each."""

    def __init__(self, inner: Session, profiler: Profiler, engine_name: str, sources: dict[str, Source], takes: list,
                 problems: list[str]) -> None:
        self.inner = inner
        self.module_hashes = inner.module_hashes
        self.sources, self.takes, self.problems = sources, takes, problems
        self.engine_name = engine_name
        self.modules = {path: ModuleBlocks(source) for path, source in sources.items()}
        # Per module, the blocks a take of one case reached, as disjoint spans in order: a block
        # found later inside one of them (a new place split it) was reached by that case too.
        self.named: dict[str, list[tuple[int, int]]] = {path: [] for path in sources}
        self.profiler = profiler
        profiler.loaded(30)  # whatever ran while the subject loaded belongs to no case

    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        batch = Batch()
        for i in range(0, len(cases), BATCH):
            part = cases[i:i + BATCH]
            done = self.inner.run(part, case_timeout_s)
            _merge(batch, done)
            if done.broken is not None:
                batch.broken = done.broken
                return batch
            try:
                take = self._take(part, counts=True, timeout_s=case_timeout_s)
                if self._needs_ids(take):
                    self._find_ids(part, take, done, case_timeout_s)
            except Exception as exc:  # a take that does not come back: the session is no longer trusted
                batch.broken = SessionBroken("crash", f"coverage: {type(exc).__name__}: {exc}")
                return batch
        return batch

    def _take(self, cases: list[WireCase], counts: bool, timeout_s: float) -> set[tuple[str, tuple[int, int]]]:
        """Take coverage; the blocks the cases reached (``(module, block)``) are returned."""
        take = read_take(self.profiler.take(timeout_s), self.profiler.url_prefix, self.sources,
                         tuple(c.id for c in cases), counts)
        self.takes.append(take)
        hit: set[tuple[str, tuple[int, int]]] = set()
        for path, ranges in take.ranges.items():
            blocks = self.modules[path]
            blocks.learn(take)
            hit.update((path, block) for block, n in counts_at(blocks.blocks, ranges).items() if n)
        if len(cases) == 1:
            for path, block in sorted(hit):
                if not self._is_named(path, block):
                    bisect.insort(self.named[path], block)
        return hit

    def _is_named(self, path: str, block: tuple[int, int]) -> bool:
        spans = self.named[path]
        k = bisect.bisect_right(spans, (block[0], float("inf"))) - 1
        return k >= 0 and spans[k][0] <= block[0] and block[1] <= spans[k][1]

    def _needs_ids(self, hit: set) -> bool:
        """Whether the cases reached a block that no case is named for yet."""
        return any(not self._is_named(path, block) for path, block in hit)

    def _find_ids(self, cases: list[WireCase], hit: set, first: Batch, case_timeout_s: float) -> None:
        if len(cases) == 1:
            return  # a take of one case names it already
        middle = len(cases) // 2
        for half in (cases[:middle], cases[middle:]):
            again = self.inner.run(half, case_timeout_s)
            if again.broken is not None:
                self.problems.append(f"{self.engine_name}: a case rerun for coverage broke the session: "
                                     f"{again.broken.detail}")
                return
            for case in half:
                if again.verdicts.get(case.id) != first.verdicts.get(case.id):
                    self.problems.append(f"{self.engine_name}: {case.id} gave another verdict when run again for "
                                         f"coverage: the verified code kept state between calls")
            part = self._take(half, counts=False, timeout_s=case_timeout_s)
            if self._needs_ids(part) and len(half) > 1:
                self._find_ids(half, part, first, case_timeout_s)

    def close(self) -> None:
        self.inner.close()

    def kill(self) -> None:
        self.inner.kill()


class CoveredEngine:
    """An engine whose sessions are ``CoveredSession``s; everything else is the engine's own."""

    def __init__(self, inner: Engine, sources: dict[str, Source], takes: list, problems: list[str]) -> None:
        self.inner, self.sources, self.takes, self.problems = inner, sources, takes, problems
        self._profilers: dict[int, Profiler] = {}  # id(session) -> the profiler started in it
        inner.before_subject_loads = self._start  # type: ignore[attr-defined]
        inner.extra_args = without_optimizing_tiers(inner.extra_args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def _start(self, session: Any) -> None:
        profiler = Profiler(session, sorted(self.sources))
        await profiler.start()
        self._profilers[id(session)] = profiler

    def open(self) -> Session:
        session = self.inner.open()
        try:
            profiler = self._profilers.pop(id(session), None)
            if profiler is None:
                raise EngineStartError("the session loaded the subject without starting coverage first")
            return CoveredSession(session, profiler, self.inner.name, self.sources, self.takes, self.problems)
        except Exception as exc:
            session.close()
            raise EngineStartError(f"starting coverage: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") from None


def _merge(into: Batch, part: Batch) -> None:
    into.verdicts.update(part.verdicts)
    into.errors.update(part.errors)
    into.timeouts.update(part.timeouts)
