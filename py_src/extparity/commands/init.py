"""`extparity init`: a first `[tool.extparity]` table for an extension, from its two trees.

Why: writing the table by hand means reading the harness's quickstart end to end before the
first run. The trees already say most of it: which ES modules both browsers ship byte for byte (the
candidates for entries, with their parameters as the case fields), which files and manifest keys
differ on purpose (the gate's glue, from the same code as `gate --suggest`) and what the verified
modules read of their environment (the purity check's findings). What only the team knows is
left to them and said so: what each adapter returns, the cases, and why each purity exception
is safe. Nothing existing is overwritten: a second `init` is refused.

Most teams ship what a bundler built, so the trees are looked for where bundlers write them, and a
parser inlined into a background with no exports (WXT's default) gets the message path written
for it: no engine can call a function nothing exports, but every engine can send the background
its messages. Its reasons are drafts the policy check fails on, as for the module path.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from ..gate.acknowledgements import REVIEW_EXCEPTION
from ..gate.checks.purity import verified_findings
from ..gate.runner import UNPACKED
from ..gate.suggest import suggest
from ..project.atomic import write_atomic
from ..project.config import load_project
from ..project.errors import ConfigError
from ..project.manifest import load_manifest
from ..subject import tree_checks
from ..subject.exports import Export, candidate_entries
from ..subject.linker import LinkError, parse_source
from .common import UsageError

# Never trees: tools' and environments' folders. build/, dist/ and .output/ are searched (bundlers).
SKIPPED_FOLDERS = {".git", "node_modules", ".venv", "venv", ".tox", "__pycache__"}
ADAPTERS, CORPUS = "extparity/adapters", "extparity/corpus"
OWN_DIST = "out/artifacts"
# The entry of a parser inlined into a background, and its case field until the team names theirs.
MESSAGE_ENTRY, MESSAGE_ARGS = "calls", ("text",)
STARTER_TAG = "starter"


def add_parser(commands) -> None:
    parser = commands.add_parser("init", help="write a first [tool.extparity] table for an extension's two trees")
    parser.add_argument("--chrome", metavar="DIR", help="the Chrome tree (default: found from the manifests below here)")
    parser.add_argument("--firefox", metavar="DIR", help="the Firefox tree (default: found from the manifests below here)")
    parser.set_defaults(handler=main)


def main(args) -> int:
    config = Path(getattr(args, "config", None) or "pyproject.toml").resolve()
    existing = config.read_text(encoding="utf-8") if config.exists() else ""
    try:
        has_table = "extparity" in tomllib.loads(existing).get("tool", {})
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{config}: not valid TOML ({exc})") from None
    if has_table:
        raise UsageError(f"{config} already has a [tool.extparity] table; init writes only a new one")
    trees = _trees(args, config.parent)
    candidates, unreadable = candidate_entries(trees["chrome"], trees["firefox"])
    background = None if candidates else inlined_background(trees)
    if not candidates and background is None:
        raise UsageError(f"no ES module that is the same in {trees['chrome']} and {trees['firefox']} exports a "
                         f"function: the entries must be one file in both trees")
    if background is not None:
        # A bundler's default (WXT's): the parser inlined into a background script with no
        # exports. No engine can call it, but every engine can send the background its messages.
        print(f"{background} exports nothing and no shared ES module exports a function: the parser is inlined "
              f"into the background, so init writes the message path (via = \"message\")")
        entries = {MESSAGE_ENTRY: Export(background, MESSAGE_ENTRY, MESSAGE_ARGS, 1)}
        files = {f"{ADAPTERS}/{MESSAGE_ENTRY}.js": message_adapter(background, MESSAGE_ARGS)}
    else:
        entries = _names(candidates)
        files = {f"{ADAPTERS}/{name}.js": adapter(export) for name, export in entries.items()}
    files[f"{CORPUS}/tags.json"] = json.dumps({STARTER_TAG: "written by extparity init; replace with tags of your own"},
                                              indent=2) + "\n"
    files[f"{CORPUS}/starter.jsonl"] = "".join(json.dumps(starter_case(name, export)) + "\n"
                                               for name, export in entries.items())
    taken = [rel for rel in files if (config.parent / rel).exists()]
    if taken:
        raise UsageError(f"{config.parent / taken[0]} exists already; init writes only new files")
    per_browser = background is not None and \
        (trees["chrome"] / background).read_bytes() != (trees["firefox"] / background).read_bytes()
    table = base_table(config.parent, trees, entries, message=background is not None, per_browser=per_browser)
    messages = {MESSAGE_ENTRY: f"{ADAPTERS}/{MESSAGE_ENTRY}.js"} if background is not None else {}
    # The adapters go to disk before the gate's reading of the table, which reads them too (the
    # purity check holds adapters to its rules): read before they existed, each was "cannot be
    # read". They are new files (checked above), so a table that does not load takes them back.
    for rel, text in files.items():
        write_atomic(config.parent / rel, text)
    try:
        gate, notes = gate_table(config, existing + table, messages)
    except UsageError:
        for rel in files:
            (config.parent / rel).unlink(missing_ok=True)
        raise
    write_atomic(config, existing + ("\n" if existing and not existing.endswith("\n\n") else "") + table + gate)
    if background is not None:
        print(f"wrote [tool.extparity] to {config}: 1 entry ({MESSAGE_ENTRY} = {background}, through the background's "
              f"messages), 4 engines with via = \"message\"" + (f", {background} per-browser" if per_browser else ""))
        print(f"wrote a message adapter skeleton in {ADAPTERS}/ and a starter corpus in {CORPUS}/")
    else:
        print(f"wrote [tool.extparity] to {config}: {_count(len(entries), 'entry', 'entries')} "
              f"({', '.join(f'{name} = {e.module}:{e.name}' for name, e in entries.items())}), 4 engines")
        print(f"wrote {_count(len(entries), 'adapter skeleton', 'adapter skeletons')} in {ADAPTERS}/ and a starter corpus in {CORPUS}/")
    for line in [*unreadable, *notes]:
        print(f"  check: {line}")
    first = ("make the message adapter send the message your background answers and return its verdict text, "
             "name the case fields (args)" if background is not None else "make each adapter return your verdict text")
    print(f"next: {first}, write cases in {CORPUS}/, then run: extparity --config {_shown(config)} run")
    return 0


def inlined_background(trees: dict[str, Path]) -> str | None:
    """The background script both trees start under one path when it exports nothing (a classic
    script, or a module with no exports): where a bundler inlined the parser. None otherwise."""
    found = []
    for tree in trees.values():
        manifest, _ = load_manifest(tree.name, tree)
        found.append(set(tree_checks.background_scripts(tree, manifest)) if manifest is not None else set())
    for script in sorted(set.intersection(*found)):
        try:
            syntax, _ = parse_source((trees["chrome"] / script).read_bytes(), script)
        except (OSError, LinkError):
            continue
        if not any(node.type == "export_statement" for node in syntax.root_node.children):
            return script
    return None


def _trees(args, base: Path) -> dict[str, Path]:
    if bool(args.chrome) != bool(args.firefox):
        raise UsageError("give both --chrome DIR and --firefox DIR, or neither (then they are found from the manifests)")
    if args.chrome:
        trees = {"chrome": Path(args.chrome).resolve(), "firefox": Path(args.firefox).resolve()}
        for name, tree in trees.items():
            if not (tree / "manifest.json").is_file():
                raise UsageError(f"--{name} {tree}: no manifest.json there")
        return trees
    return _found_trees(Path.cwd())


def _found_trees(start: Path) -> dict[str, Path]:
    manifests = sorted(path for path in start.rglob("manifest.json") if _searched(path.relative_to(start).parts[:-1]))
    browsers: dict[str, list[Path]] = {"chrome": [], "firefox": []}
    for path in manifests:
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        browser = browser_of(manifest) if isinstance(manifest, dict) else None
        if browser:
            browsers[browser].append(path.parent)
    if [len(found) for found in browsers.values()] == [1, 1]:
        return {name: found[0] for name, found in browsers.items()}
    pair = _sibling_pair(browsers["chrome"], browsers["firefox"])
    if pair:
        return {"chrome": pair[0], "firefox": pair[1]}
    seen = ", ".join(f"{name}: {', '.join(_shown(p) for p in found) or 'none'}" for name, found in browsers.items())
    raise UsageError(f"need one Chrome and one Firefox manifest.json under {start} ({seen}); "
                     f"name them with --chrome DIR --firefox DIR")


def _searched(folders: tuple[str, ...]) -> bool:
    """Whether a manifest in these folders can be a team's tree. Bundlers write theirs to build/,
    dist/ or .output/, so those are searched; what extparity writes there is not a tree: the only
    manifests it writes are the gate's unpacked artifacts (its `dist/.unpacked/NAME`, whatever
    `dist` the config names), copies of the trees it packed."""
    return not (SKIPPED_FOLDERS | {UNPACKED}) & set(folders)


def _sibling_pair(chrome: list[Path], firefox: list[Path]) -> tuple[Path, Path] | None:
    """A bundler writes its browsers' trees side by side (Plasmo's build/chrome-mv3-prod and
    build/firefox-mv3-prod): with more than one tree per browser, the one pair in one folder,
    its production build if the development one is there too (Plasmo's -dev, WXT's -dev)."""
    pairs = [(c, f) for c in chrome for f in firefox if c.parent == f.parent]
    if len(pairs) > 1:
        pairs = [(c, f) for c, f in pairs if not (c.name.endswith("-dev") or f.name.endswith("-dev"))]
    return pairs[0] if len(pairs) == 1 else None


def browser_of(manifest: dict) -> str | None:
    """Which browser a manifest is written for: a background that is only a service worker is
    Chrome's (Firefox's MV3 runs scripts or a page; WXT writes the gecko id into both trees), then
    Firefox's add-on settings or a background of scripts or a page; None when it says neither."""
    background = manifest["background"] if isinstance(manifest.get("background"), dict) else {}
    if "service_worker" in background and not {"scripts", "page"} & set(background):
        return "chrome"
    if "browser_specific_settings" in manifest or "applications" in manifest:
        return "firefox"
    if "scripts" in background or "page" in background:
        return "firefox"
    return None


