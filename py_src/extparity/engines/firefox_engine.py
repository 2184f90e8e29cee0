"""Firefox engine: the extension installed as an add-on in stock Firefox ESR, driven over BiDi.

Why it looks different from the Chromium engine: WebDriver BiDi (the only Playwright route to
a stock Firefox here) refuses to navigate to moz-extension:// pages, so nothing can be
evaluated in the extension's origin from outside. The extension therefore runs the cases
itself, through a probe, and reports over loopback HTTP.

What the harness changes, in the packed copy only (the tree on disk is never touched):

* adds one file, ``extparity-probe.js`` (built from ``js/firefox-probe.template.js``: the
  shared batch runner, the realm helpers and the loopback protocol, with this run's
  ``http://127.0.0.1:PORT/TOKEN/`` baked in);
* rewrites ``manifest.json`` only to append ``"extparity-probe.js"`` to
  ``background.scripts`` (JSON re-serialised; no permission, CSP or other key changes: the
  server's CORS headers make the cross-origin fetches legal as shipped).

The configured modules are packed byte for byte, and the probe hashes them from the bytes
Firefox serves at their moz-extension:// URLs, so a packing mistake shows up as a hash
mismatch. The tree is zipped to ``<profile>/extensions/<gecko id>.xpi`` and enabled through
profile prefs; its origin UUID is pinned so that runs are reproducible.
"""

from __future__ import annotations

import asyncio
import json
import queue
import secrets
import tempfile
import threading
import time
import uuid
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Mapping, Sequence

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright

from ._isolated_loop import close_quietly, run_isolated
from .base import BrowserEngine, EngineRun, ModuleConfig, js_source

PROBE_FILE = "extparity-probe.js"
DEFAULT_GECKO_ID = "tool-call-inspector@extparity.dev"


