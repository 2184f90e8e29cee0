"""What the Chromium and Firefox kinds share: a private event loop, a temporary profile, the
browser binary and its version, the subject's module list, and the code they evaluate.

Both kinds reach the subject one of two ways (the engine option ``via``). ``module`` imports the
entry modules in a document of the extension's origin and calls their exports. ``message`` asks
the extension's own background, through ``runtime.sendMessage``, the way its pages and users'
code do: a case then also proves that the background starts, loads the parser and answers. A
*message adapter* (harness-side, like an entry adapter) maps a case to a message and the reply to
the verdict text: ``export default async (send, modules, ...args) => verdictText``, where
``send(message)`` resolves with the background's reply and ``modules`` maps every module the
entries reach to its namespace (so a reply can be written with the subject's own serializer).

A *launch* (``BrowserLaunch``) is one started browser with the tree's extension loaded; a
*session* (``BrowserSession``) is one engine's way into it: a tab in Chromium, a channel of the
probe server in Firefox. The engines of one tree share a launch (``sharing.SharedBrowser``);
alone, a session starts a launch of its own.

Why a private loop in its own thread: the browser kinds need hard time limits around calls into
the page (only Playwright's async API can abandon a call that never returns), the driver is
synchronous, and the caller may already run an event loop (pytest plugins). A session keeps its
loop and its browser for as long as it lives, so a fuzzer sends many batches to one browser.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import tempfile
import threading
from dataclasses import replace
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Awaitable, Callable

from ..project.kinds import IN_BROWSER
from ..subject.linker import PRELUDE, REGISTRY, LinkError, link_adapter, normalize_path
from .base import (Batch, Engine, EngineStartError, Evidence, Session, WireCase, executable_version, host_versions,
                   js_source, package_version, purity_allowed, purity_guard)
from .child import link_subject
from .executables import choose_executable


class LoopThread:
    """An asyncio loop in a daemon thread; ``call`` runs a coroutine there with a time limit."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def call(self, make: Callable[[], Awaitable[Any]], timeout_s: float) -> Any:
        """Run ``make()`` on the loop; raise ``TimeoutError`` when it outlives ``timeout_s``."""
        if not self.loop.is_running():
            raise RuntimeError("the browser session is closed")
        future = asyncio.run_coroutine_threadsafe(_call(make), self.loop)
        try:
            return future.result(timeout_s)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout_s:g}s") from None

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()


async def _call(make: Callable[[], Awaitable[Any]]) -> Any:
    return await make()


