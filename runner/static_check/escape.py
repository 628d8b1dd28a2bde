"""Rules against escaping the judge: fallbacks, other streams and graphs, threads and processes,
monkey-patching, introspection, the harness's own packages, files, signals, deferred code, Triton's
hooks and torch internals."""
from __future__ import annotations

import ast
import codecs
import re
from collections.abc import Iterator

from ladder.runner.static_check.source import Source, imports_of

STREAM_CALLS = frozenset({"Stream", "stream", "ExternalStream", "set_stream", "StreamContext"})


STREAM_METHODS = frozenset({"wait_stream", "record_stream", "wait_event"})


CONCURRENCY_MODULES = frozenset({"threading", "_thread", "multiprocessing", "concurrent", "asyncio",
                                 "subprocess"})


INTROSPECTION_MODULES = frozenset({"gc", "inspect", "ctypes", "_ctypes", "cffi", "traceback", "importlib", "builtins",
                                   "dis", "marshal"})


INTROSPECTION_CALLS = frozenset({"eval", "exec", "compile", "__import__", "globals", "locals", "vars"})


# Builtins whose reach the rules judge by the call: bound to another name (`_get = getattr`), passed as
# a value or wrapped (functools.partial), what they reach is hidden from the rules.
ALIASABLE_BUILTINS = INTROSPECTION_CALLS | {"getattr", "setattr", "delattr", "hasattr"}


# Modules that run code given as text, or import and resolve objects by a dotted name given as text:
# `timeit.Timer("...")` compiles a string outside the audit of code compiled by the candidate itself,
# `pkgutil.resolve_name("module:Model")` reaches the judge's loaded reference, `operator.attrgetter`
# is getattr by another name.
CODE_FROM_TEXT_MODULES = frozenset({"timeit", "code", "codeop", "runpy", "pkgutil", "operator", "pydoc", "zipimport",
                                    "doctest", "pickle", "_pickle", "pickletools", "copyreg", "shelve", "pdb", "bdb",
                                    "profile", "cProfile", "trace"})


# Names that evaluate text (typing's forward references evaluate a string annotation).
EVALUATING_NAMES = frozenset({"get_type_hints", "ForwardRef", "_eval_type"})


INTROSPECTION_NAMES = frozenset({"sys._getframe", "sys._current_frames", "sys.modules", "sys.exc_info",
                                 "sys.exception", "sys.argv", "sys.meta_path", "sys.path_hooks", "sys.path",
                                 "logging.currentframe", "types.FunctionType", "types.CodeType", "types.FrameType"})


# Attributes that lead from an object to frames, to the globals and closures of the functions that
# hold the runner's guards, or to every class in the process.
INTERNAL_ATTRIBUTES = frozenset({"__traceback__", "tb_frame", "tb_next", "f_back", "f_locals", "f_globals",
                                 "f_code", "f_builtins", "gi_frame", "cr_frame", "ag_frame", "gi_code",
                                 "__globals__", "__closure__", "__wrapped__", "__code__", "__builtins__",
                                 "__subclasses__", "__self__", "__func__", "__kwdefaults__", "__defaults__",
                                 "cell_contents", "__loader__", "__spec__", "__dict__", "__getattribute__"})


PATCHABLE_ROOTS = frozenset({"torch", "triton", "time", "builtins", "numpy", "ladder", "runner", "os", "sys", "gc",
                             "threading", "subprocess", "signal", "io", "posix", "_thread"})


TRITON_HOOKS = frozenset({"knobs", "add_pre_run_hook", "pre_run_hooks", "launch_enter_hook", "launch_exit_hook",
                          "jit_cache_hook", "jit_post_compile_hook", "kernel_load_start_hook", "kernel_load_end_hook",
                          "add_stages_inspection_hook"})


# Methods of a registered operator that put other code behind it.
OPERATOR_OVERRIDES = frozenset({"register_kernel", "register_torch_dispatch", "register_fake", "_backend_fns",
                                "_init_fn", "register_autocast"})


HARNESS_MODULES = frozenset({"runner", "diagnoser", "indexer", "ladder"})


WRITE_MODES = frozenset("wax+")


FILE_CALLS = frozenset({"os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.removedirs",
                        "os.truncate", "os.chmod", "os.symlink", "os.link", "os.makedirs", "os.mkdir", "os.open",
                        "os.write", "os.writev", "os.pwrite", "os.sendfile", "os.dup2", "os.fdopen", "torch.save",
                        "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt", "pickle.dump"})


PROCESS_CALLS = frozenset({"os.kill", "os.killpg", "os.fork", "os.forkpty", "os.system", "os.popen", "os.execv",
                           "os.execve", "os.execvp", "os.execvpe", "os._exit", "os.abort", "os.setsid",
                           "os.setpgid", "os.posix_spawn", "os.posix_spawnp", "sys.exit", "signal.pthread_kill",
                           "signal.raise_signal"})


