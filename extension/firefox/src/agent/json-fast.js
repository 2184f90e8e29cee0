// The speed layer of json-core.js: shortcuts of its number conversions that either give the
// exact conversion's answer or decline (null), and then json-core.js decides.
//
// json-core.js holds the contract's design (the strict reader, the scanner, the canonical
// writer) in the shape its Python twin json_core.py has, so the two can be read side by side.
// The twin's speed layer is json_fast.py; the two differ, as their languages do. This module
// imports nothing: json-core.js imports it. Pure ECMAScript, as json-core.js.

// 10^0 to 10^22: the powers of ten that are doubles exactly.
export const EXACT_POWERS_OF_TEN = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

// x * 10^k for |k| <= 22, as one correctly rounded IEEE operation on two doubles (10^|k| exact).
export function timesPowerOfTen(x, k) {
  return k < 0 ? x / EXACT_POWERS_OF_TEN[-k] : x * EXACT_POWERS_OF_TEN[k];
}

// ---------------------------------------------------------------- number to text

// ECMAScript's text for 0.digits * 10^n (digits without zeros around).
export function layout(digits, n) {
  const k = digits.length;
  if (k <= n && n <= 21) return digits + "0".repeat(n - k);
  if (0 < n && n <= 21) return digits.slice(0, n) + "." + digits.slice(n);
  if (-6 < n && n <= 0) return "0." + "0".repeat(-n) + digits;
  const e = n - 1;
  const head = k === 1 ? digits : digits[0] + "." + digits.slice(1);
  return head + (e >= 0 ? "e+" + String(e) : "e-" + String(-e));
}

// The text of x > 0 (finite, not a safe integer) if a decimal d * 10^-j with d an integer,
// 1 <= d < 10^15 and |j| <= 22 reads back as x; else null. Found by arithmetic, no conversion:
// d and 10^|j| are exact doubles, so d / 10^j (or d * 10^-j) is one correctly rounded IEEE
// operation, the very reading of the decimal, and comparing it with x decides exactly whether
// the decimal reads back. Such an x is at least 10^-22, a normal double, and a decimal of at most
// 15 significant digits that reads back as a normal double is the only one that does (see
// shortestOfNearest): so it is ECMAScript's shortest, with no tie to break, and its digits are
// d's without trailing zeros. Which j is tried only decides how often this answers: the j that
// puts x * 10^j in [10^14, 10^15), where round(x * 10^j) is the candidate with the most digits
// allowed (if some decimal of at most 15 digits reads back, it is that one: |x * 10^j - d| is
// then below 0.25). Math.log10 may be one off; that costs only a miss. Most short values have
// far fewer digits, so a candidate of at most 8 is tried first: its d fits in 32 bits, and
// losing its trailing zeros takes a few integer steps where a 15-digit d needs divisions.
export function fewDigitsText(x) {
  const e = Math.floor(Math.log10(x)); // 10^e <= x < 10^(e+1), or one off
  if (e < -23 || e > 37) return null; // x below 10^-22 or past 10^38: no such decimal
  return shortDecimalText(x, 7 - e) ?? decimalText(x, 14 - e);
}

// The text of x if round(x * 10^j) / 10^j, below 10^8 (else with j one less), reads back as x.
function shortDecimalText(x, j) {
  if (j > 22) j = 22;
  let d = nearestScaled(x, j, 1e8);
  if (d === null) {
    j -= 1;
    d = nearestScaled(x, j, 1e8);
    if (d === null) return null;
  }
  d |= 0; // below 10^8: the integer steps below stay in 32 bits
  // Drop d's trailing zeros (at most 7, so 4 + 2 + 1 suffice).
  if (d % 10000 === 0) {
    d /= 10000;
    j -= 4;
  }
  if (d % 100 === 0) {
    d /= 100;
    j -= 2;
  }
  if (d % 10 === 0) {
    d /= 10;
    j -= 1;
  }
  const digits = String(d);
  return layout(digits, digits.length - j);
}

// The same with d below 10^15.
function decimalText(x, j) {
  if (j > 22) j = 22;
  let d = nearestScaled(x, j, 1e15);
  if (d === null) {
    j -= 1;
    d = nearestScaled(x, j, 1e15);
    if (d === null) return null;
  }
  // Drop d's trailing zeros (at most 14, so 8 + 4 + 2 + 1 suffice). d / 10^z is exact when 10^z
  // divides d, and otherwise is no integer: the quotient is below 10^(15-z), where doubles are
  // spaced finer than its fraction (a multiple of 10^-z) is far from an integer. So a division
  // and a floor each, not `%`, which V8 computes for a double by a call to fmod (about 50 ns).
  for (let zeros = 8; zeros >= 1; zeros >>= 1) {
    const q = d / EXACT_POWERS_OF_TEN[zeros];
    if (Math.floor(q) === q) {
      d = q;
      j -= zeros;
    }
  }
  const digits = String(d); // a safe integer, which every engine prints exactly
  return layout(digits, digits.length - j);
}