class BrowserEngine(Engine):
    """A browser kind bound to a tree: executable, extra launch arguments, batching."""

    RUNS = IN_BROWSER
    RECORDS_EVIDENCE = True
    OPTIONS = {"executable": str, "args": list, "chunk_size": int, "startup_timeout_s": (int, float), "via": str,
               "sender": str}
    OPTION_CHOICES = {"via": ("module", "message"), "sender": ("page", "content")}
    SENDS_FROM_CONTENT = True
    chunk_size = 500
    default_executable = ""
    protocol = ""
    launch_class: type["BrowserLaunch"]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.executable, self.executable_source = choose_executable(self.kind, self.options.get("executable"),
                                                                    self.default_executable)
        self.extra_args = [str(a) for a in self.options.get("args", [])]
        self.chunk_size = int(self.options.get("chunk_size", self.chunk_size))
        self.startup_timeout_s = float(self.options.get("startup_timeout_s", 60.0))
        self.via = self.options.get("via", "module")
        self.sender = self.options.get("sender", "page")
        self.shared: Any = None  # a ``sharing.SharedBrowser``, set by ``share_browsers`` for the engines of one tree
        self.browser_version: str | None = None
        self._subject: dict[str, Any] | None = None

    def describe(self) -> dict[str, Any]:
        """``browser_version`` is what the started browser says of itself (Playwright asks
        Chromium; in Firefox the add-on asks ``runtime.getBrowserInfo()``)."""
        return {
            "engine": self.name,
            "kind": self.kind,
            "tree": self.project.relative(self.tree),
            "executable": self.executable,
            "executable_source": self.executable_source,  # config, playwright (its own build) or debian
            "executable_version": executable_version(self.executable),
            "browser_version": self.browser_version,
            "playwright": package_version("playwright"),
            "protocol": self.protocol,
            "via": self.via,
            **({"sender": self.sender} if self.sender != "page" else {}),  # the page sender keeps older results' bytes
            **host_versions(),
        }

    def record_evidence(self, cases: list[WireCase], case_timeout_s: float) -> dict[str, Evidence]:
        """Run ``cases`` again, one at a time, in a browser of this engine's own (never a shared
        launch: another engine's tab would be in the trace) with the kind's recorders on: case
        id -> what it showed. Raises EngineStartError when that browser does not start."""
        session = type(self)(self.name, self.project, self.tree_name, self.options).open()
        assert isinstance(session, BrowserSession)  # a browser kind's sessions are
        session.phase = "starting the recorders"
        start_or_close(session, session.start_recording, self.startup_timeout_s)
        found: dict[str, Evidence] = {}
        try:
            for case in cases:
                if session.broke:
                    found[case.id] = Evidence(failure="not run again: the browser broke on an earlier case")
                    continue
                session.loop.call(lambda: session.begin_case(case.id), 30)
                batch = session.run([case], case_timeout_s)
                broken = f"{batch.broken.kind}: {batch.broken.detail}" if batch.broken else None
                evidence = Evidence(verdict=batch.verdicts.get(case.id),
                                    failure=batch.errors.get(case.id) or batch.timeouts.get(case.id) or broken)
                try:
                    evidence.files, console, evidence.missing = session.loop.call(lambda: session.end_case(case.id), 60)
                except Exception as error:  # a dead page: the verdict above is still worth keeping
                    console, evidence.missing = [], [f"nothing recorded: {type(error).__name__}: {error}"[:500]]
                evidence.files["console.txt"] = console_file(self.name, case.id, console, evidence.missing)
                found[case.id] = evidence
        finally:
            session.close()
        return found

    async def before_subject_loads(self, session: "BrowserSession") -> None:
        """Called in a started session once its document is open, before the subject's modules
        load there: an observer that must see them compiled (coverage) starts here."""

    @property
    def path(self) -> str:
        """This engine's way into a launch: "module", "message", or "content" (messages from a
        content script): the engines of one shared launch each take another."""
        return "content" if self.sender == "content" else self.via

    def launch_key(self) -> str:
        """What the browser started for this engine depends on: all but how it reaches the
        subject (``via``, ``sender``) and how many cases go in one call."""
        options = {k: v for k, v in self.options.items() if k not in ("via", "sender", "chunk_size")}
        return json.dumps([self.kind, self.tree_name, options], sort_keys=True)

    def check_executable(self) -> None:
        if not Path(self.executable).is_file():
            raise EngineStartError(f"browser not found: {self.executable}")

    def subject(self) -> dict[str, Any]:
        """What the in-browser setup needs: the modules to hash and to import, the entries to
        bind, and the adapters' linked scripts (they run in the extension's realm, never inside
        its tree). Via messages, the modules hashed are those the background loads."""
        if self._subject is None:
            try:
                modules, adapters = link_subject(self.project, self.tree)
                if self.via == "message":
                    adapters = {fn: link_adapter(path, f"message-{fn}") for fn, path in self.project.gate.messages.items()}
            except LinkError as exc:
                raise EngineStartError(str(exc)) from None
            entries = {fn: {"module": normalize_path(e.module), "export": e.export}
                       for fn, e in self.project.entries.items()}
            graph = [m.path for m in modules]
            entry_modules = sorted({e["module"] for e in entries.values()})
            self._subject = {
                "via": self.via,
                "hash_modules": self.background_modules() if self.via == "message" else graph,
                "import_modules": graph if self.via == "message" else entry_modules,
                "entries": entries,
                "adapters": {fn: m.path for fn, m in adapters.items()},
                "adapter_scripts": "\n".join(m.script for m in adapters.values()),
                "purity_guard": purity_guard(purity_allowed(self.project)),
            }
        return self._subject

    def background_modules(self) -> list[str]:
        """The scripts the tree's background loads, read statically (see ``tree_checks``)."""
        from ..subject.tree_checks import background_closure, load_manifest

        manifest, error = load_manifest(f"{self.tree_name}", self.tree)
        if manifest is None:
            raise EngineStartError(f"{error}")
        try:
            closure = background_closure(self.tree, manifest)
        except LinkError as exc:
            raise EngineStartError(f"the extension's background: {exc}") from None
        if not closure:
            raise EngineStartError('via = "message": the extension has no background to send messages to')
        return closure


