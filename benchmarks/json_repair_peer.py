"""The reference's repair next to json-repair's, on json-repair's own test strings and on the
worst-case rows, timed alternately in one process.

json-repair (a benchmark-only dependency, the `bench` extra) is the repair library agents
commonly reach for. The two do different jobs: json-repair guesses (it closes strings, quotes
bare words, drops junk) and always answers, where the reference completes only what needs no
guess and refuses the rest. What is compared is what a caller waits for: `repair_json(text)`,
which returns JSON text (and is the standard library's `json.loads` + `json.dumps` whenever the
text is valid), against `repair_arguments_canonical(text)`, which returns the verdict's text.

    .venv/bin/python benchmarks/json_repair_peer.py [--repeat 9]

An input is *valid* when the standard library's `json.loads` reads it, else *broken*. The
targets (issue 26): within 3x of json-repair on valid inputs, at least 5x faster on broken ones.
The strings are json-repair's (benchmarks/json_repair_strings.json says from where), with the
four payloads its performance tests build, and the repair rows of worst_case.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "generators"))
sys.path.insert(0, str(HERE.parent / "py_src"))  # the bundled reference (not in the wheel)

import json_repair  # noqa: E402
import worst_case  # noqa: E402
from toolcalls import repair_arguments_canonical  # noqa: E402

# Each sample runs a call this long at least (a short string is called many times per sample).
SAMPLE_SECONDS = 2e-3


def performance_payloads() -> dict[str, str]:
    """The payloads json-repair's tests/test_performance.py builds, built the same way."""
    def unclosed(target, fragment):
        base, pieces, index = '{"a": "', [], 0
        while len(base) + len(",".join(pieces)) < target:
            pieces.append(fragment(index))
            index += 1
        return base + ",".join(pieces)

    mixed = unclosed(35_000, lambda k: 'frag"ment' if k % 3 == 0 else ("'fragment'" if k % 3 == 1 else "fragment"))
    return {
        "perf: unclosed string of 3,000 fragments": '{"a": "' + ",".join("fragment" for _ in range(3000)),
        "perf: unclosed string, mixed quotes": mixed,
        "perf: far quote after 10,000 'x,'": '{"a": "' + ("x," * 10_000) + '" tail',
        "perf: far quote after 5,000 'x}'": '{"a": "' + ("x}" * 5_000) + '" tail',
    }


def is_valid(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def peer(text: str):
    """json-repair's answer as a caller gets it; an exception it raises is its answer too."""
    try:
        return json_repair.repair_json(text)
    except RecursionError:
        return None


def calls_per_sample(call) -> int:
    started = time.process_time()
    call()
    once = max(time.process_time() - started, 1e-7)
    return max(1, int(SAMPLE_SECONDS / once))


def paired(ours, theirs, repeat: int) -> tuple[float, float]:
    """Median CPU seconds per call of each, sampled alternately so both see the same load."""
    ours(), theirs()  # warm up
    counts = (calls_per_sample(ours), calls_per_sample(theirs))
    samples = ([], [])
    for _ in range(repeat):
        for k, call in enumerate((ours, theirs)):
            started = time.process_time()
            for _ in range(counts[k]):
                call()
            samples[k].append((time.process_time() - started) / counts[k])
    return statistics.median(samples[0]), statistics.median(samples[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    source = json.loads((HERE / "json_repair_strings.json").read_text(encoding="utf-8"))
    tests = [(f"{item['from']} #{k}", item["text"]) for k, item in enumerate(source["strings"])]
    tests += list(performance_payloads().items())
    rows = {name: text for name, text in worst_case.repair_inputs().items()}

    results = []
    for group, inputs in (("json-repair tests", tests), ("worst-case rows", list(rows.items()))):
        for name, text in inputs:
            ours, theirs = paired(lambda: repair_arguments_canonical(text), lambda: peer(text), args.repeat)
            results.append((group, name, is_valid(text), ours, theirs, peer(text) is None))

    print(f"CPU time per call, median of {args.repeat} samples, the two timed alternately; "
          f"speed-up = json-repair's time / the reference's")
    print(f"{'inputs':40} {'kind':7} {'count':>5} {'reference ms':>12} {'json-repair ms':>14} {'speed-up':>8} "
          f"{'rows meeting the target':>24}")
    for group in ("json-repair tests", "worst-case rows"):
        for valid, kind, target in ((True, "valid", 1 / 3), (False, "broken", 5.0)):
            chosen = [r for r in results if r[0] == group and r[2] == valid]
            if not chosen:
                continue
            ours, theirs = sum(r[3] for r in chosen), sum(r[4] for r in chosen)
            meeting = sum(1 for r in chosen if r[4] / r[3] >= target)
            print(f"{group:40} {kind:7} {len(chosen):5d} {ours * 1e3:12.3f} {theirs * 1e3:14.3f} {theirs / ours:8.2f} "
                  f"{meeting:>17d} of {len(chosen):>3d}")
    print("\nrows missing the target (valid: reference more than 3x slower; broken: less than 5x faster), and every worst-case row:")
    print(f"{'input':48} {'kind':7} {'reference ms':>12} {'json-repair ms':>14} {'speed-up':>8}")
    for group, name, valid, ours, theirs, raised in results:
        target = 1 / 3 if valid else 5.0
        if group == "worst-case rows" or theirs / ours < target:
            note = "  (json-repair raises RecursionError)" if raised else ""
            print(f"{name[:48]:48} {'valid' if valid else 'broken':7} {ours * 1e3:12.4f} {theirs * 1e3:14.4f} "
                  f"{theirs / ours:8.2f}{note}")


if __name__ == "__main__":
    main()
