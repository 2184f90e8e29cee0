"""`extparity`: run the parity suite, lint and count the corpus, diff inputs across engines.

Exit codes: 0 everything agreed and met expectations; 1 a divergence, an unmet expectation, a
module problem, a failed engine or a bad corpus line; 2 the command line or config is wrong;
130 / 143 interrupted by SIGINT / SIGTERM (nothing half-written is left behind).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path

from . import __version__, report
from .config import ConfigError, Project, load_project
from .corpus import PARITY_ONLY, Case, load_corpus
from .engines.driver import Controller
from .runner import RunResult, run_parity, select_engines


class UsageError(Exception):
    """A command-line problem found before any engine started."""


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that cleanup runs as it does for Ctrl-C."""


def _corpus_paths(args, project: Project) -> list[Path]:
    return [Path(p) for p in args.corpus] if getattr(args, "corpus", None) else list(project.corpus)


def _load(args, project: Project):
    corpus = load_corpus(_corpus_paths(args, project), project.entries, base=project.root)
    return corpus, [str(problem) for problem in corpus.problems]


def check_output(path: str | None) -> Path | None:
    """Fail before any engine starts if a report could not be written there."""
    if not path:
        return None
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a directory, not a file")
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{path}: cannot create its folder: {error.strerror}") from None
    if not os.access(folder, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"{path}: not writable")
    return target


def _write(path: Path | None, text: str) -> str | None:
    if path is None:
        return None
    try:
        report.write_atomic(path, text)
    except OSError as error:
        return f"cannot write {path}: {error.strerror or error}"
    return None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_with_controller(project: Project, cases: list[Case], engines: list[str], args, **extra) -> RunResult:
    """Run parity; on SIGINT/SIGTERM every engine stops, and the interrupt goes on up."""
    return run_parity(project, cases, engines, case_timeout_s=args.case_timeout, budget_s=args.timeout,
                      jobs=args.jobs, controller=Controller(), log=extra.pop("log", _stderr), **extra)


def cmd_run(args) -> int:
    project = load_project(args.config)
    engines = select_engines(project, args.engines)
    outputs = {name: check_output(getattr(args, name)) for name in ("json", "matrix", "timings")}
    corpus, problems = _load(args, project)
    for problem in problems:
        _stderr(f"corpus: {problem}")
    result = run_with_controller(project, corpus.cases, engines, args, check_deviation_cases=not args.corpus)
    result.extra_problems += [f"corpus: {p}" for p in problems]
    print(report.summary_table(result))
    write_errors = [
        _write(outputs["json"], report.dumps(report.json_result(result, project, corpus.files, problems))),
        _write(outputs["matrix"], report.matrix_markdown(result)),
        _write(outputs["timings"], json.dumps(report.timings(result), indent=1, sort_keys=True) + "\n"),
    ]
    failures = report.failure_lines(result) + [e for e in write_errors if e]
    if failures:
        _stderr("\nFAILED:")
        for line in failures:
            _stderr(f"  {line}")
        return 1
    print(f"\n{report.closing_line(result)}")
    return 0


def cmd_corpus_lint(args) -> int:
    """Schema, unique ids, known tags."""
    project = load_project(args.config)
    corpus, problems = _load(args, project)
    for problem in problems:
        print(problem)
    print(f"{len(corpus.cases)} cases in {len(corpus.files)} files, {len(problems)} problems")
    return 1 if problems or not corpus.cases else 0


def cmd_corpus_stats(args) -> int:
    project = load_project(args.config)
    corpus, problems = _load(args, project)
    by_group = Counter(case.group for case in corpus.cases)
    by_outcome = Counter(outcome(case) for case in corpus.cases)
    by_tag = Counter(tag for case in corpus.cases for tag in case.tags)
    width = max([len(k) for k in [*by_group, *by_outcome, *by_tag]] + [10])
    print("group".ljust(width), "cases")
    for group, count in sorted(by_group.items()):
        print(group.ljust(width), count)
    print("\nexpected outcome".ljust(width + 1), "cases")
    for name, count in sorted(by_outcome.items()):
        print(name.ljust(width), count)
    print("\ntag".ljust(width + 1), "cases")
    for tag, count in sorted(by_tag.items()):
        print(tag.ljust(width), count)
    if problems:
        print(f"\n{len(problems)} corpus problems (run `extparity corpus lint`)")
    print(f"\ntotal {len(corpus.cases)}")
    return 1 if problems else 0