def console_file(engine: str, case_id: str, console: list[str], missing: list[str]) -> bytes:
    """The console of one case's rerun as text: what it is of, then a message a line."""
    lines = [f"console of engine {engine} while it ran case {case_id} again, alone", ""]
    lines += console or ["(no console message)"]
    lines += [f"not recorded: {line}" for line in missing]
    return ("\n".join(lines) + "\n").encode("utf-8")


def realm_code(subject: dict[str, Any]) -> str:
    """Statements that define the shared helpers and the adapters in an extension realm."""
    return (f"const runBatch = {js_source('batch-runner.js')};\n"
            f"const bindEntries = {js_source('bind-entries.js')};\n"
            f"const bindMessages = {js_source('bind-messages.js')};\n"
            f"{js_source('ext-realm.js')}\n{PRELUDE}\n{subject['adapter_scripts']}\n")


def bind_expression(subject: dict[str, Any]) -> str:
    """JS expression of the bound entries, given ``namespaces``, ``send`` and ``cfg`` in scope."""
    adapters = "{" + ", ".join(f"{json.dumps(fn)}: {REGISTRY}[{json.dumps(path)}].default"
                               for fn, path in subject["adapters"].items()) + "}"
    if subject["via"] == "message":
        return f"bindMessages(send, namespaces, cfg.entries, {adapters})"
    return f"bindEntries((path) => namespaces[path], cfg.entries, {adapters})"


def probe_config(subject: dict[str, Any]) -> dict[str, Any]:
    """The part of the subject the in-browser setup receives as data."""
    return {k: subject[k] for k in ("hash_modules", "import_modules", "entries")}


def temporary_profile(kind: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"extparity-{kind}-"))


