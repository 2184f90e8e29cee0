"""The `[tool.extparity]` table: everything the harness knows about its subject.

Trees, entries (the functions cases call, with their arguments and optional adapters), engines
(kinds bound to trees and options), the corpus, the known deviations and the release gate's
settings all come from here, so another extension team points the harness at their own trees
by writing one table. Paths are relative to the file that holds the table.

The table's shape (every key, its type, bounds and meaning) is config.schema.json's, checked
first (schema.py): unknown keys are errors there, so a typo cannot turn into a default. What is
left here is what a schema cannot state: names that must match another part of the table (an
engine's tree, the reference, the entries that minimum_cases, messages and generators name,
executes among expect.keys), folders that must exist, a kind of one's own that must import, and
the engines' message and content-script twins.
"""

from __future__ import annotations

import posixpath

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import schema
from .errors import ConfigError
from .environments import DEFAULT as DEFAULT_ENVIRONMENTS
from .environments import Environment
from .environments import parse as parse_environments
from .kinds import EngineSpec, check_spec, engine_class
from .manifest import load_manifest

# Policy exceptions of the gate: [tool.extparity.gate].KEY = [{FIELD = "...", PLACE = "...", reason = "..."}]
DECLARED = {"purity": ("identifier", "module"), "glue_scripts": ("script", None), "imports": ("export", "script"),
            "surfaces": ("surface", "script"), "background_scripts": ("script", None)}
MESSAGE_SUFFIX = "-background"
CONTENT_SUFFIX = "-content"
# Keys that were once known: an old config that uses one learns where it went.
# A corpus line's own fields (corpus/cases.py reads them); every other field is an entry's argument,
# so no entry may name an argument after one of these.
CASE_KEYS = ("id", "fn", "expect", "tags", "why")
RENAMED = {
    "modules": "modules are now found from the entries' imports; list extra files under [tool.extparity.gate]",
    "browsers": "browser executables are engine options: [tool.extparity.engines.NAME] executable = ...",
    "extension_root": "release metadata lives under [tool.extparity.gate]",
    "seconds": "the gate's fuzz budget is its number of cases alone, run to the end on any machine: a time cap "
               "made the verdict depend on the machine's load",
    "unreachable": "coverage exemptions are marker comments beside the code now: "
                   "`// extparity-unreachable: REASON` in the verified module (docs/gate.md, \"coverage\")",
}


@dataclass(frozen=True)
class Entry:
    """One function cases can call: `fn` in a corpus line names an entry."""

    name: str
    module: str  # tree-relative path of the module that exports it
    export: str
    args: tuple[str, ...]  # case fields passed to it, in order
    adapter: Path | None = None  # harness-side JS module that calls the export its own way
    expect_keys: tuple[str, ...] | None = None  # keys an expectation may name (None: any)
    list_items: dict[str, str] = field(default_factory=dict)  # list key -> field a bare string names
    executes: str | None = None  # the verdict's list of calls that would run (`extparity compare`)


@dataclass(frozen=True)
class Declared:
    """One exception to the gate's policy, as data: what it covers (an identifier, a script, a
    surface), where (a module or script path, "" where none applies) and why."""

    what: str
    where: str
    reason: str


@dataclass(frozen=True)
class FuzzBudget:
    """``[tool.extparity.gate].fuzz``: the gate's own fuzz campaign. A fixed number of cases of a
    fixed seed, so that the same corpus and config always run the same cases and give the same
    verdict on an idle machine and a loaded one (no time box, no time cap). ``cases = 0`` turns it
    off, and the check's line says so."""

    seed: int = 0
    cases: int = 20_000


