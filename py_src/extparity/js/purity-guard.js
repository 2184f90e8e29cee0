// The purity check at run time, in every realm where the harness loads the verified modules:
// the headless engines' (QuickJS, V8, SpiderMonkey), Chromium's page, Firefox's module frame.
//
// Why: the gate's purity check reads the verified modules' syntax, and syntax can be reached
// around (a name built at run time, a prototype walked to Function). Here the clocks, the
// randomness, the locale and code from strings throw when the verified modules call them, so
// such a path fails its case instead of agreeing with the reference by chance, in a browser too.
// Evaluated once, before the modules load (in a browser, after the harness hashed them with
// `crypto.subtle`); the harness's own code after it uses none of these (Playwright's
// page.evaluate calls `eval`: Chromium's chunks go through DevTools instead). What
// `[tool.extparity.gate].purity` allows (its identifiers, e.g. "Date.now") stays.
//
// A module that can tell the guard is there could call the real function only when it is not,
// so each refusal looks like what it replaces: the property keeps its attributes, the function
// its name and length, has no `prototype`, and Function.prototype.toString (itself replaced,
// alike) shows the native text. A forbidden global stays an accessor (reading it at all must
// throw, which a data property cannot): its descriptor tells, and `globalThis`, the only way to
// read it without reading it, is refused by the static check.
//
// This file is a single function expression: `(<text>)(allowed)`, `allowed` a list of identifiers.
(function purityGuard(allowed) {
  "use strict";
  var permitted = Object.create(null);
  allowed.forEach(function (name) { permitted[name] = true; });
  var realToString = Function.prototype.toString;
  var shown = new WeakMap();  // a refusal -> the source text of what it replaced
  var made = new Map();  // what was replaced -> its one refusal (Function === Function.prototype.constructor)
  function refusal(name, real) {
    if (real && made.has(real)) return made.get(real);
    var refuse = ({ refuse() {  // a method: no prototype, not a constructor, as built-ins
      throw new Error(name + " is not allowed in a verified module (extparity purity; an exception " +
                      "goes in [tool.extparity.gate].purity)");
    } }).refuse;
    if (real) made.set(real, refuse);
    return disguised(refuse, real, name.split(".").pop());
  }
  function disguised(fn, real, key) {  // fn, with real's name, length, prototype and source text
    Object.defineProperty(fn, "name", { value: real ? real.name : key, configurable: true });
    Object.defineProperty(fn, "length", { value: real ? real.length : 0, configurable: true });
    shown.set(fn, real ? realToString.call(real) : "function " + key + "() { [native code] }");
    var prototype = real && Object.getOwnPropertyDescriptor(real, "prototype");  // a constructor's
    if (prototype) Object.defineProperty(fn, "prototype", prototype);
    return fn;
  }
  function like(descriptor, value) {
    return { value: value, writable: descriptor.writable, enumerable: descriptor.enumerable,
             configurable: descriptor.configurable };
  }
  function replace(owner, key, name) {
    if (permitted[name] || owner === undefined || owner === null) return;
    var descriptor = Object.getOwnPropertyDescriptor(owner, key);
    if (descriptor === undefined || !("value" in descriptor)) return;
    Object.defineProperty(owner, key, like(descriptor, refusal(name, descriptor.value)));
  }
  var toStringDescriptor = Object.getOwnPropertyDescriptor(Function.prototype, "toString");
  var toString = disguised(({ toString() { return shown.has(this) ? shown.get(this) : realToString.call(this); } }).toString, realToString);
  Object.defineProperty(Function.prototype, "toString", like(toStringDescriptor, toString));
  function forbid(name) {  // a global read at all: its getter throws
    if (permitted[name] || !(name in globalThis)) return;
    Object.defineProperty(globalThis, name, { get: refusal(name), configurable: false, enumerable: false });
  }
  var RealDate = Date;
  if (!permitted.Date) {
    var Guarded = function Date(year, monthIndex, day, hours, minutes, seconds, ms) { return refusal("Date")(); };
    shown.set(Guarded, realToString.call(RealDate));
    ["now", "parse", "UTC"].forEach(function (key) {
      var descriptor = Object.getOwnPropertyDescriptor(RealDate, key);
      Object.defineProperty(Guarded, key, like(descriptor, permitted["Date." + key] ? RealDate[key] :
                                               refusal("Date." + key, RealDate[key])));
    });
    Object.defineProperty(Guarded, "prototype", Object.getOwnPropertyDescriptor(RealDate, "prototype"));
    var constructor = Object.getOwnPropertyDescriptor(RealDate.prototype, "constructor");
    Object.defineProperty(RealDate.prototype, "constructor", like(constructor, Guarded));
    Object.defineProperty(globalThis, "Date", like(Object.getOwnPropertyDescriptor(globalThis, "Date"), Guarded));
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