def _names(candidates: list[Export]) -> dict[str, Export]:
    """Entry names: the export's own name, with its module's stem when two modules export one name."""
    counts: dict[str, int] = {}
    for export in candidates:
        counts[export.name] = counts.get(export.name, 0) + 1
    return {(export.name if counts[export.name] == 1 else f"{Path(export.module).stem}-{export.name}"): export
            for export in candidates}


def adapter(export: Export) -> str:
    params = ", ".join(export.params)
    return (f"// The adapter of {export.module}:{export.name} (written by extparity init). It receives the export and\n"
            f"// the case's fields ({params or 'none'}) and returns the verdict text, the same in every engine.\n"
            f"// Pass the arguments as the extension does, and keep only what is deterministic: drop ids and\n"
            f"// timestamps, and write numbers with a canonical writer if QuickJS-ng's digits differ (2 ** -24).\n"
            f"export default async function ({', '.join([export.name, *export.params])}) {{\n"
            f"  return JSON.stringify(await {export.name}({params}));\n"
            f"}}\n")


def message_adapter(background: str, params: tuple[str, ...]) -> str:
    fields = ", ".join(params)
    return (f"// The message adapter of the {MESSAGE_ENTRY} entry (written by extparity init). The parser is inlined into\n"
            f"// {background}, which exports nothing: every engine sends the background a runtime message per case,\n"
            f"// and its onMessage listener answers with what the parser found. send(message) resolves with that\n"
            f"// reply; the case's fields ({fields}) follow `modules`. Send the message your background answers, in\n"
            f"// its shape, and return the reply as the verdict text: only shape it (the gate replays each reply to\n"
            f"// this adapter, and a verdict that is not the background's fails), and drop ids and timestamps.\n"
            f"export default async function (send, modules, {fields}) {{\n"
            f"  const reply = await send({{ type: \"{MESSAGE_ENTRY}\", {fields} }});\n"
            f"  return JSON.stringify(reply ?? null);\n"
            f"}}\n")


