"""manifests: the trees' manifests are equal key by key but for the declared keys, each meets
its browsers' rules and every file they reach exists. The line says which engines actually
loaded each manifest in this gate: it never claims a browser accepted one it did not load."""

from __future__ import annotations

from ...subject import tree_checks
from ..context import Gate
from ..registry import ENGINES, Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project, result = gate.project, gate.result
    problems = tree_checks.check_manifests(project.trees, gate.browsers)
    manifests = {}
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        if manifest is not None:
            manifests[name] = manifest
    problems += tree_checks.compare_manifests(manifests, project.gate.manifest_keys)
    reached: set[str] = set()
    for name, manifest in manifests.items():
        reached |= set(tree_checks.reachable_files(project.trees[name], manifest)[0])
    loaded = []
    for browsed, kinds in gate.browsers.items():
        where = f"{browsed}/{tree_checks.MANIFEST}"
        for kind in sorted(kinds):
            engines = [name for name, spec in project.engines.items()
                       if spec.tree == browsed and spec.kind == kind and name in result.runs]
            ok = [name for name in engines if result.runs[name].status == "ok"]
            if ok:
                loaded.append(f"{where} by {', '.join(ok)}")
            else:  # the engines' own lines fail the gate; this one only must not claim acceptance
                why = "; ".join(f"{name} {result.runs[name].status}" for name in engines)
                loaded.append(f"{where} by no {kind} engine ({why or 'none ran'}: see entry points and parity)")
    return problems, (f"equal key by key but for {', '.join(project.gate.manifest_keys) or 'none'}; loaded "
                      f"{'; '.join(loaded) or 'by no browser engine'}; {len(reached)} files reached, all present")


CHECK = Spec("manifests",
             "a key that differs outside `manifest_keys`, a manifest its browser would refuse, a file "
             "a manifest reaches that is missing",
             "[tool.extparity.gate].manifest_keys", verdict, needs=(ENGINES,))
