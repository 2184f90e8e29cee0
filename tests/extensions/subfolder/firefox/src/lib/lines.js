// The lines of a model response that could hold a call: trimmed, starting with "{".
export function candidateLines(text) {
  return text.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("{"));
}
