// Message adapter of the `repair` entry for `extparity gate` (see README, "The release gate").
//
// The extension's background answers {type: "repairArguments", raw} with the repair verdict
// object; the subject's own canonical writer turns the reply into the verdict text.
export default async function (send, modules, raw) {
  const reply = await send({ type: "repairArguments", raw });
  return modules["src/agent/json-core.js"].canonical(reply);
}
