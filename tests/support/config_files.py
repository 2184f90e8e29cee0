"""Writing throwaway `[tool.extparity]` configs for harness tests (shared test support)."""

from __future__ import annotations

import json
from pathlib import Path


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def write_pyproject(path: Path, table: dict) -> Path:
    """A pyproject.toml holding `table` as [tool.extparity]; nested dicts become subtables."""
    lines = ["[tool.extparity]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in table.items() if not isinstance(v, dict)]
    for name, sub in table.items():
        if isinstance(sub, dict):
            lines += ["", f"[tool.extparity.{name}]", *(f"{k} = {toml_value(v)}" for k, v in sub.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
