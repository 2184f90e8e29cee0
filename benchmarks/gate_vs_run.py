"""The release gate's wall time against `extparity run` of the same engines, and the browsers each
starts, in one or more checkouts, run interleaved.

Why: issue 39 holds the bundled gate to at most 3x a run of the same engines, and no browser
launched twice in one gate. Both are ratios and counts of one invocation, so the machine's load
moves every side alike. Each command runs in its checkout's folder with that checkout's
`py_src` first on the path and a fresh `dist/`; its process tree is polled every 0.1 s from
/proc (as `cpu_by_process.py` does), which gives its CPU seconds summed over every process and the
browsers it started: a `chromium` process without `--type=`, or a `firefox-esr` one without
`-contentproc`, that Playwright's driver (`node`) started.

    .venv/bin/python benchmarks/gate_vs_run.py [--against OLD_CHECKOUT] [--repeat 3]

OLD_CHECKOUT (e.g. `git worktree add --detach /tmp/old COMMIT`, with a link to this checkout's
`.tools`) is timed too, its gate and run interleaved with this checkout's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_by_process import command_line, watch  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
LAUNCH = "import sys; from extparity.cli import main; sys.exit(main())"  # what the console script runs


def browser(pid: int) -> str:
    """"chromium" or "firefox" for a browser's main process, else its program's name ("?" for
    none yet)."""
    words = command_line(pid)
    name = Path(words[0]).name if words and words[0] else "?"
    if name == "chromium" and not any(word.startswith("--type=") for word in words):
        return "chromium"
    if name.startswith("firefox") and "-contentproc" not in words:
        return "firefox"
    return name


def measure(checkout: Path, command: list[str]) -> dict:
    """One command in ``checkout``: wall seconds, CPU seconds of its tree, browsers started."""
    shutil.rmtree(checkout / "dist", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout / "py_src")}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", LAUNCH, *command], cwd=checkout, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cpu, parents, names = watch(child, browser)
    wall = time.perf_counter() - started
    output = child.stdout.read() if child.stdout else ""
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed in {checkout} (exit {child.returncode}): "
                 + " / ".join(output.strip().splitlines()[-3:]))
    # Only a browser Playwright's driver started is a launch: a browser's helpers (Chromium's
    # zygotes, Firefox's fork server) carry its command line from fork to exec, and the harness
    # asks each executable its `--version`.
    launches = [name for pid, name in names.items() if name in ("chromium", "firefox") and names.get(parents[pid]) == "node"]
    return {"wall": wall, "cpu": sum(cpu.values()), "chromium": launches.count("chromium"),
            "firefox": launches.count("firefox"), "timing": next(
                (line.strip() for line in output.splitlines() if "engine run" in line), "")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout, timed interleaved with this one")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (each runs every command once)")
    args = parser.parse_args()
    checkouts = [("before", args.against.resolve())] if args.against else []
    checkouts.append(("after" if args.against else "this", HERE))
    # `run --coverage`: the gate's own run measures block coverage in Chromium (its coverage check).
    commands = {"gate": ["gate", "--acknowledged", "policy/acknowledged.json"], "run": ["run"],
                "run --coverage": ["run", "--coverage", os.devnull]}
    seen: dict[tuple[str, str], list[dict]] = {}
    for round_ in range(args.repeat):
        for side, checkout in checkouts:
            for name, command in commands.items():
                result = measure(checkout, command)
                seen.setdefault((side, name), []).append(result)
                print(f"round {round_ + 1} {side} {name}: {result['wall']:.1f} s wall, {result['cpu']:.1f} s CPU, "
                      f"browsers started: {result['chromium']} Chromium, {result['firefox']} Firefox", flush=True)
                if result["timing"]:
                    print(f"    {result['timing']}", flush=True)
    print()
    def walls(results: list[dict]) -> str:
        return ", ".join(f"{r['wall']:.1f}" for r in results)

    for side, _ in checkouts:
        gate, run = seen[(side, "gate")], seen[(side, "run")]
        ratios = [g["wall"] / r["wall"] for g, r in zip(gate, run)]
        for name, results in (("gate", gate), ("run", run), ("run --coverage", seen[(side, "run --coverage")])):
            print(f"{side} {name}: median {statistics.median(r['wall'] for r in results):.1f} s wall "
                  f"({walls(results)}), median "
                  f"{statistics.median(r['cpu'] for r in results):.1f} s CPU, browsers started "
                  f"{'/'.join(str(r['chromium'] + r['firefox']) for r in results)}")
        print(f"{side} gate / run per round: {' '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
