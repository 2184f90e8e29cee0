"""trees: every file but manifest.json and the declared glue is byte-identical in every tree,
so a second, laxer copy of a module cannot ship in one browser's tree."""

from __future__ import annotations

from ...subject import tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    glue = project.gate.glue
    problems = tree_checks.compare_trees(project.trees, glue)
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    problems += [f"glue {path}: in no tree ([tool.extparity.gate].glue)" for path in glue if path not in files]
    compared = len(files - {tree_checks.MANIFEST, *glue})
    return problems, (f"{compared} files byte-identical in {', '.join(project.trees)} "
                      f"(manifest.json compared key by key; glue: {', '.join(glue) or 'none'})")


CHECK = Spec("trees",
             "a file other than `manifest.json` and the declared `glue` that is not byte-identical in "
             "every tree",
             "trees, [tool.extparity.gate].glue", verdict)