def outcome(case: Case) -> str:
    """A coarse label of what the case expects, for counting: its entry and the first listed
    expectation key with an emptiness mark for lists ("parse:calls", "parse:no-calls")."""
    if case.expect == PARITY_ONLY:
        return f"{case.fn}:parity-only"
    if "status" in case.expect:
        return f"{case.fn}:{case.expect['status']}"
    if case.expect.get("error"):
        return f"{case.fn}:error"
    key = next(iter(case.expect))
    value = case.expect[key]
    if isinstance(value, list):
        return f"{case.fn}:{key}" if value else f"{case.fn}:no-{key}"
    return f"{case.fn}:{key}"


def cmd_diff(args) -> int:
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
    result = run_with_controller(project, [item], engines, args, log=lambda line: None)
    r = result.results[0]
    shown = {}
    for name in engines:
        run, failure = result.runs[name], result.runs[name].failures.get("input")
        if name in r.verdicts:
            shown[name] = r.verdicts[name]
        elif failure is not None:
            shown[name] = f"<{failure.kind}: {failure.detail}>"
        else:
            shown[name] = f"<{run.status}: {run.detail}>"
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


def add_run_options(parser: argparse.ArgumentParser, engines_help: str) -> None:
    parser.add_argument("--engines", help=engines_help)
    parser.add_argument("--case-timeout", type=float, default=10.0, metavar="S",
                        help="seconds one case may take in one engine before it is a TIMEOUT (default 10)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="seconds each engine may spend in all (default 600)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="engines running at once (default: all selected)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extparity", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"extparity {__version__}")
    parser.add_argument("--config", help="pyproject.toml with [tool.extparity] (default: nearest)")
    commands = parser.add_subparsers(dest="command", required=True)

    def corpus_option(p):
        p.add_argument("--corpus", action="append", metavar="PATH",
                       help="corpus directory or .jsonl file, repeatable (default: the config's)")

    run = commands.add_parser("run", help="run the parity suite")
    corpus_option(run)
    add_run_options(run, "comma-separated engine names (default: every configured engine)")
    run.add_argument("--json", metavar="PATH", help="write the machine-readable result")
    run.add_argument("--matrix", metavar="PATH", help="write a Markdown matrix: one row per case, one column per engine")
    run.add_argument("--timings", metavar="PATH", help="write per-engine timings (kept out of the deterministic result)")
    run.set_defaults(handler=cmd_run)

    corpus = commands.add_parser("corpus", help="check or count the corpus")
    corpus_commands = corpus.add_subparsers(dest="corpus_command", required=True)
    lint = corpus_commands.add_parser("lint", help="schema, unique ids, known tags")
    corpus_option(lint)
    lint.set_defaults(handler=cmd_corpus_lint)
    stats = corpus_commands.add_parser("stats", help="counts per group, expected outcome and tag")
    corpus_option(stats)
    stats.set_defaults(handler=cmd_corpus_stats)

    diff = commands.add_parser("diff", help="one input through several engines, verdicts side by side")
    source = diff.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="model output to parse")
    source.add_argument("--text-file", metavar="PATH", help="model output to parse, from a file ('-' for stdin)")
    source.add_argument("--raw", help="argument JSON to repair")
    source.add_argument("--raw-file", metavar="PATH", help="argument JSON to repair, from a file ('-' for stdin)")
    diff.add_argument("--allowed", default="", help="comma-separated allowlist for --text")
    add_run_options(diff, "comma-separated engine names (default: every configured engine)")
    diff.set_defaults(handler=cmd_diff)
    return parser


def _terminate(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        return args.handler(args)
    except (ConfigError, UsageError) as error:
        print(f"extparity: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extparity: interrupted; every engine was stopped and no report was written", file=sys.stderr)
        return 130
    except Terminated:
        print("extparity: terminated; every engine was stopped and no report was written", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # `| head` closed the pipe: not a failure. Point stdout at devnull so the interpreter's
        # final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
