"""The `[tool.extparity]` table: everything the harness knows about its subject.

Trees, entries (the functions cases call, with their arguments and optional adapters), engines
(kinds bound to trees and options), the corpus, the known deviations and the release gate's
settings all come from here, so another extension team points the harness at their own trees
by writing one table. Paths are relative to the file that holds the table. Unknown keys are
errors: a typo must not turn into a default.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError
from .environments import DEFAULT as DEFAULT_ENVIRONMENTS
from .environments import Environment
from .environments import parse as parse_environments
from .kinds import EngineSpec, check_spec, engine_class
from .manifest import load_manifest

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
TOP_KEYS = {"corpus", "known_deviations", "trees", "entries", "engines", "reference", "gate", "fuzz", "coverage"}
COVERAGE_KEYS = {"reference"}
FUZZ_KEYS = {"plugins", "generators", "weights"}
ENTRY_KEYS = {"module", "export", "args", "adapter", "expect", "executes"}
EXPECT_KEYS = {"keys", "items"}
GATE_KEYS = {"glue", "manifest_keys", "release", "minimum_cases", "dist", "messages", "web_ext", "purity",
             "glue_scripts", "imports", "surfaces", "environments", "reference_branch_floor",
             "block_coverage_floor", "fuzz"}
FUZZ_BUDGET_KEYS = {"seed", "cases", "seconds"}
# Policy exceptions of the gate: [tool.extparity.gate].KEY = [{FIELD = "...", PLACE = "...", reason = "..."}]
DECLARED = {"purity": ("identifier", "module"), "glue_scripts": ("script", None), "imports": ("export", "script"),
            "surfaces": ("surface", "script")}
OPTIONAL_PLACE = {"surfaces"}  # a surface of the manifest has no script
RELEASE_KEYS = {"package_json", "changelog"}
WEB_EXT_KEYS = {"command", "allow"}
MESSAGE_SUFFIX = "-background"
CONTENT_SUFFIX = "-content"
RENAMED = {
    "modules": "modules are now found from the entries' imports; list extra files under [tool.extparity.gate]",
    "browsers": "browser executables are engine options: [tool.extparity.engines.NAME] executable = ...",
    "extension_root": "release metadata lives under [tool.extparity.gate]",
    "unreachable": "coverage exemptions are marker comments beside the code now: "
                   "`// extparity-unreachable: REASON` in the verified module (README \"Coverage\")",
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
    verdict; ``seconds`` caps the wall time, and a campaign the cap cuts short fails the gate
    (a loaded machine covering fewer cases would otherwise pass on less). ``cases = 0`` turns it
    off, and the check's line says so."""

    seed: int = 0
    cases: int = 20_000
    seconds: float = 90.0


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


def _require(table: dict, key: str, kind: type | tuple[type, ...], where: str):
    if key not in table:
        raise ConfigError(f"{where}: missing key {key!r}")
    return _typed(table[key], kind, f"{where}.{key}")


def _typed(value, kind: type | tuple[type, ...], where: str):
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ConfigError(f"{where}: expected {names}, got {type(value).__name__}")
    return value


