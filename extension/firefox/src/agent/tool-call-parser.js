// parseToolCalls: which tool calls in raw model text may run (SPEC.md section 5).
//
// Twin of py_src/toolcalls/parser.py, kept pass for pass; the text each pass reads is kept apart
// (class Text), as each language finds its markers fast in its own way: here prose between
// candidates costs an indexOf, never a step per unit. Precision over recall: a call counts
// only when it stands on its own line (a bare JSON object or `call:name{...}` the whole of its
// line, a tag or XML function sharing it with nothing but other tags), and a response runs all
// of its calls or none (SPEC.md 5.12). Reasoning inside <think> never runs. Passes run in a fixed order over a masked copy of the
// text; each pass blanks what it claimed, keeping offsets and line feeds intact.

import { IN_STRING, IN_VALUE, JsonReject, LF, SPACE, TAB, CR, LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, canonical, findIn, hasKey, isObject, isWellFormed, newObject, parseStrict, quotedMask, readValue, scanObjects, skipWs, skipWsBack, startsAt } from "./json-core.js";

export const MAX_TEXT_UNITS = 10000;
// More calls than this in one response refuse the whole response (too-many-calls, SPEC.md 5.12).
export const MAX_CALLS = 16;
// A verdict lists at most this many rejections, the first in verdict order, and counts the rest
// in "rejected_omitted" (SPEC.md 5.1): the verdict stays proportional to the text.
export const MAX_LISTED_REJECTIONS = 64;

const THINK_OPEN = "<think>", THINK_CLOSE = "</think>";
const TAGS = Object.freeze([
  Object.freeze(["<tool_call>", "</tool_call>"]),
  Object.freeze(["<|tool_call|>", "<|/tool_call|>"]),
  Object.freeze(["<functioncall>", "</functioncall>"]),
]);
const FENCE = "```";
const FUNCTION_OPENERS = Object.freeze(["<function=", '<function name="']);
const FUNCTION_CLOSE = "</function>";
// The openers of the explicit pass, each with its closer: the tags, then the XML function element.
const REGION_KINDS = Object.freeze([...TAGS, Object.freeze([FUNCTION_OPENERS[0], FUNCTION_CLOSE]), Object.freeze([FUNCTION_OPENERS[1], FUNCTION_CLOSE])]);
const PARAMETER_OPENERS = Object.freeze(["<parameter=", '<parameter name="']);
const PARAMETER_CLOSE = "</parameter>";
const CALL_PREFIX = "call:";
const FILLER = "#";
// XML values have no escaping (as in Qwen3-Coder's format), so an XML closer ends its element
// wherever it stands: XML closer searches pass this level, which no unit ever reaches.
const XML_CLOSERS_ALWAYS_COUNT = 3;
const PLAIN_KEYS = Object.freeze(["name", "arguments", "parameters", "id"]);
const OPENAI_KEYS = Object.freeze(["type", "function", "id"]);
const OPENAI_FUNCTION_KEYS = Object.freeze(["name", "arguments", "parameters"]);
// Keys that let a JS consumer who merges arguments into an object (assignment, Object.assign)
// reach a prototype: a call whose arguments hold one at any depth is refused (unsafe-key).
const UNSAFE_KEYS = Object.freeze(["__proto__", "constructor", "prototype"]);
// Only a call whose text holds one of these can hold an unsafe key: the key itself, or a \u
// escape that could spell it. The text is searched first (by the engine), the arguments only then.
const UNSAFE_KEY_MARKS = Object.freeze([...UNSAFE_KEYS, "\\u"]);
// Formats of explicit syntax: every refusal in them is a committed call attempt (SPEC.md 5.12).
const EXPLICIT_FORMATS = new Set(["array", "tagged", "tagged-call", "xml"]);
// Refusals that are never attempts: narration, and the consequence of another refusal.
const NOT_ATTEMPTS = new Set(["not-own-line", "sibling-rejected"]);

// A candidate was recognised as a call attempt and refused for `reason`. Validators return it in
// place of a call [name, arguments], as the JSON reader returns a JsonReject: hostile text can
// hold thousands of refused candidates, and a throw for each is slow.
// `attempt` is false for text that has no call's shape (JSON that is not an object with a name,
// or text that breaks JSON's grammar): outside explicit syntax such a refusal is data, not a
// committed attempt.
class Rejected {
  constructor(reason, name = null, attempt = true) {
    this.reason = reason;
    this.name = name;
    this.attempt = attempt;
  }
}

// A Rejected is never changed once made, so the commonest refusal, which names no tool, is one
// shared object (an array can hold thousands of elements that are not calls).
const NOT_A_CALL = Object.freeze(new Rejected("not-a-call", null, false));

function compareSpans(a, b) {
  // extparity-unreachable: defensive: no two rejections share a start, since the pass that claims a
  // candidate blanks its region and no other pass sees it (the corpus and 60,000 generated parse
  // cases never tied, counted in node on an instrumented copy); a comparator must order ties all
  // the same
  return a[0] - b[0] || a[1] - b[1];
}

// Span, then reason: the order of [start, end, reason, ...] rejection records.
function compareRejections(a, b) {
  // extparity-unreachable: defensive: no two rejections share a span, as compareSpans says (never
  // tied in the same count); kept so that the order of equal spans is still defined
  return compareSpans(a, b) || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
}

