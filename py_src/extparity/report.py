"""Reports of a parity run: a summary table for people, a JSON result and a matrix for CI.

The JSON result is deterministic: same corpus and engines, same bytes. Timings therefore stay
out of it (they go to the terminal and to `--timings`), and paths are relative to the project.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import __version__
from .config import Config
from .runner import RunResult

CELL_MARK = {"pass": "ok", "known": "known", "diverges": "DIVERGES", "unexpected": "UNEXPECTED",
             "unexpected-pass": "UNEXPECTED-PASS", "error": "ERROR", "missing": "MISSING"}


def summary_rows(result: RunResult) -> list[dict]:
    rows = []
    for name in result.engines:
        cells = [r.cells.get(name) for r in result.results]
        run = result.runs[name]
        rows.append({
            "engine": name,
            "status": run.status,
            "cases": len(cells),
            "agreeing": "ref" if name == "python" else sum(c not in ("diverges", "error", "missing") for c in cells),
            "diverging": sum(c == "diverges" for c in cells),
            "unexpected": sum(c in ("unexpected", "unexpected-pass") for c in cells),
            "errors": sum(c in ("error", "missing") for c in cells),
            "known": sum(c == "known" for c in cells),
        })
    return rows


def summary_table(result: RunResult) -> str:
    headers = ("engine", "status", "cases", "agreeing", "diverging", "unexpected", "errors", "known")
    rows = [[str(row[h]) for h in headers] for row in summary_rows(result)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def failure_lines(result: RunResult, limit: int = 40) -> list[str]:
    lines = [f"module: {p}" for p in result.module_problems]
    lines += [f"known-deviations: {p}" for p in result.deviation_problems]
    lines += [f"engine {name}: {run.status}: {run.detail}" for name, run in result.runs.items() if run.status != "ok"]
    case_lines = []
    for r in result.results:
        for name, cell in r.cells.items():
            if cell not in ("pass", "known"):
                why = "; ".join(r.notes.get(name, []))
                case_lines.append(f"{r.case.id} [{name}] {CELL_MARK[cell]}: {why}  ({r.case.file}:{r.case.line})")
    lines += case_lines[:limit]
    if len(case_lines) > limit:
        lines.append(f"... and {len(case_lines) - limit} more failing cells (see the JSON result)")
    return lines


def _relative(description: dict, root: Path) -> dict:
    shown = dict(description)
    if "tree" in shown:
        try:
            shown["tree"] = Path(shown["tree"]).resolve().relative_to(root).as_posix()
        except ValueError:
            pass
    return shown


def json_result(result: RunResult, config: Config, corpus_files: list[str], corpus_problems: list[str]) -> dict:
    cases = []
    for r in result.results:
        entry = {"id": r.case.id, "fn": r.case.fn, "group": r.case.group, "cells": r.cells}
        reference = result.runs.get("python")
        if reference and r.case.id in reference.verdicts:
            entry["verdict"] = reference.verdicts[r.case.id]
        if r.divergent:
            entry["divergent"] = r.divergent
        if r.notes:
            entry["notes"] = r.notes
        cases.append(entry)
    engines = {}
    for name in result.engines:
        run = result.runs[name]
        engines[name] = {
            "status": run.status,
            "detail": run.detail,
            "versions": _relative(result.descriptions.get(name, {}), config.root),
            "module_hashes": dict(sorted(run.module_hashes.items())),
        }
    return {
        "extparity": __version__,
        "ok": not result.failed and not corpus_problems,
        "corpus": {"files": corpus_files, "cases": len(result.results), "problems": corpus_problems},
        "summary": summary_rows(result),
        "engines": engines,
        "modules": {"on_disk": result.disk_hashes, "problems": result.module_problems},
        "known_deviation_problems": result.deviation_problems,
        "cases": cases,
    }


def write_json(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True) + "\n", encoding="utf-8")


def timings(result: RunResult) -> dict:
    return {name: run.timings for name, run in result.runs.items()}


def matrix_markdown(result: RunResult) -> str:
    """One row per case, one column per engine (JSONTestSuite's results table)."""
    header = "| case | " + " | ".join(result.engines) + " |"
    rule = "|---|" + "---|" * len(result.engines)
    rows = [
        "| " + r.case.id + " | " + " | ".join(CELL_MARK[r.cells[name]] for name in result.engines) + " |"
        for r in result.results
    ]
    return "\n".join([header, rule, *rows]) + "\n"
