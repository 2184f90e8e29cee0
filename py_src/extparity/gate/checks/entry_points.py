"""entry points: cases also went through the background's runtime.sendMessage in every browser,
and it answered every one. The modules can agree while the background users' code talks to
throws at start-up, never answers, or shapes the reply: only this path shows it."""

from __future__ import annotations

from ...project.config import declares_content_scripts
from ...project.words import count
from ...run.outcomes import NO_VERDICT
from ..context import Gate
from ..registry import ENGINES, Spec

ADD_A_LISTENER = ("if the background has no message that runs the entry, add one (a runtime.onMessage listener "
                  "that calls it and replies)")
SEND_IT = "and send it from the entry's message adapter ([tool.extparity.gate].messages; docs/message-path.md)"


def verdict(gate: Gate) -> tuple[list[str], str]:
    tested, result = gate.tested, gate.result
    messengers = [name for name, spec in tested.engines.items() if spec.via == "message"]
    if not any(gate.browsers.values()):
        problems = ["no engine goes through the extension's background: configure browser engines "
                    "and [tool.extparity.gate].messages"]
    elif not messengers:
        problems = ["no engine goes through the extension's background: give each entry a message adapter in "
                    "[tool.extparity.gate].messages, a module next to the config, `export default async (send, "
                    "modules, ...args) => verdictText`, that sends the message the background answers with the "
                    "entry's result; " + ADD_A_LISTENER]
    else:
        problems = [f"tree {tree}: no engine reaches its background (configure [tool.extparity.gate].messages)"
                    for tree, kinds in gate.browsers.items()
                    if kinds and not any(tested.engines[name].tree == tree for name in messengers)]
    if messengers and not result.results:
        problems.append("no case went through the backgrounds' message paths (no cases)")
    for name in messengers:
        run = result.runs[name]
        if run.status != "ok":
            problems.append(f"{name}: {run.status}: {run.detail}")
            continue
        unanswered = [r for r in result.results if r.cells.get(name) in NO_VERDICT]
        if unanswered:
            first = unanswered[0]
            why = "; ".join(first.notes.get(name, []))
            hint = f"; {ADD_A_LISTENER} {SEND_IT}" if "the background sent no reply" in why else ""
            problems.append(f"{name}: {count(len(unanswered), 'case')} got no answer through the message path "
                            f"(first {first.case.id}: {why}){hint}")
    return problems, (f"{', '.join(messengers)} answered all {count(len(result.results), 'case')} "
                      f"through runtime.sendMessage to the extension's background" + content_senders(gate, messengers))


def content_senders(gate: Gate, messengers: list[str]) -> str:
    """Which engines sent the cases from a content script, for trees that declare content scripts;
    and, honestly, the trees that none did (their browser engines cannot, or were not chosen)."""
    tested = gate.tested
    trees = sorted(tree for tree, folder in tested.trees.items() if declares_content_scripts(folder))
    if not trees:
        return ""
    parts = []
    for tree in trees:
        senders = [n for n in messengers if tested.engines[n].tree == tree and tested.engines[n].sender == "content"]
        parts.append(f"{tree} from a tab by {', '.join(senders)}" if senders else
                     f"{tree} not from a tab (no content-script path for its browser engines)")
    return "; content scripts: " + "; ".join(parts)


CHECK = Spec("entry points",
             "a browser tree without a message-path engine, a case the background did not answer "
             "through `runtime.sendMessage`",
             "[tool.extparity.gate].messages, [tool.extparity.engines]", verdict, needs=(ENGINES,))