// Collects accepted calls and rejected candidates while the passes run.
class Verdict {
  constructor(allowed, raw) {
    this.allowed = allowed;
    this.raw = raw;
    this.calls = [];
    this.rejected = []; // [start, end, reason, format, name]
    this.unlisted = 0; // rejections only counted (see beginPass)
    this.filedInPass = 0;
    this.narrating = false; // inside explicit syntax that does not stand on its own line
    this.attemptRefused = false; // a committed call attempt was refused: nothing runs
  }

  // Every pass files its rejections in verdict order (span, then reason), so once a pass has
  // filed MAX_LISTED_REJECTIONS of them, its later ones can never be listed: they are only
  // counted. A flood of refused candidates then costs little more than finding them.
  beginPass() {
    this.filedInPass = 0;
  }

  // Whether a rejection filed now may be listed; if not, only the count of it matters, so a pass
  // may skip working out its reason or name (see beginPass).
  listsMore() {
    return this.filedInPass < MAX_LISTED_REJECTIONS;
  }

  // File `count` rejections that listsMore() says cannot be listed.
  countUnlisted(count) {
    this.unlisted += count;
  }

  // Whether a refusal is of a committed call attempt (SPEC.md 5.12): any refusal in explicit
  // syntax, and one of a candidate with a call's shape elsewhere; never narration or a
  // sibling-rejected consequence.
  isAttempt(reason, fmt, attempt = true) {
    return !this.narrating && !NOT_ATTEMPTS.has(reason) && (attempt || EXPLICIT_FORMATS.has(fmt));
  }

  accept(name, args, fmt, start, end) {
    if (this.narrating) {
      this.reject("not-own-line", fmt, start, end, name);
      return;
    }
    this.calls.push({ name, arguments: args, format: fmt, span: [start, end] });
  }

  // `name` may be a function that works the name out: only listed rejections call it. While
  // narrating, every refusal is filed as not-own-line, its span, format and name kept.
  reject(reason, fmt, start, end, name = null, attempt = true) {
    if (!(this.attemptRefused || this.narrating) && this.isAttempt(reason, fmt, attempt)) this.attemptRefused = true; // (once is enough)
    if (this.narrating) reason = "not-own-line";
    if (!this.listsMore()) {
      this.unlisted += 1;
      return;
    }
    this.filedInPass += 1;
    this.rejected.push([start, end, reason, fmt, name]);
  }

  // File a validator's outcome: a call [name, arguments] or a Rejected.
  file(fmt, start, end, outcome) {
    if (outcome instanceof Rejected) this.reject(outcome.reason, fmt, start, end, outcome.name, outcome.attempt);
    else this.accept(outcome[0], outcome[1], fmt, start, end);
  }

  // The rules for the response as a whole (SPEC.md 5.12), once every pass has run: a call whose
  // arguments hold an unsafe key is refused; then, if a committed attempt was refused, every call
  // is refused as sibling-rejected, or else, past MAX_CALLS calls, as too-many-calls. All or
  // nothing: the calls that may run are every call, or none.
  judgeResponse() {
    if (this.calls.length === 0) return;
    sortCalls(this.calls);
    const calls = [];
    const marks = new UnsafeKeyMarks(this.raw);
    for (const call of this.calls) {
      const start = call.span[0];
      const end = call.span[1];
      if (marks.within(start, end) && holdsUnsafeKey(call.arguments)) this.reject("unsafe-key", call.format, start, end, call.name);
      else calls.push(call);
    }
    let reason;
    if (this.attemptRefused) {
      reason = "sibling-rejected";
    } else if (calls.length > MAX_CALLS) {
      reason = "too-many-calls";
    } else {
      this.calls = calls;
      return;
    }
    this.calls = [];
    for (const call of calls) this.rejected.push([call.span[0], call.span[1], reason, call.format, call.name]);
  }

  result() {
    this.judgeResponse(); // (which sorts the calls)
    this.rejected.sort(compareRejections);
    const listed = this.rejected.slice(0, MAX_LISTED_REJECTIONS).map(([start, end, reason, fmt, name]) => (
      { format: fmt, name: typeof name === "function" ? name() : name, reason, span: [start, end] }));
    return { calls: this.calls, error: null, rejected: listed, rejected_omitted: this.rejected.length - listed.length + this.unlisted };
  }
}

function errorVerdict(code) {
  return { calls: [], error: code, rejected: [], rejected_omitted: 0 };
}

// ---------------------------------------------------------------- call objects

function stringOrNull(value) {
  return typeof value === "string" ? value : null;
}

// True when every key of a parsed object (no prototype, so for...in sees its own keys only) is
// one of `keys`.
function hasOnlyKeys(obj, keys) {
  for (const key in obj) if (!keys.includes(key)) return false;
  return true;
}

// Validate a decoded JSON value as one call; returns [name, arguments] or a Rejected. Its objects
// come from the reader and have no prototype, so `in` sees their own keys only, as hasKey does, at
// a fraction of hasKey's cost in QuickJS (this runs for every candidate).
function callFromValue(value, allowed) {
  if (!isObject(value)) return NOT_A_CALL;
  if ("function" in value || "type" in value) {
    const fn = "function" in value ? value["function"] : null;
    if (!hasOnlyKeys(value, OPENAI_KEYS)) {
      return new Rejected("unknown-key", isObject(fn) && "name" in fn ? stringOrNull(fn["name"]) : null);
    }
    if (value["type"] !== "function" || !isObject(fn)) return NOT_A_CALL;
    if (!hasOnlyKeys(fn, OPENAI_FUNCTION_KEYS)) return new Rejected("unknown-key", stringOrNull("name" in fn ? fn["name"] : null));
    value = fn;
  } else if (!("name" in value)) {
    return NOT_A_CALL;
  } else if (!hasOnlyKeys(value, PLAIN_KEYS)) {
    return new Rejected("unknown-key", stringOrNull(value["name"]));
  }
  const name = "name" in value ? value["name"] : null;
  if (typeof name !== "string" || name === "") return new Rejected("bad-name");
  if (!allowed.has(name)) return new Rejected("not-allowed", name);
  let args;
  if ("arguments" in value) {
    if ("parameters" in value) return new Rejected("ambiguous-arguments", name);
    args = value["arguments"];
  } else if ("parameters" in value) {
    args = value["parameters"];
  } else {
    return [name, newObject()]; // no arguments: an empty object of the call's own
  }
  args = decodeArguments(args, name);
  return args instanceof Rejected ? args : [name, args];
}

