"""The release gate's wall time in this checkout next to another checkout's, run alternately.

A check the gate gains has a price in CI minutes; this measures it as a ratio, before and after,
in one invocation, so the machine's load moves both sides alike. Each side runs its own code
(the `extparity` console script's function with that checkout's `py_src` first on the path, from that checkout's
folder, so its own config, corpus and extension are gated) in this venv, with a fresh `dist/`:

    .venv/bin/python benchmarks/gate_time.py --against OLD_CHECKOUT [--repeat 3] [--only CHECKS]

OLD_CHECKOUT is e.g. `git worktree add --detach /tmp/old COMMIT`; it needs `.tools/` (web-ext),
which a symbolic link to this checkout's `.tools` provides. A side whose gate does not pass is
reported as such, since the time of a gate that stopped early says nothing. `--only` times some
checks (`gate --only`), e.g. a static check whose cost a whole gate's noise would hide.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
LAUNCH = "import sys; from extparity.cli import main; sys.exit(main())"  # what the console script runs


def gate_seconds(checkout: Path, only: str | None = None) -> tuple[float, float]:
    """One `extparity gate` in `checkout`, from an empty dist/: its wall time and the CPU time of
    its process tree (less moved by other work on a loaded machine); exits the benchmark if it fails."""
    shutil.rmtree(checkout / "dist", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout / "py_src")}
    # A checkout whose gate pins its shipped files passes them acknowledged, as `make gate` does.
    acknowledged = checkout / "policy" / "acknowledged.json"
    pinned = ["--acknowledged", str(acknowledged)] if json.loads(acknowledged.read_text(encoding="utf-8")) else []
    selection = ["--only", only] if only else []
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = children.ru_utime + children.ru_stime
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCH, "gate", *pinned, *selection], cwd=checkout, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = children.ru_utime + children.ru_stime - cpu
    if done.returncode != 0 and not (only and "gate PARTIAL" in done.stdout and "FAIL " not in done.stdout):
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        sys.exit(f"the gate failed in {checkout} (exit {done.returncode}): " + " / ".join(tail))
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (before, after)")
    parser.add_argument("--only", help="the checks to run, as `gate --only` takes them")
    args = parser.parse_args()
    before: list[float] = []
    after: list[float] = []
    before_cpu: list[float] = []
    after_cpu: list[float] = []
    for _ in range(args.repeat):
        for times, cpus, checkout in ((before, before_cpu, args.against.resolve()), (after, after_cpu, HERE)):
            wall, cpu = gate_seconds(checkout, args.only)
            times.append(wall)
            cpus.append(cpu)
    ratios = [a / b for a, b in zip(after, before)]
    print(f"gate{' --only ' + args.only if args.only else ''} wall time, {args.repeat} alternating pairs: before {args.against}, after {HERE}")
    print("before s: " + " ".join(f"{t:.2f}" for t in before))
    print("after s:  " + " ".join(f"{t:.2f}" for t in after))
    print(f"median before {statistics.median(before):.2f} s, after {statistics.median(after):.2f} s, "
          f"after / before per pair: {' '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")
    print(f"CPU s, median: before {statistics.median(before_cpu):.2f}, after {statistics.median(after_cpu):.2f} "
          f"(after / before {statistics.median(after_cpu) / statistics.median(before_cpu):.2f})")


if __name__ == "__main__":
    main()
