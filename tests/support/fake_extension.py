"""Small extensions written per test, and a project config that points engines at them.

Why fake trees: engine plumbing (linking, bridges, hashing, time limits, start-up failures) is
checked with modules trivial enough that every expected verdict can be written down by hand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from extparity.project.config import Project, load_project

from support.config_files import write_pyproject

JSON_CORE = """\
export function canon(value) {
  return JSON.stringify(value);
}
"""
PARSER = """\
import { canon } from "./json-core.js";

export function parseToolCallsCanonical(text, allowed) {
  if (text === "THROW") throw new RangeError("asked to throw");
  if (text === "LOOP") { for (;;) {} }
  return canon({ calls: [], echo: text });
}
"""
REPAIR = """\
import { canon } from "./json-core.js";

export const repairArgumentsCanonical = (raw) => canon(raw.length);
"""
BACKGROUND = """\
import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";
globalThis.fakeReady = typeof parseToolCallsCanonical;
"""
MODULES = {"src/agent/json-core.js": JSON_CORE, "src/agent/tool-call-parser.js": PARSER,
           "src/agent/argument-repair.js": REPAIR}
GECKO_ID = "fake-inspector@extparity.test"
ENTRIES = {
    "parse": {"module": "src/agent/tool-call-parser.js", "export": "parseToolCallsCanonical", "args": ["input", "allowed"]},
    "repair": {"module": "src/agent/argument-repair.js", "export": "repairArgumentsCanonical", "args": ["input"]},
}


def manifest(flavor: str, **changes) -> dict:
    background = ({"service_worker": "background.js", "type": "module"} if flavor == "chrome"
                  else {"scripts": ["background.js"], "type": "module"})
    document = {"manifest_version": 3, "name": "Fake inspector", "version": "0.0.1", "background": background}
    if flavor == "firefox":
        document["browser_specific_settings"] = {"gecko": {"id": GECKO_ID}}
    document.update(changes)
    return document


def make_tree(root: Path, flavor: str, files: dict[str, str] | None = None, manifest_doc: dict | None = None) -> Path:
    """An extension tree: the fake modules (overridden or extended by `files`) and a manifest."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest_doc or manifest(flavor), indent=2))
    for path, text in {"background.js": BACKGROUND, **MODULES, **(files or {})}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_project(root: Path, trees: dict[str, Path], engines: dict[str, dict], *, entries: dict | None = None,
                  corpus: list[str] | None = None, reference: str | None = None, **extra) -> Project:
    """A pyproject.toml in `root` binding `engines` to `trees`; returns the loaded project."""
    table = {"corpus": corpus or ["corpus"], "trees": {name: str(path) for name, path in trees.items()},
             "entries": entries or ENTRIES, "engines": engines, **extra}
    if reference:
        table["reference"] = reference
    return load_project(write_pyproject(root / "pyproject.toml", table))
