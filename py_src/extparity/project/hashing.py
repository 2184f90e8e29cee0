"""The one digest of bytes the harness reports: module hashes, loaded and on disk, and artifacts."""

from __future__ import annotations

import hashlib


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
