"""What a parity run says to people: the summary table, grouped failure lines, the closing
line of a green run, and a Markdown matrix."""

from __future__ import annotations

from collections import defaultdict

from ..project.words import count
from ..results.build import summary_rows
from ..run.outcomes import NO_VERDICT, PASSES, Outcome
from ..run.parity import RunResult

# How a cell reads on the terminal: the two that pass in lower case, every failure shouting.
CELL_MARK: dict[str, str] = {outcome: {Outcome.PASS: "ok", Outcome.KNOWN: "known"}.get(outcome, outcome.name) for outcome in Outcome}
GROUP_AT = 4  # this many cells sharing one cause print as one line


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
    if any(cell not in PASSES for r in result.results for cell in r.cells.values()):
        # a per-browser module's trees may be why verdicts differ: where their sources part first
        lines += [f"module: {module}: {note}" for module, note in sorted(result.per_browser.items())]
    if not parity_only:
        lines += [f"background: {p}" for p in result.background_problems]
        lines += [f"known-deviations: {p}" for p in result.deviation_problems]
    lines += list(result.extra_problems)
    for name, run in result.runs.items():
        if run.status != "ok":
            without = sum(r.cells.get(name) == Outcome.MISSING for r in result.results)
            lines.append(f"engine {name}: {run.status}: {run.detail} ({count(without, 'case')} without a verdict)")
    if not result.results:
        lines.append("corpus: no cases ran: a run of zero cases proves nothing")
    causes: dict[tuple[str, str, str], list] = defaultdict(list)
    position = {r.case.id: index for index, r in enumerate(result.results)}
    for r in result.results:
        for name, cell in r.cells.items():
            if cell == Outcome.MISSING and result.runs[name].status != "ok":
                continue  # counted on the engine's own line
            if cell in PASSES or parity_only and cell == Outcome.STALE:
                continue
            cause = "; ".join(r.notes.get(name, [])) if cell in NO_VERDICT else ""
            causes[(name, cell, cause)].append(r)
    order = {name: index for index, name in enumerate(result.engines)}
    cells = []  # (case index, engine index, line): case by case, each case's engines in run order
    for (name, cell, cause), hits in causes.items():
        if cause and len(hits) >= GROUP_AT:
            first = hits[0].case
            lines.append(f"{name} {CELL_MARK[cell]}: {cause}: {count(len(hits), 'case')} "
                         f"(first {first.id}, {first.file}:{first.line})")
            continue
        for r in hits:
            why = "; ".join(r.notes.get(name, []))
            cells.append((position[r.case.id], order.get(name, len(order)),
                          f"{r.case.id} [{name}] {CELL_MARK[cell]}: {why}  ({r.case.file}:{r.case.line})"))
    case_lines = [line for _, _, line in sorted(cells)]
    lines += case_lines[:limit]
    if len(case_lines) > limit:
        lines.append(f"... and {count(len(case_lines) - limit, 'more failing cell')} (see --json or --html)")
    return lines


def known_deviations(cases: int, cells: int) -> str:
    """"1 case (2 cells) is a known deviation", "3 cases (3 cells) are known deviations"."""
    verb = "is a known deviation" if cases == 1 else "are known deviations"
    return f"{count(cases, 'case')} ({count(cells, 'cell')}) {verb}"


def closing_line(result: RunResult) -> str:
    """The last line of a green run: what agreed, and what only agreed because it is known."""
    known = sum(cell == Outcome.KNOWN for r in result.results for cell in r.cells.values())
    cases = len(result.results)
    text = (f"all {cases} cases agree across {', '.join(result.engines)} and meet their expectations" if cases != 1 else
            f"the 1 case agrees across {', '.join(result.engines)} and meets its expectations")
    if known:
        cases_known = sum(any(cell == Outcome.KNOWN for cell in r.cells.values()) for r in result.results)
        text = (f"{cases - cases_known} of {count(cases, 'case')} agree across {', '.join(result.engines)} and meet "
                f"their expectations; {known_deviations(cases_known, known)}")
    return text


def matrix_markdown(result: RunResult) -> str:
    """One row per case, one column per engine (JSONTestSuite's results table)."""
    header = "| case | " + " | ".join(result.engines) + " |"
    rule = "|---|" + "---|" * len(result.engines)
    rows = ["| " + r.case.id + " | " + " | ".join(CELL_MARK[r.cells[name]] for name in result.engines) + " |"
            for r in result.results]
    return "\n".join([header, rule, *rows]) + "\n"
