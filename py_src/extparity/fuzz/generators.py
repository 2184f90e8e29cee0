"""Case generators for the differential fuzzer.

A generator is a pure function of a `random.Random` and a `FuzzTarget`: it returns case fields,
and the caller fills the fields it leaves out from a seed case drawn with the same rng, so a
case is reproducible from (seed, index) alone. The BUILTIN generators know nothing about the
subject's grammar: they rework the corpus's own strings (the first argument of each seed case)
with edits that tend to split parsers apart: cut points, hazard characters at structural
positions, number literals next to rounding boundaries, nesting and lengths around common
limits, seeds padded to exact lengths, and the words of the splice dictionary (the literals of
the scripts on the verdict path, ``dictionary.py``). A subject adds generators that know its
grammar through a plugin module (`load_plugin`).

Rules every generator keeps, because a million cases are made and each must be replayable: no
global random, no clock, no iteration over sets, no hash() of str, and short output most of the
time (the shrinker and the engines' throughput depend on it).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import math
import random
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from extparity.project.config import Entry


@dataclass(frozen=True)
class FuzzTarget:
    """One entry to fuzz: its name, its config, and the corpus cases' fields as seeds."""

    entry_name: str
    entry: Entry  # entry.args: field names, in order
    seeds: tuple[Mapping[str, Any], ...]  # each corpus case of this entry: field name -> value
    dictionary: tuple[str, ...] = ()  # the splice dictionary's words (dictionary.py), sorted
    unseen: tuple[str, ...] = ()  # those no seed holds


Generator = Callable[[random.Random, FuzzTarget], dict[str, Any]]


class GeneratorError(Exception):
    """A plugin cannot supply generators; the message is one line naming the plugin ref."""


# --- hazard tables ------------------------------------------------------------------------

LONE_SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00")
ASTRAL = ("\U0001F600", "\U0010FFFF")  # two UTF-16 units each, one Python character
LANGUAGE_SPACES = ("\u00a0", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u200b", "\u3000",
                   "\u000b", "\u000c", "\ufeff", "\u0085")  # space to some built-ins, never to JSON
LANGUAGE_LINE_BREAKS = ("\u2028", "\u2029", "\u0085", "\r")
COMBINING_MARKS = ("\u0301", "\u0308", "\u0338", "\u20dd")
FULLWIDTH = ("\uff5b", "\uff5d", "\uff02")  # ｛ ｝ ＂: look like JSON punctuation, are not
HAZARD_CHARS = (*LONE_SURROGATES, *ASTRAL, *LANGUAGE_SPACES, *LANGUAGE_LINE_BREAKS,
                *COMBINING_MARKS, *FULLWIDTH, "\u0000", "\t", "\n")
# Latin letters and what they are mistaken for: a name that differs only here must not match.
CONFUSABLES = (("a", "\u0430"), ("o", "\u03bf"), ("i", "\u0131"), ("K", "\u212a"), ("k", "\u212a"),
               ("s", "\u017f"), ("e", "\u0435"), ("c", "\u0441"), ("p", "\u0440"))
# Lookalikes a structural unit is swapped for; units not listed get any hazard character.
LOOKALIKES = {
    "{": ("\uff5b", "\u2774"),
    "}": ("\uff5d", "\u2775"),
    '"': ("\uff02", "\u201c", "\u201d"),
    ":": ("\uff1a", "\u02d0"),
    ",": ("\uff0c", "\u201a"),
    "<": ("\uff1c", "\u2039"),
    ">": ("\uff1e", "\u203a"),
    "\n": LANGUAGE_LINE_BREAKS,
    " ": LANGUAGE_SPACES,
}
STRUCTURAL = '{}":,<>\n'
SEPARATORS = ("\n", " ", "\n\n", "")
SHORT_ALPHABET = 'abcxyz019{}[]":,. \n\\<>/-_' + "\u00e9\U0001F600\ud800\u2028"

SEED_PROBES = 8  # random probes for a string seed before scanning every seed
TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
TOKEN_WINDOW = 80  # token edits look at this many characters around a random point
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
OBJECT_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_-]{0,30})"\s*:')
JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|-?\d[0-9.eE+-]*|[{}\[\]:,]')
PREFIX_WINDOW = 400  # structural cuts are looked for this far after the opener
SEARCH_WINDOW = 2000  # regex searches stop here, so a 100,000-unit seed costs what a short one does


