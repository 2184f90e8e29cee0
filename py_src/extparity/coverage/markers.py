"""Coverage exemptions as marker comments in the verified modules, beside the code they exempt.

Why in the source: the gate's coverage check fails on every block of the verified modules that
no case ran, and some code is unreachable on purpose (a defensive catch, a fallback for engines
that misbehave where V8 does not). A list of line ranges in the config named those blocks, and
every edit above them moved them (its 45 ranges churned 198 lines); a marker moves with its
code and is read where the code is reviewed.

The syntax, one JavaScript line comment (a ``/* */`` comment holding the word is refused, so
that no other spelling is silently ignored)::

    c = i < end ? u.charCodeAt(i) : -1; // extparity-unreachable: REASON

    // extparity-unreachable: REASON, which may go on
    // over the comment lines right below it
    export function shortestDigits(x) {

* Beside code, a marker marks its own line; alone on its line, it marks the first line below it
  that is not a ``//`` comment (those lines continue its reason, so a marker stands last in a
  comment above code).
* It exempts the code that begins on the marked line, through its end: the lines from the
  marked line to the last line of the syntax that begins there (a whole function for
  ``function f() {``, the catch clause for ``} catch (error) {``, the statement for
  ``c = i < end ? u.charCodeAt(i) : -1;``). So a 38-line fallback function is one marker, and a
  loop whose unrun arms share one reason can be one marker on the loop.
* Every range of blocks no case ran (V8's block coverage, ``blocks``) that lies within the lines
  some markers exempt is excused; a range that reaches past them is not (mark the statement
  around it instead).

The gate fails on a marker without a reason; on one that marks nothing (its line holds no code
that begins there, like a blank line or a lone ``}``, or its lines hold no block, like top-level
code, which runs at import and is not counted); and on a stale one, whose lines hold no unrun
block any more (a case runs them: remove it).

Markers are policy (``gate.policy``): each is recorded with its module, its reason and the
SHA-256 of the exact text of the lines it exempts, so against the last release a new marker, or
exempted lines rewritten in place, is a change to acknowledge. Line numbers are left out of that
comparison: code moving above a marker changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..project.hashing import sha256_hex
from ..subject.linker import parse_source, walk

WORD = "extparity-unreachable"
LINE_MARKER = re.compile(rf"//\s*{WORD}(?![\w-])\s*(:?)(.*)")
BLOCK_MARKER = re.compile(rf"/\*[\s*]*{WORD}(?![\w-])")
FORM = f"// {WORD}: REASON"


@dataclass(frozen=True)
class Marker:
    module: str  # tree-relative path
    line: int  # where the comment stands
    first: int  # the lines it exempts
    last: int
    reason: str
    sha256: str  # of the exempted lines' text, joined with "\n"

    @property
    def lines(self) -> str:
        return f"{self.first}-{self.last}" if self.last != self.first else str(self.first)

    @property
    def span(self) -> str:
        return f"lines {self.lines}" if self.last != self.first else f"line {self.first}"

    def named(self) -> str:
        """How a problem names the marker: where it stands and the start of its reason."""
        reason = self.reason if len(self.reason) <= 60 else self.reason[:57] + "..."
        return f"{self.module}:{self.line}: marker ({reason})"


def read_markers(module: str, text: str) -> tuple[list[Marker], list[str]]:
    """The markers of one module's source, in order, and a one-line problem for each comment
    that is not a usable marker (no reason, another comment form, nothing to mark)."""
    syntax, source = parse_source(text.encode("utf-8"), module)
    text = source.decode("utf-8")
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line.encode("utf-8")) + 1)
    begins: dict[int, int] = {}  # row -> last row of the syntax that begins on it
    comments: dict[int, tuple[str, bool]] = {}  # row -> (a // comment on it, alone on its line)
    for node in walk(syntax.root_node):
        row = node.start_point[0]
        if node.type == "comment":
            body = source[node.start_byte:node.end_byte].decode("utf-8")
            alone = not source[starts[row]:node.start_byte].strip()
            if body.startswith("//"):
                comments[row] = (body, alone)
            elif BLOCK_MARKER.match(body):
                comments[row] = (body, False)
            continue
        if node.is_named and node.parent is not None:
            end_row, end_column = node.end_point
            begins[row] = max(begins.get(row, row), end_row if end_column else end_row - 1)
    markers, problems = [], []
    for row, (body, alone) in sorted(comments.items()):
        where = f"{module}:{row + 1}"
        if body.startswith("/*"):
            problems.append(f"{where}: an {WORD} marker is a // line comment ({FORM}); this /* */ one marks nothing")
            continue
        found = LINE_MARKER.fullmatch(body)
        if found is None:
            continue
        reason = [found[2].strip()] if found[1] else []
        target = row
        if alone:
            target += 1
            while target in comments and comments[target][1] and not LINE_MARKER.fullmatch(comments[target][0]):
                reason.append(comments[target][0][2:].strip())
                target += 1
        reason_text = " ".join(part for part in reason if part)
        if not found[1] or not reason_text:
            problems.append(f"{where}: {WORD} marker without a reason ({FORM})")
            continue
        if target not in begins:
            problems.append(f"{where}: {WORD} marker marks nothing: no code begins on line {target + 1} "
                            f"(it marks {'its own line' if not alone else 'the line below it'})")
            continue
        last = begins[target]
        exempted = "\n".join(lines[target:last + 1])
        markers.append(Marker(module, row + 1, target + 1, last + 1, reason_text, sha256_hex(exempted.encode("utf-8"))))
    return markers, problems
