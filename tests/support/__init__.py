"""What the test modules share: throwaway copies of projects, the CLI called in-process, config
writers, the fake extension, the built wheel. Test modules import from here and never from one
another. Nothing here asserts what a test is about, with one old exception: every JSON result a
test produces goes through result_schema.check_result; the other checks guard a helper's own
precondition (that the text an edit replaces is still there).

The suite runs in tiers, chosen by markers (registered in pyproject.toml, --strict-markers):

- ``browser``: starts Chromium or Firefox, by any path (a browser engine in `run` or `gate`, a
  Playwright fixture, a subprocess); support/browser_guard.py fails a test that starts one unmarked.
- ``gate``: runs an `extparity gate` (one refused as a usage error does not count).
- ``packaging``: builds or installs the wheel, or a venv.
- ``slow``: anything else that takes more than about 1.5 s (so that the fast tier stays within a minute).

`make test` runs every tier (CI's command; nothing is skipped); `make test-fast` runs the tests
that carry none of the four markers, the inner loop. The parity items of pyproject.toml (the
pytest plugin's) read one parity run per session: while that run has a browser engine they are
all ``browser``; a ``-m`` that leaves browser items out makes it a run of the headless engines
alone, whose items then stay (tests/conftest.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this checkout
SHAPED = ROOT / "tests" / "extensions" / "shaped"  # an extension shaped unlike the bundled one
SUBFOLDER = ROOT / "tests" / "extensions" / "subfolder"  # one whose Firefox background page is in a subfolder
WEB_EXT = ROOT / ".tools" / "node_modules" / ".bin" / "web-ext"  # installed by `make setup`
PARSER = "src/agent/tool-call-parser.js"  # the bundled parser, relative to a tree


def bundled_table() -> dict:
    """This checkout's [tool.extparity] table, freshly read (a copy's to change)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["extparity"]
