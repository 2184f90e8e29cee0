// The WebExtension API of the headless message path: what a background needs to answer runtime
// messages, in QuickJS, V8 and SpiderMonkey (engines with `via = "message"`).
//
// Why: a bundler (WXT, Vite, Plasmo) often inlines the parser into a background script with no
// exports, which no module engine can call. The background as built is evaluated here on top of
// this shim, and each case is a runtime message to its listeners, as the browsers' message path
// sends it: the same bytes, three more engine families. The shim is small on purpose and says
// what it does not have instead of inventing it:
//   - runtime: `id`, `getURL`, `getManifest` (the tree's manifest), `onMessage` (listeners get
//     `(message, sender, sendResponse)`; a reply is `sendResponse(value)`, called at once or
//     later after the listener returned `true`, or the value of a promise the listener returns,
//     as Firefox allows), and events that never fire (`onInstalled`, `onStartup`, `onConnect`,
//     `onMessageExternal`, `onSuspend`);
//   - `console`, whose methods print nothing (a background's log is not its verdict);
//   - everything else the background touches at run time (`storage`, `i18n`, `tabs`,
//     `runtime.sendMessage` ...) throws an Error that names it and this file, never a quiet
//     `undefined`: a verdict that depended on it would be the shim's, not the extension's.
// Messages and replies cross as JSON text, as Chromium serializes them (so a value JSON cannot
// carry is not carried). `chrome` and `browser` are the same object. A message no listener
// answers resolves with undefined, as in Firefox; bind-messages.js then names the cause.
//
// This file is a single function expression: `(<text>)(manifest)`; it returns `send(message)`.
(function installWebExtensionShim(manifest) {
  "use strict";
  var ORIGIN = "chrome-extension://extparity-headless/";
  function missing(name) {
    return function () {
      throw new Error(name + " is not in extparity's headless message path (js/webext-shim.js has " +
                      "runtime.onMessage and no " + name + "): judge this background in a browser engine");
    };
  }
  function missingArea(prefix, names) {
    var area = {};
    names.forEach(function (name) { area[name] = missing(prefix + "." + name); });
    return area;
  }
  function event() {
    var listeners = [];
    return {
      listeners: listeners,
      addListener: function (fn) { if (listeners.indexOf(fn) < 0) listeners.push(fn); },
      removeListener: function (fn) { var at = listeners.indexOf(fn); if (at >= 0) listeners.splice(at, 1); },
      hasListener: function (fn) { return listeners.indexOf(fn) >= 0; },
      hasListeners: function () { return listeners.length > 0; }
    };
  }
  function viaJson(value) {
    var text = JSON.stringify(value);
    return text === undefined ? undefined : JSON.parse(text);
  }
  var onMessage = event();
  var storageArea = missingArea("storage", ["get", "set", "remove", "clear", "getBytesInUse"]);
  var api = {
    runtime: {
      id: "extparity-headless",
      lastError: undefined,
      getURL: function (path) { return ORIGIN + String(path).replace(/^\//, ""); },
      getManifest: function () { return viaJson(manifest); },
      onMessage: { addListener: onMessage.addListener, removeListener: onMessage.removeListener,
                   hasListener: onMessage.hasListener, hasListeners: onMessage.hasListeners },
      onInstalled: event(), onStartup: event(), onConnect: event(), onMessageExternal: event(), onSuspend: event(),
      sendMessage: missing("runtime.sendMessage"),
      connect: missing("runtime.connect"),
      getPlatformInfo: missing("runtime.getPlatformInfo")
    },
    storage: { local: storageArea, sync: storageArea, session: storageArea, managed: storageArea, onChanged: event() },
    i18n: missingArea("i18n", ["getMessage", "getUILanguage", "getAcceptLanguages", "detectLanguage"]),
    tabs: missingArea("tabs", ["query", "sendMessage", "create", "update", "get"]),
    action: missingArea("action", ["setBadgeText", "setIcon", "setTitle"])
  };
  var quiet = function () {};
  globalThis.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet };
  globalThis.chrome = api;
  globalThis.browser = api;

  return function send(message) {
    var delivered = viaJson(message);
    var sender = { id: api.runtime.id, url: ORIGIN + "extparity-messenger.html", origin: ORIGIN.slice(0, -1) };
    return new Promise(function (resolve, reject) {
      var answered = false;
      var waiting = false;
      function respond(reply) {
        if (!answered) { answered = true; resolve(viaJson(reply)); }
      }
      onMessage.listeners.slice().forEach(function (listener) {
        var result;
        try {
          result = listener(delivered, sender, respond);
        } catch (error) {
          return;  // a throwing listener answers nothing, as in the browsers
        }
        if (result === true) {
          waiting = true;
        } else if (result !== null && typeof result === "object" && typeof result.then === "function") {
          waiting = true;
          result.then(function (value) { respond(value); }, function (error) {
            if (!answered) { answered = true; reject(new Error(String(error && error.message || error))); }
          });
        }
      });
      if (!answered && !waiting) resolve(undefined);
    });
  };
})
