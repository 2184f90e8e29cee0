// Shared text and JSON machinery for the parser and the repair (SPEC.md sections 1-4).
//
// Twin of py_src/toolcalls/json_core.py in design, function for function: the same strict
// reader, scanner and canonical writer, so the two can be read side by side (the parser twins
// are kept line for line; these cannot be, since each language is fast in its own way, and
// the speed layer lives apart, in json-fast.js here and json_fast.py there). JS
// strings already index UTF-16 code units, which is the unit SPEC.md counts in. Pure
// ECMAScript: no Web or browser APIs, no regular expressions, no JSON.parse, so QuickJS, V8
// and SpiderMonkey run the same bytes the same way. Parsed objects have no prototype, so keys
// such as "__proto__" are plain data.

import { fewDigitsText, layout, shortestOfNearest, timesPowerOfTen } from "./json-fast.js";

export const MAX_DEPTH = 64;
export const MAX_SAFE_INTEGER = 9007199254740991;

export const SPACE = 0x20;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

// A document broke the grammar or a policy; `reason` is a SPEC.md reason code. The reader
// returns it in place of a value rather than throwing it: hostile text can hold thousands of
// refused candidates, and a throw for each is slow (about 1.5 us in V8).
export const JsonReject = class JsonReject {
  constructor(reason, at) {
    this.reason = reason;
    this.at = at;
  }
};

export function newObject() {
  return Object.create(null);
}

