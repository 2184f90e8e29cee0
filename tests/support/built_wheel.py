"""The built wheel, installed as another team installs it: a venv of its own (shared test support
for the tests that install the package instead of importing this checkout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support import ROOT


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of this checkout, built from a copy in ``source``: setuptools reuses a
    checkout's build/ folder, and a stale one adds old modules."""
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".tools", "build", "dist", "out", "__pycache__", "*.egg-info", "node_modules"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
                   check=True, timeout=300)
    (built,) = out.glob("extparity-*.whl")
    return built


def make_venv(path: Path, wheel: Path, constraints: list[str], extras: str = "engines",
              also: tuple[str, ...] = ()) -> Path:
    """A venv at ``path`` with ``wheel[extras]`` (and ``also``) installed under ``constraints``
    (``name==version`` or any requirement line); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    pins = path / "constraints.txt"
    pins.write_text("".join(f"{pin}\n" for pin in constraints), encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-c", str(pins), f"{wheel}[{extras}]" if extras else str(wheel), *also], check=True, timeout=900)
    return python
