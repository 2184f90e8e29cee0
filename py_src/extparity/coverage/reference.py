"""Branch coverage of the Python reference: coverage.py inside the reference engine's worker.

The worker (``engines.kinds.python``) measures while it imports and runs the reference and saves
one data file per session into a folder of the run's; this module names what to measure and reads
the combined data back as a few deterministic numbers per file (no timestamps, no paths outside
the project).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..project.config import Project


def job(project: Project, data_dir: Path) -> dict:
    """What the worker measures: the packages ``[tool.extparity.coverage].reference`` names, found
    where the reference engine imports them from (its ``path``), every file of them."""
    return {"data_file": str(data_dir / ".coverage"), "source_pkgs": list(project.coverage.reference)}


def summary(project: Project, data_dir: Path) -> dict:
    """Statements and branches of each measured file, the ones missed, and the branch rate."""
    import coverage

    data_files = sorted(str(p) for p in data_dir.glob(".coverage.*"))
    if not data_files:
        return {"files": {}, "branches": 0, "branches_run": 0, "problem": "the reference engine saved no coverage data"}
    # The file names as the worker measured them (absolute), shown relative to the project where they lie in it.
    measured = coverage.Coverage(data_file=str(data_dir / ".coverage"), branch=True, config_file=False)
    measured.combine(data_files, keep=True)
    measured.load()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "coverage.json"
        measured.json_report(outfile=str(out))
        report = json.loads(out.read_text(encoding="utf-8"))
    files = {}
    for name, data in sorted(report["files"].items()):
        totals = data["summary"]
        files[project.relative(name)] = {
            "statements": totals["num_statements"],
            "missing_lines": sorted(data["missing_lines"]),
            "branches": totals["num_branches"],
            "branches_run": totals["covered_branches"],
            "missing_branches": sorted(data["missing_branches"]),
        }
    branches = sum(f["branches"] for f in files.values())
    run = sum(f["branches_run"] for f in files.values())
    found = {"files": files, "branches": branches, "branches_run": run}
    if not files:
        found["problem"] = (f"coverage.py measured no file of {', '.join(project.coverage.reference)} "
                            f"([tool.extparity.coverage].reference)")
    return found
