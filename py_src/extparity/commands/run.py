"""`extparity run`: the parity suite over the corpus, in every selected engine."""

from __future__ import annotations

import json

from ..project.config import load_project
from ..reports import summary
from ..results import build, compare
from ..results.shards import in_shard, parse_shard
from ..run.parity import select_engines
from .common import (UsageError, add_corpus_option, add_engine_options, add_report_options, check_output,
                     check_report_outputs, load, print_failures, run, stderr, write, write_reports)
from .compare import load_result, print_changes


def add_parser(commands) -> None:
    parser = commands.add_parser("run", help="run the parity suite")
    add_corpus_option(parser)
    add_engine_options(parser)
    parser.add_argument("--json", metavar="PATH", help="write the machine-readable result")
    parser.add_argument("--matrix", metavar="PATH", help="write a Markdown matrix: one row per case, one column per engine")
    parser.add_argument("--timings", metavar="PATH", help="write per-engine timings (kept out of the deterministic result)")
    parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (a stable partition by case id); "
                        "join the shards' --json results with `extparity merge`")
    add_report_options(parser)
    parser.add_argument("--baseline", metavar="OLD.json",
                        help="list every verdict that changed since this earlier result (see `extparity compare`)")
    parser.set_defaults(handler=main)


def main(args) -> int:
    project = load_project(args.config)
    engines = select_engines(project, args.engines)
    outputs = {name: check_output(getattr(args, name)) for name in ("json", "matrix", "timings")}
    shard = _shard(args.shard)
    reports = check_report_outputs(args)
    baseline = load_result(args.baseline) if args.baseline else None
    corpus, problems = load(args, project)
    for problem in problems:
        stderr(f"corpus: {problem}")
    cases = [case for case in corpus.cases if shard is None or in_shard(case.id, shard)]
    result = run(project, cases, engines, args,
                 deviation_cases=None if args.corpus else {case.id for case in corpus.cases})
    result.extra_problems += [f"corpus: {p}" for p in problems]
    print(summary.summary_table(result))
    document = build.json_result(result, project, corpus.files, problems, corpus.tags)
    write_errors = [
        write(outputs["json"], build.dumps(document)),
        write(outputs["matrix"], summary.matrix_markdown(result)),
        write(outputs["timings"], json.dumps(build.timings(result), indent=1, sort_keys=True) + "\n"),
        *write_reports(document, reports),
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
