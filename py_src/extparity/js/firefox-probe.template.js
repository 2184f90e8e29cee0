// extparity-probe.js: added by the harness to the *packed copy* of the Firefox tree only.
//
// Why it exists: WebDriver BiDi refuses to open moz-extension:// pages, so the harness cannot
// drive the extension's own page as it does in Chromium. Instead this module runs as one
// more background script, talks to the harness over loopback HTTP (the server sends CORS
// headers, so the manifest's permissions stay as shipped), and runs the shared batch runner
// against the extension's modules imported from their moz-extension:// URLs.
//
// Protocol (ENDPOINT = http://127.0.0.1:PORT/TOKEN/):
//   GET  config         -> {"modules": [...], "entries": {...}}
//   POST hashes         <- {path: sha256hex}
//   POST ready          <- "" (modules imported, entries found)
//   GET  chunk/K        -> ASCII case JSON, or HTTP 204 when there is no chunk K
//   POST result/K       <- batch-runner output for chunk K
//   POST done | fatal   <- "" | error text
const ENDPOINT = "@@ENDPOINT@@";

const runBatch = /*@@BATCH_RUNNER@@*/;

/*@@EXT_REALM@@*/

async function extparityPost(path, text) {
  // text/plain keeps this a CORS "simple request": no preflight.
  await fetch(ENDPOINT + path, { method: "POST", headers: { "Content-Type": "text/plain" }, body: text });
}

async function extparityProbe() {
  const urlOf = (path) => browser.runtime.getURL(path);
  try {
    const cfg = await (await fetch(ENDPOINT + "config")).json();
    await extparityPost("hashes", JSON.stringify(await extparityHashModules(urlOf, cfg.modules)));
    const entries = await extparityLoadEntries(urlOf, cfg.modules, cfg.entries);
    await extparityPost("ready", "");
    for (let k = 0; ; k++) {
      const response = await fetch(ENDPOINT + "chunk/" + k);
      if (response.status === 204) break;
      const casesJson = await response.text();
      await extparityPost("result/" + k, runBatch(entries, casesJson));
    }
    await extparityPost("done", "");
  } catch (e) {
    await extparityPost("fatal", String((e && e.stack) ? e + "\n" + e.stack : e));
  }
}

extparityProbe();
