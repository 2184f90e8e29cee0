"""The scripts the extension's pages really run, against the ones the scripts check accounted for.

Why: the scripts check reads the tree. A page can load code by a name built at run time
(``s.src = ["hel", "per.txt"].join("")``, ``import(name)``), and a file whose name does not end
in ``.js`` is then a script nobody verified and nobody declared. The backgrounds are covered by
the message path (their engines report every script the background loaded); this opens every
other page the tree ships, and a tab where its content scripts run, in each browser kind that
can say which scripts a page ran, and fails on any script that is neither in the verified graph
nor accounted for by the scripts check, on bytes other than the tree's, and on code built from
a string.

Each kind says what it can see (``PAGE_SCRIPTS_SEEN``): Chromium every script V8 parsed in the
page (DevTools ``Debugger.scriptParsed``, with the hash of the bytes it compiled), Firefox only
the ``<script>`` elements the page holds (it keeps no resource timing for moz-extension://
loads, and the harness has no debugger there), hashed from what Firefox serves.

Chromium's pages live a day of virtual time before they are read (``kinds/chromium.py``), so a
load a timer puts off is seen; Firefox's are read once settled, in real time.

What it cannot see: code a page loads later than that (in Firefox, after settling), on a user's
input, or when it can tell it is not where users open it (a popup window, a devtools panel); in Firefox, a
module imported by a computed name or a <script> removed once it ran, and content scripts; kinds
that cannot record a page's scripts (the line names the trees no kind opened).
"""

from __future__ import annotations

from pathlib import Path

from ...engines.sharing import KeptBrowsers
from ...project.config import Project, declares_content_scripts
from ...project.hashing import sha256_hex
from ...project.kinds import build_engine, engine_class
from ...project.words import count
from ...subject import tree_checks
from ...subject.linker import LinkError, import_closure, normalize_path
from ..context import Gate
from ..registry import ARTIFACTS, BROWSERS, Spec
from .scripts import shipped_pages, shipped_scripts

BACKGROUND_PAGE = "manifest.json background.page"
# WHATWG's windows-1252, what Chromium decodes a script as when its page names no charset: Latin-1
# but for 0x80-0x9F, of which five bytes stay control characters (Python's cp1252 refuses them).
WINDOWS_1252 = {byte: bytes([byte]).decode("cp1252") for byte in range(0x80, 0xA0)
                if byte not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}


def recorders(project: Project) -> dict[str, list[str]]:
    """Tree -> one engine per kind bound to it that can record its pages' scripts."""
    found: dict[str, dict[str, str]] = {}
    for name, spec in sorted(project.engines.items()):
        if spec.tree is not None and engine_class(spec.kind).RECORDS_PAGE_SCRIPTS:
            found.setdefault(spec.tree, {}).setdefault(spec.kind, name)
    return {tree: sorted(by_kind.values()) for tree, by_kind in found.items()}


def accounted(project: Project, tree: Path, manifest: dict) -> set[str]:
    """The scripts the gate knows of in a tree: the verified graph and what the scripts check reaches."""
    scripts, _ = shipped_scripts(tree, manifest)
    entries = [normalize_path(e.module) for e in project.entries.values()]
    try:
        return set(scripts) | set(import_closure(tree, entries))
    except LinkError:
        return set(scripts)  # the scripts check names why the verified modules cannot be read


def tree_problems(project: Project, tree_name: str, engine_name: str, seen: dict[str, dict[str, str]],
                  known: set[str]) -> list[str]:
    tree = project.trees[tree_name]
    problems = []
    for page, scripts in seen.items():
        where = f"{tree_name}: {page}" if "://" in page else f"{tree_name}/{page}"
        for script, digest in scripts.items():
            if "://" in script or script.startswith("("):
                problems.append(f"{where} ran {script} in {engine_name}: only files of the tree, read before "
                                f"they run, can be accounted for")
            elif script not in known:
                problems.append(f"{where} ran {script} in {engine_name}, a script no manifest entry, page or "
                                f"import names (a name built at run time): the scripts check never saw it")
            elif not (tree / script).is_file():
                problems.append(f"{where} ran {script} in {engine_name}, which is not in the tree")
            elif digest != (on_disk := sha256_hex(data := (tree / script).read_bytes())):
                problems.append(misdecoded(where, page, script, engine_name, data) if digest == as_windows_1252(data)
                                else f"{where} ran {script} in {engine_name} with bytes {digest[:12]}, but the tree's "
                                     f"are {on_disk[:12]}")
    return problems


