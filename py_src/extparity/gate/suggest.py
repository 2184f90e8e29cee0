"""`extparity gate --suggest`: the `glue`, `manifest_keys` and `glue_scripts` a pair (or set) of
browser trees needs, each with the reason it was found.

Why: an extension built per browser differs between its trees by design (a background shim per
browser, a page only Firefox runs, browser-only manifest keys), and the trees check fails on
every such file until the config names it. Writing that list by hand for dozens of files is how
a real drift gets waved through with the rest. This reads the trees as the gate does and says,
for each difference, what it is. Never suggested, reported as drift to fix instead: a file the
entries reach (the verified code must be one file in every tree), and a module the background
imports that every tree ships but with other bytes. The second is how a drifted parser was once
glued: the entries chosen did not reach it, the background did. The background's own scripts
(a per-browser service worker, scripts or page) and files only some trees have are per-browser by
nature and are suggested; as glue they are pinned by the gate's policy, never verified. Modules
declared per-browser (and their source maps) differ by declaration, as the trees check has it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..project.config import Project
from ..project.words import shortened
from ..subject import tree_checks
from ..subject.linker import LinkError, import_closure, normalize_path
from .acknowledgements import REVIEW_SCRIPT
from .checks.scripts import shipped_scripts

# Top-level manifest keys that differ between browsers by their nature, and why.
KEY_REASONS = {
    "background": "each browser runs the background its own way (Chromium: a service worker; Firefox: scripts or a page)",
    "browser_specific_settings": "Firefox's add-on id and version range",
    "applications": "Firefox's add-on id and version range (the MV2 name)",
    "minimum_chrome_version": "a Chrome-only key",
    "key": "Chrome's extension key, which pins its id",
    "update_url": "each store's update address",
    "incognito": "the browsers accept different modes",
    "sidebar_action": "Firefox's sidebar",
    "side_panel": "Chrome's side panel",
    "offline_enabled": "a Chrome-only key",
}


@dataclass
class Suggestion:
    glue: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    manifest_keys: list[tuple[str, str]] = field(default_factory=list)  # (key, reason)
    glue_scripts: list[tuple[str, str]] = field(default_factory=list)  # (script, reason)
    drift: list[str] = field(default_factory=list)  # differences that must not be declared away

    def toml(self, config: str) -> str:
        """The two keys as TOML for [tool.extparity.gate], each item with its reason as a comment."""
        lines = [f"# extparity gate --suggest: paste into [tool.extparity.gate] of {config}"]
        for key, items in (("glue", self.glue), ("manifest_keys", self.manifest_keys)):
            if not items:
                lines.append(f"{key} = []")
                continue
            lines.append(f"{key} = [")
            width = max(len(json.dumps(item)) for item, _ in items) + 1
            lines += [f"  {(json.dumps(item) + ','):<{width}}  # {reason}" for item, reason in items]
            lines.append("]")
        if self.glue_scripts:
            lines.append("glue_scripts = [")
            lines += [f"  {{ script = {json.dumps(script)}, reason = {json.dumps(reason)} }},"
                      for script, reason in self.glue_scripts]
            lines.append("]")
        lines += [f"# NOT suggested: {problem}" for problem in self.drift]
        return "\n".join(lines) + "\n"


def suggest(project: Project) -> Suggestion:
    trees = project.trees
    names = list(trees)
    verified = _verified_modules(project)
    imported = _background_imports(project)
    roles = _roles(project)
    found = Suggestion()
    files = {name: tree_checks.tree_files(root) - {tree_checks.MANIFEST} for name, root in trees.items()}
    # A per-browser module and its source map may differ, as the trees check keeps them: nothing to declare.
    declared = {*project.per_browser, *(f"{path}.map" for path in project.per_browser)}
    for rel in sorted(set().union(*files.values()) - declared):
        present = [name for name in names if rel in files[name]]
        if len(present) < len(names):
            difference = f"only in {', '.join(present)}"
        else:
            first = (trees[names[0]] / rel).read_bytes()
            other = next((name for name in names[1:] if (trees[name] / rel).read_bytes() != first), None)
            if other is None:
                continue
            at = tree_checks.first_difference(first, (trees[other] / rel).read_bytes())
            difference = f"differs between {names[0]} and {other} (first at byte {at})"
        if rel in verified:
            found.drift.append(f"{rel}: {difference}, but the entries reach it ({', '.join(verified[rel])}): "
                               f"the verified code must be one file in every tree; fix the drift")
            continue
        if rel in imported and len(present) == len(names):
            found.drift.append(f"{rel}: {difference}, but the background reaches it ({', '.join(imported[rel])}): "
                               f"what the background loads must be one file in every tree; fix the drift")
            continue
        found.glue.append((rel, f"{difference}; {roles.get(rel) or 'no manifest reaches it'}"))
    manifests: dict[str, dict] = {}
    for name, root in trees.items():
        manifest, error = tree_checks.load_manifest(name, root)
        if manifest is None:
            found.drift.append(f"{error}")
        else:
            manifests[name] = manifest
    for key in sorted(set().union(*(m.keys() for m in manifests.values()))):
        present = [name for name in manifests if key in manifests[name]]
        values = {name: json.dumps(manifests[name][key], sort_keys=True) for name in present}
        if len(present) == len(manifests) and len(set(values.values())) == 1:
            continue
        difference = (f"only in {', '.join(present)}" if len(present) < len(manifests)
                      else "differs: " + ", ".join(f"{name} {shortened(value, 70)}" for name, value in values.items()))
        found.manifest_keys.append((key, f"{difference}; {KEY_REASONS.get(key, 'not a key browsers are known to differ in: check it')}"))
    found.glue_scripts = _glue_scripts(project)
    return found


def _glue_scripts(project: Project) -> list[tuple[str, str]]:
    """Shipped scripts outside the verified graph (the scripts check wants each declared), with
    what reaches them in each tree. The reason says what a reviewer must confirm, not that it holds."""
    reached: dict[str, list[str]] = {}
    entries = [normalize_path(entry.module) for entry in project.entries.values()]
    for name, root in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, root)
        if manifest is None:
            continue  # reported as drift above
        try:
            verified = set(import_closure(root, entries))
        except LinkError:
            continue  # the gate's scripts check says why
        scripts, _ = shipped_scripts(root, manifest)
        for script, how in scripts.items():
            if script not in verified:
                reached.setdefault(script, []).append(f"{name}: {how}")
    return [(script, f"shipped outside the verified graph ({'; '.join(hows)}); {REVIEW_SCRIPT}")
            for script, hows in sorted(reached.items())]


def _verified_modules(project: Project) -> dict[str, list[str]]:
    """Module -> the entries that reach it, in any tree."""
    reached: dict[str, list[str]] = {}
    for root in project.trees.values():
        for name, entry in project.entries.items():
            try:
                graph = import_closure(root, [entry.module])
            except LinkError:
                continue  # reported by the run
            for path in graph:
                if name not in reached.setdefault(path, []):
                    reached[path].append(name)
    return reached


def _background_imports(project: Project) -> dict[str, list[str]]:
    """Module -> the trees whose background imports it (its closure, but for the scripts the
    manifest names as the background itself)."""
    reached: dict[str, list[str]] = {}
    for name, root in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, root)
        if manifest is None:
            continue
        try:
            imported = set(tree_checks.background_closure(root, manifest))
        except LinkError:
            continue  # the gate's background check says why
        for path in sorted(imported - set(tree_checks.background_scripts(root, manifest))):
            reached.setdefault(path, []).append(name)
    return reached


def _roles(project: Project) -> dict[str, str]:
    """File -> what it is to each tree's manifest: the background page, a background script, or
    a file it reaches."""
    background: dict[str, list[str]] = {}
    pages: dict[str, list[str]] = {}
    reached: dict[str, list[str]] = {}
    for name, root in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, root)
        if manifest is None:
            continue
        try:
            for path in tree_checks.background_closure(root, manifest):
                background.setdefault(path, []).append(name)
        except LinkError:
            pass
        page = (manifest.get("background") or {}).get("page")
        if isinstance(page, str):
            pages.setdefault(normalize_path(page), []).append(name)
        for path in tree_checks.reachable_files(root, manifest)[0]:
            reached.setdefault(path, []).append(name)
    roles = {path: _whose(trees, "manifest", "names") + " as background.page" for path, trees in pages.items()}
    for path, trees in background.items():
        roles.setdefault(path, _whose(trees, "background", "loads"))
    for path, trees in reached.items():
        roles.setdefault(path, _whose(trees, "manifest", "reaches"))
    return roles


def _whose(trees: list[str], what: str, does: str) -> str:
    if len(trees) == 1:
        return f"the {trees[0]} {what} {does} it"
    return f"the {' and '.join(trees)} {what}s {does.removesuffix('es') if does.endswith('hes') else does[:-1]} it"


