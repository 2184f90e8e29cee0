"""extparity: one corpus through the Python reference, QuickJS and real browsers, with verdicts
compared byte for byte. The harness knows its subject only through `[tool.extparity]`.

The library API is ``extparity.api``; the names that read well from here are re-exported
(``extparity.load_project``, ``read_result``, ``write_result``, ``behaviour_changes``). They are
imported on first use, so that ``import extparity`` (which pytest does for the plugin) stays
cheap. ``run`` is ``extparity.api.run``: ``extparity.run`` is the stage package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import behaviour_changes, load_project, read_result, write_result

ROOT_API = ("behaviour_changes", "load_project", "read_result", "write_result")
__all__ = ["__version__", *ROOT_API]


def __getattr__(name: str) -> Any:
    if name in ROOT_API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'extparity' has no attribute {name!r}")
