"""Sessions that live in a child process (python, quickjs, v8, spidermonkey).

Why a child: bindings are C code in our address space (quickjs-ng's crashes on a lone surrogate
handed to ``Context.set``, which is why cases cross as ASCII JSON: see ``js/batch-runner.js``),
and the reference is user code that may hang; a segfault, a runaway allocation or an
endless loop must cost one case and one restart, not the harness. The child (``worker.py``)
answers one line per case, so when a line does not come in time the parent knows exactly which
case hung or crashed: it kills the child and the driver starts a fresh one for the rest.

Children run in their own process group (a terminal's Ctrl-C reaches only the harness, which
stops them in order) and die with the harness even if it is killed outright (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..project.kinds import IN_WORKER
from ..project.hashing import sha256_hex
from ..subject.linker import LinkError, link_adapter, module_graph, normalize_path, uses_module_syntax
from .base import Batch, Engine, EngineStartError, Session, SessionBroken, WireCase, purity_allowed, wire_json

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the extparity package
# How a worker starts in an interpreter of the user's own (the python kind's ``python`` option):
# the harness's extparity package is imported from its folder by file location, and nothing
# else of the harness's environment comes along. PYTHONPATH would bring the folder that holds
# the package, a site-packages whose Playwright, pytest or other copy of the user's own
# dependencies would shadow the ones installed in the user's venv. The worker and the python
# host import only the standard library (tests/test_python_interpreter.py holds them to it).
_FOREIGN_WORKER = """import importlib.util, runpy, sys
spec = importlib.util.spec_from_file_location("extparity", sys.argv[1] + "/__init__.py",
                                              submodule_search_locations=[sys.argv[1]])
