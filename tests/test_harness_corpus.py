"""The corpus loader and the `extparity corpus` commands, on small corpora written per test.

Why tmp corpora: each schema rule is checked on a file that breaks exactly that rule between
two good lines, so a test shows both halves of the loader's promise: the problem is reported
with file, line and field, and nothing else in the file is lost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extparity import cli
from extparity.corpus.cases import load_corpus as load_with_entries
from extparity.project.config import load_project

from support import ROOT, bundled_table
from support.config_files import write_pyproject

TAGS = {"t": "a tag", "u": "another tag"}
ENTRIES = load_project(ROOT / "pyproject.toml").entries  # the bundled parse and repair entries


def load_corpus(paths, base):
    return load_with_entries(paths, ENTRIES, base=base)


def good(case_id: str, fn: str = "parse", **overrides) -> dict:
    """A schema-valid case; `overrides` replace fields, a value of ... deletes the field."""
    case = {"id": case_id, "fn": fn, "input": "x", "expect": {"calls": []} if fn == "parse" else {"status": "valid"},
            "tags": ["t"], "why": "because"}
    if fn == "parse":
        case["allowed"] = ["click"]
    for key, value in overrides.items():
        if value is ...:
            case.pop(key, None)
        else:
            case[key] = value
    return case


def write_jsonl(path: Path, lines: list) -> Path:
    """Each item is a dict (dumped as one JSON line) or a str (written verbatim)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in lines),
                    encoding="utf-8")
    return path


def make_corpus(root: Path, files: dict[str, list], tags: dict | None = TAGS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if tags is not None:
        (root / "tags.json").write_text(json.dumps(tags), encoding="utf-8")
    for rel, lines in files.items():
        write_jsonl(root / rel, lines)
    return root


def write_config(path: Path, **changes) -> Path:
    """pyproject.toml whose [tool.extparity] is the real one with `changes` applied.

    Keys are top-level keys of the table, or "table.key" for its subtables; relative paths
    in the real table are made absolute so they still find the repository's trees.
    """
    table = bundled_table()
    table["trees"] = {name: str(ROOT / rel) for name, rel in table["trees"].items()}
    table["engines"]["python"]["path"] = str(ROOT / table["engines"]["python"]["path"])
    for key, value in changes.items():
        head, _, tail = key.partition(".")
        if tail:
            table.setdefault(head, {})[tail] = value
        elif value is None:
            table.pop(head, None)
        else:
            table[head] = value
    return write_pyproject(path, table)


# ------------------------------------------------------------------ one problem, one line

# (test id, the bad line, field reported, words in the message, does the bad case still load)
BAD_LINES = [
    ("bad-json", '{"id": "broken", "fn": "parse",', "", "not JSON", False),
    ("not-an-object", '["a", "list"]', "", "JSON object", False),
    ("unknown-field", good("bad", extra=1), "extra", "unknown field", False),
    ("bad-id-uppercase", good("Bad-Id"), "id", "required", False),
    ("bad-id-not-string", good("bad", id=7), "id", "required", False),
    ("missing-id", good("bad", id=...), "id", "required", False),
    ("bad-fn", good("bad", fn="lex"), "fn", "parse, repair", False),
    ("missing-input", good("bad", input=...), "input", "required", False),
    ("missing-allowed-for-parse", good("bad", allowed=...), "allowed", "required: argument of parse", False),
    ("allowed-on-repair", good("bad", "repair", allowed=["click"]), "allowed", "unknown field for repair", False),
    ("empty-expect", good("bad", expect={}), "expect", "non-empty object", False),
    ("expect-not-object", good("bad", expect=["calls"]), "expect", "non-empty object", False),
    ("unknown-expect-key-parse", good("bad", expect={"status": "valid"}), "expect", "unknown key 'status' for parse", False),
    ("unknown-expect-key-repair", good("bad", "repair", expect={"calls": []}), "expect", "unknown key 'calls' for repair", False),
    ("tags-empty", good("bad", tags=[]), "tags", "non-empty list", False),
    ("tags-not-list", good("bad", tags="t"), "tags", "non-empty list", False),
    ("tags-not-strings", good("bad", tags=["t", 3]), "tags", "non-empty list", False),
    ("missing-why", good("bad", why=...), "why", "required", False),
    ("blank-why", good("bad", why="   "), "why", "required", False),
    ("unknown-tag", good("bad", tags=["t", "nope"]), "tags", "unknown tag 'nope'", True),
]


@pytest.mark.parametrize(("bad", "field", "words", "loads"), [b[1:] for b in BAD_LINES], ids=[b[0] for b in BAD_LINES])
def test_a_schema_problem_names_file_line_and_field_and_the_rest_of_the_file_loads(tmp_path, bad, field, words, loads):
    root = make_corpus(tmp_path / "corpus", {"parse/mixed.jsonl": [good("first"), bad, good("third", "repair")]})
    corpus = load_corpus([root], base=tmp_path)

    assert [(p.file, p.line, p.field) for p in corpus.problems] == [("corpus/parse/mixed.jsonl", 2, field)]
    problem = corpus.problems[0]
    assert words in problem.message
    location = "corpus/parse/mixed.jsonl:2"
    assert str(problem).startswith(f"{location}: field {field!r}: " if field else f"{location}: ")
    expected = [("first", 1), ("bad", 2), ("third", 3)] if loads else [("first", 1), ("third", 3)]
    assert [(c.id, c.line) for c in corpus.cases] == expected


def test_every_problem_of_one_line_is_reported_separately(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("BAD", why=..., extra=1)]})
    corpus = load_corpus([root], base=tmp_path)
    assert sorted((p.line, p.field) for p in corpus.problems) == [(1, "extra"), (1, "id"), (1, "why")]
    assert corpus.cases == []


