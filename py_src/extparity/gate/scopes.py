"""Which binding each identifier of a parsed JavaScript module refers to, or that it is free.

Why the gate needs it: a verified module is only as deterministic as the names it reads. A name
that resolves to nothing the module declares or imports is the environment's (``navigator``,
``Date``, ``fetch``), and a name declared at the top level that a function assigns is state that
survives from one call to the next. Both questions need real scopes: ``let Date = ...`` in one
block does not make ``Date`` local in the next one.

The resolver follows ECMAScript's scoping for module code (strict mode): ``var`` and ``arguments``
belong to the nearest function, ``let``/``const``/``class`` and function declarations to the
nearest block, parameters and a named function expression's name to the function, a ``catch``
parameter to its clause, ``for (let ...)`` to the loop. It reads the tree-sitter trees the module
linker parses (``subject.linker.parsed_modules``): one parse of the graph serves linking and checking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FUNCTIONS = {"function_declaration", "generator_function_declaration", "function_expression", "function",
             "generator_function", "arrow_function", "method_definition"}
BLOCKS = {"statement_block", "switch_body", "class_static_block"}
DECLARATIONS = {"function_declaration", "generator_function_declaration", "class_declaration"}


@dataclass(eq=False)
class Binding:
    name: str
    kind: str  # import, const, let, var, function, class, param, catch, arguments
    line: int
    scope: "Scope"


@dataclass(eq=False)
class Scope:
    parent: "Scope | None"
    function: bool  # var declarations and `arguments` live here
    names: dict[str, Binding] = field(default_factory=dict)

    @property
    def top(self) -> bool:
        return self.parent is None

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def declare(self, name: str, kind: str, line: int) -> None:
        self.names.setdefault(name, Binding(name, kind, line, self))


@dataclass(frozen=True)
class Reference:
    node: Any  # the identifier (a tree-sitter node)
    name: str
    binding: Binding | None  # None: a free name, the environment's
    in_function: bool  # inside a function body: runs after the module was evaluated
    writes: bool  # assigned (=, op=, ++/--, a for-in/of target, a destructuring target)


def line(node) -> int:
    return node.start_point[0] + 1


def text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")


def resolve(root, source: bytes) -> list[Reference]:
    """Every identifier reference of a module, in source order, with what it resolves to."""
    resolver = _Resolver(source)
    module = Scope(None, True)
    resolver.hoist_vars(module, root)
    resolver.declare_block(module, root)
    for child in root.named_children:
        resolver.visit(child, module, False)
    return sorted(resolver.references, key=lambda r: r.node.start_byte)


class _Resolver:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.references: list[Reference] = []

    # ---------------------------------------------------------------- declarations

    def pattern_names(self, node) -> list:
        """The identifiers a binding pattern declares (not its defaults or computed keys)."""
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            return [node]
        if kind in ("assignment_pattern", "object_assignment_pattern"):
            return self.pattern_names(node.child_by_field_name("left"))
        if kind == "pair_pattern":
            return self.pattern_names(node.child_by_field_name("value"))
        if kind in ("object_pattern", "array_pattern", "rest_pattern", "formal_parameters"):
            return [name for child in node.named_children for name in self.pattern_names(child)]
        return []

    def declare_pattern(self, scope: Scope, node, kind: str) -> None:
        for name in self.pattern_names(node):
            scope.declare(text(name, self.source), kind, line(name))

    def declare_block(self, scope: Scope, block) -> None:
        """The lexical declarations directly in a block (or the module, or a function body)."""
        for child in block.named_children:
            if child.type == "export_statement" and child.child_by_field_name("declaration") is not None:
                child = child.child_by_field_name("declaration")
            if child.type == "lexical_declaration":
                keyword = text(child.children[0], self.source)
                for declarator in child.named_children:
                    if declarator.type == "variable_declarator":
                        self.declare_pattern(scope, declarator.child_by_field_name("name"), keyword)
            elif child.type in DECLARATIONS and child.child_by_field_name("name") is not None:
                name = child.child_by_field_name("name")
                scope.declare(text(name, self.source), "class" if "class" in child.type else "function", line(name))
            elif child.type == "import_statement":
                self.declare_imports(scope, child)

    def declare_imports(self, scope: Scope, node) -> None:
        clause = next((c for c in node.children if c.type == "import_clause"), None)
        for item in clause.named_children if clause is not None else ():
            if item.type == "identifier":
                scope.declare(text(item, self.source), "import", line(item))
            elif item.type == "namespace_import":
                scope.declare(text(item.named_children[-1], self.source), "import", line(item))
            elif item.type == "named_imports":
                for spec in item.named_children:
                    if spec.type == "import_specifier":
                        local = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                        scope.declare(text(local, self.source), "import", line(local))

    def hoist_vars(self, scope: Scope, body) -> None:
        """``var`` declarations anywhere in a function body (or the module), not in nested functions."""
        stack = list(body.named_children)
        while stack:
            node = stack.pop()
            if node.type in FUNCTIONS or node.type == "class_body":
                continue
            if node.type == "variable_declaration":
                for declarator in node.named_children:
                    if declarator.type == "variable_declarator":
                        self.declare_pattern(scope, declarator.child_by_field_name("name"), "var")
            elif node.type == "for_in_statement" and self._keyword(node) == "var":
                self.declare_pattern(scope, node.child_by_field_name("left"), "var")
            stack.extend(node.named_children)

    def _keyword(self, node) -> str | None:
        kind = node.child_by_field_name("kind")
        return text(kind, self.source) if kind is not None else None

    # ---------------------------------------------------------------- references

    def refer(self, node, scope: Scope, in_function: bool, writes: bool = False) -> None:
        name = text(node, self.source)
        self.references.append(Reference(node, name, scope.lookup(name), in_function, writes))

    def visit_pattern(self, node, scope: Scope, in_function: bool, writes: bool) -> None:
        """A binding or assignment pattern: its names are declared (``writes=False``: skipped
        here) or assigned (``writes=True``); defaults and computed keys are ordinary reads."""
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            if writes:
                self.refer(node, scope, in_function, writes=True)
        elif kind in ("assignment_pattern", "object_assignment_pattern"):
            self.visit_pattern(node.child_by_field_name("left"), scope, in_function, writes)
            self.visit(node.child_by_field_name("right"), scope, in_function)
        elif kind == "pair_pattern":
            key = node.child_by_field_name("key")
            if key.type == "computed_property_name":
                self.visit(key, scope, in_function)
            self.visit_pattern(node.child_by_field_name("value"), scope, in_function, writes)
        elif kind in ("object_pattern", "array_pattern", "rest_pattern", "formal_parameters"):
            for child in node.named_children:
                self.visit_pattern(child, scope, in_function, writes)
        else:  # a member expression as an assignment target, or a parameter's default value
            self.visit(node, scope, in_function)

    def visit_function(self, node, scope: Scope) -> None:
        inner = Scope(scope, True)
        name = node.child_by_field_name("name")
        if node.type == "method_definition":
            if name is not None and name.type == "computed_property_name":
                self.visit(name, scope, True)
        elif name is not None and node.type not in DECLARATIONS:  # a named function expression
            inner.declare(text(name, self.source), "function", line(name))
        if node.type != "arrow_function":
            inner.declare("arguments", "arguments", line(node))
        parameters = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        if parameters is not None:
            self.declare_pattern(inner, parameters, "param")
        body = node.child_by_field_name("body")
        if body is not None and body.type == "statement_block":
            self.hoist_vars(inner, body)
            self.declare_block(inner, body)
        if parameters is not None:
            self.visit_pattern(parameters, inner, True, writes=False)
        if body is not None:
            for child in body.named_children if body.type == "statement_block" else [body]:
                self.visit(child, inner, True)

    def visit(self, node, scope: Scope, in_function: bool) -> None:
        kind = node.type
        if kind in FUNCTIONS:
            self.visit_function(node, scope)
        elif kind in BLOCKS:
            block = Scope(scope, False)
            self.declare_block(block, node)
            for child in node.named_children:
                self.visit(child, block, in_function)
        elif kind in ("identifier", "shorthand_property_identifier"):
            self.refer(node, scope, in_function)
        elif kind == "import_statement":
            return  # declared with the module's scope; specifiers are not references
        elif kind == "export_statement":
            self.visit_export(node, scope, in_function)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    self.visit_pattern(declarator.child_by_field_name("name"), scope, in_function, writes=False)
                    value = declarator.child_by_field_name("value")
                    if value is not None:
                        self.visit(value, scope, in_function)
        elif kind in ("assignment_expression", "augmented_assignment_expression"):
            self.visit_pattern(node.child_by_field_name("left"), scope, in_function, writes=True)
            self.visit(node.child_by_field_name("right"), scope, in_function)
        elif kind == "update_expression":
            argument = node.child_by_field_name("argument")
            if argument.type == "identifier":
                self.refer(argument, scope, in_function, writes=True)
            else:
                self.visit(argument, scope, in_function)
        elif kind == "for_statement":
            loop = Scope(scope, False)
            initializer = node.child_by_field_name("initializer")
            if initializer is not None and initializer.type == "lexical_declaration":
                self.declare_block(loop, _Holder([initializer]))
            for child in node.named_children:
                self.visit(child, loop, in_function)
        elif kind == "for_in_statement":
            loop = Scope(scope, False)
            left = node.child_by_field_name("left")
            keyword = self._keyword(node)
            if keyword in ("let", "const"):
                self.declare_pattern(loop, left, keyword)
            self.visit_pattern(left, loop, in_function, writes=keyword is None)
            self.visit(node.child_by_field_name("right"), scope, in_function)
            self.visit(node.child_by_field_name("body"), loop, in_function)
        elif kind == "catch_clause":
            clause = Scope(scope, False)
            parameter = node.child_by_field_name("parameter")
            if parameter is not None:
                self.declare_pattern(clause, parameter, "catch")
                self.visit_pattern(parameter, clause, in_function, writes=False)
            self.visit(node.child_by_field_name("body"), clause, in_function)
        elif kind in ("class_declaration", "class"):
            inner = Scope(scope, False)
            name = node.child_by_field_name("name")
            if name is not None and kind == "class":
                inner.declare(text(name, self.source), "class", line(name))
            for child in node.named_children:
                if name is None or child.start_byte != name.start_byte:
                    self.visit(child, inner, in_function)
        elif kind == "field_definition":  # initialisers run when an instance is made
            for child in node.named_children:
                if child.type == "computed_property_name":
                    self.visit(child, scope, in_function)
                elif child.type not in ("property_identifier", "private_property_identifier"):
                    self.visit(child, Scope(scope, True), True)
        else:
            for child in node.named_children:
                self.visit(child, scope, in_function)

    def visit_export(self, node, scope: Scope, in_function: bool) -> None:
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        if declaration is not None:
            self.visit(declaration, scope, in_function)
        elif value is not None:
            self.visit(value, scope, in_function)
        elif node.child_by_field_name("source") is None:  # export { a as b }: `a` is read
            clause = next((c for c in node.children if c.type == "export_clause"), None)
            for spec in clause.named_children if clause is not None else ():
                self.refer(spec.child_by_field_name("name"), scope, in_function)


class _Holder:
    """A stand-in block holding one declaration (a ``for`` loop's initialiser)."""

    def __init__(self, children: list) -> None:
        self.named_children = children
