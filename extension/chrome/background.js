/**
 * Background glue: answers runtime messages with the agent modules' verdicts, so extension
 * pages and test harnesses can ask the shipped parser without importing it themselves.
 *
 * Replies carry the verdict as its canonical JSON text ({verdict: "..."}), not as an object:
 * Firefox's message cloning drops own keys named like Object.prototype members (`__proto__`,
 * `constructor`, ...), so an argument object could arrive with keys missing; text arrives
 * byte for byte in every browser, and JSON.parse gives the sender the exact object back.
 *
 * This file is byte-identical in the Chrome and Firefox trees on purpose: Firefox exposes
 * `browser`, Chromium `chrome`, and picking whichever exists at run time keeps the
 * manifests the only files that differ. Replies go through `sendResponse` synchronously,
 * which both browsers support; returning a Promise from the listener is not portable.
 */
import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";
import { repairArgumentsCanonical } from "./src/agent/argument-repair.js";

const api = globalThis.browser ?? globalThis.chrome;

const isStringArray = (value) =>
  Array.isArray(value) && value.every((item) => typeof item === "string");

/** Maps one message to its reply; malformed messages get an error, never a thrown exception. */
function answer(message) {
  try {
    switch (message?.type) {
      case "parseToolCalls":
        if (typeof message.text !== "string" || !isStringArray(message.allowed)) {
          return { error: "bad-message" };
        }
        return { verdict: parseToolCallsCanonical(message.text, message.allowed) };
      case "repairArguments":
        if (typeof message.raw !== "string") return { error: "bad-message" };
        return { verdict: repairArgumentsCanonical(message.raw) };
      default:
        return { error: "unknown-message-type" };
    }
  } catch (err) {
    // A throwing module would otherwise leave the sender with a closed message port.
    return { error: "internal-error", detail: String(err) };
  }
}

api.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  sendResponse(answer(message));
  return false; // replied synchronously
});
