"""A differential fuzz campaign: generated cases through long-lived engine sessions, judged by
the same parity rules as the corpus, each divergence minimised into a corpus line.

Reproducible by construction: case ``i`` of seed ``S`` is made by its own
``random.Random(f"{S}/{i}")``, so it does not depend on batch size, on timing or on the cases
before it, and ``--start i --cases 1`` remakes exactly that case. Findings never depend on
timing either: the campaign stops at the first batch boundary after ``--seconds``, but which
cases a batch holds is fixed by the seed.
"""

from __future__ import annotations

import json
import sys
import time
import weakref
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..corpus.cases import PARITY_ONLY, Case
from ..corpus.deviations import Deviation
from ..engines.base import EngineRun
from ..engines.driver import Controller, EngineDriver
from ..engines.sharing import share_browsers
from ..project.config import Project
from ..project.atomic import write_atomic
from ..project.kinds import build_engine
from ..project.words import clipped
from ..run.judge import CaseResult, judge
from ..run.outcomes import Outcome
from .dictionary import splice_dictionary, unseen
from .generators import BUILTIN, FuzzTarget, Generation, GeneratorError
from .sandbox import CHUNK, Sandbox
from .quirks import Quirks
from .shrink import shrink

FUZZ_TAG = "fuzz"
Signature = tuple[tuple[str, str], ...]  # (engine, cell) for every engine that did not pass


@dataclass(frozen=True)
class FuzzOptions:
    seed: int
    cases: int | None = None  # stop after this many cases ...
    seconds: float | None = None  # ... or at the first batch boundary after this long
    start: int = 0  # index of the first case
    batch: int = 400
    max_findings: int = 20
    shrink_seconds: float = 60.0
    case_timeout_s: float = 10.0
    entries: tuple[str, ...] = ()  # empty: every configured entry


@dataclass
class Finding:
    original: Case
    minimised: Case
    generator: str
    signature: Signature
    notes: dict[str, list[str]]

    def line(self) -> str:
        cells = ", ".join(f"{engine} {cell}" for engine, cell in self.signature)
        return (f"{self.minimised.id} ({self.generator}, {self.minimised.fn}): {cells}; "
                f"minimised from {_size(self.original)} to {_size(self.minimised)} units")


@dataclass
class CampaignResult:
    cases: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    repeats: int = 0  # failing cases whose minimised form was already a finding
    accepted: dict[str, int] = field(default_factory=dict)  # known deviation's case -> generated cases showing only it
    deviation_problems: list[str] = field(default_factory=list)  # entries that claim more than their case shows
    engine_problems: list[str] = field(default_factory=list)
    generated: dict[str, int] = field(default_factory=dict)  # "entry/generator" -> cases
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> status, busy time, versions

    @property
    def failed(self) -> bool:
        return bool(self.findings or self.repeats or self.engine_problems or self.deviation_problems or not self.cases)

    def accepted_line(self) -> str:
        """How many generated cases a known deviation accepted, by entry ("" when none)."""
        if not self.accepted:
            return ""
        total = sum(self.accepted.values())
        return (f"{total:,} generated case{'s' if total != 1 else ''} showed only a known deviation ("
                + ", ".join(f"{case} {n:,}" for case, n in sorted(self.accepted.items())) + ")")


class Factory(Protocol):
    """What a campaign asks of its cases' maker: case ``index`` and the generator that made it."""

    def make(self, index: int) -> tuple[Case, str]: ...


