"""`extparity report RESULT.json`: the HTML, JUnit and repro reports of a saved (or merged)
result, made exactly as `extparity run` makes them."""

from __future__ import annotations

import json
from pathlib import Path

from ..results import read
from .common import UsageError, add_report_options, check_report_outputs, stderr, write_reports
from .compare import load_result


def add_parser(commands) -> None:
    parser = commands.add_parser("report", help="HTML, JUnit or repro files from a saved JSON result")
    parser.add_argument("result", metavar="RESULT.json", help="a result written by `extparity run --json`")
    parser.add_argument("--coverage", metavar="COVERAGE.json",
                        help="a coverage file written by `run --coverage` or `gate --coverage`: the HTML report shows it")
    add_report_options(parser)
    parser.add_argument("--timings", metavar="PATH", help="durations for the HTML report: the file `run --timings` wrote")
    parser.add_argument("--baseline", metavar="OLD.json",
                        help="an earlier result: the HTML report gets a \"changed since baseline\" view")
    parser.set_defaults(handler=main)


def main(args) -> int:
    outputs = check_report_outputs(args)
    if not any(outputs.values()):
        raise UsageError("nothing to write: give --html, --junit, --annotations or --save-failures")
    try:
        document = read.load(args.result)
    except read.ResultError as error:
        raise UsageError(str(error)) from None
    timings = _timings(args.timings) if args.timings else None
    baseline = load_result(args.baseline) if args.baseline else None
    coverage = None
    if args.coverage:
        try:
            coverage = json.loads(Path(args.coverage).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise UsageError(f"{args.coverage}: cannot read it as a coverage file: {getattr(error, 'strerror', None) or error}") from None
        if not isinstance(coverage, dict) or coverage.get("schema") != 1 or "modules" not in coverage:
            raise UsageError(f"{args.coverage}: not a coverage file (written by `extparity run --coverage`)")
    errors = write_reports(document, outputs, timings, baseline, coverage)
    for line in errors:
        stderr(f"extparity: {line}")
    return 1 if errors else 0


def _timings(path: str) -> dict:
    try:
        timings = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: not a readable timings file ({error})") from None
    if not isinstance(timings, dict) or not isinstance(timings.get("engines"), dict):
        raise UsageError(f"{path}: not a timings file of `extparity run --timings` (no \"engines\" object)")
    return timings
