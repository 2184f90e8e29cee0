"""trees: every file but manifest.json and the declared glue is byte-identical in every tree,
so a second, laxer copy of a module cannot ship in one browser's tree."""

from __future__ import annotations

from ...project import globs
from ...subject import tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    glue = project.gate.glue
    problems = tree_checks.compare_trees(project.trees, glue)
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    matched = globs.expand(glue, files)
    problems += [f"glue {path}: {'matches no file in any' if globs.is_pattern(path) else 'in no'} tree "
                 f"([tool.extparity.gate].glue)" for path, found in matched.items() if not found]
    compared = len([rel for rel in files if rel != tree_checks.MANIFEST and not globs.covered(rel, glue)])
    shown = "; ".join(globs.described(path, found) for path, found in matched.items())
    return problems, (f"{compared} files byte-identical in {', '.join(project.trees)} "
                      f"(manifest.json compared key by key; glue: {shown or 'none'})")


CHECK = Spec("trees",
             "a file other than `manifest.json` and the declared `glue` (paths or glob patterns) that is "
             "not byte-identical in every tree; a glue entry that matches no file",
             "trees, [tool.extparity.gate].glue", verdict)
