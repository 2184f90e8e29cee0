"""The JS twins in QuickJS, over exactly the inputs the Python reference's unit tests use.

The reference tests run once more in a child pytest with recording on; every input they gave
the reference (including Hypothesis's) is then run through each tree's modules in QuickJS and
must produce the reference's canonical bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extparity.engines.base import WireCase
from extparity.engines.driver import run_engine
from extparity.project.config import load_project
from extparity.project.kinds import build_engine

pytestmark = pytest.mark.slow

PROJECT = load_project()
TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def recorded_cases(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "inputs.json"
    reference_tests = sorted(str(p) for p in TESTS.glob("test_reference_*.py"))
    assert reference_tests, "no reference unit tests to replay"
    env = dict(os.environ, EXTPARITY_RECORD_INPUTS=str(path))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *reference_tests],
                          env=env, capture_output=True, text=True, timeout=900)
    # The reference tests' own failures are reported by those tests; here only the inputs count.
    assert path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    recorded = json.loads(path.read_text())
    seen, cases = set(), []
    for kind, *arguments in recorded["inputs"]:
        key = json.dumps([kind, *arguments], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        cases.append(WireCase(f"unit-{len(cases)}", kind, tuple(arguments)))
    return cases


def run(name, cases):
    return run_engine(build_engine(PROJECT.engines[name], PROJECT), cases, budget_s=900)


@pytest.mark.parametrize("engine", ["quickjs-chrome", "quickjs-firefox"])
def test_twins_match_reference_on_unit_test_inputs(engine, recorded_cases):
    assert len(recorded_cases) > 500, "the reference tests should exercise many distinct inputs"
    reference = run("python", recorded_cases)
    twin = run(engine, recorded_cases)
    assert twin.status == "ok", twin.detail
    differing = [c for c in recorded_cases if twin.verdicts.get(c.id) != reference.verdicts[c.id]]
    shown = [(c.fn, repr(c.args[0])[:120], twin.verdicts.get(c.id), reference.verdicts[c.id]) for c in differing[:5]]
    assert differing == [], f"{len(differing)} of {len(recorded_cases)} inputs differ, e.g. {shown}"
