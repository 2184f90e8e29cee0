"""trees: every file but manifest.json, the declared glue and the per-browser modules is
byte-identical in every tree, so a second, laxer copy of a module cannot ship in one browser's
tree. A per-browser module (``[tool.extparity].per_browser``) may differ because the run judges
its verdicts in every tree; its source map, written with it, differs with it. Glue entries may be
glob patterns, since bundlers hash chunk names; a pattern that matches nothing is stale. A
verified module (one the entries reach, in any tree) is never glue: declared so, literally or by a
pattern, it fails, and its bytes are compared anyway, so a drift in it is named rather than
declared away."""

from __future__ import annotations

from ...project import globs
from ...run.parity import first_difference_text
from ...subject import tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    verified = set().union(*map(set, gate.policy["verified"].values()))
    per_browser = [path for path in project.per_browser if path in files]
    maps = [f"{path}.map" for path in per_browser if f"{path}.map" in files]
    matched = globs.expand(project.gate.glue, files)
    problems = [f"glue {path}: {'matches no file in any' if globs.is_pattern(path) else 'in no'} tree "
                f"([tool.extparity.gate].glue)" for path, found in matched.items() if not found]
    problems += [f"glue {pattern}: {f'matches {path}, ' if path != pattern else ''}a verified module (the "
                 f"entries reach it): it must be one file in every tree; remove it from [tool.extparity.gate].glue"
                 for pattern, found in matched.items() for path in found if path in verified]
    glue = sorted({path for found in matched.values() for path in found} - verified)
    problems = tree_checks.compare_trees(project.trees, (*glue, *per_browser, *maps)) + problems
    problems += [f"per_browser {path}: in no tree ([tool.extparity].per_browser)"
                 for path in project.per_browser if path not in files]
    compared = len(files - {tree_checks.MANIFEST, *glue, *per_browser, *maps})
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
             "`per_browser` modules that is not byte-identical in every tree; a glue entry that matches no "
             "file; a verified module declared `glue`",
             "trees, [tool.extparity.gate].glue, [tool.extparity].per_browser", verdict)
