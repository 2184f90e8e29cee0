"""Consistency checks for the extension's two browser trees (extension/chrome, extension/firefox).

Why: the Chrome and Firefox builds must ship the same inspector and agent code, and drift
between hand-kept copies is how one browser ends up running an old parser. Only the manifests
(and any glue a caller names explicitly) may differ. A release also has one version, which four
files state independently. Each check returns a list of readable problems (empty means fine)
rather than raising, so a test can assert on it and a release gate can print every problem.

Run `python -m extparity.tree_checks [EXTENSION_DIR]` to print the problems; exit status 1 if any.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path

BROWSERS = ("chrome", "firefox")
MANIFEST = "manifest.json"
# The newest release heading, "## 0.1.0 - 2026-11-30" or Keep a Changelog's "## [0.1.0] - ...".
CHANGELOG_HEADING = re.compile(r"^## \[?(\d+\.\d+\.\d+)\]?", re.MULTILINE)


def _tree_files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}


def _first_difference(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_identical_trees(ext_root: Path, glue: Iterable[str] = ()) -> list[str]:
    """Every file except manifest.json and the named `glue` paths is in both trees, byte for byte."""
    ext_root = Path(ext_root)
    trees = {b: ext_root / b for b in BROWSERS}
    missing = [f"{b}/: tree is missing" for b, t in trees.items() if not t.is_dir()]
    if missing:
        return missing
    exempt = {MANIFEST, *glue}
    files = {b: _tree_files(t) - exempt for b, t in trees.items()}
    chrome, firefox = files["chrome"], files["firefox"]
    problems = [f"{rel}: only in chrome/" for rel in sorted(chrome - firefox)]
    problems += [f"{rel}: only in firefox/" for rel in sorted(firefox - chrome)]
    for rel in sorted(chrome & firefox):
        a, b = ((trees[br] / rel).read_bytes() for br in BROWSERS)
        if a != b:
            problems.append(
                f"{rel}: differs between chrome/ and firefox/ (first at byte {_first_difference(a, b)})"
            )
    return problems


def _load_manifest(tree: Path) -> tuple[dict | None, str | None]:
    path = tree / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"{tree.name}/{MANIFEST}: missing"
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"{tree.name}/{MANIFEST}: not valid JSON ({exc})"
    if not isinstance(manifest, dict):
        return None, f"{tree.name}/{MANIFEST}: top level is not an object"
    return manifest, None


def _obj(value: object) -> dict:
    """`value` if it is a JSON object, else an empty one, so malformed manifests report, not crash."""
    return value if isinstance(value, dict) else {}


def _referenced_files(manifest: dict) -> list[str]:
    """Paths inside the extension that the manifest points at: background, popup, icons."""
    refs: list[str] = []
    background = _obj(manifest.get("background"))
    if isinstance(background.get("service_worker"), str):
        refs.append(background["service_worker"])
    if isinstance(background.get("scripts"), list):
        refs += [s for s in background["scripts"] if isinstance(s, str)]
    action = _obj(manifest.get("action"))
    if isinstance(action.get("default_popup"), str):
        refs.append(action["default_popup"])
    for icons in (manifest.get("icons"), action.get("default_icon")):
        if isinstance(icons, str):
            refs.append(icons)
        elif isinstance(icons, dict):
            refs += [v for v in icons.values() if isinstance(v, str)]
    return refs


def _browser_rules(browser: str, manifest: dict) -> list[str]:
    background = manifest.get("background")
    if not isinstance(background, dict):
        return ["no background object"]
    problems = []
    if background.get("type") != "module":
        problems.append('background.type is not "module"')
    if browser == "chrome":
        if not isinstance(background.get("service_worker"), str):
            problems.append("background.service_worker is missing (Chrome MV3 needs a service worker)")
        if "scripts" in background:
            problems.append("background.scripts is present (Chrome MV3 uses service_worker only)")
    else:
        scripts = background.get("scripts")
        if not (isinstance(scripts, list) and scripts and all(isinstance(s, str) for s in scripts)):
            problems.append("background.scripts is missing or empty (Firefox MV3 has no service workers)")
        if "service_worker" in background:
            problems.append("background.service_worker is present (Firefox ignores it)")
        gecko = _obj(_obj(manifest.get("browser_specific_settings")).get("gecko"))
        if not (isinstance(gecko.get("id"), str) and gecko["id"]):
            problems.append("browser_specific_settings.gecko.id is missing (Firefox needs it)")
    return problems


def check_manifests(ext_root: Path) -> list[str]:
    """Each tree's manifest is MV3, uses its browser's background form, and its files exist."""
    problems: list[str] = []
    for browser in BROWSERS:
        tree = Path(ext_root) / browser
        manifest, error = _load_manifest(tree)
        if error:
            problems.append(error)
            continue
        where = f"{browser}/{MANIFEST}"
        if manifest.get("manifest_version") != 3:
            problems.append(f"{where}: manifest_version is {manifest.get('manifest_version')!r}, not 3")
        problems += [f"{where}: {p}" for p in _browser_rules(browser, manifest)]
        for ref in _referenced_files(manifest):
            target = (tree / ref).resolve()
            if not target.is_relative_to(tree.resolve()):
                problems.append(f"{where}: {ref!r} points outside the tree")
            elif not target.is_file():
                problems.append(f"{where}: references {ref!r}, which does not exist")
    return problems


def declared_versions(ext_root: Path) -> dict[str, str | None]:
    """The version each source states (None where it cannot be read)."""
    ext_root = Path(ext_root)
    versions: dict[str, str | None] = {}
    for browser in BROWSERS:
        manifest, _ = _load_manifest(ext_root / browser)
        versions[f"{browser}/{MANIFEST}"] = (manifest or {}).get("version")
    try:
        versions["package.json"] = json.loads((ext_root / "package.json").read_text("utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        versions["package.json"] = None
    try:
        heading = CHANGELOG_HEADING.search((ext_root / "CHANGELOG.md").read_text("utf-8"))
        versions["CHANGELOG.md"] = heading.group(1) if heading else None
    except OSError:
        versions["CHANGELOG.md"] = None
    return versions


def check_versions(ext_root: Path) -> list[str]:
    """Both manifests, package.json and the newest CHANGELOG.md heading state one version."""
    versions = declared_versions(ext_root)
    problems = [f"{source}: no version found" for source, v in versions.items() if v is None]
    stated = {v for v in versions.values() if v is not None}
    if len(stated) > 1:
        listing = ", ".join(f"{source}={v}" for source, v in versions.items())
        problems.append(f"versions disagree: {listing}")
    return problems


def check_all(ext_root: Path, glue: Iterable[str] = ()) -> list[str]:
    return check_identical_trees(ext_root, glue) + check_manifests(ext_root) + check_versions(ext_root)


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("extension")
    found = check_all(root)
    print("\n".join(found) or f"{root}: trees, manifests and versions are consistent")
    sys.exit(1 if found else 0)
