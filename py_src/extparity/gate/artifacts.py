"""The packed artifacts a release ships: one zip per tree, built so that the same tree always
gives the same bytes.

Why deterministic: a store upload, a CI artifact and a re-run of the gate must be comparable by
hash, and the gate must test the very bytes that ship. Every file of the tree goes in, in sorted
order, with a fixed timestamp (1980-01-01, the first date zip can store), fixed permissions
(0644), no directory entries and no extra fields, compressed at a fixed level. Chromium's store
takes the ``.zip``; Firefox's takes the same layout named ``.xpi``.

An artifact is never silently replaced: when ``dist/`` already holds one of the same name whose
bytes differ from a fresh build, that is a failure (a release must not change under one
version), and the file on disk is left as it was. The one exception is the gate's own leftover:
``dist/.extparity-built.json`` records the SHA-256 of every artifact the gate wrote and whether a
whole gate passed on it, so an artifact of a gate that failed (or ran only some checks), still
holding exactly the bytes that gate wrote, is never a release and is rebuilt (a failed gate's
zips failed the next gate after any edit). Bytes that are not the ones the gate recorded, or
that a passing gate released, still fail.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..project.hashing import sha256_hex
from ..project.atomic import write_atomic_bytes

RECORD = ".extparity-built.json"  # in dist/: what the gate wrote there; hidden, so `dist/*` uploads skip it
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644  # a regular file, rw-r--r--
LEVEL = 9


@dataclass(frozen=True)
class Artifact:
    tree: str
    path: Path  # where it was written (or the differing file that was kept)
    data: bytes  # the fresh build: what the engines test
    sha256: str
    files: int
    replaced: str | None = None  # the SHA-256 of a leftover of a gate that did not pass, rebuilt here


def artifact_name(base: str, version: str | None, tree: str, suffix: str) -> str:
    return f"{slug(base)}-{slug(version or 'unversioned')}-{slug(tree)}{suffix}"


def slug(text: str) -> str:
    """A file-name-safe form: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()).strip("-").lower() or "extension"


def pack(tree: Path) -> bytes:
    """Every file of ``tree`` as a deterministic zip."""
    tree = Path(tree)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(tree.rglob("*"), key=lambda p: p.relative_to(tree).as_posix()):
            if not path.is_file():
                continue
            info = zipfile.ZipInfo(path.relative_to(tree).as_posix(), FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = FILE_MODE << 16
            info.create_system = 3  # unix, so the mode above is read as such
            archive.writestr(info, path.read_bytes(), compresslevel=LEVEL)
    return buffer.getvalue()


def contents(data: bytes) -> dict[str, bytes]:
    """The artifact's files by name: the folder entries a team's zip tool may write hold nothing."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist() if not info.is_dir()}


def unpack(data: bytes, folder: Path) -> Path:
    """Extract an artifact into an empty ``folder`` (so the bytes that run are the artifact's)."""
    folder.mkdir(parents=True, exist_ok=False)
    for name, payload in contents(data).items():
        target = folder / name
        if not target.resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"artifact entry {name!r} points outside the folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(payload)
    return folder


def build(tree_name: str, tree: Path, path: Path, *, write: bool = True,
          record: dict[str, dict] | None = None) -> tuple[Artifact, list[str]]:
    """Pack ``tree`` into ``path``; an existing file with other bytes is kept and reported, never
    overwritten (``shipped_files.entry_problems`` then compares what shipped with the tree),
    unless ``record`` (``read_record``) says the gate wrote exactly those bytes and no whole gate
    passed on them. ``write=False`` packs in memory only: a tree whose files are refused must not
    reach dist/."""
    data = pack(tree)
    problems = []
    replaced = None
    on_disk = sha256_hex(path.read_bytes()) if write and path.exists() else None
    if on_disk is not None and on_disk != sha256_hex(data):
        written = (record or {}).get(path.name, {})
        if written.get("sha256") == on_disk and not written.get("released"):
            replaced = on_disk
        else:
            why = ("a whole gate passed on it" if written.get("sha256") == on_disk else
                   "the gate did not write these bytes")
            problems.append(f"{path.name}: an artifact of this name already exists with other bytes "
                            f"(sha256 {on_disk[:12]} on disk, {sha256_hex(data)[:12]} built from {tree_name}; "
                            f"{why}); a release must not change under one version: bump it or remove the file")
    if write and not problems and on_disk != sha256_hex(data):
        write_atomic_bytes(path, data)
    return Artifact(tree_name, path, data, sha256_hex(data), len(contents(data)), replaced), problems


def theirs(tree_name: str, path: Path) -> Artifact:
    """The team's own zip of ``tree_name`` (`wxt zip`, `web-ext build`), read as it will be
    uploaded; its entries are then held to the tree's files like the gate's own pack's. Raises
    OSError, or ValueError for a file that is not a zip."""
    data = Path(path).read_bytes()
    try:
        files = sum(1 for info in zipfile.ZipFile(io.BytesIO(data)).infolist() if not info.is_dir())
    except zipfile.BadZipFile as error:
        raise ValueError(f"not a zip: {error}") from None
    return Artifact(tree_name, Path(path), data, sha256_hex(data), files)


def read_record(dist: Path) -> dict[str, dict]:
    """Artifact name -> ``{"sha256", "released"}`` as the gate last wrote them (none when the
    record is missing or unreadable: every existing artifact is then held to its bytes)."""
    try:
        found = json.loads((Path(dist) / RECORD).read_text(encoding="utf-8"))["artifacts"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return found if isinstance(found, dict) else {}


def write_record(dist: Path, built: list[Artifact], released: bool) -> None:
    """Record what the gate wrote in ``dist``: an artifact a whole gate passed on stays released
    (also when a later gate fails with the same bytes: it may have shipped)."""
    before = read_record(dist)
    artifacts = {a.path.name: {"sha256": a.sha256,
                               "released": released or (before.get(a.path.name, {}).get("sha256") == a.sha256
                                                        and bool(before.get(a.path.name, {}).get("released")))}
                 for a in sorted(built, key=lambda a: a.path.name)
                 if a.path.parent == Path(dist) and a.path.is_file() and sha256_hex(a.path.read_bytes()) == a.sha256}
    if artifacts:
        write_atomic_bytes(Path(dist) / RECORD,
                           (json.dumps({"schema": 1, "artifacts": artifacts}, indent=1, sort_keys=True) + "\n").encode())
