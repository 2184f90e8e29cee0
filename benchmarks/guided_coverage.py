"""Guided against unguided generation: arcs of the Python reference (line-to-line transitions
in its files, branches taken) and lines reached by the same number of generated cases, from
the same seed, side by side, at a few points along the way.

Two starting corpora: the bundled one (2,300 cases that already reach most of the reference, so
the question is what generation adds beyond it) and every 100th of its cases (what guidance does
when the corpus is thin). Only generation and tracing run here: the engines judge cases, they
do not choose them, so a campaign with engines reaches exactly these arcs.

    .venv/bin/python benchmarks/guided_coverage.py [--cases 5000] [--seed 20261201]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py_src"))

from extparity.corpus.cases import load_corpus  # noqa: E402
from extparity.fuzz.campaign import CaseFactory, seed_cases  # noqa: E402
from extparity.fuzz.guided import guided_factory  # noqa: E402
from extparity.project.config import load_project  # noqa: E402


def measure(project, seeds, seed: int, cases: int, guided: bool, points: list[int]) -> dict:
    base = CaseFactory(project, seeds, seed)
    factory = guided_factory(project, base, seeds)  # its coverage and corpus arcs serve both modes
    reached: set = set()
    rows = []
    started = time.perf_counter()
    for index in range(cases):
        if guided:
            factory.make(index)
            arcs = factory.last_arcs
        else:
            case, _ = base.make(index)
            arcs = factory.coverage.arcs(case)
        reached |= arcs
        if index + 1 in points:
            lines = {(name, line) for name, _, line in reached}
            rows.append((index + 1, len(reached), len(lines), len(reached - factory.corpus_reached)))
    return {"rows": rows, "corpus": factory.corpus_arcs, "seconds": time.perf_counter() - started,
            "kept": sum(len(kept) for kept in factory.kept.values()) if guided else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    project = load_project(ROOT / "pyproject.toml")
    corpus = load_corpus(list(project.corpus), project.entries, base=project.root).cases
    points = sorted({max(1, args.cases * k // 4) for k in (1, 2, 4)} | {100})
    print(f"arcs / lines of the Python reference reached by generated cases (seed {args.seed}); "
          f"'beyond' = arcs the starting corpus does not reach")
    print(f"{'starting corpus':26} {'mode':9} {'cases':>6} {'arcs':>6} {'lines':>6} {'beyond':>7}")
    for label, cases in (("bundled", corpus), ("every 100th case", corpus[::100])):
        seeds = seed_cases(cases)
        for guided in (False, True):
            result = measure(project, seeds, args.seed, args.cases, guided, points)
            name = f"{label} ({len(cases)}; {result['corpus']} arcs)"
            for count, arcs, lines, beyond in result["rows"]:
                print(f"{name:26} {'guided' if guided else 'unguided':9} {count:6} {arcs:6} {lines:6} {beyond:7}")
            print(f"{'':26} {'':9} {result['seconds']:.0f}s of generation and tracing"
                  + (f"; {result['kept']} inputs kept" if guided else ""))


if __name__ == "__main__":
    main()
