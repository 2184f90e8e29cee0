// extparity-module.js, extparity-messenger.js, extparity-content-messenger.js: the script of the
// harness's frame of each path, which extparity-probe.js (js/firefox-frame-host.js), the last
// background script of the *packed copy* of a Firefox tree, adds to the background document.
//
// Why it exists: WebDriver BiDi refuses to open moz-extension:// pages, so the harness cannot
// evaluate code in the extension's origin from outside as it does in Chromium. This script
// runs in a page of the extension instead, talks to the harness over loopback HTTP (the
// server sends CORS headers, so the manifest's permissions stay as shipped), and runs the
// shared batch runner against the extension's modules imported from their moz-extension://
// URLs, or against its background through `browser.runtime.sendMessage` (from the content path's
// messenger: through the harness's server and the relay content script in a web page's tab,
// extparity-content.js). Its frame is added at the background's `load` event, so the
// extension's own scripts have run.
//
// The purity guard (js/purity-guard.js) goes in once the modules are hashed (the digest is
// `crypto.subtle`, which it refuses) and before they are imported: their top level runs under
// it, as in the headless engines. A messenger's frame guards its message adapter.
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
      // Via messages, what the background document actually loaded is hashed too, so a script
      // it loads that the manifest and page do not name shows up as one it should not load.
      const loaded = /*@@VIA_MESSAGE@@*/false ? extparityLoadedScripts(window.parent, urlOf("")) : [];
      const hashed = [...new Set([...cfg.hash_modules, ...loaded])];
      await post("hashes", JSON.stringify(await extparityHashModules(urlOf, hashed)));
      /*@@GUARD@@*/
      const namespaces = await extparityImport(urlOf, cfg.import_modules);
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