// u[start:end] strictly parsed, then validated as one call: [name, arguments] or a Rejected.
// Text that breaks JSON's grammar has no call's shape: that refusal is not an attempt.
function callFromText(u, start, end, allowed) {
  const value = parseStrict(u, start, end);
  if (value instanceof JsonReject) return new Rejected(value.reason, null, value.reason !== "invalid-json");
  return callFromValue(value, allowed);
}

// Calls in span order. Array sort is not adaptive in every engine (QuickJS-ng): skip it when the
// calls are in order already, as they are unless passes interleave.
function sortCalls(calls) {
  if (calls.some((call, k) => k > 0 && compareSpans(calls[k - 1].span, call.span) > 0)) {
    calls.sort((a, b) => compareSpans(a.span, b.span));
  }
}

// Where UNSAFE_KEY_MARKS occur in the raw text, asked of spans in increasing order of start: each
// mark's next occurrence is searched for from the first span on and again only once a span starts
// past it, so the searches move forward only and cover the text from the first call on once.
class UnsafeKeyMarks {
  constructor(raw) {
    this.raw = raw;
    this.next = UNSAFE_KEY_MARKS.map(() => -2); // per mark: its next occurrence, -1 if none, -2 not yet searched
  }

  // False when raw[start:end] cannot hold an unsafe key: no such word and no \u escape in it.
  within(start, end) {
    for (let k = 0; k < UNSAFE_KEY_MARKS.length; k += 1) {
      let at = this.next[k];
      if (at !== -1 && at < start) at = this.next[k] = this.raw.indexOf(UNSAFE_KEY_MARKS[k], start);
      if (at !== -1 && at + UNSAFE_KEY_MARKS[k].length <= end) return true;
    }
    return false;
  }
}

// True when an object at any depth of `value` has one of UNSAFE_KEYS. Parsed objects have no
// prototype, so `in` sees their own keys only.
function holdsUnsafeKey(value) {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((item) => holdsUnsafeKey(item));
  for (const key of UNSAFE_KEYS) if (key in value) return true;
  for (const key in value) if (holdsUnsafeKey(value[key])) return true;
  return false;
}

// Arguments are an object, or a string holding exactly one JSON object. Never {} instead.
function decodeArguments(args, name) {
  if (typeof args === "string") {
    args = parseStrict(args, 0, args.length);
    if (args instanceof JsonReject) return new Rejected(args.reason === "invalid-json" ? "bad-arguments" : args.reason, name);
  }
  if (!isObject(args)) return new Rejected("bad-arguments", name);
  return args;
}

// A JSON object is one call; a JSON array is a list of calls that run all or nothing.
function callsFromJson(verdict, u, start, end, fmt) {
  const spans = [];
  const value = parseStrict(u, start, end, spans);
  if (value instanceof JsonReject) {
    verdict.reject(value.reason, fmt, start, end);
    return;
  }
  fileCalls(verdict, value, spans, start, end, fmt);
}

// File the calls of a JSON value read from u[start:end]; `spans` are its elements' spans if it is
// an array.
function fileCalls(verdict, value, spans, start, end, fmt) {
  if (!Array.isArray(value)) {
    verdict.file(fmt, start, end, callFromValue(value, verdict.allowed));
    return;
  }
  const outcomes = [];
  for (let k = 0; k < value.length; k += 1) outcomes.push(callFromValue(value[k], verdict.allowed));
  fileAllOrNothing(verdict, outcomes, spans, fmt);
}

// File the outcomes of items that run together, the k-th spanning spans[k]: if any is refused,
// the calls among them are refused as sibling-rejected.
function fileAllOrNothing(verdict, outcomes, spans, fmt) {
  let refused = false;
  for (let k = 0; k < outcomes.length && !refused; k += 1) refused = outcomes[k] instanceof Rejected;
  if (refused && outcomes.some((o) => o instanceof Rejected && verdict.isAttempt(o.reason, fmt, o.attempt))) {
    verdict.attemptRefused = true; // (the refused one may be among those only counted below)
  }
  for (let k = 0; k < outcomes.length; k += 1) {
    if (refused && !verdict.listsMore()) { // the rest are all refused, and only counted
      verdict.countUnlisted(outcomes.length - k);
      return;
    }
    const outcome = outcomes[k];
    if (refused && !(outcome instanceof Rejected)) verdict.reject("sibling-rejected", fmt, spans[k][0], spans[k][1], outcome[0]);
    else verdict.file(fmt, spans[k][0], spans[k][1], outcome);
  }
}

