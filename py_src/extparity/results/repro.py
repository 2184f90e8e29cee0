"""Repro files: each failing case as a corpus of its own (test262-harness's --save-only-failed).

``save_failures`` writes, for every case with a failing cell, ``<id>.jsonl`` (the case's corpus
line, exactly as the corpus contract reads it) and ``<id>.verdicts.json`` (each engine's
verdict, cell and notes), plus ``tags.json`` so the folder is a corpus root: `extparity run
--corpus DIR` reruns every failure and `--corpus DIR/<id>.jsonl` reruns one. The folder is
replaced as a whole, and only if it is empty or an earlier repro folder (it holds ``MARKER``),
so a folder of someone's own is never overwritten.

A case that fails only in browser engines also gets what each of those browsers showed when it
ran the case again (``run.evidence``): ``<id>.<engine>.trace.zip``, ``<id>.<engine>.png`` and
``<id>.<engine>.console.txt`` as the kind could record them, listed with the rerun's verdict in
``<id>.verdicts.json`` under ``browser_evidence``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..corpus.cases import TAGS_FILE
from ..engines.base import Evidence
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


def evidence_entry(case_id: str, engine: str, evidence: Evidence, run_verdict: str | None,
                   files: dict[str, str | bytes]) -> dict:
    """One engine's ``browser_evidence`` in a case's verdicts file; its files go into ``files``."""
    names = []
    for what, data in sorted(evidence.files.items()):
        names.append(f"{case_id}.{engine}.{what}")
        files[names[-1]] = data
    if evidence.verdict is None and evidence.failure is None:
        rerun = "not run again"
    elif evidence.verdict != run_verdict:
        rerun = "a DIFFERENT verdict from the run's: the files show a rerun that did not reproduce the run"
    else:
        rerun = "no verdict, as in the run" if run_verdict is None else "the same verdict as in the run"
    return {"files": names, "rerun": rerun, "rerun_verdict": evidence.verdict, "rerun_failure": evidence.failure,
            "not_recorded": evidence.missing}


def repro_files(document: dict, evidence: dict[str, dict[str, Evidence]] | None = None) -> dict[str, str | bytes]:
    """File name -> contents for every failing case of ``document``, with the browsers'
    ``evidence`` (case id -> engine -> what it showed) of the cases that have some."""
    files: dict[str, str | bytes] = {MARKER: "Written by `extparity run --save-failures` / `extparity report --save-failures`; "
                     "the whole folder is replaced on the next write.\n"}
    used_tags: set[str] = set()
    for case in document["cases"]:
        if not failing_cells(case):
            continue
        used_tags.update(case["tags"])
        files[f"{case['id']}.jsonl"] = corpus_line(case)
        shown = verdicts(case)
        record = {
            "case": case["id"],
            "origin": f"{case['file']}:{case['line']}",
            "reference": document.get("reference"),
            "cells": case["cells"],
            "notes": case.get("notes", {}),
            "verdicts": shown,
        }
        seen = (evidence or {}).get(case["id"])
        if seen:
            record["browser_evidence"] = {engine: evidence_entry(case["id"], engine, found, shown.get(engine), files)
                                          for engine, found in sorted(seen.items())}
        files[f"{case['id']}.verdicts.json"] = json.dumps(record, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    registry = document["corpus"].get("tags", {})
    tags = {tag: registry.get(tag, "declared by the result this repro came from") for tag in sorted(used_tags)}
    files[TAGS_FILE] = json.dumps(tags, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
    return files


def save_failures(document: dict, folder: Path, evidence: dict[str, dict[str, Evidence]] | None = None) -> int:
    """Replace ``folder`` with the repro files of ``document`` (and the browsers' ``evidence``);
    return how many cases it holds."""
    check_folder(folder)
    files = repro_files(document, evidence)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, data in files.items():
            if isinstance(data, bytes):
                (staging / name).write_bytes(data)
            else:
                (staging / name).write_text(data, encoding="utf-8", newline="\n")
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
