"""A solution's source parsed once for every rule: import aliases resolved, its functions and
classes, the ``ModelNew`` class, its hot path, and the modules beside it that it imports."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TRITON_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics", "triton.language.jit"})


class Source:
    """A parsed solution: import aliases, functions, the ModelNew class and its hot path."""

    def __init__(self, text: str, filename: str = "solution.py", helper: bool = False):
        self.text = text
        self.filename = filename
        self.helper = helper  # a module beside the solution that it imports: all of it is hot path
        self.tree = ast.parse(text, filename=filename)
        self.aliases = self._aliases()
        self.aliases.update(self._assigned_aliases())
        self.functions: dict[str, ast.AST] = {node.name: node for node in self.tree.body
                                              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        # Module-level lambdas (``grid = lambda meta: ...``) are functions too.
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.functions[target.id] = node.value
        self.classes: dict[str, ast.ClassDef] = {node.name: node for node in self.tree.body
                                                 if isinstance(node, ast.ClassDef) and node.name != "ModelNew"}
        self.model_new = next((node for node in self.tree.body
                               if isinstance(node, ast.ClassDef) and node.name == "ModelNew"), None)
        self.methods = ({node.name: node for node in self.model_new.body
                         if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
                        if self.model_new else {})
        self.hot = self._hot_path()

    def dotted(self, node: ast.AST) -> str | None:
        """``torch.nn.functional.relu`` for ``F.relu`` (import aliases resolved), else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def names(self) -> Iterator[tuple[ast.AST, str]]:
        """(node, dotted name) for every outermost ``a.b.c`` chain rooted at an imported name."""
        inner = {id(node.value) for node in ast.walk(self.tree) if isinstance(node, ast.Attribute)}
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in inner:
                name = self.dotted(node)
                if name:
                    yield node, name

    def is_kernel(self, function: ast.AST) -> bool:
        for decorator in getattr(function, "decorator_list", []):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.dotted(target) in TRITON_DECORATORS:
                return True
        return False

    def hot_nodes(self) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(function, node) for every node inside a hot-path function."""
        for function in self.hot:
            for node in ast.walk(function):
                yield function, node

    def _aliases(self) -> dict[str, str]:
        aliases: dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for name in node.names:
                    if name.asname:
                        aliases[name.asname] = name.name
                    else:
                        root = name.name.split(".")[0]
                        aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for name in node.names:
                    aliases[name.asname or name.name] = f"{node.module}.{name.name}"
        return aliases

    def _assigned_aliases(self) -> dict[str, str]:
        """Module-level names bound to an imported one are aliases too (``add = torch.Tensor.add``)."""
        aliases = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Attribute, ast.Name)):
                target = self.dotted(node.value)
                for name in node.targets:
                    if target and isinstance(name, ast.Name):
                        aliases[name.id] = target
        return aliases

    def triton_decorators(self) -> list[ast.AST]:
        """The decorator expressions of Triton kernels: their arguments are code Triton runs."""
        found = []
        for node in ast.walk(self.tree):
            for decorator in getattr(node, "decorator_list", []):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if self.dotted(target) in TRITON_DECORATORS and isinstance(decorator, ast.Call):
                    found.append(decorator)
        return found

    def _hot_path(self) -> list[ast.AST]:
        forward = self.methods.get("forward")
        seen: dict[int, ast.AST] = {}
        pending = ([forward] if forward is not None else []) + self.triton_decorators()
        if self.helper:
            pending += [*self.functions.values(), *self.methods.values(),
                        *(method for cls in self.classes.values() for method in methods_of(cls))]
        while pending:
            function = pending.pop()
            if id(function) in seen or self.is_kernel(function):
                continue
            seen[id(function)] = function
            for node in ast.walk(function):
                if isinstance(node, ast.Name) and node.id in self.functions:
                    pending.append(self.functions[node.id])
                elif isinstance(node, ast.Name) and node.id in self.classes:
                    pending.extend(methods_of(self.classes[node.id]))
                elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id == "self" and node.attr in self.methods):
                    pending.append(self.methods[node.attr])
        return list(seen.values())

    def triton_ops(self) -> set[str]:
        """Operators this file registers with ``torch.library.triton_op`` (``torch.ops.ns.name``)."""
        names = set()
        for node in ast.walk(self.tree):
            for decorator in getattr(node, "decorator_list", []):
                if (isinstance(decorator, ast.Call) and self.dotted(decorator.func) == "torch.library.triton_op"
                        and decorator.args and isinstance(decorator.args[0], ast.Constant)):
                    names.add(str(decorator.args[0].value).replace("::", "."))
        return names


def methods_of(cls: ast.ClassDef) -> list[ast.AST]:
    return [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def local_imports(source: Source, folder: Path) -> list[Path]:
    """Files in ``folder`` that the source imports by module name (``import helper``, ``from helper
    import add``): the solution's folder is importable, so these are the candidate's code too. A
    dotted name runs every package's ``__init__.py`` on the way (``import pkg.mod`` runs
    ``pkg/__init__.py`` before ``pkg/mod.py``), and ``from pkg import mod`` may import a submodule:
    all of them are read."""
    found = []
    for node in ast.walk(source.tree):
        base, names = folder, []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative, inside a package of the candidate's: from its own folder up
                base = Path(source.filename).resolve().parents[node.level - 1]
            module = [node.module] if node.module else []
            names = [*module, *(".".join([*module, alias.name]) for alias in node.names)]
        for name in names:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                here = parts[:depth]
                for candidate in (base.joinpath(*here).with_suffix(".py"), base.joinpath(*here, "__init__.py")):
                    if candidate.is_file() and candidate not in found:
                        found.append(candidate)
    return found


def imports_of(source: Source, modules: set[str], message: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in modules:
                yield node.lineno, message.format(module=name)
