"""The HTML report's gate section: each check of a gate's result, PASS or FAIL with its line, and
behind a failing line every problem it stands for. Made from the ``gate`` part of the JSON result
alone, so `extparity report gate.json --html` gives the page `gate --html` gave.

Static HTML above the matrix rather than a view of the page's script: a gate has a few dozen
checks, and the verdict of the release is what a reader looks for first.
"""

from __future__ import annotations

from html import escape

STYLE = """
#gate-pane { padding: .5em 1em; border-bottom: 1px solid #ccc; }
#gate-pane h2 { font-size: 1.1em; margin: .2em 0; }
#gate-pane .fail > summary { color: #b00020; }
#gate-pane .pass > summary { color: #1b5e20; }
#gate-pane ul { margin: .2em 0 .4em 1.5em; font-family: monospace; font-size: .9em; }
"""


def section(document: dict) -> str:
    gate = document.get("gate")
    if not isinstance(gate, dict):
        return ""
    checks = gate.get("checks", [])
    failed = [c["name"] for c in checks if not c["ok"]]
    if failed:
        verdict = f"gate FAILED: {len(failed)} of {len(checks)} checks ({', '.join(failed)})"
    elif gate.get("not_run"):
        verdict = (f"gate PARTIAL: the {len(checks)} checks run passed; not run: {', '.join(gate['not_run'])} "
                   "(not a release verdict)")
    else:
        verdict = f"gate PASSED: all {len(checks)} checks"
    parts = ['<section id="gate-pane">', f"<h2>{escape(verdict)}</h2>"]
    for check in checks:
        state = "PASS" if check["ok"] else "FAIL"
        summary = f"<summary>{state} {escape(check['name'])}: {escape(check['line'])}</summary>"
        problems = "".join(f"<li>{escape(problem)}</li>" for problem in check.get("problems", []))
        parts.append(f'<details class="{state.lower()}"{"" if check["ok"] else " open"}>{summary}'
                     + (f"<ul>{problems}</ul>" if problems else "") + "</details>")
    parts.append("</section>")
    return "\n".join(parts)
