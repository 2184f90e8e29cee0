"""background: the scripts each background loads are the same in every tree, include the
verified modules, and are what the browser actually loaded. A per-browser background that
pointed at a second, laxer parser copy passed every module engine before this check."""

from __future__ import annotations

from ...project import globs
from ...subject import tree_checks
from ...subject.linker import LinkError
from ..context import Gate
from ..registry import ENGINES, Spec

WAIVER = "[tool.extparity.gate].background_scripts"


def verdict(gate: Gate) -> tuple[list[str], str]:
    tested, result = gate.tested, gate.result
    problems = list(result.background_problems)
    closures: dict[str, set[str]] = {}
    for tree, kinds in gate.browsers.items():
        if not kinds:
            continue
        manifest, error = tree_checks.load_manifest(tree, tested.trees[tree])
        try:
            if manifest is None:
                raise LinkError(f"{error}")
            closures[tree] = set(tree_checks.background_closure(tested.trees[tree], manifest))
        except LinkError as exc:
            problems.append(f"{tree}: its background cannot be read: {exc}")
    verified = set(result.disk_hashes)
    for tree, closure in closures.items():
        missing = sorted(verified - closure)
        if missing:
            problems.append(f"{tree}: its background does not load {', '.join(missing)}, "
                            f"{'which the engines verified' if len(missing) == 1 else 'modules the engines verified'}")
    names = list(closures)
    declared = [d.what for d in tested.gate.background_scripts]  # paths or glob patterns

    def undeclared(scripts: set[str]) -> set[str]:
        return {script for script in scripts if not globs.covered(script, declared)}

    for other in names[1:]:
        base = names[0]
        more, fewer = undeclared(closures[other] - closures[base]), undeclared(closures[base] - closures[other])
        if more or fewer:
            problems.append(f"the backgrounds load different scripts: {other} loads "
                            f"{', '.join(sorted(more)) or 'nothing more'} and {base} loads "
                            f"{', '.join(sorted(fewer)) or 'nothing more'} that the other does not; a per-browser "
                            f"background declares each such script in {WAIVER} with a reason")
    shared = set.intersection(*closures.values()) if closures else set()
    loaded = set().union(*closures.values())
    for script, found in globs.expand(declared, loaded - shared).items():
        if closures and not found:
            what = ("matches no script that only some backgrounds load" if globs.is_pattern(script) else
                    f"is loaded by {'every' if script in shared else 'no'} background")
            problems.append(f"{WAIVER}: {script} {what} ({', '.join(names)}): the declaration waives nothing; "
                            f"remove it")
    per_browser = "".join(f"; {tree} alone loads {', '.join(sorted(closures[tree] - shared))} (declared per browser)"
                          for tree in names if closures[tree] - shared)
    scripts = sorted(shared)
    loaders = [n for n, s in tested.engines.items() if s.via == "message" and result.runs[n].module_hashes]
    if not loaders:
        problems.append("no browser reported the scripts its background loaded (no engine went through the "
                        "background: see entry points)")
    lazy = sorted(set().union(*map(set, result.background_on_demand.values())))
    on_demand = (f"; {', '.join(lazy)} {'is' if len(lazy) == 1 else 'are'} imported only inside a function: "
                 f"the same in every tree, not required to load at start-up" if lazy else "")
    return problems, (f"{' and '.join(names)} backgrounds load the same {len(scripts)} scripts ({', '.join(scripts)}), "
                      f"the verified modules among them{per_browser}; {', '.join(loaders)} loaded exactly these "
                      f"bytes{on_demand}")


CHECK = Spec("background",
             "backgrounds that load different scripts per tree (unless declared in `background_scripts`), leave "
             "out a verified module, or loaded bytes other than the verified ones; a stale declaration",
             "[tool.extparity.gate].messages, background_scripts", verdict, needs=(ENGINES,))
