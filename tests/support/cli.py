"""The command line called in-process, as a user types it: faster than a subprocess, and what it
prints is captured whole."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from extparity import cli


def call_cli(*argv: str) -> tuple[int, str, str]:
    """`extparity ARGV...`: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()
