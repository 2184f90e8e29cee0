"""artifacts: one deterministic zip per tree in dist/, never replaced by other bytes (but for a
failed gate's own leftover, ``gate.artifacts``), from a tree whose names every disk reads alike
(``gate.shipped_files``); the engines run on the artifacts' bytes (unpacked), each entry compared
with the tree and with what ran; dist/ holds nothing else. What is uploaded is then what the gate
judged."""

from __future__ import annotations

from ..context import Gate
from ..registry import ARTIFACTS, Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    shown = ", ".join(f"{gate.tested.relative(a.path)} (sha256 {a.sha256[:12]}, {a.files} files"
                      + (f"; rebuilt over {a.replaced[:12]}, which a gate that did not pass wrote" if a.replaced else "")
                      + ")" for a in gate.built)
    return gate.artifact_problems, f"{shown}; the engines ran on these bytes"


CHECK = Spec("artifacts",
             "names that collide by case or normalisation, symlinks, hidden files; an artifact in "
             "`dist/` with other bytes under the same version, or anything else in `dist/`", "[tool.extparity.gate].dist", verdict,
             needs=(ARTIFACTS,))
