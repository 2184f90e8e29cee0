"""Mozilla's ``web-ext lint`` on a Firefox artifact: what addons.mozilla.org's validator says.

Why: a tree that every engine agrees on can still be refused by the store (a missing key, an
unsafe assignment, a manifest Firefox will not accept in a future release). The linter is the
npm package ``web-ext`` (Node.js); the gate starts it while the engines run. Errors always
fail; warnings fail unless their code is accepted in ``[tool.extparity.gate].web_ext.allow``,
and an accepted code that no longer occurs fails too (as a stale known deviation does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..project.words import count

TIMEOUT_S = 180.0
VERSION = "10.7.0"  # the release the suite runs (the Makefile's, the README's install line)
BIN = "node_modules/.bin/web-ext"  # where `npm install --prefix DIR` puts the command, under DIR


@dataclass
class LintResult:
    ok: bool
    line: str
    problems: list[str] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)  # code, type, file, message: for the report


class Lint:
    """One ``web-ext lint`` of one folder, started now and read by ``result()``."""

    def __init__(self, command: str, source_dir: Path, allow: tuple[str, ...], missing: str = "") -> None:
        """``missing``: what to do when the command is not found (``install_advice``)."""
        self.command, self.source_dir, self.allow = command, source_dir, allow
        self.error: str | None = None
        self.process: subprocess.Popen | None = None
        executable = shutil.which(command)
        if executable is None:
            self.error = missing or f"web-ext not found ({command})"
            return
        env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "NODE_NO_WARNINGS": "1"}
        self.process = subprocess.Popen(
            [executable, "lint", "--source-dir", str(source_dir), "--no-input", "--output=json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)

    def result(self) -> LintResult:
        process = self.process
        if process is None:  # web-ext was not found, and self.error says so
            error = self.error or "web-ext lint did not start"
            return LintResult(False, error, [error])
        try:
            out, err = process.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            problem = f"web-ext lint gave no answer within {TIMEOUT_S:g}s"
            return LintResult(False, problem, [problem])
        try:
            report = json.loads(out)
        except ValueError:
            tail = (err or out).decode("utf-8", "replace").strip().splitlines()
            problem = f"web-ext lint exited {process.returncode} without a JSON report: {tail[-1] if tail else ''}"
            return LintResult(False, problem, [problem])
        return judge(report, self.allow)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def install_advice(configured: str | None, root: Path, config: Path) -> str:
    """What to run so that the gate finds web-ext, as given: the npm line and the config line
    that points at what it installs (npm puts the command under the prefix, never on PATH), or
    for a configured command, the install that creates it."""
    if configured is None:
        return (f"web-ext not found on PATH; in {root} run `npm install --prefix .tools web-ext@{VERSION}` and add "
                f"`web_ext = {{ command = \".tools/{BIN}\" }}` to [tool.extparity.gate] in {config.name} "
                f"(or put web-ext on PATH)")
    path = Path(configured)
    shown = path.relative_to(root).as_posix() if path.is_absolute() and path.is_relative_to(root) else configured
    where = f"web-ext not found at {shown} ([tool.extparity.gate].web_ext.command in {config.name})"
    if shown.endswith(BIN) and not Path(shown).is_absolute():
        prefix = shown[:-len(BIN)].rstrip("/") or "."
        return f"{where}; in {root} run `npm install --prefix {prefix} web-ext@{VERSION}`, which puts it there"
    return f"{where}; install it with `npm install web-ext@{VERSION}` and point the command at its {BIN}"


def judge(report: dict, allow: tuple[str, ...]) -> LintResult:
    """Errors fail; warnings fail unless allowed; allowed codes must still occur."""
    messages = [{"type": kind, "code": m.get("code"), "file": m.get("file"), "message": m.get("message")}
                for kind in ("errors", "warnings", "notices") for m in report.get(kind, [])]
    problems = [f"error {m['code']} ({m['file']}): {m['message']}" for m in messages if m["type"] == "errors"]
    problems += [f"warning {m['code']} ({m['file']}): {m['message']}" for m in messages
                 if m["type"] == "warnings" and m["code"] not in allow]
    seen = {m["code"] for m in messages if m["type"] == "warnings"}
    problems += [f"allowed warning {code} no longer occurs: remove it from [tool.extparity.gate].web_ext.allow"
                 for code in allow if code not in seen]
    summary = report.get("summary", {})
    counts = ", ".join(count(summary.get(kind + "s", 0), kind) for kind in ("error", "warning", "notice"))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return LintResult(False, f"{problems[0]}{more}", problems, messages)
    accepted = sorted(seen & set(allow))
    line = counts + (f"; accepted by config: {', '.join(accepted)}" if accepted else "")
    return LintResult(True, line, [], messages)
