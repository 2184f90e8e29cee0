"""The WXT example (examples/wxt, docs/wxt.md) as built with WXT's defaults: the parser inlined
into each browser's minified background.js, Chrome MV3 and Firefox MV3, a compile-time branch
between them. Built from its lock file by `make wxt-example` (`make test` builds it first).

Its config is what a team writes for such a build: the corpus, the message adapter and the
gate's policy with reasons; the build itself is not changed. It must pass `extparity run` and
the whole gate; with a compile-time drift planted in the Firefox branch of the TypeScript source
and the Firefox build redone, the gate fails naming that TypeScript file and line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile

import pytest

from support import ROOT
from support.cli import call_cli

pytestmark = [pytest.mark.browser, pytest.mark.gate, pytest.mark.slow]

EXAMPLE = ROOT / "examples" / "wxt"
BUILT = EXAMPLE / ".output"
MISSING = "the WXT example is not built: `make wxt-example` (npm ci and the build, from its lock file)"


@pytest.fixture
def example(tmp_path):
    if not (BUILT / "firefox-mv3" / "manifest.json").is_file():
        pytest.fail(MISSING)
    copy = tmp_path / "wxt"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("node_modules", "dist", "out", ".wxt"),
                    symlinks=True)
    config = copy / "pyproject.toml"
    config.write_text(config.read_text().replace('"../../.tools/node_modules/.bin/web-ext"',
                                                 json.dumps(str(ROOT / ".tools" / "node_modules" / ".bin" / "web-ext"))))
    return copy


def cli(copy, *argv):
    here = os.getcwd()
    os.chdir(copy)  # the config is found from the working folder, as a team runs it
    try:
        return call_cli(*argv)
    finally:
        os.chdir(here)


def test_the_build_as_built_passes_run_and_the_whole_gate(example):
    code, out, err = cli(example, "run", "--json", "out/run.json")
    assert code == 0, out + err
    # six engines on the same bytes: the headless ones through the shim, the browsers through theirs
    for engine in ("quickjs-chrome", "quickjs-firefox", "v8-chrome", "spidermonkey-firefox", "chromium", "firefox"):
        assert f"\n{engine} " in out and "30     30" in out
    assert ("module: background.js: per-browser: differs between trees (2 trees), first at "
            "chrome utils/toolcalls.ts:") in out
    code, out, err = cli(example, "gate", "--json", "out/gate.json", "--acknowledged", "extparity/acknowledged.json")
    assert code == 0, out + err
    assert "PASS fuzz:" in out and "PASS coverage:" in out and "locations in source lines" in out
    assert "10 shipped files outside the verified modules trusted unreviewed, each acknowledged" in out


def test_a_compile_time_drift_fails_the_gate_naming_the_typescript_line(example):
    source = example / "utils" / "toolcalls.ts"
    text = source.read_text()
    planted = "        parsed.push(JSON.parse(line));"
    assert planted in text
    # Firefox's branch now drops calls named "click": the Chrome build is what it was.
    source.write_text(text.replace(planted, "        const value = JSON.parse(line);\n"
                                            "        if (value?.name !== 'click') parsed.push(value);"))
    (example / "node_modules").symlink_to(EXAMPLE / "node_modules")
    # both builds redone here, as a team's CI would (the maps name node_modules by its path from here)
    built = subprocess.run(["npm", "run", "build"], cwd=example, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    code, out, err = cli(example, "gate", "--only", "parity,trees")
    assert code == 1, out + err
    assert "FAIL parity:" in out
    line = next(n for n, row in enumerate(source.read_text().splitlines(), 1) if "if (import.meta.env.FIREFOX)" in row)
    # the failure names where the two builds' sources part: the Firefox branch, in TypeScript lines
    assert f"firefox utils/toolcalls.ts:{line}" in out, out


def test_the_zips_wxt_uploads_are_what_the_gate_judges_and_its_sources_zip_leaves_out_extparitys_outputs(example):
    """`wxt zip` for each browser, as a team's release job runs it: the gate takes those zips
    (`--artifact`), and the sources zip Mozilla asks for does not sweep up dist/ and out/."""
    (example / "node_modules").symlink_to(EXAMPLE / "node_modules")
    for out in ("dist", "out"):  # what an earlier gate left
        (example / out).mkdir()
        (example / out / "left.json").write_text("{}")
    for argv in (["npx", "wxt", "zip"], ["npx", "wxt", "zip", "-b", "firefox", "--mv3"]):
        zipped = subprocess.run(argv, cwd=example, capture_output=True, text=True, timeout=300)
        assert zipped.returncode == 0, zipped.stdout + zipped.stderr
    zips = {browser: example / ".output" / f"extparity-wxt-example-1.0.0-{browser}.zip"
            for browser in ("chrome", "firefox", "sources")}
    with zipfile.ZipFile(zips["sources"]) as sources:
        names = sources.namelist()
    assert "utils/toolcalls.ts" in names and not [n for n in names if n.startswith(("dist/", "out/"))], names
    shutil.rmtree(example / "dist")  # the gate's dist/ holds only what it wrote
    code, out, err = cli(example, "gate", "--only", "artifacts", "--json", "out/gate.json",
                         "--artifact", f"chrome={zips['chrome']}", "--artifact", f"firefox={zips['firefox']}")
    assert code == 0, out + err
    recorded = json.loads((example / "out" / "gate.json").read_text())["gate"]["artifacts"]
    assert {tree: a["path"] for tree, a in recorded.items()} == {
        "chrome": ".output/extparity-wxt-example-1.0.0-chrome.zip", "firefox": ".output/extparity-wxt-example-1.0.0-firefox.zip"}
