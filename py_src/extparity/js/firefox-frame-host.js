// extparity-probe.js: the last background script of the *packed copy* of a Firefox tree.
//
// Why frames: a background cannot send runtime messages to itself, but a page of the same
// extension can; and the module path's cases run in a realm of their own, under the purity guard,
// as Chromium runs them in a page of the extension: the background realm is the extension's own
// code, glue that no purity rule holds. This script adds the harness's pages of the packed copy
// (the module probe's, the messengers') as frames of the background document once the background
// has loaded; each runs its probe (extparity-probe.template.js). A messenger sends the cases
// through `browser.runtime.sendMessage`, which the background answers as it answers the
// extension's own pages. The content path's messenger (extparity-content-messenger.html) is
// another such frame.
(() => {
  // Firefox suspends an idle MV3 background (30 s by default); calls into the extension APIs
  // count as activity, loopback fetches do not.
  setInterval(() => { browser.runtime.getPlatformInfo().catch(() => {}); }, 10000);
  const start = () => {
    for (const page of /*@@FRAMES@@*/[]) {
      const frame = document.createElement("iframe");
      frame.src = page;  // from the root: the background page may be in any folder
      document.documentElement.appendChild(frame);
    }
  };
  if (document.readyState === "complete") start();
  else addEventListener("load", start, { once: true });
})();
