// Message adapter of the `parse` entry for `extparity gate` (see README, "The release gate").
//
// The extension's background answers {type: "parseToolCalls", text, allowed} with the parser's
// verdict object; the subject's own canonical writer turns the reply into the verdict text that
// every other engine gives, so the message path is compared byte for byte with them.
export default async function (send, modules, text, allowed) {
  const reply = await send({ type: "parseToolCalls", text, allowed });
  return modules["src/agent/json-core.js"].canonical(reply);
}
