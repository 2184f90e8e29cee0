"""Source maps and per-browser modules: locations in a built file given in its sources, and a
module whose bytes differ between the trees judged by its verdicts, its first difference named
in source lines."""

from __future__ import annotations

import json

import pytest

from extparity.corpus.cases import load_corpus
from extparity.run.parity import run_parity
from extparity.subject.sourcemap import SourceMapError, decode_vlq, map_of

from support.fake_extension import ENTRIES, make_tree, write_project

_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def encode_vlq(values) -> str:
    """The spec's encoding, written out here to check the decoder against."""
    out = []
    for value in values:
        value = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit, value = value & 31, value >> 5
            out.append(_DIGITS[digit | (32 if value else 0)])
            if not value:
                break
    return "".join(out)


def test_vlq_decodes_the_specs_examples_and_round_trips():
    assert decode_vlq("AAAA") == [0, 0, 0, 0]
    assert decode_vlq("AAgBC") == [0, 0, 16, 1]
    values = [0, 1, -1, 15, 16, -16, 1023, -1024, 123456789]
    assert decode_vlq(encode_vlq(values)) == values
    with pytest.raises(ValueError):
        decode_vlq("g")  # a continuation digit with nothing after it


def write_built(folder, name: str, built: str, sources: dict[str, str], mappings: str, *, comment: bool = True,
                up: str = "../src/") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(built + (f"\n//# sourceMappingURL={name}.map\n" if comment else ""))
    doc = {"version": 3, "file": name, "sources": [f"{up}{s}" for s in sources], "names": [],
           "sourcesContent": list(sources.values()), "mappings": mappings}
    (folder / f"{name}.map").write_text(json.dumps(doc))


def test_a_minified_line_maps_to_the_source_line_that_wrote_it(tmp_path):
    # One built line, three statements from lines 1, 5 and 9 of the source.
    source = "\n".join(f"line {n}" for n in range(1, 11))
    segments = ",".join([encode_vlq([0, 0, 0, 0]), encode_vlq([10, 0, 4, 0]), encode_vlq([10, 0, 4, 0])])
    write_built(tmp_path / "dist", "app.js", "a();b();c();d();e();f()", {"parser.ts": source}, segments)
    found = map_of(tmp_path / "dist" / "app.js", tmp_path)
    assert found is not None and found.has_contents
    assert [str(found.original(1, column)) for column in (0, 9, 10, 19, 25)] == [
        "src/parser.ts:1", "src/parser.ts:1", "src/parser.ts:5", "src/parser.ts:5", "src/parser.ts:9"]
    assert found.source_line(found.original(1, 12)) == "line 5"
    assert found.original(2) is None  # the map says nothing of a second line


def test_a_map_is_found_by_its_comment_beside_the_file_or_inline_and_a_broken_one_is_named(tmp_path):
    write_built(tmp_path / "a", "x.js", "x()", {"x.ts": "x()"}, "AAAA", comment=False)
    assert str(map_of(tmp_path / "a" / "x.js", tmp_path).original(1)) == "src/x.ts:1"  # FILE.map beside it
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "y.js").write_text("y()\n")
    assert map_of(tmp_path / "b" / "y.js") is None  # no map: said so by the caller, once
    (tmp_path / "b" / "z.js").write_text("z()\n//# sourceMappingURL=z.js.map\n")
    (tmp_path / "b" / "z.js.map").write_text("{not json")
    with pytest.raises(SourceMapError, match="z.js: its source map z.js.map cannot be read"):
        map_of(tmp_path / "b" / "z.js")


# A parser built per browser: the Firefox build takes another branch on line 3 of its source.
BUILT = {"chrome": "export function parseToolCallsCanonical(text) {\n  const out = [];\n  out.push(text);\n"
                   "  return JSON.stringify({ calls: [], echo: out[0] });\n}",
         "firefox": "export function parseToolCallsCanonical(text) {\n  const out = [];\n  out[0] = text;\n"
                    "  return JSON.stringify({ calls: [], echo: out[0] });\n}"}
IDENTITY = ";".join(["AAAA"] + ["AACA"] * 4)  # built line n is source line n


def per_browser_project(tmp_path, *, maps: bool = True, same: bool = False, declared=("src/agent/tool-call-parser.js",)):
    trees = {}
    for flavor in ("chrome", "firefox"):
        tree = make_tree(tmp_path / flavor, flavor)
        built = BUILT["chrome" if same else flavor]
        if maps:
            # as a bundler writes it beside the built file: the source, up from src/agent/ of the tree
            write_built(tree / "src" / "agent", "tool-call-parser.js", built, {"parser.ts": built}, IDENTITY,
                        up="../../../src/")
        else:
            (tree / "src" / "agent" / "tool-call-parser.js").write_text(built + "\n")
        trees[flavor] = tree
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "tags.json").write_text('{"t": "a tag"}')
    (tmp_path / "corpus" / "cases.jsonl").write_text(json.dumps(
        {"id": "one", "fn": "parse", "input": "hi", "allowed": [], "expect": {"calls": []}, "tags": ["t"], "why": "x"}) + "\n")
    engines = {f"quickjs-{flavor}": {"kind": "quickjs", "tree": flavor} for flavor in trees}
    return write_project(tmp_path, trees, engines, entries={"parse": ENTRIES["parse"]}, per_browser=list(declared))


def run(project):
    cases = load_corpus(project.corpus, project.entries, project.root).cases
    return run_parity(project, cases, list(project.engines))


@pytest.mark.slow  # two QuickJS engines run the corpus
def test_a_per_browser_module_may_differ_and_its_first_difference_is_named_in_source_lines(tmp_path):
    result = run(per_browser_project(tmp_path))
    assert not result.failed, result.module_problems
    # The map's sources resolve from the tree's src/agent/ to the tree's src/src/parser.ts.
    assert result.per_browser == {"src/agent/tool-call-parser.js": "per-browser: differs between trees (2 trees), "
                                  "first at chrome src/parser.ts:3 / firefox src/parser.ts:3"}


@pytest.mark.slow  # two QuickJS engines run the corpus
def test_without_a_map_the_first_difference_is_in_built_lines_and_says_so(tmp_path):
    result = run(per_browser_project(tmp_path, maps=False))
    assert not result.failed, result.module_problems
    note = result.per_browser["src/agent/tool-call-parser.js"]
    assert "chrome src/agent/tool-call-parser.js:3:" in note
    assert note.endswith("(no source map in chrome, firefox: built lines)")


@pytest.mark.slow  # two QuickJS engines run the corpus
def test_without_the_declaration_the_twins_still_fail(tmp_path):
    result = run(per_browser_project(tmp_path, declared=()))
    assert result.failed
    assert any("src/agent/tool-call-parser.js: twins differ on disk" in p for p in result.module_problems)


@pytest.mark.slow  # two QuickJS engines run the corpus
def test_a_stale_or_unknown_declaration_fails(tmp_path):
    same = run(per_browser_project(tmp_path / "same", same=True))
    assert same.failed and any("it is the same in every tree: remove it" in p for p in same.module_problems)
    unknown = run(per_browser_project(tmp_path / "unknown", declared=("src/agent/tool-call-parser.js", "nowhere.js")))
    assert unknown.failed and any("nowhere.js: declared in [tool.extparity].per_browser, but no engine loads it" in p
                                  for p in unknown.module_problems)
