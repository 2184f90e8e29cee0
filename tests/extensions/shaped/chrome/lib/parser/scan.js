// Candidate calls: lines that hold one JSON object and nothing else.
export function candidateLines(text) {
  return text.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("{") && line.endsWith("}"));
}

export function parseCandidate(line) {
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  return value && typeof value.name === "string" ? { name: value.name, arguments: value.arguments } : null;
}
