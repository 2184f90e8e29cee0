"""`extparity diff`: inputs through several engines, verdicts side by side.

One input (``--entry NAME --arg FIELD=VALUE ...`` for any entry; ``--text`` and ``--raw``, or a
whole file, for the bundled subject's ``parse`` and ``repair``) prints every engine's verdict. Many inputs
(``--each-line`` over a file or stdin, or ``--corpus`` JSONL) print, for each input whose
verdicts differ, the differing verdicts side by side against the reference's (or the
majority's, or ``--left``'s), and a count at the end.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from .. import api
from ..corpus.cases import PARITY_ONLY, Case
from ..project.config import load_project
from ..project.words import shortened
from ..reports.progress import Progress
from ..results import verdict_diff
from ..results.read import judged_against, verdicts
from ..run.parity import select_engines
from .common import UsageError, add_engine_options, controller, stderr


def add_parser(commands) -> None:
    diff = commands.add_parser("diff", help="inputs through several engines, verdicts side by side")
    source = diff.add_mutually_exclusive_group(required=True)
    source.add_argument("--entry", metavar="NAME", help="the entry to call, with its fields given by --arg")
    source.add_argument("--text", help="model output to parse (shorthand for the bundled subject's parse entry)")
    source.add_argument("--text-file", metavar="PATH", help="model output to parse, from a file ('-' for stdin)")
    source.add_argument("--raw", help="argument JSON to repair (shorthand for the bundled subject's repair entry)")
    source.add_argument("--raw-file", metavar="PATH", help="argument JSON to repair, from a file ('-' for stdin)")
    source.add_argument("--corpus", action="append", metavar="PATH",
                        help="JSONL corpus file or folder: every case in it, expectations ignored (repeatable)")
    diff.add_argument("--arg", action="append", default=[], metavar="FIELD=VALUE",
                      help="with --entry: one of its fields, a string; FIELD:=JSON for any other value (repeatable)")
    diff.add_argument("--each-line", action="store_true",
                      help="with --text-file/--raw-file: one input per line (empty lines skipped)")
    diff.add_argument("--allowed", default="", help="comma-separated allowlist for --text")
    diff.add_argument("--left", metavar="ENGINE", help="compare exactly two engines: this one ...")
    diff.add_argument("--right", metavar="ENGINE", help="... against this one")
    add_engine_options(diff)
    diff.set_defaults(handler=main)


def main(args) -> int:
    project = load_project(args.config)
    engines = _engines(project, args)
    if args.each_line and not (args.text_file or args.raw_file):
        raise UsageError("--each-line reads --text-file or --raw-file")
    cases = _cases(project, args)
    bars = Progress(sys.stderr, engines)
    try:
        outcome = api.run(project, engines=engines, cases=cases, case_timeout_s=args.case_timeout,
                          budget_s=args.timeout, jobs=args.jobs, controller=controller(), progress=bars.update)
    finally:
        bars.finish()
    result, document = outcome.result, outcome.document
    if len(cases) == 1 and not args.corpus and not args.each_line:
        return _one(document, result, engines)
    return _many(document, result, args.left)


def _engines(project, args) -> list[str]:
    if not (args.left or args.right):
        return select_engines(project, args.engines)
    if not (args.left and args.right) or args.left == args.right:
        raise UsageError("--left and --right name two different engines")
    if args.engines:
        raise UsageError("--left/--right choose the engines; leave out --engines")
    select_engines(project, f"{args.left},{args.right}")  # unknown names: the usual error
    return [args.left, args.right]


def _cases(project, args) -> list[Case]:
    if args.corpus:
        corpus = api.load_corpus(project, args.corpus)
        problems = [str(problem) for problem in corpus.problems]
        for problem in problems:
            stderr(f"corpus: {problem}")
        if problems:
            raise UsageError(f"{len(problems)} bad corpus lines (listed above); nothing was run")
        if not corpus.cases:
            raise UsageError("the corpus holds no cases")
        return [replace(case, expect=PARITY_ONLY) for case in corpus.cases]
    if args.arg and args.entry is None:
        raise UsageError("--arg goes with --entry NAME")
    if args.entry is not None:
        return [Case(id="input", fn=args.entry, fields=_entry_fields(project, args.entry, args.arg), expect=PARITY_ONLY,
                     tags=(), why="", file="<command line>", line=0, group="diff")]
    fn = "repair" if args.raw is not None or args.raw_file else "parse"
    if fn not in project.entries:
        option = next(f"--{name.replace('_', '-')}" for name in ("text", "text_file", "raw", "raw_file")
                      if getattr(args, name) is not None)
        raise UsageError(f"{option} is a shorthand for the bundled subject's {fn!r} entry, which this project does "
                         f"not have: use --entry NAME --arg FIELD=VALUE (entries: {', '.join(project.entries)})")
    path = args.raw_file or args.text_file
    if args.each_line:
        inputs = [(number, text) for number, text in _lines(path) if text]
        if not inputs:
            raise UsageError(f"{path}: no inputs (every line is empty)")
    else:
        inputs = [(0, _text(args.raw if fn == "repair" else args.text, path))]
    allowed = [name.strip() for name in args.allowed.split(",") if name.strip()]
    fields = lambda text: {name: {"input": text, "allowed": allowed}.get(name) for name in project.entries[fn].args}  # noqa: E731
    return [Case(id=f"line-{number}" if number else "input", fn=fn, fields=fields(text), expect=PARITY_ONLY, tags=(),
                 why="", file=path or "<command line>", line=number, group="diff") for number, text in inputs]


def _entry_fields(project, name: str, pairs: list[str]) -> dict:
    """The entry's fields from `--arg FIELD=TEXT` / `--arg FIELD:=JSON`: each exactly once."""
    if name not in project.entries:
        raise UsageError(f"--entry {name}: no such entry (entries: {', '.join(project.entries)})")
    wanted = list(project.entries[name].args)
    fields: dict = {}
    for pair in pairs:
        field, json_value, value = _pair(pair)
        if field not in wanted:
            raise UsageError(f"--arg {field}: entry {name} has no such field (its fields: {', '.join(wanted)})")
        if json_value:
            try:
                value = json.loads(value)
            except ValueError as error:
                raise UsageError(f"--arg {pair}: not JSON ({error})") from None
        fields[field] = value
    missing = [field for field in wanted if field not in fields]
    if missing:
        raise UsageError(f"--entry {name} needs --arg {missing[0]}=... (its fields: {', '.join(wanted)})")
    return {field: fields[field] for field in wanted}