class FirefoxEngine(BrowserEngine):
    """Runs cases inside ``tree`` installed as an add-on in headless Firefox ESR."""

    kind = "firefox"
    extra_description = {"protocol": "webdriver-bidi (channel moz-firefox)"}

    def __init__(self, name: str, tree: Path | str, config: ModuleConfig, *,
                 executable_path: str = "/usr/bin/firefox-esr", chunk_size: int = 500,
                 startup_timeout_s: float = 90.0) -> None:
        super().__init__(name, tree, config, executable_path=executable_path, chunk_size=chunk_size,
                         startup_timeout_s=startup_timeout_s)

    def run(self, cases: Sequence[Mapping[str, Any]], timeout_s: float) -> EngineRun:
        chunks, run = self.new_run(cases)
        if run.status != "ok":
            return run
        try:
            gecko_id = _gecko_id(self.tree)
        except (OSError, ValueError, KeyError) as exc:
            return run.fail("crashed", f"manifest: {exc}")
        hard = self.startup_timeout_s + timeout_s + 60.0
        with tempfile.TemporaryDirectory(prefix="extparity-firefox-", ignore_cleanup_errors=True) as profile, \
                _ProbeServer(self.config, chunks) as server:
            try:
                pack_xpi(self.tree, Path(profile) / "extensions" / f"{gecko_id}.xpi", server.endpoint)
            except (OSError, ValueError, KeyError) as exc:
                return run.fail("crashed", f"packing the add-on: {exc}")
            try:
                finished, _ = run_isolated(
                    lambda: self._session(profile, gecko_id, server, len(chunks), timeout_s, run), hard)
            except Exception as exc:
                return run.fail("crashed", f"playwright: {type(exc).__name__}: {exc}")
            if not finished:
                run.fail("timeout", f"browser session still running after {hard:.0f}s; abandoned")
            run.timings["chunks_s"] = server.chunk_seconds()
            run.timings["cases_s"] = sum(run.timings["chunks_s"])
        return run

    async def _session(self, profile: str, gecko_id: str, server: "_ProbeServer", n_chunks: int,
                       timeout_s: float, run: EngineRun) -> None:
        started = time.perf_counter()
        deadline = started + self.startup_timeout_s
        phase = "start-up"
        async with async_playwright() as p:
            context = None
            try:
                context = await asyncio.wait_for(p.firefox.launch_persistent_context(
                    profile,
                    channel="moz-firefox",
                    executable_path=self.executable_path,
                    headless=True,
                    firefox_user_prefs=_prefs(gecko_id),
                    timeout=self.startup_timeout_s * 1000,
                ), max(0.001, deadline - time.perf_counter()))
                self._browser_version = context.browser.version if context.browser else None
                context.on("close", lambda _ctx: server.events.put(("closed", "")))
                phase = "waiting for the probe"
                received = 0
                while True:
                    remaining = deadline - time.perf_counter()
                    if remaining <= 0:
                        hint = "" if received else "; " + _addon_state(Path(profile), gecko_id)
                        run.fail("timeout", f"{phase}: no report in time "
                                            f"({received} of {n_chunks} chunks received){hint}")
                        return
                    try:
                        kind, body = await asyncio.get_running_loop().run_in_executor(
                            None, server.events.get, True, min(remaining, 1.0))
                    except queue.Empty:
                        continue
                    if kind == "config":
                        phase = "probe hashing and importing modules"
                    elif kind == "hashes":
                        run.module_hashes = json.loads(body)
                    elif kind == "ready":
                        run.timings["startup_s"] = time.perf_counter() - started
                        deadline = time.perf_counter() + timeout_s
                        phase = "running chunks"
                    elif kind == "result":
                        run.add_batch(body)
                        received += 1
                    elif kind == "done":
                        return
                    elif kind == "fatal":
                        run.fail("crashed", f"{phase}: probe reported: {body[:4000]}")
                        return
                    elif kind == "closed":
                        run.fail("crashed", f"{phase}: Firefox closed or crashed "
                                            f"({received} of {n_chunks} chunks received)")
                        return
            except (asyncio.TimeoutError, PlaywrightTimeoutError) as exc:
                run.fail("timeout", f"{phase}: timed out ({type(exc).__name__})")
            except PlaywrightError as exc:
                run.fail("crashed", f"{phase}: {exc.message.strip()[:2000]}")
            finally:
                await close_quietly(context)


def _prefs(gecko_id: str) -> dict[str, Any]:
    """Profile prefs that make Firefox enable an unsigned add-on found in the profile."""
    return {
        "xpinstall.signatures.required": False,  # honoured by ESR, not by release builds
        "extensions.autoDisableScopes": 0,
        "extensions.enabledScopes": 15,
        # Pin the moz-extension:// origin so paths in reports are stable from run to run.
        "extensions.webextensions.uuids": json.dumps({gecko_id: str(uuid.uuid5(uuid.NAMESPACE_URL, gecko_id))}),
        # MV3 backgrounds are event pages, suspended after 30 s idle; a fetch loop does not
        # count as activity. 5 min is the maximum Firefox accepts, so one run must fit in it.
        "extensions.background.idle.timeout": 300_000,
    }


def _addon_state(profile: Path, gecko_id: str) -> str:
    """What the profile's add-on database says, to tell "not installed" from "probe hung"."""
    try:
        addons = json.loads((profile / "extensions.json").read_text(encoding="utf-8"))["addons"]
    except (OSError, ValueError, KeyError):
        return "add-on state: no readable extensions.json in the profile"
    for addon in addons:
        if addon.get("id") == gecko_id:
            keys = ("active", "userDisabled", "appDisabled", "signedState", "location")
            return "add-on state: " + json.dumps({k: addon.get(k) for k in keys})
    return f"add-on state: {gecko_id} not in the profile's add-on database (manifest rejected?)"


