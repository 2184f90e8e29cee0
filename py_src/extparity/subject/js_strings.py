"""The value of a JavaScript string literal, as the engine holds it.

Why one module: the fuzz dictionary takes literals' values as words, and the gate's checks read a
name written as a literal (``e["stack"]``, ``const k = "stack"``). A reader that skipped escapes
would read ``"st\\u0061ck"`` as ``"stck"``, which is the evasion the checks exist to see.
"""

from __future__ import annotations

import re

SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(\r\n|[\s\S]))")


def unescape(text: str) -> str:
    """JS string escapes decoded (``\\u2063``, ``\\u{1F600}``, ``\\x41``, ``\\n``, a line
    continuation, an identity escape); each ``\\uXXXX`` of a pair is one unit until ``paired``."""

    def one(match: re.Match) -> str:
        braced, four, two, other = match.groups()
        if other is None:
            code = int(braced or four or two, 16)
            return chr(code) if code < 0x110000 else ""
        if other in ("\n", "\r", "\r\n", "\u2028", "\u2029"):
            return ""
        return SIMPLE_ESCAPES.get(other, other)

    return ESCAPE.sub(one, text)


def paired(text: str) -> str:
    """Escaped surrogate pairs joined into the character they spell, as a JS string holds them."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def pieces(node, source: bytes) -> list[str]:
    """A string literal's value, or a template literal's pieces between its substitutions
    (tree-sitter nodes of type ``string`` or ``template_string``)."""
    found, current = [], []
    for child in node.children:
        if child.type == "string_fragment":
            current.append(source[child.start_byte:child.end_byte].decode("utf-8"))
        elif child.type == "escape_sequence":
            current.append(unescape(source[child.start_byte:child.end_byte].decode("utf-8")))
        elif child.type == "template_substitution":
            found.append("".join(current))
            current = []
    found.append("".join(current))
    return [paired(piece) for piece in found]


def literal_value(node, source: bytes) -> str | None:
    """The value of a string literal or of a template literal without substitutions; None for
    any other node."""
    if node is None or node.type not in ("string", "template_string"):
        return None
    values = pieces(node, source)
    return values[0] if len(values) == 1 else None