def test_a_duplicate_id_names_both_locations_and_keeps_the_first(tmp_path):
    root = make_corpus(tmp_path / "c", {
        "parse/a.jsonl": [good("one"), good("dup")],
        "parse/b.jsonl": [good("two"), good("three"), good("dup", input="other")],
    })
    corpus = load_corpus([root], base=tmp_path)
    assert [(p.file, p.line, p.field) for p in corpus.problems] == [("c/parse/b.jsonl", 3, "id")]
    assert "duplicate id 'dup'" in corpus.problems[0].message
    assert "c/parse/a.jsonl:2" in corpus.problems[0].message  # the first location, too
    assert [(c.id, c.file, c.line) for c in corpus.cases] == [
        ("one", "c/parse/a.jsonl", 1), ("dup", "c/parse/a.jsonl", 2),
        ("two", "c/parse/b.jsonl", 1), ("three", "c/parse/b.jsonl", 2)]
    assert next(c for c in corpus.cases if c.id == "dup").input == "x"


def test_a_missing_tag_registry_is_reported_and_cases_still_load(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one"), good("two", tags=["u"])]}, tags=None)
    corpus = load_corpus([root], base=tmp_path)
    file_problems = [p for p in corpus.problems if p.line == 0]
    assert [(p.file, p.field) for p in file_problems] == [("c/tags.json", "")]
    # One line that says what the file must hold and which tags it must declare, not one line
    # per case and tag it would have declared.
    assert file_problems[0].message == ('tag registry missing: every tag must be declared, a JSON object '
                                        '{"tag": "description", ...}; its cases use 2 tags (t, u)')
    assert [p for p in corpus.problems if p.line] == []
    assert [c.id for c in corpus.cases] == ["one", "two"]


def test_without_a_registry_lint_prints_one_line_for_it(tmp_path, capsys):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good(f"case-{i}", tags=["t", "u"]) for i in range(30)]}, tags=None)
    code = cli.main(["--config", str(write_config(tmp_path / "pyproject.toml", corpus=[str(root)],
                                                  known_deviations=None)), "corpus", "lint"])
    assert code == 1
    assert capsys.readouterr().out.splitlines() == [
        'c/tags.json: tag registry missing: every tag must be declared, a JSON object {"tag": "description", ...}; '
        'its cases use 2 tags (t, u)',
        "30 cases in 1 file, 1 problem"]