PROCESS_MODULES = frozenset({"posix", "_posixsubprocess", "pty", "signal", "_signal"})


# Code that runs later, whenever something else happens: after forward returned, outside the recorders.
DEFERRED_CALLS = frozenset({"signal.signal", "signal.setitimer", "signal.alarm", "signal.set_wakeup_fd",
                            "sys.settrace", "sys.setprofile", "sys.addaudithook", "threading.settrace",
                            "threading.setprofile", "weakref.finalize", "atexit.register"})


# Weak references that take a callback (run when the referent dies: later, after forward returned).
WEAK_REFERENCES = frozenset({"weakref.ref", "weakref.proxy", "weakref.KeyedRef", "weakref.WeakMethod",
                             "weakref.ReferenceType", "weakref.ProxyType", "weakref.CallableProxyType",
                             "_weakref.ref", "_weakref.proxy"})


FILE_READS = frozenset({"open", "io.open", "os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob",
                        "torch.load", "numpy.load", "numpy.fromfile", "pickle.load"})


FILE_READ_METHODS = frozenset({"read_text", "read_bytes", "iterdir", "glob", "rglob"})


TORCH_INTERNALS = ("torch._C", "torch.overrides", "torch.utils._python_dispatch", "torch._ops", "torch._library",
                   "torch.library.custom_op", "torch.library.Library", "torch.library.impl",
                   "torch.library.register_kernel", "torch.library.define")


def try_except(source: Source) -> Iterator[tuple[int, str]]:
    scopes = list(source.hot)
    if source.model_new is not None:
        scopes.append(source.model_new)
    seen = set()
    for scope in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Try) and node.handlers and node.lineno not in seen:
                seen.add(node.lineno)
                yield node.lineno, "try/except around the kernel path (a fallback can hide a failing kernel)"


