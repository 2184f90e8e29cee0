// Message adapter of the `repair` entry for `extparity gate` (see docs/message-path.md).
//
// The extension's background answers {type: "repairArguments", raw} with
// {verdict: "<canonical text>"}; a refused message ({error: ...}) is written with the subject's
// own canonical writer, so it shows up as the difference it is.
export default async function (send, modules, raw) {
  const reply = await send({ type: "repairArguments", raw });
  return typeof reply?.verdict === "string" ? reply.verdict : modules["src/agent/json-core.js"].canonical(reply);
}
