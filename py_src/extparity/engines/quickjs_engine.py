"""QuickJS engine: the extension's modules in a bare ECMAScript engine, no browser around them.

Why it is in the harness: it is fast and deterministic, and it catches code that silently
relies on browser-only globals. One fresh context per tree copy ("quickjs-chrome",
"quickjs-firefox"), each in its own child process (see ``quickjs_worker``) so a crash or a
hang costs this engine's results, not the harness.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from .base import Engine, EngineRun, ModuleConfig, chunk_cases, host_versions, package_version

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # directory holding the extparity package


class QuickJSEngine(Engine):
    """Runs cases through the modules of ``tree`` linked by ``linker`` into one QuickJS context."""

    def __init__(
        self,
        name: str,
        tree: Path | str,
        config: ModuleConfig,
        *,
        chunk_size: int = 100,
        memory_limit: int = 512 * 1024 * 1024,
        stack_size: int | None = None,
        startup_timeout_s: float = 30.0,
        kill_grace_s: float = 5.0,
    ) -> None:
        self.name = name
        self.tree = Path(tree).resolve()
        self.config = config
        self.chunk_size = chunk_size
        self.memory_limit = memory_limit
        self.stack_size = stack_size
        self.startup_timeout_s = startup_timeout_s
        self.kill_grace_s = kill_grace_s

    def describe(self) -> dict[str, Any]:
        binding = package_version("quickjs-ng")
        return {
            "engine": self.name,
            "kind": "quickjs",
            "tree": str(self.tree),
            # Binding versions are X.Y.Z.P where X.Y.Z is the upstream quickjs-ng tag it embeds.
            "quickjs_ng": ".".join(binding.split(".")[:3]) if binding else None,
            "quickjs_ng_binding": binding,
            "memory_limit": self.memory_limit,
            **host_versions(),
        }

    def run(self, cases: Sequence[Mapping[str, Any]], timeout_s: float) -> EngineRun:
        chunks = chunk_cases(cases, self.chunk_size)
        job = {
            "tree": str(self.tree),
            **self.config.to_json(),
            "chunks": chunks,
            "budget_s": timeout_s,
            "startup_budget_s": self.startup_timeout_s,
            "memory_limit": self.memory_limit,
            "stack_size": self.stack_size,
        }
        run = EngineRun(timings={"chunk_size": self.chunk_size, "chunks": len(chunks), "chunks_s": []})
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH")]))
        started, spawned_at = time.perf_counter(), time.time()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "extparity.engines.quickjs_worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, text=True, encoding="ascii", errors="backslashreplace",
            )
        except OSError as exc:
            return run.fail("crashed", f"cannot start the QuickJS worker: {exc}")
        hard_limit = self.startup_timeout_s + timeout_s + self.kill_grace_s
        killed = False
        try:
            out, err = proc.communicate(json.dumps(job, ensure_ascii=True), timeout=hard_limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            killed = True
            out, err = proc.communicate()  # keeps everything the child printed before the kill
        run.timings["total_s"] = time.perf_counter() - started
        self._collect(run, out, err, proc.returncode, killed, hard_limit, spawned_at)
        return run

    def _collect(self, run: EngineRun, out: str, err: str, code: int | None, killed: bool,
                 hard_limit: float, spawned_at: float) -> None:
        done = False
        for line in out.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            kind = event.get("event")
            if kind == "hashes":
                run.module_hashes = event["hashes"]
            elif kind == "ready":
                # Process spawn + interpreter import + link + module evaluation.
                run.timings["startup_s"] = event["at"] - spawned_at
                run.timings["link_s"] = event["link_s"]
            elif kind == "chunk":
                run.add_batch(event["result"])
                run.timings["chunks_s"].append(event["seconds"])
            elif kind in ("timeout", "error"):
                run.fail("timeout" if kind == "timeout" else "crashed", event["detail"])
            elif kind == "done":
                done = True
        run.timings["cases_s"] = sum(run.timings["chunks_s"])
        if killed:
            run.fail("timeout", f"worker killed after {hard_limit:.1f}s wall clock")
        elif not done:
            tail = err.strip().splitlines()[-5:]
            run.fail("crashed", f"worker exited with code {code} before finishing: " + " | ".join(tail))
