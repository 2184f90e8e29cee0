// A tool-call extractor written as other agent parsers write it: the bodies of <tool_call> tags
// and every line that is one JSON object, each through JSON.parse, kept when it names an
// allowed tool. It has none of the contract's rules (no own-line rule for tags, no quoting, no
// think blocks, no strict JSON policies, no all or nothing); it is here only as the speed
// peers reach on the same text, the yardstick of benchmarks/worst_case.py's "extractor" column.
// Returns its calls as JSON text, as the entries return their verdict's text.
globalThis.peerExtractToolCalls = function peerExtractToolCalls(text, allowed) {
  const calls = [];
  const take = (body) => {
    let value;
    try {
      value = JSON.parse(body);
    } catch (error) {
      return;
    }
    if (value !== null && typeof value === "object" && typeof value.name === "string" && allowed.includes(value.name)) {
      calls.push({ name: value.name, arguments: value.arguments ?? {} });
    }
  };
  for (const match of text.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)) take(match[1]);
  for (const match of text.matchAll(/^[ \t]*(\{.*\})[ \t]*,?[ \t]*$/gm)) take(match[1]);
  return JSON.stringify({ calls });
};
