"""`extparity merge`: the JSON results of `run --shard K/N` jobs, as one run's result, read and
written a case at a time (``shards.merge_files``), so its memory does not grow with the corpus."""

from __future__ import annotations

from pathlib import Path

from ..results import build
from ..results.read import ResultError
from ..results.shards import MergeError, merge_files
from .common import UsageError, check_output, stderr, write


def add_parser(commands) -> None:
    parser = commands.add_parser("merge", help="join the JSON results of sharded runs into one")
    parser.add_argument("results", nargs="+", metavar="SHARD.json", help="JSON results of `run --shard K/N`")
    parser.add_argument("--json", metavar="PATH", required=True, help="where to write the merged result (- for stdout)")
    parser.set_defaults(handler=main)


def main(args) -> int:
    output = check_output(args.json)
    try:
        merged = merge_files([Path(path) for path in args.results])
        failure = write(output, build.chunks(merged))
    except ResultError as error:
        raise UsageError(f"not a readable JSON result: {error}") from None
    except (MergeError, KeyError, TypeError) as error:
        stderr(f"extparity: cannot merge: {error}")
        return 1
    if failure:
        stderr(f"extparity: {failure}")
        return 1
    rows = merged["summary"]
    print(f"merged {len(args.results)} results: {merged['corpus']['cases']} cases, {len(rows)} engines, "
          f"{'ok' if merged['ok'] else 'FAILED'}")
    return 0 if merged["ok"] else 1
