"""The JSON Schema of ``[tool.extparity]`` (config.schema.json beside this module), and its
errors as one line each.

Why a schema: one file states every key, its type, bounds and meaning, and three readers share
it. ``load_project`` validates the table against it before it builds anything, so config.py keeps
only the checks a schema cannot state (a name that must match another part of the config, a
folder that must exist, an import that must succeed); editors validate and complete a
pyproject.toml with it; and docs/configuration.md is generated from it, so the reference cannot
drift from what is enforced.

Why our own messages: jsonschema's speak of JSON paths and Python reprs ("-1 is less than the
minimum of 0"). A user wrote TOML, so each error names the key as TOML does
(``[tool.extparity.gate].fuzz.cases``) and what was expected, in the words docs/configuration.md
shows for that key: the schema node's ``title`` where it has one, else its type and bounds. Keys
are quoted as Python does ('colour'), values as TOML writes them ("module", 0, true).

When several problems apply, the one named is the first in the file (keys in document order); a
table's own problems come before those of the values it holds, the most basic first: its type,
then an unknown key (a misspelt key explains a missing one), then a missing key.
The validator is built on first use, so commands that never load a config (``--help``) do not
import jsonschema.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import ConfigError

SCHEMA_FILE = Path(__file__).with_name("config.schema.json")
# Tables written as [tool.extparity.KEY] (depth 1) or [tool.extparity.KEY.NAME] (depth 2): a key
# inside them is named after the table header, as a user finds it in the file.
SECTIONS = {"trees": 1, "fuzz": 1, "coverage": 1, "gate": 1, "entries": 2, "engines": 2}
RANK = {"type": 0, "additionalProperties": 1, "required": 2}  # at one place, the most basic problem first
BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
PLURAL = re.compile(r"an? ((?:[\w-]+ )*?)(string|table|number|whole number)\b(.*)")


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def table_schema() -> dict[str, Any]:
    """The node of the ``[tool.extparity]`` table itself (the file describes a whole pyproject.toml)."""
    return schema()["$defs"]["extparity"]


def kind_options(kind: str) -> tuple[str, ...]:
    """The options a built-in kind takes, as its schema lists them (``kind`` and ``tree`` aside)."""
    return tuple(key for key in schema()["$defs"]["kinds"][kind]["properties"] if key not in ("kind", "tree"))


def resolve(node: Any) -> dict[str, Any]:
    """A node with its local ``$ref`` followed; the node's own keywords (a title, a description)
    override the target's."""
    if not isinstance(node, dict):
        return {}
    if "$ref" not in node:
        return node
    target: Any = schema()
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    own = {key: value for key, value in node.items() if key != "$ref"}
    return {**resolve(target), **own}


def literal(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def shown(value: Any) -> str:
    """What the user wrote, as an error shows it: a value, or the kind of a container."""
    if isinstance(value, dict):
        return f"a table of {len(value)} key{'s' * (len(value) != 1)}" if value else "an empty table"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' * (len(value) != 1)}" if value else "an empty list"
    if isinstance(value, (datetime.date, datetime.time)):
        return "a date-time"
    return literal(value)


PYTHON_TYPES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false", list: "a list",
                dict: "a table"}


def python_type(kind: type) -> str:
    """A Python type in the words of ``expected`` (a kind of one's own declares its options' types)."""
    return PYTHON_TYPES.get(kind, kind.__name__)