// ASCII letters, digits, _ . - : the units of a tool name in `call:NAME{`. A table, as Python's
// is a set: the unit before every bare candidate is looked up in it.
const CALL_NAME_UNITS = new Uint8Array(128);
for (const unit of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") CALL_NAME_UNITS[unit.charCodeAt(0)] = 1;

function isCallNameUnit(c) {
  return c < 128 && CALL_NAME_UNITS[c] === 1;
}

// Length of the tool name at u[i] in `call:NAME{`.
function callSyntaxName(u, i, end) {
  let k = i;
  while (k < end && isCallNameUnit(u.charCodeAt(k))) k += 1;
  return k - i;
}

// u[start:end] is exactly `call:NAME{...}`; returns [name, arguments] or a Rejected.
function callSyntax(u, start, end, allowed) {
  const nameStart = start + CALL_PREFIX.length;
  const nameEnd = nameStart + callSyntaxName(u, nameStart, end);
  if (nameEnd === nameStart) return new Rejected("invalid-call-syntax");
  if (nameEnd >= end || u.charCodeAt(nameEnd) !== LBRACE) return new Rejected("invalid-call-syntax", u.slice(nameStart, nameEnd));
  const name = u.slice(nameStart, nameEnd);
  if (!allowed.has(name)) return new Rejected("not-allowed", name);
  const [args, after] = readValue(u, nameEnd, end, 1);
  if (args instanceof JsonReject) return new Rejected(args.reason, name);
  if (skipWs(u, after, end) !== end) return new Rejected("invalid-call-syntax", name);
  return [name, args];
}

// ---------------------------------------------------------------- the text being parsed

// The response under parse: its raw units, the text the passes read, in which each pass blanks
// the regions it has claimed, and which units are quoted data.
// Quoted units lie inside a JSON string literal (see quotedMask in json-core.js). A marker there
// (<think>, a tag, <function=...>) is part of a value, not markup, so `find` skips it; this
// keeps a call's arguments byte for byte what the model wrote. Openers that could make
// something run are skipped inside any string; tag closers and <think> only inside a closed
// string of a closed object, so an unterminated quote can neither unmask reasoning nor stretch
// a region over the markup after it; XML closers always count.
// Nothing here is per unit until a marker is found: the quoted mask is made when a found marker
// must be checked against it (most responses hold no marker at all), and blanking builds the
// next text once per pass, from the regions it claimed.
class Text {
  constructor(raw) {
    this.raw = raw;
    this.quoted = null; // quotedMask(raw), made when first needed
    this.u = raw;
    this.blanks = []; // [start, end, fill] of each region this pass has blanked, in document order
    this.blanked = 0; // how many regions have been blanked so far
  }

  // Overwrite [start, end) with `fill`, keeping line feeds so lines survive; seen from the next
  // pass on (commit).
  blank(start, end, fill) {
    this.blanked += 1;
    this.blanks.push([start, end, fill]);
  }

  // Make the blanking done so far visible to the next pass: the text is copied once, its blanked
  // regions written as fill with their line feeds kept (blanking never writes or removes one, so
  // they stand where they stand in the text before).
  commit() {
    const blanks = this.blanks;
    if (blanks.length === 0) return;
    this.blanks = [];
    // extparity-unreachable: defensive: every pass blanks its regions in document order and without
    // overlap (maskThink moves forward, explicitPass claims sorted openers past what it claimed,
    // fences come from findFences in order); kept so that a pass that did not could not corrupt the
    // text
    if (blanks.some((region, k) => k > 0 && region[0] < blanks[k - 1][0])) blanks.sort((a, b) => a[0] - b[0]);
    const u = this.u;
    const pieces = [];
    let at = 0; // u[0:at] is written
    let lf = u.indexOf("\n"); // the first line feed at or after `at`, or -1: searches move forward only
    for (let k = 0; k < blanks.length; k += 1) {
      const start = Math.max(blanks[k][0], at); // (regions of one pass do not overlap; if they did, the union is blanked)
      const end = blanks[k][1];
      const fill = blanks[k][2];
      // extparity-unreachable: defensive, as the sort above: the regions of one pass come in
      // document order without overlap
      if (end <= start) continue;
      pieces.push(u.slice(at, start));
      while (lf !== -1 && lf < start) lf = u.indexOf("\n", lf + 1);
      let from = start;
      while (lf !== -1 && lf < end) {
        pieces.push(fill.repeat(lf - from), "\n");
        from = lf + 1;
        lf = u.indexOf("\n", from);
      }
      pieces.push(fill.repeat(end - from));
      at = end;
    }
    pieces.push(u.slice(at));
    this.u = pieces.join("");
  }

  // Next occurrence of `word` at or after `start` that does not begin in quoted data (units
  // whose quoted level is `quotedFrom` or more).
  find(word, start, end = null, quotedFrom = IN_STRING) {
    const limit = end === null ? this.u.length : end;
    let i = findIn(this.u, word, start, limit);
    if (i === -1 || quotedFrom > IN_VALUE) return i; // (no unit is quoted above IN_VALUE)
    if (this.quoted === null) this.quoted = quotedMask(this.raw);
    while (i !== -1 && this.quoted[i] >= quotedFrom) i = findIn(this.u, word, i + 1, limit);
    return i;
  }
}

// Blank reasoning: <think>...</think>, an unterminated <think>, and text before a </think>
// that has no opener (templates that put <think> in the prompt).
function maskThink(text) {
  const firstClose = text.find(THINK_CLOSE, 0, null, IN_VALUE);
  const firstOpen = text.find(THINK_OPEN, 0, null, IN_VALUE);
  let i = 0;
  if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) {
    i = firstClose + THINK_CLOSE.length;
    text.blank(0, i, " ");
  }
  for (;;) {
    const opened = text.find(THINK_OPEN, i, null, IN_VALUE);
    if (opened === -1) break;
    const closed = text.find(THINK_CLOSE, opened + THINK_OPEN.length, null, IN_VALUE);
    i = closed === -1 ? text.u.length : closed + THINK_CLOSE.length;
    text.blank(opened, i, " ");
  }
  text.commit();
}

