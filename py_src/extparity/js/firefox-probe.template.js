// extparity-probe.js: the last background script of the *packed copy* of a Firefox tree (or,
// via messages, extparity-messenger.js: the script of a frame that probe adds to the background).
//
// Why it exists: WebDriver BiDi refuses to open moz-extension:// pages, so the harness cannot
// evaluate code in the extension's origin from outside as it does in Chromium. This script
// runs in the extension's background instead, talks to the harness over loopback HTTP (the
// server sends CORS headers, so the manifest's permissions stay as shipped), and runs the
// shared batch runner against the extension's modules imported from their moz-extension://
// URLs, or against its background through `browser.runtime.sendMessage` (from the content path's
// messenger: through the harness's server and the relay content script in a web page's tab,
// extparity-content.js). It waits for its document's `load` event, so the extension's own
// scripts have run.
//
// When the module path and a message path share one Firefox, this probe (the module path's)
// also adds the messenger frames, once its own imports are done: what it imported into the
// background document is then known (`__extparityProbeImported`), and the messenger leaves it out
// of what the background loaded.
//
// Protocol (ENDPOINT = http://127.0.0.1:PORT/TOKEN/CHANNEL/, one channel per path):
//   GET  config         -> {"hash_modules": [...], "import_modules": [...], "entries": {...}}
//   POST hashes         <- {path: sha256hex} of the bytes Firefox serves
//   POST ready          <- runtime.getBrowserInfo() (modules imported, entries bound)
//   GET  next           -> "K\n<ASCII case JSON>" (long poll), or 204: ask again
//   POST result/K       <- batch-runner output for chunk K
//   POST fatal          <- error text
(() => {
  const ENDPOINT = "@@ENDPOINT@@";
  /*@@REALM@@*/
  const post = (route, text) =>
    fetch(ENDPOINT + route, { method: "POST", headers: { "Content-Type": "text/plain" }, body: text });

  // Firefox suspends an idle MV3 background (30 s by default, 300 s at most); fetches do not
  // count as activity, calls into the extension APIs do.
  setInterval(() => { browser.runtime.getPlatformInfo().catch(() => {}); }, 10000);

  async function probe() {
    const urlOf = (path) => browser.runtime.getURL(path);
    try {
      const cfg = await (await fetch(ENDPOINT + "config")).json();
      // In the messenger frame, what the background document actually loaded is hashed too, so a
      // script it loads that the manifest and page do not name shows up as one it should not load.
      // (Less what the module probe imported there itself, when it shares the background.)
      const theirs = window.parent !== window ? window.parent.__extparityProbeImported || [] : [];
      const loaded = window.parent !== window
        ? extparityLoadedScripts(window.parent, urlOf("")).filter((path) => !theirs.includes(path)) : [];
      const hashed = [...new Set([...cfg.hash_modules, ...loaded])];
      await post("hashes", JSON.stringify(await extparityHashModules(urlOf, hashed)));
      let namespaces;
      /*@@BEFORE_IMPORT@@*/
      try {
        namespaces = await extparityImport(urlOf, cfg.import_modules);
      } finally {
        /*@@AFTER_IMPORT@@*/
      }
      const send = /*@@SEND@@*/;
      const entries = /*@@BIND@@*/;
      await post("ready", JSON.stringify(await browser.runtime.getBrowserInfo()));
      for (;;) {
        const response = await fetch(ENDPOINT + "next");
        if (response.status === 204) continue;
        const text = await response.text();
        const cut = text.indexOf("\n");
        await post("result/" + text.slice(0, cut), await runBatch(entries, text.slice(cut + 1)));
      }
    } catch (e) {
      await post("fatal", String(e && e.stack ? e + " | " + e.stack.split("\n")[0] : e));
    }
  }

  if (document.readyState === "complete") probe();
  else addEventListener("load", probe, { once: true });
})();