def remove_profile(path: Path | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


async def bounded(awaitable, timeout_s: float, default: Any = ...) -> Any:
    """Wait for ``awaitable`` at most ``timeout_s``, then abandon it: cancelling a Playwright call
    on a dead worker can wait for the driver forever (Playwright 1.64), so it is never awaited
    again. Without ``default``, running out of time raises TimeoutError."""
    task = asyncio.ensure_future(awaitable)
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if task in done:
        return task.result()
    task.cancel()
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    if default is ...:
        raise TimeoutError(f"no answer within {timeout_s:g}s")
    return default


_LAUNCHES = itertools.count(1)


class BrowserLaunch:
    """One started browser with a tree's extension loaded: a loop thread, a profile, the
    browser. The engines of the tree attach a session each (``BrowserSession``); ``paths`` are
    the ways in (``via``) those sessions take, so that one launch is prepared for all of them
    (in Firefox, what the packed add-on holds), and ``pages`` the extension pages it may be
    asked to open once its sessions are done (``page_scripts``: in Firefox the add-on opens
    them itself, so it is packed for them). Start-up is bounded, close is bounded."""

    def __init__(self, engine: BrowserEngine, paths: tuple[str, ...], pages: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.paths = paths
        self.pages = pages
        self.profile = temporary_profile(engine.kind)
        self.serial = next(_LAUNCHES)  # names the launch in its sessions' timings
        self.loop = LoopThread(f"extparity-{engine.name}")
        self.closed = False
        self.phase = "start-up"
        start_or_close(self, self._checked_start, engine.startup_timeout_s)

    async def _checked_start(self) -> None:
        self.engine.check_executable()
        await self.start()

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        """Close the browser and Playwright; errors here change no result."""
        raise NotImplementedError

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.loop.call(self.stop, 30)
        except Exception:  # a wedged driver: the loop thread and the browser die with the harness
            pass
        self.loop.stop()
        remove_profile(self.profile)


class BrowserSession(Session):
    """One engine's way into a launch: its page (Chromium) or its channel (Firefox). Without a
    ``SharedBrowser`` the session starts a launch of its own and stops it on close."""

    def __init__(self, engine: BrowserEngine) -> None:
        self.engine = engine
        self.module_hashes: dict[str, str] = {}
        self.shared = engine.shared
        self.broke = False
        self._closed = False
        self.phase = "start-up"
        self.launch = self.shared.acquire(engine) if self.shared else engine.launch_class(engine, (engine.path,))
        self.loop = self.launch.loop
        self.timings = {"browser_launches": self.launch.serial}
        start_or_close(self, self.attach, engine.startup_timeout_s, self.startup_hint)

    async def attach(self) -> None:
        """Open this engine's way into the started browser and load the subject there."""
        raise NotImplementedError

    async def detach(self) -> None:
        """Close what ``attach`` opened, leaving the browser to its other sessions."""

    async def start_recording(self) -> None:
        """Turn on the kind's recorders (``BrowserEngine.record_evidence``); each kind says what."""
        raise NotImplementedError

    async def begin_case(self, case_id: str) -> None:
        """Mark where the recording of ``case_id`` begins."""
        raise NotImplementedError

    async def end_case(self, case_id: str) -> tuple[dict[str, bytes], list[str], list[str]]:
        """What was recorded since ``begin_case``: files by what they hold, console lines, and
        a line for each thing the kind could not record and why."""
        raise NotImplementedError

    def startup_hint(self) -> str:
        """Extra words for a start-up time-out (e.g. the add-on's state in the profile)."""
        return ""

    def broken(self, batch: Batch) -> Batch:
        """A batch that broke in a shared browser may be another engine's doing: it names no
        culprit, and this engine goes on in a browser of its own (see ``SharedBrowser``)."""
        if batch.broken is not None:
            self.broke = True
            if self.shared is not None:
                batch.broken = replace(batch.broken, case_id=None, attributable=False,
                                       detail=f"{batch.broken.detail} (in the browser it shared)")
                self.engine.shared = None
        return batch

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self.launch.closed:
            try:
                self.loop.call(self.detach, 10)
            except Exception:  # the browser went away under it: nothing left to close
                pass
        if self.shared is not None:
            self.shared.release(self.launch, broken=self.broke)
        else:
            self.launch.close()

    def kill(self) -> None:
        self.broke = True
        self.close()


def start_or_close(owner: Any, step: Any, timeout_s: float, hint: Any = lambda: "") -> None:
    """Run a start-up ``step`` on ``owner``'s loop (a launch or a session, with ``phase``,
    ``loop`` and ``close``); if it fails, close ``owner`` and raise one EngineStartError naming
    the phase it was in. ``hint()`` adds words to a time-out, read before ``close`` deletes the
    profile it may look at."""
    try:
        owner.loop.call(step, timeout_s)
    except TimeoutError:
        detail = f"{owner.phase}: no answer within {timeout_s:g}s" + hint()
        owner.close()
        raise EngineStartError(detail) from None
    except EngineStartError:
        owner.close()
        raise
    except Exception as exc:
        owner.close()
        raise EngineStartError(f"{owner.phase}: {_first_line(exc)}") from None


HARMLESS_STDERR = ("unexpected operator", "scaling_cur_freq", "scaling_max_freq", "crashpad", "dbus")


def _first_line(exc: BaseException) -> str:
    """The browser's own reason, on one line. A failed launch comes back from Playwright with
    the whole command line and the browser's stderr; the reason is the browser's FATAL line,
    else its last stderr line that is not known noise (Debian's wrapper, crashpad, dbus)."""
    text = str(getattr(exc, "message", None) or exc or type(exc).__name__)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    stderr = [line.split("[err]", 1)[1].strip() for line in lines if "[err]" in line]
    fatal = [line for line in stderr if ":FATAL:" in line]
    telling = fatal or [line for line in stderr if not any(noise in line for noise in HARMLESS_STDERR)]
    if telling:
        reason = telling[0] if fatal else telling[-1]
        return f"{lines[0]} | browser said: {reason.split('] ', 1)[-1]}"[:2000]
    return " | ".join(lines[:2])[:2000]
