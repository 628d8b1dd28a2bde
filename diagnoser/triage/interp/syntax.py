"""Reading the kernel's AST: a call's argument by keyword or position, a parameter's literal default."""
from __future__ import annotations

import ast
from typing import Any, Optional


def call_arg(node: ast.Call, name: str, position: Optional[int] = None) -> Optional[ast.expr]:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    if position is not None and position < len(node.args):
        return node.args[position]
    return None


def literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
