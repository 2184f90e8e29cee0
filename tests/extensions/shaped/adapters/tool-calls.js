// Calls extractToolCalls the extension's own way (a Set of names, an options object, async) and
// keeps what is deterministic: each call's name and parsed arguments, not its time-based id.
export default async function (extractToolCalls, text, allowed) {
  const calls = await extractToolCalls(text, { allowedTools: new Set(allowed) });
  return JSON.stringify({
    calls: calls.map((call) => ({ name: call.function.name, arguments: JSON.parse(call.function.arguments) })),
  });
}
