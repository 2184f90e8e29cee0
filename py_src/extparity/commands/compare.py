"""`extparity compare OLD.json NEW.json`: every verdict that changed between two runs.

Listing changes is not a failure: a release changes behaviour on purpose. With
``--fail-on-new-calls`` the command is a gate: it exits 1 on a call that now executes and no
acknowledgement covers, on a stale acknowledgement, and on anything it could not compare
(an engine or a case without a verdict on one side), since it cannot vouch for those.
"""

from __future__ import annotations

from pathlib import Path

from ..corpus.deviations import load_deviations
from ..results import compare, read
from .common import UsageError, print_failures


def add_parser(commands) -> None:
    parser = commands.add_parser("compare", help="verdicts that changed between two JSON results")
    parser.add_argument("old", metavar="OLD.json", help="the earlier result (the last release's)")
    parser.add_argument("new", metavar="NEW.json", help="the later result")
    parser.add_argument("--fail-on-new-calls", action="store_true",
                        help="exit 1 on a call that now executes unless --acknowledged lists it")
    parser.add_argument("--acknowledged", metavar="PATH",
                        help="JSON list of {case, engines, reason, link}: new calls that are intended")
    parser.set_defaults(handler=main)


def load_result(path: str) -> dict:
    try:
        return read.load(path)
    except read.ResultError as error:
        raise UsageError(str(error)) from None


def print_changes(comparison: compare.Comparison, old_name: str, new_name: str) -> None:
    changes = comparison.changes
    cases = len({change.case for change in changes})
    print(f"behaviour changes from {old_name} to {new_name}: {len(changes)} in {cases} cases")
    for line in compare.change_lines(changes):
        print(f"  {line}")
    if comparison.only_old_cases or comparison.only_new_cases:
        print(f"cases only in {old_name}: {len(comparison.only_old_cases)}; only in {new_name}: {len(comparison.only_new_cases)}")
    for line in comparison.not_compared_lines():
        print(f"not compared: {line}")


def main(args) -> int:
    if args.acknowledged and not args.fail_on_new_calls:
        raise UsageError("--acknowledged only means something with --fail-on-new-calls")
    old, new = load_result(args.old), load_result(args.new)
    acknowledged: dict = {}
    problems: list[str] = []
    if args.acknowledged:
        path = Path(args.acknowledged)
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
        acknowledged, problems = load_deviations(path, read.engine_names(new), {c["id"] for c in new["cases"]})
    comparison = compare.compare(old, new)
    print_changes(comparison, args.old, args.new)
    if not args.fail_on_new_calls:
        return 0
    open_changes, stale = compare.unacknowledged_new_calls(comparison.changes, acknowledged)
    failures = [f"acknowledged: {p}" for p in problems] + [f"acknowledged: {s}" for s in stale]
    failures += [f"new call not acknowledged: {line}" for line in compare.change_lines(open_changes)]
    failures += [f"not compared: {line}" for line in comparison.not_compared_lines()]
    if print_failures(failures):
        return 1
    print("no unacknowledged new calls")
    return 0