def starter_case(name: str, export: Export) -> dict:
    # case ids are lowercase words: extractToolCalls -> extract-tool-calls-starter
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()
    return {"id": f"{re.sub(r'[^a-z0-9._-]+', '-', words)}-starter", "fn": name, **{param: "" for param in export.params}, "expect": "reference",
            "tags": [STARTER_TAG], "why": "written by extparity init: replace it with cases of your own"}


def base_table(base: Path, trees: dict[str, Path], entries: dict[str, Export], *, message: bool = False,
               per_browser: bool = False) -> str:
    lines = ["# Written by `extparity init`; see extparity's docs/quickstart.md, \"Pointing extparity at your own extension\".",
             "[tool.extparity]", f"corpus = [{json.dumps(CORPUS)}]"]
    if per_browser:
        modules = ", ".join(json.dumps(export.module) for export in entries.values())
        lines += ["# The bundler built the background once per browser: its bytes may differ, its verdicts may not.",
                  f"per_browser = [{modules}]"]
    lines += ["", "[tool.extparity.trees]"]
    lines += [f"{name} = {json.dumps(_relative(tree, base))}" for name, tree in trees.items()]
    for name, export in entries.items():
        if message:
            lines += ["", f"# The parser is inlined into {export.module}, which exports nothing: the engines reach it through",
                      "# its runtime messages (the message adapter); `export` is never called. Name the case fields in args.",
                      f"[tool.extparity.entries.{name}]", f"module = {json.dumps(export.module)}",
                      f"export = {json.dumps(export.name)}", f"args = {json.dumps(list(export.params))}"]
            continue
        lines += ["", f"# {export.module}:{export.line}, shared byte for byte by both trees",
                  f"[tool.extparity.entries.{name}]", f"module = {json.dumps(export.module)}",
                  f"export = {json.dumps(export.name)}", f"args = {json.dumps(list(export.params))}",
                  f"adapter = {json.dumps(f'{ADAPTERS}/{name}.js')}"]
    for engine, kind, tree in (("quickjs-chrome", "quickjs", "chrome"), ("quickjs-firefox", "quickjs", "firefox"),
                               ("chromium", "chromium", "chrome"), ("firefox", "firefox", "firefox")):
        lines += ["", f"[tool.extparity.engines.{engine}]", f"kind = {json.dumps(kind)}", f"tree = {json.dumps(tree)}"]
        if message:
            lines.append('via = "message"')
    return "\n".join(lines) + "\n"


