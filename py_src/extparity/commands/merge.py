"""`extparity merge`: the JSON results of `run --shard K/N` jobs, as one run's result."""

from __future__ import annotations

import json
from pathlib import Path

from ..results import build
from ..results.shards import MergeError, merge
from .common import UsageError, check_output, stderr, write


def add_parser(commands) -> None:
    parser = commands.add_parser("merge", help="join the JSON results of sharded runs into one")
    parser.add_argument("results", nargs="+", metavar="SHARD.json", help="JSON results of `run --shard K/N`")
    parser.add_argument("--json", metavar="PATH", required=True, help="where to write the merged result (- for stdout)")
    parser.set_defaults(handler=main)


def main(args) -> int:
    output = check_output(args.json)
    documents = []
    for path in args.results:
        try:
            documents.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError, UnicodeDecodeError) as error:
            raise UsageError(f"{path}: not a readable JSON result ({error})") from None
    try:
        merged = merge(documents)
    except (MergeError, KeyError, TypeError) as error:
        stderr(f"extparity: cannot merge: {error}")
        return 1
    failure = write(output, build.chunks(merged))
    if failure:
        stderr(f"extparity: {failure}")
        return 1
    rows = merged["summary"]
    print(f"merged {len(documents)} results: {len(merged['cases'])} cases, {len(rows)} engines, "
          f"{'ok' if merged['ok'] else 'FAILED'}")
    return 0 if merged["ok"] else 1