class CaseFactory:
    """Makes case ``i`` of a seed (``generators.Generation``): with the built-in generators here,
    with a project's plugins in their sandbox (``sandbox.Sandbox``), which is asked for a chunk of
    cases at a time and whose answers are checked before they become cases. Every target carries
    the splice dictionary (``dictionary.py``), read once here from the project's scripts."""

    def __init__(self, project: Project, seeds: dict[str, list[Case]], seed: int, entries: tuple[str, ...] = ()) -> None:
        self.seed = seed
        self.project = project
        for entry in entries:
            if entry not in project.entries:
                raise GeneratorError(f"no entry named {entry!r} (entries: {', '.join(project.entries)})")
        # An entry without arguments has no input to vary: every call of it is the one its corpus
        # case already makes (init writes such entries for exports that take nothing).
        self.without_arguments = [entry for entry in entries or project.entries if not project.entries[entry].args]
        names = [entry for entry in entries or project.entries if project.entries[entry].args]
        if not names:
            raise GeneratorError(f"nothing to generate: {', '.join(self.without_arguments)} "
                                 f"{'takes' if len(self.without_arguments) == 1 else 'take'} no argument")
        self.dictionary = splice_dictionary(project)
        self.targets: dict[str, FuzzTarget] = {}
        for entry in names:
            fields = tuple(dict(case.fields) for case in seeds.get(entry, []))
            self.targets[entry] = FuzzTarget(entry, project.entries[entry], fields, self.dictionary.words,
                                             unseen(self.dictionary.words, fields))
        self.entry_names = sorted(self.targets)
        chosen = {entry: project.fuzz.generators.get(entry, tuple(BUILTIN)) for entry in self.targets}
        self._sandbox: Sandbox | None = None
        self._made: dict[int, tuple[str, str, dict[str, Any]] | GeneratorError] = {}
        if project.fuzz.plugins:
            self._sandbox = Sandbox(project.fuzz.plugins, project.root, self.targets, chosen,
                                    dict(project.fuzz.weights), seed)
            weakref.finalize(self, self._sandbox.close)
            self.generators = self._sandbox.generators
        else:
            self._generation = Generation(BUILTIN, self.targets, chosen, project.fuzz.weights, seed)
            self.generators = {entry: [name for name, _ in pairs] for entry, pairs in self._generation.generators.items()}

    def make(self, index: int) -> tuple[Case, str]:
        entry, name, fields = self._fields(index)
        case = Case(id=f"fuzz-{self.seed}-{index}", fn=entry, fields=fields,
                    expect=PARITY_ONLY, tags=(FUZZ_TAG,),
                    why=f"case {index} of `extparity fuzz --seed {self.seed}` (generator {name})",
                    file="fuzz", line=0, group=f"fuzz/{name}")
        return case, name

    def close(self) -> None:
        """Stop the plugins' sandbox, if there is one."""
        if self._sandbox is not None:
            self._sandbox.close()

    def _fields(self, index: int) -> tuple[str, str, dict[str, Any]]:
        if self._sandbox is None:
            return self._generation.make(index)
        if index not in self._made:
            self._made = dict(enumerate(self._sandbox.make(index, CHUNK), start=index))
        made = self._made.get(index) or GeneratorError(f"fuzz plugins: their sandbox made no case {index}")
        if isinstance(made, GeneratorError):
            raise made
        entry, name, fields = made
        # The sandbox is the project's code: what it answers is data to check, as any input.
        if (entry not in self.targets or name not in self.generators[entry] or not isinstance(fields, dict)
                or list(fields) != list(self.targets[entry].entry.args)):
            raise GeneratorError(f"fuzz plugins: their sandbox answered case {index} with {str(made)[:120]}, which "
                                 f"is not a configured entry's generator and its fields")
        return entry, name, fields


PIPELINE_DEPTH = 2  # batches handed to the engines ahead of the one being judged
SWITCH_INTERVAL_S = 0.0005


@dataclass
class _InFlight:
    """A batch handed to every engine: its cases, with their generators, and each engine's answer to come."""

    made: list[tuple[Case, str]]
    answers: dict[str, Future]


