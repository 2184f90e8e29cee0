"""The HTML report: one self-contained page a person opens in a browser.

Made from the JSON result alone (so a saved or merged result gives the same page), with every
byte it needs inside it: the data as JSON in ``<script type="application/json">`` elements (the
list's rows before the script, the cases' panes after it, so that the browser draws the first
screen before it has read the panes, most of a large report's bytes), the style and the script
inline, and a Content-Security-Policy that forbids any request, so the page works offline and
cannot leak. The script renders only the rows in view (a virtual
list), so 50,000 cases stay usable.

What is worked out here rather than in the page: which engine is the odd one out, the verdict
groups of a case, and the aligned diffs (``verdict_diff``, the one diff the CLI and JUnit show
too). The page filters, groups rows by identical cell vectors (JSONTestSuite's pruned matrix),
and highlights ``span: [start, end]`` pairs it finds in verdict objects on the case's input.

Two optional inputs add to the page, never to the result: the timings `run --timings` writes
(each engine's start-up, case time and wall time; kept out of the JSON result because they are
not deterministic) and a baseline result, whose changes (``results.compare``, what
`extparity compare` lists) become a "changed since baseline" view and a section of each
changed case's pane.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..results import compare, verdict_diff
from . import coverage_view, gate_view
from ..results.read import engine_names, judged_against, odd_one_out, verdicts
from ..run.outcomes import PASSES, Outcome

PAGE_DIR = Path(__file__).resolve().parent / "html"
CELLS = tuple(outcome.value for outcome in Outcome)  # a row's cells are indices into this, in the page data
MARKERS = re.compile(r"/\*(TITLE|STYLE|SCRIPT|DATA|DETAILS|GATE|COVERAGE-BUTTON|COVERAGE)\*/")
DIFF_OPS = {"same": "=", "changed": "~", "removed": "-", "added": "+"}


def page_data(document: dict, timings: dict | None = None, baseline: dict | None = None) -> dict:
    """What the page's script reads: compact rows for the list, details for the case pane, and
    the durations and the changes since ``baseline`` when they are given."""
    engines = engine_names(document)
    tags = sorted({tag for case in document["cases"] for tag in case.get("tags", ())})
    files = sorted({case.get("file", "") for case in document["cases"]})
    tag_index = {tag: i for i, tag in enumerate(tags)}
    file_index = {name: i for i, name in enumerate(files)}
    engine_index = {name: i for i, name in enumerate(engines)}
    rows, details = [], []
    for case in document["cases"]:
        odd = odd_one_out(case)
        rows.append([
            case["id"],
            file_index[case.get("file", "")],
            case.get("line", 0),
            [tag_index[tag] for tag in case.get("tags", ())],
            "".join(str(CELLS.index(case["cells"][name])) if name in case["cells"] else "-" for name in engines),
            engine_index[odd] if odd is not None else -1,
        ])
        details.append(_details(document, case, engine_index))
    return {
        "engines": engines,
        "reference": document.get("reference"),
        "ok": document.get("ok"),
        "extparity": document.get("extparity"),
        "cells": CELLS,
        "passes": sorted(PASSES),  # the page tells failing cells by this, not by a list of its own
        "tags": tags,
        "files": files,
        "rows": rows,
        "details": details,
        "engineInfo": {name: document["engines"].get(name, {}) for name in engines},
        "summary": document.get("summary", []),
        "modules": document.get("modules", {}),
        "entries": document.get("entries", {}),
        "corpus": {key: value for key, value in document.get("corpus", {}).items() if key != "tags"},
        "problems": (document.get("modules", {}).get("problems", []) + document.get("known_deviation_problems", [])
                     + document.get("corpus", {}).get("problems", []) + document.get("problems", [])),
        "timings": durations(timings, engines) if timings is not None else None,
        "baseline": since(baseline, document, engine_index) if baseline is not None else None,
    }


def durations(timings: dict, engines: list[str]) -> dict:
    """Per engine, in run order: start-up, time in cases (its chunks), wall time, sessions and
    restarts, in milliseconds; and the run's wall time."""
    def ms(seconds: float) -> int:
        return round(seconds * 1000)

    rows = {}
    for name in engines:
        engine = timings.get("engines", {}).get(name, {})
        rows[name] = {"startup_ms": ms(engine.get("startup_s", 0.0)), "cases_ms": ms(sum(engine.get("chunks_s", []))),
                      "wall_ms": ms(engine.get("wall_s", 0.0)), "sessions": engine.get("sessions", 0),
                      "restarts": engine.get("restarts", 0)}
    return {"wall_ms": ms(timings.get("wall_s", 0.0)), "engines": rows}


