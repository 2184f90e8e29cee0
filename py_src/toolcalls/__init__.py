"""Python reference of the tool-call parser and argument repair (see SPEC.md).

The public functions never raise: every input, however hostile, gets a verdict. The canonical
variants return the verdict as RFC 8785 text, the form every engine is compared in.
"""

import functools

from . import json_core as jc
from .parser import error_verdict, parse_units
from .repair import rejected, repair_units

__all__ = [
    "parse_tool_calls",
    "parse_tool_calls_canonical",
    "repair_arguments",
    "repair_arguments_canonical",
]


def _parse_units_verdict(text, allowed):
    try:
        return _parse_checked(text, allowed)
    except Exception:  # a defect must not escape a function documented never to raise
        return error_verdict("internal-error")


def _parse_checked(text, allowed):
    if not isinstance(text, str):
        return error_verdict("text-not-string")
    if not isinstance(allowed, (list, tuple)) or not all(isinstance(name, str) for name in allowed):
        return error_verdict("allowed-not-list")
    return parse_units(jc.to_units(text), [jc.to_units(name) for name in allowed])


def _repair_units_verdict(raw):
    try:
        if not isinstance(raw, str):
            return rejected("not-a-string")
        return repair_units(jc.to_units(raw))
    except Exception:  # a defect must not escape a function documented never to raise
        return rejected("internal-error")


def parse_tool_calls(text, allowed):
    """Calls in `text` whose names are in `allowed`, plus the rejected candidates and why."""
    return jc.to_real(_parse_units_verdict(text, allowed))


def parse_tool_calls_canonical(text, allowed) -> str:
    return jc.from_units(jc.canonical(_parse_units_verdict(text, allowed)))


def repair_arguments(raw):
    """Complete truncated argument JSON when that needs no guess; otherwise reject."""
    return jc.to_real(_repair_units_verdict(raw))


def repair_arguments_canonical(raw) -> str:
    verdict = _repair_units_verdict(raw)
    if verdict["status"] == "rejected":  # a refusal's text depends on its reason alone
        return _refusal_text(verdict["reason"])
    return jc.from_units(jc.canonical(verdict))


@functools.cache
def _refusal_text(reason: str) -> str:
    """The canonical text of a refusal, written once per reason: most broken arguments are
    refused, and writing the same few verdicts again cost a fifth of a short refusal's time."""
    return jc.from_units(jc.canonical(rejected(reason)))