def _strings(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: expected a list of non-empty strings")
    return tuple(value)


def _unknown(table: dict, allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            hint = f" ({RENAMED[key]})" if key in RENAMED else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint}")


def load_project(pyproject: Path | str | None = None) -> Project:
    path = Path(pyproject) if pyproject else find_pyproject()
    document = _read_toml(path)
    try:
        table = document["tool"]["extparity"]
    except (KeyError, TypeError):
        raise ConfigError(f"{path}: no [tool.extparity] table") from None
    where = "[tool.extparity]"
    _unknown(table, TOP_KEYS, f"{path}: {where}")
    root = path.parent.resolve()
    trees = {name: root / _typed(rel, str, f"{where}.trees.{name}")
             for name, rel in _require(table, "trees", dict, where).items()}
    for name, folder in trees.items():
        if not NAME.match(name):
            raise ConfigError(f"{where}.trees: {name!r} is not a usable name (letters, digits, '.', '_', '-')")
        if not folder.is_dir():
            raise ConfigError(f"[tool.extparity.trees].{name}: {folder} is not a folder")
    entries = {name: _entry(name, spec, root) for name, spec in _require(table, "entries", dict, where).items()}
    if not entries:
        raise ConfigError(f"{where}.entries: declare at least one entry")
    gate = _gate(table.get("gate", {}), root, entries)
    engines = _with_content_twins(_with_message_twins(_engines(table.get("engines"), trees, entries), gate), trees)
    if any(spec.via == "message" for spec in engines.values()):
        missing = [name for name in entries if name not in gate.messages]
        if missing:
            raise ConfigError(f"[tool.extparity.gate].messages: engines with via = \"message\" need a message "
                              f"adapter for every entry; none for {', '.join(missing)}")
    reference = table.get("reference")
    if reference is not None and reference not in engines:
        raise ConfigError(f"{where}.reference: {reference!r} is not a configured engine "
                          f"({', '.join(engines)})")
    deviations = table.get("known_deviations")
    return Project(
        path=path.resolve(),
        root=root,
        trees=trees,
        entries=entries,
        engines=engines,
        reference=reference,
        corpus=tuple(root / rel for rel in _strings(_require(table, "corpus", list, where), f"{where}.corpus")),
        known_deviations=root / _typed(deviations, str, f"{where}.known_deviations") if deviations else None,
        gate=gate,
        fuzz=_fuzz(table.get("fuzz", {}), entries),
        coverage=_coverage(table.get("coverage", {})),
    )


def _coverage(table) -> CoverageConfig:
    where = "[tool.extparity.coverage]"
    _typed(table, dict, where)
    _unknown(table, COVERAGE_KEYS, where)
    names = _strings(table.get("reference", []), f"{where}.reference")
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", name):
            raise ConfigError(f"{where}.reference: {name!r} is not a package or module name (as the reference imports it)")
    return CoverageConfig(names)


def _fuzz(table, entries: dict[str, Entry]) -> FuzzConfig:
    where = "[tool.extparity.fuzz]"
    _typed(table, dict, where)
    _unknown(table, FUZZ_KEYS, where)
    generators = _typed(table.get("generators", {}), dict, f"{where}.generators")
    for entry, names in generators.items():
        if entry not in entries:
            raise ConfigError(f"{where}.generators: no entry named {entry!r} (entries: {', '.join(entries)})")
        if not _strings(names, f"{where}.generators.{entry}"):
            raise ConfigError(f"{where}.generators.{entry}: name at least one generator")
    weights = _typed(table.get("weights", {}), dict, f"{where}.weights")
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
            raise ConfigError(f"{where}.weights.{name}: expected a positive number")
    return FuzzConfig(plugins=_strings(table.get("plugins", []), f"{where}.plugins"),
                      generators={entry: tuple(names) for entry, names in generators.items()},
                      weights={name: float(weight) for name, weight in weights.items()})


def _gate(table, root: Path, entries: dict[str, Entry]) -> GateConfig:
    where = "[tool.extparity.gate]"
    _typed(table, dict, where)
    _unknown(table, GATE_KEYS, where)
    release = _typed(table.get("release", {}), dict, f"{where}.release")
    _unknown(release, RELEASE_KEYS, f"{where}.release")
    paths = {key: root / _typed(release[key], str, f"{where}.release.{key}") for key in RELEASE_KEYS if key in release}
    minimum = _typed(table.get("minimum_cases", {}), dict, f"{where}.minimum_cases")
    for entry, count in minimum.items():
        if entry not in entries:
            raise ConfigError(f"{where}.minimum_cases: no entry named {entry!r} (entries: {', '.join(entries)})")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ConfigError(f"{where}.minimum_cases.{entry}: expected a whole number of at least 1")
    messages = _typed(table.get("messages", {}), dict, f"{where}.messages")
    for entry, adapter in messages.items():
        if entry not in entries:
            raise ConfigError(f"{where}.messages: no entry named {entry!r} (entries: {', '.join(entries)})")
        _typed(adapter, str, f"{where}.messages.{entry}")
    web_ext = _typed(table.get("web_ext", {}), dict, f"{where}.web_ext")
    _unknown(web_ext, WEB_EXT_KEYS, f"{where}.web_ext")
    if web_ext and "command" not in web_ext:
        raise ConfigError(f"{where}.web_ext: missing key 'command'")
    command = _typed(web_ext["command"], str, f"{where}.web_ext.command") if web_ext else None
    return GateConfig(
        glue=_strings(table.get("glue", []), f"{where}.glue"),
        manifest_keys=_strings(table.get("manifest_keys", []), f"{where}.manifest_keys"),
        package_json=paths.get("package_json"),
        changelog=paths.get("changelog"),
        minimum_cases=dict(minimum),
        dist=root / _typed(table.get("dist", "dist"), str, f"{where}.dist"),
        messages={entry: root / adapter for entry, adapter in messages.items()},
        # a command with a slash is a path relative to the project; a bare name is looked up on PATH
        web_ext=str(root / command) if command and "/" in command else command,
        web_ext_allow=_strings(web_ext.get("allow", []), f"{where}.web_ext.allow"),
        environments=(parse_environments(table["environments"], f"{where}.environments") if "environments" in table
                      else DEFAULT_ENVIRONMENTS),
        fuzz=_fuzz_budget(table.get("fuzz", {}), f"{where}.fuzz"),
        **{key: _declared(table.get(key, []), key, f"{where}.{key}") for key in DECLARED},
        reference_branch_floor=_floor(table.get("reference_branch_floor", 0), f"{where}.reference_branch_floor"),
        block_coverage_floor=_floor(table.get("block_coverage_floor", 100), f"{where}.block_coverage_floor"),
    )


def _floor(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise ConfigError(f"{where}: expected a percentage from 0 to 100")
    return float(value)


def _fuzz_budget(table, where: str) -> FuzzBudget:
    _typed(table, dict, where)
    _unknown(table, FUZZ_BUDGET_KEYS, where)
    default = FuzzBudget()
    seed, cases = table.get("seed", default.seed), table.get("cases", default.cases)
    seconds = table.get("seconds", default.seconds)
    for key, value in (("seed", seed), ("cases", cases)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{where}.{key}: expected a whole number of at least 0")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ConfigError(f"{where}.seconds: expected a positive number")
    return FuzzBudget(seed=seed, cases=cases, seconds=float(seconds))


def _declared(value, key: str, where: str) -> tuple[Declared, ...]:
    """A list of policy exceptions, each naming what it covers and why (a reason is required)."""
    what, place = DECLARED[key]
    fields = {what, "reason"} | ({place} if place else set())
    out = []
    for i, item in enumerate(_typed(value, list, where)):
        _typed(item, dict, f"{where}[{i}]")
        _unknown(item, fields, f"{where}[{i}]")
        for name in (what, "reason") + ((place,) if place and key not in OPTIONAL_PLACE else ()):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise ConfigError(f"{where}[{i}]: missing key {name!r} (a non-empty string)")
        if place and place in item:
            _typed(item[place], str, f"{where}[{i}].{place}")
        declared = Declared(item[what], item.get(place, "") if place else "", item["reason"])
        if declared in out:
            raise ConfigError(f"{where}[{i}]: declared twice")
        out.append(declared)
    return tuple(out)


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


def _entry(name: str, spec, root: Path) -> Entry:
    where = f"[tool.extparity.entries.{name}]"
    if not NAME.match(name):
        raise ConfigError(f"{where}: {name!r} is not a usable entry name")
    _typed(spec, dict, where)
    _unknown(spec, ENTRY_KEYS, where)
    expect = _typed(spec.get("expect", {}), dict, f"{where}.expect")
    _unknown(expect, EXPECT_KEYS, f"{where}.expect")
    items = _typed(expect.get("items", {}), dict, f"{where}.expect.items")
    for key, field_name in items.items():
        _typed(field_name, str, f"{where}.expect.items.{key}")
    keys = _strings(expect["keys"], f"{where}.expect.keys") if "keys" in expect else None
    args = _strings(_require(spec, "args", list, where), f"{where}.args")
    adapter = spec.get("adapter")
    executes = spec.get("executes")
    if executes is not None:
        _typed(executes, str, f"{where}.executes")
        if keys is not None and executes not in keys:
            raise ConfigError(f"{where}.executes: {executes!r} is not one of expect.keys ({', '.join(keys)})")
    return Entry(
        name=name,
        module=_require(spec, "module", str, where),
        export=_require(spec, "export", str, where),
        args=args,
        adapter=root / _typed(adapter, str, f"{where}.adapter") if adapter else None,
        expect_keys=keys,
        list_items=dict(items),
        executes=executes,
    )


def _engines(table, trees: dict[str, Path], entries: dict[str, Entry]) -> dict[str, EngineSpec]:
    """Declared engines, or the defaults: QuickJS per tree, Chromium on a tree named "chrome",
    Firefox on a tree named "firefox"."""
    if table is None:
        specs = {f"quickjs-{tree}": EngineSpec(f"quickjs-{tree}", "quickjs", tree, {}) for tree in trees}
        for kind, tree in (("chromium", "chrome"), ("firefox", "firefox")):
            if tree in trees:
                specs[kind] = EngineSpec(kind, kind, tree, {})
        return specs
    _typed(table, dict, "[tool.extparity.engines]")
    specs = {}
    for name, spec in table.items():
        where = f"[tool.extparity.engines.{name}]"
        if not NAME.match(name):
            raise ConfigError(f"{where}: {name!r} is not a usable engine name")
        options = dict(_typed(spec, dict, where))
        kind = _require(options, "kind", str, where)
        del options["kind"]
        specs[name] = EngineSpec(name, kind, options.pop("tree", None), options)
        check_spec(specs[name], trees)
    if not specs:
        raise ConfigError("[tool.extparity.engines]: declare at least one engine, or remove the table")
    return specs
