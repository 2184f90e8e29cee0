"""The one reader of an extension tree's manifest.json.

Why in ``project/`` and not beside the manifest checks in ``subject/``: the config reads a
manifest while it loads (a tree whose manifest declares content scripts gets a content-script
twin of its message engines), and ``project/`` is the ground floor, the one package the config
and every stage above it may import. What a manifest must say is checked in
``subject/tree_checks.py``; reading and parsing it is here, with one line for what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST = "manifest.json"


def load_manifest(name: str, tree: Path) -> tuple[dict | None, str | None]:
    """A tree's manifest, or None and the one-line reason it cannot be read (``name`` names the
    tree in it)."""
    try:
        manifest = json.loads((Path(tree) / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"{name}/{MANIFEST}: missing"
    except OSError as exc:
        return None, f"{name}/{MANIFEST}: cannot read it ({exc.strerror or exc})"
    except ValueError as exc:  # also a UnicodeDecodeError
        return None, f"{name}/{MANIFEST}: not valid JSON ({exc})"
    if not isinstance(manifest, dict):
        return None, f"{name}/{MANIFEST}: top level is not an object"
    return manifest, None
