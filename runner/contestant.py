"""The process that runs candidate code for the judge: ``python -m ladder.runner.contestant RECEIVE_FD SEND_FD``.

It never decides anything. It loads one solution (or the problem's reference, for timing), builds
it per case, runs the forwards the judge asks for on inputs made from seeds the judge draws, and
reports what it saw: the outputs (as files the judge names), the launches, the guards' findings,
the event times. The judge (``ladder.runner.evaluate``) compares, times and writes the verdict.

Requests, in the order the judge sends them (``OPS``):

``load``     backend, problem, solution (or ``kind: reference``); the guards are installed and the
             ``Sentinel`` armed before the solution is imported
``precompile`` (GPU only) every kernel compiled ahead of time, into Triton's cache
``build``    one case: init inputs from the judge's seed, the model, the reference's parameters
``check``    one checked forward on fresh inputs: outputs to a file, launches (the forward's own,
             and apart those an autotuner made timing its configs), violations
``warmup``   a few calls (compilation, autotuning) and the per-call estimates timing needs
``arm``      the next timed call's inputs (made and synchronized before the judge flushes L2),
             events and guards, and the guards' report of the call before it
``go``       queue idle device work, event, forward, event, synchronize: the timed call
``keep``     the last timed call's report (its violations and launches), and its outputs written
             for the judge to verify
``report``   the last timed call's report, when nothing else carried it
``finish``   exit

The same ``Contestant`` answers in the judge's own process for trusted code (``LocalChannel``),
without the sentinel.
"""
from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

import torch

from ladder.runner import guards
from ladder.runner.backends import select_backend
from ladder.runner.channel import serve
from ladder.runner.compare import flatten_outputs
from ladder.runner.compiled import compiled_objects
from ladder.runner.errors import one_line
from ladder.runner.exchange import OutputsFile, input_digest
from ladder.runner.guards import (
    INPUT_ALIAS,
    LaunchTracer,
    poison,
    shares_memory,
    spans_overlap,
    stacks_intact,
    storage_span,
)
from ladder.runner.inputs import changed, clone, make_init_inputs, make_inputs, seed_everything
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.plain import plain_outputs
from ladder.runner.precompile import compile_kernels
from ladder.runner.problem import ProblemError, load_problem, load_solution
from ladder.runner.reference import tf32
from ladder.runner.sandbox import become_undumpable
from ladder.runner.seal import Tally, hold, reading, reseal
from ladder.runner.sentinel import Sentinel
from ladder.runner.timing import guard_violation, output_violation

# Every harness module this process needs is imported above, before any candidate code: once the
# sentinel is armed, candidate code can no longer import (or reach through sys.modules) the harness.
# The checks below are called through references taken now, so replacing them later changes nothing.
BACKEND_ENV = "LADDER_BACKEND"
_perf_counter = time.perf_counter
_intact, _timing_intact, _emptied_since = Sentinel.intact, Sentinel.timing_intact, Tally.emptied_since
_strays_since = LaunchTracer.strays_since
_getframe = sys._getframe


def _candidate_on_stack(sentinel: Sentinel) -> bool:
    """Whether a frame of candidate code is anywhere on the stack of the caller's caller."""
    frame = _getframe(2)
    while frame is not None and not sentinel.is_candidate_frame(frame):
        frame = frame.f_back
    return frame is not None


