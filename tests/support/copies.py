"""Throwaway copies of a project, for the tests that break one on purpose or must leave the
original untouched. The scenario copies with a corpus of their own build on these:
``gate_copy.Copy`` (the gate tests) and ``run_copy.Project`` (the run and report tests)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import ROOT, SHAPED, SUBFOLDER, WEB_EXT, bundled_table
from support.config_files import write_pyproject

TREES = ("chrome", "firefox")
# The shaped extension ships its two scan.js twins a comment apart, on purpose.
SHAPED_DIFFERENCE = "lib/parser/scan.js"


def copy_folders(root: Path, *names: str) -> Path:
    """This checkout's folders ``names`` (e.g. "extension", "py_src/toolcalls"), copied into ``root``."""
    for name in names:
        shutil.copytree(ROOT / name, root / name)
    return root


def copy_bundled_project(root: Path) -> Path:
    """The bundled project, whole and as it is configured: its own pyproject.toml, the reference
    included, nothing pointing back into this checkout."""
    copy_folders(root, "extension", "fixtures", "adapters", "policy", "py_src/toolcalls")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def copy_bundled_trees(root: Path) -> Path:
    """The bundled extension's trees as ``root``/ext/chrome and ``root``/ext/firefox."""
    for tree in TREES:
        shutil.copytree(ROOT / "extension" / tree, root / "ext" / tree)
    return root


def copy_shaped(copy: Path, *, twins: bool = False, trees_only: bool = False) -> Path:
    """The shaped extension (its config, corpus and adapter too unless ``trees_only``) at ``copy``;
    with ``twins``, its planted difference between the trees is removed."""
    for source, target in ([(SHAPED / tree, copy / tree) for tree in TREES] if trees_only else [(SHAPED, copy)]):
        shutil.copytree(source, target, dirs_exist_ok=True)
    if twins:
        shutil.copyfile(copy / "chrome" / SHAPED_DIFFERENCE, copy / "firefox" / SHAPED_DIFFERENCE)
    return copy


def copy_subfolder(tmp_path: Path) -> Path:
    """The subfolder extension at ``tmp_path``/subfolder, its web-ext path pointed at this checkout's."""
    copy = tmp_path / "subfolder"
    shutil.copytree(SUBFOLDER, copy)
    config = copy / "pyproject.toml"
    config.write_text(config.read_text().replace('"../../../.tools/node_modules/.bin/web-ext"', json.dumps(str(WEB_EXT))))
    return copy


def headless_copy(root: Path, engines: tuple[str, ...], corpus_files: tuple[str, ...]) -> Path:
    """The bundled project with only ``engines`` and the bundled corpus files ``corpus_files``
    (relative to fixtures/), no known deviations, one case of each entry enough for the gate."""
    copy_folders(root, "extension", "adapters", "policy")  # adapters/: the message adapters and the grammar plugin the fuzz check loads
    for rel in corpus_files:
        (root / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "fixtures" / rel, root / "corpus" / rel)
    shutil.copy(ROOT / "fixtures" / "tags.json", root / "corpus" / "tags.json")
    (root / "known-deviations.json").write_text("[]\n")
    table = bundled_table()
    table["engines"] = {name: spec for name, spec in table["engines"].items() if name in engines}
    table["engines"]["python"]["path"] = str(ROOT / "py_src")
    table["corpus"] = ["corpus"]
    table["known_deviations"] = "known-deviations.json"
    table["gate"]["minimum_cases"] = {"parse": 1, "repair": 1}
    table["gate"]["web_ext"]["command"] = str(ROOT / table["gate"]["web_ext"]["command"])
    write_pyproject(root / "pyproject.toml", table)
    return root
