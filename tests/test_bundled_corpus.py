"""The bundled corpus keeps the size and breadth the project promises, checked through the CLI
a user runs (`extparity corpus lint` and `extparity corpus stats`)."""

from __future__ import annotations

import re

from extparity import cli

# Every theme the corpus must cover, by its files, with at least 30 cases each.
REQUIRED_GROUPS = {
    "seeds (parse)": ["parse/seeds"],
    "seeds (repair)": ["repair/seeds"],
    "bare JSON": ["parse/bare"],
    "narration": ["parse/narration"],
    "tagged": ["parse/tagged"],
    "xml": ["parse/xml"],
    "call syntax": ["parse/call-syntax"],
    "fenced": ["parse/fenced"],
    "whole-response array": ["parse/array"],
    "allowlist": ["parse/allowlist"],
    "python-vs-js hazards": ["parse/unicode", "parse/numbers", "parse/limits", "repair/unicode", "repair/numbers"],
    "argument repair": ["repair/truncation", "repair/closers", "repair/policy"],
}


def test_corpus_lint_is_clean(capsys):
    assert cli.main(["corpus", "lint"]) == 0
    assert capsys.readouterr().out.strip().endswith(", 0 problems")


def test_corpus_stats_show_1500_cases_and_30_per_theme(capsys):
    assert cli.main(["corpus", "stats"]) == 0
    out = capsys.readouterr().out
    total = int(re.search(r"^total (\d+)$", out, re.M).group(1))
    assert total >= 1500
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+/\S+)\s+(\d+)$", out, re.M)}
    short = {theme: sum(counts.get(group, 0) for group in groups)
             for theme, groups in REQUIRED_GROUPS.items()
             if sum(counts.get(group, 0) for group in groups) < 30}
    assert short == {}
    for groups in REQUIRED_GROUPS.values():
        assert all(group in counts for group in groups), f"missing corpus file for {groups}"
