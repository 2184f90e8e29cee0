"""The child side of ``child.ChildSession``: load the subject once, answer one line per case.

Protocol (ASCII JSON lines). The parent sends ``{"op": "open", "kind", "host", "install_hint", ...job}``, then
any number of ``{"op": "run", "case_timeout_s"}``, each followed by a line holding the case list
(ASCII JSON), then ``{"op": "close"}``. The child answers ``{"event": "ready", "hashes", "info"}``
or ``{"event": "start-error", "detail"}``, then one ``{"event": "case", "result": {batch-runner
result for that case}}`` per case, in order, flushed at once: the parent reads a missing line as
"this case hung or crashed". A host that runs a whole list at once answers it in one line (the
parent, told ``batches``, waits for the list, not for each case). Lists and results cross as
the text they are, never as strings inside another JSON text: escaping them again on one side
to unescape them on the other cost more than a fuzz case's verdict in the faster engines.

``host`` is the ``package.module:Class`` the engine's kind declares (its ``HOST``), so a kind
of the user's own runs here as the built-in ones do; a binding the host cannot import is named
with the kind's ``install_hint``. The protocol owns
the real stdout; anything the subject prints goes to stderr.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from importlib import import_module
from typing import Any, TextIO

from ..subject.linker import PRELUDE, REGISTRY
from .base import EngineStartError, js_source, purity_guard


def _die_with_parent() -> None:
    """SIGKILL this process when the harness goes away, even if it is killed outright."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's close path and process group still stop us
    expected = os.environ.get("EXTPARITY_PARENT_PID")
    if expected and os.getppid() != int(expected):  # the parent died before prctl took effect
        os._exit(1)


# A worker's priority below the harness's and the browsers'. A run's critical path is the
# browsers' start-up, and on a machine with fewer cores than engines the workers took CPU from
# it (a five-engine run on two cores: Firefox up after 7-8 s instead of 5-6). Lower, they fill
# the time the browsers leave; alone on a core a worker runs at full speed. A worker has a session
# of its own (see child.py), hence, where Linux groups scheduling by session (autogroup), a group
# of its own whose weight is set apart from the process's nice value.
NICENESS = 10


def _yield_to_browsers() -> None:
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(NICENESS))
    except OSError:  # not Linux, or no autogroup scheduling: the process's nice value is all there is
        pass


class Host:
    """A loaded subject in the worker: answers cases, one result each."""

    hashes: dict[str, str]
    info: dict[str, Any]

    def run_cases(self, cases_json: str, case_timeout_s: float):
        """One batch-runner result per case, as each is done (the parent reads silence as a hang)."""
        for case in json.loads(cases_json):
            yield self.run_case(json.dumps([case], ensure_ascii=True))

    def run_case(self, case_json: str) -> str:
        raise NotImplementedError

    def close(self) -> None:
        """Release the engine before the worker exits (some bindings hang in their finalizers)."""


class Interrupted(Exception):
    """The engine stopped a script at its time limit itself, and stays usable."""