def _gecko_id(tree: Path) -> str:
    manifest = json.loads((tree / "manifest.json").read_text(encoding="utf-8"))
    settings = manifest.get("browser_specific_settings") or manifest.get("applications") or {}
    gecko_id = settings.get("gecko", {}).get("id")
    if not gecko_id:
        raise ValueError("browser_specific_settings.gecko.id is required to install the add-on")
    return gecko_id


def pack_xpi(tree: Path, xpi: Path, endpoint: str) -> None:
    """Zip ``tree`` as shipped, plus the probe and its ``background.scripts`` entry."""
    manifest = json.loads((tree / "manifest.json").read_text(encoding="utf-8"))
    scripts = manifest.get("background", {}).get("scripts")
    if not isinstance(scripts, list):
        raise ValueError("manifest background.scripts must be a list for the probe to run")
    if (tree / PROBE_FILE).exists():
        raise ValueError(f"the tree already has a file named {PROBE_FILE}")
    manifest["background"]["scripts"] = [*scripts, PROBE_FILE]
    probe = (js_source("firefox-probe.template.js")
             .replace("@@ENDPOINT@@", endpoint)
             .replace("/*@@BATCH_RUNNER@@*/", js_source("batch-runner.js"))
             .replace("/*@@EXT_REALM@@*/", js_source("ext-realm.js")))
    xpi.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(xpi, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(tree.rglob("*")):
            rel = path.relative_to(tree).as_posix()
            if path.is_file() and rel != "manifest.json":
                zf.write(path, rel)
        zf.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        zf.writestr(PROBE_FILE, probe)


class _ProbeServer:
    """Loopback HTTP server the probe talks to; every request becomes an event on a queue.

    A random token in the path keeps stray local requests from being mistaken for the probe.
    """

    def __init__(self, config: ModuleConfig, chunks: list[str]) -> None:
        self.events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._config = json.dumps(config.to_json(), ensure_ascii=True).encode("ascii")
        self._chunks = [c.encode("ascii") for c in chunks]
        self._served: dict[int, float] = {}
        self._answered: dict[int, float] = {}
        self._token = secrets.token_hex(16)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="extparity-probe-server",
                                        daemon=True)
        self.endpoint = f"http://127.0.0.1:{self._httpd.server_address[1]}/{self._token}/"

    def __enter__(self) -> "_ProbeServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def chunk_seconds(self) -> list[float]:
        """Per chunk: from serving its cases to receiving its results (includes two fetches)."""
        return [self._answered[k] - self._served[k] for k in sorted(self._answered) if k in self._served]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self
        prefix = f"/{self._token}/"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _reply(self, code: int, body: bytes = b"", ctype: str = "text/plain") -> None:
                self.send_response(code)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "Content-Type")
                self.send_header("Cache-Control", "no-store")
                if code != 204:
                    self.send_header("Content-Type", f"{ctype}; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if code != 204:
                    self.wfile.write(body)

            def do_OPTIONS(self) -> None:
                self._reply(204)

            def do_GET(self) -> None:
                if not self.path.startswith(prefix):
                    return self._reply(404)
                route = self.path[len(prefix):]
                if route == "config":
                    server.events.put(("config", ""))
                    return self._reply(200, server._config, "application/json")
                if route.startswith("chunk/") and route[6:].isdigit():
                    k = int(route[6:])
                    if k >= len(server._chunks):
                        return self._reply(204)
                    server._served[k] = time.perf_counter()
                    return self._reply(200, server._chunks[k], "application/json")
                self._reply(404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", errors="replace")
                if not self.path.startswith(prefix):
                    return self._reply(404)
                route = self.path[len(prefix):]
                if route.startswith("result/") and route[7:].isdigit():
                    server._answered[int(route[7:])] = time.perf_counter()
                    server.events.put(("result", body))
                elif route in ("hashes", "ready", "done", "fatal"):
                    server.events.put((route, body))
                else:
                    return self._reply(404)
                self._reply(204)

        return Handler
