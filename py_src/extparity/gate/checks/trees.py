"""trees: every file but manifest.json and the declared glue is byte-identical in every tree,
so a second, laxer copy of a module cannot ship in one browser's tree. A verified module (one the
entries reach, in any tree) is never glue: declared so, it fails, and its bytes are compared
anyway, so a drift in it is named rather than declared away."""

from __future__ import annotations

from ...subject import tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    verified = set().union(*map(set, gate.policy["verified"].values()))
    glue = tuple(path for path in project.gate.glue if path not in verified)
    problems = tree_checks.compare_trees(project.trees, glue)
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    problems += [f"glue {path}: a verified module (the entries reach it): it must be one file in every tree; "
                 f"remove it from [tool.extparity.gate].glue" for path in project.gate.glue if path in verified]
    problems += [f"glue {path}: in no tree ([tool.extparity.gate].glue)" for path in glue if path not in files]
    compared = len(files - {tree_checks.MANIFEST, *glue})
    return problems, (f"{compared} files byte-identical in {', '.join(project.trees)} "
                      f"(manifest.json compared key by key; glue: {', '.join(glue) or 'none'})")


CHECK = Spec("trees",
             "a file other than `manifest.json` and the declared `glue` that is not byte-identical in "
             "every tree; a verified module declared `glue`",
             "trees, [tool.extparity.gate].glue", verdict)
