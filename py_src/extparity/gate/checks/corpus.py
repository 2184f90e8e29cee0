"""corpus: cases exist, for every entry, at least the configured minimum. A gate on zero cases,
or on an entry no case calls, proves nothing about it."""

from __future__ import annotations

from collections import Counter

from ...project.words import count
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project, corpus = gate.project, gate.corpus
    counts = Counter(case.fn for case in corpus.cases)
    problems = [] if corpus.cases else ["no cases: a gate on zero cases proves nothing"]
    problems += [f"corpus: {problem}" for problem in corpus.problems]
    for entry in project.entries if corpus.cases else ():
        minimum = project.gate.minimum_cases.get(entry, 1)
        if counts[entry] == 0:
            problems.append(f"{entry}: no cases, so the entry is untested")
        elif counts[entry] < minimum:
            problems.append(f"{entry}: {count(counts[entry], 'case')}, fewer than the {minimum} that "
                            f"[tool.extparity.gate].minimum_cases asks for")
    shown = ", ".join(f"{entry} {counts[entry]}" + (f" (minimum {project.gate.minimum_cases[entry]})"
                                                    if entry in project.gate.minimum_cases else "")
                      for entry in project.entries)
    return problems, f"{count(len(corpus.cases), 'case')} in {count(len(corpus.files), 'file')}: {shown}"


CHECK = Spec("corpus",
             "no case, an entry no case calls, fewer cases than `minimum_cases` for an entry, a "
             "malformed corpus line",
             "corpus, [tool.extparity.gate].minimum_cases", verdict)
