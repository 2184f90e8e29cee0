// The content path's `send` in its messenger frame (Firefox): each runtime message goes through
// the harness's server to the relay content script in the tab (extparity-content.js), which sends
// it with `browser.runtime.sendMessage` from there.
//
// Why batches: the batch runner starts every case of a chunk before it awaits any, so a chunk's
// messages are asked for together. One request per message would open hundreds of fetches at
// once, more than Firefox keeps open to one server, and the relay's own long poll would queue
// behind them. So the messages asked for in one turn of the event loop go in one request (a JSON
// array), the relay sends them all at once, and the answers come back in one array, in order:
// {"reply": value}, {} for no reply, or {"error": text}.
//
// This file is a single function expression: `const send = (<text>)(ENDPOINT + "send");`.
(function relayedSend(url) {
  "use strict";
  var queued = [];
  function flush() {
    var batch = queued;
    queued = [];
    fetch(url, { method: "POST", headers: { "Content-Type": "text/plain" },
                 body: JSON.stringify(batch.map(function (item) { return item.message; })) })
      .then(function (response) { return response.text(); })
      .then(function (text) {
        var answers = text.charAt(0) === "[" ? JSON.parse(text) : null;
        batch.forEach(function (item, i) {
          var answer = answers ? answers[i] : { error: text || "no reply from the content script" };
          if (answer && "error" in answer) item.reject(new Error(answer.error));
          else item.resolve(answer ? answer.reply : undefined);
        });
      }, function (error) {
        batch.forEach(function (item) { item.reject(error); });
      });
  }
  return function send(message) {
    return new Promise(function (resolve, reject) {
      if (queued.length === 0) setTimeout(flush, 0);
      queued.push({ message: message, resolve: resolve, reject: reject });
    });
  };
})
