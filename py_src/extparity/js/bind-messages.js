// Binds each configured entry to the extension's own message path, the same way in every browser.
//
// Why: users' code does not import the parser, it asks the background, so a parser that behaves
// differently only where the background runs (Chromium's service worker, Firefox's background
// page) or a background that never answers is only seen through that path. A message adapter
// (a harness-side module, never part of the extension) maps a case to a message and the reply to
// the verdict text: `adapter(send, modules, ...args)`, where `send(message)` resolves with the
// background's reply and `modules` maps every module the entries reach to its namespace, so the
// adapter can write the reply with the subject's own canonical serializer. Each case is then
// replayed to the adapter with the same reply and other arguments: a verdict that changes is
// not the background's, and the case fails (an adapter cannot substitute the module's verdict).
// The other arguments are another case's of the same entry (the one started before it, or the
// latest, for the first), so the replay looks like a case; only where no other case differs are
// they this case's own with each string reversed. The purity check refuses an adapter that
// keeps state, which could otherwise answer the replay from memory.
//
// This file is a single function expression: `const bindMessages = <text>;`.
//   send:       function(message) -> Promise of the background's reply
//   namespaces: {path: module namespace}
//   entries:    {fn: {module, export}} (only the names are used here)
//   adapters:   {fn: message adapter}
(function bindMessages(send, namespaces, entries, adapters) {
  "use strict";
  // A message no listener answers resolves with undefined (Firefox) or rejects with one of these
  // (Chromium): either way the background has no message that runs the entry, and says so here.
  var NO_RECEIVER = /Receiving end does not exist|message port closed before a response was received/;
  function noReply(message, why) {
    var shown = JSON.stringify(message);
    shown = shown.length > 80 ? shown.slice(0, 77) + "..." : shown;
    return new Error("the background sent no reply to " + shown +
                     ": no runtime.onMessage listener answered it" + (why ? " (" + why + ")" : ""));
  }
  function ask(message) {
    return Promise.resolve(send(message)).then(function (reply) {
      if (reply === undefined) throw noReply(message, "");
      return reply;
    }, function (error) {
      var text = String(error && error.message || error);
      throw NO_RECEIVER.test(text) ? noReply(message, text) : error;
    });
  }
  var bound = Object.create(null);
  var modules = Object.freeze(Object.assign(Object.create(null), namespaces));
  // Other arguments of the same shape: each string reversed (and marked as well), in lists too.
  function reversed(value, mark) {
    if (typeof value === "string") return mark + value.split("").reverse().join("");
    return Array.isArray(value) ? value.map(function (item) { return reversed(item, mark); }) : value;
  }
  var latest = Object.create(null);  // entry -> the arguments of its case that started last
  // The arguments of the case started before this one, or of the latest one (after it, for the
  // first case), whichever differs from this case's; else this case's own reversed, and marked
  // only if that changes nothing (a palindrome, no strings at all).
  function otherArguments(before, fn, args) {
    var own = JSON.stringify(args);
    var candidates = [before, latest[fn], args.map(function (value) { return reversed(value, ""); })];
    for (var k = 0; k < candidates.length; k++) {
      if (candidates[k] !== undefined && JSON.stringify(candidates[k]) !== own) return candidates[k];
    }
    return args.map(function (value) { return reversed(value, "\u2063"); });
  }
  Object.keys(entries).forEach(function (fn) {
    var adapter = adapters[fn];
    if (typeof adapter !== "function") {
      throw new Error("entry " + fn + " has no message adapter ([tool.extparity.gate].messages)");
    }
    bound[fn] = async function () {
      var args = Array.prototype.slice.call(arguments);
      var before = latest[fn];
      latest[fn] = args;
      var replies = [];
      var recorded = function (message) {
        return Promise.resolve(ask(message)).then(function (reply) { replies.push(reply); return reply; });
      };
      var verdict = await adapter.apply(undefined, [recorded, modules].concat(args));
      // The adapter may only shape the background's reply: given the same replies and other
      // arguments, it must give the same verdict. One that computes its own (with the modules it
      // receives) gives the verdict of the other arguments instead, and the case fails.
      var replayed = 0;
      var replay = function () { return Promise.resolve(replies[replayed++]); };
      var again = await adapter.apply(undefined, [replay, modules].concat(otherArguments(before, fn, args)));
      if (again !== verdict) {
        throw new Error("the message adapter of " + fn + " returned a verdict that is not the background's " +
                        "reply: with the same reply and other arguments it returned another one");
      }
      return verdict;
    };
  });
  return bound;
})
