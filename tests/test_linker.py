"""The module linker: the ES module grammar real extensions use, linked faithfully or refused.

Each linked graph is evaluated in QuickJS in both forms (module and script) and must give the
values a browser's module loader would; every refusal names file and line.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import quickjs

from extparity.subject.linker import PRELUDE, REGISTRY, LinkError, link_adapter, module_graph


def write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def evaluate(root: Path, entry: str, expression: str, form: str):
    """Link from `entry`, evaluate every module in `form`, then return `expression`'s JSON."""
    ctx = quickjs.Context()
    ctx.eval(PRELUDE)
    for module in module_graph(root, [entry]):
        if form == "module":
            ctx.module(module.module)
            while ctx.execute_pending_job():
                pass
        else:
            ctx.eval(module.script)
    return json.loads(ctx.eval(f"JSON.stringify({expression})"))


GRAPH = {
    "src/main.js": """\
import def, { b as c,
  d } from "./lib/b.js";
import * as ns from '../src/lib/b.js';
import "./side.js";
export { c as renamed, d };
export * from "./lib/b.js";
export * as lib from "./lib/b.js";
export default function named() { return def() + c + d + ns.d; }
export const k = 1, l = 2;
export async function later() { const side = await import("./side.js"); return side.side; }
export class Thing {}
export function* numbers() { yield 1; }
const decoys = [/export x/g.source, `import ${k} from "./nowhere.js"`, "export { nothing }"];
// import { nothing } from "./nowhere.js";
export { decoys };
""",
    "src/lib/b.js": 'export default () => "D";\nexport const b = "B", d = "d";\nexport { b as also };\n',
    "src/side.js": "export const side = 7;\n",
}
MAIN = f'{REGISTRY}["src/main.js"]'


@pytest.mark.parametrize("form", ["module", "script"])
def test_the_grammar_real_extensions_use_links_and_evaluates_as_a_browser_would(tmp_path, form):
    root = write(tmp_path, GRAPH)
    names = evaluate(root, "src/main.js", f"Object.keys({MAIN}).sort()", form)
    assert names == sorted(["renamed", "d", "default", "k", "l", "later", "Thing", "numbers", "decoys", "b", "also", "lib"])
    assert evaluate(root, "src/main.js", f"{MAIN}.default()", form) == "DBdd"
    assert evaluate(root, "src/main.js", f"[{MAIN}.renamed, {MAIN}.also, {MAIN}.lib.b, {MAIN}.k + {MAIN}.l]", form) == ["B", "B", "B", 3]
    assert evaluate(root, "src/main.js", f"{MAIN}.decoys", form) == ["export x", 'import 1 from "./nowhere.js"', "export { nothing }"]
    assert evaluate(root, "src/main.js", f"[typeof {MAIN}.Thing, Array.from({MAIN}.numbers())]", form) == ["function", [1]]


def test_the_graph_is_dependencies_first_and_hashes_the_bytes_on_disk(tmp_path):
    import hashlib

    root = write(tmp_path, GRAPH)
    graph = module_graph(root, ["src/main.js"])
    assert [m.path for m in graph] == ["src/lib/b.js", "src/side.js", "src/main.js"]
    assert graph[-1].imports == ("src/lib/b.js", "src/side.js")
    assert all(m.sha256 == hashlib.sha256((root / m.path).read_bytes()).hexdigest() for m in graph)


def test_rewrites_keep_every_line_where_it_was(tmp_path):
    root = write(tmp_path, GRAPH)
    main = module_graph(root, ["src/main.js"])[-1]
    original = GRAPH["src/main.js"].split("\n")
    linked = main.module.split("\n")
    assert linked[original.index("export class Thing {}")] == "class Thing {}"
    assert main.script.split("\n")[original.index("export class Thing {}")] == "class Thing {}"


def test_a_local_export_shadows_a_star_export_of_the_same_name(tmp_path):
    root = write(tmp_path, {"a.js": 'export * from "./b.js";\nexport const b = "local";\n', "b.js": 'export const b = "star";\n'})
    assert evaluate(root, "a.js", f'{REGISTRY}["a.js"].b', "module") == "local"


