"""What coverage adds to a run's and to the gate's wall time, measured side by side.

Alternately, `repeat` times: `extparity run` over every configured engine without and with
`--coverage`, and `extparity gate` of this checkout; with `--against DIR` (a checkout of a commit
before coverage, e.g. `git worktree add /tmp/before 3574734 && ln -s $PWD/.tools /tmp/before/.tools`) also that checkout's gate, run by this
interpreter with DIR's sources first on the path. Prints the median wall time of each and the
difference. Needs the browsers: run it under the heavy-command lock.

Usage: python benchmarks/coverage_cost.py [--repeat N] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(command: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=command_root(command), capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed


def command_root(command: list[str]) -> str:
    return str(Path(command[command.index("--config") + 1]).parent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="a checkout without coverage, for its gate's time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        cli = [sys.executable, "-m", "extparity.cli", "--config", str(REPO / "pyproject.toml")]
        commands = {
            "run": (cli + ["run", "--json", str(out / "a.json")], None),
            "run --coverage": (cli + ["run", "--json", str(out / "b.json"), "--coverage", str(out / "c.json")], None),
            "gate (with its coverage check)": (cli + ["gate", "--json", str(out / "g.json")], None),
        }
        if args.against:
            before = args.against.resolve()
            env = {**os.environ, "PYTHONPATH": str(before / "py_src")}
            commands[f"gate of {before.name} (no coverage)"] = (
                [sys.executable, "-m", "extparity.cli", "--config", str(before / "pyproject.toml"), "gate",
                 "--json", str(out / "h.json")], env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, (command, env) in commands.items():
                times[name].append(timed(command, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"wall time, median of {args.repeat} alternating runs")
    for name, value in medians.items():
        print(f"  {name:40s} {value:6.1f} s   ({', '.join(f'{v:.1f}' for v in times[name])})")
    print(f"  coverage adds to the run              {medians['run --coverage'] - medians['run']:+6.1f} s")
    gate_before = next((v for k, v in medians.items() if k.startswith("gate of ")), None)
    if gate_before is not None:
        print(f"  coverage adds to the gate             {medians['gate (with its coverage check)'] - gate_before:+6.1f} s")


if __name__ == "__main__":
    main()
