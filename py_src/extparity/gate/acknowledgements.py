"""Acknowledged policy changes: data, as known deviations are (``gate --acknowledged FILE``).

The file is a JSON list of ``{"change", "reason", "link"}``: ``change`` quotes one line of the
gate's policy check exactly as it printed it (so an acknowledgement pins what the change is to,
a hash or a number, and cannot cover a later, different change), ``reason`` says why the
release makes it and ``link`` (http or https) points at the review. An entry that acknowledges
no change of this release is stale and fails, as a stale known deviation does: after a release
the file starts empty again. A first release (no baseline) acknowledges the files it trusts
unreviewed, one ``trusted unreviewed: TREE/PATH (sha256 ...)`` line each.

Placeholders: where extparity writes a reason for someone to replace (``init``'s purity
exceptions, ``gate --suggest``'s glue scripts), the reason ends in an instruction to the
reviewer. The policy check fails on a reason that still holds one (``placeholder``), in the
config and here, so a draft pasted unread does not pass as a decision.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.deviations import LINK

FIELDS = ("change", "reason", "link")
# The instructions that end the reasons extparity drafts; a reason holding one was not written
# by a reviewer.
REVIEW_SCRIPT = "confirm it decides no call itself"
REVIEW_EXCEPTION = "say why no verdict depends on it"
PLACEHOLDERS = (REVIEW_SCRIPT, REVIEW_EXCEPTION)


def placeholder(reason: str) -> str | None:
    """The drafted instruction ``reason`` still holds, or None when someone wrote it."""
    return next((tail for tail in PLACEHOLDERS if tail in reason), None)


@dataclass
class Acknowledgements:
    name: str  # the file as the lines name it
    changes: dict[str, int] = field(default_factory=dict)  # acknowledged line -> index of its entry
    problems: list[str] = field(default_factory=list)  # malformed entries, one line each


def load(path: Path) -> Acknowledgements:
    """The entries of ``path`` and the problems of the ones that cannot be used."""
    found = Acknowledgements(Path(path).name)
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        found.problems.append(f"{found.name}: not JSON: {error}")
        return found
    if not isinstance(entries, list):
        found.problems.append(f"{found.name}: must be a list of {{change, reason, link}}")
        return found
    for index, entry in enumerate(entries):
        where = f"{found.name}[{index}]"
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) and entry[k].strip() for k in FIELDS)):
            found.problems.append(f"{where}: needs change, reason and link (non-empty strings)")
        elif set(entry) - set(FIELDS):
            found.problems.append(f"{where}: unknown key {sorted(set(entry) - set(FIELDS))[0]!r}")
        elif not LINK.match(entry["link"]):
            found.problems.append(f"{where}: link must be an http(s) URL, got {entry['link']!r}")
        elif placeholder(entry["reason"]) is not None:
            found.problems.append(f"{where}: its reason is still the placeholder extparity wrote "
                                  f"(\"... {placeholder(entry['reason'])}\"): say in your own words why")
        elif entry["change"] in found.changes:
            found.problems.append(f"{where}: acknowledges the same change as [{found.changes[entry['change']]}]")
        else:
            found.changes[entry["change"]] = index
    return found
