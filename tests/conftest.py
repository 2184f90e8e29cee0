"""Shared pytest set-up.

CI (the CI environment variable set) explores the same Hypothesis examples every run, so a
landing is never decided by chance; local runs keep exploring new inputs.

When EXTPARITY_RECORD_INPUTS names a file, every input the Python reference is called with
during the session is written there as JSON, so `test_twins_replay.py` can run the very same
inputs through the JS twins.
"""

from __future__ import annotations

import json
import os

from hypothesis import settings

import toolcalls

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


def pytest_configure(config):
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
