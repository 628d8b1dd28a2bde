"""A static model of a solution file: its Triton kernels and the places that launch them.

Built with the standard library's `ast` only, so that triage runs on a GPU machine that has
nothing beyond torch, triton, numpy, click and pyyaml. Node positions are kept so that findings
can cite lines and fixes can splice text without reformatting the user's file.
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

# A line and its ending, split where Python's tokenizer splits (`\r\n`, `\r`, `\n`; not at form feeds).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class SourceError(ValueError):
    """The solution could not be read or parsed (a user mistake: reported in one line)."""


@dataclass
class Param:
    name: str
    index: int
    constexpr: bool
    default: Optional[ast.expr] = None


@dataclass
class ConfigSpec:
    """One `triton.Config(...)` of an autotune space, with whatever could be evaluated."""

    kwargs: dict[str, Any]
    num_warps: Optional[int] = None
    num_stages: Optional[int] = None


@dataclass
class Autotune:
    node: ast.Call
    configs: list[ConfigSpec]
    key: list[str]
    keywords: set[str]


@dataclass
class Kernel:
    """A `@triton.jit` function (a launched kernel or a helper it calls)."""

    name: str
    node: ast.FunctionDef
    params: list[Param]
    jit: ast.expr
    autotune: Optional[Autotune] = None
    heuristics: dict[str, ast.expr] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.node.lineno

    def unspecialized(self, option: str = "do_not_specialize") -> set[str]:
        """Parameters the JIT is told not to specialize (`@triton.jit(do_not_specialize=[...])`,
        by name or position; `do_not_specialize_on_alignment` likewise): such an integer is never
        known to be 1 or divisible by 16, such a pointer never known to be 16-byte aligned."""
        if not isinstance(self.jit, ast.Call):
            return set()
        node = next((k.value for k in self.jit.keywords if k.arg == option), None)
        if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return set()
        names = set()
        for item in node.elts:
            value = item.value if isinstance(item, ast.Constant) else None
            if isinstance(value, str):
                names.add(value)
            elif isinstance(value, int) and 0 <= value < len(self.params):
                names.add(self.params[value].name)
        return names

    def param(self, name: str) -> Optional[Param]:
        return next((p for p in self.params if p.name == name), None)

    @property
    def constexpr_names(self) -> list[str]:
        return [p.name for p in self.params if p.constexpr]


@dataclass
class LaunchSite:
    """`kernel[grid](args..., KW=..., num_warps=...)` somewhere in the file."""

    kernel: str
    node: ast.Call
    grid: ast.expr
    args: list[ast.expr]
    keywords: dict[str, ast.expr]
    function: Optional[ast.FunctionDef]
    loops: list[ast.AST]

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass
class SourceModule:
    path: Optional[str]
    text: str
    tree: ast.Module
    kernels: dict[str, Kernel]
    launches: list[LaunchSite]
    constants: dict[str, Any]
    tl_aliases: set[str]
    triton_aliases: set[str]

    @functools.cached_property
    def _lines(self) -> list[str]:
        """The text's lines with their endings, split once: `ast.get_source_segment` splits the whole
        text again, a character at a time, on every call, and the kernel walk asks for a segment per
        expression it notes (seconds for a file with a few hundred of them)."""
        return _LINE.findall(self.text)

    def line_text(self, line: Optional[int]) -> str:
        if not line:
            return ""
        lines = self._lines
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def segment(self, node: ast.AST) -> str:
        """`node`'s source text, as `ast.get_source_segment` gives it (columns are UTF-8 byte offsets)."""
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None or not hasattr(node, "lineno"):
            return ""
        lines = self._lines
        first, last = node.lineno - 1, end_line - 1
        if not 0 <= first <= last < len(lines):
            return ""
        if first == last:
            return lines[first].encode()[node.col_offset:end_col].decode()
        return "".join([lines[first].encode()[node.col_offset:].decode(), *lines[first + 1:last],
                        lines[last].encode()[:end_col].decode()])

    def canonical(self, node: ast.AST) -> Optional[str]:
        """`tl.load` / `triton.language.load` / `triton.cdiv` as 'tl.load' / 'triton.cdiv'."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.tl_aliases:
            return "tl." + rest if rest else "tl"
        if head in self.triton_aliases:
            if rest.startswith("language."):
                return "tl." + rest[len("language."):]
            return "triton." + rest if rest else "triton"
        return name

    def launched_kernels(self) -> list[Kernel]:
        names = {site.kernel for site in self.launches}
        return [k for k in self.kernels.values() if k.name in names]


def dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def load_source(solution: str | Path) -> tuple[Optional[str], str]:
    """Accept a path or the text of a solution; return (path or None, text)."""
    if isinstance(solution, Path) or ("\n" not in str(solution) and str(solution).endswith(".py")):
        path = Path(solution)
        if not path.is_file():
            raise SourceError(f"no such solution file: {path}")
        return str(path), path.read_text()
    return None, str(solution)


def parse_module(text: str, path: Optional[str] = None) -> SourceModule:
    try:
        tree = ast.parse(text, filename=path or "<solution>")
    except SyntaxError as error:
        raise SourceError(f"{path or 'solution'}:{error.lineno}: syntax error: {error.msg}") from None
    tl_aliases, triton_aliases = _aliases(tree)
    module = SourceModule(path, text, tree, {}, [], _module_constants(tree), tl_aliases, triton_aliases)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            kernel = _kernel_from(node, module)
            if kernel is not None:
                module.kernels[kernel.name] = kernel
    module.launches = list(_launch_sites(tree, module))
    return module


def _aliases(tree: ast.Module) -> tuple[set[str], set[str]]:
    tl_aliases, triton_aliases = {"tl"}, {"triton"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "triton.language":
                    tl_aliases.add(alias.asname or "triton")
                elif alias.name == "triton":
                    triton_aliases.add(alias.asname or "triton")
        elif isinstance(node, ast.ImportFrom) and node.module == "triton":
            for alias in node.names:
                if alias.name == "language":
                    tl_aliases.add(alias.asname or "language")
    return tl_aliases, triton_aliases


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = static_value(node.value, constants)
            if value is not None:
                constants[node.targets[0].id] = value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            value = static_value(node.value, constants)
            if value is not None:
                constants[node.target.id] = value
    return constants


def _is_jit(module: SourceModule, node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    name = module.canonical(target) or ""
    return name in ("triton.jit", "jit", "tl.jit")


def _kernel_from(node: ast.FunctionDef, module: SourceModule) -> Optional[Kernel]:
    jit = next((d for d in node.decorator_list if _is_jit(module, d)), None)
    if jit is None:
        return None
    params = []
    args = node.args.args
    defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
    for index, (arg, default) in enumerate(zip(args, defaults)):
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        params.append(Param(arg.arg, index, annotation.endswith("constexpr"), default))
    kernel = Kernel(node.name, node, params, jit)
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = module.canonical(decorator.func) or ""
        if name in ("triton.autotune", "autotune"):
            kernel.autotune = _autotune_from(decorator, module)
        elif name in ("triton.heuristics", "heuristics") and decorator.args:
            spec = decorator.args[0]
            if isinstance(spec, ast.Dict):
                for key, value in zip(spec.keys, spec.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        kernel.heuristics[key.value] = value
    return kernel


def _autotune_from(call: ast.Call, module: SourceModule) -> Autotune:
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    configs_node = keywords.get("configs", call.args[0] if call.args else None)
    configs: list[ConfigSpec] = []
    if isinstance(configs_node, (ast.List, ast.Tuple)):
        for element in configs_node.elts:
            if isinstance(element, ast.Call):
                configs.append(_config_from(element, module))
    key_node = keywords.get("key", call.args[1] if len(call.args) > 1 else None)
    key = []
    if isinstance(key_node, (ast.List, ast.Tuple)):
        key = [e.value for e in key_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return Autotune(call, configs, key, set(keywords))


def _config_from(call: ast.Call, module: SourceModule) -> ConfigSpec:
    kwargs: dict[str, Any] = {}
    if call.args and isinstance(call.args[0], ast.Dict):
        for key, value in zip(call.args[0].keys, call.args[0].values):
            if isinstance(key, ast.Constant):
                kwargs[key.value] = static_value(value, module.constants)
    spec = ConfigSpec(kwargs)
    for kw in call.keywords:
        if kw.arg in ("num_warps", "num_stages"):
            setattr(spec, kw.arg, static_value(kw.value, module.constants))
    return spec


class _Parents(ast.NodeVisitor):
    def __init__(self) -> None:
        self.stack: list[ast.AST] = []
        self.found: list[tuple[ast.Call, list[ast.AST]]] = []

    def generic_visit(self, node: ast.AST) -> None:
        self.stack.append(node)
        super().generic_visit(node)
        self.stack.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Subscript):
            self.found.append((node, list(self.stack)))
        self.generic_visit(node)


def _launch_sites(tree: ast.Module, module: SourceModule) -> Iterator[LaunchSite]:
    walker = _Parents()
    walker.visit(tree)
    for call, parents in walker.found:
        subscript = call.func
        name = dotted(subscript.value)
        if name is None:
            continue
        short = name.split(".")[-1]
        if short not in module.kernels:
            continue
        function = next((p for p in reversed(parents) if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        loops = []
        for parent in reversed(parents):
            if parent is function:
                break
            if isinstance(parent, (ast.For, ast.While, ast.comprehension)):
                loops.append(parent)
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        yield LaunchSite(short, call, subscript.slice, list(call.args), keywords, function, loops)


_BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.Div: lambda a, b: a / b,
}


def static_value(node: Optional[ast.AST], env: dict[str, Any]) -> Any:
    """Evaluate a constant expression (literals, names bound in `env`, arithmetic, min/max,
    triton.next_power_of_2/cdiv); None when it depends on anything else."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = static_value(node.operand, env)
        return -value if isinstance(value, (int, float)) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = static_value(node.left, env), static_value(node.right, env)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            try:
                return _BINOPS[type(node.op)](left, right)
            except (ZeroDivisionError, OverflowError, ValueError):
                return None
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [static_value(e, env) for e in node.elts]
        return tuple(values) if all(v is not None for v in values) else None
    if isinstance(node, ast.Call):
        name = (dotted(node.func) or "").split(".")[-1]
        args = [static_value(a, env) for a in node.args]
        if any(a is None for a in args):
            return None
        if name == "next_power_of_2" and len(args) == 1:
            return 1 << (int(args[0]) - 1).bit_length() if args[0] > 0 else 1
        if name == "cdiv" and len(args) == 2:
            return -(-args[0] // args[1])
        if name in ("min", "max") and args:
            return (min if name == "min" else max)(args)
        if name == "int" and len(args) == 1:
            return int(args[0])
    return None
