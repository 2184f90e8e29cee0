// Message adapter of the `calls` entry: the background answers {type: "extract-tool-calls", text,
// allowed} with {verdict: "<the parser's text>"}.
export default async function (send, modules, text, allowed) {
  const reply = await send({ type: "extract-tool-calls", text, allowed });
  return typeof reply?.verdict === "string" ? reply.verdict : JSON.stringify({ unexpected_reply: reply ?? null });
}
