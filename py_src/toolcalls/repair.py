"""repair_arguments: close truncated tool-call argument JSON without inventing a value (SPEC.md 6).

A repair may only delete a trailing comma before a closer, delete excess closers at the very
end, and append the closers still open, innermost first. Anything that would need a guess
fails closed: truncation inside a string, or right after a comma, colon, key or opener.
The repaired text must then pass the same strict reader and policies as the parser.
"""

import re

from . import json_core as jc
from .json_core import JsonReject

MAX_RAW_UNITS = 100_000
CLOSER_FOR = {jc.LBRACE: "}", jc.LBRACKET: "]"}


class RepairRejected(Exception):
    def __init__(self, reason):
        self.reason = reason


def rejected(reason):
    return {"actions": [], "arguments": None, "reason": reason, "status": "rejected"}


def tail_is_closers(u, i):
    """True when u[i:] holds only closers and JSON whitespace."""
    for k in range(i, len(u)):
        c = ord(u[k])
        if not (c == jc.RBRACE or c == jc.RBRACKET or jc.is_json_ws(c)):
            return False
    return True


# Runs the planning pass jumps over at C speed (classes only): plain units inside a string,
# whitespace, units that make up a value (digits, letters, junk), and a list of values. The JS
# twin steps unit by unit; the decisions are the same.
_STRING_PLAIN = re.compile(r'[^"\\]+')
_VALUE_RUN = re.compile(r'[^"{}\[\],: \t\n\r]+')
# After a value inside an array or an object: every following ", item" (", key: item" in an
# object) whose item is a run of value units, a string without a backslash, or a flat container:
# an array of such scalars, or an object whose members are such string keys with such scalars.
# Stepping through one leaves the state as it was: last is "value" again, the stack is unchanged,
# no action is added (comma_at and comma_after_value change, but they are read only while last is
# "comma"): a flat container is closed by its own closer, with no comma before it. It is pushed
# for a moment, so this needs the stack below MAX_DEPTH. In an object a string after a comma is a
# key, so there the key and its colon must come too. Possessive quantifiers (*+, ++): nothing to
# give back, and no backtracking records kept for the regex engine.
_WS = r"[ \t\n\r]*+"
_STRING = r'"[^"\\]*+"'
_SCALAR = rf'(?:[^"{{}}\[\],: \t\n\r]++|{_STRING})'
_FLAT_ARRAY = rf"\[{_WS}(?:{_SCALAR}(?:{_WS},{_WS}{_SCALAR})*+{_WS})?+\]"
_MEMBER = rf"{_STRING}{_WS}:{_WS}{_SCALAR}"
_FLAT_OBJECT = rf"\{{{_WS}(?:{_MEMBER}(?:{_WS},{_WS}{_MEMBER})*+{_WS})?+\}}"
_ITEM = rf"(?:{_SCALAR}|{_FLAT_ARRAY}|{_FLAT_OBJECT})"
_MORE_ITEMS = re.compile(rf"(?:{_WS},{_WS}{_ITEM})*+")
_MORE_MEMBERS = re.compile(rf"(?:{_WS},{_WS}{_STRING}{_WS}:{_WS}{_ITEM})*+")


def after_value(u, i, stack):
    """Index past the action-free items or members that follow a value that ends at u[i]."""
    if not stack or len(stack) >= jc.MAX_DEPTH:
        return i
    more = _MORE_ITEMS if stack[-1] == jc.LBRACKET else _MORE_MEMBERS
    return more.match(u, i).end()


def plan_repair(u):
    """One string-aware pass; returns the actions that make u complete, or raises RepairRejected.

    `last` is the previous significant token: "open", "comma", "colon", "key" or "value".
    """
    stack = []
    actions = []
    last = None
    comma_at = -1
    comma_after_value = False
    in_string = False
    i, n = 0, len(u)
    while i < n:
        c = ord(u[i])
        if in_string:
            if c == jc.BACKSLASH:
                i += 2  # the escaped unit is data
            elif c == jc.QUOTE:
                in_string = False
                in_key_position = stack and stack[-1] == jc.LBRACE and last in ("open", "comma")
                last = "key" if in_key_position else "value"
                i = i + 1 if in_key_position else after_value(u, i + 1, stack)
            else:
                i = _STRING_PLAIN.match(u, i).end()
            continue
        if jc.is_json_ws(c):
            i = jc.skip_ws(u, i, n)
            continue
        if c == jc.QUOTE:
            in_string = True
        elif c == jc.LBRACE or c == jc.LBRACKET:
            if len(stack) >= jc.MAX_DEPTH:
                raise RepairRejected("too-deep")
            stack.append(c)
            last = "open"
        elif c == jc.RBRACE or c == jc.RBRACKET:
            if not stack:
                if not tail_is_closers(u, i):
                    raise RepairRejected("excess-closer")
                tail_end = jc.skip_ws_back(u, i, len(u))
                actions.append({"at": i, "op": "delete", "text": u[i:tail_end]})
                break
            if u[i] != CLOSER_FOR[stack[-1]]:
                raise RepairRejected("mismatched-closer")
            if last == "comma" and comma_after_value:
                actions.append({"at": comma_at, "op": "delete", "text": ","})
            stack.pop()
            last = "value"
            i = after_value(u, i + 1, stack)
            continue
        elif c == jc.COMMA:
            comma_after_value = last == "value"
            comma_at = i
            last = "comma"
        elif c == jc.COLON:
            last = "colon"
        else:
            last = "value"
            i = after_value(u, _VALUE_RUN.match(u, i).end(), stack)
            continue
        i += 1
    if in_string:
        raise RepairRejected("truncated-in-string")
    if stack:
        if last in ("comma", "colon", "key", "open"):
            raise RepairRejected("truncated-after-" + last)
        closers = "".join(CLOSER_FOR[opener] for opener in reversed(stack))
        actions.append({"at": len(u), "op": "append", "text": closers})
    return actions


def apply_actions(u, actions):
    """Actions come in document order; a delete removes len(text) units at `at`."""
    kept = []
    i = 0
    for action in actions:
        kept.append(u[i : action["at"]])
        i = action["at"] + (len(action["text"]) if action["op"] == "delete" else 0)
    kept.append(u[i:])
    return "".join(kept) + "".join(action["text"] for action in actions if action["op"] == "append")


def repair_units(u):
    """The repair on a unit string; returns a verdict whose strings are unit strings."""
    if len(u) > MAX_RAW_UNITS:
        return rejected("too-long")
    try:
        actions = plan_repair(u)
    except RepairRejected as error:
        return rejected(error.reason)
    text = apply_actions(u, actions)
    value = jc.parse_strict(text, 0, len(text), depth_checked=True)  # the plan refused deeper nesting
    if isinstance(value, JsonReject):
        return rejected(value.reason)
    if not isinstance(value, dict):
        return rejected("not-an-object")
    status = "repaired" if actions else "valid"
    return {"actions": actions, "arguments": value, "reason": None, "status": status}
