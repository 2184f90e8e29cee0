// Answers {type: "tool-calls", text, allowed} with the calls the parser finds.
import extract from "./lib/parser/index.js";

const api = globalThis.browser ?? globalThis.chrome;

api.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  if (message?.type !== "tool-calls") return false;
  extract(message.text, { allowedTools: new Set(message.allowed) }).then(sendResponse);
  return true; // answered asynchronously
});
