"""The gate's fuzz budget: a fixed-seed campaign through the headless engines, seeded from the
corpus, after the parity run.

Why in the gate: the corpus only sees what some case reaches. A rule that fires for a band of
text lengths no case has passes every corpus check; a few thousand generated cases find it.

Why a case count and nothing else: the gate's verdict must depend on the corpus and the config
only. A time box on a loaded CI machine covers fewer cases, and a time cap fails a gate there
that passes on a quiet one: the same 20,000 cases took 5.6 s to 71.6 s by load. So the budget is
``cases`` of ``seed``, the same cases on every machine, run to the end; a hung case is bounded by
the case timeout, as in every run. How long the campaign took is said on stderr and in
``--timings``, never in the verdict. Findings come with their minimised corpus line, ready to
commit.
"""

from __future__ import annotations

import time
from typing import Callable

from ...corpus.cases import Corpus
from ...engines.driver import Controller
from ...fuzz.campaign import Campaign, CaseFactory, FuzzOptions, corpus_line, repro_line, save_findings, seed_cases
from ...fuzz.generators import GeneratorError
from ...fuzz.quirks import known_cases
from ...project.config import Project
from ...project.kinds import IN_BROWSER, engine_class
from ...project.words import count
from ..context import Gate
from ..registry import ARTIFACTS, HEADLESS, Spec

WHERE = "[tool.extparity.gate].fuzz"
FINDINGS = "out/fuzz"  # under the project: where the gate's minimised findings are written whole
SHRINK_SECONDS = 30.0  # one finding fails the gate; its line needs to be small, not 1-minimal at any cost


def headless_engines(project: Project) -> list[str]:
    """The engines that start in a worker or in process: fast enough for thousands of cases."""
    return [name for name, spec in project.engines.items() if engine_class(spec.kind).RUNS != IN_BROWSER]


def judge(project: Project, corpus: Corpus, controller: Controller | None = None,
          log: Callable[[str], None] = lambda line: None) -> tuple[list[str], str]:
    """The problems of the gate's fuzz campaign, and the line it passes with."""
    budget = project.gate.fuzz
    if budget.cases == 0:
        return [], f"off ({WHERE}.cases = 0)"
    engines = headless_engines(project)
    if len(engines) < 2:
        return [f"fewer than two headless engines to fuzz through ({', '.join(engines) or 'none'}): configure "
                f"the reference and a headless JS engine, or turn the budget off with {WHERE}.cases = 0"], ""
    if not corpus.cases:
        return ["no corpus case to seed the generators from"], ""
    if not any(entry.args for entry in project.entries.values()):  # each call is the one the corpus makes
        return [], f"off{_without_arguments(list(project.entries))}"
    options = FuzzOptions(seed=budget.seed, cases=budget.cases, max_findings=1, shrink_seconds=SHRINK_SECONDS)
    factory = None
    try:
        factory = CaseFactory(project, seed_cases(corpus.cases), budget.seed)
        started = time.perf_counter()
        result = Campaign(project, engines, factory, options, controller or Controller(), log=log,
                          known=known_cases(project, corpus.cases)).run()
    except GeneratorError as error:
        return [str(error)], ""
    finally:
        if factory is not None:
            factory.close()
    log(f"fuzz budget: {result.cases:,} cases of seed {budget.seed} in {time.perf_counter() - started:.1f}s "
        f"through {', '.join(engines)}")
    problems = saved_findings(project, budget.seed, result.findings)
    problems += [f"{count(result.repeats, 'more failing case')} minimised to an earlier finding"] if result.repeats else []
    problems += result.engine_problems + result.deviation_problems
    if not problems and result.cases < budget.cases:  # an engine gave up: never a pass on fewer cases
        problems.append(f"only {result.cases:,} of the {budget.cases:,} cases of seed {budget.seed} ran: the gate "
                        f"does not pass on a smaller budget")
    return problems, (f"{budget.cases:,} generated cases of seed {budget.seed}, seeded from the corpus, through "
                      f"{', '.join(engines)}: no divergence, engine error or reference exception"
                      + (f"; {result.accepted_line()}" if result.accepted else "")
                      + _without_arguments(factory.without_arguments))


def saved_findings(project: Project, seed: int, findings: list) -> list[str]:
    """One line per finding, its input shortened; the whole minimised cases go to a corpus file
    under the project's out/ (named on the line), ready to commit."""
    if not findings:
        return []
    target = project.root / FINDINGS / f"gate-{seed}.jsonl"
    try:
        save_findings(target, findings)
    except OSError as error:
        return [f"{finding.line()}; as a corpus line: {corpus_line(finding.minimised)} (cannot write {target}: "
                f"{error.strerror or error})" for finding in findings]
    return [repro_line(finding, project.relative(target)) for finding in findings]


def _without_arguments(entries: list[str]) -> str:
    return (f"; {', '.join(entries)} {'takes' if len(entries) == 1 else 'take'} no argument: nothing to generate"
            if entries else "")


def verdict(gate: Gate) -> tuple[list[str], str]:
    return judge(gate.tested, gate.corpus, gate.options.controller, gate.options.log)


CHECK = Spec("fuzz",
             "a divergence, engine error or reference exception in the `fuzz.cases` generated cases of "
             "`fuzz.seed`, or fewer cases run", WHERE, verdict, needs=(ARTIFACTS,), starts=(HEADLESS,))
