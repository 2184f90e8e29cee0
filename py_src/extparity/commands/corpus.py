"""`extparity corpus lint|stats`: the corpus contract checked, and the corpus counted."""

from __future__ import annotations

from collections import Counter

from .. import api
from ..corpus.cases import PARITY_ONLY, Case
from ..project.config import load_project
from ..project.words import count
from .common import add_corpus_option


def add_parser(commands) -> None:
    corpus = commands.add_parser("corpus", help="check or count the corpus")
    sub = corpus.add_subparsers(dest="corpus_command", required=True)
    lint = sub.add_parser("lint", help="schema, unique ids, known tags")
    add_corpus_option(lint)
    lint.set_defaults(handler=lint_main)
    stats = sub.add_parser("stats", help="counts per group, expected outcome and tag")
    add_corpus_option(stats)
    stats.set_defaults(handler=stats_main)


def lint_main(args) -> int:
    project = load_project(args.config)
    corpus = api.load_corpus(project, args.corpus)
    problems = [str(problem) for problem in corpus.problems]
    for problem in problems:
        print(problem)
    print(f"{count(len(corpus.cases), 'case')} in {count(len(corpus.files), 'file')}, {count(len(problems), 'problem')}")
    return 1 if problems or not corpus.cases else 0


def stats_main(args) -> int:
    project = load_project(args.config)
    corpus = api.load_corpus(project, args.corpus)
    problems = [str(problem) for problem in corpus.problems]
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
    """A coarse label of what the case expects, for counting: its entry and its first listed
    expectation key, with an emptiness mark for lists ("parse:calls", "parse:no-calls")."""
    if not isinstance(case.expect, dict):  # PARITY_ONLY, the only other form the loader accepts
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
