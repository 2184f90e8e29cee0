"""What ships is exactly what the tree says: file names every disk reads alike, no links, no
hidden files, an artifact whose entries are the tree's files, and a ``dist/`` that holds only
what this gate run built.

Why each rule:

* Two names that differ only by case (``Background.js``, ``background.js``), or only by Unicode
  normalisation (``café.js`` composed and decomposed), are two files here and in the zip, but one
  file on a case-insensitive or normalising disk (macOS, Windows): there, whichever is unpacked
  last wins, and it need not be the copy the engines verified.
* A symlink is packed as the bytes it points to today, possibly from outside the tree; the
  engines may test one thing and the link another tomorrow. A link to a folder is not followed
  by the walk that packs, so its files would be missing from the artifact while a browser loading
  the tree finds them.
* A hidden file (``.env``, ``.git/``, ``.DS_Store``) is packed like any other and ships to every
  user, though no one reviewing the tree in a file browser sees it.
* A name with a backslash is one file here and a path (possibly with ``..``) for a Windows unzip.
* ``dist/`` is what CI uploads (``dist/*.zip``): a file there that this run did not build (a
  drifted zip, an old version's artifact) would ship without having been gated.
"""

from __future__ import annotations

import io
import os
import stat
import unicodedata
import zipfile
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Iterable


def tree_problems(name: str, tree: Path) -> list[str]:
    """Every file name of ``tree`` that would not ship as the tree shows it, one line each."""
    tree = Path(tree)
    problems: list[str] = []
    names: list[str] = []
    for folder, dirs, files in os.walk(tree, followlinks=False):
        base = Path(folder)
        for entry in sorted(dirs) + sorted(files):
            path = base / entry
            rel = path.relative_to(tree).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{name}/{rel}: a symlink (to {os.readlink(path)}): a shipped file must be a file "
                                f"of the tree, not a link to one")
            elif entry.startswith("."):
                problems.append(f"{name}/{rel}: a hidden {'folder' if stat.S_ISDIR(mode) else 'file'} would ship "
                                f"in the artifact: remove it from the tree")
            elif "\\" in entry:
                problems.append(f"{name}/{rel}: a backslash in a file name is a folder separator when a "
                                f"Windows tool unpacks the artifact")
            elif not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                problems.append(f"{name}/{rel}: not a regular file")
            else:
                names.append(rel)
        dirs[:] = [d for d in dirs if not (d.startswith(".") or os.path.islink(base / d))]
    return problems + colliding_names(name, names)


def colliding_names(name: str, paths: Iterable[str]) -> list[str]:
    """Paths that are one path on a disk that ignores case or normalises Unicode."""
    groups: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        groups[unicodedata.normalize("NFC", path).casefold()].append(path)
    problems = []
    for same in groups.values():
        if len(same) < 2:
            continue
        shown = " and ".join(ascii(p)[1:-1] for p in sorted(same))
        composed = {unicodedata.normalize("NFC", p) for p in same}
        why = ("differ only by Unicode normalisation (NFC)" if len(composed) == 1 else "differ only by case")
        problems.append(f"{name}: {shown} {why}: on a case-insensitive or normalising disk (macOS, Windows) "
                        f"they are one file, and the one unpacked last wins")
    return problems


def entry_problems(artifact_name: str, data: bytes, tree: Path, unpacked: Path) -> list[str]:
    """The artifact's entries, one by one, against the tree's files and against the folder the
    engines ran on: the same names (each once, each a plain relative path), the same bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        packed = {info.filename: archive.read(info) for info in infos if not info.is_dir()}
    problems = []
    seen: set[str] = set()
    for info in infos:
        entry = info.filename
        parts = PurePosixPath(entry).parts
        if entry in seen:
            problems.append(f"{artifact_name}: entry {entry} is in the artifact twice")
        elif entry.startswith("/") or "\\" in entry or ".." in parts or "." in entry.rstrip("/").split("/"):
            problems.append(f"{artifact_name}: entry {entry!r} is not a plain file path inside the extension")
        seen.add(entry)
    on_disk = _regular_files(tree)
    ran_on = _regular_files(unpacked)
    problems += [f"{artifact_name}: {rel}: in the tree, not in the artifact" for rel in sorted(set(on_disk) - set(packed))]
    for entry, payload in sorted(packed.items()):
        if entry not in on_disk:
            problems.append(f"{artifact_name}: {entry}: in the artifact, not in the tree")
        elif payload != on_disk[entry].read_bytes():
            problems.append(f"{artifact_name}: {entry}: its bytes differ from the tree's")
        if entry not in ran_on or ran_on[entry].read_bytes() != payload:
            problems.append(f"{artifact_name}: {entry}: the unpacked copy the engines ran on does not hold "
                            f"the artifact's bytes")
    problems += [f"{artifact_name}: {rel}: in the unpacked copy the engines ran on, not in the artifact"
                 for rel in sorted(set(ran_on) - set(packed))]
    return problems


def _regular_files(folder: Path) -> dict[str, Path]:
    """Tree-relative path -> file, for the regular files reached without following links (the
    links themselves are refused by ``tree_problems``)."""
    found = {}
    for base, dirs, files in os.walk(folder, followlinks=False):
        for entry in files:
            path = Path(base) / entry
            if stat.S_ISREG(os.lstat(path).st_mode):
                found[path.relative_to(folder).as_posix()] = path
    return found


def stray_files(dist: Path, built: Iterable[Path], working: Path, record: str = "") -> list[str]:
    """Files in ``dist/`` that this gate run did not build (``working``, the engines' unpacked
    copies, is the gate's own and removed afterwards; ``record``, the gate's record of what it
    built, is its own too)."""
    if not Path(dist).is_dir():
        return []
    keep = {Path(p).resolve() for p in built} | ({(Path(dist) / record).resolve()} if record else set())
    problems = []
    for base, dirs, files in os.walk(dist, followlinks=False):
        dirs[:] = sorted(d for d in dirs if (Path(base) / d).resolve() != Path(working).resolve())
        for entry in sorted(files) + [d for d in dirs if os.path.islink(Path(base) / d)]:
            path = Path(base) / entry
            if path.resolve() not in keep or path.is_symlink():
                rel = path.relative_to(dist).as_posix()
                problems.append(f"{Path(dist).name}/{rel}: not built by this gate run, yet dist/ is what a "
                                f"release uploads: remove it")
    return problems