def side_stream(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if not isinstance(node, ast.Call):
            continue
        name = source.dotted(node.func) or ""
        parts = name.split(".")
        if parts[0] == "torch" and parts[-1] in STREAM_CALLS:
            yield node.lineno, f"uses {name} (work on another stream can escape the timed region)"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in STREAM_METHODS:
            yield node.lineno, f"calls .{node.func.attr}() (cross-stream synchronisation)"


def cuda_graph(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        parts = name.split(".")
        if parts[0] == "torch" and any(part in ("CUDAGraph", "graph", "graphs", "make_graphed_callables",
                                                "NPUGraph") for part in parts[1:]):
            yield node.lineno, (f"uses {name}: replayed graphs bypass Triton's launcher, so the launch "
                                "guards cannot see the work")


def concurrency(source: Source) -> Iterator[tuple[int, str]]:
    yield from imports_of(source, CONCURRENCY_MODULES,
                           "imports {module} (threads or processes can run work outside the timed region)")


def monkey_patch(source: Source) -> Iterator[tuple[int, str]]:
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
        for target in _assigned(targets):
            if isinstance(target, ast.Attribute):
                name = source.dotted(target)
                if name and name.split(".")[0] in PATCHABLE_ROOTS:
                    yield node.lineno, f"assigns {name} (monkey-patching a library the runner relies on)"


def _assigned(targets: list[ast.AST]) -> Iterator[ast.AST]:
    """Assignment targets, those inside tuple and list targets included (``a.x, b.y = ...``)."""
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _assigned(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _assigned([target.value])
        else:
            yield target


def introspection(source: Source) -> Iterator[tuple[int, str]]:
    yield from imports_of(source, INTROSPECTION_MODULES,
                           "imports {module} (introspection can read the expected output)")
    yield from imports_of(source, CODE_FROM_TEXT_MODULES,
                           "imports {module} (runs code or resolves objects named by text, hidden from these rules)")
    called = {id(node.func) for node in ast.walk(source.tree) if isinstance(node, ast.Call)}
    for node, name in source.names():  # `from sys import modules` names sys.modules too
        for banned in INTROSPECTION_NAMES:
            if name == banned or name.startswith(banned + "."):
                yield node.lineno, f"uses {banned}"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INTROSPECTION_CALLS:
            yield node.lineno, f"calls {node.func.id}()"
        if isinstance(node, ast.Name) and node.id == "__builtins__":
            yield node.lineno, "uses __builtins__ (the builtins every module shares, the runner's too)"
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in ALIASABLE_BUILTINS
                and id(node) not in called):
            yield node.lineno, f"uses {node.id} as a value (an alias hides what it reaches from these rules)"
        if isinstance(node, ast.Attribute):
            name = source.dotted(node) or ""
            if name in INTROSPECTION_NAMES or name in ("sys.settrace", "sys.setprofile"):
                yield node.lineno, f"uses {name}"
            if node.attr in INTERNAL_ATTRIBUTES:
                yield node.lineno, (f"uses .{node.attr} (frames, and the globals and closures of other code, "
                                    "lead to the runner's guards)")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in INTERNAL_ATTRIBUTES:
            # `obj.__getattribute__("__closure__")`, `vars(f)["__closure__"]`: the name as text is the tell
            yield node.lineno, f"names {node.value!r} (frames, and the globals and closures of other code, lead " \
                               "to the runner's guards)"
        if isinstance(node, (ast.Name, ast.Attribute)) and (
                getattr(node, "id", None) in EVALUATING_NAMES or getattr(node, "attr", None) in EVALUATING_NAMES):
            yield node.lineno, "evaluates text through typing's forward references (get_type_hints, ForwardRef)"
        attribute = _attribute_argument(node)
        if attribute is None:
            continue
        if not isinstance(attribute, ast.Constant):
            # Anywhere in the file, not only the hot path: code run at import or in __init__ reaches the
            # runner's objects as well as forward does.
            yield node.lineno, (f"calls {node.func.id}() with a computed name (what it reaches is hidden from "
                                "these rules)")
        elif attribute.value in INTERNAL_ATTRIBUTES:
            yield node.lineno, (f"uses .{attribute.value} (frames, and the globals and closures of other code, "
                                "lead to the runner's guards)")
        elif f"{source.dotted(node.args[0])}.{attribute.value}" in INTROSPECTION_NAMES:
            yield node.lineno, f"uses {source.dotted(node.args[0])}.{attribute.value} (by getattr)"


def _attribute_argument(node: ast.AST) -> ast.AST | None:
    """The name argument of ``getattr(x, name)`` and friends, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) > 1):
        return node.args[1]
    return None


def harness_import(source: Source) -> Iterator[tuple[int, str]]:
    yield from imports_of(source, HARNESS_MODULES, "imports {module} (the harness that judges it)")


def file_writes(source: Source) -> Iterator[tuple[int, str]]:
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


def process_control(source: Source) -> Iterator[tuple[int, str]]:
    yield from imports_of(source, PROCESS_MODULES, "imports {module} (signals, exits and new processes)")
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


def deferred_code(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        if name in DEFERRED_CALLS:
            yield node.lineno, f"uses {name} (code that runs later, after forward returned)"
    for node in ast.walk(source.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__del__":
            yield node.lineno, "defines __del__ (code that runs later, after forward returned)"
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                targets = (statement.targets if isinstance(statement, ast.Assign)
                           else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
                if any(isinstance(t, ast.Name) and t.id == "__del__" for t in targets):
                    yield statement.lineno, "defines __del__ (code that runs later, after forward returned)"
        if isinstance(node, ast.Constant) and node.value == "__del__":  # setattr(cls, "__del__", f), type(...)
            yield node.lineno, "names '__del__' (a finalizer: code that runs later, after forward returned)"
        if (isinstance(node, ast.Call) and source.dotted(node.func) in WEAK_REFERENCES
                and len(node.args) + len(node.keywords) > 1):
            yield node.lineno, "gives a weak reference a callback (code that runs later, after forward returned)"


def file_reads(source: Source) -> Iterator[tuple[int, str]]:
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


def triton_hooks(source: Source) -> Iterator[tuple[int, str]]:
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and node.attr in TRITON_HOOKS:
            yield node.lineno, (f"uses .{node.attr} (Triton's hooks and knobs run code inside its launcher, "
                                "where the recorders take torch calls for Triton's own)")


def torch_internals(source: Source) -> Iterator[tuple[int, str]]:
    for node, name in source.names():
        if any(name == prefix or name.startswith(prefix + ".") for prefix in TORCH_INTERNALS):
            yield node.lineno, f"uses {name} (torch internals that can switch the recorders off or run unseen ops)"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and node.attr in OPERATOR_OVERRIDES:
            yield node.lineno, f"uses .{node.attr} (puts other code behind a registered operator)"


# Python's own pattern for a source's encoding declaration (PEP 263), on its first two lines.
CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
READ_AS_WRITTEN = frozenset({"utf-8", "utf-8-sig"})


def source_encoding(source: Source) -> Iterator[tuple[int, str]]:
    """The rules read the file as UTF-8; a file that declares another encoding runs as Python
    decodes it, which under utf-7 or unicode_escape turns a comment into code the rules never saw."""
    for number, line in enumerate(source.text.splitlines()[:2], start=1):
        if match := CODING_COOKIE.match(line):
            try:
                name = codecs.lookup(match.group(1)).name
            except LookupError:
                name = match.group(1)
            if name not in READ_AS_WRITTEN:
                yield number, f"declares the source encoding {match.group(1)!r} (only UTF-8 is read as it runs)"
            return