def _pair(text: str) -> tuple[str, bool, str]:
    """FIELD=TEXT or FIELD:=JSON, split at the first '='."""
    field, equals, value = text.partition("=")
    if not equals or not field.rstrip(":"):
        raise UsageError(f"--arg {text}: expected FIELD=VALUE or FIELD:=JSON")
    return field.removesuffix(":"), field.endswith(":"), value


def _one(document: dict, result, engines: list[str]) -> int:
    """One input: every engine's verdict, marked = (agrees) or ≠."""
    case = document["cases"][0]
    given = verdicts(case)
    for name in engines:
        if name in given:
            shown = given[name]
        elif case["id"] in result.runs[name].failures:
            failure = result.runs[name].failures[case["id"]]
            shown = f"<{failure.kind}: {failure.detail}>"
        else:
            shown = f"<{result.runs[name].status}: {result.runs[name].detail}>"
        mark = "=" if name in given and given[name] == case.get("verdict") else "≠"
        print(f"{mark} {name}: {shown}")
    for problem in result.module_problems:
        print(f"module: {problem}")
    gave_none = [name for name in engines if name not in given]
    agree = len(set(given.values())) == 1 and not gave_none and not result.module_problems
    if gave_none:
        print(f"verdicts INCOMPLETE: no verdict from {', '.join(gave_none)}")
    else:
        print("verdicts agree" if agree else "verdicts DIFFER")
    return 0 if agree else 1


def _many(document: dict, result, left: str | None) -> int:
    """Many inputs: the ones that differ, side by side; then how many."""
    width = max(30, (shutil.get_terminal_size((160, 24)).columns - 3) // 2)
    differing = 0
    for case in document["cases"]:
        given = verdicts(case)
        if len(set(given.values())) <= 1 and len(given) == len(case["cells"]):
            continue
        differing += 1
        where = f"{case['file']}:{case['line']}" if case["line"] else case["file"]
        print(f"≠ {case['id']} ({where}): {_one_line(case['args'])}")
        against = (left, given[left]) if left in given else judged_against(document, case)
        for name in case["cells"]:
            if name not in given:
                print(f"  {name}: no verdict: {'; '.join(case.get('notes', {}).get(name, [])) or case['cells'][name]}")
            elif against is not None and name != against[0] and given[name] != against[1]:
                print(f"  {against[0]:<{width}}   {name}")
                for line in verdict_diff.side_by_side(against[1], given[name], width):
                    print(f"  {line}")
    for problem in result.module_problems:
        print(f"module: {problem}")
    total = len(document["cases"])
    if differing:
        print(f"verdicts DIFFER on {differing} of {total} inputs")
    else:
        print(f"verdicts agree on all {total} inputs")
    return 0 if not differing and not result.module_problems else 1


def _one_line(args: dict) -> str:
    return shortened(" ".join(f"{name}={value!r}" for name, value in args.items()), 100)


def _read(path: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"{path}: cannot read it: {error.strerror}") from None


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{where}: not UTF-8 (byte {error.start + 1} is {data[error.start]:#04x})") from None


def _text(value: str | None, path: str | None) -> str:
    """The input: read from ``path`` when one is given, else the option's own text (argparse
    requires one of the two)."""
    return _decode(_read(path), path) if path else value or ""


def _lines(path: str) -> list[tuple[int, str]]:
    """(line number, text) of each line; a line that is not UTF-8 is an error naming it."""
    return [(number, _decode(raw.removesuffix(b"\r"), f"{path}:{number}"))
            for number, raw in enumerate(_read(path).split(b"\n"), start=1)]
