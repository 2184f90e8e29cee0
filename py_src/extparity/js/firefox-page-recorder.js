// Added to extparity-probe.js when the harness asks which scripts the add-on's pages run (the
// gate's page scripts check). WebDriver BiDi cannot open moz-extension:// pages, the add-on
// can: once the background has loaded, each page opens in a tab of its own, its window is read
// through extension.getViews (same origin), and every script its document loaded is hashed
// from the bytes Firefox serves. A page is read once it has loaded and its script list stayed
// the same for QUIET_MS, at most WAIT_MS after its load. One report: POST pages. It starts when
// the harness says so (GET pages/start, long-polled): at once in a browser of the check's own,
// in the gate's run's browser only once every case is done, so no page's code reaches a case.
(() => {
  const ENDPOINT = "@@ENDPOINT@@";
  const PAGES = /*@@PAGES@@*/[];
  const QUIET_MS = 300, WAIT_MS = 3000, OPEN_MS = 15000;
  /*@@EXT_REALM@@*/
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const urlOf = (path) => browser.runtime.getURL(path);

  async function loadedView(url) {
    const deadline = performance.now() + OPEN_MS;
    for (;;) {
      const view = browser.extension.getViews({ type: "tab" }).find((w) => w.location.href === url);
      if (view && view.document.readyState === "complete") return view;
      if (performance.now() > deadline) throw new Error(url + " did not load within " + OPEN_MS + " ms");
      await sleep(50);
    }
  }

  async function scriptsOf(page) {
    const url = urlOf(page);
    const tab = await browser.tabs.create({ url, active: false });
    try {
      const view = await loadedView(url);
      const deadline = performance.now() + WAIT_MS;
      let scripts = extparityLoadedScripts(view, urlOf(""));
      for (;;) {
        await sleep(QUIET_MS);
        const now = extparityLoadedScripts(view, urlOf(""));
        if (now.length === scripts.length || performance.now() > deadline) break;
        scripts = now;
      }
      return await extparityHashModules(urlOf, extparityLoadedScripts(view, urlOf("")));
    } finally {
      await browser.tabs.remove(tab.id).catch(() => {});
    }
  }

  async function record() {
    const report = { pages: {}, error: null };
    try {
      for (const page of PAGES) report.pages[page] = await scriptsOf(page);
    } catch (e) {
      report.error = String(e);
    }
    await fetch(ENDPOINT + "pages", { method: "POST", headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(report) });
  }

  async function recordWhenTold() {
    for (;;) {
      try {
        if ((await fetch(ENDPOINT + "pages/start")).status === 200) return record();
      } catch (e) {
        await sleep(200);  // the server is busy or gone; a browser it left is stopped with it
      }
    }
  }

  if (document.readyState === "complete") recordWhenTold();
  else addEventListener("load", recordWhenTold, { once: true });
})();
