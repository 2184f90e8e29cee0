// Binds each configured entry to a callable, the same way in every JS engine.
//
// An entry is an export of one of the subject's modules. Without an adapter the case's
// arguments go to the export as they are; with one, the adapter (a harness-side module, never
// part of the extension) receives the export first and calls it the module's own way:
// `adapter(target, ...args)`, returning the canonical verdict text or a promise of it.
// A missing export is a start-up error of the engine, reported once, not a per-case error.
//
// This file is a single function expression: `const bindEntries = <text>;`.
//   namespaceOf: function(path) -> the module's exports
//   entries:     {fn: {module, export}}
//   adapters:    {fn: adapter function} for the entries that have one
(function bindEntries(namespaceOf, entries, adapters) {
  "use strict";
  var bound = Object.create(null);
  Object.keys(entries).forEach(function (fn) {
    var entry = entries[fn];
    var namespace = namespaceOf(entry.module);
    var target = namespace ? namespace[entry.export] : undefined;
    if (typeof target !== "function") {
      // A file with no exports at all is a script, not a module: most often a bundle (WXT's
      // background) with the parser inlined in it, which only its messages can reach.
      if (namespace && Object.keys(namespace).length === 0) {
        throw new Error(entry.module + " has no exports at all (entry " + fn + "): the parser is inlined " +
                        "into a script (a bundled background or IIFE), which no module can import; judge " +
                        "it through the message path (via = \"message\", docs/wxt.md) or build the " +
                        "parser as a chunk of its own");
      }
      throw new Error(entry.module + " has no exported function " + entry.export +
                      " (entry " + fn + ")");
    }
    var adapter = adapters[fn];
    bound[fn] = adapter ? function () {
      return adapter.apply(undefined, [target].concat(Array.prototype.slice.call(arguments)));
    } : target;
  });
  return bound;
})
