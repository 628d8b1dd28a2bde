"""Static checks of a solution's source: a listable set of named rules over Python's ``ast``.

Every rule answers one question about the source and returns violations with a line number. The
rules guard against the known ways a candidate can look fast or correct without doing the work in
Triton (measuring.md). Rules with severity ``error`` reject the solution before it runs; ``warning``
rules are reported. Runtime guards (``runner.guards``) back up what source analysis cannot see.

The **hot path** is ``ModelNew.forward`` plus every function, ``ModelNew`` method or class (all its
methods) it calls or merely refers to (transitively) in the same file, and the arguments of every
Triton decorator (heuristics, autotune hooks, prune and perf-model functions, config pre-hooks),
which Triton calls on the candidate's behalf; Triton kernels themselves (``@triton.jit`` and
friends) are not: their bodies are Triton language, where ``tl.dot`` is the point. In the hot path
the candidate may allocate (``torch.empty*``, constant fills), reshape and view tensors, ask about
shapes, strides and devices, and launch Triton kernels; nothing else that computes.

A solution may import modules from files beside it (``check_solution``): each is checked with the
same rules, every function and method in it counting as hot path (it exists to be called from the
solution).

``python -m runner.static_check`` lists the rules; ``python -m runner.static_check FILE`` checks one
(and the files beside it that it imports).
"""
from __future__ import annotations

import ast
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Violation:
    rule: str
    severity: str
    line: int
    message: str

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str
    description: str
    check: Callable[["Source"], Iterator[tuple[int, str]]]


# ------------------------------------------------------------------------------- the parsed file

TRITON_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics", "triton.language.jit"}


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
                        *(method for cls in self.classes.values() for method in _methods(cls))]
        while pending:
            function = pending.pop()
            if id(function) in seen or self.is_kernel(function):
                continue
            seen[id(function)] = function
            for node in ast.walk(function):
                if isinstance(node, ast.Name) and node.id in self.functions:
                    pending.append(self.functions[node.id])
                elif isinstance(node, ast.Name) and node.id in self.classes:
                    pending.extend(_methods(self.classes[node.id]))
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


def _methods(cls: ast.ClassDef) -> list[ast.AST]:
    return [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def local_imports(source: Source, folder: Path) -> list[Path]:
    """Files in ``folder`` that the source imports by module name (``import helper``, ``from helper
    import add``): the solution's folder is importable, so these are the candidate's code too."""
    found = []
    for node in ast.walk(source.tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            for candidate in (folder.joinpath(*parts).with_suffix(".py"), folder.joinpath(*parts, "__init__.py")):
                if candidate.is_file() and candidate not in found:
                    found.append(candidate)
    return found


# ------------------------------------------------------------------------------- the rules

# torch.* calls allowed in the hot path: allocation, constant fills, metadata.
ALLOWED_TORCH_CALLS = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "device", "Size", "finfo", "iinfo", "is_tensor", "no_grad", "inference_mode",
    "promote_types", "result_type", "broadcast_shapes", "get_default_dtype", "is_floating_point",
    "tensor", "as_tensor", "scalar_tensor", "arange",
    # views: a new shape or order over the same memory, no compute
    "reshape", "flatten", "unflatten", "broadcast_to", "broadcast_tensors", "squeeze", "unsqueeze",
    "permute", "transpose", "t", "narrow", "select", "split", "chunk", "unbind", "movedim", "swapaxes",
    "swapdims", "as_strided", "view_as_real", "view_as_complex", "atleast_1d", "atleast_2d",
    "atleast_3d", "ravel", "set_grad_enabled", "is_grad_enabled",
}
# torch.library entry points for registering and launching Triton kernels as torch operators.
ALLOWED_LIBRARY_CALLS = {"triton_op", "wrap_triton", "capture_triton"}
ALLOWED_DEVICE_CALLS = {"current_device", "device_count", "get_device_capability",
                        "get_device_properties", "get_device_name", "device", "is_available"}
# Tensor methods that compute (seen as ``x.<name>(...)`` on anything that is not a module).
TENSOR_COMPUTE_METHODS = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "mv", "dot", "einsum", "conv2d", "sum", "mean",
    "prod", "max", "min", "amax", "amin", "argmax", "argmin", "softmax", "log_softmax", "exp",
    "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "relu", "relu_", "gelu", "silu",
    "sigmoid", "tanh", "erf", "clamp", "clamp_", "clip", "abs", "neg", "add", "add_", "sub", "sub_",
    "mul", "mul_", "div", "div_", "pow", "cumsum", "cumprod", "norm", "var", "std", "logsumexp",
    "masked_fill", "masked_fill_", "where", "gather", "scatter", "scatter_add", "index_select",
    "sort", "topk", "copy_", "clone", "addcmul", "lerp", "square", "reciprocal", "sign", "floor",
    "ceil", "round", "maximum", "minimum", "all", "any", "mse_loss", "cross_entropy",
    "to_sparse", "to_sparse_csr", "to_sparse_coo", "to_dense", "to_mkldnn", "as_subclass",
}
# Tensor methods that only describe a tensor or view it (``torch.Tensor.size(x)``).
TENSOR_QUERIES = {"size", "stride", "dim", "numel", "data_ptr", "element_size", "is_contiguous", "view",
                  "contiguous", "expand", "expand_as", "view_as", "reshape_as", "new_empty", "new_zeros",
                  "empty_like", "zero_", "fill_"}
