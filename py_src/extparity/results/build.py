"""The JSON result of a parity run, built from a ``RunResult``: every other report reads it.

It is deterministic: same corpus and engines, same bytes. Timings therefore stay
out of it (they go to the terminal and to `--timings`), and paths are relative to the project.
Its shape is versioned (``SCHEMA``) and documented in ``result.schema.json``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Iterator

from .. import __version__
from ..project.config import Project
from ..run.outcomes import NO_VERDICT, Outcome, run_passes
from ..run.parity import RunResult
from .read import SCHEMA


def summary_rows(result: RunResult) -> list[dict]:
    return summary_of(result.engines, result.reference, {name: run.status for name, run in result.runs.items()},
                      [r.cells for r in result.results])


def summary_of(engines: list[str], reference: str | None, statuses: dict[str, str], cells: list[dict]) -> list[dict]:
    """Per engine: its status and its cells counted by outcome (from a run or a JSON result)."""
    counts = SummaryCounts(engines, reference)
    for row in cells:
        counts.add(row)
    return counts.rows(statuses)


class SummaryCounts:
    """``summary_of`` a case at a time, for a result read as a stream (``shards.merge_files``);
    also each distinct row of cells once, which is all ``document_ok`` needs of the cases."""

    def __init__(self, engines: list[str], reference: str | None) -> None:
        self.engines, self.reference = engines, reference
        self.cases = 0
        self.by_engine: dict[str, Counter] = {name: Counter() for name in engines}
        self.distinct: set[tuple[tuple[str, str], ...]] = set()

    def add(self, cells: dict) -> None:
        self.cases += 1
        for name in self.engines:
            self.by_engine[name][cells.get(name)] += 1
        self.distinct.add(tuple(sorted(cells.items())))

    def cell_rows(self) -> list[dict]:
        return [dict(row) for row in sorted(self.distinct)]

    def rows(self, statuses: dict[str, str]) -> list[dict]:
        rows = []
        for name in self.engines:
            column = self.by_engine[name]
            rows.append({
                "engine": name,
                "status": statuses[name],
                "cases": self.cases,
                "agreeing": "ref" if name == self.reference else sum(
                    n for c, n in column.items() if c != Outcome.DIVERGES and c not in NO_VERDICT),
                "diverging": column[Outcome.DIVERGES],
                "unexpected": column[Outcome.UNEXPECTED] + column[Outcome.STALE],
                "failed": sum(n for c, n in column.items() if c in NO_VERDICT),
                "known": column[Outcome.KNOWN],
            })
        return rows


def document_ok(document: dict, cells: list[dict] | None = None) -> bool:
    """Whether a JSON result passes (``outcomes.run_passes``, as for the run that wrote it):
    for `run --json` and for merged shards. ``cells`` stands for the cases' cells when the
    cases are not in ``document`` (a streamed merge gives each distinct row once)."""
    return run_passes([case["cells"] for case in document["cases"]] if cells is None else cells,
                      [engine["status"] for engine in document["engines"].values()],
                      [document["corpus"]["problems"], document["modules"]["problems"],
                       document["modules"].get("background_problems", []), document["known_deviation_problems"],
                       document["problems"]])


def json_result(result: RunResult, project: Project, corpus_files: list[str], corpus_problems: list[str],
                corpus_tags: dict[str, str] | None = None) -> dict:
    """The result as data, the single source of every other report (`read` reads it).

    Each case carries its corpus line (args, expect, tags, why), so reports and repro files
    can be made from a saved or merged result without the corpus. Per engine, a verdict is
    ``divergent[engine]`` if present, else ``verdict`` (the reference's or the majority's),
    unless the engine is listed in ``without_verdict``."""
    cases = []
    for r in result.results:
        entry = {"id": r.case.id, "fn": r.case.fn, "group": r.case.group, "file": r.case.file,
                 "line": r.case.line, "args": dict(r.case.fields), "expect": r.case.expect,
                 "tags": list(r.case.tags), "why": r.case.why, "cells": r.cells}
        if r.baseline is not None:
            entry["verdict"] = r.baseline
        divergent = {name: verdict for name, verdict in r.verdicts.items() if verdict != r.baseline}
        if divergent:
            entry["divergent"] = divergent
        without = [name for name in result.engines if name not in r.verdicts]
        if without:
            entry["without_verdict"] = without
        if len(r.groups) > 1:
            entry["groups"] = r.groups
        if r.notes:
            entry["notes"] = r.notes
        cases.append(entry)
    engines = {}
    for name in result.engines:
        run = result.runs[name]
        engines[name] = {
            "kind": project.engines[name].kind,
            "tree": project.engines[name].tree,
            "status": run.status,
            "detail": run.detail,
            "versions": run.description,
            "module_hashes": dict(sorted(run.module_hashes.items())),
        }
    document = {
        "extparity": __version__,
        "schema": SCHEMA,
        "reference": result.reference,
        "corpus": {"files": corpus_files, "cases": len(result.results), "problems": corpus_problems,
                   "tags": dict(sorted((corpus_tags or {}).items()))},
        "entries": {name: {"args": list(entry.args), "executes": entry.executes, "items": dict(entry.list_items)}
                    for name, entry in project.entries.items()},
        "summary": summary_rows(result),
        "engines": engines,
        "modules": {"on_disk": result.disk_hashes, "background": result.background_hashes,
                    "adapters": result.adapters, "problems": result.module_problems,
                    "background_problems": result.background_problems, "trees": result.tree_hashes,
                    **({"per_browser": dict(sorted(result.per_browser.items()))} if result.per_browser else {})},
        "known_deviation_problems": result.deviation_problems,
        "problems": result.extra_problems,
        "cases": cases,
    }
    document["ok"] = document_ok(document)
    return document


def dumps(document: dict) -> str:
    """The JSON result as text: indented, except that each case is one line. Deterministic (keys
    sorted, ASCII only), readable with grep and diff, and fast: cases go through the C encoder,
    only the small rest through the pure-Python indenting one."""
    return "".join(chunks(document))


def chunks(document: dict) -> Iterator[str]:
    """``dumps`` piece by piece, a case line at a time, for writers that stream to a file: at
    ~100,000 cases the whole text would be hundreds of megabytes held at once. ``cases`` may be
    any iterable (a merge's cases are read as they are written), consumed once."""
    yield "{"
    for index, key in enumerate(sorted(document)):
        yield f"{',' if index else ''}\n {json.dumps(key)}: "
        if key != "cases":
            yield json.dumps(document[key], indent=1, sort_keys=True, ensure_ascii=True).replace("\n", "\n ")
            continue
        written = False
        for case in document[key]:
            yield (",\n  " if written else "[\n  ") + json.dumps(case, sort_keys=True, ensure_ascii=True,
                                                                  separators=(", ", ": "))
            written = True
        yield "\n ]" if written else "[]"
    yield "\n}\n"


def timings(result: RunResult) -> dict:
    return {"wall_s": result.wall_s, "engines": {name: run.timings for name, run in result.runs.items()}}