@dataclass(frozen=True)
class GateConfig:
    """``[tool.extparity.gate]``: what the release gate may let differ, and where releases live."""

    glue: tuple[str, ...] = ()  # tree-relative files allowed to differ between trees
    manifest_keys: tuple[str, ...] = ()  # top-level manifest keys allowed to differ
    package_json: Path | None = None  # release metadata that must state the manifests' version
    changelog: Path | None = None
    minimum_cases: dict[str, int] = field(default_factory=dict)  # entry -> fewest cases that prove something
    dist: Path = Path("dist")  # where the packed artifacts are written (the config makes it the project's)
    messages: dict[str, Path] = field(default_factory=dict)  # entry -> message adapter
    web_ext: str | None = None  # Mozilla's web-ext command; None: `web-ext` on PATH
    web_ext_allow: tuple[str, ...] = ()  # web-ext warning codes accepted on purpose
    purity: tuple[Declared, ...] = ()  # identifiers a verified module may use after all
    glue_scripts: tuple[Declared, ...] = ()  # shipped scripts outside the verified graph, each with a reason
    imports: tuple[Declared, ...] = ()  # non-entry exports of verified modules a script may import after all
    surfaces: tuple[Declared, ...] = ()  # messaging surfaces open on purpose
    background_scripts: tuple[Declared, ...] = ()  # scripts some trees' backgrounds load and others' not
    # the second environments the engines run the corpus in again (``environments``)
    environments: tuple[Environment, ...] = DEFAULT_ENVIRONMENTS
    reference_branch_floor: float = 0.0  # percent of the reference's branches the corpus must run
    block_coverage_floor: float = 100.0  # percent of the verified modules' blocks that must run (below 100: adopting)
    fuzz: FuzzBudget = FuzzBudget()  # the gate's fuzz campaign through the headless engines


@dataclass(frozen=True)
class CoverageConfig:
    """``[tool.extparity.coverage]``: what ``run --coverage`` and the gate measure besides the
    verified modules (those are the entries' graph): the reference's packages."""

    reference: tuple[str, ...] = ()  # packages or modules of the Python reference, as it imports them


@dataclass(frozen=True)
class FuzzConfig:
    """``[tool.extparity.fuzz]``: where a project's own input generators live and which ones
    each entry gets. With no table, every entry gets the built-in, subject-agnostic ones."""

    plugins: tuple[str, ...] = ()  # files (relative to the project) or module names defining GENERATORS
    generators: dict[str, tuple[str, ...]] = field(default_factory=dict)  # entry -> generator names
    weights: dict[str, float] = field(default_factory=dict)  # generator -> relative weight (default 1)


@dataclass(frozen=True)
class Project:
    path: Path  # the pyproject.toml
    root: Path
    trees: dict[str, Path]
    entries: dict[str, Entry]
    engines: dict[str, EngineSpec]  # in declaration order
    reference: str | None  # the engine whose verdict defines "right", if any
    corpus: tuple[Path, ...]
    known_deviations: Path | None
    gate: GateConfig
    fuzz: FuzzConfig = FuzzConfig()
    coverage: CoverageConfig = CoverageConfig()
    per_browser: tuple[str, ...] = ()  # modules whose bytes may differ between trees (never their verdicts)

    def relative(self, path: Path | str) -> str:
        """A path as reports show it: relative to the project where possible."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()


def find_pyproject(start: Path | None = None) -> Path:
    """The nearest pyproject.toml with a [tool.extparity] table, from `start` upwards."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "extparity" in _read_toml(candidate).get("tool", {}):
            return candidate
    raise ConfigError(f"no pyproject.toml with a [tool.extparity] table in {here} or above")


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def load_project(pyproject: Path | str | None = None) -> Project:
    path = Path(pyproject) if pyproject else find_pyproject()
    document = _read_toml(path)
    try:
        table = document["tool"]["extparity"]
    except (KeyError, TypeError):
        raise ConfigError(f"{path}: no [tool.extparity] table") from None
    try:
        return _project(path, table)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _project(path: Path, table: dict) -> Project:
    schema.check(table, RENAMED)
    root = path.parent.resolve()
    trees = {name: root / rel for name, rel in table["trees"].items()}
    for name, folder in trees.items():
        if not folder.is_dir():
            raise ConfigError(f"[tool.extparity.trees].{name}: {folder} is not a folder")
    entries = {name: _entry(name, spec, root) for name, spec in table["entries"].items()}
    gate = _gate(table.get("gate", {}), root, entries)
    engines = _with_content_twins(_with_message_twins(_engines(table.get("engines"), trees), gate), trees)
    if any(spec.via == "message" for spec in engines.values()):
        missing = [name for name in entries if name not in gate.messages]
        if missing:
            raise ConfigError(f"[tool.extparity.gate].messages: engines with via = \"message\" need a message "
                              f"adapter for every entry; none for {', '.join(missing)}")
    reference = table.get("reference")
    if reference is not None and reference not in engines:
        raise ConfigError(f"[tool.extparity].reference: {reference!r} is not a configured engine "
                          f"({', '.join(engines)})")
    deviations = table.get("known_deviations")
    return Project(
        path=path.resolve(),
        root=root,
        trees=trees,
        entries=entries,
        engines=engines,
        reference=reference,
        corpus=tuple(root / rel for rel in table["corpus"]),
        known_deviations=root / deviations if deviations else None,
        gate=gate,
        fuzz=_fuzz(table.get("fuzz", {}), entries),
        coverage=CoverageConfig(tuple(table.get("coverage", {}).get("reference", ()))),
        per_browser=_per_browser(table.get("per_browser", ())),
    )