def expected(node: Any) -> str:
    """What a schema node accepts, in words: its title, or its type and bounds."""
    node = resolve(node)
    if "title" in node:
        return node["title"]
    if "const" in node:
        return literal(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(map(literal, node["enum"]))
    kind = node.get("type")
    if isinstance(kind, list):
        words = [expected({**node, "type": one}) for one in kind]
        return ", ".join(words[:-1]) + " or " + words[-1]
    if kind == "string":
        return "a non-empty string" if node.get("minLength") else "a string"
    if kind == "integer":
        return "a whole number" + (f" of at least {node['minimum']}" if "minimum" in node else "")
    if kind == "number":
        if node.get("exclusiveMinimum") == 0:
            return "a positive number"
        return "a number" + (f" of at least {node['minimum']}" if "minimum" in node else "")
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        each = expected(node.get("items", {}))
        plural = PLURAL.fullmatch(each)
        listed = "a non-empty list" if node.get("minItems") else "a list"
        return f"{listed} of {plural[1]}{plural[2]}s{plural[3]}" if plural else f"{listed}, each {each}"
    if kind == "object":
        values = node.get("additionalProperties")
        return f"a table, each value {expected(values)}" if isinstance(values, dict) else "a table"
    return "a value"


def toml_key(key: str) -> str:
    return key if BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def where(path: Iterable[str | int], table: Mapping[str, Any]) -> str:
    """A key as TOML names it: ``[tool.extparity.gate].purity[0].reason``. The header takes the
    section's keys (``[tool.extparity.engines.NAME]``), never a last key whose value is not a table."""
    path = list(path)
    value: Any = table
    head = 0
    for key in path[:SECTIONS.get(str(path[0]), 0) if path else 0]:
        value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, dict):
            break
        head += 1
    rest = "".join(f"[{key}]" if isinstance(key, int) else f".{toml_key(key)}" for key in path[head:])
    return "[" + ".".join(["tool", "extparity", *(toml_key(str(key)) for key in path[:head])]) + "]" + rest


@cache
def _validator():
    from jsonschema import Draft202012Validator, validators

    # TOML keeps integers and floats apart: 1.0 is not a case count. NaN compares false with
    # every bound, so it would pass them all.
    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        "integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda _, value: (isinstance(value, (int, float)) and not isinstance(value, bool)
                                    and not (isinstance(value, float) and math.isnan(value))),
    })
    return validators.extend(Draft202012Validator, type_checker=checker)(schema())


def check(table: Mapping[str, Any], hints: Mapping[str, str] | None = None) -> None:
    """Raise ConfigError with one line for the first problem the schema finds in ``table``;
    ``hints`` explain unknown keys that were once known (key -> where it went)."""
    errors = list(_validator().iter_errors({"tool": {"extparity": table}}))
    if errors:
        first = min(errors, key=lambda error: _position(error, table))
        raise ConfigError(_message(first, table, hints or {}))


def _path(error) -> list[str | int]:
    return list(error.absolute_path)[2:]  # below tool.extparity


def _unknown(error) -> str:
    """The first key of the table that the failing ``additionalProperties: false`` does not allow."""
    allowed = error.schema.get("properties", {})
    return next(key for key in error.instance if key not in allowed)


def _repeated(items: list) -> int:
    """The index of the first item equal to an earlier one."""
    return next(j for j in range(len(items)) if items[j] in items[:j])


def _position(error, table: Mapping[str, Any]) -> tuple:
    """Where the problem is, as positions in document order, and how basic it is."""
    path = _path(error)
    if error.validator == "uniqueItems":
        path.append(_repeated(error.instance))
    elif "propertyNames" in error.relative_schema_path:
        path.append(error.instance)
    positions = []
    value: Any = table
    for key in path:
        if isinstance(value, dict):
            keys = list(value)
            positions.append(keys.index(key) if key in value else len(keys))
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int):
            positions.append(key)
            value = value[key]
    return tuple(positions), RANK.get(error.validator, len(RANK))


def _message(error, table: Mapping[str, Any], hints: Mapping[str, str]) -> str:
    path = _path(error)
    node = error.schema
    if error.validator == "type":
        problem = f"expected {expected(node)}, got {shown(error.instance)}"
    elif error.validator == "additionalProperties":
        key = _unknown(error)
        known = sorted(node.get("properties", {}))
        if key in hints:
            problem = f"unknown key {key!r} ({hints[key]})"
        elif "kind" in known:  # an engine: what it takes depends on its kind
            options = [option for option in known if option != "kind"]
            problem = f"unknown option {key!r} for kind {error.instance['kind']} (it takes {', '.join(options)})"
        else:
            problem = f"unknown key {key!r} (known keys: {', '.join(known)})"
    elif error.validator == "required":
        key = next(key for key in error.validator_value if key not in error.instance)
        problem = f"missing key {key!r} ({expected(node.get('properties', {}).get(key, {}))})"
    elif error.validator == "uniqueItems":
        path.append(_repeated(error.instance))
        problem = "declared twice"
    elif "propertyNames" in error.relative_schema_path:
        problem = f"{error.instance!r} is not {expected(node)}"
    else:
        problem = f"expected {expected(node)}, got {shown(error.instance)}"
    return f"{where(path, table)}: {problem}"
