"""The problem's reference on one case: the yardstick for correctness and the eager time to beat."""
from __future__ import annotations

import contextlib
import copy
from typing import Any, Iterator

import torch

from ladder.runner.compare import flatten_outputs
from ladder.runner.errors import one_line
from ladder.runner.guards import CONTRACTIONS, ReferenceOpRecorder
from ladder.runner.inputs import as_float64, changed, clone
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class Reference:
    """The problem's Model on one case: in its own precision (timed) and in float64 (the yardstick).

    float64 is used where the model allows it: every floating parameter and input is converted; when
    that raises, or the model casts internally so its outputs are not float64, or an output is
    integer, the reference in the problem's own precision is the yardstick instead (``precision``
    says which and why).
    """

    def __init__(self, model: torch.nn.Module, allow_tf32: bool | None):
        self.model = model
        self.allow_tf32_override = allow_tf32
        self.allow_tf32 = False
        self.mutates_inputs = False
        self.exact_model: torch.nn.Module | None = None
        self.precision = "float64"
        self._prepared = False

    def prepare(self, inputs: list) -> None:
        """First look at the model: which ops it calls (for tf32) and whether it writes its inputs."""
        if self._prepared:
            return
        self._prepared = True
        recorder = ReferenceOpRecorder()
        arguments = clone(inputs)
        with torch.no_grad(), recorder:
            self.model(*arguments)
        self.mutates_inputs = bool(changed(inputs, arguments))
        contracts = bool(recorder.names & CONTRACTIONS)
        self.allow_tf32 = contracts if self.allow_tf32_override is None else self.allow_tf32_override
        try:
            self.exact_model = copy.deepcopy(self.model).to(torch.float64)
        except Exception as error:
            self.precision = f"native (the model cannot be converted to float64: {one_line(error)})"

    def native(self, inputs: list) -> Any:
        arguments = clone(inputs) if self.mutates_inputs else inputs
        with torch.no_grad(), tf32(self.allow_tf32):
            return self.model(*arguments)

    def outputs(self, inputs: list) -> tuple[Any, Any, bool]:
        """(yardstick outputs, native outputs, whether the yardstick is float64)."""
        native = self.native(inputs)
        if self.exact_model is not None:
            try:
                with torch.no_grad():
                    exact = self.exact_model(*as_float64(clone(inputs) if self.mutates_inputs else inputs))
            except Exception as error:
                self.exact_model = None
                self.precision = f"native (float64 run failed: {one_line(error)})"
            else:
                problem = _not_float64(native, exact)
                if problem is None:
                    return exact, native, True
                self.exact_model = None
                self.precision = f"native ({problem})"
        return native, native, False


def _not_float64(native: Any, exact: Any) -> str | None:
    for nat, ex in zip(flatten_outputs(native), flatten_outputs(exact)):
        if isinstance(nat, torch.Tensor):
            if not (nat.is_floating_point() or nat.is_complex()):
                return "integer output"
            if not isinstance(ex, torch.Tensor) or ex.dtype != torch.float64:
                return "the model casts internally, its float64 run does not return float64"
    return None


@contextlib.contextmanager
def tf32(enabled: bool) -> Iterator[None]:
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