// Lower-case ASCII letters only: str.lower and toLowerCase disagree beyond ASCII.
function asciiLower(word) {
  let out = "";
  for (let k = 0; k < word.length; k += 1) {
    const c = word.charCodeAt(k);
    out += c >= 0x41 && c <= 0x5a ? String.fromCharCode(c + 32) : word[k];
  }
  return out;
}

// Closed ``` fences as [open line start, content start, content end, close line end, info].
// Only lines that hold ``` can open or close a fence, so the search jumps from one to the next.
function findFences(u) {
  const fences = [];
  let opener = null;
  let i = u.indexOf(FENCE);
  while (i !== -1) {
    const lineStart = u.lastIndexOf("\n", i) + 1;
    let lineEnd = u.indexOf("\n", i);
    if (lineEnd === -1) lineEnd = u.length;
    if (skipWs(u, lineStart, i) === i) { // the line, trimmed, starts with ```
      const last = skipWsBack(u, i, lineEnd);
      if (opener === null) {
        const infoStart = skipWs(u, i + 3, last);
        const info = infoStart === last ? "" : asciiLower(u.slice(infoStart, last));
        opener = [lineStart, Math.min(lineEnd + 1, u.length), info];
      } else if (last - i === 3) {
        fences.push([opener[0], opener[1], lineStart, lineEnd, opener[2]]);
        opener = null;
      }
    }
    i = u.indexOf(FENCE, lineEnd + 1);
  }
  return fences;
}

function isJsonFence(info) {
  return info === "json" || info === "";
}

// ---------------------------------------------------------------- passes

// False when u[start:end] (trimmed) cannot pass parseStrict because it opens an object or array
// that it does not close at its end: a pass that only needs to know whether it parses can skip
// reading the values of, say, a long array cut short.
function mayBeOneContainer(u, start, end) {
  const first = u.charCodeAt(start);
  if (first === LBRACKET) return u.charCodeAt(end - 1) === RBRACKET;
  if (first === LBRACE) return u.charCodeAt(end - 1) === RBRACE;
  return true;
}

// A response that is nothing but a JSON array is a batch of calls, all or nothing.
function wholeResponseArray(verdict, u) {
  const start = skipWs(u, 0, u.length);
  if (start === u.length || u.charCodeAt(start) !== LBRACKET) return false;
  const end = skipWsBack(u, start, u.length);
  if (!mayBeOneContainer(u, start, end)) return false;
  const spans = [];
  const value = parseStrict(u, start, end, spans);
  if (value instanceof JsonReject) return false;
  fileCalls(verdict, value, spans, start, end, "array");
  return true;
}

// Tags (<tool_call>, <|tool_call|>, <functioncall>) and bare XML function elements, in document
// order: whichever opens first claims its region, and markers inside a claimed region are its
// content (an XML value may quote a tag, a tag may hold XML). An opener whose closer never
// comes, or comes after another opener of its kind, is refused on its own.
// Each region is judged by the own-line rule for regions (see fileRun): one that does not stand
// on its own line is narration, and whatever it holds is refused as not-own-line.
function explicitPass(verdict, text) {
  if (text.u.indexOf("<") === -1) return; // (every opener begins with "<": most responses hold none)
  const kinds = REGION_KINDS;
  const positions = [];
  kinds.forEach(([opener], kind) => {
    let i = text.find(opener, 0);
    while (i !== -1) {
      positions.push([i, kind]);
      i = text.find(opener, i + opener.length);
    }
  });
  if (positions.length === 0) return;
  // extparity-unreachable: no two openers start at one index (none is a prefix of another), so the
  // sort never compares kinds
  positions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const nextSame = new Array(positions.length).fill(-1); // where the next opener of the same closer starts
  const lastSeen = new Map();
  for (let k = positions.length - 1; k >= 0; k -= 1) {
    const closer = kinds[positions[k][1]][1];
    nextSame[k] = lastSeen.has(closer) ? lastSeen.get(closer) : -1;
    lastSeen.set(closer, positions[k][0]);
  }
  const nextClose = new Map(); // memo per closer: searches move forward only, so the pass stays linear
  let claimedUntil = 0;
  const u = text.u;
  // The own-line rule for regions (SPEC.md 5.6): runs of regions linked by whitespace and at most
  // one comma. Regions are filed in document order, each as soon as its judgement is known: an
  // unclosed opener at once (it needs only its run to start its line), unless a closed region of
  // its run waits before it; a closed region when its run ends (fileRun). So a flood of openers
  // costs a step or two each.
  let run = []; // regions of the current run waiting for its end: [start, end, kind, body start, closer or -1]
  let runStarts = false; // whether the current run starts its line
  let runEnd = -1; // where the current run's last region ends
  positions.forEach(([i, kind], k) => {
    if (i < claimedUntil) return;
    const [opener, closer] = kinds[kind];
    const bodyStart = i + opener.length;
    const memo = nextClose.has(closer) ? nextClose.get(closer) : 0;
    if (memo !== -1 && memo < bodyStart) nextClose.set(closer, text.find(closer, bodyStart, null, kind < TAGS.length ? IN_VALUE : XML_CLOSERS_ALWAYS_COUNT));
    const closeAt = nextClose.get(closer);
    const isTag = kind < TAGS.length;
    const unclosed = closeAt === -1 || (isTag && nextSame[k] !== -1 && nextSame[k] < closeAt);
    if (runEnd !== i) { // (a region right after the last one continues its run)
      const before = i > 0 ? u.charCodeAt(i - 1) : LF; // the unit before nearly always settles both
      const inlineWs = before === SPACE || before === TAB || before === CR;
      if (!((inlineWs || before === COMMA) && runEnd !== -1 && links(u, runEnd, i))) {
        if (run.length > 0) {
          fileRun(verdict, text, run, runStarts);
          run = [];
        }
        runStarts = before === LF || (inlineWs && startsLine(u, i));
      }
    }
    if (unclosed) {
      runEnd = bodyStart;
      if (run.length > 0) {
        run.push([i, bodyStart, kind, bodyStart, -1]);
      } else {
        verdict.narrating = !runStarts;
        verdict.reject("unclosed-tag", isTag ? "tagged" : "xml", i, bodyStart);
      }
      text.blank(i, bodyStart, FILLER);
      return;
    }
    claimedUntil = runEnd = closeAt + closer.length;
    run.push([i, claimedUntil, kind, bodyStart, closeAt]);
    text.blank(i, claimedUntil, FILLER);
  });
  if (run.length > 0) fileRun(verdict, text, run, runStarts);
  verdict.narrating = false;
  text.commit();
}

