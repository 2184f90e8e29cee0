"""trees: every file but manifest.json, the declared glue and the per-browser modules is
byte-identical in every tree, so a second, laxer copy of a module cannot ship in one browser's
tree. A per-browser module (``[tool.extparity].per_browser``) may differ because the run judges
its verdicts in every tree; its source map, written with it, differs with it. Glue entries may be
glob patterns, since bundlers hash chunk names; a pattern that matches nothing is stale."""

from __future__ import annotations

from ...project import globs
from ...run.parity import first_difference_text
from ...subject import tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    glue = project.gate.glue
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    per_browser = [path for path in project.per_browser if path in files]
    maps = [f"{path}.map" for path in per_browser if f"{path}.map" in files]
    problems = tree_checks.compare_trees(project.trees, (*glue, *per_browser, *maps))
    matched = globs.expand(glue, files)
    problems += [f"glue {path}: {'matches no file in any' if globs.is_pattern(path) else 'in no'} tree "
                 f"([tool.extparity.gate].glue)" for path, found in matched.items() if not found]
    problems += [f"per_browser {path}: in no tree ([tool.extparity].per_browser)"
                 for path in project.per_browser if path not in files]
    unjudged = {tree_checks.MANIFEST, *per_browser, *maps}
    compared = len([rel for rel in files if rel not in unjudged and not globs.covered(rel, glue)])
    differing = []
    for path in per_browser:
        present = [tree for tree, root in sorted(project.trees.items()) if (root / path).is_file()]
        if len({(project.trees[tree] / path).read_bytes() for tree in present}) > 1:
            differing.append(f"{path} {first_difference_text(project, path, present).removeprefix('per-browser: ')}")
    shown = "; ".join(globs.described(path, found) for path, found in matched.items())
    per = f"; per-browser: {'; '.join(differing)}" if differing else ""
    return problems, (f"{compared} files byte-identical in {', '.join(project.trees)} "
                      f"(manifest.json compared key by key; glue: {shown or 'none'}{per})")


CHECK = Spec("trees",
             "a file other than `manifest.json`, the declared `glue` (paths or glob patterns) and the "
             "`per_browser` modules that is not byte-identical in every tree; a glue entry that matches no file",
             "trees, [tool.extparity.gate].glue, [tool.extparity].per_browser", verdict)
