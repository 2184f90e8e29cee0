"""`extparity run`: the parity suite over the corpus, in every selected engine."""

from __future__ import annotations

import json
import sys

from .. import api
from ..coverage.record import Recorder
from ..coverage.record import dumps as coverage_dumps
from ..project.config import load_project
from ..reports import summary
from ..reports.progress import Progress
from ..results import build, compare
from ..results.shards import parse_shard
from ..run.parity import select_engines
from .common import (UsageError, add_corpus_option, add_engine_options, add_report_options, browser_evidence,
                     check_output, check_report_outputs, controller, print_failures, write, write_reports)
from .compare import load_result, print_changes


def add_parser(commands) -> None:
    parser = commands.add_parser("run", help="run the parity suite")
    add_corpus_option(parser)
    add_engine_options(parser)
    parser.add_argument("--json", metavar="PATH", help="write the machine-readable result (- for stdout)")
    parser.add_argument("--matrix", metavar="PATH", help="write a Markdown matrix: one row per case, one column per engine")
    parser.add_argument("--timings", metavar="PATH", help="write per-engine timings (kept out of the deterministic result)")
    parser.add_argument("--coverage", metavar="PATH",
                        help="write which blocks of the verified modules ran in Chromium (page and service worker), "
                             "with the cases that reach each, and the reference's branch coverage (JSON)")
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (a stable partition by case id); "
                        "join the shards' --json results with `extparity merge`")
    add_report_options(parser)
    parser.add_argument("--baseline", metavar="OLD.json",
                        help="list every verdict that changed since this earlier result (see `extparity compare`)")
    parser.set_defaults(handler=main)


def main(args) -> int:
    project = load_project(args.config)
    engines = select_engines(project, args.engines)
    outputs = {name: check_output(getattr(args, name)) for name in ("json", "matrix", "timings", "coverage")}
    shard = _shard(args.shard)
    reports = check_report_outputs(args)
    baseline = load_result(args.baseline) if args.baseline else None
    recorder = Recorder(project) if outputs["coverage"] else None
    bars = Progress(sys.stderr, engines)
    try:
        outcome = api.run(project, engines=engines, corpus=args.corpus, shard=shard, case_timeout_s=args.case_timeout,
                          budget_s=args.timeout, jobs=args.jobs, controller=controller(), progress=bars.update,
                          log=bars.log, instrument=recorder.instrument if recorder else None)
    finally:
        bars.finish()
    result, document = outcome.result, outcome.document
    timings = build.timings(result)
    covered = recorder.document(result) if recorder else None
    print(summary.summary_table(result))
    for module, note in sorted(result.per_browser.items()):
        print(f"module: {module}: {note}")
    seen, evidence_problems = browser_evidence(project, result, reports, args.case_timeout)
    write_errors = [
        write(outputs["json"], build.chunks(document)),
        write(outputs["matrix"], summary.matrix_markdown(result)),
        write(outputs["timings"], json.dumps(timings, indent=1, sort_keys=True) + "\n"),
        write(outputs["coverage"], coverage_dumps(covered)) if covered is not None else None,
        # the page shows the durations when they are asked for, so that `report --timings` makes the same page
        *write_reports(document, reports, timings if args.timings else None, baseline, covered, seen),
        *evidence_problems,
    ]
    if baseline is not None:
        print()
        print_changes(compare.compare(baseline, document), args.baseline, "this run")
    failures = summary.failure_lines(result) + [e for e in write_errors if e]
    if print_failures(failures):
        return 1
    print(f"\n{summary.closing_line(result)}")
    return 0


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        return parse_shard(text)
    except ValueError as error:
        raise UsageError(str(error)) from None
