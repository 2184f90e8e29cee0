"""`extparity report RESULT.json`: the HTML, JUnit and repro reports of a saved (or merged)
result, made exactly as `extparity run` makes them."""

from __future__ import annotations

from ..results import read
from .common import UsageError, add_report_options, check_report_outputs, stderr, write_reports


def add_parser(commands) -> None:
    parser = commands.add_parser("report", help="HTML, JUnit or repro files from a saved JSON result")
    parser.add_argument("result", metavar="RESULT.json", help="a result written by `extparity run --json`")
    add_report_options(parser)
    parser.set_defaults(handler=main)


def main(args) -> int:
    outputs = check_report_outputs(args)
    if not any(outputs.values()):
        raise UsageError("nothing to write: give --html, --junit, --annotations or --save-failures")
    try:
        document = read.load(args.result)
    except read.ResultError as error:
        raise UsageError(str(error)) from None
    errors = write_reports(document, outputs)
    for line in errors:
        stderr(f"extparity: {line}")
    return 1 if errors else 0
