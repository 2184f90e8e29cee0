"""`--json -` writes the result to stdout (for a pipe), never to a file named `-`; everything the
command would otherwise print on stdout goes to stderr, so stdout is the JSON alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

EXTPARITY = [sys.executable, "-m", "extparity.cli"]


def extparity(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*EXTPARITY, "--config", str(ROOT / "pyproject.toml"), *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_run_and_merge_write_json_to_stdout_with_the_bytes_of_a_file(tmp_path):
    to_file = extparity("run", "--engines", "python", "--shard", "1/3", "--json", str(tmp_path / "shard.json"), cwd=tmp_path)
    to_stdout = extparity("run", "--engines", "python", "--shard", "1/3", "--json", "-", cwd=tmp_path)
    assert to_file.returncode == to_stdout.returncode == 0, to_stdout.stderr
    assert not (tmp_path / "-").exists()
    assert to_stdout.stdout == (tmp_path / "shard.json").read_text(encoding="utf-8")
    assert "cases agree across python" in to_stdout.stderr  # the summary moved to stderr
    merged = extparity("merge", str(tmp_path / "shard.json"), "--json", "-", cwd=tmp_path)
    assert merged.returncode == 0 and not (tmp_path / "-").exists()
    assert json.loads(merged.stdout)["cases"] == json.loads((tmp_path / "shard.json").read_text())["cases"]
    assert merged.stderr.startswith("merged 1 results")


def test_fuzz_writes_its_summary_to_stdout(tmp_path):
    done = extparity("fuzz", "--seed", "7", "--cases", "20", "--engines", "python,quickjs-chrome",
                     "--out", str(tmp_path / "fuzz"), "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "-").exists()
    assert json.loads(done.stdout)["seed"] == 7
