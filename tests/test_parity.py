"""The bundled corpus through every configured engine, through extparity's own pytest plugin.

`extparity = true` in this repository's `[tool.pytest.ini_options]` makes `pytest` collect
`pyproject.toml::ENGINE::CASE` for every engine and case, and the run-level checks
(`pyproject.toml::modules`, `::corpus`, `::known-deviations`, `::engine[NAME]`), all judged by
one `extparity run` of the session (see docs/pytest-plugin.md). So `pytest -k firefox`,
`pytest -k narration` and `pytest pyproject.toml --extparity-engines python,chromium` select
what a user expects, and a browser that is missing fails its items, never skips them.

This module adds what only a test in this repository can check with the plugin's fixtures:
that the reference's worker process hands back the very bytes the reference returns here.
"""

from __future__ import annotations

import pytest

import toolcalls

REFERENCE = {"parse": toolcalls.parse_tool_calls_canonical, "repair": toolcalls.repair_arguments_canonical}


def test_the_reference_worker_returns_the_bytes_the_reference_returns_in_this_process(extparity_project,
                                                                                     extparity_result):
    if "python" not in extparity_result["engines"]:
        pytest.skip("the python engine is not among --extparity-engines")
    entries = extparity_project.entries
    differing = []
    for case in extparity_result["cases"]:
        given = case.get("divergent", {}).get("python", case.get("verdict"))
        here = REFERENCE[case["fn"]](*(case["args"][name] for name in entries[case["fn"]].args))
        if "python" in case.get("without_verdict", ()) or given != here:
            differing.append(case["id"])
    assert extparity_result["cases"] and differing == []
