"""Consistency of an extension's browser trees: the same files, manifests that differ only where
allowed, manifests each browser accepts, and what every tree's manifest reaches.

Why: the browser builds of one extension must ship the same code, and drift between hand-kept
copies is how one browser ends up running an old parser. Only the manifests (and the glue a
config names) may differ, and inside the manifests only the keys a config names. Trees come
from the config (``{name: folder}``), any number of them; the browser rules a tree must meet
come from the engine kinds that load it. Each check returns readable problems (empty means
fine) instead of raising, so a release gate prints every problem at once.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from pathlib import Path

from ..project import globs
from ..project.hashing import sha256_hex
from ..project.manifest import MANIFEST, load_manifest
from ..project.words import shortened
from .linker import LinkError, import_closure, normalize_path, uses_module_syntax

ACTIONS = ("action", "browser_action", "page_action")
PAGE_EXTENSIONS = (".html", ".htm")
SCRIPT_EXTENSIONS = (".js", ".mjs")


def tree_files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in Path(tree).rglob("*") if p.is_file()}


def first_difference(a: bytes, b: bytes) -> int:
    """The number of the first byte that differs, counted from 1 as ``cmp`` counts."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) + 1


def tree_sha256(tree: Path) -> str:
    """One SHA-256 for every byte of a tree (each file's path and SHA-256, sorted), so that a
    result can say which tree it ran on beyond the hashed modules: manifests, pages, icons."""
    listing = "".join(f"{path}\0{sha256_hex((Path(tree) / path).read_bytes())}\n" for path in sorted(tree_files(tree)))
    return sha256_hex(listing.encode("utf-8"))


def compare_trees(trees: Mapping[str, Path], glue: Iterable[str] = ()) -> list[str]:
    """Every file but manifest.json and the glue (paths or glob patterns) is in every tree, byte
    for byte."""
    glue = tuple(glue)
    files = {name: {rel for rel in tree_files(tree) if rel != MANIFEST and not globs.covered(rel, glue)}
             for name, tree in trees.items()}
    names = list(trees)
    problems = []
    for rel in sorted(set().union(*files.values())):
        present = [name for name in names if rel in files[name]]
        if len(present) < len(names):
            problems.append(f"{rel}: only in {', '.join(present)}")
            continue
        first = (trees[names[0]] / rel).read_bytes()
        for name in names[1:]:
            other = (trees[name] / rel).read_bytes()
            if other != first:
                problems.append(f"{rel}: differs between {names[0]} and {name} "
                                f"(first at byte {first_difference(first, other)})")
    return problems


def compare_manifests(manifests: Mapping[str, dict], allowed: Iterable[str] = ()) -> list[str]:
    """Key by key, the manifests agree except on the ``allowed`` top-level keys."""
    allowed = set(allowed)
    names = list(manifests)
    problems = []
    for key in sorted(set().union(*(m.keys() for m in manifests.values())) - allowed):
        present = [name for name in names if key in manifests[name]]
        if len(present) < len(names):
            problems.append(f"{MANIFEST} key {key!r} is only in {', '.join(present)}")
            continue
        values = {name: json.dumps(manifests[name][key], sort_keys=True) for name in names}
        if len(set(values.values())) > 1:
            shown = ", ".join(f"{name}={shortened(value, 60)}" for name, value in values.items())
            problems.append(f"{MANIFEST} key {key!r} differs: {shown}")
    return problems


def _obj(value: object) -> dict:
    """``value`` if it is a JSON object, else an empty one, so malformed manifests report, not crash."""
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    if isinstance(value, dict):
        return [item for item in value.values() if isinstance(item, str)]
    return []


