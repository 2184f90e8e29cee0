// Firefox's background page script: answers {type: "parse-calls", text, allowed} with the
// verdict text, returning a promise as Firefox's runtime.onMessage allows.
import { parseCalls } from "./lib/parser.js";

async function settings() {
  return (await import("./lib/settings.js")).defaults;
}

browser.runtime.onMessage.addListener(async (message) => {
  if (message?.type === "parse-calls") return { verdict: parseCalls(message.text, message.allowed) };
  if (message?.type === "settings") return settings();
  return undefined;
});
