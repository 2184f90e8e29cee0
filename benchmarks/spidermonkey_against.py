"""The parse inputs of worst_case.py in SpiderMonkey, another checkout's tree next to this one's.

    .venv/bin/python benchmarks/spidermonkey_against.py CHECKOUT [NAME_PART]

pythonmonkey holds one realm per process, so `worst_case.py --against` cannot load two trees in
it; here both trees are linked into that realm under two names (the registry is emptied between
them: each module takes its imports when it is evaluated), and each input is timed in one and the
other alternately, as many calls per eval as `worst_case.py` makes (CPU time, median of 9).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pythonmonkey  # noqa: E402

import js_engines  # noqa: E402
import worst_case  # noqa: E402
from extparity.project.config import load_project  # noqa: E402
from extparity.subject.linker import REGISTRY  # noqa: E402

ENTRY = "['src/agent/tool-call-parser.js'].parseToolCallsCanonical"


def load(root: Path, name: str) -> None:
    """Link `root`'s tree into the realm and keep its parse entry as globalThis[name]."""
    pythonmonkey.eval(f"{REGISTRY} = Object.create(null)")
    for module in js_engines.linked_modules(load_project(root / "pyproject.toml")):
        pythonmonkey.eval(module.script)
    pythonmonkey.eval(f"globalThis.{name} = {REGISTRY}{ENTRY}; 0")


def main() -> None:
    other = Path(sys.argv[1]).resolve()
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    load(other, "BEFORE")
    load(HERE.parent, "AFTER")
    allowed = json.dumps(worst_case.ALLOWED)
    print(f"SpiderMonkey CPU time per call, median of 9, {other} (before) and here (after) alternately; change = after / before - 1")
    for k, (name, text) in enumerate(worst_case.parse_inputs().items()):
        if only not in name:
            continue
        pythonmonkey.eval(f"globalThis.__text{k} = {json.dumps(text, ensure_ascii=True)}; 0")
        calls = {side: f"for (let i = 0; i < 50; i += 1) {side}(__text{k}, {allowed}).charCodeAt(0); 0" for side in ("BEFORE", "AFTER")}
        for call in calls.values():  # warm up
            pythonmonkey.eval(call)
        samples = {side: [] for side in calls}
        for _ in range(9):
            for side, call in calls.items():
                started = time.process_time()
                pythonmonkey.eval(call)
                samples[side].append((time.process_time() - started) / 50)
        before, after = (statistics.median(samples[side]) for side in ("BEFORE", "AFTER"))
        print(f"parse  {name:45} {before * 1e3:8.3f} {after * 1e3:8.3f} {after / before - 1:+6.0%}")


if __name__ == "__main__":
    main()
