"""`extparity`: run the parity suite, lint and count the corpus, diff one input across engines.

Exit codes: 0 everything agreed and met expectations; 1 a divergence, an unmet expectation, a
module problem, a crashed engine or a bad corpus line; 2 the command line or config is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from . import __version__, report
from .config import ConfigError, load_config
from .corpus import Case, load_corpus
from .runner import ENGINE_NAMES, REFERENCE, SelectionError, parse_engine_list, run_parity


def _corpus_paths(args, config) -> list[Path]:
    return [Path(p) for p in args.corpus] if args.corpus else list(config.corpus)


def _load(args, config):
    corpus = load_corpus(_corpus_paths(args, config), base=config.root)
    return corpus, [str(problem) for problem in corpus.problems]


def cmd_run(args) -> int:
    config = load_config(args.config)
    engines = parse_engine_list(args.engines)
    corpus, problems = _load(args, config)
    for problem in problems:
        print(f"corpus: {problem}", file=sys.stderr)
    result = run_parity(config, corpus.cases, engines, timeout_s=args.timeout)
    print(report.summary_table(result))
    failures = report.failure_lines(result) + [f"corpus: {p}" for p in problems]
    if args.json:
        report.write_json(Path(args.json), report.json_result(result, config, corpus.files, problems))
    if args.matrix:
        Path(args.matrix).parent.mkdir(parents=True, exist_ok=True)
        Path(args.matrix).write_text(report.matrix_markdown(result), encoding="utf-8")
    if args.timings:
        Path(args.timings).parent.mkdir(parents=True, exist_ok=True)
        Path(args.timings).write_text(json.dumps(report.timings(result), indent=1, sort_keys=True) + "\n")
    if failures:
        print("\nFAILED:", file=sys.stderr)
        for line in failures:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"\nall {len(corpus.cases)} cases agree across {', '.join(engines)} and meet their expectations")
    return 0


def cmd_corpus_lint(args) -> int:
    """Schema, unique ids, known tags, and every case loads (the reference can run it)."""
    config = load_config(args.config)
    corpus, problems = _load(args, config)
    for problem in problems:
        print(problem)
    print(f"{len(corpus.cases)} cases in {len(corpus.files)} files, {len(problems)} problems")
    return 1 if problems or not corpus.cases else 0


def cmd_corpus_stats(args) -> int:
    config = load_config(args.config)
    corpus, problems = _load(args, config)
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
    """A coarse label of what the case expects, for counting."""
    expect = case.expect
    if case.fn == "repair":
        return f"repair:{expect.get('status', 'unspecified')}"
    if expect.get("error"):
        return "parse:error"
    if "calls" in expect:
        return "parse:calls" if expect["calls"] else "parse:no-calls"
    return "parse:rejected-only"


def cmd_diff(args) -> int:
    """Run one input through the chosen engines and show where the verdicts differ."""
    config = load_config(args.config)
    engines = parse_engine_list(args.engines)
    if args.raw is not None or args.raw_file:
        fn, value, allowed = "repair", _text(args.raw, args.raw_file), None
    else:
        fn, value = "parse", _text(args.text, args.text_file)
        allowed = [name.strip() for name in args.allowed.split(",") if name.strip()]
    item = Case(id="input", fn=fn, input=value, allowed=allowed, expect={}, tags=(), why="",
                file="<command line>", line=0, group="diff")
    result = run_parity(config, [item], engines, timeout_s=args.timeout, progress=lambda line: None)
    verdicts = {}
    for name in engines:
        run = result.runs[name]
        verdicts[name] = run.verdicts.get("input") or f"<{run.case_errors.get('input') or run.status + ': ' + run.detail}>"
    reference = verdicts.get(REFERENCE, next(iter(verdicts.values())))
    for name, verdict in verdicts.items():
        mark = "=" if verdict == reference else "≠"
        print(f"{mark} {name}: {verdict}")
    agree = len(set(verdicts.values())) == 1 and not result.module_problems
    for problem in result.module_problems:
        print(f"module: {problem}")
    print("verdicts agree" if agree else "verdicts DIFFER")
    return 0 if agree else 1


def _text(value: str | None, path: str | None) -> str:
    if path:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return value


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
    run.add_argument("--engines", default=",".join(ENGINE_NAMES), help=f"comma-separated (default: {','.join(ENGINE_NAMES)})")
    run.add_argument("--json", metavar="PATH", help="write the machine-readable result")
    run.add_argument("--matrix", metavar="PATH", help="write a Markdown matrix: one row per case, one column per engine")
    run.add_argument("--timings", metavar="PATH", help="write per-engine timings (kept out of the deterministic result)")
    run.add_argument("--timeout", type=float, default=300.0, help="seconds each engine may spend on cases")
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
    diff.add_argument("--engines", default="python,quickjs-chrome,quickjs-firefox")
    diff.add_argument("--timeout", type=float, default=60.0)
    diff.set_defaults(handler=cmd_diff)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ConfigError, SelectionError) as error:
        print(f"extparity: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `| head` closed the pipe: not a failure. Point stdout at devnull so the interpreter's
        # final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
