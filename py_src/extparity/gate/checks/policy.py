"""policy: every tree is loaded by a browser; no reason is still a drafted placeholder; with a
baseline (the last release's gate result), no weakening of the gate's own rules and no change to
a shipped file outside the verified modules that is not acknowledged; without one, every such
file acknowledged as trusted unreviewed (``gate.policy``)."""

from __future__ import annotations

from .. import policy
from ..context import Gate
from ..registry import Spec


def verdict(gate: Gate) -> tuple[list[str], str]:
    return policy.judge(gate.policy, [case.id for case in gate.corpus.cases], gate.options.baseline,
                        gate.options.acknowledged, policy.placeholder_reasons(gate.project))


CHECK = Spec("policy",
             "a tree no browser engine loads; a drafted placeholder reason; a shipped file outside the "
             "verified modules, or with `--baseline` a weakening of the last release's policy, that "
             "`--acknowledged` does not name",
             "[tool.extparity] (engines, entries, gate settings); --baseline, --acknowledged", verdict)
