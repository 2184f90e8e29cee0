"""The generated corpus is what its generators write, and agrees with the reference.

`fixtures/generators/generate_all.py` run in a copy of `fixtures/` must rewrite every generated
file byte for byte (a hand edit of a generated file, or a generator that stopped being
deterministic, fails here), and `check_against_reference.py`, the maintainers' check of the
corpus's expectations against the Python reference, must run and find no disagreement.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import ROOT
from support.copies import copy_folders

FIXTURES = ROOT / "fixtures"


def jsonl_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


def test_the_generators_rewrite_every_committed_corpus_file_byte_for_byte(tmp_path):
    copy = copy_folders(tmp_path, "fixtures") / "fixtures"
    for path in copy.rglob("*.jsonl"):
        path.unlink()  # each file must come from a generator, not survive from the copy
    written = subprocess.run([sys.executable, str(copy / "generators" / "generate_all.py")],
                             capture_output=True, text=True, cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert jsonl_files(copy) == jsonl_files(FIXTURES)


def test_the_maintainers_check_against_the_reference_runs_and_finds_no_disagreement():
    checked = subprocess.run([sys.executable, str(FIXTURES / "generators" / "check_against_reference.py")],
                             capture_output=True, text=True, cwd=ROOT)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert "0 case(s) disagree with the reference; 0 schema error(s)" in checked.stdout
