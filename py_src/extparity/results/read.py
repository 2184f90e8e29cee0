"""Reading a JSON result (``build.json_result``): the one input of every report and comparison.

The HTML and JUnit reports, repro files, `extparity compare` and `run --baseline` all read the
document rather than the in-memory run, so a saved result, or several shards merged into one,
gives the same reports as the run that wrote it. Its shape is ``result.schema.json``.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..run.outcomes import PASSES

SCHEMA = 2
SCHEMA_FILE = Path(__file__).resolve().parent / "result.schema.json"


class ResultError(Exception):
    """A result file that cannot be read as an extparity result; the message names the file."""


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turns what reading ``path`` can raise into a ResultError's one line."""
    try:
        yield
    except OSError as error:
        raise ResultError(f"{path}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ResultError(f"{path}: not UTF-8 (byte {error.start + 1})") from None
    except ValueError as error:
        raise ResultError(f"{path}: not JSON: {error}") from None


def load(path: Path | str) -> dict:
    """A result document, checked for the parts readers rely on (the full shape is the schema's
    job, checked in the tests): one line naming the file and what is wrong otherwise."""
    path = Path(path)
    with _reading(path):
        document = json.loads(path.read_bytes().decode("utf-8"))
    _check(path, document)
    for index, case in enumerate(document["cases"]):
        if not (isinstance(case, dict) and isinstance(case.get("id"), str) and isinstance(case.get("cells"), dict)):
            raise ResultError(f"{path}: cases[{index}] needs an 'id' and 'cells'")
    return document


def _check(path: Path, document: object) -> None:
    if not isinstance(document, dict) or "schema" not in document:
        raise ResultError(f"{path}: not an extparity result (no 'schema' key)")
    if document["schema"] != SCHEMA:
        raise ResultError(f"{path}: result schema {document['schema']!r}, this extparity reads schema {SCHEMA}")
    for key, kind in (("cases", list), ("engines", dict), ("summary", list)):
        if not isinstance(document.get(key), kind):
            raise ResultError(f"{path}: '{key}' must be a {kind.__name__}")


# A result as ``build.chunks`` writes it opens with its cases, one a line: such a file is read a
# case at a time. Any other layout of the same JSON is read whole, with the same outcome.
CASES_OPEN = ("{\n", ' "cases": [\n')
CASES_CLOSE = " ]"


def read_head(path: Path | str) -> dict:
    """A result without its cases (``cases`` is []), checked as ``load`` checks it; in the
    written layout the case lines are skipped, never parsed."""
    path = Path(path)
    with _reading(path), path.open(encoding="utf-8") as handle:
        if (handle.readline(), handle.readline()) == CASES_OPEN:
            for line in handle:
                if line.startswith(CASES_CLOSE):
                    document = json.loads("{\n" + handle.read())
                    break
            else:
                raise ValueError("the case lines are not closed")
            if isinstance(document, dict):
                document["cases"] = []
            _check(path, document)
            return document
    return {**load(path), "cases": []}


def open_cases(path: Path | str) -> Iterator[dict]:
    """Each case of a result file in order, parsed a line at a time in the written layout."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        if (handle.readline(), handle.readline()) == CASES_OPEN:
            for number, line in enumerate(handle, start=3):
                if line.startswith(CASES_CLOSE):
                    return
                try:
                    case = json.loads(line.rstrip("\n").rstrip(","))
                except ValueError as error:
                    raise ResultError(f"{path}:{number}: not a JSON case: {error}") from None
                if not (isinstance(case, dict) and isinstance(case.get("id"), str) and isinstance(case.get("cells"), dict)):
                    raise ResultError(f"{path}:{number}: a case needs an 'id' and 'cells'")
                yield case
            return
    yield from load(path)["cases"]


def engine_names(document: dict) -> list[str]:
    """Engines in run order (config order): the summary keeps it, ``engines`` is sorted by name."""
    return [row["engine"] for row in document["summary"]]


def verdicts(case: dict) -> dict[str, str]:
    """Each engine's verdict text, for the engines that gave one."""
    without = set(case.get("without_verdict", ()))
    divergent = case.get("divergent", {})
    shown = {}
    for name in case["cells"]:
        if name in without:
            continue
        if name in divergent:
            shown[name] = divergent[name]
        elif "verdict" in case:
            shown[name] = case["verdict"]
    return shown


def outcomes(case: dict) -> dict[str, str]:
    """What each engine produced, as one comparable value: its verdict, or its failure."""
    given = verdicts(case)
    return {name: given[name] if name in given else f"<{cell}>" for name, cell in case["cells"].items()}


def odd_one_out(case: dict) -> str | None:
    """The single engine whose outcome differs when every other engine agrees (wpt.fyi's
    "fails in exactly one browser"); None otherwise, and with fewer than three engines."""
    by_value: dict[str, list[str]] = {}
    for name, value in outcomes(case).items():
        by_value.setdefault(value, []).append(name)
    sizes = sorted(by_value.values(), key=len)
    if len(sizes) == 2 and len(sizes[0]) == 1 and len(sizes[1]) >= 2:
        return sizes[0][0]
    return None


def judged_against(document: dict, case: dict) -> tuple[str, str] | None:
    """(label, verdict) that differing verdicts are shown against: the baseline (the
    reference's verdict, or the majority's), or without one the largest group's."""
    given = verdicts(case)
    if "verdict" in case:
        reference = document.get("reference")
        label = reference if reference in given and given[reference] == case["verdict"] else "majority"
        return label, case["verdict"]
    for group in case.get("groups") or []:
        if group and group[0] in given:
            return group[0], given[group[0]]
    return None


def failing_cells(case: dict) -> dict[str, str]:
    """Engine -> cell for every cell that fails the gate (anything but pass and known)."""
    return {name: cell for name, cell in case["cells"].items() if cell not in PASSES}
