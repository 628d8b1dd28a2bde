"""TorchScript, traced, FX or torch.compile'd callables a candidate's model already holds: the
sentinel refuses making them while candidate code runs (its ``compilers`` protection), and the
contestant looks for any made before (at import, through a path no guard covered)."""
from __future__ import annotations

import sys
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def compiled_objects(*roots: Any) -> list[str]:
    """TorchScript, traced, FX or torch.compile'd callables held by models or a module's globals."""
    import torch

    kinds = [(torch.jit.ScriptModule, "a TorchScript module"), (torch.jit.ScriptFunction, "a TorchScript function"),
             (torch.fx.GraphModule, "a traced FX graph")]
    found = []

    def kind_of(value: Any) -> str | None:
        for cls, label in kinds:
            if isinstance(value, cls):
                return label
        if hasattr(value, "_torchdynamo_orig_callable") or type(value).__name__ == "OptimizedModule":
            return "a torch.compile'd callable"
        return None

    for root in roots:
        values = list(vars(root).items()) if isinstance(root, type(sys)) else []
        if isinstance(root, torch.nn.Module):
            values = [(name, module) for name, module in root.named_modules()]
            values += [(f"{name}.{attribute}", value) for name, module in root.named_modules()
                       for attribute, value in vars(module).items() if not attribute.startswith("_")]
        for name, value in values:
            label = kind_of(value)
            if label:
                found.append(f"{name or 'the model'} is {label}")
    return found
