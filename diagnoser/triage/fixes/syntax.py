"""Questions about a kernel's syntax tree that several rewrites ask: is this node that name, that
`tl` call, that number; does a statement read or write a name, or write memory."""
from __future__ import annotations

import ast
from typing import Optional

from .edit import NotApplicable


def is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def is_tl(node: ast.AST, tl: str) -> bool:
    """`node` is the file's name for triton.language (`tl`)."""
    return ast.unparse(node) == tl


def is_tl_call(node: ast.AST, tl: str, attr: str) -> bool:
    """`node` is a call of `tl.<attr>`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr \
        and is_tl(node.func.value, tl)


def number(node: Optional[ast.expr]) -> Optional[float]:
    """A literal number, ``float("inf")`` / ``float("-inf")`` and their negations; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Call) and is_name(node.func, "float") and len(node.args) == 1 \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        try:
            return float(node.args[0].value)
        except ValueError:
            return None
    return None


def reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def reads_any(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def writes(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(node))


def assigned_names(node: ast.AST) -> set[str]:
    """Every name ``node`` assigns (the set form of `writes`)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def writes_memory(node: ast.AST, tl: str) -> bool:
    """``node`` stores to memory: a ``tl.store`` or ``tl.atomic_*`` call anywhere inside it."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and (n.func.attr == "store" or n.func.attr.startswith("atomic_")) and is_tl(n.func.value, tl)
               for n in ast.walk(node))


def added_to(statement: ast.stmt) -> Optional[tuple[str, ast.expr]]:
    """(acc, term) of ``acc += term``, ``acc = acc + term`` or ``acc = term + acc``: an accumulation."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add) and isinstance(statement.target, ast.Name):
        return statement.target.id, statement.value
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.BinOp) and isinstance(statement.value.op, ast.Add)):
        return None
    acc, value = statement.targets[0].id, statement.value
    for mine, term in ((value.left, value.right), (value.right, value.left)):
        if is_name(mine, acc):
            return acc, term
    return None


def argument(call: ast.Call, name: str, position: int) -> Optional[ast.expr]:
    """A call's argument by keyword, else by position; None when it is not given."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return call.args[position] if position < len(call.args) else None


def enclosing_block(function: ast.FunctionDef, node: ast.AST) -> Optional[tuple[list[ast.stmt], int]]:
    """The statement list holding the innermost statement that contains ``node`` (through loops and
    branches), and that statement's index; None when no statement of the function holds it."""
    def search(block: list[ast.stmt]) -> Optional[tuple[list[ast.stmt], int]]:
        for index, statement in enumerate(block):
            if not any(sub is node for sub in ast.walk(statement)):
                continue
            for field in ("body", "orelse"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(statement, (ast.For, ast.While, ast.If)):
                    found = search(inner)
                    if found is not None:
                        return found
            return block, index
        return None

    return search(function.body)


def tensor_fill(node: ast.AST, tl: str) -> Optional[float]:
    """The value every element of ``tl.zeros(...)`` / ``tl.full(shape, value, ...)`` starts at; None
    for anything else, or a fill value that is not a literal number."""
    if is_tl_call(node, tl, "zeros"):
        return 0.0
    if is_tl_call(node, tl, "full"):
        return number(argument(node, "value", 1))
    return None


def identity_init(block: list[ast.stmt], loop: ast.For, name: str, tl: str, identity: float) -> ast.Assign:
    """``name``'s last assignment before ``loop`` in the block, which must fill it with ``identity``
    (an accumulator the loop starts from its reduction's identity); NotApplicable otherwise."""
    before = block[:block.index(loop)]
    init = next((s for s in reversed(before) if writes(s, name)), None)
    if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and is_name(init.targets[0], name)):
        raise NotApplicable(f"`{name}` is not set in the loops' block before them")
    if tensor_fill(init.value, tl) != identity:
        raise NotApplicable(f"`{name}` does not start at {identity}")
    return init


def statement_blocks(function: ast.FunctionDef) -> list[list[ast.stmt]]:
    """Every statement list of a function (its body, each loop's and branch's body and else)."""
    return [block for node in ast.walk(function) for field in ("body", "orelse")
            if isinstance(block := getattr(node, field, None), list) and block and isinstance(block[0], ast.stmt)]


def loop_header(loop: ast.For) -> str:
    """A for loop's target and range, compared by structure: two loops over the same range match."""
    return f"{ast.dump(loop.target)} in {ast.dump(loop.iter)}"
