"""The web page where a tree's content script runs, for the message path from a content script
(``sender = "content"``): which URL to open, and the page the harness serves there itself.

Why the harness serves it: the URL comes from the manifest's own match pattern, so the content
script runs as it would on that site, and nothing leaves the machine (the browser's request is
answered by ``route``, in Chromium and in Firefox alike)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..project.manifest import load_manifest
from .base import EngineStartError

CONTENT_HOST = "extparity.test"
CONTENT_PAGE = "<!doctype html><title>extparity</title><p>A page where the extension's content script runs."


def content_script_url(tree: Path) -> tuple[str, str]:
    """A web page's URL where the manifest's first content script with code runs in its own world
    (not ``"world": "MAIN"``), and the match pattern it comes from: the pattern's wildcards filled
    in with ``extparity.test`` (its own subdomain under a ``*.`` host)."""
    manifest, _ = load_manifest(Path(tree).name, tree)  # unreadable: the browser's own load error says why
    for script in (manifest or {}).get("content_scripts") or []:
        if not isinstance(script, dict) or not script.get("js") or script.get("world") == "MAIN":
            continue
        for pattern in script.get("matches") or []:
            if pattern == "<all_urls>":
                return f"https://{CONTENT_HOST}/", pattern
            match = re.fullmatch(r"(\*|https?)://([^/]*)(/.*)", str(pattern))
            if match is None:
                continue
            scheme = "https" if match[1] == "*" else match[1]
            host = match[2]
            if host == "*":
                host = CONTENT_HOST
            elif host.startswith("*."):
                host = "extparity." + host[2:]
            return f"{scheme}://{host}{match[3].replace('*', '')}", pattern
    raise EngineStartError('sender = "content": the manifest declares no content script that runs in an http(s) page '
                           "in the extension's own world")


async def serve_content_page(tab: Any, url: str) -> None:
    """Answer the tab's request for ``url`` with the harness's own page."""
    await tab.route(url, lambda route: route.fulfill(status=200, content_type="text/html", body=CONTENT_PAGE))