class JSHost(Host):
    """What every headless JS engine host shares: link, bind entries, run one case at a time.

    A kind supplies ``evaluate(code) -> value`` and ``run_jobs()`` (drain the microtask queue),
    and ``settle_within`` if it runs lists at once (under a time limit where it can stop a script).
    The subject arrives already linked (``job["modules"]``, see ``linker.py``), so every engine
    evaluates the same text; the parent hashed the bytes it was made from.
    """

    name = "the engine"  # as a stopped case's detail names it
    runs_lists = False  # True where lists run at once (``settle_within``), not one case per settle

    def __init__(self, job: dict[str, Any]) -> None:
        self.hashes = job["hashes"]
        self.info: dict[str, Any] = {}
        self.start(job.get("options", {}))
        self.evaluate(f"{PRELUDE}\nglobalThis.__extparity_runBatch = {js_source('batch-runner.js')};\n"
                      f"globalThis.__extparity_bind = {js_source('bind-entries.js')};")
        if job.get("clock_start_ms") is not None:  # a second environment's date, under the purity guard
            self.evaluate(f"({js_source('environment-clock.js')})({int(job['clock_start_ms'])});")
        self.evaluate(purity_guard(job.get("purity_allowed", [])))
        if job.get("via") == "message":
            self.load_background(job)
        for module in job["modules"]:
            try:
                self.load_module(module)
            except Exception as exc:  # the module threw at its top level, or does not compile
                raise EngineStartError(f"{module['path']}: module evaluation failed: "
                                       f"{explain_load_error(self.describe_error(exc))}") from None
        adapters = ", ".join(f"{json.dumps(fn)}: {REGISTRY}[{json.dumps(path)}].default"
                             for fn, path in job["adapters"].items())
        if job.get("via") == "message":
            namespaces = ", ".join(f"{json.dumps(path)}: {REGISTRY}[{json.dumps(path)}]" for path in job["namespaces"])
            bind = (f"({js_source('bind-messages.js')})(__extparity_send, {{ {namespaces} }}, "
                    f"{json.dumps(job['entries'])}, {{ {adapters} }})")
        else:
            bind = (f"__extparity_bind(function (p) {{ return {REGISTRY}[p]; }}, "
                    f"{json.dumps(job['entries'])}, {{ {adapters} }})")
        try:
            self.evaluate(f"globalThis.__extparity_entries = {bind};")
        except Exception as exc:
            raise EngineStartError(self.describe_error(exc)) from None

    def load_background(self, job: dict[str, Any]) -> None:
        """The headless message path: the WebExtension shim, then the background's scripts in the
        order the manifest gives them, each once (a classic script as it is, on the global; a
        module one linked). A classic script has no exports: its registry entry is empty."""
        self.evaluate(f"globalThis.__extparity_send = ({js_source('webext-shim.js')})({json.dumps(job['manifest'])});")
        for script in job["background"]:
            try:
                if script["classic"]:
                    self.evaluate(script["script"])
                    self.evaluate(f"{REGISTRY}[{json.dumps(script['path'])}] = Object.freeze({{}});")
                else:
                    self.load_module(script)
            except Exception as exc:
                raise EngineStartError(f"{script['path']}: the background failed to start on the headless "
                                       f"message path: {self.describe_error(exc)}") from None

    def run_case(self, case_json: str) -> str:
        out = self.run_batch(case_json)
        if out is None:  # an adapter awaiting something that never settles
            case_id = json.loads(case_json)[0]["id"]
            return json.dumps({case_id: {"error": "the entry's promise never settled"}}, ensure_ascii=True)
        return out

    def run_batch(self, cases_json: str) -> str | None:
        """The batch runner's output for ``cases_json``, or None if its promise never settled."""
        out = self.settle(batch_call(cases_json))
        return str(out) if isinstance(out, str) else None

    def settle(self, expression: str) -> Any:
        """The value a promise-valued expression settles to (None if it never does)."""
        self.evaluate(f"globalThis.__extparity_out = null; ({expression})"
                      ".then(function (r) { __extparity_out = r; });")
        self.run_jobs()
        return self.evaluate("__extparity_out")

    def run_cases(self, cases_json: str, case_timeout_s: float):
        if self.runs_lists:
            return self.run_cases_at_once(cases_json, case_timeout_s)
        return super().run_cases(cases_json, case_timeout_s)

    def run_cases_at_once(self, cases_json: str, case_timeout_s: float):
        """The whole list in one eval (under the limit, where the engine can stop a script),
        which saves the per-case evals; if it runs out, or a promise never settles, each case
        alone, so the one that hangs is named and the others still answer. What the engine
        cannot stop is the parent's kill (``batches``), and the driver then isolates the case."""
        try:
            out = self.settle_within(cases_json, case_timeout_s)
        except Interrupted:
            out = None
        if out is not None:  # one line for the list: the parent reads it as one batch-runner result
            yield out
            return
        for case in json.loads(cases_json):
            try:
                yield self.settle_within(json.dumps([case], ensure_ascii=True), case_timeout_s) or \
                    json.dumps({case["id"]: {"error": "the entry's promise never settled"}}, ensure_ascii=True)
            except Interrupted:
                yield json.dumps({case["id"]: {"timeout": f"stopped by {self.name} after {case_timeout_s:g}s"}},
                                 ensure_ascii=True)

    def settle_within(self, cases_json: str, timeout_s: float) -> str | None:
        """``run_batch`` under the time limit where the kind can stop a script (then it raises
        ``Interrupted`` when the limit stopped it); here without one: only the parent's kill
        stops a hang."""
        return self.run_batch(cases_json)

    def start(self, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def load_module(self, module: dict[str, str]) -> None:
        """Evaluate one linked module; engines with module support use ``module["module"]``."""
        self.evaluate(module["script"])

    def evaluate(self, code: str) -> Any:
        raise NotImplementedError

    def run_jobs(self) -> None:
        """Drain the microtask queue (a no-op where the binding does it after every eval)."""

    def describe_error(self, exc: Exception) -> str:
        """The engine's own message, on one line (bindings spread it over several)."""
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return " | ".join(lines[:3])[:1000] if lines else type(exc).__name__


# What a headless engine says when a file calls what only a browser has, while it loads: the
# engine's own words hide the cause. A bundled background or content script (WXT's IIFE) calls
# the extension API at once and, when that fails, logs through `console`, which a bare engine
# lacks: "console is not defined" is then all that reaches the user.
_BROWSER_ONLY = ("console", "chrome", "browser", "window", "document", "self", "navigator")


def explain_load_error(detail: str) -> str:
    """``detail`` with the likely cause named when a file leaned on a browser-only global as it
    loaded: such a file is extension code that runs at once, not a module of the parser."""
    for name in _BROWSER_ONLY:
        if f"{name} is not defined" in detail or f"'{name}' is not defined" in detail:
            return (f"{detail} (the file uses {name} as it loads: it is extension code that runs at once, "
                    f"such as a bundled background, not a parser module a bare engine can load; point the "
                    f"entry at a module that exports the parser, or judge the file through the message "
                    f'path: via = "message", docs/wxt.md)')
    return detail


def batch_call(cases_json: str) -> str:
    """The expression that runs a case list through the batch runner (a promise of its output)."""
    return f"__extparity_runBatch(__extparity_entries, {json.dumps(cases_json)})"


def _host(target: str):
    """The host class named ``package.module:Class`` (the kind's ``HOST``)."""
    module_name, _, attribute = target.partition(":")
    return getattr(import_module(module_name), attribute)


def main() -> int:
    _die_with_parent()
    _yield_to_browsers()
    # The protocol owns private copies of fds 0 and 1: the subject's prints go to stderr, and a
    # binding that reconfigures sys.stdin/sys.stdout (pythonmonkey does) touches neither.
    protocol: TextIO = os.fdopen(os.dup(1), "w", encoding="ascii", errors="backslashreplace")
    requests: TextIO = os.fdopen(os.dup(0), "r", encoding="ascii")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")

    def emit(**event: Any) -> None:
        protocol.write(json.dumps(event, ensure_ascii=True) + "\n")
        protocol.flush()

    def emit_result(result: str) -> None:  # already ASCII JSON: embedded as it is
        protocol.write('{"event": "case", "result": ' + result + "}\n")
        protocol.flush()

    host = None
    for line in requests:
        message = json.loads(line)
        op = message.get("op")
        if op == "open":
            try:
                host = _host(message["host"])(message)
            except EngineStartError as exc:
                emit(event="start-error", detail=str(exc))
                return 0
            except ImportError as exc:
                hint = f"; install it with: {message['install_hint']}" if message.get("install_hint") else ""
                emit(event="start-error", detail=f"{message['kind']} binding is not installed: {exc}{hint}")
                return 0
            emit(event="ready", hashes=host.hashes, info=host.info)
        elif op == "run":
            cases_json = requests.readline().rstrip("\n")
            if host is not None:  # the parent opens before it runs
                for result in host.run_cases(cases_json, float(message["case_timeout_s"])):
                    emit_result(result)
        elif op == "close":
            break
    if host is not None:
        host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
