// A clock that starts at another instant, for the gate's second environments (environments.py).
//
// Why: a verified module that reads the date (a time bomb) agrees with itself in every engine on
// the day the gate runs. Where Playwright's clock does not reach (headless engines, Chromium's
// service worker, Firefox's background), the harness puts this in the realm before the subject
// runs: `Date.now()`, `new Date()` and `Date()` read a clock that started at `startMs` and ticks
// with the real one; dates built from arguments are untouched. Instances are real Dates.
//
// This file is a single function expression: `(<text>)(startMs)`.
(function environmentClock(startMs) {
  "use strict";
  var RealDate = Date;
  var realNow = RealDate.now;
  var offset = startMs - realNow();
  var now = function now() { return realNow() + offset; };
  var ShiftedDate = function Date() {
    if (new.target === undefined) return String(new RealDate(now()));
    var args = arguments.length === 0 ? [now()] : Array.prototype.slice.call(arguments);
    return Reflect.construct(RealDate, args, new.target);
  };
  Object.defineProperty(ShiftedDate, "length", { value: 7 });
  ShiftedDate.prototype = RealDate.prototype;
  ShiftedDate.now = now;
  ShiftedDate.parse = RealDate.parse;
  ShiftedDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, "constructor", { value: ShiftedDate, writable: true, configurable: true });
  Object.defineProperty(globalThis, "Date", { value: ShiftedDate, writable: true, configurable: true, enumerable: false });
})
