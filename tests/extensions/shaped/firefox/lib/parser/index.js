// Tool calls in model text, as OpenAI-style objects with fresh ids.
import {
  candidateLines,
  parseCandidate,
} from "./scan.js";
import * as ids from "./ids.js";

export async function extractToolCalls(text, { allowedTools }) {
  try {
    const calls = [];
    for (const line of candidateLines(text)) {
      const call = parseCandidate(line);
      if (call && allowedTools.has(call.name)) calls.push(call);
    }
    return calls.map((call) => ({
      id: ids.callId(),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
    }));
  } catch { // extparity-unreachable: defensive: with a string text and a Set of names, nothing in the try throws (a broken line is parseCandidate's null)
    return []; // a bad call must never break the agent loop
  }
}

export { extractToolCalls as default };
export * from "./scan.js";