REFUSALS = [
    ("live let", {"a.js": "export let n = 1;\n"}, "a.js:1", "live binding"),
    ("live var", {"a.js": "var x;\nexport var n = 1;\n"}, "a.js:2", "live binding"),
    ("destructuring", {"a.js": "export const { a } = { a: 1 };\n"}, "a.js:1", "destructuring"),
    ("cycle", {"a.js": 'import { b } from "./b.js";\nexport const a = 1;\n', "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n'},
     "import cycle: a.js -> b.js -> a.js", ""),
    ("bare specifier", {"a.js": 'import x from "lodash";\n'}, "a.js:1", "bare specifier 'lodash'"),
    ("outside the tree", {"a.js": 'import x from "../../etc/x.js";\n'}, "a.js:1", "outside the tree"),
    ("missing module", {"a.js": 'import { x } from "./gone.js";\n'}, "gone.js", "imported by a.js"),
    ("missing export", {"a.js": 'import { nope } from "./b.js";\n', "b.js": "export const b = 1;\n"}, "a.js:1", "b.js does not export nope"),
    ("import.meta", {"a.js": "export const u = import.meta.url;\n"}, "a.js:1", "import.meta"),
    ("top-level await", {"a.js": "const x = await Promise.resolve(1);\n"}, "a.js:1", "top-level await"),
    ("computed import()", {"a.js": "export function f(p) { return import(p); }\n"}, "a.js:1", "computed specifier"),
    ("syntax error", {"a.js": "export function (\n"}, "a.js:1", "cannot parse"),
    ("ambiguous stars", {"a.js": 'export * from "./b.js";\nexport * from "./c.js";\n', "b.js": "export const x = 1;\n", "c.js": "export const x = 2;\n"},
     "a.js:2", "two `export *` sources"),
]


@pytest.mark.parametrize(("files", "where", "words"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_what_a_script_cannot_do_faithfully_is_refused_naming_file_and_line(tmp_path, files, where, words):
    root = write(tmp_path, files)
    with pytest.raises(LinkError) as raised:
        module_graph(root, ["a.js"])
    assert where in str(raised.value) and words in str(raised.value)


def test_an_adapter_is_one_module_with_a_default_export_and_no_imports(tmp_path):
    root = write(tmp_path, {"ok.js": "export default function (target, x) { return target(x) + '!'; }\n",
                            "imports.js": 'import { x } from "./ok.js";\nexport default function () {}\n',
                            "no-default.js": "export function adapt() {}\n"})
    assert link_adapter(root / "ok.js", "parse").exports == ("default",)
    with pytest.raises(LinkError, match="must not import"):
        link_adapter(root / "imports.js", "parse")
    with pytest.raises(LinkError, match="export default function"):
        link_adapter(root / "no-default.js", "parse")


def test_a_graph_is_linked_once_for_identical_bytes_and_again_when_a_file_changes(tmp_path):
    """Engines share a link (the trees hold byte-identical files); a file that changed since, in
    either place, must never be served from that link."""
    first = write(tmp_path / "a", GRAPH)
    second = write(tmp_path / "b", GRAPH)
    graph = module_graph(first, ["src/main.js"])
    assert module_graph(second, ["src/main.js"]) == graph
    (second / "src/lib/b.js").write_text(GRAPH["src/lib/b.js"] + "// changed\n", encoding="utf-8")
    changed = {m.path: m for m in module_graph(second, ["src/main.js"])}
    assert changed["src/lib/b.js"].sha256 == hashlib.sha256((second / "src/lib/b.js").read_bytes()).hexdigest()
    assert "// changed" in changed["src/lib/b.js"].module and "// changed" in changed["src/lib/b.js"].script
    (first / "src/lib/b.js").write_text("export let live = 1;\n", encoding="utf-8")
    with pytest.raises(LinkError, match="src/lib/b.js"):
        module_graph(first, ["src/main.js"])
