"""What the commands share: options that select engines and limits, output paths checked before
any engine starts, atomic writes. Corpora and runs go through ``extparity.api``, as any tool's."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, TextIO

from ..engines.base import Evidence
from ..engines.driver import Controller
from ..project.atomic import write_atomic
from ..reports import html_report, junit
from ..reports.annotations import github as github_annotations
from ..project.config import Project
from ..results import repro
from ..run import evidence
from ..run.parity import RunResult


class UsageError(Exception):
    """A command-line problem found before any engine started."""


@dataclass(frozen=True)
class Stdout:
    """An output path given as `-`: the report goes to this stream (the command's stdout)."""

    stream: TextIO


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def print_failures(lines: list[str]) -> bool:
    """The closing FAILED block on stderr, one indented line each; False when there is none."""
    if not lines:
        return False
    stderr("\nFAILED:")
    for line in lines:
        stderr(f"  {line}")
    return True


def add_corpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", action="append", metavar="PATH",
                        help="corpus directory or .jsonl file, repeatable (default: the config's)")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engines", help="comma-separated engine names (default: every configured engine)")
    add_limit_options(parser)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--case-timeout", type=float, default=10.0, metavar="S",
                        help="seconds one case may take in one engine before it is a TIMEOUT (default 10)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="seconds each engine may spend in all (default 600)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="engines running at once (default: all selected)")


def check_output(path: str | Stdout | None) -> Path | Stdout | None:
    """Fail before any engine starts if a report could not be written there; `-` is stdout."""
    if not path:
        return None
    if isinstance(path, Stdout):
        return path
    if path == "-":
        return Stdout(sys.stdout)
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a directory, not a file")
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{path}: cannot create its folder: {error.strerror}") from None
    try:  # a real probe: permission bits do not stop root, a read-only file system does
        handle, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise UsageError(f"{path}: not writable ({error.strerror})") from None
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{path}: not writable")
    return target


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """The reports made from a JSON result (`run` and `report` share them)."""
    parser.add_argument("--html", metavar="PATH", help="write a self-contained HTML report (matrix, odd one out, diffs)")
    parser.add_argument("--junit", metavar="PATH", help="write JUnit XML: one testcase per case and engine")
    parser.add_argument("--annotations", metavar="PATH",
                        help="write GitHub Actions ::error annotations (file and line of each failing case); "
                             "- for stdout, where a workflow step's output is read")
    parser.add_argument("--save-failures", metavar="DIR",
                        help="write each failing case as a corpus of its own, with every engine's verdict")


def check_report_outputs(args) -> dict[str, Path | Stdout | None]:
    """The report paths, checked before any engine starts."""
    outputs = {"html": check_output(args.html), "junit": check_output(args.junit),
               "annotations": check_output(args.annotations), "save_failures": None}
    if args.save_failures:
        outputs["save_failures"] = folder = Path(args.save_failures)
        try:
            repro.check_folder(folder)
        except repro.ReproError as error:
            raise UsageError(str(error)) from None
    return outputs


def browser_evidence(project: Project, result: RunResult, outputs: dict[str, Path | Stdout | None],
                     case_timeout_s: float) -> evidence.Seen:
    """With `--save-failures`, what the browsers showed of the cases only browsers fail, each run
    again with their recorders on (``run.evidence``), and a line for each browser that could not
    record; nothing is run without the option or without such a case."""
    if outputs["save_failures"] is None:
        return {}, []
    return evidence.record(project, result, case_timeout_s, stderr)


def write_reports(document: dict, outputs: dict[str, Path | Stdout | None], timings: dict | None = None,
                  baseline: dict | None = None, coverage: dict | None = None,
                  seen: dict[str, dict[str, Evidence]] | None = None) -> list[str]:
    """Write the HTML, JUnit, annotations and repro reports of ``document``; problems as lines.
    The HTML also shows ``timings`` (as `run --timings` writes them), the changes since
    ``baseline`` (a result) and the ``coverage`` document's view when they are given; the repro
    folder holds the browsers' evidence ``seen`` (``browser_evidence``)."""
    html = html_report.render(document, timings=timings, baseline=baseline, coverage=coverage) if outputs["html"] else ""
    errors = [write(outputs["html"], html) if outputs["html"] else None,
              write(outputs["junit"], junit.render(document)) if outputs["junit"] else None,
              write(outputs["annotations"], github_annotations(document)) if outputs["annotations"] else None]
    folder = outputs["save_failures"]
    if isinstance(folder, Path):  # check_report_outputs makes it a folder or None, never stdout
        try:
            repro.save_failures(document, folder, seen)
        except (OSError, repro.ReproError) as error:
            errors.append(f"cannot write {folder}: {getattr(error, 'strerror', None) or error}")
    return [error for error in errors if error]


def write(path: Path | Stdout | None, text: str | Iterable[str]) -> str | None:
    """Write a report atomically (``text`` whole or in pieces); a failure is one line for the
    failure list, not a traceback."""
    if path is None:
        return None
    if isinstance(path, Stdout):
        for piece in [text] if isinstance(text, str) else text:
            path.stream.write(piece)
        path.stream.flush()
        return None
    try:
        write_atomic(path, text)
    except OSError as error:
        return f"cannot write {path}: {error.strerror or error}"
    return None


def controller() -> Controller:
    """One per command: on SIGINT/SIGTERM every engine it started stops first."""
    return Controller()