class Campaign:
    """Engines stay open for the whole campaign; every batch goes to all of them at once.

    Why a pipeline: the engines work in their own processes, the harness in this one, so while
    the engines run batch k+1 the harness judges batch k and generates batch k+2, instead of
    the engines waiting for both. Each engine takes its batches in order on a lane of its own
    (one thread), and batches are judged in order, so what a campaign finds does not depend on
    the overlap: a batch still in flight when the campaign stops is dropped, never judged.
    """

    def __init__(self, project: Project, engines: list[str], factory: Factory, options: FuzzOptions,
                 controller: Controller, *, on_finding: Callable[[Finding], None] = lambda finding: None,
                 log: Callable[[str], None] = lambda line: None,
                 known: list[tuple[Deviation, Case]] | None = None) -> None:
        """``known``: the project's known deviations with their corpus cases; a generated case
        that shows one of their quirks and nothing else is accepted (``quirks``)."""
        self.project = project
        self.engine_names = engines
        self.factory = factory
        self.options = options
        self.controller = controller
        self.on_finding = on_finding
        self.log = log
        self.reference = project.reference if project.reference in engines else None
        self.drivers: dict[str, EngineDriver] = {}
        self.lanes: dict[str, ThreadPoolExecutor] = {}
        self.result = CampaignResult()
        self._minimised: set[str] = set()
        self._shrink_round = 0
        self.known = known or []
        self.quirks = Quirks([], [])

    def run(self) -> CampaignResult:
        options, result = self.options, self.result
        started = time.perf_counter()
        # While this thread generates and judges, the lanes' threads wait for the GIL to read each
        # answer; at the default 5 ms switch interval a worker sat idle at every chunk boundary.
        switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self.lanes = {name: ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"extparity-fuzz-{name}")
                      for name in self.engine_names}
        try:
            self._start_engines()
            self._learn_quirks()
            index, end = options.start, None if options.cases is None else options.start + options.cases
            last_log = started
            in_flight: deque[_InFlight] = deque()

            def may_start_more() -> bool:
                return (not result.engine_problems and len(result.findings) < options.max_findings
                        and (end is None or index < end)
                        and (options.seconds is None or time.perf_counter() - started < options.seconds))

            while True:
                while len(in_flight) < PIPELINE_DEPTH and may_start_more():
                    count = options.batch if end is None else min(options.batch, end - index)
                    made = [self.factory.make(i) for i in range(index, index + count)]
                    index += count
                    in_flight.append(self._submit([case for case, _ in made], made))
                if not in_flight:
                    break
                batch = in_flight.popleft()
                results = self._collect(batch)
                result.cases += len(batch.made)
                for case, name in batch.made:
                    key = f"{case.fn}/{name}"
                    result.generated[key] = result.generated.get(key, 0) + 1
                if result.engine_problems:  # an engine that stopped answering: nothing to shrink
                    break
                generator_of = {case.id: name for case, name in batch.made}
                for judged in results:
                    if judged.failed and (accepted := self.quirks.accepts(judged)) is not None:
                        result.accepted[accepted.case] = result.accepted.get(accepted.case, 0) + 1
                    elif judged.failed:
                        self._found(judged, generator_of[judged.case.id])
                        if len(result.findings) >= options.max_findings or result.engine_problems:
                            break
                if len(result.findings) >= options.max_findings or result.engine_problems:
                    break
                now = time.perf_counter()
                if now - last_log >= 10:
                    last_log = now
                    self.log(self.progress_line(now - started))
        except BaseException:
            self.controller.interrupt()
            raise
        finally:
            for lane in self.lanes.values():  # batches still in flight finish (or are cancelled) first
                lane.shutdown(wait=True, cancel_futures=True)
            for driver in self.drivers.values():
                driver.close()
            sys.setswitchinterval(switch_interval)
            result.seconds = time.perf_counter() - started
            result.engines = {name: _engine_summary(driver) for name, driver in self.drivers.items()}
        return result

    def progress_line(self, elapsed: float) -> str:
        result = self.result
        return (f"fuzz: {result.cases:,} cases in {elapsed:.0f}s ({result.cases / max(elapsed, 1e-9):,.0f}/s), "
                f"{len(result.findings)} finding(s)")

    def _start_engines(self) -> None:
        """Every engine built before the first case; one that cannot be is an engine problem,
        and the campaign runs nothing (the parity of the rest proves little)."""
        for name in self.engine_names:
            try:
                engine = build_engine(self.project.engines[name], self.project)
            except Exception as exc:  # e.g. a missing optional binding or browser: one line for this engine
                self.result.engine_problems.append(f"{name}: CRASHED: {exc}")
                continue
            self.drivers[name] = EngineDriver(engine, self.controller, case_timeout_s=self.options.case_timeout_s)
        share_browsers(driver.engine for driver in self.drivers.values())  # one browser per tree

    def _learn_quirks(self) -> None:
        """The known deviations' cases through the engines, judged with no deviation applied: how
        each deviating engine's verdict differs there is what it may differ by elsewhere."""
        known = [(deviation, case) for deviation, case in self.known if set(deviation.engines) & set(self.drivers)]
        if not known or self.result.engine_problems:
            return
        where = self.project.relative(self.project.known_deviations) if self.project.known_deviations else "known deviations"
        self.quirks = Quirks.learn(known, self._run([case for _, case in known]), where)
        self.result.deviation_problems += self.quirks.problems

    def _submit(self, cases: list[Case], made: list[tuple[Case, str]] | None = None) -> _InFlight:
        """``cases`` handed to every engine's lane; the answers come in ``_collect``."""
        wire = [case.wire(self.project.entries[case.fn]) for case in cases]
        return _InFlight(made if made is not None else [(case, "") for case in cases],
                         {name: self.lanes[name].submit(_feed_and_take, driver, wire)
                          for name, driver in self.drivers.items()})

    def _collect(self, batch: _InFlight) -> list[CaseResult]:
        """A submitted batch's answers, judged as a parity run judges them."""
        runs: dict[str, EngineRun] = {name: answer.result() for name, answer in batch.answers.items()}
        for name, run in runs.items():
            if run.status != "ok" and not any(line.startswith(f"{name}:") for line in self.result.engine_problems):
                self.result.engine_problems.append(f"{name}: {run.status.upper()}: {run.detail}")
        return judge([case for case, _ in batch.made], runs, self.reference, self.project.entries, {})

    def _run(self, cases: list[Case]) -> list[CaseResult]:
        """``cases`` through every engine, behind any batch already in flight."""
        return self._collect(self._submit(cases))

    def _found(self, judged: CaseResult, generator: str) -> None:
        signature = _signature(judged)
        case = judged.case
        entry = self.project.entries[case.fn]

        def still_fails(candidates: list[dict[str, Any]]) -> list[bool]:
            self._shrink_round += 1
            trial = [Case(id=f"shrink-{self._shrink_round}-{k}", fn=case.fn, fields=fields, expect=PARITY_ONLY,
                          tags=case.tags, why="", file="fuzz", line=0, group=case.group)
                     for k, fields in enumerate(candidates)]
            return [_signature(r) == signature for r in self._run(trial)]

        fields = shrink(dict(case.fields), entry.args, still_fails, budget_s=self.options.shrink_seconds)
        if self.result.engine_problems:
            return
        key = repr(sorted(fields.items()))
        if key in self._minimised:
            self.result.repeats += 1
            return
        self._minimised.add(key)
        verdicts = self._run([Case(case.id, case.fn, fields, PARITY_ONLY, case.tags, case.why, "fuzz", 0, case.group)])
        final = verdicts[0]
        minimised = Case(id=case.id, fn=case.fn, fields=fields, expect=PARITY_ONLY, tags=case.tags,
                         why=f"minimised from {case.why}; " + "; ".join(
                             f"{engine}: {cell}" for engine, cell in _signature(final)),
                         file="fuzz", line=0, group=case.group)
        finding = Finding(case, minimised, generator, _signature(final), final.notes)
        self.result.findings.append(finding)
        self.on_finding(finding)


