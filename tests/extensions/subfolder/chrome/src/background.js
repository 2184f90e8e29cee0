// Chrome's service worker: answers {type: "parse-calls", text, allowed} with the verdict text.
import { parseCalls } from "./lib/parser.js";

async function settings() {
  return (await import("./lib/settings.js")).defaults;
}

chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  if (message?.type === "parse-calls") {
    sendResponse({ verdict: parseCalls(message.text, message.allowed) });
    return false;
  }
  if (message?.type === "settings") {
    settings().then(sendResponse);
    return true;
  }
  return false;
});