def since(baseline: dict, document: dict, engine_index: dict[str, int]) -> dict:
    """Row index -> [engine index, kind, detail] of every verdict that changed since ``baseline``,
    the rows of cases the baseline did not have, and the ids it had that this run has not."""
    rows = {case["id"]: index for index, case in enumerate(document["cases"])}
    found = compare.compare(baseline, document)
    changes: dict[str, list] = {}
    for change in found.changes:
        changes.setdefault(str(rows[change.case]), []).append([engine_index.get(change.engine, -1), change.kind,
                                                               change.detail])
    return {"changes": changes, "new": sorted(rows[case] for case in found.only_new_cases),
            "gone": sorted(found.only_old_cases)}


def _details(document: dict, case: dict, engine_index: dict[str, int]) -> dict:
    """A case's pane: its verdicts once per distinct text, and each differing one's diff."""
    given = verdicts(case)
    groups: dict[str, list[int]] = {}
    for name, verdict in given.items():
        groups.setdefault(verdict, []).append(engine_index[name])
    texts = list(groups)
    detail = {
        "fn": case.get("fn"),
        "args": case.get("args", {}),
        "expect": case.get("expect"),
        "why": case.get("why", ""),
        "notes": {str(engine_index[name]): notes for name, notes in case.get("notes", {}).items() if name in engine_index},
        "verdicts": [[members, verdict] for verdict, members in groups.items()],
        "diffs": {},
    }
    against = judged_against(document, case)
    if against is not None:
        label, reference_verdict = against
        detail["against"] = [label, texts.index(reference_verdict)]
        for index, verdict in enumerate(texts):
            if verdict != reference_verdict:
                rows = verdict_diff.aligned(reference_verdict, verdict)
                detail["diffs"][str(index)] = [[DIFF_OPS[row.op], row.left] if row.op == "same"
                                               else [DIFF_OPS[row.op], row.left, row.right] for row in rows]
    return detail


def _embedded(data: dict) -> str:
    """JSON that cannot end its <script> element early: every '<', '>' and '&' escaped."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(document: dict, title: str = "extparity report", timings: dict | None = None,
           baseline: dict | None = None, coverage: dict | None = None) -> str:
    """The page; with ``coverage`` (a document of ``run --coverage``) also its coverage view."""
    page = (PAGE_DIR / "report.html").read_text(encoding="utf-8")
    data = page_data(document, timings, baseline)
    details = data.pop("details")  # after the script: the list is drawn before these are read
    parts = {
        "/*TITLE*/": _escape_html(title),
        "/*STYLE*/": (PAGE_DIR / "report.css").read_text(encoding="utf-8") + (coverage_view.STYLE if coverage else "")
                     + (gate_view.STYLE if "gate" in document else ""),
        "/*SCRIPT*/": (PAGE_DIR / "report.js").read_text(encoding="utf-8") + (coverage_view.SCRIPT if coverage else ""),
        "/*DATA*/": _embedded(data),
        "/*DETAILS*/": _embedded(details),
        "/*GATE*/": gate_view.section(document),
        "/*COVERAGE-BUTTON*/": coverage_view.button(coverage),
        "/*COVERAGE*/": coverage_view.section(coverage),
    }
    # One pass over the template: text put in (a title, the data) is never searched again.
    return MARKERS.sub(lambda match: parts[match.group(0)], page)


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
