"""Release metadata: every file that states the release's version states the same one.

Why: a release is described independently by each browser's manifest, the package manifest and
the changelog, and they drift (a seed release shipped 26.0.10 with its newest CHANGELOG entry
at 26.0.0). A manifest or ``package.json`` states ``"version"``; a changelog's newest release
heading does (``## 0.1.0 - 2026-11-30``, Keep a Changelog's ``## [0.1.0] - ...``; an
``[Unreleased]`` heading is not a release).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

CHANGELOG_HEADING = re.compile(r"^##\s+\[?v?(\d+(?:\.\d+){0,3}(?:-[0-9A-Za-z.-]+)?)\]?", re.MULTILINE)


def stated_version(path: Path) -> str | None:
    """The version a manifest, package.json or changelog states; None when it states none."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if Path(path).suffix.lower() == ".json":
        try:
            document = json.loads(text)
        except ValueError:
            return None
        version = document.get("version") if isinstance(document, dict) else None
        return version if isinstance(version, str) and version else None
    heading = CHANGELOG_HEADING.search(text)
    return heading.group(1) if heading else None


def declared_versions(sources: Mapping[str, Path]) -> dict[str, str | None]:
    """``{label: version}`` for each labelled source."""
    return {label: stated_version(path) for label, path in sources.items()}


def check_versions(versions: Mapping[str, str | None]) -> list[str]:
    """One problem per source without a version, and one if the stated versions disagree."""
    problems = [f"{source}: no version found" for source, version in versions.items() if version is None]
    if len({version for version in versions.values() if version is not None}) > 1:
        listing = ", ".join(f"{source}={version}" for source, version in versions.items())
        problems.append(f"versions disagree: {listing}")
    return problems
