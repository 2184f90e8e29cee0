// Message adapter of the `parse` entry for `extparity gate` (see docs/message-path.md).
//
// The extension's background answers {type: "parseToolCalls", text, allowed} with
// {verdict: "<canonical text>"}, the text every other engine gives, so the message path is
// compared byte for byte with them. A refused message ({error: ...}) is written with the
// subject's own canonical writer, so it shows up as the difference it is.
export default async function (send, modules, text, allowed) {
  const reply = await send({ type: "parseToolCalls", text, allowed });
  return typeof reply?.verdict === "string" ? reply.verdict : modules["src/agent/json-core.js"].canonical(reply);
}
