// extparity-probe.js via messages: the last background script of the *packed copy* of a Firefox
// tree, when cases go through the extension's own message path.
//
// Why a frame: a background cannot send runtime messages to itself, but a page of the same
// extension can. This script adds extparity-messenger.html (a harness page in the packed copy)
// as a frame of the background document once the background has loaded; that page runs the
// cases through `browser.runtime.sendMessage`, which the background answers as it answers
// the extension's own pages.
(() => {
  // Firefox suspends an idle MV3 background (30 s by default); calls into the extension APIs
  // count as activity, loopback fetches do not.
  setInterval(() => { browser.runtime.getPlatformInfo().catch(() => {}); }, 10000);
  const start = () => {
    const frame = document.createElement("iframe");
    frame.src = "/extparity-messenger.html";  // from the root: the page may be in any folder
    document.documentElement.appendChild(frame);
  };
  if (document.readyState === "complete") start();
  else addEventListener("load", start, { once: true });
})();
