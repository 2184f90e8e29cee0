// extparity-sentinel.js: the first background script of the *packed copy* of a Firefox tree.
//
// Why: a background that throws at start-up never answers its users, and nothing else would
// say so. Loaded before the extension's own background scripts, this reports every error the
// background document sees (a top-level throw, a syntax error, a module that failed to load, an
// unhandled rejection) to the harness's loopback server. Wrapped in a function: classic scripts
// of a background page share one global scope.
(() => {
  const ENDPOINT = "@@ENDPOINT@@";
  const report = (text) => {
    fetch(ENDPOINT + "background-error", { method: "POST", headers: { "Content-Type": "text/plain" }, body: text })
      .catch(() => {});
  };
  // First, "I run": without it, the harness cannot tell a page that never loaded this script.
  fetch(ENDPOINT + "sentinel", { method: "POST", body: "" }).catch(() => {});
  // The document's scripts, the probe last, have run by its load event: a probe silent after it
  // did not load.
  addEventListener("load", () => {
    fetch(ENDPOINT + "loaded", { method: "POST", body: "" }).catch(() => {});
  }, { once: true });
  addEventListener("error", (event) => {
    const target = event.target;
    if (target && target !== globalThis && target.tagName) {  // a <script> that failed to load
      report("failed to load " + target.src);
      import(target.src).catch((error) => report(String(error)));  // names the missing module
      return;
    }
    const error = event.error;
    const where = event.filename ? " (" + event.filename + ":" + event.lineno + ")" : "";
    report((error && error.stack ? String(error) + " | " + error.stack.split("\n")[0] : event.message) + where);
  }, true);
  addEventListener("unhandledrejection", (event) => report("unhandled rejection: " + String(event.reason)));
})();
