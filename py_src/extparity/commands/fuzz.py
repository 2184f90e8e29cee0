"""`extparity fuzz`: generated cases through every selected engine; each divergence, engine
error or exception from the reference is minimised and written as a corpus line."""

from __future__ import annotations

import json
import random
from pathlib import Path

from .. import api
from ..fuzz.campaign import Campaign, CaseFactory, FuzzOptions, findings_path, save_findings, seed_cases
from ..engines.base import EngineStartError
from ..fuzz.generators import GeneratorError
from ..fuzz.guided import GuidedFactory, guided_factory
from ..fuzz.quirks import known_cases
from ..project.config import load_project
from ..run.parity import select_engines
from .common import UsageError, add_corpus_option, check_output, controller, print_failures, stderr, write

def add_parser(commands) -> None:
    parser = commands.add_parser("fuzz", help="differential fuzzing: generated cases through every engine")
    parser.add_argument("--seed", type=int, default=None,
                        help="the campaign's seed (default: a random one, printed first); case i of a seed is always the same case")
    parser.add_argument("--cases", type=int, default=None, metavar="N", help="stop after N cases")
    parser.add_argument("--seconds", type=float, default=None, metavar="S",
                        help="stop at the first batch boundary after S seconds (default: 60 when --cases is not given)")
    parser.add_argument("--start", type=int, default=0, metavar="I", help="index of the first case (replay: --start I --cases 1)")
    parser.add_argument("--engines", help="comma-separated engine names (default: every configured engine)")
    parser.add_argument("--entry", action="append", metavar="NAME", help="fuzz only this entry (repeatable; default: every entry)")
    parser.add_argument("--out", default="out/fuzz", metavar="DIR",
                        help="where minimised cases go, as a corpus folder (default out/fuzz)")
    parser.add_argument("--json", metavar="PATH", help="write the campaign's summary: counts, cases/s, engines, findings (- for stdout)")
    parser.add_argument("--max-findings", type=int, default=20, metavar="N", help="stop after N distinct findings (default 20)")
    parser.add_argument("--shrink-seconds", type=float, default=60.0, metavar="S", help="time to minimise one finding (default 60)")
    parser.add_argument("--batch", type=int, default=400, metavar="N", help="cases per round trip to the engines (default 400)")
    parser.add_argument("--guided", action="store_true",
                        help="keep and mutate first the inputs that reach new arcs of the Python reference, "
                             "splicing in the values the verified modules compare against")
    parser.add_argument("--case-timeout", type=float, default=10.0, metavar="S",
                        help="seconds one case may take in one engine before it is a TIMEOUT (default 10)")
    add_corpus_option(parser)
    parser.set_defaults(handler=main)


