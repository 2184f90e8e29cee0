"""web-ext lint: Mozilla's linter on each Firefox artifact, as addons.mozilla.org runs it. It
starts beside the engines' run (it takes seconds of its own) and is read after it."""

from __future__ import annotations

from ...subject.weblint import Lint, install_advice
from ..context import Gate
from ..registry import ARTIFACTS, Spec


def firefox_trees(gate: Gate) -> list[str]:
    return [tree for tree, kinds in gate.browsers.items() if "firefox" in kinds]


def prepare(gate: Gate) -> None:
    project = gate.project
    missing = install_advice(project.gate.web_ext, project.root, project.path)
    for tree in firefox_trees(gate):
        lint = Lint(project.gate.web_ext or "web-ext", gate.tested.trees[tree], project.gate.web_ext_allow, missing)
        gate.lints[tree] = lint
        gate.cleanups.append(lint.stop)


def verdict(gate: Gate) -> tuple[list[str], str]:
    gate.lint = {tree: lint.result() for tree, lint in gate.lints.items()}
    return ([f"{tree}: {p}" for tree, r in gate.lint.items() for p in r.problems],
            "; ".join(f"{tree}: {r.line}" for tree, r in gate.lint.items()))


CHECK = Spec("web-ext lint",
             "a web-ext error, a warning not in `web_ext.allow`, an allowed code that no longer "
             "occurs, web-ext not installed",
             "[tool.extparity.gate].web_ext", verdict, needs=(ARTIFACTS,),
             applies=lambda gate: bool(firefox_trees(gate)), prepare=prepare)
