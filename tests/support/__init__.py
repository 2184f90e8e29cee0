"""What the test modules share: throwaway copies of projects, the CLI called in-process, config
writers, the fake extension, the built wheel. Test modules import from here and never from one
another; nothing here asserts what a test is about (the few checks that remain guard a helper's
own precondition, e.g. that the text an edit replaces is still there).
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
