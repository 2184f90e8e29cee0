"""SpiderMonkey without a browser: the tree's modules in pythonmonkey, Firefox's engine family.

Why: like the ``v8`` kind, a fast headless engine of one of the browser families. pythonmonkey
has one global per process, decorated with non-standard names (console, URL, timers, python,
...); they are deleted before the subject loads, so code that leans on them fails here as it
would in a bare engine. Promise jobs run on a Python event loop owned by the worker. Nothing
can interrupt SpiderMonkey from inside, so a hanging case is the parent's kill, and the heap is
capped through RLIMIT_DATA (set before the engine starts, as RLIMIT_AS breaks its start-up).

Lists run at once, as in the other headless kinds, though SpiderMonkey cannot stop them at a
time limit: a settle (a turn of the event loop and three evals) cost several times the
subject's own work on a fuzz case, and one per list took this engine alone from 2,000 to 4,610
fuzz cases/s (benchmarks/README.md, "Fuzz throughput"). A case that hangs costs its list the
parent's longer wait for a list, after which the driver runs the unanswered cases one at a time
and names it.
"""

from __future__ import annotations

import asyncio
import json
import resource
from typing import Any

from ..base import host_versions, package_version
from ..child import JSChildEngine
from ..worker import JSHost

MEMORY_LIMIT = 2 * 1024 * 1024 * 1024
NON_STANDARD = ["console", "atob", "btoa", "setTimeout", "clearTimeout", "setImmediate", "clearImmediate",
                "setInterval", "clearInterval", "URL", "URLSearchParams", "XMLHttpRequest",
                "XMLHttpRequestEventTarget", "XMLHttpRequestUpload", "ProgressEvent", "Event", "EventTarget",
                "DOMException", "python", "pmEval", "debuggerGlobal", "__core-js_shared__"]


class SpiderMonkeyEngine(JSChildEngine):
    HOST = f"{__name__}:SpiderMonkeyHost"
    OPTIONS = JSChildEngine.OPTIONS
    INSTALL_HINT = "pip install 'extparity[engines]' (pythonmonkey)"
    kind = "spidermonkey"
    batches = True  # one settle per list (JSHost.settle_within), stopped by the parent's kill
    # Over a long fuzz campaign the pythonmonkey worker's heap keeps growing (680 MB after
    # 230,000 cases) and its cases slow down: 80,000 cases ran at 1,120/s in one worker and at
    # 1,620/s with a fresh worker every 20,000 (`extparity fuzz --engines spidermonkey-firefox`).
    recycle_after = 20_000

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "kind": self.kind, "tree": self.project.relative(self.tree),
                "pythonmonkey": package_version("pythonmonkey"), "pminit": package_version("pminit"),
                **self.worker_info, **host_versions()}


class SpiderMonkeyHost(JSHost):
    runs_lists = True  # with JSHost's settle_within, which sets no time limit

    def start(self, options: dict[str, Any]) -> None:
        limit = int(options.get("memory_limit", MEMORY_LIMIT))
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        import pythonmonkey

        self.pm = pythonmonkey
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.evaluate(f"(function (names) {{ names.forEach(function (n) {{ delete globalThis[n]; }}); }})"
                      f"({json.dumps(NON_STANDARD)})")
        self.info = {"spidermonkey": _library_version()}

    def evaluate(self, code: str) -> Any:
        return self.pm.eval(code)

    def settle(self, expression: str) -> Any:
        async def settled() -> Any:
            return await self.pm.eval(expression)

        return self.loop.run_until_complete(settled())

    def close(self) -> None:
        self.loop.close()


def _library_version() -> str | None:
    """The libmozjs build pythonmonkey ships (its file name carries the SpiderMonkey version)."""
    try:
        from pathlib import Path

        import pythonmonkey

        found = sorted(Path(pythonmonkey.__file__).parent.rglob("libmozjs*.so*"))
        return found[0].name if found else None
    except Exception:
        return None