def gate_table(config: Path, text: str, messages: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """`[tool.extparity.gate]` from the written table as the gate reads it: the message adapters,
    the glue `gate --suggest` finds and a purity exception per finding, and what the user must
    check of it."""
    header = ["", "# What may differ between the trees, as `extparity gate --suggest` finds it: check each reason.",
              "[tool.extparity.gate]"]
    if messages:
        header.append(f"messages = {{ {', '.join(f'{entry} = {json.dumps(path)}' for entry, path in messages.items())} }}")
    draft = config.with_name(f".{config.name}.init")
    # Engines with via = "message" load only with their adapters named: the draft has them.
    draft.write_text(text + "\n".join(header) + "\n", encoding="utf-8")
    try:
        project = load_project(draft)
        found = suggest(project)
        findings, unreadable, _ = verified_findings(project)
    except ConfigError as exc:
        raise UsageError(f"the table init wrote does not load ({exc}); please report it") from None
    finally:
        draft.unlink()
    lines = list(header)
    if any(tree.is_relative_to(project.gate.dist) for tree in project.trees.values()):
        # The gate packs its artifacts into dist/ and fails on anything else there: a build in
        # dist/ (Vite's) moves them out of its way.
        lines.append(f"dist = {json.dumps(OWN_DIST)}  # the gate's artifacts; your build is in dist/")
    lines += [f"glue = [{', '.join(json.dumps(rel) for rel, _ in found.glue)}]",
              f"manifest_keys = [{', '.join(json.dumps(key) for key, _ in found.manifest_keys)}]"]
    if found.glue_scripts:
        lines += ["glue_scripts = [", *(f"  {{ script = {json.dumps(script)}, reason = {json.dumps(reason)} }},"
                                        for script, reason in found.glue_scripts), "]"]
    notes = [f"{rel}: {reason}" for rel, reason in [*found.glue, *found.manifest_keys, *found.glue_scripts]]
    uses: dict[tuple[str, str], list] = {}
    for finding in sorted(findings, key=lambda f: (f.module, f.line, f.identifier)):
        uses.setdefault((finding.module, finding.identifier), []).append(finding)
    if uses:
        lines.append("purity = [")
        for (module, identifier), found_at in uses.items():
            at = ", ".join(str(finding.line) for finding in found_at)
            reason = f"found by extparity init ({found_at[0].why}; line {at}): {REVIEW_EXCEPTION}"
            lines.append(f"  {{ identifier = {json.dumps(identifier)}, module = {json.dumps(module)}, "
                         f"reason = {json.dumps(reason)} }},")
            notes.append(f"{module}:{at}: {identifier}: {found_at[0].why}: a purity exception, "
                         f"allowed only if no verdict depends on it")
        lines.append("]")
    return "\n".join(lines) + "\n", [*found.drift, *unreadable, *notes]


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return str(path)


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"