def manifest_references(manifest: dict) -> list[str]:
    """Paths inside the extension the manifest names: background, pages, content scripts,
    icons, locales, rule files and the web-accessible resources that are not patterns."""
    refs: list[str] = []
    background = _obj(manifest.get("background"))
    refs += _strings(background.get("service_worker")) + _strings(background.get("scripts"))
    refs += _strings(background.get("page"))
    for key in ACTIONS:
        action = _obj(manifest.get(key))
        refs += _strings(action.get("default_popup")) + _strings(action.get("default_icon"))
    refs += _strings(manifest.get("icons"))
    refs += _strings(manifest.get("options_page")) + _strings(_obj(manifest.get("options_ui")).get("page"))
    refs += _strings(manifest.get("devtools_page"))
    sidebar = _obj(manifest.get("sidebar_action"))
    refs += _strings(sidebar.get("default_panel")) + _strings(sidebar.get("default_icon"))
    refs += _strings(_obj(manifest.get("side_panel")).get("default_path"))
    refs += _strings(manifest.get("chrome_url_overrides"))
    for script in manifest.get("content_scripts") or []:
        refs += _strings(_obj(script).get("js")) + _strings(_obj(script).get("css"))
    for item in manifest.get("web_accessible_resources") or []:
        resources = _strings(item) if isinstance(item, str) else _strings(_obj(item).get("resources"))
        refs += [r for r in resources if "*" not in r]
    if isinstance(manifest.get("default_locale"), str):
        refs.append(f"_locales/{manifest['default_locale']}/messages.json")
    for rules in _obj(manifest.get("declarative_net_request")).get("rule_resources") or []:
        refs += _strings(_obj(rules).get("path"))
    return list(dict.fromkeys(ref.lstrip("/") for ref in refs if not _is_url(ref)))


def _is_url(ref: str) -> bool:
    return ":" in ref.split("/")[0]


class _PageAssets(HTMLParser):
    """The files an extension page loads itself: scripts, stylesheets, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.assets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        name = {"script": "src", "img": "src", "iframe": "src", "link": "href"}.get(tag)
        if name and attributes.get(name):
            self.assets.append(attributes[name])


def page_assets(tree: Path, page: str) -> list[str]:
    """Tree-relative paths a page loads (URLs to elsewhere left out)."""
    parser = _PageAssets()
    parser.feed((Path(tree) / page).read_text(encoding="utf-8", errors="replace"))
    found = []
    for ref in parser.assets:
        ref = ref.split("#")[0].split("?")[0]
        if not ref or _is_url(ref) or ref.startswith("//"):
            continue
        joined = ref.lstrip("/") if ref.startswith("/") else posixpath.join(posixpath.dirname(page), ref)
        found.append(posixpath.normpath(joined))
    return found


class _PageScripts(HTMLParser):
    """``<script src>`` of a page (any file name), and where inline script code is."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.inline: list[int] = []
        self._open: int | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "script":
            src = dict(attrs).get("src")
            if src:
                self.sources.append(src)
            else:
                self._open = self.getpos()[0]

    def handle_data(self, data: str) -> None:
        if self._open is not None and data.strip():
            self.inline.append(self._open)
            self._open = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def page_scripts(tree: Path, page: str) -> tuple[list[str], list[int]]:
    """The tree-relative scripts a page loads, and the lines of its inline scripts."""
    parser = _PageScripts()
    parser.feed((Path(tree) / page).read_text(encoding="utf-8", errors="replace"))
    scripts = []
    for ref in parser.sources:
        ref = ref.split("#")[0].split("?")[0]
        if ref and not _is_url(ref) and not ref.startswith("//"):
            joined = ref.lstrip("/") if ref.startswith("/") else posixpath.join(posixpath.dirname(page), ref)
            scripts.append(posixpath.normpath(joined))
    return scripts, parser.inline


def reachable_files(tree: Path, manifest: dict) -> tuple[list[str], list[str]]:
    """Every file the manifest reaches, following pages' assets and scripts' imports; and the
    references that lead nowhere (missing files, paths outside the tree, unresolvable imports)."""
    tree = Path(tree)
    seen: dict[str, None] = {}
    problems: list[str] = []
    pending = [(ref, f"{MANIFEST}") for ref in manifest_references(manifest)]
    while pending:
        ref, named_by = pending.pop(0)
        try:
            path = normalize_path(ref, named_by)
        except LinkError:
            problems.append(f"{named_by}: {ref!r} points outside the tree")
            continue
        if path in seen:
            continue
        if not (tree / path).is_file():
            problems.append(f"{named_by}: references {path!r}, which does not exist")
            continue
        seen[path] = None
        if path.endswith(PAGE_EXTENSIONS):
            pending += [(asset, path) for asset in page_assets(tree, path)]
        elif path.endswith(SCRIPT_EXTENSIONS):
            try:
                pending += [(module, path) for module in import_closure(tree, [path]) if module != path]
            except LinkError as exc:
                problems.append(str(exc))
    return sorted(seen), problems


