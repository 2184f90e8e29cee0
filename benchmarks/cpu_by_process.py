"""CPU seconds of a command and of every process it starts, by process.

Why: on 2 cores a run whose processes keep both cores busy is bound by CPU time, not by waiting,
and the question is then whose time it is (a browser's, a worker's, the harness's). The kernel
keeps each process's user + system time in /proc/PID/stat; this polls the command's process
tree every 0.1 s and keeps each process's last reading, so a process that ends between two
polls loses at most its last 0.1 s. (The kernel's count of a process's children, getrusage,
leaves out those nobody waited for: a killed worker, a browser's helpers.)

    .venv/bin/python benchmarks/cpu_by_process.py [--min 0.1] -- COMMAND [ARGS...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path
from typing import Callable

TICKS = os.sysconf("SC_CLK_TCK")
POLL_S = 0.1


def process_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far) for every process that can be read."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)
    return table


def descendants(root: int, table: dict[int, tuple[int, float]]) -> set[int]:
    found, frontier = {root}, {root}
    while frontier:
        frontier = {pid for pid, (parent, _) in table.items() if parent in frontier and pid not in found}
        found |= frontier
    return found


def command_line(pid: int) -> list[str]:
    """A process's program and arguments ([] once it ended). Chromium rewrites a helper's
    arguments into one space-separated string, so the words are split on spaces too."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").replace("\0", " ").split()
    except OSError:
        return []


def label(pid: int) -> str:
    """What the process is, in a few words: its program and the argument that tells its role."""
    words = command_line(pid)
    program = Path(words[0]).name if words and words[0] else "?"
    role = next((word for word in words[1:] if word.startswith(("--type=", "-contentproc", "-isForBrowser"))), "")
    module = next((words[k + 1] for k, word in enumerate(words[:-1]) if word == "-m"), "")
    return " ".join(filter(None, [program, module, role]))[:80]


def watch(child: subprocess.Popen, describe: Callable[[int], str]) -> tuple[dict[int, float], dict[int, int], dict[int, str]]:
    """Polls ``child``'s process tree until it exits: each process's CPU seconds, parent and
    ``describe(pid)``, read again until it names a program of its own (a process just forked has
    no command line yet, and Debian's /usr/bin/chromium is a script that execs the browser)."""
    cpu: dict[int, float] = {}
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    while child.poll() is None:
        table = process_table()
        for pid in descendants(child.pid, table):
            parents[pid], seconds = table[pid]
            cpu[pid] = max(cpu.get(pid, 0.0), seconds)
            if names.get(pid, "?") == "?" or names[pid].startswith("sh"):
                names[pid] = describe(pid)
        time.sleep(POLL_S)
    return cpu, parents, names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min", type=float, default=0.1, help="leave out processes under this many CPU seconds")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, _, names = watch(child, label)
    wall = time.perf_counter() - started
    print(f"wall {wall:.1f} s, CPU {sum(seen.values()):.1f} s summed over its {len(seen)} processes (exit {child.returncode})")
    for pid, cpu in sorted(seen.items(), key=lambda item: -item[1]):
        if cpu >= args.min:
            print(f"{cpu:7.2f} s  {'(the command)' if pid == child.pid else names[pid]}")


if __name__ == "__main__":
    main()