// File the regions of a run that has ended, in order. A closed region stands on its own line
// when the run starts its line and ends it (the bare rule's tail after its last region); an
// unclosed opener needs only the first: its body is cut off, so what follows it cannot tell
// narration (a truncated call, or nested openers, are attempts). A region that does not stand
// alone is narration: whatever it holds is filed as not-own-line.
function fileRun(verdict, text, run, starts) {
  const last = run[run.length - 1];
  const ends = starts && (last[4] === -1 || endsLine(text.u, last[1]));
  for (let k = 0; k < run.length; k += 1) {
    const region = run[k]; // indexed, not destructured: QuickJS destructures slowly
    const start = region[0];
    const end = region[1];
    verdict.narrating = !(starts && (ends || region[4] === -1));
    if (region[4] === -1) verdict.reject("unclosed-tag", region[2] < TAGS.length ? "tagged" : "xml", start, end);
    else if (region[2] < TAGS.length) taggedBody(verdict, text, start, region[3], region[4], end);
    else verdict.file("xml", start, end, xmlCall(text, start, region[4], verdict.allowed));
  }
}

// True when only JSON whitespace other than LF, with at most one comma, lies in u[end:start].
function links(u, end, start) {
  const c = u.charCodeAt(end);
  if (c !== COMMA && !isInlineWs(c)) return false; // the unit after a region nearly always settles it
  let i = end;
  while (i < start && isInlineWs(u.charCodeAt(i))) i += 1;
  if (i < start && u.charCodeAt(i) === COMMA) {
    i += 1;
    while (i < start && isInlineWs(u.charCodeAt(i))) i += 1;
  }
  return i === start;
}

function startsWithFunction(u, i, end) {
  return FUNCTION_OPENERS.some((opener) => startsAt(u, opener, i, end));
}

function taggedBody(verdict, text, tagStart, bodyStart, bodyEnd, tagEnd) {
  const u = text.u;
  const start = skipWs(u, bodyStart, bodyEnd);
  const end = skipWsBack(u, start, bodyEnd);
  if (start === end) {
    verdict.reject("empty-tag", "tagged", tagStart, tagEnd);
  } else if (startsAt(u, CALL_PREFIX, start, end)) {
    verdict.file("tagged-call", start, end, callSyntax(u, start, end, verdict.allowed));
  } else if (startsWithFunction(u, start, end)) {
    xmlSequence(verdict, text, start, end);
  } else if (u.charCodeAt(start) === LBRACE || u.charCodeAt(start) === LBRACKET) {
    callsFromJson(verdict, u, start, end, "tagged");
  } else {
    verdict.reject("invalid-json", "tagged", start, end);
  }
}

// Function elements separated by whitespace, inside one tag: all run or none does.
function xmlSequence(verdict, text, start, end) {
  const outcomes = [];
  const spans = [];
  let i = start;
  while (i < end) {
    if (!startsWithFunction(text.u, i, end)) {
      outcomes.push(new Rejected("xml-malformed"));
      spans.push([i, end]);
      break;
    }
    const closeAt = text.find(FUNCTION_CLOSE, i, end, XML_CLOSERS_ALWAYS_COUNT);
    if (closeAt === -1) {
      outcomes.push(new Rejected("unclosed-tag"));
      spans.push([i, end]);
      break;
    }
    const stop = closeAt + FUNCTION_CLOSE.length;
    outcomes.push(xmlCall(text, i, closeAt, verdict.allowed));
    spans.push([i, stop]);
    i = skipWs(text.u, stop, end);
  }
  fileAllOrNothing(verdict, outcomes, spans, "xml");
}

// Name in `<tag=NAME>` or `<tag name="NAME">` at u[i]: [name, index after '>'] or a Rejected.
function tagAttribute(u, i, end, openers, owner = null) {
  for (const opener of openers) {
    if (startsAt(u, opener, i, end)) {
      const quoted = opener.endsWith('"');
      let k = i + opener.length;
      const nameStart = k;
      while (k < end && u[k] !== '"' && u[k] !== ">" && u[k] !== "<" && u[k] !== "\n") k += 1;
      const name = u.slice(nameStart, k);
      const tail = quoted ? '">' : ">";
      if (name === "" || !startsAt(u, tail, k, end)) return new Rejected("xml-malformed", owner);
      return [name, k + tail.length];
    }
  }
  return new Rejected("xml-malformed", owner);
}

