"""What the second environments add to the release gate's time, side by side.

The bundled project's gate (``api.gate``, as `extparity gate` runs it: artifacts, web-ext lint,
every configured engine, every check) with its configured environments and with none
(``environments = []``), alternately in one invocation, so both see the same machine. Reported:
each variant's median wall time, the difference and the ratio, and that both gates passed.

    .venv/bin/python benchmarks/gate_environment.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

from extparity import api
from extparity.project.config import load_project
from extparity.project.environments import expand


def timed_gate(project) -> tuple[float, bool]:
    started = time.perf_counter()
    gated = api.gate(project)
    return time.perf_counter() - started, gated.ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    project = load_project()
    corpus = api.load_corpus(project)
    variants = {"one environment": replace(project, gate=replace(project.gate, environments=())), "with environments": project}
    times: dict[str, list[float]] = {name: [] for name in variants}
    passed = True
    for _ in range(args.repeat):
        for name, variant in variants.items():
            wall, ok = timed_gate(variant)
            times[name].append(wall)
            passed &= ok
    environments = ", ".join(e.name for e in expand(project.gate.environments, project.trees)) or "none"
    print(f"gate on {len(corpus.cases)} cases, {len(project.engines)} engines, median of {args.repeat} alternate runs; "
          f"environments run: {environments}; every gate passed: {passed}")
    base, full = (statistics.median(times[name]) for name in variants)
    for name in variants:
        print(f"  {name:18} {statistics.median(times[name]):6.1f} s   (runs: {', '.join(f'{t:.1f}' for t in times[name])})")
    print(f"  added              {full - base:6.1f} s   ({full / base:.2f}x the gate with one environment)")


if __name__ == "__main__":
    main()