def test_a_tag_registry_that_is_not_a_map_of_descriptions_is_reported(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one")]}, tags={"t": ""})
    corpus = load_corpus([root], base=tmp_path)
    assert any(p.file == "c/tags.json" and "description" in p.message for p in corpus.problems)


def test_a_missing_corpus_path_is_a_problem_not_an_empty_pass(tmp_path):
    corpus = load_corpus([tmp_path / "nowhere"], base=tmp_path)
    assert [(p.file, p.line) for p in corpus.problems] == [("nowhere", 0)]
    assert corpus.cases == []


def test_blank_lines_are_skipped_and_line_numbers_stay_physical(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one"), "", "   ", good("two"), "{bad"]})
    corpus = load_corpus([root], base=tmp_path)
    assert [(c.id, c.line) for c in corpus.cases] == [("one", 1), ("two", 4)]
    assert [(p.line, p.field) for p in corpus.problems] == [(5, "")]


# ------------------------------------------------------------------ groups and paths

def test_groups_are_paths_inside_the_corpus_root_without_the_suffix(tmp_path):
    root = make_corpus(tmp_path / "c", {
        "parse/bare.jsonl": [good("p1"), good("p2")],
        "parse/deep/fenced.jsonl": [good("p3")],
        "repair/truncation.jsonl": [good("r1", "repair")],
        "top.jsonl": [good("t1")],
    })
    corpus = load_corpus([root], base=tmp_path)
    assert corpus.problems == []
    assert {c.id: c.group for c in corpus.cases} == {
        "p1": "parse/bare", "p2": "parse/bare", "p3": "parse/deep/fenced", "r1": "repair/truncation", "t1": "top"}
    assert corpus.files == ["c/parse/bare.jsonl", "c/parse/deep/fenced.jsonl", "c/repair/truncation.jsonl", "c/top.jsonl"]


def test_a_single_jsonl_file_can_be_the_corpus(tmp_path):
    root = make_corpus(tmp_path / "c", {"narration.jsonl": [good("n1"), good("n2")], "other.jsonl": [good("o1")]})
    corpus = load_corpus([root / "narration.jsonl"], base=tmp_path)
    assert corpus.problems == []
    assert corpus.files == ["c/narration.jsonl"]
    assert [(c.id, c.group, c.file, c.line) for c in corpus.cases] == [
        ("n1", "narration", "c/narration.jsonl", 1), ("n2", "narration", "c/narration.jsonl", 2)]


def test_a_single_file_in_a_group_folder_finds_the_corpus_tag_registry(tmp_path):
    root = make_corpus(tmp_path / "c", {"parse/bare.jsonl": [good("p1")]})
    corpus = load_corpus([root / "parse" / "bare.jsonl"], base=tmp_path)
    assert [str(p) for p in corpus.problems] == []


def test_an_unhashable_fn_is_a_reported_problem_not_a_crash(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one"), good("two", fn=["parse"]), good("three")]})
    corpus = load_corpus([root], base=tmp_path)
    assert [(p.line, p.field) for p in corpus.problems] == [(2, "fn")]
    assert [c.id for c in corpus.cases] == ["one", "three"]


def test_non_json_constants_are_reported(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one"), '{"id": "two", "fn": "repair", "input": NaN, '
                                                    '"expect": {"status": "rejected"}, "tags": ["t"], "why": "w"}']})
    corpus = load_corpus([root], base=tmp_path)
    assert [p.line for p in corpus.problems] == [2]
    assert [c.id for c in corpus.cases] == ["one"]


def test_an_expect_list_key_with_a_non_list_value_is_reported(tmp_path):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one", expect={"calls": None})]})
    corpus = load_corpus([root], base=tmp_path)
    assert [(p.line, p.field) for p in corpus.problems] == [(1, "expect")]


# ------------------------------------------------------------------ extparity corpus lint / stats

@pytest.fixture
def config_for(tmp_path):
    def make(corpus_root: Path) -> str:
        return str(write_config(tmp_path / "pyproject.toml", corpus=[str(corpus_root)],
                                known_deviations=None))
    return make


def test_an_entry_argument_named_like_a_corpus_field_exits_2_naming_the_entry(tmp_path, capsys):
    repair = bundled_table()["entries"]["repair"]
    root = make_corpus(tmp_path / "c", {"repair/a.jsonl": [good("r", "repair")]})
    config = write_config(tmp_path / "pyproject.toml", corpus=[str(root)], known_deviations=None,
                          **{"entries.repair": {**repair, "args": ["input", "why"]}})
    assert cli.main(["--config", str(config), "corpus", "lint"]) == 2
    assert capsys.readouterr().err == (f"extparity: {config}: [tool.extparity.entries.repair].args: 'why' is a corpus "
                                       f"field of its own, not an argument\n")


def test_lint_exits_1_and_lists_every_problem(tmp_path, config_for, capsys):
    root = make_corpus(tmp_path / "c", {"parse/a.jsonl": [good("one"), good("two", why=...), "{oops"]})
    code = cli.main(["--config", config_for(root), "corpus", "lint"])
    out = capsys.readouterr().out
    assert code == 1
    assert "c/parse/a.jsonl:2: field 'why'" in out
    assert "c/parse/a.jsonl:3: not JSON" in out
    assert out.strip().splitlines()[-1] == "1 case in 1 file, 2 problems"


def test_lint_exits_0_on_a_clean_corpus(tmp_path, config_for, capsys):
    root = make_corpus(tmp_path / "c", {"parse/a.jsonl": [good("one"), good("two")], "repair/b.jsonl": [good("r", "repair")]})
    code = cli.main(["--config", config_for(root), "corpus", "lint"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.strip() == "3 cases in 2 files, 0 problems"


def test_lint_exits_1_on_a_corpus_without_cases(tmp_path, config_for, capsys):
    root = make_corpus(tmp_path / "c", {"parse/a.jsonl": []})
    assert cli.main(["--config", config_for(root), "corpus", "lint"]) == 1
    assert "0 cases" in capsys.readouterr().out


def test_lint_corpus_option_overrides_the_configured_corpus(tmp_path, config_for, capsys):
    broken = make_corpus(tmp_path / "broken", {"a.jsonl": ["{oops"]})
    clean = make_corpus(tmp_path / "clean", {"a.jsonl": [good("one")]})
    assert cli.main(["--config", config_for(broken), "corpus", "lint", "--corpus", str(clean)]) == 0
    capsys.readouterr()


def test_stats_prints_counts_per_group_and_a_total(tmp_path, config_for, capsys):
    root = make_corpus(tmp_path / "c", {
        "parse/bare.jsonl": [good("p1", expect={"calls": ["click"]}), good("p2"), good("p3", tags=["t", "u"])],
        "repair/seeds.jsonl": [good("r1", "repair"), good("r2", "repair", expect={"status": "repaired"})],
    })
    code = cli.main(["--config", config_for(root), "corpus", "stats"])
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0
    assert ["parse/bare", "3"] in lines and ["repair/seeds", "2"] in lines
    assert ["parse:calls", "1"] in lines and ["parse:no-calls", "2"] in lines
    assert ["repair:valid", "1"] in lines and ["repair:repaired", "1"] in lines
    assert ["t", "5"] in lines and ["u", "1"] in lines
    assert lines[-1] == ["total", "5"]


def test_stats_exits_1_and_says_so_when_the_corpus_has_problems(tmp_path, config_for, capsys):
    root = make_corpus(tmp_path / "c", {"a.jsonl": [good("one"), "{oops"]})
    code = cli.main(["--config", config_for(root), "corpus", "stats"])
    out = capsys.readouterr().out
    assert code == 1
    assert "1 corpus problems" in out
    assert out.strip().splitlines()[-1] == "total 1"


def test_a_typo_in_an_entrys_args_is_one_line_naming_the_key_not_two_per_case(tmp_path, capsys):
    """`args = ["input", "alowed"]` against the bundled corpus: every parse line lacks `alowed`
    and carries `allowed`, which once made two lines per case (168 for 84 cases)."""
    parse = bundled_table()["entries"]["parse"]
    config = write_config(tmp_path / "pyproject.toml", corpus=[str(ROOT / "fixtures")], known_deviations=None,
                          **{"entries.parse": {**parse, "args": ["input", "alowed"]}})
    assert cli.main(["--config", str(config), "corpus", "lint"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    lines = sum(1 for path in (ROOT / "fixtures").rglob("*.jsonl") for line in path.read_text().splitlines()
                if '"fn": "parse"' in line)
    assert out[0] == (f"[tool.extparity.entries.parse].args: 'alowed' is in no line of parse ({lines} lines); they "
                      f"carry 'allowed', which args does not name: a typo in args?"), out[:3]
    assert len(out) == 2 and out[1].endswith("1 problem"), out[:4]


def test_an_argument_some_lines_carry_is_still_reported_line_by_line(tmp_path):
    root = make_corpus(tmp_path / "c", {"parse/a.jsonl": [good("one"), good("two", allowed=..., alowed=["x"])]})
    problems = [str(problem) for problem in load_corpus([root], tmp_path).problems]
    assert problems == ["c/parse/a.jsonl:2: field 'alowed': unknown field for parse (its arguments are input, allowed)",
                        "c/parse/a.jsonl:2: field 'allowed': required: argument of parse"], problems
