// repairArguments: close truncated tool-call argument JSON without inventing a value (SPEC.md 6).
//
// Twin of py_src/toolcalls/repair.py, kept line for line. A repair may only delete a trailing
// comma before a closer, delete excess closers at the very end, and append the closers still
// open, innermost first. Anything that would need a guess fails closed: truncation inside a
// string, or right after a comma, colon, key or opener. The repaired text must then pass the
// same strict reader and policies as the parser.

import { JsonReject, MAX_DEPTH, SPACE, QUOTE, BACKSLASH, LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, COLON, canonical, isJsonWs, isObject, parseStrict, skipWsBack } from "./json-core.js";

export const MAX_RAW_UNITS = 100000;
// More trailing commas than this is not a cut-off answer but a broken one, and each deletion is an
// action in the verdict: the bound keeps a verdict within a few times the size of its input.
export const MAX_COMMA_DELETIONS = 64;

function closerFor(opener) {
  return opener === LBRACE ? "}" : "]";
}

class RepairRejected {
  constructor(reason) {
    this.reason = reason;
  }
}

function rejected(reason) {
  return { actions: [], arguments: null, reason, status: "rejected" };
}

// True when u[i:] holds only closers and JSON whitespace.
function tailIsClosers(u, i) {
  for (let k = i; k < u.length; k += 1) {
    const c = u.charCodeAt(k);
    if (!(c === RBRACE || c === RBRACKET || isJsonWs(c))) return false;
  }
  return true;
}

// One string-aware pass; returns the actions that make u complete, or throws RepairRejected.
// `last` is the previous significant token: "open", "comma", "colon", "key" or "value".
function planRepair(u) {
  const stack = [];
  const actions = [];
  let last = null;
  let commaAt = -1;
  let commaAfterValue = false;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < u.length; i += 1) {
    const c = u.charCodeAt(i);
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c === BACKSLASH) {
        escaped = true;
      } else if (c === QUOTE) {
        inString = false;
        const inKeyPosition = stack.length > 0 && stack[stack.length - 1] === LBRACE && (last === "open" || last === "comma");
        last = inKeyPosition ? "key" : "value";
      }
      continue;
    }
    if (c <= SPACE && isJsonWs(c)) continue; // all JSON whitespace is at or below SPACE: most units need no call
    if (c === QUOTE) {
      inString = true;
    } else if (c === LBRACE || c === LBRACKET) {
      if (stack.length >= MAX_DEPTH) throw new RepairRejected("too-deep");
      stack.push(c);
      last = "open";
    } else if (c === RBRACE || c === RBRACKET) {
      if (stack.length === 0) {
        if (!tailIsClosers(u, i)) throw new RepairRejected("excess-closer");
        const tailEnd = skipWsBack(u, i, u.length);
        actions.push({ at: i, op: "delete", text: u.slice(i, tailEnd) });
        break;
      }
      if (u[i] !== closerFor(stack[stack.length - 1])) throw new RepairRejected("mismatched-closer");
      if (last === "comma" && commaAfterValue) {
        if (actions.length === MAX_COMMA_DELETIONS) throw new RepairRejected("too-many-commas"); // (so far every action is a comma deletion)
        actions.push({ at: commaAt, op: "delete", text: "," });
      }
      stack.pop();
      last = "value";
    } else if (c === COMMA) {
      commaAfterValue = last === "value";
      commaAt = i;
      last = "comma";
    } else if (c === COLON) {
      last = "colon";
    } else {
      last = "value";
      // The units of a number that follow change nothing (none is whitespace, a quote, a bracket
      // or a separator): step over them here rather than one turn of the loop each.
      for (; i + 1 < u.length; i += 1) {
        const d = u.charCodeAt(i + 1);
        if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
      }
    }
  }
  if (inString) throw new RepairRejected("truncated-in-string");
  if (stack.length > 0) {
    if (last === "comma" || last === "colon" || last === "key" || last === "open") throw new RepairRejected("truncated-after-" + last);
    const closers = stack.slice().reverse().map(closerFor).join("");
    actions.push({ at: u.length, op: "append", text: closers });
  }
  return actions;
}

// Actions come in document order; a delete removes text.length units at `at`.
function applyActions(u, actions) {
  const kept = [];
  let i = 0;
  for (const action of actions) {
    kept.push(u.slice(i, action.at));
    i = action.at + (action.op === "delete" ? action.text.length : 0);
  }
  kept.push(u.slice(i));
  return kept.join("") + actions.filter((action) => action.op === "append").map((action) => action.text).join("");
}

function repairChecked(raw) {
  if (typeof raw !== "string") return rejected("not-a-string");
  if (raw.length > MAX_RAW_UNITS) return rejected("too-long");
  let actions;
  try {
    actions = planRepair(raw);
  } catch (error) {
    if (error instanceof RepairRejected) return rejected(error.reason);
    // extparity-unreachable: defensive: rethrows what is not a refusal, which only a defect in the
    // planner throws
    throw error;
  }
  const text = applyActions(raw, actions);
  const value = parseStrict(text, 0, text.length);
  if (value instanceof JsonReject) return rejected(value.reason);
  if (!isObject(value)) return rejected("not-an-object");
  return { actions, arguments: value, reason: null, status: actions.length > 0 ? "repaired" : "valid" };
}

// The repair verdict for `raw`. Never throws: a defect inside the repair becomes the rejection
// reason "internal-error" rather than an exception in the caller.
export function repairArguments(raw) {
  try {
    return repairChecked(raw);
  } catch (error) { // extparity-unreachable: defensive: no input reaches it while the code is right
    return rejected("internal-error");
  }
}

// The same verdict as RFC 8785 canonical JSON text: the form every engine is compared in.
export function repairArgumentsCanonical(raw) {
  return canonical(repairArguments(raw));
}