def _feed_and_take(driver: EngineDriver, wire: list) -> EngineRun:
    driver.feed(wire, budget_s=float("inf"))
    return driver.take()


def _signature(result: CaseResult) -> Signature:
    return tuple(sorted((engine, cell) for engine, cell in result.cells.items() if cell != Outcome.PASS))


def _size(case: Case) -> int:
    """UTF-16 units of the case's text fields: what the SPEC's caps count."""
    return sum(len(value.encode("utf-16-le", "surrogatepass")) // 2
               for value in case.fields.values() if isinstance(value, str))


def _engine_summary(driver: EngineDriver) -> dict[str, Any]:
    run = driver.run
    return {"status": run.status, "detail": run.detail, "busy_s": round(run.timings.get("wall_s", 0.0), 3),
            "sessions": run.timings.get("sessions", 0), "restarts": run.timings.get("restarts", 0),
            "module_hashes": dict(run.module_hashes), "description": dict(run.description)}


def seed_cases(cases: list[Case]) -> dict[str, list[Case]]:
    """Corpus cases by entry: what mutation generators start from."""
    by_entry: dict[str, list[Case]] = {}
    for case in cases:
        by_entry.setdefault(case.fn, []).append(case)
    return by_entry


def corpus_lines(findings: list[Finding]) -> str:
    """The minimised cases as corpus lines, ready to commit (parity-only expectations)."""
    return "".join(corpus_line(finding.minimised) + "\n" for finding in findings)


def corpus_line(case: Case) -> str:
    """Readable UTF-8 where the text allows; escapes where it holds lone surrogates, which UTF-8
    cannot carry but JSON's \\u escapes can."""
    text = json.dumps(case.line_json(), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(case.line_json(), ensure_ascii=True)
    return text


def findings_path(out: Path, seed: int, start: int) -> Path:
    return out / (f"fuzz-{seed}.jsonl" if start == 0 else f"fuzz-{seed}-from-{start}.jsonl")


FUZZ_TAG_TEXT = "found by `extparity fuzz` and minimised; the case asserts that every engine agrees"


def save_findings(target: Path, findings: list[Finding]) -> None:
    """The minimised cases in ``target``, a corpus file whose folder `run --corpus DIR` loads (its
    tag registry is written once). Raises OSError."""
    write_atomic(target, corpus_lines(findings))
    registry = target.parent / "tags.json"
    if not registry.exists():
        write_atomic(registry, json.dumps({FUZZ_TAG: FUZZ_TAG_TEXT}, indent=1) + "\n")


def repro_line(finding: Finding, saved: str) -> str:
    """A finding as one line of a report: its cells and its input shortened; the whole case is in
    ``saved`` (a minimised input can still be thousands of characters: printed whole, twice, it
    was 6,000-character lines)."""
    shown = clipped(json.dumps(finding.minimised.input, ensure_ascii=True))
    return f"{finding.line()}; input {shown}; the whole case, as a corpus line, is in {saved}"
