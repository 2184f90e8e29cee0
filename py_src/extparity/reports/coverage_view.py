"""The HTML report's coverage view: each verified module's source, the lines no case ran marked,
and from each line where a block starts, links to the cases that reach it (``#case=ID``, which
the report's page opens). Made from the coverage document alone, so ``extparity report
--coverage`` gives the page ``run --coverage --html`` gave.

Drawn here as static HTML rather than by the page's script: a module is a few hundred lines,
and the view needs no filtering.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote


def button(coverage: dict | None) -> str:
    return '<button type="button" data-view="coverage">Coverage</button>' if coverage else ""


def section(coverage: dict | None) -> str:
    if not coverage:
        return ""
    parts = ['<section id="coverage-pane">']
    engines = ", ".join(f"{escape(name)} ({escape(info['status'])}, {info['cases']} cases)"
                        for name, info in coverage.get("engines", {}).items())
    parts.append(f"<p class=\"hint\">Block coverage in {engines or 'no Chromium engine'}; a module's own "
                 "top-level code runs at import, before any case, and is not counted.</p>")
    for problem in coverage.get("problems", []):
        parts.append(f'<p class="problem">{escape(problem)}</p>')
    for path, module in coverage.get("modules", {}).items():
        parts.append(_module(path, module))
    parts.append(_reference(coverage.get("reference")))
    parts.append("</section>")
    return "\n".join(parts)


def _module(path: str, module: dict) -> str:
    lines = module["source"].split("\n")
    missed: set[int] = set()
    for block in module["uncovered"]:
        missed.update(range(block["lines"][0], block["lines"][1] + 1))
    starts: dict[int, list[str]] = {}  # line -> the cases of the innermost run block starting there
    for block in sorted(module["block_list"], key=lambda b: (b["start"], -b["end"])):
        if block["cases"]:
            starts[block["lines"][0]] = block["cases"]
    per_engine = "; ".join(f"{escape(name)}: {e['blocks_run']}/{e['blocks']} blocks, {e['functions_run']}/{e['functions']} functions"
                           for name, e in module["engines"].items())
    rows = []
    for number, text in enumerate(lines, 1):
        cases = " ".join(f'<a href="#case={quote(case, safe="")}">{escape(case)}</a>' for case in starts.get(number, ()))
        mark = ' class="miss"' if number in missed else ""
        rows.append(f'<tr id="cov-{escape(path)}-{number}"{mark}><td class="n">{number}</td>'
                    f'<td class="src"><code>{escape(text)}</code></td><td class="cases">{cases}</td></tr>')
    summary = (f"{escape(path)}: {module['blocks_run']} of {module['blocks']} blocks, "
               f"{module['functions_run']} of {module['functions']} functions run")
    return (f'<details class="module" open><summary>{summary} <span class="engines">({per_engine})</span></summary>'
            f'<table class="source">{"".join(rows)}</table></details>')


def _reference(reference: dict | None) -> str:
    if not reference:
        return ""
    rows = "".join(f"<tr><td>{escape(name)}</td><td>{f['branches_run']}/{f['branches']}</td>"
                   f"<td>{escape(', '.join(map(str, f['missing_lines'])) or '-')}</td></tr>"
                   for name, f in reference.get("files", {}).items())
    return (f"<h3>Reference ({escape(reference['engine'])}): {reference['branches_run']} of {reference['branches']} "
            f"branches run</h3><table class=\"reference\"><tr><th>file</th><th>branches run</th><th>lines not run</th></tr>"
            f"{rows}</table>")


SCRIPT = """
(function () {
  const pane = document.getElementById("coverage-pane");
  if (!pane) return;
  const show = (on) => document.body.classList.toggle("coverage-view", on);
  for (const button of document.querySelectorAll("nav .views button")) {
    button.addEventListener("click", () => show(button.dataset.view === "coverage"));
  }
  window.addEventListener("hashchange", () => {
    if (/^#case=/.test(location.hash) && document.body.classList.contains("coverage-view")) {
      document.querySelector('nav .views button[data-view="matrix"]').click();
    }
  });
})();
"""

STYLE = """
body:not(.coverage-view) #coverage-pane { display: none; }
body.coverage-view main { display: none; }
#coverage-pane { flex: 1; overflow: auto; padding: 8px 12px; }
#coverage-pane .module { margin: 6px 0 12px; }
#coverage-pane summary { cursor: pointer; font-weight: 600; }
#coverage-pane summary .engines { font-weight: normal; color: #555; }
#coverage-pane table.source { border-collapse: collapse; width: 100%; table-layout: fixed; }
#coverage-pane table.source td { padding: 0 6px; vertical-align: top; white-space: pre; overflow: hidden; }
#coverage-pane td.n { color: #888; text-align: right; user-select: none; width: 4em; }
#coverage-pane td.cases { font-size: 11px; width: 30em; text-overflow: ellipsis; }
#coverage-pane td.cases a { margin-right: 6px; }
#coverage-pane tr.miss td.src { background: #fde0dc; }
#coverage-pane tr.miss td.n { color: var(--diverges); font-weight: 600; }
#coverage-pane .problem { color: var(--diverges); }
#coverage-pane table.reference td, #coverage-pane table.reference th { border: 1px solid var(--line); padding: 1px 6px; }
"""