def main(args) -> int:
    for flag in ("cases", "seconds", "batch", "max_findings", "shrink_seconds", "case_timeout"):
        value = getattr(args, flag)
        if value is not None and value <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")
    if args.start < 0:
        raise UsageError("--start must be 0 or more")
    if args.guided and args.start:
        raise UsageError("--guided makes case i from what cases 0..i-1 reached, so it cannot --start at a later case")
    project = load_project(args.config)
    engines = select_engines(project, args.engines)
    summary_path = check_output(args.json)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    out = Path(args.out)
    target = findings_path(out, seed, args.start)
    check_output(str(target))  # fails before any engine starts if it cannot be written
    seconds = args.seconds if args.seconds is not None or args.cases is not None else 60.0
    options = FuzzOptions(seed=seed, cases=args.cases, seconds=seconds, start=args.start, batch=args.batch,
                          max_findings=args.max_findings, shrink_seconds=args.shrink_seconds,
                          case_timeout_s=args.case_timeout, entries=_entries(args.entry))
    corpus = api.load_corpus(project, args.corpus)
    problems = [str(problem) for problem in corpus.problems]
    if problems:
        raise UsageError(f"the corpus the generators start from has {len(problems)} bad line(s); first: {problems[0]}")
    try:
        seeds = seed_cases(corpus.cases)
        unguided = CaseFactory(project, seeds, seed, options.entries)
        factory: CaseFactory | GuidedFactory = guided_factory(project, unguided, seeds) if args.guided else unguided
    except (GeneratorError, EngineStartError) as error:
        raise UsageError(str(error)) from None
    stderr(f"fuzz: seed {seed}; engines {', '.join(engines)}; "
           + "; ".join(f"{entry}: {', '.join(factory.generators[entry])}"
                       for entry in factory.entry_names)
           + "".join(f"; {entry}: takes no argument, nothing to generate" for entry in unguided.without_arguments)
           + f"; {unguided.dictionary.summary()}")
    if isinstance(factory, GuidedFactory):
        stderr(f"fuzz: guided by the Python reference's arcs ({factory.corpus_arcs} reached by the corpus), "
               f"splicing the dictionary's words")
    found: list = []

    def keep(finding) -> None:
        found.append(finding)
        stderr(f"FOUND {finding.line()}")
        try:
            save_findings(target, found)
        except OSError as error:
            stderr(f"  cannot write {target}: {error.strerror or error}")
            return
        stderr(f"  written to {target}")

    campaign = Campaign(project, engines, factory, options, controller(), on_finding=keep, log=stderr,
                        known=known_cases(project, corpus.cases))
    try:
        result = campaign.run()
    except GeneratorError as error:
        stderr(f"fuzz: {error}")
        return 1
    except BaseException:
        stderr(f"fuzz: stopped after {campaign.result.cases:,} cases; "
               f"{len(found)} finding(s) kept in {target if found else out}")
        raise
    finally:
        unguided.close()
    rate = result.cases / result.seconds if result.seconds else 0.0
    print(f"fuzz: {result.cases:,} cases in {result.seconds:.1f}s ({rate:,.0f} cases/s) through "
          f"{len(engines)} engines; seed {seed}, cases {args.start}..{args.start + result.cases - 1}")
    for name, engine in result.engines.items():
        print(f"  {name}: {engine['status']}, busy {engine['busy_s']:.1f}s, "
              f"{engine['sessions']} session(s), {engine['restarts']} restart(s)")
    summary = _summary(result, seed, args.start, engines)
    if isinstance(factory, GuidedFactory):
        summary["guided"] = {"corpus_arcs": factory.corpus_arcs, "reached_arcs": len(factory.reached),
                             "kept": {entry: len(inputs) for entry, inputs in factory.kept.items()}}
        print(f"  guided: {len(factory.reached):,} arcs of the reference reached, {factory.corpus_arcs:,} by the "
              f"corpus; {sum(summary['guided']['kept'].values())} input(s) kept for reaching new ones")
    unwritten = write(summary_path, json.dumps(summary, indent=1, sort_keys=True) + "\n")
    lines = [f"{len(result.findings)} finding(s), minimised in {target}" if result.findings else None,
             f"{result.repeats} more failing case(s) minimised to an earlier finding" if result.repeats else None,
             *result.engine_problems, *result.deviation_problems,
             "no case was run" if not result.cases else None, unwritten]
    failures = [line for line in lines if line]
    if print_failures(failures):
        return 1
    if result.accepted:
        print(f"fuzz: {result.accepted_line()}")
    print(f"fuzz: no divergence, engine error or reference exception in {result.cases:,} cases")
    return 0


def _entries(values: list[str] | None) -> tuple[str, ...]:
    names = [name.strip() for value in values or [] for name in value.split(",") if name.strip()]
    return tuple(dict.fromkeys(names))


def _summary(result, seed: int, start: int, engines: list[str]) -> dict:
    """Counts and rates of the campaign: timings are its point, so they belong here (the
    findings file, not this summary, is the deterministic output)."""
    return {
        "seed": seed, "start": start, "cases": result.cases, "seconds": round(result.seconds, 3),
        "cases_per_s": round(result.cases / result.seconds, 1) if result.seconds else 0.0,
        "engines": {name: result.engines.get(name, {}) for name in engines},
        "generated": dict(sorted(result.generated.items())),
        "accepted": dict(sorted(result.accepted.items())),
        "findings": [{"id": f.minimised.id, "generator": f.generator, "cells": dict(f.signature),
                      "notes": f.notes, "case": f.minimised.line_json()} for f in result.findings],
        "repeats": result.repeats, "engine_problems": result.engine_problems,
    }