HOST_READS = {"item", "tolist", "numpy", "cpu", "untyped_storage", "storage", "_typed_storage", "__array__",
              "__dlpack__"}
NN_CONTAINERS = {"Module", "Parameter", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict",
                 "Buffer", "init"}
STREAM_CALLS = {"Stream", "stream", "ExternalStream", "set_stream", "StreamContext"}
STREAM_METHODS = {"wait_stream", "record_stream", "wait_event"}
CONCURRENCY_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio",
                       "subprocess"}
INTROSPECTION_MODULES = {"gc", "inspect", "ctypes", "_ctypes", "cffi", "traceback", "importlib", "builtins",
                         "dis", "marshal"}
INTROSPECTION_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars"}
INTROSPECTION_NAMES = {"sys._getframe", "sys._current_frames", "sys.modules", "sys.exc_info", "sys.exception",
                       "sys.argv", "sys.meta_path", "sys.path_hooks", "logging.currentframe", "types.FunctionType",
                       "types.CodeType", "types.FrameType"}
# Attributes that lead from an object to frames, to the globals and closures of the functions that
# hold the runner's guards, or to every class in the process.
INTERNAL_ATTRIBUTES = {"__traceback__", "tb_frame", "tb_next", "f_back", "f_locals", "f_globals", "f_code",
                       "f_builtins", "gi_frame", "cr_frame", "ag_frame", "gi_code", "__globals__", "__closure__",
                       "__wrapped__", "__code__", "__builtins__", "__subclasses__", "__self__", "__func__",
                       "__kwdefaults__", "__defaults__", "cell_contents", "__loader__", "__spec__"}
OTHER_COMPILERS = ("torch.compile", "torch._dynamo", "torch._inductor", "torch.jit",
                   "torch.utils.cpp_extension", "torch.export", "torch.fx", "cupy", "numba", "tvm", "jax",
                   "tensorflow")
PATCHABLE_ROOTS = {"torch", "triton", "time", "builtins", "numpy", "runner", "os", "sys", "gc", "threading",
                   "subprocess", "signal", "io", "posix", "_thread"}
TRITON_HOOKS = {"knobs", "add_pre_run_hook", "pre_run_hooks", "launch_enter_hook", "launch_exit_hook",
                "jit_cache_hook", "jit_post_compile_hook", "kernel_load_start_hook", "kernel_load_end_hook",
                "add_stages_inspection_hook"}
# Methods of a registered operator that put other code behind it.
OPERATOR_OVERRIDES = {"register_kernel", "register_torch_dispatch", "register_fake", "_backend_fns", "_init_fn",
                      "register_autocast"}


def _torch_compute(source: Source) -> Iterator[tuple[int, str]]:
    registered = source.triton_ops()
    for _, node in source.hot_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield node.lineno, "uses the @ operator (a torch matmul) in the hot path"
        if not isinstance(node, ast.Call):
            continue
        name = source.dotted(node.func)
        if name is not None:
            if _torch_call_is_compute(name) and name.removeprefix("torch.ops.") not in registered:
                yield node.lineno, f"calls {name} in the hot path"
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in TENSOR_COMPUTE_METHODS:
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in source.aliases):
                yield node.lineno, f"calls the tensor method .{node.func.attr}() in the hot path"