package = importlib.util.module_from_spec(spec)
sys.modules["extparity"] = package
spec.loader.exec_module(package)
del sys.argv[1:]
runpy.run_module("extparity.engines.worker", run_name="__main__", alter_sys=True)
"""
_EOF = object()
_TIMEOUT = object()
_POLL_S = 0.5
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ChildSession(Session):
    """A worker process with the subject loaded, answering one line per case."""

    def __init__(self, engine: str, job: dict[str, Any], startup_timeout_s: float, batches: bool = False,
                 interpreter: str | None = None, variables: dict[str, str] | None = None) -> None:
        self.engine = engine
        self.batches = batches
        self.module_hashes: dict[str, str] = {}
        self.info: dict[str, Any] = {}
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=12)
        env = {**os.environ, **(variables or {})}  # a second environment's TZ and LANG
        if interpreter is None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
            command = [sys.executable, "-m", "extparity.engines.worker"]
        else:
            command = [interpreter, "-c", _FOREIGN_WORKER, str(PACKAGE_ROOT / "extparity")]
        env["PYTHONUNBUFFERED"] = "1"
        env["EXTPARITY_PARENT_PID"] = str(os.getpid())  # the worker dies with this process
        started = time.perf_counter()
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                text=True, encoding="ascii", errors="backslashreplace", bufsize=1,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineStartError(f"cannot start the {engine} worker: {exc}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr  # all three are pipes
        self._requests, self._answers, self._errors = self._proc.stdin, self._proc.stdout, self._proc.stderr
        threading.Thread(target=self._read_stdout, daemon=True, name=f"{engine}-stdout").start()
        threading.Thread(target=self._read_stderr, daemon=True, name=f"{engine}-stderr").start()
        self._send({"op": "open", **job})
        event = self._next(startup_timeout_s)
        if event is _TIMEOUT:
            self.kill()
            raise EngineStartError(f"{engine} worker did not load the subject within {startup_timeout_s:.0f}s")
        if event is _EOF:
            self.close()
            raise EngineStartError(f"{engine} worker exited during start-up{self._stderr_tail()}")
        if event.get("event") == "start-error":
            self.close()
            raise EngineStartError(event["detail"])
        self.module_hashes = event.get("hashes", {})
        self.info = event.get("info", {})
        self.startup_s = time.perf_counter() - started

    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        batch = Batch()
        # The list follows its header on a line of its own, as every bridge carries it: inside
        # the header it would be escaped once more here and unescaped again in the worker.
        if not self._send_lines(json.dumps({"op": "run", "case_timeout_s": case_timeout_s}), wire_json(cases)):
            batch.broken = SessionBroken("crash", f"worker is gone{self._stderr_tail()}", cases[0].id)
            return batch
        # A worker that runs a list at once answers after it all; it stops a hanging case itself
        # and says so. If it still goes silent, the culprit is unknown and the driver isolates it.
        wait = 2 * case_timeout_s + 5 if self.batches else case_timeout_s
        answered: set[str] = set()
        for case in cases:
            if case.id in answered:
                continue
            event = self._next_on_cpu(wait) if self.batches else self._next(wait)
            culprit = None if self.batches else case.id
            if event is _TIMEOUT:
                self.kill()
                batch.broken = SessionBroken("timeout", f"no verdict within {case_timeout_s:g}s", culprit)
                return batch
            if event is _EOF:
                code = self._proc.wait()
                batch.broken = SessionBroken("crash", f"worker exited with code {code}{self._stderr_tail()}", culprit)
                return batch
            results = event.get("result")
            if not isinstance(results, dict):
                self.kill()
                batch.broken = SessionBroken("crash", f"the worker answered {str(results)[:100]!r}, not a result object", culprit)
                return batch
            batch.add_results(results)
            answered.update(results)
        return batch

    def close(self) -> None:
        if self._proc.poll() is None:
            self._send({"op": "close"})
            try:
                self._proc.wait(2)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_pipes()

    def kill(self) -> None:
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self._proc.kill()
            self._proc.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self._requests,):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass

    def _send(self, message: dict[str, Any]) -> bool:
        return self._send_lines(json.dumps(message, ensure_ascii=True))

    def _send_lines(self, *lines: str) -> bool:
        try:
            self._requests.write("".join(line + "\n" for line in lines))
            self._requests.flush()
            return True
        except (OSError, ValueError):  # the child is gone; its exit is reported by the caller
            return False

    def _next_on_cpu(self, budget_s: float):
        """The next line, waiting while the worker's own CPU clock is under `budget_s`.

        Engines that stop a case themselves do it by CPU time (QuickJS's limit counts CPU
        seconds), so on a loaded machine a wall-clock wait would kill a worker that was about
        to report the timeout, or to answer. The wall clock still ends the wait for a worker
        that spent no CPU for a whole budget (the clock counts in ticks of 10 ms, so a starved
        worker can go a poll or two without one), and at 20 times the budget."""
        started, cpu_at_start = time.perf_counter(), self._cpu_seconds()
        last_cpu, last_progress = cpu_at_start, started
        while True:
            event = self._next(min(_POLL_S, budget_s))
            if event is not _TIMEOUT:
                return event
            now, cpu = time.perf_counter(), self._cpu_seconds()
            wall = now - started
            if cpu is None or cpu_at_start is None or last_cpu is None:
                if wall >= budget_s:  # no /proc: the wall clock is all there is
                    return _TIMEOUT
                continue
            if cpu > last_cpu:
                last_cpu, last_progress = cpu, now
            idle = now - last_progress >= budget_s
            if wall >= budget_s and (cpu - cpu_at_start >= budget_s or idle) or wall >= 20 * budget_s:
                return _TIMEOUT

    def _cpu_seconds(self) -> float | None:
        """User and system CPU time of the worker process so far (Linux /proc), or None."""
        try:
            stat = Path(f"/proc/{self._proc.pid}/stat").read_text()
        except OSError:
            return None
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def _next(self, timeout_s: float):
        try:
            line = self._lines.get(timeout=max(0.001, timeout_s))
        except queue.Empty:
            return _TIMEOUT
        return _EOF if line is None else line

    def _read_stdout(self) -> None:
        for line in self._answers:
            try:
                self._lines.put(json.loads(line))
            except ValueError:
                self._stderr.append(f"stray output: {line.strip()[:200]}")
        self._lines.put(None)

    def _read_stderr(self) -> None:
        for line in self._errors:
            if line.strip():
                self._stderr.append(line.rstrip()[:500])

    def _stderr_tail(self) -> str:
        time.sleep(0.05)  # let the reader thread take what the child wrote before it died
        tail = [line for line in self._stderr if line.strip()][-3:]
        return (": " + " | ".join(tail)) if tail else ""


class ChildEngine(Engine):
    """An engine whose sessions are worker processes; subclasses say what the worker loads, and
    ``HOST`` which host class loads it there."""

    RUNS = IN_WORKER
    startup_timeout_s = 60.0
    batches = False  # True when the worker runs a whole list at once (see ChildSession.run)
    # What only the loaded engine knows (V8's exact version, the libmozjs build), from the
    # worker's "ready" event; the kinds whose hosts report it add it to ``describe``, so it
    # reaches the result's ``engines[name].versions``.
    worker_info: dict[str, Any] = {}

    def job(self) -> dict[str, Any]:
        """What the worker needs to load the subject (ASCII-safe JSON values)."""
        raise NotImplementedError

    def interpreter(self) -> str | None:
        """The Python that runs the worker, when it is not the harness's own (``sys.executable``)."""
        return None

    def environment_reach(self, environment) -> dict[str, str]:
        """A worker reads its zone and language from its process environment, as any program."""
        reach = {"timezone": "TZ in the worker's environment", "locale": "LANG, LC_ALL and LANGUAGE in the worker's environment"}
        return {setting: how for setting, how in reach.items() if setting in environment.settings()}

    def open(self) -> Session:
        job = {"kind": self.kind, "host": self.HOST, "install_hint": self.INSTALL_HINT, **self.job()}
        if self.environment is not None and self.environment.date and "date" in self.environment_reach(self.environment):
            job["clock_start_ms"] = self.environment.start_ms
        variables = self.environment.worker_variables() if self.environment is not None else None
        session = ChildSession(self.name, job, self.startup_timeout_s, self.batches, self.interpreter(), variables)
        self.worker_info = dict(session.info)
        return session


