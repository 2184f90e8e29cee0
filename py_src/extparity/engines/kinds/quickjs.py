"""QuickJS: the tree's modules in a bare ECMAScript engine (quickjs-ng), no browser around them.

Why it is in the harness: it is fast and deterministic, and it catches code that silently relies
on browser-only globals. The binding has no module loader, so the tree is linked into scripts
(``linker.py``); each session is a worker process (``child.py``).
"""

from __future__ import annotations

from typing import Any

from ..base import host_versions, package_version
from ..child import JSChildEngine
from ..worker import Interrupted, JSHost


class QuickJSEngine(JSChildEngine):
    HOST = f"{__name__}:QuickJSHost"
    OPTIONS = {**JSChildEngine.OPTIONS, "memory_limit": int, "stack_size": int}
    INSTALL_HINT = "pip install quickjs-ng"
    kind = "quickjs"
    batches = True  # one eval per list under QuickJS's own time limit (QuickJSHost.settle_within)

    def describe(self) -> dict[str, Any]:
        binding = package_version("quickjs-ng")
        return {
            "engine": self.name,
            "kind": self.kind,
            "tree": self.project.relative(self.tree),
            # Binding versions are X.Y.Z.P where X.Y.Z is the upstream quickjs-ng tag it embeds.
            "quickjs_ng": ".".join(binding.split(".")[:3]) if binding else None,
            "quickjs_ng_binding": binding,
            "memory_limit": self.options.get("memory_limit", QuickJSHost.MEMORY_LIMIT),
            **host_versions(),
        }


class QuickJSHost(JSHost):
    MEMORY_LIMIT = 512 * 1024 * 1024
    name = "QuickJS"
    runs_lists = True

    def start(self, options: dict[str, Any]) -> None:
        import quickjs

        self.ctx = quickjs.Context()
        self.ctx.set_memory_limit(int(options.get("memory_limit", self.MEMORY_LIMIT)))
        if options.get("stack_size"):
            self.ctx.set_max_stack_size(int(options["stack_size"]))

    def load_module(self, module: dict[str, str]) -> None:
        """Module code proper; a throw at its top level rejects the evaluation promise."""
        self.ctx.set("__extparity_p", self.ctx.module(module["module"]))
        self.evaluate("globalThis.__extparity_st = null; __extparity_p.then("
                      "function () { __extparity_st = 'ok'; },"
                      " function (e) { __extparity_st = String(e) + ((e && e.stack) ? '\\n' + e.stack : ''); });")
        self.run_jobs()
        state = self.evaluate("__extparity_st")
        if state != "ok":
            raise RuntimeError(f"{state} (lines as on disk)")

    def evaluate(self, code: str) -> Any:
        return self.ctx.eval(code)

    def settle_within(self, cases_json: str, timeout_s: float) -> str | None:
        """QuickJS's time limit interrupts an eval and each promise job alike ("InternalError:
        interrupted"), and the context stays usable; the limit is lifted for everything else."""
        import quickjs

        self.ctx.set_time_limit(timeout_s)
        try:
            return self.run_batch(cases_json)
        except quickjs.JSException as exc:
            if str(exc).startswith("InternalError: interrupted"):
                raise Interrupted from None
            raise
        finally:
            self.ctx.set_time_limit(-1)

    def run_jobs(self) -> None:
        while self.ctx.execute_pending_job():
            pass