def _torch_call_is_compute(name: str) -> bool:
    parts = name.split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return False
    if parts[1] in ("cuda", "npu"):
        return len(parts) > 2 and parts[2] not in ALLOWED_DEVICE_CALLS and parts[2] not in STREAM_CALLS
    if parts[1] == "nn":
        return not (len(parts) > 2 and parts[2] in NN_CONTAINERS)
    if parts[1] == "library":
        return not (len(parts) > 2 and parts[2] in ALLOWED_LIBRARY_CALLS)
    if parts[1] == "Tensor":  # torch.Tensor.add(x, y) is x.add(y)
        return len(parts) > 2 and parts[2] not in ALLOWED_TORCH_CALLS and parts[2] not in TENSOR_QUERIES
    if parts[1] in ("float16", "float32", "bfloat16", "float64", "int32", "int64", "bool", "uint8",
                    "int8", "int16", "dtype", "Generator"):
        return False
    return parts[1] not in ALLOWED_TORCH_CALLS


def _nn_module_called(source: Source) -> Iterator[tuple[int, str]]:
    init = source.methods.get("__init__")
    if init is None:
        return
    modules = set()
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = source.dotted(node.value.func) or ""
            if name.startswith("torch.nn.") and name.split(".")[2] not in NN_CONTAINERS:
                for target in node.targets:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self"):
                        modules.add(target.attr)
    for _, node in source.hot_nodes():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                and node.func.attr in modules):
            yield node.lineno, f"calls the torch.nn module self.{node.func.attr} in the hot path"


def _try_except(source: Source) -> Iterator[tuple[int, str]]:
    scopes = list(source.hot)
    if source.model_new is not None:
        scopes.append(source.model_new)
    seen = set()
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Try) and node.handlers and node.lineno not in seen:
                seen.add(node.lineno)
                yield node.lineno, "try/except around the kernel path (a fallback can hide a failing kernel)"


def _side_stream(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if not isinstance(node, ast.Call):
            continue
        name = source.dotted(node.func) or ""
        parts = name.split(".")
        if parts[0] == "torch" and parts[-1] in STREAM_CALLS:
            yield node.lineno, f"uses {name} (work on another stream can escape the timed region)"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in STREAM_METHODS:
            yield node.lineno, f"calls .{node.func.attr}() (cross-stream synchronisation)"


def _cuda_graph(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        parts = name.split(".")
        if parts[0] == "torch" and any(part in ("CUDAGraph", "graph", "graphs", "make_graphed_callables",
                                                "NPUGraph") for part in parts[1:]):
            yield node.lineno, (f"uses {name}: replayed graphs bypass Triton's launcher, so the launch "
                                "guards cannot see the work")


def _concurrency(source: Source) -> Iterator[tuple[int, str]]:
    yield from _imports_of(source, CONCURRENCY_MODULES,
                           "imports {module} (threads or processes can run work outside the timed region)")


def _caching(source: Source) -> Iterator[tuple[int, str]]:
    for function in source.hot:
        tainted = _identity_names(function)
        for node in ast.walk(function):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                yield node.lineno, f"`{type(node).__name__.lower()}` state in the hot path"
            for key in _lookup_keys(node):
                identity = _identity_call(key, tainted)
                if identity:
                    yield node.lineno, f"keys a lookup on {identity} (caching results across calls)"
    for function in [*source.hot, *source.methods.values()]:
        for decorator in getattr(function, "decorator_list", []):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = source.dotted(target) or ""
            if name.split(".")[-1] in ("lru_cache", "cache", "cached_property"):
                yield decorator.lineno, f"memoises {function.name} with {name}"


IDENTITY_FUNCTIONS = {"id", "hash"}
IDENTITY_METHODS = {"data_ptr", "untyped_storage", "storage", "_version", "__hash__"}


def _lookup_keys(node: ast.AST) -> list[ast.AST]:
    """Expressions used as keys of a lookup: subscripts, dict keys, ``in`` tests, ``.get(key)``."""
    if isinstance(node, ast.Subscript):
        return [node.slice]
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot))
                                             for op in node.ops):
        return [node.left]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "setdefault", "pop", "__contains__") and node.args):
        return [node.args[0]]
    return []


