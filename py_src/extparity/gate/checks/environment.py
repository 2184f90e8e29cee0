"""The gate's ``environment`` check: the engines again, under each second environment, and every
verdict byte-identical to the first run's.

Why: the purity check refuses the identifiers through which code reads its environment, but an
exception (data in the config) or a path it cannot see (glue, the background shaping a reply)
lets such a read through, and then every engine agrees with itself under the gate's one
environment. Here the same engines run under another locale, time zone, date, user agent and
``navigator.webdriver`` (``project.environments``); a verdict that changes is the subject
reading its environment, named with the environment, the engine and the case.
"""

from __future__ import annotations

from typing import Callable

from ...corpus.cases import Corpus
from ...engines.base import EngineRun
from ...project.config import Project
from ...project.environments import SHIPPED, Environment, expand, shipped_locales
from ...project.kinds import build_engine
from ...project.words import count
from ...run.parity import RunResult, run_parity
from ..context import Gate
from ..registry import BROWSERS, ENGINES, Spec

SHOWN = 48  # characters of each verdict around the first difference


def unread_locales(project: Project, names: list[str], environment: Environment) -> list[str]:
    """For an environment of a shipped locale: each engine that cannot choose the extension's
    ``_locales/`` folder for it, and why. Its verdicts would be the first run's for the wrong
    reason (the browser stayed in its own language), so the environment would pass unexercised."""
    problems = []
    for name in names:
        reason = build_engine(project.engines[name], project).ui_language_missing(environment.locale or "")
        if reason:
            problems.append(f"{environment.name}: {name} cannot read the extension's _locales/ for "
                            f"{environment.locale}: {reason}")
    return problems


def reached_engines(project: Project, names: list[str], environment: Environment) -> dict[str, dict[str, str]]:
    """Engine -> how its kind applies each setting of ``environment``; engines it reaches not at all are left out."""
    reached = {}
    for name in names:
        try:
            reach = build_engine(project.engines[name], project).environment_reach(environment)
        except ImportError:  # a missing binding: the first run already failed this engine
            continue
        if reach:
            reached[name] = reach
    return reached


def outcome(run: EngineRun, case_id: str) -> str:
    """What one engine gave for one case, as compared: the verdict's bytes, or how it failed."""
    if case_id in run.verdicts:
        return run.verdicts[case_id]
    failure = run.failures.get(case_id)
    return f"<{failure.kind}: {failure.detail}>" if failure else "<no result>"


def difference(first: str, second: str) -> str:
    """Both outcomes from a little before their first differing character."""
    at = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
    start = max(0, at - SHOWN // 3)

    def cut(text: str) -> str:
        piece = text[start:start + SHOWN]
        return ("..." if start else "") + piece + ("..." if start + SHOWN < len(text) else "")

    return f"{cut(first)!r} in the first run, {cut(second)!r} here (from character {at})"


def compare(environment: Environment, first: RunResult, again: RunResult) -> list[str]:
    """One line per engine that failed under ``environment`` or per case whose outcome changed."""
    problems = []
    for name, run in again.runs.items():
        if run.status != "ok":
            problems.append(f"{environment.name}: {name} {run.status}: {run.detail}")
            continue
        before = first.runs[name]
        for result in first.results:
            case_id = result.case.id
            was, now = outcome(before, case_id), outcome(run, case_id)
            if was != now:
                problems.append(f"{environment.name}: {name}: {case_id}: the verdict depends on the environment "
                                f"({environment.describe()}): {difference(was, now)}")
    return problems


def judge(project: Project, corpus: Corpus, first: RunResult,
          run: Callable[[Environment, list[str]], RunResult]) -> tuple[list[str], str]:
    """Problems and the passing line. ``run(environment, engines)`` runs those engines under it;
    ``first`` is the gate's own run, or with ``gate --results`` the merged shards' recorded run:
    the engines then run here under each second environment and are held to what was recorded."""
    environments = expand(project.gate.environments, project.trees)
    if not project.gate.environments:
        return [], "no second environment configured ([tool.extparity.gate].environments = [])"
    ran = [name for name, r in first.runs.items() if r.status == "ok"]
    problems, shown = [], []
    shipped = {e.name for e in expand(tuple(e for e in project.gate.environments if e.locale == SHIPPED), project.trees)}
    for environment in environments:
        reached = reached_engines(project, ran, environment)
        if not reached:
            problems.append(f"{environment.name}: no engine of this run can apply {environment.describe()}")
            continue
        if environment.name in shipped:
            problems += unread_locales(project, list(reached), environment)
        problems += compare(environment, first, run(environment, list(reached)))
        shown.append(f"{environment.name} ({environment.describe()}) in {', '.join(reached)}")
    unexpanded = [e.name for e in project.gate.environments if e.locale == SHIPPED]
    none_shipped = f"; {', '.join(unexpanded)}: the trees ship no _locales/" if unexpanded and not shipped_locales(
        project.trees) else ""
    return problems, (f"{count(len(first.results), 'case')} gave byte-identical verdicts again under "
                      f"{'; '.join(shown)}{none_shipped}")


def verdict(gate: Gate) -> tuple[list[str], str]:
    options, tested, cases = gate.options, gate.tested, gate.corpus.cases

    def again(environment: Environment, names: list[str]) -> RunResult:
        return run_parity(tested, cases, names, case_timeout_s=options.case_timeout_s, budget_s=options.budget_s,
                          jobs=options.jobs, controller=options.controller, environment=environment,
                          log=lambda line: options.log(f"{environment.name}: {line}"),
                          deviation_cases={case.id for case in cases})

    return judge(tested, gate.corpus, gate.result, again)


CHECK = Spec("environment",
             "a verdict that changes under a second environment (locale, time zone, date, user agent, "
             "`navigator.webdriver`, a shipped locale)", "[tool.extparity.gate].environments", verdict,
             needs=(ENGINES,), starts=(BROWSERS,))
