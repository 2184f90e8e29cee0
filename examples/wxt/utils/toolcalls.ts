// Tool calls on lines of their own, kept when the allowlist names them. The verdict is the
// canonical JSON text of {calls}, written with JSON.stringify.

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

// The lines of a model response that could hold a call: trimmed, starting with "{".
function candidateLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('{'));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// One call from one parsed line, or null when the line is no call the allowlist admits.
function toCall(value: unknown, allowed: readonly string[]): ToolCall | null {
  if (!isObject(value) || typeof value.name !== 'string') return null;
  if (!allowed.includes(value.name)) return null;
  const args = value.arguments ?? {};
  if (!isObject(args)) return null;
  return { name: value.name, arguments: args };
}

// Firefox's build reads each line with its own loop, Chrome's with a filter: a compile-time
// branch that changes the bytes of the two builds, never the verdict.
function parseLines(lines: string[]): unknown[] {
  if (import.meta.env.FIREFOX) {
    const parsed: unknown[] = [];
    for (const line of lines) {
      try {
        parsed.push(JSON.parse(line));
      } catch {
        // not JSON: no call on this line
      }
    }
    return parsed;
  }
  const parsed = lines.map((line) => {
    try {
      return { ok: true, value: JSON.parse(line) as unknown };
    } catch {
      return { ok: false, value: null };
    }
  });
  return parsed.filter((item) => item.ok).map((item) => item.value);
}

export function extractToolCalls(text: unknown, allowed: unknown): string {
  if (typeof text !== 'string') return JSON.stringify({ calls: [], error: 'text-not-string' });
  if (!Array.isArray(allowed) || !allowed.every((name) => typeof name === 'string')) {
    return JSON.stringify({ calls: [], error: 'allowed-not-strings' });
  }
  const calls: ToolCall[] = [];
  for (const value of parseLines(candidateLines(text))) {
    const call = toCall(value, allowed);
    if (call !== null) calls.push(call);
  }
  return JSON.stringify({ calls, error: null });
}
