"""One run's coverage: hooks into the engines as they are built, and the document afterwards.

``Recorder.instrument`` is handed to the parity run (``run_parity(instrument=...)``) and asks
each engine's kind what it can measure (``Engine.COVERAGE``): an engine of V8's block coverage
(Chromium) comes back wrapped (``browser.CoveredEngine``), the Python reference is told to
measure itself with coverage.py; other engines are untouched. ``Recorder.document`` turns what
was gathered into the coverage document, deterministic like the JSON result: the same corpus
gives the same bytes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..engines.base import BLOCK_COVERAGE, BRANCH_COVERAGE
from ..project.config import Project
from ..subject.linker import LinkError
from . import reference
from .blocks import CASES_PER_BLOCK, ModuleBlocks, Take, function_totals, uncovered
from .browser import CoveredEngine
from .sources import Source, verified_sources

SCHEMA = 1


class Recorder:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.takes: dict[str, list[Take]] = {}  # engine -> its takes, in the order they ran
        self.problems: list[str] = []
        self.sources: dict[str, dict[str, Source]] = {}  # tree -> module -> source
        self.reference_engine: str | None = None
        self._data_dir: Path | None = None

    def instrument(self, engine: Any) -> Any:
        if engine.COVERAGE == BLOCK_COVERAGE and engine.sender == "content":
            # Its messages run in a service worker: in its tree's shared browser, the one whose
            # profiler counts the message engine's cases. In a browser of its own they count nowhere.
            engine.shared = None
            return engine
        if engine.COVERAGE == BLOCK_COVERAGE and engine.tree_name is not None and engine.tree is not None:
            tree = engine.tree_name
            if tree not in self.sources:
                try:
                    self.sources[tree] = verified_sources(self.project, engine.tree)
                except LinkError as exc:
                    self.problems.append(f"{engine.name}: no coverage: {exc}")
                    return engine
            return CoveredEngine(engine, self.sources[tree], self.takes.setdefault(engine.name, []), self.problems)
        if (engine.COVERAGE == BRANCH_COVERAGE and engine.name == self.project.reference
                and self.project.coverage.reference):
            self._data_dir = Path(tempfile.mkdtemp(prefix="extparity-pycoverage-"))
            engine.coverage = reference.job(self.project, self._data_dir)
            self.reference_engine = engine.name
        return engine

    def document(self, result: Any) -> dict:
        """The coverage document of ``result`` (the run's ``RunResult``: each engine's status)."""
        statuses = {name: run.status for name, run in result.runs.items()}
        try:
            return {
                "schema": SCHEMA,
                "engines": {name: {"status": statuses.get(name, "missing"), "takes": len(takes),
                                   "rerun_takes": sum(1 for t in takes if not t.counts),
                                   "cases": sum(len(t.cases) for t in takes if t.counts)}
                            for name, takes in sorted(self.takes.items())},
                "modules": self._modules(),
                "reference": self._reference(),
                "problems": sorted(set(self.problems)),
            }
        finally:
            if self._data_dir is not None:
                shutil.rmtree(self._data_dir, ignore_errors=True)

    def _modules(self) -> dict:
        # Trees of one verified graph hold the same bytes (the run's module check): one entry per path.
        sources: dict[str, Source] = {}
        for tree in sorted(self.sources):
            for path, source in self.sources[tree].items():
                sources.setdefault(path, source)
        modules = {}
        for path, source in sorted(sources.items()):
            model = ModuleBlocks(source)
            for takes in self.takes.values():
                for take in takes:
                    model.learn(take)
            per_engine = {name: model.tally(takes) for name, takes in sorted(self.takes.items())}
            calls = {name: function_totals(path, takes) for name, takes in sorted(self.takes.items())}
            blocks = sorted(b for b in model.blocks if meaningful(source, b))
            modules[path] = module_entry(source, blocks, per_engine, calls)
        return modules

    def _reference(self) -> dict | None:
        if self.reference_engine is None or self._data_dir is None:
            return None
        return {"engine": self.reference_engine, **reference.summary(self.project, self._data_dir)}


def meaningful(source: Source, block: tuple[int, int]) -> bool:
    """Whether a block holds code: V8 also counts the stretch after a ``return`` up to the
    closing brace, which is only punctuation (or a comment)."""
    return any(source.code[block[0]:block[1]])


def module_entry(source: Source, blocks: list[tuple[int, int]], per_engine: dict, calls: dict) -> dict:
    """A module's part of the document: ``blocks`` in order, ``per_engine``: engine ->
    (block -> times run, block -> case ids), ``calls``: engine -> (function range -> calls)."""
    blocks, per_engine = _joined_where_counts_agree(source, blocks, per_engine)
    run_anywhere = {b for b in blocks if any(totals[b] for totals, _ in per_engine.values())}
    rows = []
    for block in blocks:
        first, last = source.lines(*block)
        cases: list[str] = []
        for _, reached in per_engine.values():
            cases += [c for c in reached.get(block, ()) if c not in cases]
        rows.append({"start": block[0], "end": block[1], "lines": [first, last],
                     "count": {name: totals.get(block, 0) for name, (totals, _) in per_engine.items()},
                     "cases": cases[:3]})
    functions: list[dict[str, Any]] = []
    for f in source.functions:
        key = (f.start, f.end)
        functions.append({"name": f.name, "line": f.line, "start": f.start, "end": f.end,
                          "count": {name: by_function.get(key, 0) for name, by_function in calls.items()}})
    missed = []
    for block in uncovered(blocks, run_anywhere, lambda end, start: not meaningful(source, (end, start))):
        first, last = source.lines(*block)
        missed.append({"start": block[0], "end": block[1], "lines": [first, last],
                       "source": source.line_text(first, last)})
    return {
        "sha256": source.sha256,
        "source": source.text,
        "engines": {name: {"blocks": len(blocks), "blocks_run": sum(1 for b in blocks if totals[b]),
                           "functions": len(functions), "functions_run": sum(1 for f in functions if f["count"][name])}
                    for name, (totals, _) in per_engine.items()},
        "blocks": len(blocks),
        "blocks_run": len(run_anywhere),
        "functions": len(functions),
        "functions_run": sum(1 for f in functions if any(f["count"].values())),
        "block_list": rows,
        "function_list": functions,
        "uncovered": missed,
    }


def _joined_where_counts_agree(source: Source, blocks: list[tuple[int, int]], per_engine: dict) -> tuple[list, dict]:
    """The blocks cut where counts differ: each block trimmed to its code (punctuation, white
    space and comments at its ends dropped), and neighbours of one function that ran equally often in every
    engine joined.

    V8 shows a place inside a function only in a take where the code on its two sides ran a
    different number of times; how the cases fall into takes (batches, halves, shards) decides
    whether two stretches that ran equally often overall were ever told apart, and whether the
    punctuation between them went with one or the other. Stretches whose totals differ were told
    apart in every split of the cases, so after this a run and its merged shards know the same
    blocks."""
    engines = list(per_engine)
    code = source.code
    joined: list[list] = []  # [start, end, function, totals, case ids]
    for block in blocks:
        start, end = block
        while start < end and not code[start]:
            start += 1
        while end > start and not code[end - 1]:
            end -= 1
        if start == end:
            continue
        totals = tuple(per_engine[name][0].get(block, 0) for name in engines)
        cases: list[str] = []
        for name in engines:
            cases += [c for c in per_engine[name][1].get(block, ()) if c not in cases]
        function = _innermost_function(source, block)
        if joined and joined[-1][2] == function and joined[-1][3] == totals:
            joined[-1][1] = end
            joined[-1][4] += [c for c in cases if c not in joined[-1][4]]
        else:
            joined.append([start, end, function, totals, cases])
    merged: dict = {name: ({}, {}) for name in engines}
    for start, end, _, totals, cases in joined:
        for name, n in zip(engines, totals):
            merged[name][0][(start, end)] = n
            merged[name][1][(start, end)] = cases[:CASES_PER_BLOCK]
    return [(start, end) for start, end, *_ in joined], merged


def _innermost_function(source: Source, block: tuple[int, int]) -> tuple[int, int] | None:
    holders = [(f.start, f.end) for f in source.functions if f.start <= block[0] and block[1] <= f.end]
    return min(holders, key=lambda f: f[1] - f[0]) if holders else None


def dumps(document: dict) -> str:
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
