"""The gate's checks, found by name: one ordered list of modules under ``gate/checks/``, each
declaring one check (pytest's default_plugins, wptrunner's products).

Why a registry: the gate grew check by check, and each one was wired into ``run_gate`` by hand,
in two spellings. Now a check is a module with a ``CHECK = Spec(...)``: its name as the gate
prints it, what it needs prepared, what it starts itself, the config it reads, a one-line doc
and its verdict. ``run_gate`` is a loop over the selected specs; it builds the artifacts and
runs the engines only when a selected check needs them (`extparity gate --only trees,policy`
packs nothing and starts no engine), and `extparity gate --list-checks` prints this list.
A new check is a new module and a line in ``ORDER``; its place there is its place in the
gate's output and in the JSON report.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .context import Gate

# What the loop prepares for a check before it runs (a check that needs neither is static: it
# reads the config and the trees).
ARTIFACTS = "artifacts"  # the packed artifacts in dist/, unpacked: what ships
ENGINES = "engines"  # the gate's parity run: every configured engine over the corpus, on the artifacts
NEEDS = (ARTIFACTS, ENGINES)
# What a check starts itself, besides what the loop prepared (``--list-checks`` says so: these
# are the expensive ones).
HEADLESS, BROWSERS = "headless engines", "browsers"

ORDER = ("corpus", "trees", "manifests", "release", "policy", "purity", "scripts", "surfaces", "artifacts",
         "web_ext_lint", "entry_points", "background", "page_scripts", "parity", "known_deviations",
         "environment", "coverage", "fuzz")


@dataclass(frozen=True)
class Spec:
    """One check, as its module declares it."""

    name: str  # as the gate prints it: "PASS name: line"
    doc: str  # one line: what fails it
    config: str  # the part of [tool.extparity] it reads
    verdict: Callable[["Gate"], tuple[list[str], str]]  # its problems, and the line it passes with
    needs: tuple[str, ...] = ()  # of NEEDS; ENGINES implies ARTIFACTS (the engines run what ships)
    starts: tuple[str, ...] = ()  # HEADLESS, BROWSERS: what it launches of its own
    applies: Callable[["Gate"], bool] | None = None  # None: always; else a check that is left out when False
    # Called once the artifacts exist and before the engines run, for a check that works beside
    # the run (web-ext lint starts its process) or needs the run made its way (coverage).
    prepare: Callable[["Gate"], None] | None = None

    @property
    def static(self) -> bool:
        return not self.needs and not self.starts

    def describes(self) -> str:
        """What it costs, for ``--list-checks``."""
        if self.static:
            return "static"
        parts = [{ARTIFACTS: "the artifacts", ENGINES: "the engine run"}[need] for need in self.needs]
        return ", ".join(parts + [f"starts {what}" for what in self.starts])


class UnknownCheck(ValueError):
    """``--only`` named a check that does not exist."""


def all_checks() -> list[Spec]:
    """Every check, in the gate's order."""
    return [import_module(f"{__package__}.checks.{module}").CHECK for module in ORDER]


def select(only: str | None) -> list[Spec]:
    """The checks ``only`` names (comma-separated; a check's name, or its module name), in the
    gate's order; every check when None."""
    checks = all_checks()
    if only is None:
        return checks
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {spec.name: spec for spec in checks} | {module: spec for module, spec in zip(ORDER, checks)}
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise UnknownCheck(f"--only: no check named {', '.join(map(repr, unknown)) or '(none given)'}; "
                           f"the checks are {', '.join(spec.name for spec in checks)}")
    chosen = {known[name].name for name in wanted}
    return [spec for spec in checks if spec.name in chosen]