# --- seeds --------------------------------------------------------------------------------

def seed_string(rng: random.Random, target: FuzzTarget) -> str | None:
    """A random seed's first field when it is a string; None when no seed has one.

    A few random probes keep the common case O(1) over a large corpus; the full scan runs only
    when they all miss, so a corpus of strings never pays for it."""
    seeds, field = target.seeds, target.entry.args[0]
    if not seeds:
        return None
    for _ in range(SEED_PROBES):
        value = seeds[rng.randrange(len(seeds))].get(field)
        if isinstance(value, str):
            return value
    strings = [seed[field] for seed in seeds if isinstance(seed.get(field), str)]
    return rng.choice(strings) if strings else None


def random_short_string(rng: random.Random) -> str:
    """What a generic generator returns when the corpus offers it no string to work on."""
    return "".join(rng.choice(SHORT_ALPHABET) for _ in range(rng.randint(0, 12)))


def seed_text_generator(transform: Callable[[random.Random, str, FuzzTarget], str]) -> Generator:
    """A Generator that sets only the first field, to a transform of a seed's string; the other
    fields come from the caller's seed case, so generic generators never invent them."""

    @wraps(transform)
    def generate(rng: random.Random, target: FuzzTarget) -> dict[str, Any]:
        text = seed_string(rng, target)
        field = target.entry.args[0]
        return {field: random_short_string(rng) if text is None else transform(rng, text, target)}

    return generate


# --- positions ----------------------------------------------------------------------------

def any_position(rng: random.Random, text: str) -> int:
    return rng.randrange(len(text) + 1)


def structural_index(rng: random.Random, text: str) -> int | None:
    """The index of a structural unit near a random point, or None when the text has none of
    the one chosen. str.find keeps this C-speed on long seeds."""
    if not text:
        return None
    mark = rng.choice(STRUCTURAL)
    index = text.find(mark, rng.randrange(len(text)))
    return text.rfind(mark) if index < 0 else index


def structural_position(rng: random.Random, text: str) -> int:
    """A position just before or after a structural unit, or the start or the end: where a
    hazard changes what a parser sees instead of landing in the middle of prose."""
    index = structural_index(rng, text) if rng.random() < 0.85 else None
    if index is None or index < 0:
        return rng.choice((0, len(text)))
    return index + rng.randrange(2)


