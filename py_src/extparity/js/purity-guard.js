// The purity check at run time, in the headless engines (QuickJS, V8, SpiderMonkey).
//
// Why: the gate's purity check reads the verified modules' syntax, and syntax can be reached
// around (a name built at run time, a prototype walked to Function). Here the clocks, the
// randomness, the locale and code from strings throw when the verified modules call them, so
// such a path fails its case in these engines instead of agreeing with the browsers by chance.
// Evaluated once, before the modules load; the harness's own code in these engines uses none of
// these. What `[tool.extparity.gate].purity` allows (its identifiers, e.g. "Date.now") stays.
//
// This file is a single function expression: `(<text>)(allowed)`, `allowed` a list of identifiers.
(function purityGuard(allowed) {
  "use strict";
  var permitted = Object.create(null);
  allowed.forEach(function (name) { permitted[name] = true; });
  function refusal(name) {
    return function () {
      throw new Error(name + " is not allowed in a verified module (extparity purity; an exception " +
                      "goes in [tool.extparity.gate].purity)");
    };
  }
  function replace(owner, key, name) {
    if (permitted[name] || owner === undefined || owner === null) return;
    var descriptor = Object.getOwnPropertyDescriptor(owner, key);
    if (descriptor === undefined) return;
    Object.defineProperty(owner, key, { value: refusal(name), writable: false, configurable: false, enumerable: false });
  }
  function forbid(name) {  // a global read at all: its getter throws
    if (permitted[name] || !(name in globalThis)) return;
    Object.defineProperty(globalThis, name, { get: refusal(name), configurable: false, enumerable: false });
  }
  var RealDate = Date;
  if (!permitted.Date) {
    var Guarded = function Date() { return refusal("Date")(); };
    ["now", "parse", "UTC"].forEach(function (key) {
      Guarded[key] = permitted["Date." + key] ? RealDate[key] : refusal("Date." + key);
    });
    Guarded.prototype = RealDate.prototype;
    Object.defineProperty(RealDate.prototype, "constructor", { value: Guarded, writable: false, configurable: false });
    Object.defineProperty(globalThis, "Date", { value: Guarded, writable: false, configurable: false, enumerable: false });
  }
  replace(Math, "random", "Math.random");
  ["Intl", "performance", "crypto", "Temporal", "WeakRef", "FinalizationRegistry", "SharedArrayBuffer"].forEach(forbid);
  [[String.prototype, "toLocaleLowerCase"], [String.prototype, "toLocaleUpperCase"], [String.prototype, "localeCompare"],
   [Number.prototype, "toLocaleString"], [Array.prototype, "toLocaleString"], [Object.prototype, "toLocaleString"],
   [BigInt.prototype, "toLocaleString"], [RealDate.prototype, "toLocaleString"], [RealDate.prototype, "toLocaleDateString"],
   [RealDate.prototype, "toLocaleTimeString"]].forEach(function (pair) { replace(pair[0], pair[1], pair[1]); });
  if (typeof Int8Array === "function") replace(Object.getPrototypeOf(Int8Array.prototype), "toLocaleString", "toLocaleString");
  // Code from strings: eval, and Function reached by name or through any function's constructor.
  replace(globalThis, "eval", "eval");
  if (!permitted.Function && !permitted.constructor) {
    [function () {}, function* () {}, async function () {}, async function* () {}].forEach(function (f) {
      replace(Object.getPrototypeOf(f), "constructor", "Function");
    });
    replace(globalThis, "Function", "Function");
  }
})
