"""Every JSON result a test produces is checked against the schema docs/reports.md documents."""

from __future__ import annotations

import json

import jsonschema

from extparity.results.read import SCHEMA_FILE

VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def check_result(document: dict) -> dict:
    """``document`` itself when it matches result.schema.json; an AssertionError naming the
    first wrong path otherwise."""
    error = jsonschema.exceptions.best_match(VALIDATOR.iter_errors(document))
    assert error is None, f"result does not match result.schema.json at {'/'.join(map(str, error.absolute_path))}: {error.message}"
    return document
