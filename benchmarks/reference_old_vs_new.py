"""Another checkout's Python reference next to this one's, on the fuzz campaign's own cases.

Case i of seed S is made by the harness's CaseFactory exactly as `extparity fuzz --seed S` makes
it; each goes through both checkouts' `toolcalls` in this process, and the canonical verdicts
are compared as UTF-8 bytes (lone surrogates passed through). A rewrite of the reference for speed
must give the same bytes for every case; the CPU time each side spent is printed too.

    .venv/bin/python benchmarks/reference_old_vs_new.py CHECKOUT --seed 20261226 --cases 200000

Exit status 1 when any case differs (the first five are printed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "py_src"))  # the bundled reference (not in the wheel)

import toolcalls  # noqa: E402
from extparity.corpus.cases import load_corpus  # noqa: E402
from extparity.fuzz.campaign import CaseFactory, seed_cases  # noqa: E402
from extparity.project.config import load_project  # noqa: E402
from worst_case import reference_in  # noqa: E402

FUNCTIONS = {"parse": "parse_tool_calls_canonical", "repair": "repair_arguments_canonical"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", type=Path, help="the other checkout (e.g. `git worktree add --detach DIR COMMIT`)")
    parser.add_argument("--seed", type=int, default=20261226)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--cases", type=int, default=200_000)
    args = parser.parse_args()
    other = reference_in(args.checkout.resolve())
    if Path(other.__file__).resolve() == Path(toolcalls.__file__).resolve():
        raise SystemExit(f"{args.checkout}: that is this checkout's reference")
    project = load_project(HERE.parent / "pyproject.toml")
    corpus = load_corpus(list(project.corpus), project.entries, base=project.root)
    factory = CaseFactory(project, seed_cases(corpus.cases), args.seed)
    counts: dict[str, int] = {}
    differing = 0
    seconds = {"other": 0.0, "here": 0.0}
    for index in range(args.start, args.start + args.cases):
        case, generator = factory.make(index)
        name = FUNCTIONS[case.fn]
        values = [case.fields[arg] for arg in project.entries[case.fn].args]
        verdicts = {}
        for side, module in (("other", other), ("here", toolcalls)):
            started = time.process_time()
            verdicts[side] = getattr(module, name)(*values)
            seconds[side] += time.process_time() - started
        counts[case.fn] = counts.get(case.fn, 0) + 1
        if verdicts["other"].encode("utf-8", "surrogatepass") != verdicts["here"].encode("utf-8", "surrogatepass"):
            differing += 1
            if differing <= 5:
                print(f"case {index} ({case.fn}, generator {generator}) differs:\n  there {verdicts['other'][:300]}\n"
                      f"  here  {verdicts['here'][:300]}")
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.cases - 1} "
          f"({', '.join(f'{fn} {n}' for fn, n in sorted(counts.items()))}): {differing} differ; "
          f"CPU in the references: {args.checkout} {seconds['other']:.1f} s, here {seconds['here']:.1f} s")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
