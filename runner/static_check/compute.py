"""Rules against computing outside Triton: torch and numpy compute, torch.nn modules, host reads,
lazy tensors, other code generators, the reference model, results cached across calls."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from ladder.runner.static_check.escape import STREAM_CALLS
from ladder.runner.static_check.source import Source

# torch.* calls allowed in the hot path: allocation, constant fills, metadata.
ALLOWED_TORCH_CALLS = frozenset({
              "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
              "full_like", "device", "Size", "finfo", "iinfo", "is_tensor", "no_grad", "inference_mode",
              "promote_types", "result_type", "broadcast_shapes", "get_default_dtype", "is_floating_point",
              "tensor", "as_tensor", "scalar_tensor", "arange",
              # views: a new shape or order over the same memory, no compute
              "reshape", "flatten", "unflatten", "broadcast_to", "broadcast_tensors", "squeeze", "unsqueeze",
              "permute", "transpose", "t", "narrow", "select", "split", "chunk", "unbind", "movedim", "swapaxes",
              "swapdims", "as_strided", "view_as_real", "view_as_complex", "atleast_1d", "atleast_2d",
              "atleast_3d", "ravel", "set_grad_enabled", "is_grad_enabled",
          })


# torch.library entry points for registering and launching Triton kernels as torch operators.
ALLOWED_LIBRARY_CALLS = frozenset({"triton_op", "wrap_triton", "capture_triton"})


ALLOWED_DEVICE_CALLS = frozenset({"current_device", "device_count", "get_device_capability",
                                  "get_device_properties", "get_device_name", "device", "is_available"})


# Tensor methods that compute (seen as ``x.<name>(...)`` on anything that is not a module).
TENSOR_COMPUTE_METHODS = frozenset({
              "matmul", "mm", "bmm", "addmm", "baddbmm", "mv", "dot", "einsum", "conv2d", "sum", "mean",
              "prod", "max", "min", "amax", "amin", "argmax", "argmin", "softmax", "log_softmax", "exp",
              "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "relu", "relu_", "gelu", "silu",
              "sigmoid", "tanh", "erf", "clamp", "clamp_", "clip", "abs", "neg", "add", "add_", "sub", "sub_",
              "mul", "mul_", "div", "div_", "pow", "cumsum", "cumprod", "norm", "var", "std", "logsumexp",
              "masked_fill", "masked_fill_", "where", "gather", "scatter", "scatter_add", "index_select",
              "sort", "topk", "copy_", "clone", "addcmul", "lerp", "square", "reciprocal", "sign", "floor",
              "ceil", "round", "maximum", "minimum", "all", "any", "mse_loss", "cross_entropy",
              "to_sparse", "to_sparse_csr", "to_sparse_coo", "to_dense", "to_mkldnn", "as_subclass",
          })


# Tensor methods that only describe a tensor or view it (``torch.Tensor.size(x)``).
TENSOR_QUERIES = frozenset({"size", "stride", "dim", "numel", "data_ptr", "element_size", "is_contiguous", "view",
                            "contiguous", "expand", "expand_as", "view_as", "reshape_as", "new_empty", "new_zeros",
                            "empty_like", "zero_", "fill_"})


HOST_READS = frozenset({"item", "tolist", "numpy", "cpu", "untyped_storage", "storage", "_typed_storage", "__array__",
                        "__dlpack__"})


NN_CONTAINERS = frozenset({"Module", "Parameter", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict",
                           "Buffer", "init"})


OTHER_COMPILERS = ("torch.compile", "torch._dynamo", "torch._inductor", "torch.jit",
                   "torch.utils.cpp_extension", "torch.export", "torch.fx", "cupy", "numba", "tvm", "jax",
                   "tensorflow")


IDENTITY_FUNCTIONS = frozenset({"id", "hash"})


IDENTITY_METHODS = frozenset({"data_ptr", "untyped_storage", "storage", "_version", "__hash__"})


def torch_compute(source: Source) -> Iterator[tuple[int, str]]:
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


def nn_module_called(source: Source) -> Iterator[tuple[int, str]]:
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


def host_reads(source: Source) -> Iterator[tuple[int, str]]:
    for _, node in source.hot_nodes():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in HOST_READS):
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in source.aliases):
                yield node.lineno, (f"reads tensor values on the host with .{node.func.attr}() in the "
                                    "hot path (a device sync, and a way to key results on values)")


def host_compute(source: Source) -> Iterator[tuple[int, str]]:
    for function, node in source.hot_nodes():
        if isinstance(node, ast.Call):
            name = source.dotted(node.func) or ""
            if name.split(".")[0] == "numpy":
                yield node.lineno, f"calls {name} in the hot path (numpy computes on the host, not in Triton)"


def lazy_tensor(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if source.dotted(base) in ("torch.Tensor", "torch._C.TensorBase"):
                    yield node.lineno, f"class {node.name} subclasses torch.Tensor (lazy or fake tensors)"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
                "__torch_function__", "__torch_dispatch__"):
            yield node.lineno, f"defines {node.name} (intercepts torch calls)"
        named = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                 else node.value if isinstance(node, ast.Constant) else None)
        if named in ("__torch_function__", "__torch_dispatch__") and not isinstance(node, ast.FunctionDef):
            yield node.lineno, f"binds or names {named} (intercepts torch calls)"
        if isinstance(node, ast.Attribute) and node.attr == "_make_subclass":
            yield node.lineno, "uses _make_subclass (lazy or fake tensors)"


def other_compiler(source: Source) -> Iterator[tuple[int, str]]:
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


def calls_reference(source: Source) -> Iterator[tuple[int, str]]:
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


def caching(source: Source) -> Iterator[tuple[int, str]]:
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


def state_in_forward(source: Source) -> Iterator[tuple[int, str]]:
    for _, node in source.hot_nodes():
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                yield node.lineno, (f"forward stores self.{target.attr}: state kept across calls "
                                    "(timed outputs are verified, so stale results fail)")


def no_triton_kernel(source: Source) -> Iterator[tuple[int, str]]:
    if not any(source.is_kernel(node) for node in ast.walk(source.tree)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
        yield 1, "defines no @triton.jit kernel (launches are still counted at run time)"
