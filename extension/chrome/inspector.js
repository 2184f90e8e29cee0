/**
 * Tool Call Inspector page.
 *
 * Imports the agent modules directly rather than messaging the background: the page then
 * shows exactly what the shipped modules return, behaves the same in both browsers, and
 * does not depend on the background being awake. User text only ever reaches the DOM via
 * textContent or text nodes, never innerHTML, so pasted markup stays inert.
 * Spans are [start, end) offsets in UTF-16 code units, i.e. plain JS string indices.
 *
 * Only the entries the release gate verifies are called: their canonical verdict text is what
 * the gate compares across engines, so the page shows those bytes. Arguments are shown as
 * that text's own slices (canonical JSON already), the rest is read with JSON.parse.
 */
import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";
import { repairArgumentsCanonical } from "./src/agent/argument-repair.js";

const EXAMPLE_OUTPUT = [
  "I'll open the account settings first.",
  '{"name": "navigate", "arguments": {"url": "https://example.com/settings"}}',
  'I could remove the account with {"name": "click", "arguments": {"selector": "#delete-account"}}, ' +
    "but that is destructive, so I will not.",
  "Now let me read what the page says:",
  '<tool_call>{"name": "read_page", "arguments": {"max_chars": 2000}}</tool_call>',
].join("\n");

// What each rejection reason means, in a person's words (SPEC.md section 7 has the contract's).
const WHY = {
  "not-own-line": "written into a sentence or beside other text on its line: narration, not a call",
  "sibling-rejected": "would run, but another call of the same output was refused, so none runs",
  "too-many-calls": "the output holds more than 16 calls, so none runs",
  "unsafe-key": "its arguments hold a __proto__, constructor or prototype key",
  "not-allowed": "the tool is not in the allowed list",
  "unclosed-tag": "an opener whose closer never comes (or comes after another opener)",
  "empty-tag": "a tag with nothing inside",
  "invalid-json": "not valid JSON",
  "not-a-call": "JSON that is not a tool call",
  "unknown-key": "a key that no call has",
  "bad-name": "the name is missing, empty or not a string",
  "ambiguous-arguments": "both arguments and parameters are given",
  "bad-arguments": "the arguments are not one JSON object",
  "duplicate-key": "a key given twice",
  "lone-surrogate": "text that is not well-formed Unicode",
  "number-out-of-range": "a number JSON readers disagree on (too large, or not finite)",
  "too-deep": "nested more than 64 levels",
  "invalid-call-syntax": "call:name{…} written wrongly",
  "xml-malformed": "a <function=…> element written wrongly",
};

const EXAMPLE_ARGUMENTS = '{"selector": "#save", "options": {"scroll": true, "timeout_ms": 1500';

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function wrap(tag, className, child) {
  const node = el(tag, className);
  node.append(child);
  return node;
}

function isValidSpan(span, length) {
  return (
    Array.isArray(span) &&
    span.length === 2 &&
    span.every(Number.isInteger) &&
    span[0] >= 0 &&
    span[0] <= span[1] &&
    span[1] <= length
  );
}

function showError(node, message) {
  node.textContent = message ?? "";
  node.hidden = !message;
}

/**
 * Renders `text` into `container` with each mark's span highlighted and labelled.
 * Cuts the text at every span boundary, so overlapping spans still render sensibly.
 */
function renderHighlights(container, text, marks) {
  const points = [...new Set([0, text.length, ...marks.flatMap((m) => m.span)])].sort(
    (a, b) => a - b,
  );
  container.replaceChildren();
  points.forEach((at, i) => {
    for (const m of marks) {
      if (m.span[0] === at) container.append(el("span", `badge ${m.kind}`, m.label));
    }
    if (i + 1 === points.length) return;
    const piece = text.slice(at, points[i + 1]);
    const covering = marks.filter((m) => m.span[0] <= at && points[i + 1] <= m.span[1]);
    if (covering.length === 0) {
      container.append(piece);
      return;
    }
    const kind = covering.some((m) => m.kind === "call") ? "call" : "rejected";
    const mark = el("mark", kind, piece);
    mark.title = covering.map((m) => m.label).join(", ");
    container.append(mark);
  });
}

function fillTable(table, rows, columns) {
  const body = table.tBodies[0];
  body.replaceChildren();
  if (rows.length === 0) {
    const cell = el("td", "empty", "None");
    cell.colSpan = columns;
    body.append(wrap("tr", "", cell));
    return;
  }
  for (const cells of rows) {
    const tr = el("tr");
    tr.append(...cells);
    body.append(tr);
  }
}

function excerpt(text, span) {
  if (!isValidSpan(span, text.length)) return `invalid span ${JSON.stringify(span)}`;
  const piece = text.slice(span[0], span[1]).replace(/\s+/g, " ");
  return piece.length > 60 ? `${piece.slice(0, 57)}...` : piece;
}

