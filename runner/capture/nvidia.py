"""A compiled NVIDIA kernel as a `CapturedKernel`: its stages, SASS and resource usage.

Both NVIDIA captures end with a triton `CompiledKernel`, the JIT's on a GPU (`ladder.runner.capture.jit`)
and the compile-only aot backend's (`ladder.runner.backends.aot`), and describe it the same way: SASS and
resources come from its cubin and, for a kernel with a stack frame, a ptxas report
(`ladder.runner.cubin`).
"""
from __future__ import annotations

from typing import Any

from ladder.runner.capture.record import STAGE_ORDER, CapturedKernel, argument_name, jsonable, source_position
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

# Compile metadata worth keeping (the rest is options echoed back).
METADATA_KEYS = ("name", "hash", "num_warps", "num_stages", "num_ctas", "shared", "maxnreg", "tmem_size",
                 "global_scratch_size", "arch", "enable_fp_fusion", "ptx_options", "launch_pdl")


def nvidia_record(compiled: Any, jit_fn: Any, *, backend: str, signature: dict, constexprs: dict,
                  attrs: dict, config: dict | None = None) -> CapturedKernel:
    """Build a CapturedKernel from a triton CompiledKernel (NVIDIA): stages, SASS, resources."""
    from ladder.runner import cubin as cubin_tools

    meta = compiled.metadata._asdict()
    arg_names = list(jit_fn.arg_names)
    stages = {stage: compiled.asm[stage] for stage in STAGE_ORDER if stage in compiled.asm and stage != "sass"}
    stages["sass"] = cubin_tools.sass(compiled.asm["cubin"])
    file, line = source_position(jit_fn)
    target = meta["target"]
    return CapturedKernel(
        name=compiled.name,
        function=f"{jit_fn.fn.__module__}.{jit_fn.fn.__qualname__}",
        file=file,
        line=line,
        backend=backend,
        target=f"{target.backend}:{target.arch}",
        signature={str(name): str(kind) for name, kind in signature.items()},
        constexprs={argument_name(arg_names, path): jsonable(value) for path, value in constexprs.items()},
        attrs={argument_name(arg_names, path): jsonable(value) for path, value in attrs.items() if value},
        metadata={key: jsonable(meta[key]) for key in METADATA_KEYS if key in meta},
        stages=stages,
        resources=nvidia_resources(compiled),
        config=config,
    )


def nvidia_resources(compiled: Any) -> dict[str, Any]:
    """Registers, spills, local and shared bytes of a compiled kernel, from its cubin and, where it has
    a stack frame to spill into, a ptxas report on its PTX (`ladder.runner.cubin`)."""
    from ladder.runner import cubin as cubin_tools

    meta = compiled.metadata
    usage = cubin_tools.resource_usage(compiled.asm["cubin"]).get(compiled.name, {})
    report = _spill_report(compiled, usage)
    resources = {
        "registers": usage.get("registers", report.get("registers")),
        "spill_stores_bytes": report.get("spill_stores_bytes", 0),
        "spill_loads_bytes": report.get("spill_loads_bytes", 0),
        "stack_bytes": usage.get("stack_bytes", report.get("stack_bytes", 0)),
        "local_bytes": usage.get("local_bytes", 0),
        # Triton allocates shared memory dynamically: metadata.shared is what a program needs.
        "shared_bytes": meta.shared + usage.get("static_shared_bytes", 0),
        "barriers": cubin_tools.barriers(compiled.asm["cubin"]).get(compiled.name, report.get("barriers")),
        "num_warps": meta.num_warps,
        "num_stages": meta.num_stages,
        "source": "cuobjdump+ptxas" if report else "cuobjdump",
    }
    # Filled by the driver once the module is loaded on a GPU: the numbers the hardware will use.
    if getattr(compiled, "n_regs", None) is not None:
        resources["driver_registers"] = compiled.n_regs
        resources["driver_spills"] = compiled.n_spills
    return resources


def _spill_report(compiled: Any, usage: dict[str, int]) -> dict[str, int]:
    """`ptxas -v`'s report, or nothing where the cubin shows no stack frame (so no spill)."""
    from triton.backends.nvidia.compiler import sm_arch_from_capability

    from ladder.runner import cubin as cubin_tools

    if usage and usage.get("stack_bytes") == 0:
        return {}
    meta = compiled.metadata
    return cubin_tools.ptxas_report(compiled.asm["ptx"], sm_arch_from_capability(meta.target.arch),
                                    fmad=meta.enable_fp_fusion, extra_options=meta.ptx_options)
