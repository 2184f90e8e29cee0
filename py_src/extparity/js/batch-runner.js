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
  var cases = JSON.parse(casesJson);
  var out = Object.create(null); // a case id "__proto__" must stay an ordinary key
  for (var i = 0; i < cases.length; i++) {
    var c = cases[i];
    var result;
    try {
      var fn = Object.prototype.hasOwnProperty.call(entries, c.fn) ? entries[c.fn] : undefined;
      if (typeof fn !== "function") throw new Error("no entry function for fn " + JSON.stringify(c.fn));
      var verdict = fn.apply(undefined, c.args);
      // Only a promise is awaited: synchronous entries then run in the caller's task, where an
      // engine's time limit can still interrupt them (V8 cannot interrupt a microtask).
      if (verdict !== null && typeof verdict === "object" && typeof verdict.then === "function") {
        verdict = await verdict;
      }
      if (typeof verdict !== "string") {
        throw new TypeError("entry " + c.fn + " returned " + (verdict === null ? "null" : typeof verdict) +
                            ", not a string: give the entry an adapter that returns the verdict text (" +
                            "[tool.extparity.entries." + c.fn + "].adapter, or its message adapter on the message " +
                            "path; README, \"Pointing extparity at your own extension\", step 3)");
      }
      result = { verdict: verdict };
    } catch (e) {
      result = { error: describeThrown(e) };
    }
    out[c.id] = result;
  }
  return asciiJson(out);
})
