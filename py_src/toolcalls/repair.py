"""repair_arguments: close truncated tool-call argument JSON without inventing a value (SPEC.md 6).

A repair may only delete a trailing comma before a closer, delete excess closers at the very
end, and append the closers still open, innermost first. Anything that would need a guess
fails closed: truncation inside a string, or right after a comma, colon, key or opener.
The repaired text must then pass the same strict reader and policies as the parser.
"""

import json
import re

from . import json_core as jc
from . import json_fast as fast
from .json_core import JsonReject

MAX_RAW_UNITS = 100_000
# More trailing commas than this is not a cut-off answer but a broken one, and each deletion is an
# action in the verdict: the bound keeps a verdict within a few times the size of its input.
MAX_COMMA_DELETIONS = 64
CLOSER_FOR = {jc.LBRACE: "}", jc.LBRACKET: "]"}


class RepairRejected(Exception):
    def __init__(self, reason):
        self.reason = reason


def rejected(reason):
    return {"actions": [], "arguments": None, "reason": reason, "status": "rejected"}


_CLOSERS_TAIL = re.compile(r"[\]} \t\n\r]*+")


def tail_is_closers(u, i):
    """True when u[i:] holds only closers and JSON whitespace."""
    return _CLOSERS_TAIL.match(u, i).end() == len(u)


# Runs the planning pass jumps over at C speed (classes only): plain units inside a string,
# whitespace, units that make up a value (digits, letters, junk), and a list of values. The JS
# twin steps unit by unit; the decisions are the same.
_STRING_PLAIN = re.compile(r'[^"\\]+')
_VALUE_RUN = re.compile(r'[^"{}\[\],: \t\n\r]+')
# After a value inside an array or an object: every following ", item" (", key: item" in an
# object) whose item is a run of value units, a string without a backslash, or a container of
# such scalars, or a container of those (two levels). Stepping through one leaves the state as it
# was: last is "value" again, the stack is unchanged, no action is added (comma_at and
# comma_after_value change, but they are read only while last is "comma"): such a container is
# closed by its own closer, with no comma before it. It is pushed for a moment, two levels at
# most, so this needs the stack at most MAX_DEPTH - 2 deep. In an object a string after a comma
# is a key, so there the key and its colon must come too. Possessive quantifiers (*+, ++):
# nothing to give back, and no backtracking records kept for the regex engine.
_WS = fast.JSON_WS_PATTERN
_STRING = r'"[^"\\]*+"'
_SCALAR = rf'(?:[^"{{}}\[\],: \t\n\r]++|{_STRING})'
_ITEM = fast.or_containers_of(fast.or_containers_of(_SCALAR, _STRING), _STRING)
_MORE_ITEMS = re.compile(rf"(?:{_WS},{_WS}{_ITEM})*+")
_MORE_MEMBERS = re.compile(rf"(?:{_WS},{_WS}{_STRING}{_WS}:{_WS}{_ITEM})*+")


def after_value(u, i, stack):
    """Index past the action-free items or members that follow a value that ends at u[i]."""
    if not stack or len(stack) > jc.MAX_DEPTH - 2:
        return i
    more = _MORE_ITEMS if stack[-1] == jc.LBRACKET else _MORE_MEMBERS
    return more.match(u, i).end()


# A bracket or brace that opens a complete JSON value (what the standard library's C reader,
# told to allow control characters, NaN and Infinity, reads there) is jumped over whole: a JSON
# value holds no trailing comma, no excess or mismatched closer and no open string, so stepping
# through it would add no action and leave last as "value", unless it nests too deep, which
# holding at most as many brackets and braces as may still open rules out (one inside a string
# counts too: that only costs a step through). So the try reads the text up to the first opener
# too many, and at most json_fast's window: a value that does not close in it (the ones around a
# truncation, or 100,000 '[', where the C reader went a thousand levels deep each time) costs a
# bounded try and is stepped into.
_STRUCTURE = json.JSONDecoder(strict=False)
# For a text with an integer literal past int()'s digit limit (4,300), which the C reader refuses
# with a ValueError that says nothing of the structure: the same reader, integers kept as text.
_STRUCTURE_OF_LONG_INTEGERS = json.JSONDecoder(strict=False, parse_int=str)
# _OPENERS_THEN_ONE_MORE[k] matches the text up to and including its (k + 1)-th bracket or brace.
_OPENERS_THEN_ONE_MORE = tuple(re.compile(rf"(?:[^\[{{]*+[\[{{]){{{k + 1}}}") for k in range(jc.MAX_DEPTH + 1))


def complete_value_end(u, i, openers):
    """Index after the complete JSON value opening at u[i], if it holds at most `openers`
    brackets and braces and closes within the window; else None."""
    end = min(len(u), i + fast.WINDOW)
    too_many = _OPENERS_THEN_ONE_MORE[openers].match(u, i, end)
    window = u[i : end if too_many is None else too_many.end() - 1]
    try:
        return i + fast.c_scan(_STRUCTURE, window, 0)[1]
    except (StopIteration, ValueError, RecursionError):
        return None


