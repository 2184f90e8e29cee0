"""`extparity diff`: inputs through several engines, verdicts side by side."""

from __future__ import annotations

import sys
from pathlib import Path

from ..config import load_project
from ..corpus import PARITY_ONLY, Case
from ..runner import select_engines
from .common import UsageError, add_engine_options, run


def add_parser(commands) -> None:
    diff = commands.add_parser("diff", help="one input through several engines, verdicts side by side")
    source = diff.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="model output to parse")
    source.add_argument("--text-file", metavar="PATH", help="model output to parse, from a file ('-' for stdin)")
    source.add_argument("--raw", help="argument JSON to repair")
    source.add_argument("--raw-file", metavar="PATH", help="argument JSON to repair, from a file ('-' for stdin)")
    diff.add_argument("--allowed", default="", help="comma-separated allowlist for --text")
    add_engine_options(diff)
    diff.set_defaults(handler=main)


def main(args) -> int:
    """Run one input through the chosen engines and show where the verdicts differ."""
    project = load_project(args.config)
    engines = select_engines(project, args.engines)
    if args.raw is not None or args.raw_file:
        fn, fields = "repair", {"input": _text(args.raw, args.raw_file)}
    else:
        fields = {"input": _text(args.text, args.text_file),
                  "allowed": [name.strip() for name in args.allowed.split(",") if name.strip()]}
        fn = "parse"
    if fn not in project.entries:
        raise UsageError(f"this project has no {fn!r} entry (entries: {', '.join(project.entries)})")
    entry = project.entries[fn]
    fields = {name: fields.get(name) for name in entry.args}
    item = Case(id="input", fn=fn, fields=fields, expect=PARITY_ONLY, tags=(), why="",
                file="<command line>", line=0, group="diff")
    result = run(project, [item], engines, args, log=lambda line: None)
    r = result.results[0]
    shown = {}
    for name in engines:
        engine_run, failure = result.runs[name], result.runs[name].failures.get("input")
        if name in r.verdicts:
            shown[name] = r.verdicts[name]
        elif failure is not None:
            shown[name] = f"<{failure.kind}: {failure.detail}>"
        else:
            shown[name] = f"<{engine_run.status}: {engine_run.detail}>"
    for name in engines:
        mark = "=" if name in r.verdicts and r.verdicts[name] == r.baseline else "≠"
        print(f"{mark} {name}: {shown[name]}")
    for problem in result.module_problems:
        print(f"module: {problem}")
    gave_none = [name for name in engines if name not in r.verdicts]
    agree = len(r.groups) == 1 and not gave_none and not result.module_problems
    if gave_none:
        print(f"verdicts INCOMPLETE: no verdict from {', '.join(gave_none)}")
    else:
        print("verdicts agree" if agree else "verdicts DIFFER")
    return 0 if agree else 1


def _text(value: str | None, path: str | None) -> str:
    if not path:
        return value
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"{path}: cannot read it: {error.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 (byte {error.start + 1} is {data[error.start]:#04x})") from None
