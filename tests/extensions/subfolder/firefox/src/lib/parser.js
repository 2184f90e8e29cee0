// Tool calls on lines of their own, kept when the allowlist names them. The verdict is written
// with JSON.stringify, so its numbers are each engine's own shortest round-trip text.
import { candidateLines } from "./lines.js";

export function parseCalls(text, allowed) {
  const calls = [];
  for (const line of candidateLines(text)) {
    let call;
    try {
      call = JSON.parse(line);
    } catch {
      continue;
    }
    if (call && typeof call.name === "string" && allowed.includes(call.name)) {
      calls.push({ name: call.name, arguments: call.arguments ?? {} });
    }
  }
  return JSON.stringify({ calls });
}