def _identity_names(function: ast.AST) -> dict[str, str]:
    """Local names assigned from an identity (``key = (x.data_ptr(), ...)``), to what they hold."""
    tainted: dict[str, str] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            identity = _identity_call(node.value, tainted)
            if identity:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        tainted[target.id] = identity
    return tainted


def _identity_call(node: ast.AST, tainted: dict[str, str]) -> str | None:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in tainted:
            return tainted[inner.id]
        if isinstance(inner, ast.Call):
            if isinstance(inner.func, ast.Name) and inner.func.id in IDENTITY_FUNCTIONS:
                return f"{inner.func.id}()"
            if isinstance(inner.func, ast.Attribute) and inner.func.attr in IDENTITY_METHODS:
                return f".{inner.func.attr}()"
    return None


def _state_in_forward(source: Source) -> Iterator[tuple[int, str]]:
    for _, node in source.hot_nodes():
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                yield node.lineno, (f"forward stores self.{target.attr}: state kept across calls "
                                    "(timed outputs are verified, so stale results fail)")


def _host_reads(source: Source) -> Iterator[tuple[int, str]]:
    for _, node in source.hot_nodes():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in HOST_READS):
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in source.aliases):
                yield node.lineno, (f"reads tensor values on the host with .{node.func.attr}() in the "
                                    "hot path (a device sync, and a way to key results on values)")


def _monkey_patch(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "setattr", "delattr") and node.args:
            name = source.dotted(node.args[0])
            if name and name.split(".")[0] in PATCHABLE_ROOTS:
                yield node.lineno, f"{node.func.id}() on {name} (monkey-patching)"
            continue
        for target in targets:
            if isinstance(target, ast.Attribute):
                name = source.dotted(target)
                if name and name.split(".")[0] in PATCHABLE_ROOTS:
                    yield node.lineno, f"assigns {name} (monkey-patching a library the runner relies on)"


def _introspection(source: Source) -> Iterator[tuple[int, str]]:
    yield from _imports_of(source, INTROSPECTION_MODULES,
                           "imports {module} (introspection can read the expected output)")
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INTROSPECTION_CALLS:
            yield node.lineno, f"calls {node.func.id}()"
        if isinstance(node, ast.Attribute):
            name = source.dotted(node) or ""
            if name in INTROSPECTION_NAMES or name in ("sys.settrace", "sys.setprofile"):
                yield node.lineno, f"uses {name}"
            if node.attr in INTERNAL_ATTRIBUTES:
                yield node.lineno, (f"uses .{node.attr} (frames, and the globals and closures of other code, "
                                    "lead to the runner's guards)")
        attribute = _attribute_argument(node)
        if isinstance(attribute, ast.Constant) and attribute.value in INTERNAL_ATTRIBUTES:
            yield node.lineno, (f"uses .{attribute.value} (frames, and the globals and closures of other code, "
                                "lead to the runner's guards)")
    for _, node in source.hot_nodes():
        attribute = _attribute_argument(node)
        if attribute is not None and not isinstance(attribute, ast.Constant):
            yield node.lineno, f"calls {node.func.id}() with a computed name (what it reaches is hidden from these rules)"


