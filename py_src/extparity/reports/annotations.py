"""GitHub Actions annotations of a result: `::error file=F,line=L,title=T::message` lines.

Why: a failing check in a pull request should point at the corpus line that failed, in the
diff view, without anyone opening a report. GitHub reads these workflow commands from a step's
stdout (`extparity report RESULT --annotations -`). One annotation per failing case (its
file and line, every failing engine in the message), one per run-level problem and per failed
gate check (no file). Order and text are the result's, so the same result gives the same lines.
"""

from __future__ import annotations

from ..results.read import engine_names, failing_cells


def _data(text: str) -> str:
    """A workflow command's message: '%', CR and LF must be escaped, nothing else."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also ':' and ','."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def error(message: str, title: str, file: str | None = None, line: int | None = None) -> str:
    where = [f"file={_property(file)}"] if file else []
    where += [f"line={line}"] if file and line else []
    return f"::error {','.join(where + [f'title={_property(title)}'])}::{_data(message)}"


def github(document: dict) -> str:
    """Every annotation of ``document`` (a run, merged or gate result), one per line."""
    lines = []
    for check in document.get("gate", {}).get("checks", []):
        if not check["ok"]:
            lines.append(error(check["line"], f"extparity gate: {check['name']}"))
    modules = document["modules"]
    for kind, problems in (("modules", modules["problems"]), ("background", modules.get("background_problems", [])),
                           ("known deviations", document["known_deviation_problems"]),
                           ("corpus", document["corpus"]["problems"]), ("run", document["problems"])):
        lines += [error(problem, f"extparity {kind}") for problem in problems]
    for name in engine_names(document):
        engine = document["engines"][name]
        if engine["status"] != "ok":
            lines.append(error(f"{name}: {engine['status']}: {engine['detail']}", f"extparity engine {name}"))
    for case in document["cases"]:
        failing = failing_cells(case)
        if failing:
            notes = case.get("notes", {})
            said = "; ".join(f"{name} {cell}" + (f": {notes[name][0]}" if notes.get(name) else "")
                             for name, cell in failing.items())
            lines.append(error(said, f"extparity: {case['id']}", case.get("file"), case.get("line")))
    return "".join(line + "\n" for line in lines)