// round(x * 10^j) if it is below `limit` and reads back as x (round(x * 10^j) / 10^j === x);
// else null. |j| <= 22 is required for exact scaling; j > 22 never comes here.
function nearestScaled(x, j, limit) {
  if (j < -22) return null;
  const d = Math.round(timesPowerOfTen(x, j));
  return d < limit && timesPowerOfTen(d, -j) === x ? d : null;
}

const MIN_NORMAL = 2.2250738585072014e-308; // 2^-1022

// The digits of a normal double x > 0 that is not a power of two, as [digits, n] below, from the
// nearest decimals of 16 and then 15 or 17 significant digits (x.toExponential(k - 1), which
// ECMAScript defines as the nearest, breaking a tie upwards), checked by round trips. x's rounding
// interval (the reals that read back as x) is then symmetric about x, so when any decimal of k
// digits reads back, the nearest one of k digits does. Two decimals of at most 15 significant
// digits never read back as the same normal double (their relative spacing, above 1e-15, exceeds
// the interval's relative width, at most 2^-52). So if the nearest 15-digit decimal reads back it
// is the only decimal of 15 digits or fewer that does, and it is the answer without its trailing
// zeros. Otherwise the answer has 16 digits if the nearest 16-digit decimal reads back, else 17.
// null for a subnormal or a power of two (asymmetric interval), for a 16- or 17-digit decimal that
// may be the upper of two equally near (ECMAScript takes the even one), and if a conversion
// misbehaves: then shortestByRoundTrip decides.
export function shortestOfNearest(x) {
  if (x < MIN_NORMAL || isPowerOfTwo(x)) return null;
  let text = x.toExponential(15);
  if (parseFloat(text) === x) {
    const shorter = x.toExponential(14);
    if (parseFloat(shorter) === x) {
      const e = shorter.indexOf("e");
      let end = e;
      while (shorter.charCodeAt(end - 1) === 0x30) end -= 1; // trailing zeros; "5.000e-1" keeps "5."
      return [shorter[0] + shorter.slice(2, end), Number(shorter.slice(e + 1)) + 1];
    }
  } else {
    text = x.toExponential(16);
    // extparity-unreachable: a decimal of 17 significant digits always reads back in V8; the check
    // guards engines that misconvert
    if (parseFloat(text) !== x) return null;
  }
  const e = text.indexOf("e");
  const n = Number(text.slice(e + 1)) + 1;
  // A tie needs x = (2c - 1) * 10^exponent / 2 exactly, c the upper decimal's digits and exponent
  // its last digit's place: then -24 <= exponent <= -1, c ends in 3 or 8 (only an odd c, ending
  // in 3, is the wrong one; see nearestReadingBack), and x * 2^(1 - exponent) is an integer, so
  // x * 2^25 is one too (an exact product).
  const exponent = n - (e - 1);
  if (text.charCodeAt(e - 1) === 0x33 && exponent >= -24 && exponent <= -1 && Number.isInteger(x * 33554432)) return null;
  return [text[0] + text.slice(2, e), n];
}

// True when x (a normal double, > 0) is a power of two, by arithmetic alone (a view of its bits
// costs an ArrayBuffer per call, or state kept between calls). Let y = x, scaled by 2^200 if
// small so that y * 2^-53 is normal too (scaling by a power of two is exact and keeps the
// answer), and y = m * 2^e with 1 <= m < 2. The double nearest y * (1 - 2^-53) is y - 2^(e-53)
// itself when m = 1 (the doubles below 2^e are that far apart), and y - 2^(e-52), one step
// down, when m > 1 (y * 2^-53 is then more than half that step and less than a whole one).
// So y minus it, an exact subtraction, is y * 2^-53 (exact) exactly when m = 1.
function isPowerOfTwo(x) {
  const y = x < 1e-290 ? x * TWO_TO_THE_200 : x;
  return y - y * ONE_MINUS_TWO_TO_THE_MINUS_53 === y * TWO_TO_THE_MINUS_53;
}

const TWO_TO_THE_200 = 1.6069380442589903e60;
const TWO_TO_THE_MINUS_53 = 1.1102230246251565e-16;
const ONE_MINUS_TWO_TO_THE_MINUS_53 = 0.9999999999999999; // the largest double below 1