class Contestant:
    def __init__(self, name: str, *, sandboxed: bool, backend: Any = None, tracer: Any = None):
        self.name = name
        self.sandboxed = sandboxed
        self.backend, self.tracer = backend, tracer
        self.sentinel = None
        self.kind = "solution"
        self.problem = None
        self.model_class = None
        self.model = None
        # Set anew per case or per call, and sealed as set (``_set``): read-only mappings and tuples.
        self.callables: Mapping[str, Callable[[list], Any]] = MappingProxyType({})
        self.case: dict | None = None
        self.inputs: list | None = None
        self.held: Any = None
        self.input_spans: tuple[tuple[int, int], ...] = ()
        self.last_outputs: tuple[tuple[int, int], ...] = ()
        self._timed: Mapping[str, Any] = MappingProxyType({})
        self.compute_calls = Tally()
        self.reporting = False  # code under diagnosis: the honesty guards note, they do not reject
        self.notes: set[str] = set()
        self.allow_tf32 = False
        self.outputs_file: OutputsFile | None = None

    # ---------------------------------------------------------------------------- requests

    def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        op = OPS.get(command.get("op"))
        if op is None:
            return {"error": f"unknown request {command.get('op')!r}"}
        try:
            return op(self, command)
        except Exception as error:  # candidate code failing is data for the judge, never a crash here
            if self.sentinel is not None and self.sentinel.violations:
                return {"rejected": {"stage": "runtime", "reason": self.sentinel.violations[0]}}
            # computed with torch, then failed
            if self.sentinel is not None and self.compute_calls and not self.reporting:
                calls = ", ".join(f"{name} x{count}" for name, count in sorted(self.compute_calls.items()))
                return {"rejected": {"stage": "runtime", "reason": f"forward calls torch compute ops: {calls}"}}
            return {"error": one_line(error), "device_usable": self._device_usable()}
        except BaseException as error:  # SystemExit, KeyboardInterrupt raised by candidate code
            return {"rejected": {"stage": "runtime", "reason": f"candidate code raised {type(error).__name__} "
                                                               "(the contestant ends when the judge says so)"}}

    def _device_usable(self) -> bool:
        if self.backend is None or self.backend.device_type == "cpu":
            return True
        try:

            self.backend.synchronize()
            torch.ones(1, device=self.backend.device()).add_(1).sum().item()
            return True
        except Exception:
            return False

    # ---------------------------------------------------------------------------- load/build

    def load(self, command: dict[str, Any]) -> dict[str, Any]:
        self.kind = command.get("kind", "solution")
        self.reporting = command.get("guards") == "report"
        try:
            self.problem = load_problem(command["problem"], quick=bool(command.get("quick")))
        except ProblemError as error:
            return {"error": str(error)}
        if self.kind == "reference":
            self.model_class = self.problem.Model
            return {"ok": True}
        self._install_guards(command)
        try:
            self.model_class = load_solution(command["solution"])
        except ProblemError as error:
            tampering = _intact(self.sentinel) if self.sentinel else None
            return {"rejected": {"stage": "runtime", "reason": tampering} if tampering
                    else {"stage": "load", "reason": str(error)}}
        tampering = _intact(self.sentinel) if self.sentinel else None
        if tampering:
            return {"rejected": {"stage": "runtime", "reason": tampering}}
        return {"ok": True}

    def _install_guards(self, command: dict[str, Any]) -> None:
        if self.tracer is None:
            self.tracer = LaunchTracer(self.backend.launch_hook_fires, self.backend.current_stream)
            self.tracer.install()
        self.backend.time_autotuners()  # the guards slow each call's host side; kept out of tuning
        if self.sandboxed:
            constants = set(self.problem._defaults).union(*(case.keys() for case in self.problem.cases))
            self.sentinel = Sentinel(command["solution"], command["problem"], guards, command.get("exchange"),
                                     modules=(sys.modules[type(self.backend).__module__],),
                                     problem_module=self.problem.module, problem_constants=frozenset(constants))
            self.sentinel.recording = lambda: guards.recording(self.tracer, self.compute_calls,
                                                               self.sentinel.triton_ops, not self._timing())
            self.tracer.called_by_candidate = self.sentinel.torch_called_by_candidate
            self.tracer.refuse = self.sentinel.refuse
            self.tracer.sentinel = self.sentinel
            self.sentinel.snapshot_hooks()
            self.outputs_file = self._outputs_file(command.get("exchange") or tempfile.gettempdir())
            self.sentinel.arm()
            hold(self.sentinel, contestant=self, tracer=self.tracer, backend=self.backend,
                 outputs_file=self.outputs_file)

    def _set(self, **values: Any) -> None:
        """Set attributes the seal covers that the runner sets anew after arming (a case's callables, a
        call's inputs, outputs and timing), and seal them as set: they decide what happens after the
        timed call, outside the recorders (the outputs saved and checked, the inputs kept from poison),
        so candidate code that replaced one in between would decide what the judge sees. Never for
        candidate code: called from under a forward, it would seal what that forward chose."""
        if self.sentinel is not None and _candidate_on_stack(self.sentinel):
            self.sentinel.refuse("set the contestant's sealed attributes itself")
        for name, value in values.items():
            setattr(self, name, value)
        if self.sentinel is not None:
            reseal(self.sentinel, "contestant", *values)

    def precompile(self, command: dict[str, Any]) -> dict[str, Any]:
        """Compile every kernel the solution launches on any case, ahead of time and with no device
        (``ladder.runner.precompile``): the judge asks every contestant at once, so they compile in parallel,
        and the first checked call (autotuning included) finds them in Triton's cache."""
        kernels = compile_kernels(Path(command["solution"]), Path(command["problem"]), command["target"])
        return {"kernels": len(kernels)}

    def build(self, command: dict[str, Any]) -> dict[str, Any]:
        self._release_case()
        self.case = self.problem.cases[command["case"]]
        self.allow_tf32 = bool(command.get("allow_tf32"))
        device = self.backend.device()
        seed = command["init_seed"]
        init_inputs = make_init_inputs(self.problem, self.case, seed, device)
        seed_everything(seed)
        self.model = None
        try:
            with self.problem.applied(self.case), device:
                model = self.model_class(*init_inputs).to(device)
        except Exception as error:
            tampering = _intact(self.sentinel) if self.sentinel else None
            if tampering:
                return {"rejected": {"stage": "runtime", "reason": tampering}}
            what = "Model" if self.kind == "reference" else "ModelNew"
            return {"failed": f"{what}(*get_init_inputs()) failed: {one_line(error)}",
                    "device_usable": self._device_usable()}
        if command.get("parameters") and isinstance(model, torch.nn.Module):
            theirs = torch.load(command["parameters"], map_location=device, weights_only=True)
            ours = model.state_dict()
            if ours.keys() == theirs.keys() and all(ours[k].shape == theirs[k].shape for k in ours):
                model.load_state_dict(theirs)
        self.model = model
        if self.sandboxed:  # the process is this contestant's: what exists now is never scanned again
            gc.freeze()  # (torch, Triton, the model), so collections stay short. Never the judge's own heap.
        callables = {"model": lambda inputs: self._call(model, inputs)}
        if self.kind == "reference" and command.get("torch_compile"):
            compiled = torch.compile(model)
            callables["torch.compile"] = lambda inputs: self._call(compiled, inputs)
        self._set(callables=MappingProxyType(callables))
        if self.sentinel is not None:
            found = compiled_objects(model, sys.modules.get(self.model_class.__module__))
            if found:
                return {"rejected": {"stage": "runtime",
                                     "reason": f"uses TorchScript, tracing or torch.compile: {found[0]}"}}
            tampering = _intact(self.sentinel)
            if tampering:
                return {"rejected": {"stage": "runtime", "reason": tampering}}
        return {"ok": True}

    def _release_case(self) -> None:
        """The last case's model, inputs and held outputs go, and the device memory they cached goes
        back to the device before this case's are made: the judge and the other contestants share it."""
        if self.case is None:  # the first case: nothing to give back
            return
        self.model, self.inputs = None, None
        self._set(callables=MappingProxyType({}))
        self._drop()
        if self.sandboxed:  # candidate code's reference cycles go too; its heap is frozen, so this is short
            gc.collect()
        if self.backend is not None:
            self.backend.release_cached_memory()

    def _call(self, model: Any, inputs: list) -> Any:
        with torch.no_grad(), tf32(self.allow_tf32 and not self._guarded()):
            return model(*inputs)

    # ---------------------------------------------------------------------------- one forward

    def _guarded(self) -> bool:
        """Whether calls run under the guards: a solution's, and a sandboxed contestant's whatever its
        ``kind`` says (candidate code can reach that attribute; a reference is never sandboxed with a sentinel)."""
        return self.kind == "solution" or self.sentinel is not None

    def _forward(self, which: str, inputs: list, poison_fresh: bool = True) -> tuple[list, Any, str | None]:
        """One call under the guards: (its outputs as a flat list, the launch window, tampering or None)."""
        if not self._guarded():
            return plain_outputs(self.callables[which](inputs))[0], None, None
        with torch.no_grad(), self.tracer.watch(self.name) as window, guards.recording(
                self.tracer, self.compute_calls, self.sentinel.triton_ops if self.sentinel else frozenset(),
                poison_fresh) as modes:
            entered = stacks_intact(*modes) if self.sentinel else None
            since = self.compute_calls.mark()
            output, odd = plain_outputs(self.callables[which](inputs))
            tampering = entered or ((stacks_intact(*modes) or _timing_intact(self.sentinel)
                                     or _emptied_since(self.compute_calls, since)) if self.sentinel else None)
        return output, window, tampering or odd or (_intact(self.sentinel) if self.sentinel else None)

    def _inputs(self, seed: int) -> tuple[list, str | None]:
        """A call's inputs, and the tampering found just before they were made (or None): whatever
        ran since the last call (a finalizer of the candidate's, when the runner let its objects go)
        could have hooked what makes them, and put things back in the next forward, before the check
        after it. Collection is off meanwhile, so that no finalizer runs halfway."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            tampering = _intact(self.sentinel) if self.sentinel else None
            return make_inputs(self.problem, self.case, seed, self.backend.device()), tampering
        finally:
            if enabled:
                gc.enable()

    def check(self, command: dict[str, Any]) -> dict[str, Any]:
        inputs, before = self._inputs(command["seed"])
        arguments = clone(inputs)
        strayed = reading(self.tracer.stray)
        self.compute_calls.clear()
        output, window, tampering = self._forward("model", arguments)
        tampering = before or tampering
        self.backend.synchronize()
        forward = window.forward_launches()
        reply: dict[str, Any] = {"digest": input_digest(inputs), "launches": len(forward),
                                 "tuning_launches": window.tuning_launches(),
                                 "kernels": sorted({launch.kernel for launch in forward})}
        if tampering:
            return {**reply, "rejected": {"stage": "runtime", "reason": tampering}}
        if self.compute_calls:
            calls = ", ".join(f"{name} x{count}" for name, count in sorted(self.compute_calls.items()))
            reason = self._enforced(f"forward calls torch compute ops: {calls}",
                                    note="forward calls torch compute ops: " + ", ".join(sorted(self.compute_calls)))
            if reason:
                return {**reply, "rejected": {"stage": "runtime", "reason": reason}}
        tensors = [(position, tensor) for position, tensor in enumerate(output)
                   if isinstance(tensor, torch.Tensor) and tensor.numel()]
        previous = self.last_outputs
        self._set(last_outputs=tuple(storage_span(t) for _, t in tensors))
        cached = next((f"returns output {position} of the previous call without writing it (output "
                       "cached across calls)" for position, tensor in tensors
                       if storage_span(tensor) in previous and not window.wrote(tensor)), None)
        dishonest = guard_violation(window, self.backend.current_stream())
        mutated = changed(inputs, arguments)
        if dishonest is None:  # an input written into fails the case as such ("writes to its input")
            untouched = [storage_span(x) for index, x in enumerate(arguments)
                         if isinstance(x, torch.Tensor) and index not in mutated]
            dishonest = next((f"returns output {position}, {INPUT_ALIAS}" for position, tensor in tensors
                              if shares_memory(tensor, untouched)), None)
        strays = _strays_since(self.tracer, strayed)
        if dishonest is None and strays:
            dishonest = f"let {strays} Triton launch(es) happen outside forward (a thread?)"
        if dishonest is None:
            dishonest = next((f"returns output {position}, which no Triton kernel wrote (its memory was "
                              "never passed to one)" for position, tensor in tensors if not window.wrote(tensor)),
                             None)
        self._save(output, command["output"])
        reply.update(violation=cached or self._enforced(dishonest), mutated=mutated,
                     notes=sorted(self.notes))
        for _, tensor in tensors:
            poison(tensor)
        return reply

    # ---------------------------------------------------------------------------- timing

    def warmup(self, command: dict[str, Any]) -> dict[str, Any]:

        inputs = make_inputs(self.problem, self.case, command["seed"], self.backend.device())
        which = command.get("which", "model")
        clock = self.backend.clock()  # bound before any forward runs, as in ``go``
        for _ in range(command["calls"]):  # as timed calls run: no fill of fresh allocations
            self._poison(self._forward(which, self._private(inputs, command), poison_fresh=False)[0], [])
        clock.synchronize()
        start, end = clock.event(), clock.event()
        begun = _perf_counter()
        clock.record(start)
        output = self._forward(which, self._private(inputs, command), poison_fresh=False)[0]
        clock.record(end)
        host_ms = (_perf_counter() - begun) * 1e3
        clock.synchronize()
        self._poison(output, [])
        return {"estimate_ms": clock.elapsed_ms(start, end), "host_ms": host_ms}

    def arm(self, command: dict[str, Any]) -> dict[str, Any]:
        """Make the next timed call's inputs and set its events and guards up, so that the judge's
        host clock around ``go`` brackets only queueing, the call and the synchronize; the reply
        carries the guards' report of the call before it (one message fewer per repetition)."""
        previous = self._report()
        self._drop()
        # Fresh allocations are not poisoned inside a timed call (the fill would be timed). The last
        # call's inputs go before the new ones are made, so every repetition allocates in the same
        # order: the new inputs take the old inputs' blocks and the forward's outputs the blocks of
        # the last outputs, which ``_drop`` just poisoned. An element a kernel leaves unwritten then
        # still shows as poison; where the allocator hands back other memory, the verified calls
        # catch the wrong values.
        self.inputs = None
        # Collection is off inside the judge's clock; garbage the last call left in reference cycles
        # (candidate code's own) would otherwise hold its device memory across repetitions. The young
        # generations hold it: frozen objects are never scanned, so this costs well under a millisecond.
        gc.collect(1)
        gc.disable()  # no collection pause inside the judge's clock; the report turns collection back on
        self.inputs, before = self._inputs(command["seed"])
        self._set(input_spans=tuple(storage_span(x) for x in self.inputs if isinstance(x, torch.Tensor)))
        self.backend.synchronize()
        timed = {"which": command.get("which", "model"), "inputs": self._private(self.inputs, command),
                 "stall_ms": command.get("stall_ms", 0.0), "stack": contextlib.ExitStack(), "tampering": before,
                 "strayed": reading(self.tracer.stray) if self.tracer is not None else 0}
        self.compute_calls.clear()
        if self._guarded():
            stack = timed["stack"]
            stack.enter_context(torch.no_grad())
            timed["window"] = stack.enter_context(self.tracer.watch(self.name))
            timed["modes"] = stack.enter_context(guards.recording(
                self.tracer, self.compute_calls, self.sentinel.triton_ops if self.sentinel else frozenset(),
                poison_fresh=False))
            if self.sentinel:
                timed["tampering"] = before or stacks_intact(*timed["modes"])
        self._set(_timed=MappingProxyType(timed))  # read-only: the forward cannot take its guards out of it
        return {"ready": True, "previous": previous}

    def go(self, command: dict[str, Any]) -> dict[str, Any]:
        """The timed call, bracketed by the judge's host clock: nothing but queueing, the call, the
        synchronize and taking the guards down happens here; they are read in the report. The events
        are this call's own locals: held anywhere else, candidate code could move them. So is the clock,
        bound before the forward runs: a backend method it replaced is not what times it."""
        timed, clock = self._timed, self.backend.clock()
        start, end = clock.event(), clock.event()
        window = timed.get("window")
        try:
            clock.stall(timed["stall_ms"])
            since = self.compute_calls.mark()
            begun = _perf_counter()
            clock.record(start)
            # Flattened, and the returned object dropped, before the end event: an object of the
            # candidate's that held a finalizer (a generator's ``finally``, ``__del__``, a weak
            # reference's callback) would otherwise run it after the clock, when the runner let go.
            output, odd = plain_outputs(self.callables[timed["which"]](timed["inputs"]))
            if window is not None:
                clock.join_streams(window.streams())
            clock.record(end)
            host_ms = (_perf_counter() - begun) * 1e3
        except BaseException:
            timed["stack"].close()
            gc.enable()
            raise
        clock.synchronize()
        # Still inside the recorders (a popped mode shows here), then out of them at once: in the
        # judge's own process (trusted code) the judge's work comes next and is not the candidate's.
        with timed["stack"]:
            tampering = timed["tampering"] or (
                stacks_intact(*timed["modes"]) or _timing_intact(self.sentinel)
                or _emptied_since(self.compute_calls, since) if self.sentinel and "modes" in timed else None)
        # Collection stays off until the outputs are saved or let go (``_held``).
        self._set(_timed=MappingProxyType({**timed, "output": output, "odd": odd, "host_ms": host_ms,
                                           "tampering": tampering, "done": True}))
        return {"time_ms": clock.elapsed_ms(start, end)}

    def _enforced(self, problem: str | None, note: str | None = None) -> str | None:
        """What an honesty guard found: the reason to reject; for code under diagnosis (``guards:
        report``), a note on the case instead, so a forward that finishes in torch is still timed.
        Tampering with the judge is never a note."""
        if problem is not None and self.reporting:
            self.notes.add(note or problem)
            return None
        return problem

    def _timing(self) -> bool:
        """Between ``arm`` and the end of ``go``: the timed call is set up or running."""
        return bool(self._timed) and not self._timed.get("done")

    def report(self, command: dict[str, Any]) -> dict[str, Any]:
        """The guards' report of the last timed call, when no later request carried it."""
        with self._held():
            return {"report": self._report()}

    def keep(self, command: dict[str, Any]) -> dict[str, Any]:
        """The last timed call's report, and its outputs written for the judge to verify."""
        with self._held():
            report = self._report()
            self._save(self.held, command["output"])
            self._drop()
        return {"report": report}

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """Everything the timed call left (its inputs, the launch window) is let go, and collection
        turned back on, only after its outputs are saved: a finalizer of the candidate's on any of it
        would otherwise run between the clock and the save, and could finish the work there."""
        timed = self._timed
        try:
            yield
        finally:
            del timed
            gc.enable()

    def _save(self, output: Any, path: str) -> None:
        """Outputs for the judge at ``path``, through this contestant's own outputs file, kept warm
        beside it (``ladder.runner.exchange``): one per contestant, so in-process ones never share it."""
        if self.outputs_file is None:
            self.outputs_file = self._outputs_file(Path(path).parent)
        self.outputs_file.save(output, path)

    def _outputs_file(self, folder: str | Path) -> OutputsFile:
        """This contestant's outputs file in ``folder`` (the judge's exchange folder): a sandboxed one
        makes it before it is armed, so it is sealed with the rest (``Seal.of``)."""
        own = re.sub(r"[^\w.-]", "_", self.name)
        return OutputsFile(Path(folder) / f".outputs-{own}-{os.getpid()}")

    def _report(self) -> dict[str, Any] | None:
        """What the guards saw in the last timed call (after the judge's clock stopped), once."""
        timed = self._timed
        self._set(_timed=MappingProxyType({}))
        if not timed.get("done"):
            return None
        window, output = timed.get("window"), timed["output"]
        self._set(held=output)
        reply: dict[str, Any] = {"host_ms": timed["host_ms"]}
        if self._guarded():
            # Tampering first, before any method of the runner's objects is called on what the call left.
            tampering = timed["tampering"] or timed["odd"] or (_intact(self.sentinel) if self.sentinel else None)
            dishonest = ("forward calls torch compute ops: " + ", ".join(sorted(self.compute_calls))
                         if self.compute_calls else None)
            dishonest = dishonest or guard_violation(window, self.backend.current_stream()) or output_violation(
                window, output, self.input_spans)
            strays = _strays_since(self.tracer, timed["strayed"])
            if dishonest is None and strays:
                dishonest = f"{strays} Triton launch(es) happened outside any forward"
            reply["violation"] = tampering or self._enforced(dishonest)
            if window is not None:  # a warmed-up call: its launches are the steady-state count
                reply.update(launches=len(window.forward_launches()), tuning_launches=window.tuning_launches())
        return reply

    def finish(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _private(self, inputs: list, command: dict[str, Any]) -> list:

        return clone(inputs) if command.get("private") else inputs

    def _drop(self) -> None:
        if self.held is not None:
            self._poison(self.held, self.input_spans)
            self._set(held=None)

    def _poison(self, output: Any, keep: list[tuple[int, int]]) -> None:
        """Poison every output tensor except those sharing memory with ``keep`` (the inputs), so
        memory the allocator hands back next time holds no correct answer."""
        for tensor in flatten_outputs(output):
            if isinstance(tensor, torch.Tensor) and not any(spans_overlap(storage_span(tensor), s) for s in keep):
                poison(tensor)


# Read-only, as the sentinel's tables are: a handler replaced in place would answer a request for the runner.
OPS: Mapping[str, Callable[[Contestant, dict[str, Any]], dict[str, Any]]] = MappingProxyType({
    "load": Contestant.load,
    "precompile": Contestant.precompile,
    "build": Contestant.build,
    "check": Contestant.check,
    "warmup": Contestant.warmup,
    "arm": Contestant.arm,
    "go": Contestant.go,
    "report": Contestant.report,
    "keep": Contestant.keep,
    "finish": Contestant.finish,
})


def main(argv: list[str]) -> None:
    receive_fd, send_fd = int(argv[0]), int(argv[1])
    become_undumpable()  # other contestants cannot read this one's memory or environment through /proc
    backend = select_backend(os.environ[BACKEND_ENV])  # its environment was set by the judge
    backend.setup()
    contestant = Contestant(os.environ.get("LADDER_CONTESTANT", "solution"), sandboxed=True, backend=backend)
    serve(receive_fd, send_fd, contestant.handle)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip teardown: after a device error, releasing the device can hang


if __name__ == "__main__":
    main(sys.argv[1:])