def _per_browser(paths) -> tuple[str, ...]:
    """Tree-relative module paths, normalized as the linker names modules (the schema holds
    them to strings)."""
    found = []
    for path in paths:
        normal = posixpath.normpath(path.lstrip("/"))
        if normal == ".." or normal.startswith("../"):
            raise ConfigError(f"[tool.extparity].per_browser: {path!r} points outside the tree")
        found.append(normal)
    return tuple(found)


def _named_entries(table: dict, entries: dict[str, Entry], where: str) -> None:
    """Keys of ``table`` that must each name an entry."""
    for name in table:
        if name not in entries:
            raise ConfigError(f"{where}: no entry named {name!r} (entries: {', '.join(entries)})")


def _fuzz(table: dict, entries: dict[str, Entry]) -> FuzzConfig:
    generators = table.get("generators", {})
    _named_entries(generators, entries, "[tool.extparity.fuzz].generators")
    return FuzzConfig(plugins=tuple(table.get("plugins", ())),
                      generators={entry: tuple(names) for entry, names in generators.items()},
                      weights={name: float(weight) for name, weight in table.get("weights", {}).items()})


def _gate(table: dict, root: Path, entries: dict[str, Entry]) -> GateConfig:
    where = "[tool.extparity.gate]"
    minimum, messages = table.get("minimum_cases", {}), table.get("messages", {})
    _named_entries(minimum, entries, f"{where}.minimum_cases")
    _named_entries(messages, entries, f"{where}.messages")
    release, web_ext, fuzz = table.get("release", {}), table.get("web_ext", {}), table.get("fuzz", {})
    command = web_ext.get("command")
    return GateConfig(
        glue=tuple(table.get("glue", ())),
        manifest_keys=tuple(table.get("manifest_keys", ())),
        package_json=root / release["package_json"] if "package_json" in release else None,
        changelog=root / release["changelog"] if "changelog" in release else None,
        minimum_cases=dict(minimum),
        dist=root / table.get("dist", GateConfig.dist),
        messages={entry: root / adapter for entry, adapter in messages.items()},
        # a command with a slash is a path relative to the project; a bare name is looked up on PATH
        web_ext=str(root / command) if command and "/" in command else command,
        web_ext_allow=tuple(web_ext.get("allow", ())),
        environments=(parse_environments(table["environments"], f"{where}.environments") if "environments" in table
                      else DEFAULT_ENVIRONMENTS),
        fuzz=FuzzBudget(seed=fuzz.get("seed", FuzzBudget.seed), cases=fuzz.get("cases", FuzzBudget.cases)),
        **{key: _declared(table.get(key, ()), key) for key in DECLARED},
        reference_branch_floor=float(table.get("reference_branch_floor", GateConfig.reference_branch_floor)),
        block_coverage_floor=float(table.get("block_coverage_floor", GateConfig.block_coverage_floor)),
    )


def _declared(items, key: str) -> tuple[Declared, ...]:
    """A list of policy exceptions, each naming what it covers and why (the schema holds them
    to their fields, a reason and no repeats)."""
    what, place = DECLARED[key]
    return tuple(Declared(item[what], item.get(place, "") if place else "", item["reason"]) for item in items)


