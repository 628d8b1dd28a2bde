"""C++ and Python chunked at function/class boundaries with tree-sitter grammars.

A chunk is one or more whole sibling definitions (with the comments just above them); a definition
too big for one chunk is cut along its own children (methods, then statements), so a long pass
driver becomes several chunks that all carry its name as their symbol.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from ladder.indexer.chunking.base import Chunk, Unit, pack

# Node types that name a scope: (kind of node) -> field holding the name.
_DEFINITIONS = {
    "cpp": {"function_definition", "class_specifier", "struct_specifier", "union_specifier",
            "enum_specifier", "namespace_definition"},
    "python": {"function_definition", "class_definition"},
}
# Wrappers whose inner definition carries the name (template<...> class X, @decorator def f).
_WRAPPERS = {"template_declaration": None, "decorated_definition": "definition"}


# Containers that name nothing: their definitions name the chunks.
_TRANSPARENT = {"namespace_definition", "linkage_specification", "preproc_else", "preproc_elif"}
_LICENSE = re.compile(r"Copyright|SPDX-License|Permission is hereby granted|Licensed under")


@lru_cache(maxsize=None)
def _parser(language: str):
    from tree_sitter import Language, Parser

    if language == "cpp":
        import tree_sitter_cpp as grammar
    else:
        import tree_sitter_python as grammar
    return Parser(Language(grammar.language()))


def _function_name(node) -> str:
    """The declared name of a C++ function_definition (through pointer/reference declarators)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    name = declarator.child_by_field_name("declarator")
    return name.text.decode("utf-8", "replace") if name is not None else ""


def _definition(node):
    """The definition a node stands for (looking through template/decorator wrappers), or None."""
    while node.type in _WRAPPERS:
        field = _WRAPPERS[node.type]
        inner = node.child_by_field_name(field) if field else None
        if inner is None:  # template_declaration: the definition is its last named child
            named = [c for c in node.named_children if c.type != "template_parameter_list"]
            inner = named[-1] if named else None
        if inner is None:
            return None
        node = inner
    return node


def _name(node, language: str) -> str:
    if node.type == "function_definition" and language == "cpp":
        return _function_name(node)
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None else ""


def _end_row(node) -> int:
    """Last row a node occupies (a node ending at column 0 ends on the previous line)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _units(parent, language: str, qualifier: str, lines: Sequence[str], skip: int = 0) -> list[Unit]:
    """Units for the children of `parent`, covering its lines from first to last.

    Comments immediately above a child stay with it; lines of the parent before its first child
    and after its last one (a class header, a closing brace) become small units of their own.
    """
    body = parent.child_by_field_name("body")
    # Descend through a definition's body so that `class X {` and `};` are header and footer.
    children = (body if body is not None else parent).named_children[skip:]
    units: list[Unit] = []
    pending_comment: int | None = None
    for child in children:
        if child.type == "comment":
            if pending_comment is None:
                pending_comment = child.start_point[0]
            continue
        start = child.start_point[0] if pending_comment is None else pending_comment
        pending_comment = None
        units.append(_unit(child, start, language, qualifier, lines))
    if pending_comment is not None:
        last = [c for c in children if c.type == "comment"][-1]
        units.append(Unit(pending_comment, _end_row(last)))
    # Header and footer rows of the parent not covered by any child.
    if units:
        first, last = units[0].start, units[-1].end
        parent_start, parent_end = children[0].start_point[0] if skip else parent.start_point[0], _end_row(parent)
        if parent_start < first:
            units.insert(0, Unit(parent_start, first - 1))
        if last < parent_end:
            units.append(Unit(last + 1, parent_end))
        # Units may overlap when two nodes share a line (`} // namespace`): keep them disjoint.
        disjoint = [units[0]]
        for unit in units[1:]:
            if unit.start <= disjoint[-1].end:
                unit = Unit(disjoint[-1].end + 1, unit.end, unit.symbol, unit.split)
            if unit.start <= unit.end:
                disjoint.append(unit)
        units = disjoint
    return units


def _unit(node, start: int, language: str, qualifier: str, lines: Sequence[str]) -> Unit:
    definition = _definition(node)
    symbol, inner_qualifier = "", qualifier
    if definition is not None and definition.type in _DEFINITIONS[language]:
        name = _name(definition, language)
        if definition.type != "namespace_definition" and name:
            # Namespaces do not qualify (mlir::triton:: everywhere is noise); classes and
            # functions do, so a method reads `Pass::runOnOperation`.
            separator = "::" if language == "cpp" else "."
            symbol = f"{qualifier}{separator}{name}" if qualifier else name
            inner_qualifier = symbol
    target = definition if definition is not None else node

    def split() -> list[Unit]:
        return _units(target, language, inner_qualifier, lines)

    transparent = target.type in _TRANSPARENT or target.type.startswith("preproc_if")
    return Unit(start, _end_row(node), symbol, split if target.named_child_count else None,
                transparent=transparent)


def chunk_code(text: str, language: str) -> list[Chunk]:
    """Chunks of a C++ (`cpp`) or Python (`python`) source file."""
    tree = _parser(language).parse(text.encode("utf-8"))
    lines = text.split("\n")
    root = tree.root_node
    # A license header says nothing about the code: leave it out of the index.
    skip = 0
    for child in root.named_children:
        if child.type != "comment" or not _LICENSE.search(child.text.decode("utf-8", "replace")):
            break
        skip += 1
    return pack(_units(root, language, "", lines, skip), lines, "code")
