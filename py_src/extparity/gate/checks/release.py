"""release: the manifests, package.json and the newest changelog entry state one version, so
what is uploaded is what the changelog describes."""

from __future__ import annotations

from ...subject import release, tree_checks
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    project = gate.project
    sources = {project.relative(tree / tree_checks.MANIFEST): tree / tree_checks.MANIFEST
               for tree in project.trees.values()}
    for path in (project.gate.package_json, project.gate.changelog):
        if path is not None:
            sources[project.relative(path)] = path
    versions = release.declared_versions(sources)
    version = next((v for v in versions.values() if v), None)
    return release.check_versions(versions), f"{version} in {', '.join(sources)}"


CHECK = Spec("release",
             "the manifests, `package.json` and the changelog's newest heading stating more than one "
             "version",
             "[tool.extparity.gate].release", verdict)
