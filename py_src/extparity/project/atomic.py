"""Atomic file writes: a report, result or artifact on disk is the old file or the whole new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` so that ``path`` holds either the old file or the whole new one, never a
    truncated mix (a full disk or an interrupt leaves the old file, or none). ``text`` may come
    in pieces (``results.build.chunks``): each is encoded and written as it comes."""
    pieces = [text] if isinstance(text, str) else text
    write_atomic_bytes(path, (piece.encode("utf-8") for piece in pieces))


def write_atomic_bytes(path: Path, data: bytes | Iterable[bytes]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            if isinstance(data, bytes):
                out.write(data)
            else:
                for piece in data:
                    out.write(piece)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
