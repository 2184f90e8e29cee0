// extparity-probe.js via messages: the last background script of the *packed copy* of a Firefox
// tree, when cases go through the extension's own message path.
//
// Why a frame: a background cannot send runtime messages to itself, but a page of the same
// extension can. This script adds the messenger pages of the packed copy (harness pages)
// as frames of the background document once the background has loaded; each runs the
// cases through `browser.runtime.sendMessage`, which the background answers as it answers
// the extension's own pages. The content path's messenger (extparity-content-messenger.html) is
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