# The plan of a text that is JSON as far as it goes, found at C speed. The C reader reads it, and
# where it stops tells the state the unit-by-unit pass below would end in: after one complete
# value (then only whitespace, or closers to delete, may follow), inside a string it never closed
# (it reports "Unterminated string"), or between tokens (one of _BETWEEN_TOKENS) with at most a
# run of value units after it (a cut literal or number, which that pass counts as a value; the
# strict reader refuses it later). Everything before that point is JSON, so it holds no trailing
# comma and no excess or mismatched closer: the pass would add no action and refuse nothing there
# but too-deep. Its brackets and braces, strings taken out, give the depth (a running sum) and
# the containers still open (remove every "[]" and "{}" until none is left). Anything else (a
# trailing comma, junk, a wrong closer) goes to the unit-by-unit pass.
_BETWEEN_TOKENS = ("Expecting value", "Expecting ',' delimiter", "Expecting ':' delimiter",
                   "Expecting property name enclosed in double quotes")
_VALUE_UNITS = re.compile(r'[^"{}\[\],: \t\n\r]*+')
_LAST_TOKEN = {",": "comma", ":": "colon", "{": "open", "[": "open"}


def plan_of_json_prefix(u):
    """The actions for u when it is JSON as far as it goes; None when it is not, and the
    unit-by-unit pass must decide."""
    n = len(u)
    start = jc.skip_ws(u, 0, n)
    message = None
    for reader in _STRUCTURE, _STRUCTURE_OF_LONG_INTEGERS:
        try:
            end = fast.c_scan(reader, u, start)[1]
        except StopIteration:  # no value starts there
            end, message = start, "Expecting value"
        except json.JSONDecodeError as error:
            end, message = error.pos, error.msg
        except RecursionError:  # deep nesting
            return None
        except ValueError:  # an integer past int()'s digit limit: read again, integers left as text
            continue
        break
    else:
        return None
    complete = message is None
    in_string = not complete and message.startswith("Unterminated string")
    if not complete and not in_string and (message not in _BETWEEN_TOKENS or _VALUE_UNITS.match(u, end).end() != n):
        return None
    plain = fast.blank_escapes(u[:end])
    stack = _open_containers(plain)
    if in_string:
        raise RepairRejected("truncated-in-string")
    if complete:
        tail = jc.skip_ws(u, end, n)
        if tail == n:
            return []
        if not tail_is_closers(u, tail):  # more than closers after the value
            return None
        return [{"at": tail, "op": "delete", "text": u[tail : jc.skip_ws_back(u, tail, n)]}]
    if not stack:
        return []
    last = "value" if end < n else _last_token(plain, stack)
    if last in ("comma", "colon", "key", "open"):
        raise RepairRejected("truncated-after-" + last)
    return [{"at": n, "op": "append", "text": "".join(CLOSER_FOR[ord(c)] for c in reversed(stack))}]


def _open_containers(plain):
    """The openers still open at the end of `plain` (JSON as far as it goes, escapes blanked),
    outermost first; raises too-deep where the unit-by-unit pass would."""
    brackets = fast.brackets_outside_strings(plain)
    if len(brackets) > jc.MAX_DEPTH and fast.nesting(plain) > jc.MAX_DEPTH:
        raise RepairRejected("too-deep")
    while True:
        paired = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(paired) == len(brackets):
            return [chr(c) for c in brackets]
        brackets = paired


def _last_token(plain, stack):
    """The kind of the last significant token in `plain`, as the unit-by-unit pass names it."""
    k = jc.skip_ws_back(plain, 0, len(plain))
    c = plain[k - 1]
    if c != '"':
        return _LAST_TOKEN.get(c, "value")
    opening = plain.rfind('"', 0, k - 1)
    before = jc.skip_ws_back(plain, 0, opening)
    return "key" if stack[-1] == "{" and plain[before - 1 : before] in ("{", ",") else "value"


def plan_repair(u):
    """One string-aware pass; returns the actions that make u complete, or raises RepairRejected.

    `last` is the previous significant token: "open", "comma", "colon", "key" or "value".
    """
    actions = plan_of_json_prefix(u)
    if actions is not None:
        return actions
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
            end = complete_value_end(u, i, jc.MAX_DEPTH - len(stack))
            if end is not None:
                last = "value"
                i = after_value(u, end, stack)
                continue
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
                if len(actions) == MAX_COMMA_DELETIONS:  # (so far every action is a comma deletion)
                    raise RepairRejected("too-many-commas")
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
    # A text that ends in "}" may be complete arguments, and one that ends in "]" a complete
    # array, refused as not an object: one read by the C reader settles either when it passes
    # every check but perhaps unique keys (a complete text has nothing to plan or apply; planning
    # a 9 KB array first, then reading it again, cost five times json.loads + json.dumps of it).
    trimmed = jc.skip_ws_back(u, 0, len(u))
    value = jc.read_accepted(u, trimmed) if u[trimmed - 1 : trimmed] in ("}", "]") else None
    if value is not None:
        actions = []
    else:
        try:
            actions = plan_repair(u)
        except RepairRejected as error:
            return rejected(error.reason)
        text = apply_actions(u, actions)
        value = jc.parse_strict(text, 0, len(text))
    if isinstance(value, JsonReject):
        return rejected(value.reason)
    if not isinstance(value, dict):
        return rejected("not-an-object")
    status = "repaired" if actions else "valid"
    return {"actions": actions, "arguments": value, "reason": None, "status": status}
