"""`[tool.extparity]` against its JSON Schema: every shipped config loads, a typo or a wrong
type anywhere is one line naming the key (exit 2), the first problem in the file is the one
named, the schema agrees with the code's defaults and names, and docs/configuration.md is the
page the schema writes.
"""

from __future__ import annotations

import copy
import importlib.util
import subprocess
import tomllib
import sys
from pathlib import Path

import jsonschema
import pytest

from extparity.project import schema
from extparity.project.config import FuzzBudget, GateConfig, load_project
from extparity.project.environments import DEFAULT as DEFAULT_ENVIRONMENTS
from extparity.project.kinds import KINDS, engine_class

from support import ROOT
from support import bundled_table as checkout_table
from support.cli import call_cli
from support.config_files import write_pyproject

CONFIGS = [ROOT / "pyproject.toml", *sorted((ROOT / "tests" / "extensions").glob("*/pyproject.toml"))]


def bundled_table() -> dict:
    table = checkout_table()
    table["trees"] = {name: str(ROOT / rel) for name, rel in table["trees"].items()}
    return table


def config_error(path: Path) -> tuple[int, str]:
    code, _, err = call_cli("--config", str(path), "corpus", "lint")
    return code, err


def make_docs_module():
    spec = importlib.util.spec_from_file_location("make_configuration", ROOT / "docs" / "make_configuration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(schema.schema())


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_shipped_config_validates_and_loads(config):
    table = tomllib.loads(config.read_text(encoding="utf-8"))["tool"]["extparity"]
    assert list(jsonschema.Draft202012Validator(schema.schema()).iter_errors({"tool": {"extparity": table}})) == []
    assert load_project(config).entries


SET = "set"  # a change: (SET, path, value) sets the value at path; (DROP, path) deletes it
DROP = "drop"


def changed(table: dict, change: tuple) -> dict:
    table = copy.deepcopy(table)
    *path, last = change[1]
    where = table
    for key in path:
        where = where[key]
    if change[0] == SET:
        where[last] = change[2]
    else:
        del where[last]
    return table


@pytest.mark.parametrize(("change", "line"), [
    ((SET, ("colour",), "red"), "[tool.extparity]: unknown key 'colour' (known keys: corpus, coverage, engines, "
                                "entries, fuzz, gate, known_deviations, per_browser, reference, trees)"),
    ((SET, ("modules",), []), "[tool.extparity]: unknown key 'modules' (modules are now found from the entries' "
                              "imports; list extra files under [tool.extparity.gate])"),
    ((DROP, ("corpus",)), "[tool.extparity]: missing key 'corpus' (a list of paths, relative to the pyproject.toml)"),
    ((SET, ("corpus",), "fixtures"), "[tool.extparity].corpus: expected a list of paths, relative to the "
                                     "pyproject.toml, got \"fixtures\""),
    ((SET, ("known_deviations",), ""), "[tool.extparity].known_deviations: expected a path, relative to the "
                                       "pyproject.toml, got \"\""),
    ((SET, ("trees",), "extension"), "[tool.extparity].trees: expected a table, each value a path, relative to the "
                                     "pyproject.toml, got \"extension\""),
    ((SET, ("trees", "-chrome"), "extension/chrome"),
     "[tool.extparity.trees]: '-chrome' is not a name of letters, digits, '.', '_' and '-' that starts with a "
     "letter or digit"),
    ((SET, ("entries",), {}), "[tool.extparity.entries]: expected a table of at least one entry, got an empty table"),
    ((DROP, ("entries", "parse", "export")), "[tool.extparity.entries.parse]: missing key 'export' (a non-empty string)"),
    ((SET, ("entries", "parse", "args"), ["input", "why"]),
     "[tool.extparity.entries.parse].args: 'why' is a corpus field of its own, not an argument"),
    ((SET, ("entries", "parse", "expect", "item"), {}),
     "[tool.extparity.entries.parse].expect: unknown key 'item' (known keys: items, keys)"),
    ((SET, ("entries", "parse", "executes"), ["calls"]),
     "[tool.extparity.entries.parse].executes: expected a non-empty string, got a list of 1 item"),
    ((SET, ("engines",), {}), "[tool.extparity.engines]: expected a table of at least one engine (or no "
                              "[tool.extparity.engines] table, for the default engines), got an empty table"),
    ((SET, ("engines", "chromium", "kind"), "chrome"),
     "[tool.extparity.engines.chromium].kind: expected a built-in kind (python, quickjs, v8, spidermonkey, chromium, "
     "firefox) or a kind of your own as \"package.module:Class\", got \"chrome\""),
    ((SET, ("engines", "chromium", "prefs"), {}),
     "[tool.extparity.engines.chromium]: unknown option 'prefs' for kind chromium (it takes args, chunk_size, "
     "endpoint, executable, key, sender, startup_timeout_s, tree, via)"),
    ((SET, ("engines", "python", "tree"), "chrome"),
     "[tool.extparity.engines.python]: unknown option 'tree' for kind python (it takes functions, path, python)"),
    ((DROP, ("engines", "v8-chrome", "tree")),
     "[tool.extparity.engines.v8-chrome]: missing key 'tree' (the name of a tree in [tool.extparity.trees])"),
    ((SET, ("engines", "quickjs-chrome", "memory_limit"), "512M"),
     "[tool.extparity.engines.quickjs-chrome].memory_limit: expected a whole number of at least 1, got \"512M\""),
    ((SET, ("engines", "chromium", "chunk_size"), 1.5),
     "[tool.extparity.engines.chromium].chunk_size: expected a whole number of at least 1, got 1.5"),
    ((SET, ("engines", "firefox", "via"), "messages"),
     "[tool.extparity.engines.firefox].via: expected one of \"module\", \"message\", got \"messages\""),
    ((SET, ("engines", "firefox", "sender"), "content"),
     "[tool.extparity.engines.firefox]: missing key 'via' (\"message\", since sender = \"content\" sends runtime "
     "messages)"),
    ((SET, ("engines", "python", "functions", "parse"), "toolcalls.parse_tool_calls_canonical"),
     "[tool.extparity.engines.python].functions.parse: expected a \"module:function\" name, "
     "got \"toolcalls.parse_tool_calls_canonical\""),
    ((SET, ("fuzz", "weights", "caps"), 0), "[tool.extparity.fuzz].weights.caps: expected a positive number, got 0"),
    ((SET, ("fuzz", "generators", "parse"), []),
     "[tool.extparity.fuzz].generators.parse: expected a non-empty list of non-empty strings, got an empty list"),
    ((SET, ("coverage", "reference"), ["tool-calls"]),
     "[tool.extparity.coverage].reference[0]: expected a package or module name, as the reference imports it, "
     "got \"tool-calls\""),
    ((SET, ("gate", "release", "version"), "0.2.0"),
     "[tool.extparity.gate].release: unknown key 'version' (known keys: changelog, package_json)"),
    ((SET, ("gate", "reference_branch_floor"), 101),
     "[tool.extparity.gate].reference_branch_floor: expected a percentage from 0 to 100, got 101"),
    ((SET, ("gate", "block_coverage_floor"), True),
     "[tool.extparity.gate].block_coverage_floor: expected a percentage from 0 to 100, got true"),
    ((SET, ("gate", "surfaces"), [{"surface": "onMessage", "reason": "r"}]),
     "[tool.extparity.gate].surfaces[0].surface: expected one of \"externally_connectable\", \"onMessageExternal\", "
     "\"onConnectExternal\", \"content_scripts\", got \"onMessage\""),
    ((SET, ("gate", "imports"), [{"export": "x", "script": "a.js", "reason": "  "}]),
     "[tool.extparity.gate].imports[0].reason: expected a string that is not blank, got \"  \""),
    ((SET, ("gate", "unreachable"), [{"module": "a.js", "lines": "12-14", "reason": "r"}]),
     "[tool.extparity.gate]: unknown key 'unreachable' (coverage exemptions are marker comments beside the code "
     "now: `// extparity-unreachable: REASON` in the verified module (docs/gate.md, \"coverage\"))"),
    ((SET, ("gate", "environments"), [{"name": "x", "locale": "german"}]),
     "[tool.extparity.gate].environments[0].locale: expected a BCP 47 locale (e.g. \"de-DE\") or \"shipped\", "
     "got \"german\""),
    ((SET, ("gate", "environments"), [{"name": "x", "locale": "de"}, {"name": "x", "locale": "fr"}]),
     "[tool.extparity.gate].environments[1].name: 'x' is declared twice"),
    ((SET, ("gate", "fuzz", "seed"), -1), "[tool.extparity.gate].fuzz.seed: expected a whole number of at least 0, got -1"),
    ((SET, ("gate", "minimum_cases", "parse"), 500.0),
     "[tool.extparity.gate].minimum_cases.parse: expected a whole number of at least 1, got 500.0"),
    ((SET, ("gate", "messages", "parsing"), "adapters/messages/parse.js"),
     "[tool.extparity.gate].messages: no entry named 'parsing' (entries: parse, repair)"),
    ((SET, ("reference",), "pyhton"), "[tool.extparity].reference: 'pyhton' is not a configured engine"),
    ((SET, ("engines", "quickjs-chrome", "tree"), "chromium"),
     "[tool.extparity.engines.quickjs-chrome].tree: no tree named 'chromium' in [tool.extparity.trees]"),
], ids=lambda value: "/".join(map(str, value[1])) if isinstance(value, tuple) else None)
def test_a_typo_or_a_wrong_type_anywhere_exits_2_with_one_line_naming_the_key(tmp_path, change, line):
    config = write_pyproject(tmp_path / "pyproject.toml", changed(bundled_table(), change))
    code, err = config_error(config)
    assert code == 2
    assert err.startswith(f"extparity: {config}: {line}") and err.count("\n") == 1, err


def test_of_several_problems_the_first_in_the_file_is_named(tmp_path):
    table = bundled_table()
    table["gate"]["fuzz"] = {"cases": -1}
    table["gate"]["block_coverage_floor"] = 101  # after fuzz in the file
    table["fuzz"]["weights"]["caps"] = -1  # [tool.extparity.fuzz] comes before [tool.extparity.gate]
    code, err = config_error(write_pyproject(tmp_path / "pyproject.toml", table))
    assert code == 2 and "[tool.extparity.fuzz].weights.caps: expected a positive number, got -1" in err, err
    del table["fuzz"]
    code, err = config_error(write_pyproject(tmp_path / "pyproject.toml", table))
    assert code == 2 and "[tool.extparity.gate].fuzz.cases: expected a whole number of at least 0, got -1" in err, err


def test_a_tables_unknown_key_comes_before_its_missing_key_and_its_values(tmp_path):
    table = bundled_table()
    table["gate"]["web_ext"] = {"allow": 3, "colour": 1}  # missing command, an unknown key, a wrong type
    code, err = config_error(write_pyproject(tmp_path / "pyproject.toml", table))
    assert code == 2 and "[tool.extparity.gate].web_ext: unknown key 'colour' (known keys: allow, command)" in err, err


def test_a_file_that_is_not_toml_names_the_file_and_line_from_the_command_line(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.extparity]\ncorpus = ["fixtures"]\ntrees = { chrome = }\n', encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "extparity.cli", "--config", str(config), "corpus", "lint"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"extparity: {config}: not valid TOML: ") and "line 3" in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


def test_the_schema_states_the_defaults_and_names_the_code_uses():
    gate = schema.resolve(schema.table_schema()["properties"]["gate"])["properties"]
    fuzz = schema.resolve(gate["fuzz"])["properties"]
    assert {key: fuzz[key]["default"] for key in fuzz} == {"seed": FuzzBudget.seed, "cases": FuzzBudget.cases}
    defaults = GateConfig()
    assert gate["dist"]["default"] == defaults.dist.as_posix()
    assert gate["reference_branch_floor"]["default"] == defaults.reference_branch_floor
    assert gate["block_coverage_floor"]["default"] == defaults.block_coverage_floor
    assert [{"name": e.name, **e.settings()} for e in DEFAULT_ENVIRONMENTS] == gate["environments"]["default"]
    kind = schema.schema()["$defs"]["kind"]["anyOf"][0]["enum"]
    assert kind == list(KINDS) == list(schema.schema()["$defs"]["kinds"])


def test_a_built_in_kinds_options_in_the_schema_are_the_ones_its_class_declares():
    """The schema states the built-in kinds' options for users and validates them; the class is
    where the engine reads them. The two must name the same options."""
    for name in KINDS:
        assert set(schema.kind_options(name)) == set(engine_class(name).OPTIONS), name


def test_the_configuration_page_is_the_one_the_schema_writes():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == make_docs_module().render(), "docs/configuration.md is stale: run python docs/make_configuration.py"


def test_a_schema_edit_without_a_new_page_fails_the_page_test(monkeypatch):
    edited = copy.deepcopy(schema.schema())
    edited["$defs"]["gate"]["properties"]["dist"]["description"] += " Edited."
    monkeypatch.setattr(schema, "schema", lambda: edited)
    docs = make_docs_module()
    monkeypatch.setattr(docs, "schema", lambda: edited)
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert docs.render() != page and "nothing else. Edited." in docs.render()