// The end of the JSON value that starts at text[i]. The text is canonical JSON (no whitespace),
// so a value ends where its brackets balance outside strings, or at the next , ] or }.
function valueEnd(text, i) {
  let depth = 0;
  for (let k = i; k < text.length; k += 1) {
    const c = text[k];
    if (c === '"') {
      k += 1;
      while (text[k] !== '"') k += text[k] === "\\" ? 2 : 1;
      if (depth === 0) return k + 1;
    } else if (c === "{" || c === "[") {
      depth += 1;
    } else if (c === "}" || c === "]") {
      if (depth === 0) return k;
      depth -= 1;
      if (depth === 0) return k + 1;
    } else if (c === "," && depth === 0) {
      return k;
    }
  }
  return text.length;
}

// The canonical text of each call's arguments in a canonical parse verdict: the calls come first
// ({"calls":[...), and each call's first key is "arguments" (RFC 8785 sorts the keys).
function callArgumentTexts(text) {
  const texts = [];
  let i = '{"calls":['.length;
  while (text[i] === "{") {
    const start = i + '{"arguments":'.length;
    texts.push(text.slice(start, valueEnd(text, start)));
    i = valueEnd(text, i) + 1; // past the call and the comma or bracket after it
  }
  return texts;
}

// The canonical text of a canonical repair verdict's arguments: they follow its actions.
function repairArgumentText(text) {
  const actionsEnd = valueEnd(text, '{"actions":'.length);
  const start = actionsEnd + ',"arguments":'.length;
  return text.slice(start, valueEnd(text, start));
}

function renderParse() {
  const text = $("model-output").value;
  const allowed = $("allowlist")
    .value.split(",")
    .map((name) => name.trim())
    .filter(Boolean);

  let verdict;
  let argumentTexts = [];
  let problem = null;
  try {
    const canonical = parseToolCallsCanonical(text, allowed);
    verdict = JSON.parse(canonical);
    argumentTexts = callArgumentTexts(canonical);
  } catch (err) {
    problem = `The parser threw: ${err}`;
    verdict = { calls: [], rejected: [], rejected_omitted: 0, error: null };
  }
  if (verdict.error) problem = `Parser error: ${verdict.error}`;
  showError($("parse-error"), problem);

  const calls = verdict.calls ?? [];
  const rejected = verdict.rejected ?? [];
  const marks = [
    ...calls.map((c, i) => ({ kind: "call", label: `C${i + 1}`, span: c.span })),
    ...rejected.map((r, i) => ({ kind: "rejected", label: `R${i + 1}`, span: r.span })),
  ].filter((m) => isValidSpan(m.span, text.length));
  renderHighlights($("rendered"), text, marks);

  $("calls-count").textContent = String(calls.length);
  fillTable(
    $("calls"),
    calls.map((c, i) => [
      el("td", "nowrap", `C${i + 1}`),
      el("td", "", c.name),
      el("td", "nowrap", c.format),
      wrap("td", "args", el("code", "", argumentTexts[i])),
    ]),
    4,
  );

  const omitted = verdict.rejected_omitted ?? 0;
  $("rejected-count").textContent = omitted > 0 ? `${rejected.length} listed, ${omitted} more not listed` : String(rejected.length);
  fillTable(
    $("rejected"),
    rejected.map((r, i) => [
      el("td", "nowrap", `R${i + 1}`),
      wrap("td", "nowrap", el("code", "reason", r.reason)),
      el("td", "nowrap", r.format),
      r.name === null ? el("td", "muted", "(none)") : el("td", "", r.name),
      el("td", "excerpt", excerpt(text, r.span)),
      el("td", "why", WHY[r.reason] ?? ""),
    ]),
    6,
  );
}

function renderRepair() {
  const raw = $("raw-arguments").value;
  let verdict;
  let argumentText = "null";
  try {
    const canonical = repairArgumentsCanonical(raw);
    verdict = JSON.parse(canonical);
    argumentText = repairArgumentText(canonical);
    showError($("repair-error"), null);
  } catch (err) {
    showError($("repair-error"), `Repair threw: ${err}`);
    verdict = { status: "rejected", arguments: null, reason: null, actions: [] };
  }
  $("repair-status").replaceChildren(el("span", `status ${verdict.status}`, verdict.status));
  $("repair-arguments").textContent = argumentText;
  $("repair-reason").textContent = verdict.reason ?? "-";
  $("repair-reason").className = verdict.reason ? "reason" : "muted";
  const actions = (verdict.actions ?? []).map((a) =>
    el("li", "", `${a.op} ${JSON.stringify(a.text)} at ${a.at}`),
  );
  $("repair-actions").replaceChildren(...(actions.length ? actions : [el("li", "muted", "none")]));
}

function start() {
  $("model-output").value = EXAMPLE_OUTPUT;
  $("raw-arguments").value = EXAMPLE_ARGUMENTS;
  $("model-output").addEventListener("input", renderParse);
  $("allowlist").addEventListener("input", renderParse);
  $("raw-arguments").addEventListener("input", renderRepair);
  renderParse();
  renderRepair();
  // Lets scripts (screenshot, tests) wait without page.wait_for_function, which MV3's CSP blocks.
  document.body.dataset.rendered = "true";
}

start();
