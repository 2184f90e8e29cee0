"""JUnit XML of a result, the format every CI system reads (pytest's ``--junitxml``).

One testsuite per engine and one testcase per case in it (classname ``engine.group``, so CI
tree views nest engine > group > case). A diverging, unexpected or stale cell is a
``<failure>`` carrying the reason and the diff against the baseline verdict; an engine that
gave no verdict is an ``<error>``; a known deviation is ``<skipped>``. Run-level checks
(module bytes, known-deviations file, corpus, other problems) are the testcases of a first
suite, ``extparity``, so a CI view that counts failures never shows green for a run that failed.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from ..results import verdict_diff
from ..results.read import engine_names, judged_against, verdicts
from ..run.outcomes import NO_VERDICT, Outcome

# XML 1.0 cannot carry these at all, not even escaped: shown as \uXXXX instead.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def render(document: dict) -> str:
    engines = engine_names(document)
    root = ET.Element("testsuites", name="extparity")
    suites = [_run_suite(document)] + [_engine_suite(document, name) for name in engines]
    for key in ("tests", "failures", "errors"):  # junit-10.xsd allows no "skipped" on <testsuites>
        root.set(key, str(sum(int(suite.get(key, "0")) for suite in suites)))
    root.extend(suites)
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(name: str, cases: list[ET.Element]) -> ET.Element:
    suite = ET.Element("testsuite", name=name)
    counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    for case in cases:
        for child, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            counts[key] += case.find(child) is not None
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.extend(cases)
    return suite


def _run_suite(document: dict) -> ET.Element:
    checks = {
        "modules": document["modules"]["problems"],
        "known-deviations": document["known_deviation_problems"],
        "corpus": document["corpus"]["problems"] + ([] if document["cases"] else ["no cases ran"]),
        "problems": document["problems"],
    }
    cases = []
    for name, problems in checks.items():
        case = ET.Element("testcase", classname="extparity", name=name)
        if problems:
            failure = ET.SubElement(case, "failure", type=name, message=_text(problems[0]))
            failure.text = _text("\n".join(problems))
        cases.append(case)
    return _suite("extparity", cases)


def _engine_suite(document: dict, engine: str) -> ET.Element:
    info = document["engines"].get(engine, {})
    cases = []
    for case in document["cases"]:
        if engine not in case["cells"]:
            continue
        cell = case["cells"][engine]
        element = ET.Element("testcase", classname=f"{engine}.{case.get('group', '').replace('/', '.')}",
                             name=case["id"])
        notes = case.get("notes", {}).get(engine, [])
        message = _text("; ".join(notes) or cell)
        if cell == Outcome.KNOWN:
            ET.SubElement(element, "skipped", type=cell, message=message)
        elif cell in NO_VERDICT:
            ET.SubElement(element, "error", type=cell, message=message).text = message
        elif cell != Outcome.PASS:
            failure = ET.SubElement(element, "failure", type=cell, message=message)
            failure.text = _text(failure_body(document, case, engine, cell, notes))
        if cell != Outcome.PASS:  # junit-10.xsd allows no file or line attribute on <testcase>
            ET.SubElement(element, "system-out").text = _text(f"corpus line: {case.get('file', '')}:{case.get('line', 0)}")
        cases.append(element)
    suite = _suite(engine, cases)
    properties = ET.Element("properties")
    for key, value in sorted(info.get("versions", {}).items()):
        ET.SubElement(properties, "property", name=f"version.{key}", value=_text(str(value)))
    for module, digest in sorted(info.get("module_hashes", {}).items()):
        ET.SubElement(properties, "property", name=f"sha256.{module}", value=digest)
    suite.insert(0, properties)
    return suite


def failure_body(document: dict, case: dict, engine: str, cell: str, notes: list[str]) -> str:
    """The reason, then what a person needs to see it: the diff against the verdict this
    engine was judged by, or for an unmet expectation the expectation and the verdict."""
    given = verdicts(case)
    mine = given.get(engine, "")
    parts = ["\n".join(notes)]
    if cell == Outcome.DIVERGES:
        against = judged_against(document, case)
        if against is not None:
            parts.append(verdict_diff.unified(against[1], mine, against[0], engine))
    elif cell in (Outcome.UNEXPECTED, Outcome.STALE):
        parts.append("expected (partial): " + _json(case.get("expect")))
        parts.append("verdict:\n" + "\n".join(verdict_diff.lines(mine)))
    return "\n\n".join(part for part in parts if part)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=True, sort_keys=True)