def background_scripts(tree: Path, manifest: dict) -> list[str]:
    """The scripts the browser starts as the background: the service worker, the scripts, or
    the scripts of the background page."""
    background = _obj(manifest.get("background"))
    scripts = _strings(background.get("service_worker")) + _strings(background.get("scripts"))
    if isinstance(background.get("page"), str) and (Path(tree) / background["page"]).is_file():
        scripts += page_scripts(tree, background["page"])[0]  # whatever their names
    return list(dict.fromkeys(normalize_path(s, MANIFEST) for s in scripts))


def background_closure(tree: Path, manifest: dict) -> list[str]:
    """Every script the background loads, by static reading: its scripts and their imports,
    the lazy ``import()`` inside functions included (they must be the same bytes everywhere too).
    Raises ``LinkError`` when that cannot be known (a missing file, a computed import)."""
    return import_closure(Path(tree), background_scripts(tree, manifest))


def background_on_demand(tree: Path, manifest: dict) -> list[str]:
    """The scripts of the background closure that only an ``import()`` inside a function
    reaches: loaded when that function runs, so a browser need not have loaded them at start-up."""
    scripts = background_scripts(tree, manifest)
    at_start = set(import_closure(Path(tree), scripts, lazy=False))
    return [path for path in import_closure(Path(tree), scripts) if path not in at_start]


def check_manifests(trees: Mapping[str, Path], browsers: Mapping[str, Iterable[str]]) -> list[str]:
    """Each tree's manifest is one its browsers accept (``browsers``: tree -> engine kinds that
    load it) and every file it reaches exists inside the tree."""
    problems: list[str] = []
    for name, tree in trees.items():
        manifest, error = load_manifest(name, tree)
        if manifest is None:
            problems.append(f"{error}")
            continue
        where = f"{name}/{MANIFEST}"
        for kind in sorted(set(browsers.get(name, ()))):
            problems += [f"{where}: {p}" for p in browser_rules(kind, manifest)]
        problems += [f"{where}: {p}" for p in _module_background_rule(tree, manifest)]
        _, missing = reachable_files(tree, manifest)
        problems += [f"{name}/{problem}" for problem in missing]
    return problems


def browser_rules(kind: str, manifest: dict) -> list[str]:
    """What the browser behind an engine kind requires of a manifest it is to load."""
    version = manifest.get("manifest_version")
    background = manifest.get("background")
    has_background = isinstance(background, dict)
    background = _obj(background)
    problems = []
    if kind == "chromium":
        if version != 3:
            problems.append(f"manifest_version is {version!r}, not 3 (Chromium loads only MV3)")
        if has_background and not isinstance(background.get("service_worker"), str):
            problems.append("background.service_worker is missing (Chromium MV3 runs the background as a service worker)")
        for key in ("scripts", "page"):
            if key in background:
                problems.append(f"background.{key} is present (Chromium MV3 uses service_worker only)")
    elif kind == "firefox":
        if version not in (2, 3):
            problems.append(f"manifest_version is {version!r}, not 2 or 3")
        scripts = background.get("scripts")
        has_scripts = isinstance(scripts, list) and scripts and all(isinstance(s, str) for s in scripts)
        if has_background and not has_scripts and not isinstance(background.get("page"), str):
            problems.append("background.scripts is missing and there is no background.page "
                            "(Firefox runs no service workers)")
        gecko = _obj(_obj(manifest.get("browser_specific_settings")).get("gecko"))
        if version == 3 and not (isinstance(gecko.get("id"), str) and gecko["id"]):
            problems.append("browser_specific_settings.gecko.id is missing (Firefox needs it for an MV3 add-on)")
    return problems


def _module_background_rule(tree: Path, manifest: dict) -> list[str]:
    """A background script with import/export statements loads only as a module."""
    background = _obj(manifest.get("background"))
    if background.get("type") == "module":
        return []
    problems = []
    for script in _strings(background.get("service_worker")) + _strings(background.get("scripts")):
        path = Path(tree) / script.lstrip("/")
        if path.is_file() and uses_module_syntax(path.read_bytes()):
            problems.append(f'background.type is not "module", but {script} uses import/export '
                            f"(the browser would refuse to load it)")
    return problems
