"""Reports of a parity run: a summary table and grouped failure lines for people, the JSON
result and a Markdown matrix for machines.

The JSON result is deterministic: same corpus and engines, same bytes. Timings therefore stay
out of it (they go to the terminal and to `--timings`), and paths are relative to the project.
Its shape is versioned (``SCHEMA``) and documented in ``result.schema.json``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from . import __version__
from .config import Project
from .judge import CRASH, DIVERGES, ERROR, KNOWN, MISSING, PASS, STALE, TIMEOUT, UNEXPECTED
from .result_doc import SCHEMA
from .runner import RunResult

CELL_MARK = {PASS: "ok", KNOWN: "known", DIVERGES: "DIVERGES", UNEXPECTED: "UNEXPECTED", STALE: "STALE",
             ERROR: "ERROR", TIMEOUT: "TIMEOUT", CRASH: "CRASH", MISSING: "MISSING"}
GROUP_AT = 4  # this many cells sharing one cause print as one line


def summary_rows(result: RunResult) -> list[dict]:
    return summary_of(result.engines, result.reference, {name: run.status for name, run in result.runs.items()},
                      [r.cells for r in result.results])


def summary_of(engines: list[str], reference: str | None, statuses: dict[str, str], cells: list[dict]) -> list[dict]:
    """Per engine: its status and its cells counted by outcome (from a run or a JSON result)."""
    rows = []
    for name in engines:
        column = [row.get(name) for row in cells]
        rows.append({
            "engine": name,
            "status": statuses[name],
            "cases": len(column),
            "agreeing": "ref" if name == reference else sum(c not in (DIVERGES, ERROR, TIMEOUT, CRASH, MISSING) for c in column),
            "diverging": sum(c == DIVERGES for c in column),
            "unexpected": sum(c in (UNEXPECTED, STALE) for c in column),
            "failed": sum(c in (ERROR, TIMEOUT, CRASH, MISSING) for c in column),
            "known": sum(c == KNOWN for c in column),
        })
    return rows


def document_ok(document: dict) -> bool:
    """Whether a JSON result passes: the one rule for `run --json` and for merged shards."""
    return bool(
        document["cases"]
        and not document["corpus"]["problems"]
        and not document["modules"]["problems"]
        and not document["known_deviation_problems"]
        and not document["problems"]
        and all(engine["status"] == "ok" for engine in document["engines"].values())
        and all(cell in (PASS, KNOWN) for case in document["cases"] for cell in case["cells"].values())
    )


def summary_table(result: RunResult) -> str:
    headers = ("engine", "status", "cases", "agreeing", "diverging", "unexpected", "failed", "known")
    rows = [[str(row[h]) for h in headers] for row in summary_rows(result)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def failure_lines(result: RunResult, limit: int = 40, *, parity_only: bool = False) -> list[str]:
    """One line per problem; cells that share one cause are one line with a count.

    ``parity_only`` leaves out what the release gate reports on lines of its own: problems of
    the known-deviations file, stale entries, and the scripts the backgrounds loaded."""
    lines = [f"module: {p}" for p in result.module_problems]
    if not parity_only:
        lines += [f"background: {p}" for p in result.background_problems]
        lines += [f"known-deviations: {p}" for p in result.deviation_problems]
    lines += list(result.extra_problems)
    for name, run in result.runs.items():
        if run.status != "ok":
            without = sum(r.cells.get(name) == MISSING for r in result.results)
            lines.append(f"engine {name}: {run.status}: {run.detail} ({without} cases without a verdict)")
    if not result.results:
        lines.append("corpus: no cases ran: a run of zero cases proves nothing")
    causes: dict[tuple[str, str, str], list] = defaultdict(list)
    for r in result.results:
        for name, cell in r.cells.items():
            if cell == MISSING and result.runs[name].status != "ok":
                continue  # counted on the engine's own line
            if cell in (PASS, KNOWN) or parity_only and cell == STALE:
                continue
            cause = "; ".join(r.notes.get(name, [])) if cell in (MISSING, ERROR, TIMEOUT, CRASH) else ""
            causes[(name, cell, cause)].append(r)
    case_lines = []
    for (name, cell, cause), hits in causes.items():
        if cause and len(hits) >= GROUP_AT:
            first = hits[0].case
            lines.append(f"{name} {CELL_MARK[cell]}: {cause}: {len(hits)} cases (first {first.id}, {first.file}:{first.line})")
            continue
        for r in hits:
            why = "; ".join(r.notes.get(name, []))
            case_lines.append(f"{r.case.id} [{name}] {CELL_MARK[cell]}: {why}  ({r.case.file}:{r.case.line})")
    lines += case_lines[:limit]
    if len(case_lines) > limit:
        lines.append(f"... and {len(case_lines) - limit} more failing cells (see --json or --html)")
    return lines


def closing_line(result: RunResult) -> str:
    """The last line of a green run: what agreed, and what only agreed because it is known."""
    known = sum(cell == KNOWN for r in result.results for cell in r.cells.values())
    cases = len(result.results)
    text = f"all {cases} cases agree across {', '.join(result.engines)} and meet their expectations"
    if known:
        cases_known = sum(any(cell == KNOWN for cell in r.cells.values()) for r in result.results)
        text = (f"{cases - cases_known} of {cases} cases agree across {', '.join(result.engines)} and meet their "
                f"expectations; {cases_known} cases ({known} cells) are known deviations")
    return text


def json_result(result: RunResult, project: Project, corpus_files: list[str], corpus_problems: list[str],
                corpus_tags: dict[str, str] | None = None) -> dict:
    """The result as data, the single source of every other report (`result_doc` reads it).

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
                    "background_problems": result.background_problems},
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
    parts = []
    for key in sorted(document):
        if key == "cases":
            lines = [json.dumps(case, sort_keys=True, ensure_ascii=True, separators=(", ", ": ")) for case in document[key]]
            text = "[\n  " + ",\n  ".join(lines) + "\n ]" if lines else "[]"
        else:
            text = json.dumps(document[key], indent=1, sort_keys=True, ensure_ascii=True).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` so that ``path`` holds either the old file or the whole new one, never a
    truncated mix (a full disk or an interrupt leaves the old file, or none)."""
    write_atomic_bytes(path, text.encode("utf-8"))


def write_atomic_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def timings(result: RunResult) -> dict:
    return {"wall_s": result.wall_s, "engines": {name: run.timings for name, run in result.runs.items()}}


def matrix_markdown(result: RunResult) -> str:
    """One row per case, one column per engine (JSONTestSuite's results table)."""
    header = "| case | " + " | ".join(result.engines) + " |"
    rule = "|---|" + "---|" * len(result.engines)
    rows = ["| " + r.case.id + " | " + " | ".join(CELL_MARK[r.cells[name]] for name in result.engines) + " |"
            for r in result.results]
    return "\n".join([header, rule, *rows]) + "\n"
