"""What `pytest --extparity` must report, read from `extparity run`'s JSON result (shared test
support for the tests that hold the plugin to the run)."""

from __future__ import annotations

import re

OUTCOME = re.compile(r"^(PASSED|FAILED|XFAIL|XPASS|ERROR|SKIPPED) (\S+)", re.M)  # `pytest -rA` summary lines


def expected_outcomes(document: dict) -> dict[str, str]:
    """What each item must report, read from `extparity run`'s result: a cell's item passes
    when the cell is `pass`, is XFAIL when it is `known`, fails otherwise; a check's item fails
    when the run reported a problem for it."""
    modules = document["modules"]
    expected = {
        "pyproject.toml::corpus": document["corpus"]["problems"] or not document["cases"],
        "pyproject.toml::modules": modules["problems"] or modules["background_problems"],
        "pyproject.toml::known-deviations": document["known_deviation_problems"],
    }
    outcomes = {node: "FAILED" if failing else "PASSED" for node, failing in expected.items()}
    for name, engine in document["engines"].items():
        outcomes[f"pyproject.toml::engine[{name}]"] = "PASSED" if engine["status"] == "ok" else "FAILED"
    for case in document["cases"]:
        for name, cell in case["cells"].items():
            outcomes[f"pyproject.toml::{name}::{case['id']}"] = {"pass": "PASSED", "known": "XFAIL"}.get(cell, "FAILED")
    return outcomes
