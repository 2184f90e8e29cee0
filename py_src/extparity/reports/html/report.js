// The extparity HTML report: renders the data embedded in #extparity-data.
// Only the rows in view exist in the DOM (a virtual list), so 50,000 cases stay usable.
// Text from the result is always set through textContent, never parsed as HTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("extparity-data").textContent);
  // The cases' panes are in their own element after this script: the list is drawn while the
  // browser still reads them (most of a large report's bytes), and a case opens once they are in.
  let details = null;
  function detailOf(index) {
    const element = document.getElementById("extparity-details");
    if (details === null && element === null) return null;
    if (details === null) details = JSON.parse(element.textContent);
    return details[index];
  }
  function whenLoaded(then) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", then, { once: true });
    else then();
  }
  const ROW = 24;
  const OVERSCAN = 20;
  const CELLS = data.cells;
  const PASSES = new Set(data.passes); // the outcomes that pass, from the result's own vocabulary
  const failing = (cell) => cell !== null && !PASSES.has(cell);
  // With --baseline: row index -> [[engine index, kind, detail]], and the rows of new cases.
  const CHANGES = data.baseline ? data.baseline.changes : {};
  const NEW = new Set(data.baseline ? data.baseline.new : []);
  const changed = (index) => String(index) in CHANGES || NEW.has(index);
  const state = { view: "matrix", tag: "", file: "", outcome: "", engine: "", text: "", selected: -1, collapsed: new Map() };
  let items = []; // what the list shows: {group: key, label, size, vector} or {row: index}

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  const count = (n, noun) => `${n} ${n === 1 ? noun : noun + "s"}`; // "1 case", never "1 cases"

  function cellName(code) { return code === "-" ? null : CELLS[Number(code)]; }

  // ------------------------------------------------------------------ header

  function renderHeader() {
    const head = document.getElementById("head");
    const failed = data.rows.filter((row) => [...row[4]].some((c) => failing(cellName(c)))).length;
    head.append(el("h1", { text: "extparity report" }),
      el("span", { class: "verdict " + (data.ok ? "ok" : "failed"), text: data.ok ? "PASSED" : "FAILED" }),
      el("span", { text: `  ${count(data.rows.length, "case")}, ${failed} with a failing cell; ` +
        `reference: ${data.reference || "none (engines compared with each other)"}; extparity ${data.extparity}` }));
    const line = el("div", { id: "engines-line" });
    for (const name of data.engines) {
      const info = data.engineInfo[name] || {};
      const versions = info.versions || {};
      const build = versions.executable_version || versions.quickjs_ng && `quickjs-ng ${versions.quickjs_ng}` ||
        versions.v8 && `V8 ${versions.v8}` || versions.spidermonkey && `SpiderMonkey ${versions.spidermonkey}` ||
        versions.mini_racer && `mini-racer ${versions.mini_racer}` || versions.pythonmonkey && `pythonmonkey ${versions.pythonmonkey}` ||
        versions.python && `Python ${versions.python}` || info.kind || "";
      line.append(el("span", {}, el("b", { text: name }), ` ${build}${info.status && info.status !== "ok" ? " [" + info.status + "]" : ""}`));
    }
    head.append(line);
    const engines = el("table");
    engines.append(el("tr", {}, ...["engine", "kind", "tree", "status", "versions"].map((h) => el("th", { text: h }))));
    for (const name of data.engines) {
      const info = data.engineInfo[name] || {};
      const versions = Object.entries(info.versions || {}).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("\n");
      engines.append(el("tr", {}, el("td", { text: name }), el("td", { text: info.kind || "" }), el("td", { text: info.tree || "" }),
        el("td", { text: info.status + (info.detail ? ": " + info.detail : "") }), el("td", { class: "mono", text: versions })));
    }
    head.append(el("details", {}, el("summary", { text: "engines and exact versions" }), engines));
    const modules = el("table");
    const trees = [...new Set(Object.values(data.modules.on_disk || {}).flatMap((byTree) => Object.keys(byTree)))].sort();
    modules.append(el("tr", {}, el("th", { text: "module" }), ...trees.map((t) => el("th", { text: `${t} (sha256 on disk)` })),
      el("th", { text: "engines that loaded other bytes" })));
    for (const [module, byTree] of Object.entries(data.modules.on_disk || {})) {
      const others = data.engines.filter((name) => {
        const info = data.engineInfo[name] || {};
        const loaded = (info.module_hashes || {})[module];
        return info.tree && loaded && loaded !== byTree[info.tree];
      });
      modules.append(el("tr", {}, el("td", { class: "mono", text: module }),
        ...trees.map((t) => el("td", { class: "mono", text: (byTree[t] || "").slice(0, 16) })),
        el("td", { text: others.join(", ") || "none" })));
    }
    for (const [entry, adapter] of Object.entries(data.modules.adapters || {})) {
      modules.append(el("tr", {}, el("td", { class: "mono", text: `adapter of ${entry}: ${adapter.path}` }),
        el("td", { class: "mono", text: adapter.sha256.slice(0, 16) })));
    }
    for (const name of data.engines) {
      const info = data.engineInfo[name] || {};
      if (info.tree) continue; // tree engines are checked against the table above
      for (const [module, digest] of Object.entries(info.module_hashes || {})) {
        modules.append(el("tr", {}, el("td", { class: "mono", text: `${name}: ${module}` }), el("td", { class: "mono", text: digest.slice(0, 16) })));
      }
    }
    head.append(el("details", {}, el("summary", { text: "module and adapter hashes" }), modules));
    if (data.timings) {
      const seconds = (ms) => (ms / 1000).toFixed(2) + " s";
      const table = el("table", { id: "durations" });
      table.append(el("tr", {}, ...["engine", "start-up", "cases", "wall", "sessions", "restarts"].map((h) => el("th", { text: h }))));
      for (const name of data.engines) {
        const t = data.timings.engines[name];
        table.append(el("tr", { "data-engine": name }, el("td", { text: name }), el("td", { text: seconds(t.startup_ms) }),
          el("td", { text: seconds(t.cases_ms) }), el("td", { text: seconds(t.wall_ms) }),
          el("td", { text: String(t.sessions) }), el("td", { text: String(t.restarts) })));
      }
      head.append(el("details", { open: "" }, el("summary", { text: `durations (run wall time ${seconds(data.timings.wall_ms)})` }), table));
    }
    if (data.baseline) {
      const rows = Object.keys(CHANGES).length;
      head.append(el("div", { id: "baseline-line", text: `since the baseline: ${count(rows, "case")} with changed verdicts, ` +
        `${count(NEW.size, "new case")}, ${count(data.baseline.gone.length, "case")} no longer in the corpus` +
        (data.baseline.gone.length ? ` (${data.baseline.gone.join(", ")})` : "") }));
    }
    if (data.problems.length) {
      const list = el("ul", { class: "problems" });
      for (const problem of data.problems) list.append(el("li", { text: problem }));
      head.append(list);
    }
  }

  // ------------------------------------------------------------------ filters and grouping

  function fillFilters() {
    const add = (id, values) => {
      const select = document.getElementById(id);
      values.forEach(([value, label]) => select.append(el("option", { value: String(value), text: label })));
    };
    add("f-tag", data.tags.map((t, i) => [i, t]));
    add("f-file", data.files.map((f, i) => [i, f]));
    add("f-outcome", CELLS.map((c, i) => [i, c]));
    add("f-engine", data.engines.map((e, i) => [i, e]));
    if (data.baseline) {
      document.querySelector("nav .views").append(el("button", { type: "button", "data-view": "changed", text: "Changed since baseline" }));
    }
    for (const [id, key] of [["f-tag", "tag"], ["f-file", "file"], ["f-outcome", "outcome"], ["f-engine", "engine"]]) {
      document.getElementById(id).addEventListener("change", (event) => { state[key] = event.target.value; rebuild(); });
    }
    document.getElementById("f-text").addEventListener("input", (event) => { state.text = event.target.value.trim(); rebuild(); });
    for (const button of document.querySelectorAll("nav .views button")) {
      button.addEventListener("click", () => {
        state.view = button.dataset.view;
        for (const other of document.querySelectorAll("nav .views button")) other.classList.toggle("on", other === button);
        rebuild();
      });
    }
  }

  function keep(row, index) {
    if (state.view === "odd" && row[5] < 0) return false;
    if (state.view === "changed" && !changed(index)) return false;
    if (state.tag !== "" && !row[3].includes(Number(state.tag))) return false;
    if (state.file !== "" && row[1] !== Number(state.file)) return false;
    if (state.text && !row[0].includes(state.text)) return false;
    if (state.outcome === "" ) return true;
    const engines = state.engine === "" ? data.engines.map((_, i) => i) : [Number(state.engine)];
    return engines.some((i) => {
      const cell = cellName(row[4][i]);
      return state.outcome === "failing" ? failing(cell) : cell === CELLS[Number(state.outcome)];
    });
  }

  function rebuild() {
    const groups = new Map();
    let shown = 0;
    data.rows.forEach((row, index) => {
      if (!keep(row, index)) return;
      shown += 1;
      const key = state.view === "odd" ? "odd:" + row[5] : "v:" + row[4];
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(index);
    });
    const ordered = [...groups.entries()].sort((a, b) => {
      const failA = failingGroup(a), failB = failingGroup(b);
      return failA !== failB ? (failA ? -1 : 1) : b[1].length - a[1].length;
    });
    items = [];
    for (const [key, members] of ordered) {
      if (!state.collapsed.has(key)) state.collapsed.set(key, !failingGroup([key, members]) && members.length > 50);
      items.push({ group: key, members });
      if (!state.collapsed.get(key)) for (const index of members) items.push({ row: index });
    }
    document.getElementById("count").textContent =
      `${shown} of ${count(data.rows.length, "case")} in ${groups.size} ${state.view === "odd" ? "odd-one-out groups" : "groups of identical outcomes"}`;
    document.getElementById("list-space").style.height = `${items.length * ROW}px`;
    drawn.clear();
    document.getElementById("list-space").replaceChildren();
    draw();
  }

  function failingGroup([key, members]) {
    if (key.startsWith("odd:")) return true;
    return [...data.rows[members[0]][4]].some((c) => failing(cellName(c)));
  }

  // ------------------------------------------------------------------ the virtual list

  const drawn = new Map(); // item index -> element
  function cellElement(code, odd) {
    const cell = cellName(code);
    return el("span", { class: `c-cell k-${cell || "none"}${odd ? " odd" : ""}`, text: cell || "not run", title: cell || "not run" });
  }

  function itemElement(index) {
    const item = items[index];
    let node;
    if (item.group !== undefined) {
      const first = data.rows[item.members[0]];
      const collapsed = state.collapsed.get(item.group);
      const label = item.group.startsWith("odd:")
        ? `${collapsed ? "▸" : "▾"} ${data.engines[first[5]]} differs alone: ${count(item.members.length, "case")}`
        : `${collapsed ? "▸" : "▾"} ${count(item.members.length, "case")}`;
      node = el("div", { class: "row group", "data-group": item.group, tabindex: "0" },
        el("span", { class: "c-label", text: label, title: label }),
        ...[...first[4]].map((code, i) => item.group.startsWith("odd:") ? el("span", { class: "c-cell k-none", text: "" }) : cellElement(code, false)));
      node.addEventListener("click", () => { state.collapsed.set(item.group, !collapsed); rebuild(); });
    } else {
      const row = data.rows[item.row];
      const mark = changed(item.row) ? (NEW.has(item.row) ? "new since the baseline" : "changed since the baseline") : "";
      node = el("div", { class: "row" + (item.row === state.selected ? " selected" : "") + (mark ? " changed" : ""),
        "data-case": row[0], tabindex: "0" },
        el("span", { class: "c-id", text: (mark ? "Δ " : "") + row[0], title: row[0] + (mark ? ` (${mark})` : "") }),
        el("span", { class: "c-where", text: `${data.files[row[1]]}:${row[2]}` }),
        ...[...row[4]].map((code, i) => cellElement(code, i === row[5])));
      node.addEventListener("click", () => select(item.row));
    }
    node.style.top = `${index * ROW}px`;
    return node;
  }

  function draw() {
    const list = document.getElementById("list");
    const space = document.getElementById("list-space");
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(items.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + OVERSCAN);
    for (const [index, node] of drawn) {
      if (index < first || index >= last) { node.remove(); drawn.delete(index); }
    }
    for (let index = first; index < last; index++) {
      if (!drawn.has(index)) { const node = itemElement(index); drawn.set(index, node); space.append(node); }
    }
  }

  function renderListHead() {
    const head = document.getElementById("list-head");
    head.append(el("span", { class: "c-id", text: "case" }), el("span", { class: "c-where", text: "file:line" }),
      ...data.engines.map((name) => el("span", { class: "c-cell", text: name, title: name + (name === data.reference ? " (reference)" : "") })));
  }

  // ------------------------------------------------------------------ one case

  function select(index) {
    state.selected = index;
    for (const node of document.querySelectorAll(".row.selected")) node.classList.remove("selected");
    const row = data.rows[index];
    const node = document.querySelector(`.row[data-case="${CSS.escape(row[0])}"]`);
    if (node) node.classList.add("selected");
    history.replaceState(null, "", "#case=" + encodeURIComponent(row[0])); // a link to this case
    renderCase(index);
  }

  // ------------------------------------------------------------------ links (#case=ID) and keys

  function caseInHash() {
    const match = /^#case=(.*)$/.exec(location.hash);
    return match ? decodeURIComponent(match[1]) : null;
  }

  function openCase(id) {
    const index = data.rows.findIndex((row) => row[0] === id);
    if (index < 0) return;
    for (const item of items) if (item.group !== undefined && item.members.includes(index)) state.collapsed.set(item.group, false);
    rebuild();
    reveal(index);
    select(index);
  }

  function reveal(index) {
    const at = items.findIndex((item) => item.row === index);
    const list = document.getElementById("list");
    if (at >= 0 && (at * ROW < list.scrollTop || (at + 1) * ROW > list.scrollTop + list.clientHeight)) {
      list.scrollTop = Math.max(0, at * ROW - list.clientHeight / 2);
    }
    draw();
  }

  function move(step) {
    const rows = items.filter((item) => item.row !== undefined).map((item) => item.row);
    if (!rows.length) return;
    const here = rows.indexOf(state.selected);
    const next = rows[here < 0 ? 0 : Math.max(0, Math.min(rows.length - 1, here + step))];
    reveal(next);
    select(next);
    const node = document.querySelector(`.row[data-case="${CSS.escape(data.rows[next][0])}"]`);
    if (node) node.focus();
  }

  function spansOf(verdictText) {
    let value;
    try { value = JSON.parse(verdictText); } catch (error) { return []; }
    const found = [];
    const walk = (node, path, top) => {
      if (Array.isArray(node)) { node.forEach((item, i) => walk(item, `${path}[${i}]`, top)); return; }
      if (!node || typeof node !== "object") return;
      const span = node.span;
      if (Array.isArray(span) && span.length === 2 && Number.isInteger(span[0]) && Number.isInteger(span[1]) && span[0] <= span[1]) {
        const label = Object.entries(node).filter(([k]) => k !== "span").map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ");
        found.push({ start: span[0], end: span[1], top, title: `${path}  ${label}` });
      }
      for (const [key, child] of Object.entries(node)) if (key !== "span") walk(child, path ? `${path}.${key}` : key, top || key);
    };
    walk(value, "", "");
    return found;
  }

  function highlighted(input, spans, executes) {
    const pre = el("pre", { class: "input" });
    const cuts = new Set([0, input.length]);
    for (const span of spans) { cuts.add(Math.min(span.start, input.length)); cuts.add(Math.min(span.end, input.length)); }
    const points = [...cuts].sort((a, b) => a - b);
    for (let i = 0; i + 1 < points.length; i++) {
      const [from, to] = [points[i], points[i + 1]];
      const text = input.slice(from, to);
      const covering = spans.filter((span) => span.start <= from && span.end >= to && span.start < span.end);
      if (!covering.length) { pre.append(text); continue; }
      const runs = covering.some((span) => span.top === executes);
      pre.append(el("mark", { class: runs ? "runs" : "other", title: covering.map((span) => span.title).join("\n"), text }));
    }
    return pre;
  }

  function inlineDiff(left, right) {
    let start = 0;
    while (start < left.length && start < right.length && left[start] === right[start]) start++;
    let end = 0;
    while (end < left.length - start && end < right.length - start && left[left.length - 1 - end] === right[right.length - 1 - end]) end++;
    const part = (text, tag) => {
      const td = [];
      td.push(text.slice(0, start));
      const middle = text.slice(start, text.length - end);
      if (middle) td.push(el(tag, { text: middle }));
      td.push(text.slice(text.length - end));
      return td;
    };
    return [part(left, "del"), part(right, "ins")];
  }

  function diffTable(rows, leftName, rightName) {
    const table = el("table", { class: "diff mono" });
    table.append(el("tr", {}, el("th", { class: "op" }), el("th", { text: leftName }), el("th", { text: rightName })));
    const CONTEXT = 3;
    const changed = rows.map((row) => row[0] !== "=");
    const near = rows.map((_, i) => changed.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some(Boolean));
    let skipped = 0;
    const flush = () => {
      if (skipped) table.append(el("tr", { class: "elided" }, el("td", { colspan: "3", text: `… ${skipped} equal lines …` })));
      skipped = 0;
    };
    rows.forEach((row, i) => {
      if (!near[i]) { skipped++; return; }
      flush();
      const [op, left] = row;
      const right = op === "=" ? left : row[2];
      const kind = { "=": "same", "~": "changed", "-": "removed", "+": "added" }[op];
      let l = [left ?? ""], r = [right ?? ""];
      if (op === "~") [l, r] = inlineDiff(left, right);
      table.append(el("tr", { class: kind }, el("td", { class: "op", text: op === "=" ? "" : op }),
        el("td", { class: "l" }, ...l), el("td", { class: "r" }, ...r)));
    });
    flush();
    return table;
  }

  function renderCase(index) {
    const row = data.rows[index];
    const detail = detailOf(index);
    const pane = document.getElementById("case-pane");
    pane.replaceChildren();
    if (detail === null) {
      pane.append(el("p", { class: "hint", text: "Reading the cases' details…" }));
      whenLoaded(() => { if (state.selected === index) renderCase(index); });
      return;
    }
    pane.append(el("h2", { text: row[0] }),
      el("p", { class: "meta" }, `${detail.fn} · ${data.files[row[1]]}:${row[2]} · `, ...row[3].map((t) => el("span", { class: "tag", text: data.tags[t] }))),
      el("p", { class: "meta", text: detail.why }));
    const cells = el("table", { class: "cells-table" });
    data.engines.forEach((name, i) => {
      const notes = (detail.notes[String(i)] || []).join("; ");
      cells.append(el("tr", {}, el("td", { text: name + (name === data.reference ? " (ref)" : "") }),
        el("td", {}, cellElement(row[4][i], i === row[5])), el("td", { text: notes })));
    });
    pane.append(cells);
    if (changed(index)) {
      const list = el("ul", { class: "since" });
      if (NEW.has(index)) list.append(el("li", { text: "a new case: the baseline did not have it" }));
      for (const [engine, kind, what] of CHANGES[String(index)] || []) {
        list.append(el("li", { text: `${engine >= 0 ? data.engines[engine] : "?"}: ${kind}${what ? " " + what : ""}` }));
      }
      pane.append(el("h3", { text: "Since the baseline" }), list);
    }
    const entry = data.entries[detail.fn] || {};
    const executes = entry.executes;
    const inputName = (entry.args || Object.keys(detail.args))[0];
    const input = detail.args[inputName];
    const differing = Object.entries(detail.diffs);
    if (differing.length) {
      const label = detail.against[0];
      for (const [group, rows] of differing) {
        const names = detail.verdicts[Number(group)][0].map((i) => data.engines[i]).join(", ");
        pane.append(el("h3", { text: `${names} against ${label}` }), diffTable(rows, label, names));
      }
    }
    pane.append(el("h3", { text: "Input" }));
    if (typeof input === "string") {
      pane.append(el("p", { class: "legend meta" }, "spans of each verdict: ",
        el("mark", { class: "runs", text: executes ? `${executes} (would run)` : "runs" }), " ",
        el("mark", { class: "other", text: "other items" })));
      for (const [members, verdict] of detail.verdicts) {
        const spans = spansOf(verdict);
        pane.append(el("div", { class: "meta", text: `${members.map((i) => data.engines[i]).join(", ")}: ${spans.length} spans` }),
          highlighted(input, spans, executes));
      }
    }
    const others = Object.entries(detail.args).filter(([name]) => typeof input !== "string" || name !== inputName);
    pane.append(el("h3", { text: "Arguments and expectation" }), el("pre", { class: "input",
      text: [...others.map(([name, value]) => `${name}: ${JSON.stringify(value)}`), `expect: ${JSON.stringify(detail.expect)}`].join("\n") }));
    if (!differing.length && detail.against) {
      pane.append(el("h3", { text: "Verdict (every engine that gave one agrees)" }),
        el("pre", { class: "input", text: detail.verdicts[detail.against[1]][1] }));
    }
    pane.dataset.case = row[0];
  }

  renderHeader();
  renderListHead();
  fillFilters();
  document.getElementById("list").addEventListener("scroll", () => requestAnimationFrame(draw));
  window.addEventListener("resize", () => requestAnimationFrame(draw));
  document.getElementById("list").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "j") move(1);
    else if (event.key === "ArrowUp" || event.key === "k") move(-1);
    else if (event.key === "Enter" && event.target.classList.contains("row")) event.target.click();
    else return;
    event.preventDefault();
  });
  window.addEventListener("hashchange", () => { const id = caseInHash(); if (id !== null) openCase(id); });
  rebuild();
  whenLoaded(() => {
    if (caseInHash() !== null) openCase(caseInHash());
    document.body.dataset.rendered = "1";
  });
})();