def _with_message_twins(engines: dict[str, EngineSpec], gate: GateConfig) -> dict[str, EngineSpec]:
    """With message adapters configured, every browser engine that reaches the subject through
    its modules gets a twin that reaches it through the background (``NAME-background``),
    unless one is declared for its kind and tree: the release gate tests both paths."""
    if not gate.messages:
        return engines
    declared = {(spec.kind, spec.tree) for spec in engines.values() if spec.via == "message"}
    twins = {}
    for spec in engines.values():
        if engine_class(spec.kind).EXTENSION and spec.via == "module" and (spec.kind, spec.tree) not in declared:
            name = spec.name + MESSAGE_SUFFIX
            if name in engines:
                raise ConfigError(f"[tool.extparity.engines.{name}]: this name is taken by the message-path "
                                  f"twin of engine {spec.name}; give it via = \"message\" or another name")
            twins[name] = EngineSpec(name, spec.kind, spec.tree, {**spec.options, "via": "message"})
    return {**engines, **twins}


def declares_content_scripts(tree: Path) -> bool:
    """Whether the tree's manifest declares a content script with code (an unreadable manifest
    declares none here: the gate's manifests check names it)."""
    manifest, _ = load_manifest(tree.name, tree)
    scripts = manifest.get("content_scripts") if manifest is not None else None
    return isinstance(scripts, list) and any(isinstance(s, dict) and s.get("js") for s in scripts)


def _with_content_twins(engines: dict[str, EngineSpec], trees: dict[str, Path]) -> dict[str, EngineSpec]:
    """Every browser message-path engine of a tree whose manifest declares content scripts gets
    a twin that sends the same messages from a content script in a tab (``NAME-content``, from
    the page engine's name), unless one is declared for the tree: a background that answers
    content scripts otherwise than the extension's pages is then a divergence like any other."""
    declared = {spec.tree for spec in engines.values() if spec.sender == "content"}
    twins = {}
    for spec in engines.values():
        if (engine_class(spec.kind).SENDS_FROM_CONTENT and spec.via == "message" and spec.tree not in declared
                and spec.tree in trees and declares_content_scripts(trees[spec.tree])):
            base = spec.name[:-len(MESSAGE_SUFFIX)] if spec.name.endswith(MESSAGE_SUFFIX) else spec.name
            name = base + CONTENT_SUFFIX
            if name in engines:
                raise ConfigError(f"[tool.extparity.engines.{name}]: this name is taken by the content-script "
                                  f"twin of engine {spec.name}; give it sender = \"content\" or another name")
            twins[name] = EngineSpec(name, spec.kind, spec.tree, {**spec.options, "sender": "content"})
            declared.add(spec.tree)
    return {**engines, **twins}


def _entry(name: str, spec: dict, root: Path) -> Entry:
    for arg in spec["args"]:
        if arg in CASE_KEYS:
            raise ConfigError(f"[tool.extparity.entries.{name}].args: {arg!r} is a corpus field of its own, "
                              f"not an argument")
    expect = spec.get("expect", {})
    keys = tuple(expect["keys"]) if "keys" in expect else None
    executes = spec.get("executes")
    if executes is not None and keys is not None and executes not in keys:
        raise ConfigError(f"[tool.extparity.entries.{name}].executes: {executes!r} is not one of expect.keys "
                          f"({', '.join(keys)})")
    return Entry(
        name=name,
        module=spec["module"],
        export=spec["export"],
        args=tuple(spec["args"]),
        adapter=root / spec["adapter"] if "adapter" in spec else None,
        expect_keys=keys,
        list_items=dict(expect.get("items", {})),
        executes=executes,
    )


def _engines(table: dict | None, trees: dict[str, Path]) -> dict[str, EngineSpec]:
    """Declared engines, or the defaults: QuickJS per tree, Chromium on a tree named "chrome",
    Firefox on a tree named "firefox"."""
    if table is None:
        specs = {f"quickjs-{tree}": EngineSpec(f"quickjs-{tree}", "quickjs", tree, {}) for tree in trees}
        for kind, tree in (("chromium", "chrome"), ("firefox", "firefox")):
            if tree in trees:
                specs[kind] = EngineSpec(kind, kind, tree, {})
        return specs
    specs = {}
    for name, spec in table.items():
        options = {key: value for key, value in spec.items() if key not in ("kind", "tree")}
        specs[name] = EngineSpec(name, spec["kind"], spec.get("tree"), options)
        check_spec(specs[name], trees)
    return specs