def tokens_near(rng: random.Random, text: str) -> list[tuple[int, int]]:
    """Token spans (word runs, whitespace runs, single punctuation) in a window around a random
    point; tokenising only a window keeps edits on 10,000-unit seeds as cheap as on short ones."""
    low = max(0, rng.randrange(len(text) + 1) - TOKEN_WINDOW // 2)
    return [match.span() for match in TOKEN.finditer(text, low, low + TOKEN_WINDOW)]


def replaced(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


# --- mutate -------------------------------------------------------------------------------

def random_char(rng: random.Random) -> str:
    """A printable ASCII character, a byte-range character, or a hazard."""
    roll = rng.random()
    if roll < 0.5:
        return chr(rng.randint(0x20, 0x7E))
    if roll < 0.7:
        return chr(rng.randrange(0x100))
    return rng.choice(HAZARD_CHARS)


def insert_char(rng: random.Random, text: str) -> str:
    index = any_position(rng, text)
    return replaced(text, index, index, random_char(rng))


def delete_char(rng: random.Random, text: str) -> str:
    if not text:
        return text
    index = rng.randrange(len(text))
    return replaced(text, index, index + 1, "")


def replace_char(rng: random.Random, text: str) -> str:
    if not text:
        return random_char(rng)
    index = rng.randrange(len(text))
    return replaced(text, index, index + 1, random_char(rng))


def duplicate_token(rng: random.Random, text: str) -> str:
    tokens = tokens_near(rng, text)
    if not tokens:
        return text
    start, end = rng.choice(tokens)
    return replaced(text, end, end, text[start:end])


def swap_tokens(rng: random.Random, text: str) -> str:
    tokens = tokens_near(rng, text)
    if len(tokens) < 2:
        return text
    first, second = sorted(rng.sample(range(len(tokens)), 2))
    (a, b), (c, d) = tokens[first], tokens[second]
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def delete_token(rng: random.Random, text: str) -> str:
    tokens = tokens_near(rng, text)
    if not tokens:
        return text
    start, end = rng.choice(tokens)
    return replaced(text, start, end, "")


def insert_hazard_at_token_boundary(rng: random.Random, text: str) -> str:
    tokens = tokens_near(rng, text)
    index = rng.choice(tokens)[rng.randrange(2)] if tokens else 0
    return replaced(text, index, index, rng.choice(HAZARD_CHARS))


MUTATIONS = (insert_char, delete_char, replace_char, duplicate_token, swap_tokens, delete_token,
             insert_hazard_at_token_boundary)


@seed_text_generator
def mutate(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """1-4 small edits of a seed: near-misses of inputs the corpus already pins down."""
    for _ in range(rng.randint(1, 4)):
        text = rng.choice(MUTATIONS)(rng, text)
    return text


# --- splice and truncate ------------------------------------------------------------------

@seed_text_generator
def splice(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """Two seeds combined: constructs that are each handled alone, met in one input."""
    other = seed_string(rng, target) or ""
    kind = rng.randrange(3)
    if kind == 0:
        return text[:any_position(rng, text)] + other[any_position(rng, other):]
    if kind == 1:
        index = any_position(rng, text)
        return text[:index] + other + text[index:]
    return text + rng.choice(SEPARATORS) + other


DICTIONARY_UNSEEN_SHARE = 0.8  # of splices, a word no corpus case holds (when there is one)


def spliced_in(rng: random.Random, text: str, word: str) -> str:
    """A word inserted at a structural point, or replacing a short run of the text."""
    at = structural_position(rng, text) if text else 0
    if rng.random() < 0.3 and at < len(text):
        return text[:at] + word + text[at + rng.randint(1, min(8, len(text) - at)):]
    return text[:at] + word + text[at:]


@seed_text_generator
def dictionary(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """One or two words of the splice dictionary put into a seed, most often words no corpus case
    holds: a rule keyed on a value only the shipped scripts spell is taken when the input holds it,
    and no edit here spells one (no hazard table holds U+2063, say, let alone two)."""
    if not target.dictionary:
        return insert_hazard_at_structure(rng, text)
    for _ in range(rng.randint(1, 2)):
        words = target.unseen if target.unseen and rng.random() < DICTIONARY_UNSEEN_SHARE else target.dictionary
        text = spliced_in(rng, text, rng.choice(words))
    return text


@seed_text_generator
def truncate(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """A prefix of a seed, every cut point equally likely; sometimes its front is cut too, as a
    streamed response read from the middle."""
    end = any_position(rng, text)
    start = rng.randrange(end + 1) if rng.random() < 0.25 else 0
    return text[start:end]


# --- unicode ------------------------------------------------------------------------------

def insert_hazard_at_structure(rng: random.Random, text: str) -> str:
    index = structural_position(rng, text)
    return replaced(text, index, index, rng.choice(HAZARD_CHARS))


def substitute_structure(rng: random.Random, text: str) -> str:
    """A structural unit swapped for its lookalike (or any hazard when it has none listed)."""
    index = structural_index(rng, text)
    if index is None or index < 0:
        return insert_hazard_at_structure(rng, text)
    return replaced(text, index, index + 1, rng.choice(LOOKALIKES.get(text[index], HAZARD_CHARS)))


def substitute_confusable(rng: random.Random, text: str) -> str:
    """A Latin letter swapped for its lookalike: names must match exactly, never by appearance."""
    latin, lookalike = rng.choice(CONFUSABLES)
    index = text.find(latin, any_position(rng, text))
    if index < 0:
        index = text.find(latin)
    if index < 0:
        return insert_hazard_at_structure(rng, text)
    return replaced(text, index, index + 1, lookalike)


def add_combining_mark(rng: random.Random, text: str) -> str:
    index = structural_position(rng, text)
    return replaced(text, index, index, rng.choice(COMBINING_MARKS))


UNICODE_EDITS = (insert_hazard_at_structure, insert_hazard_at_structure, substitute_structure,
                 substitute_confusable, add_combining_mark)


@seed_text_generator
def unicode(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """Hazard characters at structural positions: where languages disagree on whitespace, line
    breaks, surrogates and character classes, a twin's built-ins leak into its verdicts."""
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(UNICODE_EDITS)(rng, text)
    return text


# --- numbers ------------------------------------------------------------------------------

MAX_DOUBLE = 1.7976931348623157e308
OVERFLOW = Fraction(2**1024)  # the double "after" the largest one when rounding (SPEC-neutral IEEE fact)
SPECIAL_DOUBLES = (0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, MAX_DOUBLE, 1.0,
                   0.1, 1e23, 2.0**53, 2.0**64, 9007199254740993.0, 1e21, 1e-7)
FIXED_LITERALS = (
    "-0", "-0.0", "0e0", "0E-0", "1E400", "1e-400", "-1e400", "2e308", "01", "-01", "00", "+1", "1.",
    ".5", "-.5", "1e", "1e+", "-", "5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.797693134862315807e308",
    "1.7976931348623159e308", "-1.7976931348623159e308", "9007199254740991", "9007199254740992",
    "-9007199254740991", "-9007199254740992", "1234567890123456", "12345678901234567",
    "18446744073709551616", "100000000000000000000.5", "1e21", "1e-7", "0.000001",
    "9007199254740993.0", "9007199254740995.0",
)


@lru_cache(maxsize=None)
def power_of_five(exponent: int) -> int:
    """Cached: the same few hundred powers serve every exact decimal expansion."""
    return 5**exponent


def exact_decimal(value: Fraction) -> tuple[str, int]:
    """(digits, exponent) with value == int(digits) * 10**exponent exactly, for a value whose
    denominator is a power of two (every double and every midpoint between two is one)."""
    shift = value.denominator.bit_length() - 1
    return str(value.numerator * power_of_five(shift)), -shift


def random_double(rng: random.Random) -> float:
    """A positive double: a notable one, a subnormal, or a normal with a uniform exponent."""
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(SPECIAL_DOUBLES)
    if roll < 0.3:
        return math.ldexp(rng.getrandbits(52), -1074)
    return math.ldexp(1 + rng.getrandbits(52) / 2**52, rng.randint(-1022, 1023))


def one_unit_below(digits: str) -> str:
    """The digit string minus one in its last place; string work when no borrow is needed,
    because converting a 700-digit string to an int and back costs more than the rest."""
    last = digits[-1]
    return digits[:-1] + chr(ord(last) - 1) if last != "0" else str(int(digits) - 1)


def one_unit_above(digits: str) -> str:
    last = digits[-1]
    return digits[:-1] + chr(ord(last) + 1) if last != "9" else str(int(digits) + 1)


def perturbed(rng: random.Random, digits: str, exponent: int) -> tuple[str, int]:
    """The exact midpoint, or a literal a hair above or below it, or a cut of it: the literals
    whose correct rounding needs every digit."""
    kind = rng.randrange(5)
    zeros = rng.randint(0, 40)
    if kind == 0:
        return digits, exponent  # a tie: goes to the even significand
    if kind == 1:
        return digits + "0" * zeros + "1", exponent - zeros - 1  # just above the midpoint
    if kind == 2:
        return one_unit_below(digits) + "9" * zeros, exponent - zeros  # just below it
    keep = min(len(digits), rng.randint(17, 800))
    cut = digits[:keep]
    if kind == 4:
        cut = one_unit_above(cut)  # the cut rounded up: above the midpoint again
    return cut, exponent + len(digits) - keep


def formatted(rng: random.Random, digits: str, exponent: int) -> str:
    """A digit string times a power of ten written as a JSON literal: scientific with either
    exponent sign and case (sometimes zero-padded), or positional when that stays short."""
    digits = digits.lstrip("0") or "0"
    point = exponent + len(digits)  # the value is 0.DIGITS times 10**point
    if -20 < point <= 40 and rng.random() < 0.3:
        if point <= 0:
            return "0." + "0" * -point + digits
        if point >= len(digits):
            return digits + "0" * (point - len(digits)) + ".0"
        return digits[:point] + "." + digits[point:]
    power = point - 1
    sign = "-" if power < 0 else rng.choice(("", "+"))
    padding = "0" * rng.choice((0, 0, 0, 1, 5, 30))
    fraction = "." + digits[1:] if len(digits) > 1 else ""
    return f"{digits[0]}{fraction}{rng.choice('eE')}{sign}{padding}{abs(power)}"


def midpoint_literal(rng: random.Random) -> str:
    """A literal at, just off, or cut from the exact midpoint between two adjacent doubles."""
    low = random_double(rng)
    high = OVERFLOW if low == MAX_DOUBLE else Fraction(math.nextafter(low, math.inf))
    digits, exponent = exact_decimal((Fraction(low) + high) / 2)
    literal = formatted(rng, *perturbed(rng, digits, exponent))
    return "-" + literal if rng.random() < 0.2 else literal


def big_integer_literal(rng: random.Random) -> str:
    """Integers at and past 2**53 and 2**64, and runs of 15-40 digits around the 16-digit rule."""
    roll = rng.randrange(3)
    if roll == 0:
        value = 2**53 + rng.randint(-3, 3)
    elif roll == 1:
        value = 2**64 + rng.randint(-3, 3)
    else:
        value = rng.randrange(10 ** rng.randint(14, 39), 10 ** rng.randint(40, 41))
    return ("-" if rng.random() < 0.3 else "") + str(value)


def long_exponent_literal(rng: random.Random) -> str:
    """Exponents written with many leading zeros: a reader that caps exponent digits misreads them."""
    return (rng.choice(("1", "1.5", "0", "9")) + rng.choice("eE") + rng.choice(("", "+", "-"))
            + "0" * rng.randint(1, 60) + rng.choice(("1", "308", "324", "400", "0")))


def hazardous_literal(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(FIXED_LITERALS)
    if roll < 0.75:
        return midpoint_literal(rng)
    if roll < 0.9:
        return big_integer_literal(rng)
    return long_exponent_literal(rng)


def with_member_inserted(rng: random.Random, text: str, member: str) -> str:
    """`member` ("key":value) added to an object of the text (a new one when it has none),
    with a comma only when the object was not empty, so the rest stays well-formed."""
    opener = text.find("{", any_position(rng, text))
    if opener < 0:
        opener = text.find("{")
    if opener < 0:
        return text + rng.choice(SEPARATORS) + "{" + member + "}"
    after = opener + 1
    comma = "" if text.startswith("}", after) else ","
    return text[:after] + member + comma + text[after:]


@seed_text_generator
def numbers(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """A number in a seed replaced by (or an object given) a literal where readers differ:
    midpoints between doubles, subnormals, overflow, invalid forms, big integers."""
    literal = hazardous_literal(rng)
    start = any_position(rng, text)
    match = NUMBER.search(text, start, start + SEARCH_WINDOW) or NUMBER.search(text, 0, SEARCH_WINDOW)
    if match and rng.random() < 0.7:
        return replaced(text, match.start(), match.end(), literal)
    return with_member_inserted(rng, text, '"n":' + literal)


# --- structure ----------------------------------------------------------------------------

COMMON_DEPTH_LIMITS = (16, 32, 64, 100, 128, 256, 512, 1000)
DEFAULT_KEYS = ("a", "name", "arguments", "__proto__", "constructor", "x")
DUPLICATE_VALUES = ("0", "null", "{}", "[1]", '"dup"')


def depth_near_common_limits(rng: random.Random) -> int:
    if rng.random() < 0.2:
        return rng.randint(1, 1100)
    return max(1, rng.choice(COMMON_DEPTH_LIMITS) + rng.randint(-2, 2))


def nested_value(rng: random.Random, depth: int) -> str:
    """`depth` nested containers (objects, arrays, or alternating) around a scalar."""
    style = rng.randrange(3)
    if style == 0:
        return '{"a":' * depth + "1" + "}" * depth
    if style == 1:
        return "[" * depth + "]" * depth
    pairs, odd = divmod(depth, 2)
    return '{"a":[' * pairs + '{"a":1}' * odd + ("0" if not odd else "") + "]}" * pairs


def escaped_variant(rng: random.Random, key: str) -> str:
    """The key with one character written as a \\uXXXX escape (either hex case): the same key
    to a JSON reader, a different one to anything that compares raw text."""
    if not key:
        return key
    index = rng.randrange(len(key))
    escape = f"\\u{ord(key[index]):04x}" if ord(key[index]) < 0x10000 else key[index]
    if rng.random() < 0.5:
        escape = escape.upper().replace("\\U", "\\u")
    return key[:index] + escape + key[index + 1:]


def seed_key(rng: random.Random, text: str) -> tuple[str, int | None]:
    """A key of an object in the text and the index of the `{` before it, or a default key."""
    start = any_position(rng, text)
    match = OBJECT_KEY.search(text, start, start + SEARCH_WINDOW) or OBJECT_KEY.search(text, 0, SEARCH_WINDOW)
    if not match:
        return rng.choice(DEFAULT_KEYS), None
    opener = text.rfind("{", 0, match.start())
    return match.group(1), (opener if opener >= 0 else None)


def duplicate_key_member(rng: random.Random, key: str) -> str:
    variant = escaped_variant(rng, key) if rng.random() < 0.6 else key
    return '"' + variant + '":' + rng.choice(DUPLICATE_VALUES)


def long_key(rng: random.Random) -> str:
    return rng.choice(("k", "ab", "\u00e9", "\U0001F600", "\\n")) * (2 ** rng.randint(6, 13) + rng.randint(-2, 2))


def structure_value(rng: random.Random, key: str) -> str:
    """A JSON value built to stress a reader's bookkeeping rather than its syntax."""
    kind = rng.randrange(5)
    if kind == 0:
        return "{" + f'"{key}":1,' + duplicate_key_member(rng, key) + "}"
    if kind == 1:
        return nested_value(rng, depth_near_common_limits(rng))
    if kind == 2:
        return rng.choice(('{"":0}', '{"":0,"":1}', '{"":{"":[]}}', '[{"":""}]'))
    if kind == 3:
        return '{"' + long_key(rng) + '":1}'
    return "[" + ",".join(["{}"] * (2 ** rng.randint(0, 11) + rng.randint(-1, 1))) + "]"


@seed_text_generator
def structure(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """Duplicate keys (plain and escaped-equal), deep nesting around common limits, empty and
    very long keys, wide arrays: alone, or planted in a seed's own object."""
    key, opener = seed_key(rng, text)
    roll = rng.random()
    if roll < 0.35:
        return structure_value(rng, key)
    if roll < 0.6 and opener is not None:
        after = opener + 1  # a second spelling of a key the object already has
        return text[:after] + duplicate_key_member(rng, key) + "," + text[after:]
    return with_member_inserted(rng, text, f'"{key}":' + structure_value(rng, key))


# --- lengths ------------------------------------------------------------------------------

ROUND_CAPS = (1000, 10000, 100000)  # 10,000 and 100,000 are the bundled contract's caps (SPEC.md)
REPEATED_UNITS = ("{", "}", '"', "\\", "\n", "{}", "[")
# Exact lengths a seed is padded or cut to: 2^k - 1, 2^k and 2^k + 1 from 16 units, and each
# cap and its neighbours, up to one past the largest cap (longer is refused like it, at a cost).
# Exact, because a rule keyed on one length (`text.length === 4096`) is taken by that length
# only; a random length near it is that length one time in five at best.
EXACT_LENGTHS = tuple(sorted(length for length in {2 ** k + step for k in range(4, 18) for step in (-1, 0, 1)}
                             | {cap + step for cap in ROUND_CAPS for step in (-1, 0, 1)}
                             if length <= max(ROUND_CAPS) + 1))
PADDING = (" ", "\n", "x", "\u00e9", "\U0001F600")  # the astral one: a pair, which a cut may split
EXACT_SHARE = 0.5  # of lengths cases, a seed padded or cut to an exact length


def length_near_limits(rng: random.Random) -> int:
    """Mostly up to 2**10 so that the mix stays short; a few times in six the round caps or
    powers of two up to past the largest cap."""
    roll = rng.random()
    if roll < 0.1:
        base = rng.choice(ROUND_CAPS)
    elif roll < 0.2:
        base = 2 ** rng.randint(11, 17)
    else:
        base = 2 ** rng.randint(0, 10)
    return max(0, base + rng.randint(-2, 2))


def units(text: str) -> bytes:
    """The text as UTF-16 units (two bytes each): what JS's length and the SPEC's caps count."""
    return text.encode("utf-16-le", "surrogatepass")


def at_length(text: str, filler: str, length: int) -> str:
    """``text`` cut or padded with ``filler`` to exactly ``length`` UTF-16 units. A cut may split
    a surrogate pair, leaving a lone surrogate, as a JS slice does."""
    data, fill = units(text), units(filler or " ")
    if len(data) < 2 * length:
        data += fill * ((2 * length - len(data)) // len(fill) + 1)
    return data[:2 * length].decode("utf-16-le", "surrogatepass")


@seed_text_generator
def lengths(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """Inputs whose length sits next to a power of two or a round cap: half the time a seed cut
    or padded to exactly such a length (``EXACT_LENGTHS``), in UTF-16 units; otherwise made of one
    repeated hazard or a repeated piece of a seed. Off-by-one bugs at buffer and cap sizes, and
    rules keyed on one length."""
    if rng.random() < EXACT_SHARE:
        length = rng.choice(EXACT_LENGTHS)
        filler = rng.choice(PADDING) if rng.random() < 0.5 or not text else text  # or the seed, repeated
        return at_length(text, filler, length)
    length = length_near_limits(rng)
    if rng.random() < 0.5 or not text:
        unit = rng.choice(REPEATED_UNITS)
    else:
        start = rng.randrange(len(text))
        unit = text[start:start + rng.randint(1, 40)]
    return (unit * (length // len(unit) + 1))[:length]


# --- prefixes -----------------------------------------------------------------------------

def structural_cut_ranges(text: str, opener: int) -> list[tuple[int, int]]:
    """Ranges [low, high) of cut points after the opener: just after `{`, `[`, `,`, `:` or a
    string (a key or a value), strictly inside a string, and inside a number."""
    ranges = []
    for match in JSON_TOKEN.finditer(text, opener, opener + PREFIX_WINDOW):
        start, end = match.span()
        first = text[start]
        if first == '"':
            closed = end - start > 1 and text[end - 1] == '"'
            if end - start > 2 or (not closed and end - start > 1):
                ranges.append((start + 1, end - 1 if closed else end))
            ranges.append((end, end + 1))
        elif first in "-0123456789":
            if end - start > 1:
                ranges.append((start + 1, end))
        elif first in "{[,:":
            ranges.append((end, end + 1))
    return ranges


@seed_text_generator
def prefixes(rng: random.Random, text: str, target: FuzzTarget) -> str:
    """A seed cut at a structural point of its JSON, as model output truncated mid-arguments."""
    start = any_position(rng, text)
    openers = [index for index in (text.find("{", start), text.find("[", start)) if index >= 0]
    if not openers:
        openers = [index for index in (text.find("{"), text.find("[")) if index >= 0]
    ranges = structural_cut_ranges(text, rng.choice(openers)) if openers else []
    if not ranges:
        return text[:any_position(rng, text)]
    low, high = rng.choice(ranges)
    return text[:rng.randrange(low, high)]


BUILTIN: dict[str, Generator] = {
    "mutate": mutate,
    "splice": splice,
    "dictionary": dictionary,
    "truncate": truncate,
    "unicode": unicode,
    "numbers": numbers,
    "structure": structure,
    "lengths": lengths,
    "prefixes": prefixes,
}


# --- one campaign's cases -------------------------------------------------------------------

class Generation:
    """Case ``index`` of a seed as (entry, generator name, fields): an entry, one of its
    generators, and the fields it returns, completed from a corpus case drawn by the same random
    stream, so a case is reproducible from (seed, index) alone. The same code runs in the
    harness (built-in generators) and in the plugins' sandbox (``sandbox.py``)."""

    def __init__(self, known: Mapping[str, Generator], targets: Mapping[str, FuzzTarget],
                 chosen: Mapping[str, Sequence[str]], weights: Mapping[str, float], seed: int) -> None:
        self.seed = seed
        self.targets = dict(targets)
        self.entry_names = sorted(self.targets)
        unweighed = [name for name in weights if name not in known]
        self.generators: dict[str, list[tuple[str, Generator]]] = {}
        self.weights: dict[str, list[float]] = {}
        for entry in self.targets:
            names = tuple(chosen.get(entry, tuple(BUILTIN)))
            unknown = [name for name in names if name not in known]
            if unknown:
                raise GeneratorError(f"entry {entry}: unknown generator(s) {', '.join(unknown)} "
                                     f"(known: {', '.join(sorted(known))})")
            if unweighed:
                raise GeneratorError(f"[tool.extparity.fuzz].weights: unknown generator(s) {', '.join(unweighed)}")
            self.generators[entry] = [(name, known[name]) for name in names]
            self.weights[entry] = [weights.get(name, 1.0) for name in names]

    def make(self, index: int) -> tuple[str, str, dict[str, Any]]:
        rng = random.Random(f"{self.seed}/{index}")
        entry = rng.choice(self.entry_names)
        (name, generator), = rng.choices(self.generators[entry], weights=self.weights[entry])
        target = self.targets[entry]
        try:
            fields = dict(generator(rng, target))
        except Exception as exc:  # a generator bug is the harness's, named with the case that shows it
            raise GeneratorError(f"generator {name} raised on case {index} of seed {self.seed}: "
                                 f"{type(exc).__name__}: {exc}") from None
        args = target.entry.args
        extra = [key for key in fields if key not in args]
        if extra:
            raise GeneratorError(f"generator {name} returned field(s) {', '.join(extra)} that entry {entry} "
                                 f"does not take ({', '.join(args)})")
        if any(arg not in fields for arg in args):
            if not target.seeds:
                raise GeneratorError(f"generator {name} left out fields of entry {entry} and the corpus has "
                                     f"no {entry} case to take them from")
            seed_case = rng.choice(target.seeds)
            fields = {arg: fields[arg] if arg in fields else seed_case[arg] for arg in args}
        return entry, name, {arg: fields[arg] for arg in args}


def with_plugins(refs: Sequence[str], root: Path) -> dict[str, Generator]:
    """The built-in generators and every plugin's, each name once."""
    known: dict[str, Generator] = dict(BUILTIN)
    for ref in refs:
        for name, generator in load_plugin(ref, root).items():
            if name in known:
                raise GeneratorError(f"{ref}: generator {name!r} is already defined")
            known[name] = generator
    return known


# --- plugins ------------------------------------------------------------------------------

def load_plugin(ref: str, root: Path) -> dict[str, Generator]:
    """ref is a file path relative to root ("fuzz/toolcalls.py") or a module name ("pkg.mod").
    The module must define GENERATORS: dict[str, Generator]. Errors are GeneratorError with one
    line naming the ref and what is wrong (missing file, import failure with the exception's
    one-line message, no GENERATORS, a value that is not callable)."""
    module = _import_file(ref, Path(root) / ref) if _names_a_file(ref) else _import_module(ref)
    generators = getattr(module, "GENERATORS", None)
    if generators is None:
        raise GeneratorError(f"fuzz plugin {ref}: defines no GENERATORS")
    if not isinstance(generators, dict):
        raise GeneratorError(f"fuzz plugin {ref}: GENERATORS is a {type(generators).__name__}, not a dict")
    for name, generator in generators.items():
        if not isinstance(name, str) or not name:
            raise GeneratorError(f"fuzz plugin {ref}: GENERATORS key {name!r} is not a non-empty string")
        if not callable(generator):
            raise GeneratorError(f"fuzz plugin {ref}: GENERATORS[{name!r}] is not callable "
                                 f"(a {type(generator).__name__})")
    return dict(generators)


def plugin_file(ref: str, root: Path, path: list[str] | None = None) -> Path | None:
    """The file ``ref`` loads, found without running any of it: a path relative to ``root``, or a
    module name looked up on ``path`` (``sys.path`` by default) as the import would (each
    package's ``__init__`` is located, not executed). None when there is no such file."""
    if _names_a_file(ref):
        found = Path(root) / ref
        return found if found.is_file() else None
    search: list[str] | None = list(sys.path if path is None else path)
    spec = None
    for depth in range(1, ref.count(".") + 2):
        spec = importlib.machinery.PathFinder.find_spec(".".join(ref.split(".")[:depth]), search)
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and Path(origin).is_file() else None


def _names_a_file(ref: str) -> bool:
    """A path has a slash or a .py suffix; a module name has neither."""
    return ref.endswith(".py") or "/" in ref or "\\" in ref


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _import_file(ref: str, path: Path):
    if not path.is_file():
        raise GeneratorError(f"fuzz plugin {ref}: no such file {path}")
    # A private module name: the plugin's file name (say toolcalls.py) must not shadow, or be
    # shadowed by, the package it fuzzes.
    name = "_extparity_fuzz_plugin_" + re.sub(r"\W", "_", ref)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise GeneratorError(f"fuzz plugin {ref}: {path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise GeneratorError(f"fuzz plugin {ref}: import failed: {_one_line(error)}") from None
    return module


def _import_module(ref: str):
    try:
        return importlib.import_module(ref)
    except Exception as error:
        raise GeneratorError(f"fuzz plugin {ref}: import failed: {_one_line(error)}") from None