class JSChildEngine(ChildEngine):
    """A headless JS engine in a worker: the tree's module graph linked into scripts, plus the
    entries' adapters. Linking happens once per engine; restarts reuse it.

    With ``via = "message"`` it is the headless message path instead: the tree's background as
    built (a bundle's IIFE, or a module service worker linked like any module graph) evaluated
    on the WebExtension shim of ``js/webext-shim.js``, each case a runtime message to it through
    the message adapters, as the browsers' message path sends it."""

    OPTIONS = {"chunk_size": int, "via": str}
    OPTION_CHOICES = {"via": ("module", "message")}

    def environment_reach(self, environment) -> dict[str, str]:
        reach = super().environment_reach(environment)
        if environment.date:
            reach["date"] = "the engine's Date moved to a clock started at that date (js/environment-clock.js)"
        return reach

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.chunk_size = int(self.options.get("chunk_size", 100))
        self.via = self.options.get("via", "module")
        self._job: dict[str, Any] | None = None

    def job(self) -> dict[str, Any]:
        if self._job is None:
            try:
                modules, adapters = link_subject(self.project, self.tree)
                background: list[dict[str, Any]] = []
                if self.via == "message":
                    background, manifest = link_background(self.tree)
                    adapters = {fn: link_adapter(path, f"message-{fn}") for fn, path in self.project.gate.messages.items()}
                    ran = {script["path"] for script in background}
                    modules = [m for m in modules if m.path not in ran]  # evaluated once, as the background
            except LinkError as exc:
                raise EngineStartError(str(exc)) from None
            self._job = {
                "modules": [{"path": m.path, "module": m.module, "script": m.script}
                            for m in [*modules, *adapters.values()]],
                "hashes": {m.path: m.sha256 for m in modules},
                "entries": {fn: {"module": normalize_path(e.module), "export": e.export}
                            for fn, e in self.project.entries.items()},
                "adapters": {fn: module.path for fn, module in adapters.items()},
                "options": {k: v for k, v in self.options.items() if k not in ("chunk_size", "via")},
                "purity_allowed": purity_allowed(self.project),
            }
            if self.via == "message":
                # what the engine loaded is the background's scripts (the parity check holds it to
                # them); the entries' other modules only give the adapters their namespaces
                self._job.update(via="message", background=background, manifest=manifest,
                                 namespaces=sorted({m.path for m in modules} | ran),
                                 hashes={script["path"]: script["sha256"] for script in background})
        return self._job


def link_background(tree: Path) -> tuple[list[dict[str, Any]], dict]:
    """The scripts the tree's background runs, in order, each as the worker evaluates it: a
    classic script as it is on disk (a bundle's IIFE), a module background linked with its
    imports (``linker.module_graph``); and the manifest, which the shim's ``getManifest`` gives."""
    from ..subject.tree_checks import background_scripts, load_manifest

    manifest, error = load_manifest(tree.name, tree)
    if manifest is None:
        raise LinkError(f"{error}")
    scripts = background_scripts(tree, manifest)
    if not scripts:
        raise LinkError('via = "message": the extension has no background to send messages to')
    as_module = isinstance(manifest.get("background"), dict) and manifest["background"].get("type") == "module"
    loaded: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in scripts:
        try:
            data = (tree / path).read_bytes()
        except OSError as exc:
            raise LinkError(f"{path}: cannot read the background script: {exc.strerror or exc}") from None
        if as_module or uses_module_syntax(data):
            for module in module_graph(tree, [path]):
                if module.path not in seen:
                    seen.add(module.path)
                    loaded.append({"path": module.path, "sha256": module.sha256, "module": module.module,
                                   "script": module.script, "classic": False})
        elif path not in seen:
            seen.add(path)
            loaded.append({"path": path, "sha256": sha256_hex(data), "script": data.decode("utf-8-sig", "replace"),
                           "classic": True})
    return loaded, manifest


def link_subject(project, tree: Path):
    """The tree's module graph from the entry modules, and each entry's linked adapter."""
    modules = module_graph(tree, [entry.module for entry in project.entries.values()])
    adapters = {fn: link_adapter(entry.adapter, fn) for fn, entry in project.entries.items() if entry.adapter}
    return modules, adapters
