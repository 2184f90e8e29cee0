// Batch runner shared by every JS engine (QuickJS, V8, SpiderMonkey, Chromium, Firefox).
//
// Why one piece of code: if each engine had its own loop, a difference in how cases are
// dispatched, how throws are reported or how results are encoded could pass for a parser
// divergence. Every engine evaluates exactly this text.
//
// Why ASCII-only JSON in and out: verdicts and inputs may hold lone surrogates, NUL and
// U+2028. The Python<->QuickJS bridge cuts strings at NUL and rejects lone surrogates, and
// HTTP bodies / CDP messages re-encode text as UTF-8 (which cannot carry lone surrogates).
// JSON text whose every character is < 0x7f crosses all of them unchanged.
//
// This file is a single async function expression. Engines use it as `const runBatch = <text>;`.
//   entries:   {fn: function(...args) -> string | Promise<string>}, from bind-entries.js
//   casesJson: ASCII JSON text of [{id, fn, args: [...]}, ...]
//   resolves:  ASCII JSON text of {id: {"verdict": string} | {"error": string}}
(async function runBatch(entries, casesJson) {
  "use strict";
  function describeThrown(e) {
    try {
      if (e !== null && typeof e === "object" && typeof e.message === "string") {
        return String(e.name) + ": " + e.message;
      }
      return "thrown " + typeof e + ": " + String(e);
    } catch (_) {
      return "thrown value could not be converted to a string";
    }
  }
  function asciiJson(value) {
    // JSON.stringify already escapes controls, NUL and lone surrogates (ES2019); the
    // replace escapes everything else >= 0x7f, one UTF-16 code unit at a time.
    return JSON.stringify(value).replace(/[\u007f-\uffff]/g, function (ch) {
      return "\\u" + ("0000" + ch.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function checked(fn, verdict) {
    if (typeof verdict !== "string") {
      throw new TypeError("entry " + fn + " returned " + (verdict === null ? "null" : typeof verdict) +
                          ", not a string: give the entry an adapter that returns the verdict text (" +
                          "[tool.extparity.entries." + fn + "].adapter, or its message adapter on the message " +
                          "path; docs/quickstart.md, \"Pointing extparity at your own extension\", step 3)");
    }
    return { verdict: verdict };
  }
  var cases = JSON.parse(casesJson);
  var out = Object.create(null); // a case id "__proto__" must stay an ordinary key
  // Every case is started first, in order; only then are the promises among them awaited, in
  // order. Synchronous entries run to the end in the caller's task as before (where an engine's
  // time limit can still interrupt them: V8 cannot interrupt a microtask); asynchronous ones
  // (the message path: one runtime message per case) then wait for their replies together
  // instead of one after the other, which is what a round trip between two processes costs.
  var waiting = [];
  for (var i = 0; i < cases.length; i++) {
    var c = cases[i];
    try {
      var fn = Object.prototype.hasOwnProperty.call(entries, c.fn) ? entries[c.fn] : undefined;
      if (typeof fn !== "function") throw new Error("no entry function for fn " + JSON.stringify(c.fn));
      var verdict = fn.apply(undefined, c.args);
      if (verdict !== null && typeof verdict === "object" && typeof verdict.then === "function") {
        verdict.then(null, function () {});  // handled: it is awaited below, after the others start
        out[c.id] = null;
        waiting.push([c, verdict]);
        continue;
      }
      out[c.id] = checked(c.fn, verdict);
    } catch (e) {
      out[c.id] = { error: describeThrown(e) };
    }
  }
  for (var k = 0; k < waiting.length; k++) {
    try {
      out[waiting[k][0].id] = checked(waiting[k][0].fn, await waiting[k][1]);
    } catch (e) {
      out[waiting[k][0].id] = { error: describeThrown(e) };
    }
  }
  return asciiJson(out);
})