// Parameter values drop one leading and one trailing line break (LF or CRLF).
function stripOneNewline(u, start, end) {
  if (startsAt(u, "\r\n", start, end)) start += 2;
  else if (startsAt(u, "\n", start, end)) start += 1;
  if (end - start >= 2 && startsAt(u, "\r\n", end - 2, end)) end -= 2;
  else if (end > start && u[end - 1] === "\n") end -= 1;
  return [start, end];
}

// `<function=NAME>` + `<parameter=K>value</parameter>`*; values stay strings.
// Structure is read from the masked text, values from the raw text: a value may hold a
// markdown fence or a <think> the model meant literally (a README, a prompt).
function xmlCall(text, start, bodyEnd, allowed) {
  const u = text.u;
  let attribute = tagAttribute(u, start, bodyEnd, FUNCTION_OPENERS);
  if (attribute instanceof Rejected) return attribute;
  const name = attribute[0];
  let i = attribute[1];
  if (!isWellFormed(name)) return new Rejected("lone-surrogate");
  if (!allowed.has(name)) return new Rejected("not-allowed", name);
  const args = newObject();
  for (;;) {
    i = skipWs(u, i, bodyEnd);
    if (i === bodyEnd) return [name, args];
    attribute = tagAttribute(u, i, bodyEnd, PARAMETER_OPENERS, name);
    if (attribute instanceof Rejected) return attribute;
    const key = attribute[0];
    i = attribute[1];
    const valueEnd = text.find(PARAMETER_CLOSE, i, bodyEnd, XML_CLOSERS_ALWAYS_COUNT);
    if (valueEnd === -1) return new Rejected("xml-malformed", name);
    const [valueStart, valueStop] = stripOneNewline(text.raw, i, valueEnd);
    const value = text.raw.slice(valueStart, valueStop);
    if (!(isWellFormed(key) && isWellFormed(value))) return new Rejected("lone-surrogate", name);
    if (hasKey(args, key)) return new Rejected("duplicate-key", name);
    args[key] = value;
    i = valueEnd + PARAMETER_CLOSE.length;
  }
}

// A json (or untagged) fence whose whole content is JSON is calls. `fences` are those of
// findFences(text.u).
function fencePass(verdict, text, fences) {
  const u = text.u;
  for (const [openStart, contentStart, contentEnd, closeEnd, info] of fences) {
    if (!isJsonFence(info)) continue;
    const start = skipWs(u, contentStart, contentEnd);
    const end = skipWsBack(u, start, contentEnd);
    if (start === end || !mayBeOneContainer(u, start, end)) continue;
    const spans = [];
    const value = parseStrict(u, start, end, spans);
    if (value instanceof JsonReject) continue;
    fileCalls(verdict, value, spans, start, end, "fenced");
    text.blank(openStart, closeEnd, FILLER);
  }
  text.commit();
}

// The own-line rule: a candidate u[start:end] is the whole of its line(s) when startsLine(u,
// start) and endsLine(u, end). Only the gaps around it are scanned, never the candidate, so
// checking every candidate of a long line stays linear.

// True when only JSON whitespace precedes u[start] on its line.
function startsLine(u, start) {
  let i = start;
  while (i > 0 && isInlineWs(u.charCodeAt(i - 1))) i -= 1;
  return i === 0 || u.charCodeAt(i - 1) === LF;
}

// True when only JSON whitespace with at most one comma follows u[end] on its line. endsLine runs
// for every candidate, and the unit right after one nearly always settles it (a line feed, the end
// of the text, or a unit no tail holds, as in `{}{}`); the tail is walked only when that unit may
// begin a longer one.
function endsLine(u, end) {
  if (end === u.length) return true;
  const c = u.charCodeAt(end);
  if (c === LF) return true;
  if (c !== COMMA && !isInlineWs(c)) return false;
  let i = skipInlineWs(u, end);
  if (i < u.length && u.charCodeAt(i) === COMMA) i = skipInlineWs(u, i + 1);
  return i === u.length || u.charCodeAt(i) === LF;
}

// Skip JSON whitespace other than LF: stays on the current line.
function skipInlineWs(u, i) {
  while (i < u.length && isInlineWs(u.charCodeAt(i))) i += 1;
  return i;
}

// JSON whitespace other than LF.
function isInlineWs(c) {
  return c === SPACE || c === TAB || c === CR;
}

// Start of `call:NAME` right before the object at objStart, or -1.
function callPrefixStart(u, objStart) {
  let k = objStart;
  while (k > 0 && isCallNameUnit(u.charCodeAt(k - 1))) k -= 1;
  const prefixStart = k - CALL_PREFIX.length;
  if (k === objStart || prefixStart < 0 || !u.startsWith(CALL_PREFIX, prefixStart)) return -1;
  return prefixStart;
}

// The name a refused candidate would have called, so a person can see what was narrated.
function narratedName(u, start, end) {
  let value = parseStrict(u, start, end);
  if (value instanceof JsonReject) return null;
  if (isObject(value) && hasKey(value, "function") && isObject(value["function"])) value = value["function"];
  const name = isObject(value) && hasKey(value, "name") ? value["name"] : null;
  return typeof name === "string" ? name : null;
}

