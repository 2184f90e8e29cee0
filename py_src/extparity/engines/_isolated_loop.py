"""Run a Playwright async session on its own event loop in its own thread.

Why: the browser engines need hard timeouts around ``page.evaluate`` (only the async API can
abandon a call that never returns), but ``run()`` is synchronous and may be called from code
that already has an event loop running (pytest plugins, a future async runner), where
``asyncio.run`` would refuse. A private thread with a private loop sidesteps both.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable


def run_isolated(make_coro: Callable[[], Awaitable[Any]], hard_timeout_s: float) -> tuple[bool, Any]:
    """Return (finished, value). ``finished`` is False if the session outlived ``hard_timeout_s``.

    The coroutine is expected to enforce its own, tighter timeouts; this bound only catches a
    wedged driver. An abandoned daemon thread is the price of never hanging the caller.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make_coro())
        except BaseException as exc:  # reported to the caller, not swallowed
            box["error"] = exc

    thread = threading.Thread(target=target, name="extparity-browser", daemon=True)
    thread.start()
    thread.join(hard_timeout_s)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["value"]


async def close_quietly(context: Any) -> None:
    """Close a browser context within 20 s if one was opened; a failure here changes no result,
    and leaving ``async_playwright()`` stops the driver and its browsers anyway."""
    if context is None:
        return
    try:
        await asyncio.wait_for(context.close(), 20)
    except Exception:
        pass
