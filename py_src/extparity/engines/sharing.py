"""One browser per tree: the engines that would start the same browser with the same extension
(the page engine and its message-path twin) share one launch, one profile, one extension load.

Why: on a machine with fewer cores than browsers, start-up is a run's critical path; two
launches of one browser cost nearly twice one. What stays per engine: its page or channel in
the browser, the bytes it loaded (each session hashes its own), its verdicts, its failures.
"""

from __future__ import annotations

import threading
from typing import Iterable

from .base import Engine, EngineStartError
from .browser import BrowserEngine, BrowserLaunch


class SharedBrowser:
    """The one launch that the engines of one tree share (the page engine and its message-path
    twin): started by the first engine that opens a session, stopped when the last one closes.

    Why it may be given up: the sessions of one browser share its processes, so a case that
    hangs or crashes in one takes the other's calls down with it, and neither can then tell its
    culprit. A session that breaks here breaks the launch for all (``release(broken=True)``),
    and each engine whose session broke goes on in a browser of its own, where the driver
    finds the culprit as it does without sharing (``Batch.broken.attributable`` is False)."""

    def __init__(self, paths: tuple[str, ...], pages: tuple[str, ...] = ()) -> None:
        self.paths = paths
        self.pages = pages  # what the launch is prepared to open once its sessions are done (``KeptBrowsers``)
        self._lock = threading.Lock()
        self._launch: BrowserLaunch | None = None
        self._users = 0
        self._failed: str | None = None  # a start-up failure is the browser's, so every engine's
        self._kept = False  # ``keep``: the launch outlives its last session until ``let_go``

    def acquire(self, engine: BrowserEngine) -> BrowserLaunch:
        with self._lock:
            if self._failed is not None:
                raise EngineStartError(self._failed)
            if self._launch is None:
                try:
                    self._launch = engine.launch_class(engine, self.paths, self.pages)
                except EngineStartError as exc:
                    self._failed = str(exc)
                    raise
                self._users = 0
            self._users += 1
            return self._launch

    def others_remain(self, launch: BrowserLaunch) -> bool:
        """Whether a session other than the caller's is still open in ``launch``."""
        with self._lock:
            return launch is self._launch and self._users > 1

    def release(self, launch: BrowserLaunch, broken: bool) -> None:
        """One session fewer; the launch stops with its last session (unless kept) or with a broken one."""
        with self._lock:
            if launch is self._launch:
                self._users -= 1
                if not broken and (self._users > 0 or self._kept):
                    return
                self._launch = None
        launch.close()

    def keep(self) -> None:
        """Keep the launch open after its last session closes, for the pages the gate opens in it
        once the engines' cases are done (``kept_launch``), until ``let_go``."""
        with self._lock:
            self._kept = True

    def kept_launch(self) -> BrowserLaunch | None:
        """The launch, once every session closed without breaking it; None otherwise (it never
        started, failed to, or broke), and then a caller starts a browser of its own."""
        with self._lock:
            launch = self._launch
            return launch if launch is not None and not launch.closed and self._users == 0 else None

    def let_go(self) -> None:
        """Stop keeping the launch; it stops now unless a session is still open in it."""
        with self._lock:
            self._kept = False
            if self._users > 0 or self._launch is None:
                return
            launch, self._launch = self._launch, None
        launch.close()


class KeptBrowsers:
    """The browsers a run's engines share, kept open past the run for the extension pages the
    gate opens in them once every case is done (the page scripts check), instead of a second
    launch of the same browser with the same extension. ``pages``: tree name -> the pages each
    launch is prepared for before it starts (Firefox packs a recorder for them into the add-on,
    which waits to be told; Chromium opens any page when asked)."""

    def __init__(self, pages: dict[str, tuple[str, ...]]) -> None:
        self.pages = pages
        self.browsers: dict[str, SharedBrowser] = {}  # launch key -> the browser kept

    def launch(self, engine: BrowserEngine) -> BrowserLaunch | None:
        """The run's launch for ``engine``'s launch key, if kept and whole (``SharedBrowser.kept_launch``)."""
        shared = self.browsers.get(engine.launch_key())
        return shared.kept_launch() if shared is not None else None

    def let_go(self) -> None:
        for shared in self.browsers.values():
            shared.let_go()


def share_browsers(engines: Iterable[Engine], kept: KeptBrowsers | None = None) -> None:
    """Give the browser engines that would start the same browser with the same extension (one
    kind, tree and launch options; each its own ``path``) one ``SharedBrowser``; with ``kept``,
    kept open past the run (``SharedBrowser.keep``): its owner lets it go."""
    groups: dict[str, list[BrowserEngine]] = {}
    for engine in engines:
        if isinstance(engine, BrowserEngine):
            groups.setdefault(engine.launch_key(), []).append(engine)
    for group in groups.values():
        paths = tuple(sorted(engine.path for engine in group))
        if len(group) > 1 and len(set(paths)) == len(paths):
            shared = SharedBrowser(paths, kept.pages.get(group[0].tree_name or "", ()) if kept is not None else ())
            for engine in group:
                engine.shared = shared
            if kept is not None:
                shared.keep()
                kept.browsers[group[0].launch_key()] = shared