def _attribute_argument(node: ast.AST) -> ast.AST | None:
    """The name argument of ``getattr(x, name)`` and friends, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) > 1):
        return node.args[1]
    return None


def _lazy_tensor(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if source.dotted(base) in ("torch.Tensor", "torch._C.TensorBase"):
                    yield node.lineno, f"class {node.name} subclasses torch.Tensor (lazy or fake tensors)"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
                "__torch_function__", "__torch_dispatch__"):
            yield node.lineno, f"defines {node.name} (intercepts torch calls)"
        if isinstance(node, ast.Attribute) and node.attr == "_make_subclass":
            yield node.lineno, "uses _make_subclass (lazy or fake tensors)"


def _other_compiler(source: Source) -> Iterator[tuple[int, str]]:
    def banned(name: str) -> bool:
        return any(name == prefix or name.startswith(prefix + ".") for prefix in OTHER_COMPILERS)

    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            if banned(module):
                yield node.lineno, f"imports {module} (the kernel must be Triton, not another code generator)"
    for node, name in source.names():
        if banned(name) and not isinstance(node, ast.Name):
            yield node.lineno, f"uses {name} (the kernel must be Triton, not another code generator)"


def _calls_reference(source: Source) -> Iterator[tuple[int, str]]:
    if source.model_new is not None:
        for base in source.model_new.bases:
            if isinstance(base, ast.Name) and base.id == "Model":
                yield source.model_new.lineno, "ModelNew subclasses the reference Model"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Model":
            yield node.lineno, "instantiates the reference Model"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [n.name for n in node.names]
            if any(module.split(".")[-1] == "problem" for module in modules):
                yield node.lineno, "imports the problem file (the reference)"


HARNESS_MODULES = {"runner", "diagnoser", "indexer", "ladder"}
WRITE_MODES = set("wax+")
FILE_CALLS = {"os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.removedirs", "os.truncate",
              "os.chmod", "os.symlink", "os.link", "os.makedirs", "os.mkdir", "os.open", "os.write", "os.writev",
              "os.pwrite", "os.sendfile", "os.dup2", "os.fdopen", "torch.save", "numpy.save", "numpy.savez",
              "numpy.savez_compressed", "numpy.savetxt", "pickle.dump"}
PROCESS_CALLS = {"os.kill", "os.killpg", "os.fork", "os.forkpty", "os.system", "os.popen", "os.execv", "os.execve",
                 "os.execvp", "os.execvpe", "os._exit", "os.abort", "os.setsid", "os.setpgid", "os.posix_spawn",
                 "os.posix_spawnp", "sys.exit", "signal.pthread_kill", "signal.raise_signal"}
PROCESS_MODULES = {"posix", "_posixsubprocess", "pty", "signal", "_signal"}
# Code that runs later, whenever something else happens: after forward returned, outside the recorders.
DEFERRED_CALLS = {"signal.signal", "signal.setitimer", "signal.alarm", "signal.set_wakeup_fd", "sys.settrace",
                  "sys.setprofile", "sys.addaudithook", "threading.settrace", "threading.setprofile",
                  "weakref.finalize", "atexit.register"}
FILE_READS = {"open", "io.open", "os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob", "torch.load",
              "numpy.load", "numpy.fromfile", "pickle.load"}
FILE_READ_METHODS = {"read_text", "read_bytes", "iterdir", "glob", "rglob"}
TORCH_INTERNALS = ("torch._C", "torch.overrides", "torch.utils._python_dispatch", "torch._ops", "torch._library",
                   "torch.library.custom_op", "torch.library.Library", "torch.library.impl",
                   "torch.library.register_kernel", "torch.library.define")


def _harness_import(source: Source) -> Iterator[tuple[int, str]]:
    yield from _imports_of(source, HARNESS_MODULES, "imports {module} (the harness that judges it)")


def _file_writes(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if not isinstance(node, ast.Call):
            continue
        name = _as_os(source.dotted(node.func) or (node.func.id if isinstance(node.func, ast.Name) else ""))
        if name in ("open", "io.open", "builtins.open") or (isinstance(node.func, ast.Attribute)
                                                             and node.func.attr == "open" and name != "os.open"):
            mode = _open_mode(node)
            if WRITE_MODES & set(str(mode)):
                yield node.lineno, f"opens a file for writing (mode {mode!r})"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("write_text", "write_bytes", "unlink",
                                                                        "rename", "replace", "rmdir", "touch",
                                                                        "tofile", "mkdir"):
            yield node.lineno, f"calls .{node.func.attr}() (writing files)"
        elif name in FILE_CALLS or name.startswith("shutil."):
            yield node.lineno, f"calls {name} (writing files)"


def _open_mode(call: ast.Call) -> str:
    """The constant mode of an ``open(...)`` call ('' when it is not a constant)."""
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return str(mode.value) if isinstance(mode, ast.Constant) else ""


def _process_control(source: Source) -> Iterator[tuple[int, str]]:
    yield from _imports_of(source, PROCESS_MODULES, "imports {module} (signals, exits and new processes)")
    for node, name in source.names():
        if _as_os(name) in PROCESS_CALLS:
            yield node.lineno, f"uses {name} (signals, exits and new processes)"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id in ("SystemExit", "KeyboardInterrupt"):
                yield node.lineno, f"raises {raised.id} (ending the contestant)"


def _as_os(name: str) -> str:
    """``posix.fork`` is ``os.fork``: the os module re-exports the posix one."""
    return "os" + name[len("posix"):] if name == "posix" or name.startswith("posix.") else name


def _deferred_code(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        if name in DEFERRED_CALLS:
            yield node.lineno, f"uses {name} (code that runs later, after forward returned)"
    for node in ast.walk(source.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__del__":
            yield node.lineno, "defines __del__ (code that runs later, after forward returned)"
        if (isinstance(node, ast.Call) and source.dotted(node.func) in ("weakref.ref", "weakref.proxy")
                and len(node.args) > 1):
            yield node.lineno, "gives a weak reference a callback (code that runs later, after forward returned)"


def _host_compute(source: Source) -> Iterator[tuple[int, str]]:
    for function, node in source.hot_nodes():
        if isinstance(node, ast.Call):
            name = source.dotted(node.func) or ""
            if name.split(".")[0] == "numpy":
                yield node.lineno, f"calls {name} in the hot path (numpy computes on the host, not in Triton)"


def _file_reads(source: Source) -> Iterator[tuple[int, str]]:
    for _, node in source.hot_nodes():
        if not isinstance(node, ast.Call):
            continue
        name = source.dotted(node.func) or (node.func.id if isinstance(node.func, ast.Name) else "")
        if name in ("open", "io.open") and WRITE_MODES & set(str(_open_mode(node))):
            continue  # a write: the file-write rule's
        if name in FILE_READS or (isinstance(node.func, ast.Attribute) and node.func.attr in FILE_READ_METHODS
                                  and not name):
            called = name or f".{node.func.attr}()"
            yield node.lineno, f"calls {called} in the hot path (reading files: another contestant's outputs?)"


def _triton_hooks(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and node.attr in TRITON_HOOKS:
            yield node.lineno, (f"uses .{node.attr} (Triton's hooks and knobs run code inside its launcher, "
                                "where the recorders take torch calls for Triton's own)")


def _torch_internals(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        if any(name == prefix or name.startswith(prefix + ".") for prefix in TORCH_INTERNALS):
            yield node.lineno, f"uses {name} (torch internals that can switch the recorders off or run unseen ops)"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and node.attr in OPERATOR_OVERRIDES:
            yield node.lineno, f"uses .{node.attr} (puts other code behind a registered operator)"


def _no_triton_kernel(source: Source) -> Iterator[tuple[int, str]]:
    if not any(source.is_kernel(node) for node in ast.walk(source.tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
        yield 1, "defines no @triton.jit kernel (launches are still counted at run time)"


def _imports_of(source: Source, modules: set[str], message: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in modules:
                yield node.lineno, message.format(module=name)


RULES: dict[str, Rule] = {rule.name: rule for rule in (
    Rule("torch-compute", ERROR, "torch/aten compute calls, F.* and the @ operator in the hot path",
         _torch_compute),
    Rule("nn-module-call", ERROR, "calling a torch.nn compute module (self.linear(x)) in the hot path",
         _nn_module_called),
    Rule("try-except", ERROR, "try/except in the hot path or ModelNew (fallbacks to torch)", _try_except),
    Rule("side-stream", ERROR, "creating or switching streams, cross-stream waits", _side_stream),
    Rule("cuda-graph", ERROR, "CUDA/NPU graph capture and replay (invisible to the launch guards)",
         _cuda_graph),
    Rule("concurrency", ERROR, "threads, processes, asyncio, subprocess", _concurrency),
    Rule("caching", ERROR, "results keyed on input identity (id, data_ptr, hash), memoised hot "
         "functions, global state in the hot path", _caching),
    Rule("host-read", ERROR, ".item()/.tolist()/.cpu()/.numpy()/.untyped_storage() in the hot path", _host_reads),
    Rule("monkey-patch", ERROR, "assigning attributes of torch, triton, time, numpy (timers, "
         "synchronize)", _monkey_patch),
    Rule("introspection", ERROR, "gc, inspect, ctypes, frames, eval/exec, sys.modules, function internals "
         "(__globals__, __closure__, __wrapped__), getattr with a computed name in the hot path (reading the "
         "expected output, escaping the checks)", _introspection),
    Rule("lazy-tensor", ERROR, "torch.Tensor subclasses, __torch_function__/__torch_dispatch__",
         _lazy_tensor),
    Rule("other-compiler", ERROR, "torch.compile, TorchScript, C++/CUDA extensions, other code "
         "generators", _other_compiler),
    Rule("calls-reference", ERROR, "subclassing, instantiating or importing the reference Model",
         _calls_reference),
    Rule("harness-import", ERROR, "importing ladder's own packages (the runner, its guards, the comparison)",
         _harness_import),
    Rule("file-write", ERROR, "writing, removing or renaming files", _file_writes),
    Rule("process-control", ERROR, "signals, exits, new processes and sessions (posix included)", _process_control),
    Rule("deferred-code", ERROR, "signal handlers and timers, trace/profile/audit functions, finalizers, atexit: "
         "code that runs after forward returned", _deferred_code),
    Rule("host-compute", ERROR, "numpy calls in the hot path", _host_compute),
    Rule("file-read", ERROR, "reading files or listing folders in the hot path", _file_reads),
    Rule("triton-hooks", ERROR, "Triton's knobs and hooks (pre-run, launch, compile hooks)", _triton_hooks),
    Rule("torch-internals", ERROR, "torch._C, torch.overrides, dispatch modes, custom operators other than "
         "torch.library.triton_op, kernels registered over one", _torch_internals),
    Rule("state-in-forward", WARNING, "forward assigns self attributes (state across calls)",
         _state_in_forward),
    Rule("no-triton-kernel", WARNING, "no @triton.jit kernel defined in the file", _no_triton_kernel),
)}


def check_source(text: str, filename: str = "solution.py",
                 rules: dict[str, Rule] | None = None, helper: bool = False) -> list[Violation]:
    """Run the rules over a solution's source (or, ``helper``, a module it imports). Raises
    ``SyntaxError`` for unparsable source."""
    return _check(Source(text, filename, helper), rules)


def _check(source: Source, rules: dict[str, Rule] | None = None) -> list[Violation]:
    found: set[tuple[str, int, str]] = set()
    violations = []
    for rule in (rules or RULES).values():
        for line, message in rule.check(source):
            if (rule.name, line, message) not in found:
                found.add((rule.name, line, message))
                violations.append(Violation(rule.name, rule.severity, line, message))
    return sorted(violations, key=lambda v: (v.severity != ERROR, v.line, v.rule))


def check_solution(path: str | Path) -> list[Violation]:
    """The rules over a solution file and over every module beside it that it imports (their
    violations name their file). Raises ``OSError`` or ``SyntaxError`` (with ``filename`` set)."""
    path = Path(path).resolve()
    pending, seen, violations = [(path, False)], {path}, []
    while pending:
        file, helper = pending.pop(0)
        source = Source(file.read_text(), str(file), helper)
        for violation in _check(source):
            violations.append(violation if file == path else Violation(
                violation.rule, violation.severity, violation.line, f"{file.name}: {violation.message}"))
        for imported in local_imports(source, path.parent):
            if imported not in seen:
                seen.add(imported)
                pending.append((imported, True))
    return sorted(violations, key=lambda v: v.severity != ERROR)  # stable: the solution's own come first


def describe_rules() -> str:
    width = max(len(name) for name in RULES)
    return "\n".join(f"{rule.name:<{width}}  {rule.severity:<7}  {rule.description}"
                     for rule in RULES.values())


def main(argv: list[str]) -> int:
    if not argv:
        print(describe_rules())
        return 0
    status = 0
    for path in argv:
        for violation in check_solution(path):
            print(f"{path}:{violation.line}: {violation.severity}: {violation.message} [{violation.rule}]")
            status = max(status, violation.severity == ERROR)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
