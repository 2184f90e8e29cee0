// extparity-content.js: a content script the harness adds to the *packed copy* of a Firefox tree
// for the message path from a content script (`sender = "content"`), with the same `matches` as
// the extension's first content script, so it reaches no site the extension does not.
//
// Why a relay: Firefox over WebDriver BiDi cannot evaluate in a content script's world, and a
// content script cannot import the extension's modules (they are not web-accessible), which the
// adapters need. So the cases run in an extension frame of the background (the content path's
// messenger), whose `send` (firefox-relayed-send.js) goes through the harness's server to this
// script, and this script sends each message with `browser.runtime.sendMessage`: the background
// sees it as it sees the extension's content scripts (`sender.url` the web page's, `sender.tab`
// the tab).
//
// Protocol (ENDPOINT = http://127.0.0.1:PORT/TOKEN/content/):
//   POST relay/ready      <- the page's URL
//   GET  relay/next       -> "K\n<JSON array of messages>" (long poll), or 204: ask again
//   POST relay/reply/K    <- JSON array of answers, in order: {"reply": value}, {} (no reply)
//                            or {"error": text}
(() => {
  const ENDPOINT = "@@ENDPOINT@@";
  const post = (route, text) =>
    fetch(ENDPOINT + route, { method: "POST", headers: { "Content-Type": "text/plain" }, body: text });
  const answer = (message) => Promise.resolve().then(() => browser.runtime.sendMessage(message)).then(
    (reply) => ({ reply }), (e) => ({ error: String(e && e.message || e) }));

  async function relay() {
    await post("relay/ready", location.href);
    for (;;) {
      const response = await fetch(ENDPOINT + "relay/next");
      if (response.status === 204) continue;
      if (response.status !== 200) return;  // the harness has closed its server
      const text = await response.text();
      const cut = text.indexOf("\n");
      const answers = await Promise.all(JSON.parse(text.slice(cut + 1)).map(answer));
      let body;
      try {
        body = JSON.stringify(answers);
      } catch (e) {  // a reply JSON cannot write (a BigInt, a cycle)
        body = JSON.stringify(answers.map((a) => ({ error: "the reply cannot be written as JSON: " + e })));
      }
      await post("relay/reply/" + text.slice(0, cut), body);
    }
  }

  relay().catch(() => {});  // a fetch that fails: the harness is gone, and so is this tab
})();
