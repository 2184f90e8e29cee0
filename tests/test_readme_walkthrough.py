"""docs/quickstart.md, "Pointing extparity at your own extension", followed as a new user follows it.

The walk-through's blocks are read out of docs/quickstart.md in order (TOML, the adapter, a case,
a known deviation) and applied step by step to a copy of `tests/extensions/shaped` without its
config: after each step the config is loaded as the command would load it, and at the end the
extension runs in the engines the walk-through names. An edit of the walk-through that breaks a
step fails here, not for the next user. (The file keeps its name from when the walk-through was
in the README.)
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from extparity.corpus.cases import load_corpus
from extparity.corpus.deviations import load_deviations
from extparity.project.config import load_project
from extparity.project.errors import ConfigError

from support import ROOT, SUBFOLDER
from support.cli import call_cli
from support.copies import copy_shaped

QUICKSTART = ROOT / "docs" / "quickstart.md"
CORPUS_DOC = ROOT / "docs" / "corpus.md"


def walkthrough() -> list[tuple[str, str]]:
    """(language, text) of each fenced block of the section, in order, unindented."""
    quickstart = QUICKSTART.read_text(encoding="utf-8")
    # The walk-through ends at the next heading of any level.
    section = re.split(r"\n##+ ", quickstart.split("## Pointing extparity at your own extension\n", 1)[1], maxsplit=1)[0]
    blocks = re.findall(r"^( *)```(\w+)\n(.*?)^\1```$", section, re.MULTILINE | re.DOTALL)
    return [(language, "\n".join(line[len(indent):] for line in text.splitlines()) + "\n")
            for indent, language, text in blocks]


@pytest.fixture
def extension(tmp_path) -> Path:
    """The shaped extension without its config and adapter, its planted twin difference removed."""
    copy = copy_shaped(tmp_path / "shaped", twins=True)
    (copy / "pyproject.toml").unlink()
    shutil.rmtree(copy / "adapters")
    return copy


def test_the_walkthrough_has_the_blocks_it_describes():
    assert [language for language, _ in walkthrough()] == ["toml", "toml", "json", "js", "toml", "json", "toml"]


@pytest.mark.browser
def test_the_quickstart_walkthrough_builds_a_config_that_runs_step_by_step(extension):
    blocks = walkthrough()
    toml = [text for language, text in blocks if language == "toml"]
    config = extension / "pyproject.toml"

    # 1. Trees (and the corpus): not a config yet, and the error says what is missing.
    config.write_text(toml[0])
    with pytest.raises(ConfigError, match="entries"):
        load_project(config)

    # 2. Entries: a config now; without an engines table, the default engines per tree.
    config.write_text(toml[0] + "\n" + toml[1])
    project = load_project(config)
    assert list(project.trees) == ["chrome", "firefox"]
    assert project.entries["calls"].args == ("text", "allowed")
    assert set(project.engines) == {"quickjs-chrome", "quickjs-firefox", "chromium", "firefox"}

    # ... and the case it shows is one of this entry's, with the fields `args` names.
    (_, case), = [block for block in blocks if block[0] == "json" and '"fn": "calls"' in block[1]]
    corpus = extension / "walkthrough-corpus"
    corpus.mkdir()
    (corpus / "case.jsonl").write_text(case)
    shutil.copyfile(extension / "corpus/tags.json", corpus / "tags.json")
    loaded = load_corpus([corpus], project.entries, base=extension)
    assert [p.message for p in loaded.problems] == [] and [c.id for c in loaded.cases] == ["one-call"]

    # 3. The adapter the entry names, as the walk-through writes it.
    (_, adapter), = [block for block in blocks if block[0] == "js"]
    (extension / "adapters").mkdir()
    (extension / "adapters/tool-calls.js").write_text(adapter)

    # 4. Engines: exactly the ones listed, with their options.
    config.write_text(toml[0] + "\n" + toml[1] + "\n" + toml[2])
    project = load_project(config)
    assert list(project.engines) == ["quickjs-chrome", "chromium", "firefox"]
    assert "known_deviations" not in tomllib.loads(config.read_text())["tool"]["extparity"]  # step 5 adds it

    # 5. Known deviations: the walk-through's entry is valid data (checked on the extension it names).
    (_, deviations), = [block for block in blocks if block[0] == "json" and '"reason"' in block[1]]
    subfolder = load_project(SUBFOLDER / "pyproject.toml")
    path = extension / "walkthrough-deviations.json"
    path.write_text(deviations)
    found, problems = load_deviations(path, subfolder.engines, {"tiny-factor"})
    assert problems == [] and list(found) == ["tiny-factor"]

    # 7. The exceptions its ids need: without them the headless engines refuse Date.now.
    config.write_text(toml[0] + "\n" + toml[1] + "\n" + toml[2] + "\n" + toml[3])

    # 8. Run it, both ways round the --config option: the corpus, then the walk-through's own case.
    code, out, err = call_cli("--config", str(config), "run")
    assert code == 0, err
    assert out.splitlines()[-1] == "all 6 cases agree across quickjs-chrome, chromium, firefox and meet their expectations"
    code, out, err = call_cli("run", "--config", str(config), "--corpus", str(corpus))
    assert code == 0, err
    assert out.splitlines()[-1] == "the 1 case agrees across quickjs-chrome, chromium, firefox and meets its expectations"


def test_the_corpus_section_shows_the_tag_registry_as_the_loader_reads_it(tmp_path):
    section = CORPUS_DOC.read_text(encoding="utf-8").split("\n## ", 1)[0]  # before "Known deviations"
    registry = json.loads(section.split("tags.json`, the tag registry", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    bundled = json.loads((ROOT / "fixtures/tags.json").read_text(encoding="utf-8"))
    assert registry and all(bundled[tag] == text for tag, text in registry.items())
    (tmp_path / "tags.json").write_text(json.dumps(registry))
    (tmp_path / "a.jsonl").write_text(json.dumps({"id": "x", "fn": "parse", "input": "", "allowed": [], "expect": "reference",
                                                  "tags": list(registry), "why": "the registry's tags"}) + "\n")
    loaded = load_corpus([tmp_path], load_project(ROOT / "pyproject.toml").entries, base=tmp_path)
    assert loaded.problems == [] and loaded.tags == registry
