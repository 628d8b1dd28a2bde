"""Which backend a file belongs to, and whose code each backend compiles through.

Labels: `nvidia`, `ascend`, `amd`, `gpu` (the TritonGPU dialect, its passes and its lowering to
LLVM, shared by the GPU backends) and `common` (shared by all). They travel with every chunk, so
that `--backend nvidia` keeps the code NVIDIA compiles through and the reranker can tell that "on
the NPU" is not answered by the CUDA or the TritonGPU lowering.
"""
from __future__ import annotations

import re

_SHORT_TOKENS = {"cuda": "nvidia", "ptx": "nvidia", "sm90": "nvidia", "npu": "ascend", "cann": "ascend",
                 "amd": "amd", "hip": "amd", "rocm": "amd"}
_LONG_KEYS = {"nvidia": "nvidia", "hopper": "nvidia", "nvgpu": "nvidia", "nvws": "nvidia",
              "ascend": "ascend", "hivm": "ascend", "hfusion": "ascend", "amdgpu": "amd"}
_ASCEND_WORDS = re.compile(r"\b(Ascend|NPU|CANN|HIVM)\b")
_NVIDIA_WORDS = re.compile(r"\b(CUDA|NVIDIA|PTX|Hopper)\b")


# Whose code each backend compiles through besides its own: the code shared by all ("common"), and
# for the GPU backends the TritonGPU dialect, its passes and its lowering to LLVM ("gpu"). The
# Ascend backend lowers TTIR through linalg and HIVM and never reaches TritonGPU, so a question
# about the NPU is not answered by, say, the TritonGPU histogram lowering.
ALSO_RUNS = {"nvidia": ("gpu", "common"), "amd": ("gpu", "common"), "gpu": ("common",), "ascend": ("common",),
             "common": ()}


def runs(backend: str, label: str) -> bool:
    """Whether code labelled `label` is part of what `backend` compiles through."""
    return label == backend or label in ALSO_RUNS.get(backend, ("common",))


def backend_of(path: str, language: str, text: str) -> str:
    """`nvidia`, `ascend`, `amd`, `gpu` (TritonGPU, shared by the GPU backends) or `common`: from
    the path, or for prose from what it talks about."""
    lowered = path.lower()
    found = {backend for key, backend in _LONG_KEYS.items() if key in lowered}
    found |= {_SHORT_TOKENS[token] for token in re.split(r"[^a-z0-9]+", lowered) if token in _SHORT_TOKENS}
    if len(found) == 1:
        return found.pop()
    if not found and "tritongpu" in lowered:
        return "gpu"
    if not found and language == "markdown":
        ascend, nvidia = len(_ASCEND_WORDS.findall(text)), len(_NVIDIA_WORDS.findall(text))
        if ascend >= 3 and ascend > 2 * nvidia:
            return "ascend"
        if nvidia >= 3 and nvidia > 2 * ascend:
            return "nvidia"
    return "common"
