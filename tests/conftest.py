"""Shared pytest set-up.

CI (the CI environment variable set) explores the same Hypothesis examples every run, so a
landing is never decided by chance; local runs keep exploring new inputs.

When EXTPARITY_RECORD_INPUTS names a file, every input the Python reference is called with
during the session is written there as JSON, so `test_twins_replay.py` can run the very same
inputs through the JS twins.

Tiers (see tests/support/__init__.py): the parity items of pyproject.toml (the extparity plugin's)
are marked ``browser`` when their engine's kind runs in a browser; items and tests that read the
session's one parity run are ``browser`` too while that run has a browser engine (the first of
them to run starts it). A ``-m`` that leaves out the browser items (`make test-fast`) makes the
run one of the headless engines alone, so what it keeps starts no browser. support.browser_guard
fails a test that starts a browser unmarked.
"""

from __future__ import annotations

import json
import os

import pytest
from _pytest.mark import MarkMatcher
from _pytest.mark.expression import Expression
from hypothesis import settings

import toolcalls
from extparity.project.config import find_pyproject, load_project
from extparity.project.kinds import IN_BROWSER, engine_class
from extparity.pytest_plugin import ParityItem, state_key

pytest_plugins = ["support.browser_guard"]

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

RECORD_PATH = os.environ.get("EXTPARITY_RECORD_INPUTS")
_recorded = []


def _recording(kind, original):
    def wrapper(*arguments):
        _recorded.append([kind, *arguments])
        return original(*arguments)

    return wrapper


def in_browser(project, engine: str) -> bool:
    return engine_class(project.engines[engine].kind).RUNS == IN_BROWSER


def selected(markexpr: str, *markers: str) -> bool:
    """Whether ``-m markexpr`` keeps an item that carries exactly ``markers``, judged by pytest's
    own evaluation of ``-m`` (not public API: as pytest 9 spells it)."""
    return Expression.compile(markexpr).evaluate(MarkMatcher.from_markers(getattr(pytest.mark, m).mark for m in markers))


@pytest.hookimpl(tryfirst=True)  # before the plugin reads --extparity-engines
def pytest_configure(config):
    markexpr = config.option.markexpr
    if (markexpr and not config.getoption("extparity_engines")
            and selected(markexpr, "extparity") and not selected(markexpr, "extparity", "browser")):
        given = config.getoption("extparity_config")
        project = load_project(config.invocation_params.dir / given if given else find_pyproject(config.rootpath))
        config.option.extparity_engines = ",".join(name for name in project.engines if not in_browser(project, name))
    if RECORD_PATH:
        # The public functions look these helpers up at call time, so wrapping them here sees
        # every call, whichever name a test module imported.
        toolcalls._parse_units_verdict = _recording("parse", toolcalls._parse_units_verdict)
        toolcalls._repair_units_verdict = _recording("repair", toolcalls._repair_units_verdict)


def pytest_sessionfinish(session, exitstatus):
    if not RECORD_PATH:
        return
    portable = []
    for record in _recorded:
        try:
            portable.append(json.loads(json.dumps(record, ensure_ascii=True)))
        except (TypeError, ValueError):
            continue  # e.g. bytes or object() inputs: they cannot cross to a JS engine as JSON
    with open(RECORD_PATH, "w", encoding="ascii") as handle:
        json.dump({"calls": len(_recorded), "inputs": portable}, handle, ensure_ascii=True)


def pytest_collection_modifyitems(config, items):
    """After the plugin has added its items (tryfirst there), before ``-m`` deselects: while the
    session's parity run has a browser engine, whichever item or test reads it first starts the
    browsers (test_parity's reads it through the plugin's fixture even when no item is collected)."""
    readers = [item for item in items
               if isinstance(item, ParityItem) or "extparity_result" in getattr(item, "fixturenames", ())]
    parity = config.stash[state_key]
    if readers and any(in_browser(parity.project, engine) for engine in parity.engines):
        for item in readers:
            item.add_marker(pytest.mark.browser)
