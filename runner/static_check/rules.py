"""The rules in the order ``python -m ladder.runner.static_check`` lists them: errors first, then warnings."""
from __future__ import annotations

from ladder.runner.static_check import compute, escape
from ladder.runner.static_check.rule import ERROR, WARNING, Rule

RULES: dict[str, Rule] = {rule.name: rule for rule in (
    Rule("torch-compute", ERROR, "torch/aten compute calls, F.* and the @ operator in the hot path",
         compute.torch_compute),
    Rule("nn-module-call", ERROR, "calling a torch.nn compute module (self.linear(x)) in the hot path",
         compute.nn_module_called),
    Rule("try-except", ERROR, "try/except in the hot path or ModelNew (fallbacks to torch)", escape.try_except),
    Rule("side-stream", ERROR, "creating or switching streams, cross-stream waits", escape.side_stream),
    Rule("cuda-graph", ERROR, "CUDA/NPU graph capture and replay (invisible to the launch guards)",
         escape.cuda_graph),
    Rule("concurrency", ERROR, "threads, processes, asyncio, subprocess", escape.concurrency),
    Rule("caching", ERROR, "results keyed on input identity (id, data_ptr, hash), memoised hot "
         "functions, global state in the hot path", compute.caching),
    Rule("host-read", ERROR, ".item()/.tolist()/.cpu()/.numpy()/.untyped_storage() in the hot path", compute.host_reads),
    Rule("monkey-patch", ERROR, "assigning attributes of torch, triton, time, numpy (timers, "
         "synchronize)", escape.monkey_patch),
    Rule("introspection", ERROR, "gc, inspect, ctypes, frames, eval/exec, sys.modules, function internals "
         "(__globals__, __closure__, __wrapped__, __dict__), getattr with a computed name or getattr itself "
         "bound to another name, modules that run text as code or resolve objects by name (timeit, pkgutil, "
         "operator) (reading the expected output, escaping the checks)", escape.introspection),
    Rule("lazy-tensor", ERROR, "torch.Tensor subclasses, __torch_function__/__torch_dispatch__",
         compute.lazy_tensor),
    Rule("other-compiler", ERROR, "torch.compile, TorchScript, C++/CUDA extensions, other code "
         "generators", compute.other_compiler),
    Rule("calls-reference", ERROR, "subclassing, instantiating or importing the reference Model",
         compute.calls_reference),
    Rule("harness-import", ERROR, "importing ladder's own packages (the runner, its guards, the comparison)",
         escape.harness_import),
    Rule("source-encoding", ERROR, "a source encoding other than UTF-8 (the file runs as decoded, the rules "
         "read it as UTF-8)", escape.source_encoding),
    Rule("file-write", ERROR, "writing, removing or renaming files", escape.file_writes),
    Rule("process-control", ERROR, "signals, exits, new processes and sessions (posix included)", escape.process_control),
    Rule("deferred-code", ERROR, "signal handlers and timers, trace/profile/audit functions, finalizers, atexit: "
         "code that runs after forward returned", escape.deferred_code),
    Rule("host-compute", ERROR, "numpy calls in the hot path", compute.host_compute),
    Rule("file-read", ERROR, "reading files or listing folders in the hot path", escape.file_reads),
    Rule("triton-hooks", ERROR, "Triton's knobs and hooks (pre-run, launch, compile hooks)", escape.triton_hooks),
    Rule("torch-internals", ERROR, "torch._C, torch.overrides, dispatch modes, custom operators other than "
         "torch.library.triton_op, kernels registered over one", escape.torch_internals),
    Rule("state-in-forward", WARNING, "forward assigns self attributes (state across calls)",
         compute.state_in_forward),
    Rule("no-triton-kernel", WARNING, "no @triton.jit kernel defined in the file", compute.no_triton_kernel),
)}
