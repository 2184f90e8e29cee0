"""Repro files: each failing case as a corpus of its own (test262-harness's --save-only-failed).

``save_failures`` writes, for every case with a failing cell, ``<id>.jsonl`` (the case's corpus
line, exactly as the corpus contract reads it) and ``<id>.verdicts.json`` (each engine's
verdict, cell and notes), plus ``tags.json`` so the folder is a corpus root: `extparity run
--corpus DIR` reruns every failure and `--corpus DIR/<id>.jsonl` reruns one. The folder is
replaced as a whole, and only if it is empty or an earlier repro folder (it holds ``MARKER``),
so a folder of someone's own is never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..corpus.cases import TAGS_FILE
from ..project.config import CASE_KEYS
from .read import failing_cells, verdicts

MARKER = ".extparity-repro"


class ReproError(Exception):
    """The repro folder cannot be used; the message names it."""


def check_folder(path: Path) -> None:
    """Fail before any engine starts if ``path`` cannot become a repro folder."""
    if path.exists() and not path.is_dir():
        raise ReproError(f"{path}: exists and is not a folder")
    if path.is_dir() and any(path.iterdir()) and not (path / MARKER).is_file():
        raise ReproError(f"{path}: not empty and not a repro folder written by extparity (no {MARKER}); "
                         f"choose another folder, nothing is overwritten")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReproError(f"{path}: cannot create its parent folder: {error.strerror}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReproError(f"{path}: its parent folder is not writable")


def corpus_line(case: dict) -> str:
    """The case as one corpus line: the corpus contract's keys around the entry's arguments."""
    record = {"id": case["id"], "fn": case["fn"], **case["args"],
              **{key: case[key] for key in CASE_KEYS[2:]}}
    return json.dumps(record, ensure_ascii=True) + "\n"


def repro_files(document: dict) -> dict[str, str]:
    """File name -> text for every failing case of ``document``."""
    files = {MARKER: "Written by `extparity run --save-failures` / `extparity report --save-failures`; "
                     "the whole folder is replaced on the next write.\n"}
    used_tags: set[str] = set()
    for case in document["cases"]:
        if not failing_cells(case):
            continue
        used_tags.update(case["tags"])
        files[f"{case['id']}.jsonl"] = corpus_line(case)
        files[f"{case['id']}.verdicts.json"] = json.dumps({
            "case": case["id"],
            "origin": f"{case['file']}:{case['line']}",
            "reference": document.get("reference"),
            "cells": case["cells"],
            "notes": case.get("notes", {}),
            "verdicts": verdicts(case),
        }, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    registry = document["corpus"].get("tags", {})
    tags = {tag: registry.get(tag, "declared by the result this repro came from") for tag in sorted(used_tags)}
    files[TAGS_FILE] = json.dumps(tags, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    return files


def save_failures(document: dict, folder: Path) -> int:
    """Replace ``folder`` with the repro files of ``document``; return how many cases it holds."""
    check_folder(folder)
    files = repro_files(document)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8", newline="\n")
        if folder.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
            os.replace(folder, retired / folder.name)
            os.replace(staging, folder)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return sum(name.endswith(".jsonl") for name in files)