// Balanced top-level objects (and `call:NAME{...}`) that stand alone on their lines.
// The outcome of a candidate on its own line depends on its text alone, so a refusal is worked
// out once per distinct text (a flood of identical objects costs little); calls are validated
// each time, so no two calls share an arguments object. Once no more rejections can be listed,
// barePassUnlisted takes the rest of the candidates.
function barePass(verdict, u) {
  const refusals = new Map(); // candidate text -> Rejected
  const objects = scanObjects(u, 0, u.length); // flat: start, end of each
  for (let k = 0; k < objects.length; k += 2) {
    if (!verdict.listsMore()) { // from here on it never does again (Verdict.beginPass)
      barePassUnlisted(verdict, u, objects, k, refusals);
      return;
    }
    const objStart = objects[k];
    const objEnd = objects[k + 1];
    const ends = endsLine(u, objEnd);
    let starts = startsLine(u, objStart); // if so, no call: prefix can stand before it
    const prefixStart = starts ? -1 : callPrefixStart(u, objStart);
    if (prefixStart !== -1) starts = startsLine(u, prefixStart);
    const start = prefixStart !== -1 ? prefixStart : objStart;
    const fmt = prefixStart !== -1 ? "bare-call" : "bare";
    if (!(starts && ends)) {
      const name = prefixStart !== -1 ? u.slice(prefixStart + CALL_PREFIX.length, objStart) : () => narratedName(u, objStart, objEnd);
      verdict.reject("not-own-line", fmt, start, objEnd, name);
      continue;
    }
    const candidate = u.slice(start, objEnd);
    let outcome = refusals.get(candidate);
    if (outcome === undefined) {
      outcome = prefixStart !== -1 ? callSyntax(u, start, objEnd, verdict.allowed) : callFromText(u, start, objEnd, verdict.allowed);
      if (outcome instanceof Rejected) refusals.set(candidate, outcome);
    }
    verdict.file(fmt, start, objEnd, outcome);
  }
}

// The bare pass from the object at objects[first] (its start; flat as scanObjects gives them) on, when no rejection filed now can be listed: what a refused
// candidate is refused for no longer matters, only that it is. So a candidate is validated only if
// it may be a call, on its own line with a text not refused before; every other one is counted,
// and the count is filed once. A flood of refused candidates then costs little more than the
// own-line checks.
function barePassUnlisted(verdict, u, objects, first, refusals) {
  let unlisted = 0;
  for (let k = first; k < objects.length; k += 2) {
    const objStart = objects[k];
    const objEnd = objects[k + 1];
    if (!endsLine(u, objEnd)) {
      unlisted += 1;
      continue;
    }
    let start = objStart;
    if (!startsLine(u, objStart)) {
      start = callPrefixStart(u, objStart);
      if (start === -1 || !startsLine(u, start)) {
        unlisted += 1;
        continue;
      }
    }
    const candidate = u.slice(start, objEnd);
    if (refusals.has(candidate)) {
      unlisted += 1;
      continue;
    }
    const outcome = start !== objStart ? callSyntax(u, start, objEnd, verdict.allowed) : callFromText(u, start, objEnd, verdict.allowed);
    if (outcome instanceof Rejected) {
      refusals.set(candidate, outcome);
      unlisted += 1;
      if (verdict.isAttempt(outcome.reason, start === objStart ? "bare" : "bare-call", outcome.attempt)) verdict.attemptRefused = true;
    } else {
      verdict.accept(outcome[0], outcome[1], start === objStart ? "bare" : "bare-call", start, objEnd);
    }
  }
  verdict.countUnlisted(unlisted);
}

// ---------------------------------------------------------------- entry points

// Every index holds a string: `every` would skip the holes of a sparse array.
function isStringList(allowed) {
  if (!Array.isArray(allowed)) return false;
  for (let k = 0; k < allowed.length; k += 1) if (typeof allowed[k] !== "string") return false;
  return true;
}

function parseChecked(raw, allowed) {
  if (typeof raw !== "string") return errorVerdict("text-not-string");
  if (!isStringList(allowed)) return errorVerdict("allowed-not-list");
  if (raw.length > MAX_TEXT_UNITS) return errorVerdict("too-long");
  const verdict = new Verdict(new Set(allowed), raw);
  const text = new Text(raw);
  maskThink(text);
  verdict.beginPass();
  if (wholeResponseArray(verdict, text.u)) return verdict.result();
  let fences = findFences(text.u);
  for (const [openStart, , , closeEnd, info] of fences) {
    if (!isJsonFence(info)) text.blank(openStart, closeEnd, FILLER); // quoted code: nothing inside it runs
  }
  text.commit();
  const blanked = text.blanked;
  verdict.beginPass();
  explicitPass(verdict, text);
  if (text.blanked !== blanked) fences = findFences(text.u); // the explicit pass claimed regions: find the fences again
  verdict.beginPass();
  fencePass(verdict, text, fences);
  verdict.beginPass();
  barePass(verdict, text.u);
  return verdict.result();
}

// The verdict for `text` under the allowlist `allowed`. Never throws: a defect inside the
// parser becomes the error verdict "internal-error" rather than an exception in the caller.
export function parseToolCalls(text, allowed) {
  try {
    return parseChecked(text, allowed);
  } catch (error) { // extparity-unreachable: defensive: no input reaches it while the code is right
    return errorVerdict("internal-error");
  }
}

// The same verdict as RFC 8785 canonical JSON text: the form every engine is compared in.
export function parseToolCallsCanonical(text, allowed) {
  return canonical(parseToolCalls(text, allowed));
}
