"""The coverage document is deterministic: the bundled corpus run twice under coverage in real
Chromium gives the same bytes.

With V8's optimizing tiers on, two runs differed in dozens of counts (a constructor counted 208
and 149 times) and so in which cases a block was named for: optimized code does not count the
calls it inlines, and it tiers up on background threads. The whole bundled corpus is needed to
show it: a few cases never make a function hot enough to be optimized.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

pytestmark = pytest.mark.browser


def coverage_of_one_run(path: Path) -> bytes:
    subprocess.run([sys.executable, "-m", "extparity.cli", "--config", str(ROOT / "pyproject.toml"), "run",
                    "--engines", "chromium", "--coverage", str(path)], check=True, capture_output=True)
    return path.read_bytes()


def test_two_runs_of_the_bundled_corpus_give_the_same_coverage_bytes(tmp_path):
    first, second = coverage_of_one_run(tmp_path / "first.json"), coverage_of_one_run(tmp_path / "second.json")
    assert b'"blocks_run"' in first
    assert first == second
