"""The JSON result is written a case line at a time (``build.chunks``) and merged shard by shard
without loading whole documents: the bytes must be those the whole-document writer gave before."""

from __future__ import annotations

import json

import pytest

from extparity import api
from extparity.engines.base import CaseFailure, EngineRun
from extparity.results import build
from extparity.run.parity import judged_run

from support import ROOT


def dumps_before(document: dict) -> str:
    """The writer as it was before streaming (e602a84), kept here as the reference bytes."""
    parts = []
    for key in sorted(document):
        if key == "cases":
            lines = [json.dumps(case, sort_keys=True, ensure_ascii=True, separators=(", ", ": ")) for case in document[key]]
            text = "[\n  " + ",\n  ".join(lines) + "\n ]" if lines else "[]"
        else:
            text = json.dumps(document[key], indent=1, sort_keys=True, ensure_ascii=True).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


@pytest.fixture(scope="module")
def bundled_document() -> dict:
    """A result of the bundled corpus's shape without running engines: the reference's verdict
    for every case, one engine diverging on every seventh case and failing every eleventh."""
    project = api.load_project(ROOT / "pyproject.toml")
    corpus = api.load_corpus(project)
    engines = ["python", "quickjs-chrome", "v8-chrome"]
    runs = {name: EngineRun(description={"engine": name}) for name in engines}
    for index, case in enumerate(corpus.cases):
        verdict = json.dumps({"ok": True, "args": case.fields}, sort_keys=True)
        for name, run in runs.items():
            if name == "v8-chrome" and index % 11 == 0:
                run.failures[case.id] = CaseFailure("error", "TypeError: planted")
            elif name == "v8-chrome" and index % 7 == 0:
                run.verdicts[case.id] = verdict.replace("true", "false", 1)
            else:
                run.verdicts[case.id] = verdict
    result = judged_run(project, corpus.cases, runs, {case.id for case in corpus.cases})
    return build.json_result(result, project, corpus.files, [], corpus.tags)


def test_the_streamed_writer_gives_the_bytes_of_the_whole_document_writer(bundled_document):
    assert len(bundled_document["cases"]) > 2000
    assert "".join(build.chunks(bundled_document)) == dumps_before(bundled_document)
    assert build.dumps(bundled_document) == dumps_before(bundled_document)


def test_a_result_without_cases_is_written_as_before(bundled_document):
    empty = {**bundled_document, "cases": []}
    assert build.dumps(empty) == dumps_before(empty)
    assert build.dumps({**empty, "cases": iter(())}) == dumps_before(empty)


def test_shards_merged_from_files_give_the_bytes_of_the_whole_result(bundled_document, tmp_path):
    from extparity.results.read import read_head
    from extparity.results.shards import in_shard, merge, merge_files

    paths = []
    for k in range(1, 5):
        part = {**bundled_document, "cases": [case for case in bundled_document["cases"] if in_shard(case["id"], (k, 4))]}
        paths.append(tmp_path / f"shard-{k}.json")
        paths[-1].write_text(build.dumps(part), encoding="utf-8")
    whole = build.dumps(bundled_document)
    assert build.dumps(merge_files(paths)) == whole
    assert build.dumps(merge([json.loads(path.read_text()) for path in paths])) == whole
    assert read_head(paths[0])["corpus"] == bundled_document["corpus"]
