"""The release gate's wall time in this checkout next to another checkout's, run alternately.

A check the gate gains has a price in CI minutes; this measures it as a ratio, before and after,
in one invocation, so the machine's load moves both sides alike. Each side runs its own code
(the `extparity` console script's function with that checkout's `py_src` first on the path, from that checkout's
folder, so its own config, corpus and extension are gated) in this venv, with a fresh `dist/`:

    .venv/bin/python benchmarks/gate_time.py --against OLD_CHECKOUT [--repeat 3]

OLD_CHECKOUT is e.g. `git worktree add --detach /tmp/old COMMIT`; it needs `.tools/` (web-ext),
which a symbolic link to this checkout's `.tools` provides. A side whose gate does not pass is
reported as such, since the time of a gate that stopped early says nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
LAUNCH = "import sys; from extparity.cli import main; sys.exit(main())"  # what the console script runs


def gate_seconds(checkout: Path) -> float:
    """One `extparity gate` in `checkout`, from an empty dist/; exits the benchmark if it fails."""
    shutil.rmtree(checkout / "dist", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout / "py_src")}
    # A checkout whose gate pins its shipped files passes them acknowledged, as `make gate` does.
    acknowledged = checkout / "policy" / "acknowledged.json"
    pinned = ["--acknowledged", str(acknowledged)] if json.loads(acknowledged.read_text(encoding="utf-8")) else []
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCH, "gate", *pinned], cwd=checkout, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        sys.exit(f"the gate failed in {checkout} (exit {done.returncode}): " + " / ".join(tail))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (before, after)")
    args = parser.parse_args()
    before, after = [], []
    for _ in range(args.repeat):
        before.append(gate_seconds(args.against.resolve()))
        after.append(gate_seconds(HERE))
    ratios = [a / b for a, b in zip(after, before)]
    print(f"gate wall time, {args.repeat} alternating pairs: before {args.against}, after {HERE}")
    print("before s: " + " ".join(f"{t:.1f}" for t in before))
    print("after s:  " + " ".join(f"{t:.1f}" for t in after))
    print(f"median before {statistics.median(before):.1f} s, after {statistics.median(after):.1f} s, "
          f"after / before per pair: {' '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
