"""The `[tool.extparity]` table: where the trees, modules, entry points and corpus live.

Everything the harness knows about its subject comes from here, so another extension team can
point it at their own trees by editing one table.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .engines.base import EntryPoint, ModuleConfig


class ConfigError(Exception):
    """The config table is missing or malformed; the message names the key."""


@dataclass(frozen=True)
class Config:
    root: Path
    trees: dict[str, Path]
    modules: ModuleConfig
    reference: dict[str, str]
    corpus: tuple[Path, ...]
    known_deviations: Path | None
    extension_root: Path | None
    chromium: str
    firefox: str
    page: str

    def tree(self, name: str) -> Path:
        if name not in self.trees:
            raise ConfigError(f"[tool.extparity.trees] has no tree named {name!r}")
        return self.trees[name]


def find_pyproject(start: Path | None = None) -> Path:
    """The nearest pyproject.toml with a [tool.extparity] table, from `start` upwards."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "extparity" in tomllib.loads(candidate.read_text()).get("tool", {}):
            return candidate
    raise ConfigError(f"no pyproject.toml with a [tool.extparity] table in {here} or above")


def _require(table: dict, key: str, kind: type, where: str):
    if key not in table:
        raise ConfigError(f"{where}: missing key {key!r}")
    if not isinstance(table[key], kind):
        raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {type(table[key]).__name__}")
    return table[key]


def load_config(pyproject: Path | None = None) -> Config:
    path = Path(pyproject) if pyproject else find_pyproject()
    try:
        table = tomllib.loads(path.read_text())["tool"]["extparity"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise ConfigError(f"{path}: cannot read [tool.extparity]: {error}") from None
    root = path.parent.resolve()
    where = "[tool.extparity]"
    trees = {name: root / rel for name, rel in _require(table, "trees", dict, where).items()}
    module_list = _require(table, "modules", list, where)
    entries = {
        fn: EntryPoint(
            module=_require(entry, "module", str, f"{where}.entries.{fn}"),
            export=_require(entry, "export", str, f"{where}.entries.{fn}"),
        )
        for fn, entry in _require(table, "entries", dict, where).items()
    }
    try:
        modules = ModuleConfig(modules=tuple(module_list), entries=entries)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    browsers = table.get("browsers", {})
    deviations = table.get("known_deviations")
    extension_root = table.get("extension_root")
    return Config(
        root=root,
        trees=trees,
        modules=modules,
        reference=dict(_require(table, "reference", dict, where)),
        corpus=tuple(root / rel for rel in _require(table, "corpus", list, where)),
        known_deviations=root / deviations if deviations else None,
        extension_root=root / extension_root if extension_root else None,
        chromium=browsers.get("chromium", "/usr/bin/chromium"),
        firefox=browsers.get("firefox", "/usr/bin/firefox-esr"),
        page=browsers.get("page", "inspector.html"),
    )