def as_windows_1252(data: bytes) -> str:
    """The hash Chromium reports for a script it decoded as windows-1252 (V8 hashes the text it
    compiled, as UTF-8): an ASCII file's is its own, a UTF-8 file's with other characters is not."""
    return sha256_hex(data.decode("latin-1").translate(WINDOWS_1252).encode("utf-8"))


def misdecoded(where: str, page: str, script: str, engine_name: str, data: bytes) -> str:
    """Two hashes that differ only because the page names no charset: the cause, in one line."""
    first = next(index for index, byte in enumerate(data) if byte >= 0x80)
    line = data.count(b"\n", 0, first) + 1
    return (f"{where} ran {script} in {engine_name} decoded as windows-1252, not UTF-8, since {page} declares no "
            f"charset: its non-ASCII text (first at {script}:{line}) runs as other characters than the tree's; "
            f"add <meta charset=\"utf-8\"> to {page}'s <head>")


def pages_to_open(tree: Path, manifest: dict) -> list[str]:
    """The tree's pages the check opens: all it ships but the background page, which is the
    background check's (a second copy of it in a tab would be a second background: its
    listeners, its state)."""
    return sorted(page for page, how in shipped_pages(tree, manifest).items() if how != BACKGROUND_PAGE)


def judge(project: Project, kept: KeptBrowsers | None = None) -> tuple[list[str], str]:
    """The gate's page scripts check: its problems, and the line it says when there are none.
    With ``kept`` (the run's browsers, ``Gate.kept_browsers``) an engine opens its pages in the
    run's browser when that one is whole, without a launch of its own."""
    problems: list[str] = []
    said: list[str] = []
    able = recorders(project)
    for tree_name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(tree_name, tree)
        if manifest is None:
            continue  # the manifests check says why
        pages = pages_to_open(tree, manifest)
        content = declares_content_scripts(tree)
        if not pages and not content:
            continue
        engines = able.get(tree_name, [])
        if not engines:
            said.append(f"{tree_name}: not opened (no engine of its kinds records the scripts of a page)")
            continue
        known = accounted(project, tree, manifest)
        for engine_name in engines:
            engine = build_engine(project.engines[engine_name], project)
            try:
                seen = engine.record_page_scripts(pages, content, kept.launch(engine) if kept is not None else None)
            except Exception as exc:  # whatever the browser did, it is one line and the other checks stand
                problems.append(f"{tree_name}: {engine_name} could not open its pages: "
                                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}")
                continue
            problems += tree_problems(project, tree_name, engine_name, seen, known)
            ran = sorted(set().union(*map(set, seen.values())))
            tabs = [page for page in seen if "://" in page]  # a web page where content scripts run
            opened = count(len(seen) - len(tabs), "page") + (" and a tab of its content scripts" if tabs else "")
            said.append(f"{tree_name}: {opened} in {engine_name}, {count(len(ran), *engine.PAGE_SCRIPTS_SEEN)}, "
                        f"all accounted for")
    return problems, "; ".join(said) or "no tree ships a page or a content script"


def keep_browsers(gate: Gate) -> None:
    """Before the run: keep the browsers its engines share open for this check, prepared for each
    tree's pages (why: a second launch of the same browser with the same extension cost about
    as much as the run's own start-up)."""
    pages = {}
    for tree_name, tree in gate.tested.trees.items():
        manifest, _ = tree_checks.load_manifest(tree_name, tree)
        if manifest is not None:
            pages[tree_name] = tuple(pages_to_open(tree, manifest))
    kept = gate.kept_browsers = KeptBrowsers(pages)
    gate.cleanups.append(kept.let_go)


def verdict(gate: Gate) -> tuple[list[str], str]:
    try:
        return judge(gate.tested, gate.kept_browsers)
    finally:
        if gate.kept_browsers is not None:
            gate.kept_browsers.let_go()  # the checks after this one open no page in them


CHECK = Spec("page scripts",
             "a page, or a tab where the content scripts run, that ran a script the `scripts` check "
             "did not account for", "[tool.extparity.gate].glue_scripts", verdict,
             needs=(ARTIFACTS,), starts=(BROWSERS,), prepare=keep_browsers)