export function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function hasKey(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

export function isJsonWs(code) {
  return code === SPACE || code === TAB || code === LF || code === CR;
}

export function skipWs(u, i, end) {
  for (; i < end; i += 1) {
    const c = u.charCodeAt(i);
    if (c !== SPACE && c !== LF && c !== TAB && c !== CR) break;
  }
  return i;
}

// Index just past the last non-whitespace unit of u[start:end] (start if none).
export function skipWsBack(u, start, end) {
  while (end > start && isJsonWs(u.charCodeAt(end - 1))) end -= 1;
  return end;
}

// Python's str.startswith(word, i, end): word must lie wholly inside [i, end).
export function startsAt(u, word, i, end) {
  return i >= 0 && i + word.length <= end && u.startsWith(word, i);
}

// Python's str.find(word, i, end): first occurrence lying wholly inside [i, end), or -1.
export function findIn(u, word, i, end) {
  const k = u.indexOf(word, i);
  return k !== -1 && k + word.length <= end ? k : -1;
}

// True when every surrogate unit belongs to a high+low pair.
export function isWellFormed(u) {
  const n = u.length;
  let i = 0;
  while (i < n) {
    const c = u.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      if (i + 1 < n && u.charCodeAt(i + 1) >= 0xdc00 && u.charCodeAt(i + 1) <= 0xdfff) {
        i += 2;
        continue;
      }
      return false;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return false;
    i += 1;
  }
  return true;
}

// ---------------------------------------------------------------- strict JSON reader

// Parse u[start:end] as exactly one JSON value with JSON whitespace around it; returns the value,
// or a JsonReject. If `spans` is an array and the value is an array, the [start, end] of each
// element is pushed to it.
export function parseStrict(u, start, end, spans = null) {
  const read = new Read();
  const value = valueAt(u, skipWs(u, start, end), end, 1, spans, read);
  if (value instanceof JsonReject) return value;
  const i = skipWs(u, read.at, end);
  if (i !== end) return new JsonReject("invalid-json", i);
  return value;
}

// The exported readers return [value, index after it], or [JsonReject, index] at the first
// failing check, as the Python twin's do. Inside, each reader (valueAt, objectAt, arrayAt,
// stringAt, numberAt) returns the value or the JsonReject alone and leaves that index in its
// Read: a fresh pair per value was a large part of the time spent reading many short values,
// in QuickJS and in V8. `at` is read straight after the call that set it. One Read per document,
// so no reader keeps state from one call to the next.
class Read {
  constructor() {
    this.at = 0; // where the last reader stopped
    this.bits = null; // an 8-byte view to split doubles (literalToDouble), made when first needed
    this.fives = null; // 5^n by n, for this document's exact conversions (powerOfFive), made when first needed
  }
}

function failAt(reason, i, read) {
  read.at = i;
  return new JsonReject(reason, i);
}

function endAt(value, i, read) {
  read.at = i;
  return value;
}

// Read one value at u[i]. `depth` is this value's depth; `spans`, if an array, receives the
// spans of an array's elements.
export function readValue(u, i, end, depth, spans = null) {
  const read = new Read();
  const value = valueAt(u, i, end, depth, spans, read);
  return [value, read.at];
}

function valueAt(u, i, end, depth, spans, read) {
  if (i >= end) return failAt("invalid-json", i, read);
  const c = u.charCodeAt(i);
  if (c === QUOTE) return stringAt(u, i, end, read);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return numberAt(u, i, end, read);
  if (c === LBRACE || c === LBRACKET) {
    if (depth > MAX_DEPTH) return failAt("too-deep", i, read);
    if (c === LBRACE) return objectAt(u, i, end, depth, read);
    return arrayAt(u, i, end, depth, spans, read);
  }
  if (c === 0x74 && startsAt(u, "true", i, end)) return endAt(true, i + 4, read);
  if (c === 0x66 && startsAt(u, "false", i, end)) return endAt(false, i + 5, read);
  if (c === 0x6e && startsAt(u, "null", i, end)) return endAt(null, i + 4, read);
  return failAt("invalid-json", i, read);
}

// Reads its units as arrayAt does (see there).
function objectAt(u, i, end, depth, read) {
  const obj = newObject();
  i = skipWs(u, i + 1, end);
  let c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
  if (c === RBRACE) return endAt(obj, i + 1, read);
  for (;;) {
    if (c !== QUOTE) return failAt("invalid-json", i, read);
    const keyAt = i;
    const key = stringAt(u, i, end, read);
    if (key instanceof JsonReject) return key;
    i = read.at;
    c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    if (c <= SPACE) {
      i = skipWs(u, i, end);
      c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    }
    if (c !== COLON) return failAt("invalid-json", i, read);
    i += 1;
    c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    if (c <= SPACE) {
      i = skipWs(u, i, end);
      c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    }
    const value = (c >= 0x30 && c <= 0x39) || c === 0x2d ? numberAt(u, i, end, read) : valueAt(u, i, end, depth + 1, null, read);
    if (value instanceof JsonReject) return value;
    // `in` is hasKey here: obj has no prototype to inherit a key from.
    if (key in obj) return new JsonReject("duplicate-key", keyAt); // read.at: just past the value
    obj[key] = value;
    i = read.at;
    c = i < end ? u.charCodeAt(i) : -1;
    if (c <= SPACE) {
      i = skipWs(u, i, end);
      c = i < end ? u.charCodeAt(i) : -1;
    }
    if (c === COMMA) {
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
      if (c <= SPACE) {
        i = skipWs(u, i, end);
        c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
      }
      continue;
    }
    if (c === RBRACE) return endAt(obj, i + 1, read);
    return failAt("invalid-json", i, read);
  }
}

// Long arrays of short values are where the reader's own steps count (in QuickJS a charCodeAt
// costs about 55 ns and a call about 35), so the loop keeps `c`, the unit at i, and reads each
// unit once: whitespace is skipped only where the unit is at or below SPACE, and an element that
// starts with a digit or "-" goes to numberAt at once rather than through valueAt.
// At the end of the text `c` is -1, an arm no input reaches: the readers meet the end of their
// text only after a closer (the parser reads regions the scanner balanced, the repair text it
// closed), and no input was found that does otherwise; each such arm is marked unreachable.
function arrayAt(u, i, end, depth, spans, read) {
  const items = [];
  i = skipWs(u, i + 1, end);
  let c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
  if (c === RBRACKET) return endAt(items, i + 1, read);
  for (;;) {
    const value = (c >= 0x30 && c <= 0x39) || c === 0x2d ? numberAt(u, i, end, read) : valueAt(u, i, end, depth + 1, null, read);
    if (value instanceof JsonReject) return value;
    items.push(value);
    if (spans !== null) spans.push([i, read.at]);
    i = read.at;
    c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    if (c <= SPACE) { // (also at the end, c = -1)
      i = skipWs(u, i, end);
      c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    }
    if (c === COMMA) {
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
      if (c <= SPACE) {
        i = skipWs(u, i, end);
        c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
      }
      continue;
    }
    if (c === RBRACKET) return endAt(items, i + 1, read);
    return failAt("invalid-json", i, read);
  }
}

const ESCAPES = Object.freeze({ 0x22: '"', 0x5c: "\\", 0x2f: "/", 0x62: "\b", 0x66: "\f", 0x6e: "\n", 0x72: "\r", 0x74: "\t" });

// The unit written as four hex digits at u[i], or a JsonReject.
function hex4(u, i, end) {
  if (i + 4 > end) return new JsonReject("invalid-json", i);
  let value = 0;
  for (let k = i; k < i + 4; k += 1) {
    const c = u.charCodeAt(k);
    let digit;
    if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x37;
    else return new JsonReject("invalid-json", k);
    value = value * 16 + digit;
  }
  return value;
}

// Read a string literal at u[i] === '"'. Lone surrogates, escaped or raw, are rejected: they
// cannot be encoded as UTF-8 and the bridges between engines mangle them differently. The text
// is checked for them only if it holds a surrogate at all, and assembled from parts only if it
// holds an escape (Python finds both with regular expressions; here each unit is looked at once).
// extparity-unreachable: an exported reader with the Python twin's API, not called by the entries
export function readString(u, i, end) {
  const read = new Read();
  const value = stringAt(u, i, end, read);
  return [value, read.at];
}

function stringAt(u, i, end, read) {
  const start = i;
  i += 1;
  const parts = [];
  let run = i;
  let surrogate = false;
  for (;;) {
    // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
    if (i >= end) return failAt("invalid-json", i, read);
    const c = u.charCodeAt(i);
    if (c === QUOTE) {
      let text = u.slice(run, i);
      if (parts.length > 0) {
        parts.push(text);
        text = parts.join("");
      }
      if (surrogate && !isWellFormed(text)) {
        read.at = i;
        return new JsonReject("lone-surrogate", start);
      }
      return endAt(text, i + 1, read);
    }
    if (c < 0x20) return failAt("invalid-json", i, read);
    if (c === BACKSLASH) {
      parts.push(u.slice(run, i));
      // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
      if (i + 1 >= end) return failAt("invalid-json", i, read);
      const e = u.charCodeAt(i + 1);
      if (e === 0x75) {
        const unit = hex4(u, i + 2, end);
        if (unit instanceof JsonReject) return endAt(unit, i, read);
        if (unit >= 0xd800 && unit <= 0xdfff) surrogate = true;
        parts.push(String.fromCharCode(unit));
        i += 6;
      } else if (hasKey(ESCAPES, e)) {
        parts.push(ESCAPES[e]);
        i += 2;
      } else {
        return failAt("invalid-json", i, read);
      }
      run = i;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) surrogate = true;
    i += 1;
  }
}

// Read a number; integers must be safe integers and every value must be finite.
// extparity-unreachable: an exported reader with the Python twin's API, not called by the entries
export function readNumber(u, i, end) {
  const read = new Read();
  const value = numberAt(u, i, end, read);
  return [value, read.at];
}

// One pass over the literal, which also adds up its digits, all of them as one integer
// (`mantissa`), and its exponent. While the true sum is at most MAX_SAFE_INTEGER every step is
// exact; once it is past, the computed sum is past too (each rounding is monotonic and 2^53 is a
// double), so `mantissa <= MAX_SAFE_INTEGER` says exactly when mantissa is the digits' value.
// Then an integer literal's value is mantissa, and a literal whose value is mantissa * 10^scale
// with |scale| <= 22 is one IEEE multiplication or division of two exact doubles, which is
// correctly rounded (Clinger's fast path): the double literalToDouble returns, without a slice
// or a conversion. Everything else goes to literalToDouble with the positions found here.
// `c` is always the unit at i (-1 at the end), so each unit is read once.
function numberAt(u, i, end, read) {
  const start = i;
  let c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: the end of the text comes only after a closer (see arrayAt)
  if (c === 0x2d) {
    i += 1;
    c = i < end ? u.charCodeAt(i) : -1;
  }
  const intStart = i;
  let mantissa = 0;
  if (c === 0x30) {
    i += 1;
    c = i < end ? u.charCodeAt(i) : -1;
  } else if (c >= 0x31 && c <= 0x39) {
    do {
      mantissa = mantissa * 10 + (c - 0x30);
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
  } else {
    return failAt("invalid-json", i, read);
  }
  const intEnd = i;
  if (c !== 0x2e && c !== 0x65 && c !== 0x45) {
    read.at = i;
    if (intEnd - intStart > 16 || mantissa > MAX_SAFE_INTEGER) return new JsonReject("number-out-of-range", start);
    return intStart > start ? -mantissa : mantissa;
  }
  if (c === 0x2e) {
    i += 1;
    c = i < end ? u.charCodeAt(i) : -1;
    if (c < 0x30 || c > 0x39) return failAt("invalid-json", i, read);
    do {
      mantissa = mantissa * 10 + (c - 0x30);
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
  }
  const fracEnd = i;
  let scale = intEnd < fracEnd ? intEnd + 1 - fracEnd : 0; // minus the number of fraction digits
  if (c === 0x65 || c === 0x45) {
    i += 1;
    c = i < end ? u.charCodeAt(i) : -1;
    const negative = c === 0x2d;
    if (c === 0x2b || c === 0x2d) {
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1;
    }
    if (c < 0x30 || c > 0x39) return failAt("invalid-json", i, read);
    let exponent = 0;
    do {
      if (exponent < 1e6) exponent = exponent * 10 + (c - 0x30); // past 10^6 only "large" matters
      i += 1;
      c = i < end ? u.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
    scale += negative ? -exponent : exponent;
  }
  read.at = i;
  let value;
  if (mantissa <= MAX_SAFE_INTEGER && scale >= -22 && scale <= 22) {
    const magnitude = timesPowerOfTen(mantissa, scale);
    value = intStart > start ? -magnitude : magnitude;
  } else {
    value = literalToDouble(u, start, intStart, intEnd, fracEnd, i, read);
    if (!Number.isFinite(value)) return new JsonReject("number-out-of-range", start);
  }
  return value;
}

// ---------------------------------------------------------------- decimal literal to double

// The engine's own conversion of a decimal literal is trusted only up to this many significant
// digits. ECMAScript requires correct rounding up to 20; QuickJS-ng 0.17 misrounds near-midpoint
// literals from about 39 (benchmarks/differential_numbers.py checks every engine). The conversion
// used is parseFloat: for a whole literal it is Number's (both are ECMAScript's
// StringNumericValue), and about twice as fast in V8.
const TRUSTED_DIGITS = 19;
// A midpoint between two doubles has at most 768 significant decimal digits, so the first 800
// digits of a literal plus a sticky nonzero digit for the rest compare with every midpoint
// exactly as the whole literal does.
const KEPT_DIGITS = 800;

// The double nearest to the JSON number literal u[start:end] (ties to even, +-Infinity past the
// largest double), as Python's float() reads it, however many digits the literal has. Its
// integer digits are u[intStart:intEnd] (a minus sign before them if intStart > start), its
// fraction digits u[intEnd + 1:fracEnd] if fracEnd > intEnd, and an exponent part follows if
// fracEnd < end: numberAt found these, so the literal is not scanned for them again. `read` lends
// the exact comparison its view of a double's bits.
function literalToDouble(u, start, intStart, intEnd, fracEnd, end, read) {
  const negative = intStart > start;
  const fraction = fracEnd > intEnd ? fracEnd - intEnd - 1 : 0;
  if (intEnd - intStart + fraction <= TRUSTED_DIGITS) return parseFloat(u.slice(start, end)); // at most 19 digits in all
  const mantissa = u.slice(intStart, intEnd) + u.slice(intEnd + 1, fracEnd);
  let exponent = 0;
  if (fracEnd < end) {
    let k = fracEnd + 1;
    const sign = u.charCodeAt(k) === 0x2d ? -1 : 1;
    if (u.charCodeAt(k) === 0x2b || u.charCodeAt(k) === 0x2d) k += 1;
    for (; k < end; k += 1) exponent = Math.min(exponent * 10 + u.charCodeAt(k) - 0x30, 1e9);
    exponent *= sign;
  }
  exponent -= fraction; // value = mantissa * 10^exponent
  let first = 0;
  while (first < mantissa.length && mantissa.charCodeAt(first) === 0x30) first += 1;
  let last = mantissa.length;
  while (last > first && mantissa.charCodeAt(last - 1) === 0x30) last -= 1;
  const digits = mantissa.slice(first, last);
  exponent += mantissa.length - last; // value = digits * 10^exponent, digits without zeros around
  const point = exponent + digits.length; // 10^(point-1) <= value < 10^point
  let magnitude;
  if (digits.length === 0 || point <= -324) magnitude = 0; // below half the smallest double
  else if (point > 309) magnitude = Infinity; // 10^309 is past the largest double
  else if (digits.length <= TRUSTED_DIGITS) magnitude = parseFloat(digits + "e" + exponent);
  else magnitude = nearestDouble(digits, exponent, read);
  return negative ? -magnitude : magnitude;
}

// Correct rounding of digits * 10^exponent (more than TRUSTED_DIGITS digits, no zeros around).
// Its first TRUSTED_DIGITS digits give a lower bound and, one unit up, an upper bound that the
// engine reads exactly; when both round to the same double that is the answer. Otherwise walk up
// from the lower one while the value lies past the midpoint to the next double, comparing in
// exact BigInt arithmetic.
function nearestDouble(digits, exponent, read) {
  if (digits.length > KEPT_DIGITS) {
    exponent += digits.length - KEPT_DIGITS - 1;
    digits = digits.slice(0, KEPT_DIGITS) + "1";
  }
  const head = digits.slice(0, TRUSTED_DIGITS);
  const headExponent = exponent + digits.length - TRUSTED_DIGITS;
  let x = parseFloat(head + "e" + headExponent);
  const top = parseFloat(increment(head) + "e" + headExponent);
  if (x === top) return x;
  const value = BigInt(digits);
  if (read.bits === null) read.bits = doubleView();
  while (x < top && !roundsDown(value, exponent, x, read)) x = nextUp(x, read.bits);
  return x;
}

// True when value * 10^exponent rounds to x rather than to the next double up (x finite, > 0):
// it lies below their midpoint (2f + 1) * 2^(e-1), or on it and x's significand is even. As
// 10^exponent = 5^exponent * 2^exponent, the comparison multiplies one side by a power of five
// and shifts one side once: smaller numbers, and fewer of them, than with a power of ten.
function roundsDown(value, exponent, x, read) {
  const [f, e] = doubleParts(x, read.bits);
  let left = value;
  let right = (f << 1n) | 1n;
  if (exponent >= 0) left *= powerOfFive(exponent, read);
  else right *= powerOfFive(-exponent, read);
  const shift = e - 1 - exponent; // the power of two on the right, over the left's
  if (shift >= 0) right <<= BigInt(shift);
  else left <<= BigInt(-shift);
  return left < right || (left === right && (f & 1n) === 0n);
}

// 10^n and 5^n as BigInts (n >= 0). The exact path of one document asks for the same few powers
// of five again and again, so its Read remembers them; a memo of the module's would be state that
// outlives the call, which verified code may not keep (the gate's purity check).
function powerOfTen(n) {
  return 10n ** BigInt(n);
}

function powerOfFive(n, read) {
  if (read.fives === null) read.fives = new Map();
  let power = read.fives.get(n);
  if (power === undefined) {
    power = 5n ** BigInt(n);
    read.fives.set(n, power);
  }
  return power;
}

// A view of 8 bytes, to read a double's bits. Made per call that needs one (a read, a search),
// never shared between calls; making one costs about a microsecond in V8 (an ArrayBuffer).
function doubleView() {
  return new DataView(new ArrayBuffer(8));
}

// [f, e] with x = f * 2^e exactly: f a BigInt below 2^53, e >= -1074 (x finite, > 0), read
// through `bits`, a doubleView.
function doubleParts(x, bits) {
  bits.setFloat64(0, x);
  const biased = (bits.getUint32(0) >>> 20) & 0x7ff;
  const f = bits.getBigUint64(0) & 0xfffffffffffffn; // the 52 stored bits
  return biased === 0 ? [f, -1074] : [f | 0x10000000000000n, biased - 1075];
}

// The next double up from x (x finite, >= 0): the next bit pattern; after the largest, Infinity.
function nextUp(x, bits) {
  bits.setFloat64(0, x);
  const low32 = bits.getUint32(4);
  if (low32 === 0xffffffff) bits.setUint32(0, bits.getUint32(0) + 1);
  bits.setUint32(4, low32 === 0xffffffff ? 0 : low32 + 1);
  return bits.getFloat64(0);
}

// ---------------------------------------------------------------- balanced-object scanner

// Top-level balanced {...} ranges in u[start:end], in document order, in linear time.
// String- and escape-aware inside braces; quotes outside any brace are prose and ignored.
// Recovery without restarts: an object that closes inside a brace that never closes is
// promoted to top level, and a string cannot span a line feed (JSON forbids it), so a line
// feed inside a string abandons every open brace. Objects nested in a closed object are
// never candidates. The ranges come as one flat list, start and end of each in turn (no array
// per object: a flood of them is thousands). If `strings` is an array, every string literal
// begun inside braces is pushed to it as start, end and 1 if closed (else 0), flat as well: an
// unterminated one ends at the line feed or the end of the text that cut it off.
// Outside every brace only an opening brace matters (SPEC.md 4: quotes and closers there are
// prose), so the scan jumps from one to the next with indexOf, at the engine's search speed:
// prose costs no step of its own. Inside braces each unit is looked at once.
export function scanObjects(u, start, end, strings = null) {
  const found = []; // flat: start, end of each object
  const opens = []; // the index of each open brace
  const pending = []; // flat start, end of the objects closed inside open braces, in document order
  let i = start;
  while (i < end) {
    if (opens.length === 0) {
      // The next brace is looked for unit by unit for a few units, then by indexOf: in a flood of
      // objects the next one is close by (an indexOf costs a call, 0.1 us in SpiderMonkey), and
      // prose is skipped at the engine's search speed.
      const near = i + 8 < end ? i + 8 : end;
      while (i < near && u.charCodeAt(i) !== LBRACE) i += 1;
      if (i === near) {
        i = i < end ? u.indexOf("{", i) : -1;
        if (i === -1 || i >= end) break;
      }
    }
    const c = u.charCodeAt(i);
    if (c === LBRACE) {
      opens.push(i);
    } else if (c === RBRACE) {
      if (opens.length > 0) {
        const opened = opens.pop();
        // Objects nested in this one are not candidates: they are the pending ones that start
        // after its brace, at the end of the list (all of it when no brace stays open).
        if (opens.length > 0) {
          while (pending.length > 0 && pending[pending.length - 2] > opened) pending.length -= 2;
          pending.push(opened, i + 1);
        } else {
          if (pending.length > 0) pending.length = 0;
          found.push(opened, i + 1);
        }
      }
    } else if (c === QUOTE) { // (a brace is open: outside braces the scan never stops here)
      const quoteAt = i;
      i = stringStop(u, i + 1, end);
      if (i === end) { // unterminated at the end of the text
        if (strings !== null) strings.push(quoteAt, end, 0);
        break;
      }
      if (u.charCodeAt(i) === LF) {
        if (strings !== null) strings.push(quoteAt, i, 0);
        for (let k = 0; k < pending.length; k += 1) found.push(pending[k]); // abandon the open braces: their closed children are promoted
        if (pending.length > 0) pending.length = 0;
        opens.length = 0;
      } else if (strings !== null) {
        strings.push(quoteAt, i + 1, 1);
      }
    }
    i += 1;
  }
  for (let k = 0; k < pending.length; k += 1) found.push(pending[k]);
  return found;
}

// Where the string literal whose contents begin at u[i] stops: its closing quote, the line feed
// that cuts it off (an escaped one too: JSON strings cannot hold a raw line feed), or `end`.
function stringStop(u, i, end) {
  while (i < end) {
    const c = u.charCodeAt(i);
    if (c === QUOTE || c === LF) return i;
    if (c === BACKSLASH && i + 1 < end && u.charCodeAt(i + 1) !== LF) i += 2; // the escaped unit is never a stop
    else i += 1;
  }
  return end;
}

export const IN_STRING = 1; // inside any string literal begun within braces, even an unterminated one
export const IN_VALUE = 2; // inside a closed string literal of a closed object: certainly a JSON value

// Per unit: 0 outside string literals, IN_STRING or IN_VALUE inside them.
// A marker written inside a JSON string is part of a value, not markup. Markers that could
// make something run (tags, XML) are ignored at IN_STRING and above; <think>, which stops
// things running, is ignored only at IN_VALUE, so a stray quote can never unmask reasoning.
// Linear: the scanner reports strings and objects in document order.
export function quotedMask(u) {
  const strings = [];
  const objects = scanObjects(u, 0, u.length, strings);
  objects.push(u.length + 1, u.length + 1); // past every string, so the walk needs no bounds check
  const mask = new Uint8Array(u.length);
  let k = 0;
  let objStart = objects[0]; // the first object that does not end before the string
  let objEnd = objects[1];
  for (let n = 0; n < strings.length; n += 3) {
    const stringStart = strings[n];
    const stringEnd = strings[n + 1];
    const closed = strings[n + 2] === 1;
    while (objEnd <= stringStart) {
      k += 2;
      objStart = objects[k];
      objEnd = objects[k + 1];
    }
    const stop = closed ? stringEnd - 1 : stringEnd;
    if (stop > stringStart + 1) {
      const inObject = objStart < stringStart && stringEnd <= objEnd;
      mask.fill(closed && inObject ? IN_VALUE : IN_STRING, stringStart + 1, stop);
    }
  }
  return mask;
}

// ---------------------------------------------------------------- canonical form (RFC 8785)

// RFC 8785 (JCS) text of a value.
export function canonical(value) {
  return emit(value, "", { count: 0, texts: null });
}

// text + the RFC 8785 text of value. The text grows as one string passed along, not as pieces
// pushed to an array and joined at the end: V8 joins a verdict's hundred thousand short pieces
// (a long array of numbers) about three times slower than it appends them, QuickJS about as
// fast. `strings` counts the strings written so far, and past a few holds their texts (quote).
// Numbers are not the engine's (formatNumber), nor is the key order (sorted here, where
// JSON.stringify would put integer-like keys first).
function emit(value, text, strings) {
  if (value === null) return text + "null";
  if (value === true) return text + "true";
  if (value === false) return text + "false";
  if (typeof value === "string") return text + quote(value, strings);
  if (typeof value === "number") return text + formatNumber(value);
  if (Array.isArray(value)) {
    text += "[";
    for (let k = 0; k < value.length; k += 1) {
      if (k) text += ",";
      const item = value[k];
      // A number, the commonest element of long arrays, is written here: no call to emit and
      // none of its tests for other kinds of value.
      text = typeof item === "number" ? text + formatNumber(item) : emit(item, text, strings);
    }
    return text + "]";
  }
  text += "{";
  const keys = Object.keys(value).sort();
  for (let k = 0; k < keys.length; k += 1) {
    if (k) text += ",";
    text += quote(keys[k], strings) + ":";
    text = emit(value[keys[k]], text, strings);
  }
  return text + "}";
}

// Strings written by the canonical text before a Map of their texts is made.
const STRINGS_BEFORE_MAP = 64;

// The JSON text of a string: the engine's JSON.stringify, whose escaping SPEC.md section 3 names
// as the rule and every engine the harness runs follows on every unit (tests/test_engines_js.py).
// A loop over the units here cost QuickJS about 250 ns a unit, three times the parse of a one-call
// response. A verdict that holds many strings repeats a few (keys, formats, tool names, an
// array's items), and past the first few a Map of the texts written so far answers them: in V8 a
// lookup costs a third of a JSON.stringify call, while for the few strings of most verdicts making
// the Map cost QuickJS more than it saved.
function quote(u, strings) {
  if (strings.texts === null) {
    strings.count += 1;
    if (strings.count <= STRINGS_BEFORE_MAP) return JSON.stringify(u);
    strings.texts = new Map();
  }
  let text = strings.texts.get(u);
  if (text === undefined) {
    text = JSON.stringify(u);
    strings.texts.set(u, text);
  }
  return text;
}

// ECMAScript Number::toString for a finite number, computed here rather than by the engine:
// QuickJS-ng prints 17 digits where 16 round-trip (String(2 ** -24) gives
// "5.9604644775390625e-8", V8 "5.960464477539063e-8"), and the contract is bytes. Four searches
// for the digits, each trying the next only where it cannot decide: a decimal of at most 15
// digits found by arithmetic alone (most short values), the nearest decimals of 15, 16 and 17
// digits (two conversions for most doubles), both in json-fast.js, then the round-trip search
// and the exact one.
export function formatNumber(x) {
  if ((x | 0) === x) return String(x); // a 32-bit integer, -0 too ("0"): no call to Number.isSafeInteger
  if (Number.isSafeInteger(x)) return String(x);
  const a = x < 0 ? -x : x;
  let body = fewDigitsText(a);
  if (body === null) {
    // extparity-unreachable: the fallback for engines whose number conversions misbehave
    // (QuickJS-ng's String(x)); V8 never takes it
    const [digits, n] = shortestOfNearest(a) ?? shortestByRoundTrip(a) ?? shortestDigits(a);
    body = layout(digits, n);
  }
  return x < 0 ? "-" + body : body;
}

// The fewest decimal digits that read back as x (x > 0, finite), nearest to x, ties to even:
// [digits, n] with x ~ 0.digits * 10^n, found with the engine's own conversions and checked by
// round trips, so no engine's String(x) is taken on trust (QuickJS-ng's is not always the
// shortest). A decimal of at most 17 digits reads back as x (Number is trusted up to
// TRUSTED_DIGITS) exactly when it lies in x's rounding interval. The length of String(x) is the
// first guess: the nearest decimal of that length must read back (else try longer), and then,
// while one of the two decimals one digit shorter around it reads back, take that one (a shorter
// decimal anywhere in the interval would put one of those two in it too), and finally the nearest
// decimal of the length reached. null if the engine's conversions do not behave as specified;
// then the exact BigInt search decides. (Exported so the tests can start it from any guess.)
// extparity-unreachable: what V8 leaves unrun here is the fallback for engines whose number
// conversions misbehave (QuickJS-ng's String(x))
export function shortestByRoundTrip(x, guess = significantDigits(String(x))) {
  let k = Math.min(guess, 17);
  let found = nearestReadingBack(x, k);
  while (found === null && k < 17) {
    k += 1;
    found = nearestReadingBack(x, k);
  }
  if (found === null) return null;
  let shortened = false;
  for (;;) {
    const [digits, exponent] = found;
    if (digits.length === 1) break;
    const below = digits.slice(0, -1);
    if (readsBack(below, exponent + 1, x)) found = normalized(below, exponent + 1);
    else if (readsBack(increment(below), exponent + 1, x)) found = normalized(increment(below), exponent + 1);
    else break;
    shortened = true;
  }
  if (shortened) found = nearestReadingBack(x, found[0].length);
  return found === null ? null : [found[0], found[1] + found[0].length];
}

// Of the decimals of k significant digits that read back as x, the nearest to x (of two equally
// near, the even one) as [digits, exponent] without trailing zeros, value digits * 10^exponent;
// null if none does. toExponential gives the nearest (ECMAScript defines it so, breaking a tie
// upwards); when that one lies outside x's interval, which is half as wide below a power of two,
// its neighbour across x is the nearest inside.
// extparity-unreachable: what V8 leaves unrun here is the fallback for engines whose number
// conversions misbehave (QuickJS-ng's String(x))
function nearestReadingBack(x, k) {
  const text = x.toExponential(k - 1);
  const e = text.indexOf("e");
  const c = k === 1 ? text.slice(0, 1) : text.slice(0, 1) + text.slice(2, e);
  const exponent = Number(text.slice(e + 1)) - k + 1;
  const value = parseFloat(c + "e" + exponent);
  if (value !== x) {
    const other = value < x ? increment(c) : decrement(c);
    return readsBack(other, exponent, x) ? normalized(other, exponent) : null;
  }
  // x can lie exactly halfway between c - 1 and c only when 5^-exponent divides 2c - 1 (so c
  // ends in 3) and x is a multiple of its own unit, which needs -24 <= exponent <= -1; then the
  // BigInt check is small.
  if (c.charCodeAt(c.length - 1) === 0x33 && exponent >= -24 && exponent <= -1) {
    const lower = decrement(c);
    if (readsBack(lower, exponent, x) && isHalfway(x, 2n * BigInt(c) - 1n, exponent)) return normalized(lower, exponent);
  }
  return normalized(c, exponent);
}

function readsBack(digits, exponent, x) {
  return parseFloat(digits + "e" + exponent) === x;
}

// [digits, exponent] for digits * 10^exponent without trailing zeros.
function normalized(digits, exponent) {
  let end = digits.length;
  // extparity-unreachable: the fallback for engines whose number conversions misbehave
  // (QuickJS-ng's String(x)); V8 never takes it
  while (end > 1 && digits.charCodeAt(end - 1) === 0x30) end -= 1;
  return [digits.slice(0, end), exponent + digits.length - end];
}

// The number of significant digits in a number's String: leading and trailing zeros dropped.
// extparity-unreachable: what V8 leaves unrun here is the fallback for engines whose number
// conversions misbehave (QuickJS-ng's String(x))
function significantDigits(text) {
  const e = text.indexOf("e");
  let first = 0;
  let last = e === -1 ? text.length : e;
  while (first < last && (text.charCodeAt(first) === 0x30 || text.charCodeAt(first) === 0x2e)) first += 1;
  while (last > first && (text.charCodeAt(last - 1) === 0x30 || text.charCodeAt(last - 1) === 0x2e)) last -= 1;
  const point = text.indexOf(".", first);
  return Math.max(last - first - (point !== -1 && point < last ? 1 : 0), 1);
}

// Digit-string arithmetic: digits + 1, and digits - 1 for digits > 0 (no leading zero kept).
function increment(digits) {
  let k = digits.length - 1;
  while (k >= 0 && digits.charCodeAt(k) === 0x39) k -= 1;
  // extparity-unreachable: the fallback for engines whose number conversions misbehave
  // (QuickJS-ng's String(x)); V8 never takes it
  if (k < 0) return "1" + "0".repeat(digits.length);
  return digits.slice(0, k) + String.fromCharCode(digits.charCodeAt(k) + 1) + "0".repeat(digits.length - k - 1);
}

// extparity-unreachable: what V8 leaves unrun here is the fallback for engines whose number
// conversions misbehave (QuickJS-ng's String(x))
function decrement(digits) {
  let k = digits.length - 1;
  while (digits.charCodeAt(k) === 0x30) k -= 1;
  const head = digits.slice(0, k) + String.fromCharCode(digits.charCodeAt(k) - 1) + "9".repeat(digits.length - k - 1);
  return head.length > 1 && head.charCodeAt(0) === 0x30 ? head.slice(1) : head;
}

// True when x = m * 10^exponent / 2 exactly (exponent < 0), in BigInt arithmetic.
function isHalfway(x, m, exponent) {
  const [f, e] = doubleParts(x, doubleView()); // (rare: a possible tie)
  const scaled = f * powerOfTen(-exponent); // x * 10^-exponent = f * 2^e * 10^-exponent
  // extparity-unreachable: the fallback for engines whose number conversions misbehave
  // (QuickJS-ng's String(x)); V8 never takes it
  return e + 1 >= 0 ? scaled << BigInt(e + 1) === m : scaled === m << BigInt(-e - 1);
}

// The exact search behind shortestByRoundTrip, for an engine whose conversions misbehave:
// [digits, n] as above, by BigInt arithmetic over x's rounding interval (exported for the tests).
// extparity-unreachable: the fallback for engines whose number conversions misbehave (QuickJS-ng's
// String(x)); V8 never takes it
export function shortestDigits(x) {
  const [f, e] = doubleParts(x, doubleView());
  const asymmetric = e > -1074 && f === 1n << 52n; // the gap below a power of two is half
  const unit = e >= 0 ? 1n << BigInt(e) : 1n;
  const den = 4n * (e >= 0 ? 1n : 1n << BigInt(-e));
  const v = 4n * f * unit;
  const high = v + 2n * unit;
  const low = v - (asymmetric ? 1n : 2n) * unit;
  const even = f % 2n === 0n;
  let n = Math.floor(Math.log10(x)) + 1;
  while (compareScaled(v, den, n) >= 0) n += 1; // ensure x < 10^n
  while (compareScaled(v, den, n - 1) < 0) n -= 1; // ensure 10^(n-1) <= x
  for (let k = 1; k <= 17; k += 1) {
    const t = k - n;
    const p = powerOfTen(Math.abs(t));
    const [a, b, lo, hi] = t >= 0 ? [v * p, den, low * p, high * p] : [v, den * p, low, high];
    let best = null;
    for (const d of [a / b, a / b + 1n]) {
      const at = d * b;
      const inside = (lo < at && at < hi) || (even && (at === lo || at === hi));
      if (!inside) continue;
      const distance = at > a ? at - a : a - at;
      if (best === null || distance < best[1] || (distance === best[1] && d % 2n === 0n)) best = [d, distance];
    }
    if (best !== null) {
      let digits = best[0].toString();
      let point = n;
      if (digits.length > k) {
        digits = "1";
        point += 1;
      }
      let end = digits.length;
      while (end > 1 && digits[end - 1] === "0") end -= 1;
      return [digits.slice(0, end), point];
    }
  }
  throw new RangeError("no shortest form found");
}

// Sign of v / den - 10^n.
// extparity-unreachable: the fallback for engines whose number conversions misbehave (QuickJS-ng's
// String(x)); V8 never takes it
function compareScaled(v, den, n) {
  const left = n >= 0 ? v : v * powerOfTen(-n);
  const right = n >= 0 ? den * powerOfTen(n) : den;
  return left > right ? 1 : left < right ? -1 : 0;
}

