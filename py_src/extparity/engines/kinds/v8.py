"""V8 without a browser: the tree's modules in mini-racer, the engine family of Chromium.

Why: a fast, in-process-speed V8 (no browser start-up) for fuzzing and for catching
engine-family differences early; Chromium stays the ground truth for the extension's own
contexts. mini-racer has no module loader, so the linker's script form is evaluated. Each
session is a worker process: V8 aborts its process on a fatal out-of-memory, and a runaway
promise continuation wedges the isolate for good, both of which the parent survives by killing
the worker.
"""

from __future__ import annotations

from typing import Any

from ..base import host_versions, package_version
from ..child import JSChildEngine
from ..worker import Interrupted, JSHost, batch_call

MEMORY_LIMIT = 512 * 1024 * 1024


class V8Engine(JSChildEngine):
    HOST = f"{__name__}:V8Host"
    OPTIONS = {**JSChildEngine.OPTIONS, "memory_limit": int}
    INSTALL_HINT = "pip install 'extparity[engines]' (mini-racer)"
    kind = "v8"
    batches = True  # mini-racer's per-eval cost (a thread hop) is 100x QuickJS's: run lists at once

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "kind": self.kind, "tree": self.project.relative(self.tree),
                "mini_racer": package_version("mini-racer"),
                "memory_limit": self.options.get("memory_limit", MEMORY_LIMIT), **self.worker_info, **host_versions()}


class V8Host(JSHost):
    name = "V8"
    runs_lists = True

    def start(self, options: dict[str, Any]) -> None:
        from py_mini_racer import MiniRacer

        self.racer = MiniRacer()  # created here, in the worker's main thread, with no running loop
        self.max_memory = int(options.get("memory_limit", MEMORY_LIMIT))
        self.info = {"v8": self.racer.v8_version}
        # mini-racer's own additions to the global: a bare engine has none of them. The timers
        # are non-configurable but writable, so they are overwritten rather than deleted.
        self.evaluate("delete globalThis.console; delete globalThis.__timer_manager;"
                      " globalThis.setTimeout = undefined; globalThis.clearTimeout = undefined;")

    def evaluate(self, code: str, timeout_s: float | None = None) -> Any:
        return self.racer.eval(code, timeout_sec=timeout_s, max_memory=self.max_memory)

    def settle_within(self, cases_json: str, timeout_s: float) -> str | None:
        """V8 interrupts synchronous code (the batch runner awaits only entries that return
        promises); a runaway promise continuation wedges the isolate instead."""
        from py_mini_racer import JSTimeoutException

        try:
            self.evaluate("globalThis.__extparity_out = null;"
                          f"{batch_call(cases_json)}.then(function (r) {{ __extparity_out = r; }});", timeout_s)
        except JSTimeoutException:
            raise Interrupted from None
        out = self.evaluate("__extparity_out")
        return str(out) if isinstance(out, str) else None

    def close(self) -> None:
        self.racer.close()  # without it the worker's exit can hang in MiniRacer.__del__
