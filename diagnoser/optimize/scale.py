"""``ladder suite --optimize --ray``: every operator's loop at once, each gate a Ray task on one whole GPU.

The driver (this process) runs one loop per operator in a thread of its own: diagnosing, proposing
(rules, or a model's requests, which mostly wait on the network) and journaling stay here, so the
driver alone writes journals and reports and every record is written exactly once. Each gate (the
judge: correctness and timing) is a Ray task that holds one whole GPU (``num_gpus=1``) for that
evaluation only: a GPU is leased per evaluation, never pinned to an operator, so no GPU waits on a
model and no two timed evaluations share a GPU. Before it, every contestant's kernels compile on a
CPU task of their own, in the judge's sandbox (``ladder.runner.prebuild``); the GPU task takes the
caches as arguments, so Ray leases the GPU only once they are built, and the judge's own precompile
finds every kernel. Each round's diagnosis of the best is a CPU task too (``RemoteDiagnose``): rung 2
is read from the gate's timing, and rung 3 compiles ahead of time for the target instead of running
the kernel, so no GPU is touched outside a gate's lease (the first round after a resume, with no
gate to read, leases a GPU for its diagnosis as a gate does). A task whose worker, GPU or node is lost is retried
by Ray (``RETRIES`` times), then the operator's run stops with its journal intact (``--resume``).

Without ``--ray`` nothing here is imported: the suite runs in one process as before.
"""
from __future__ import annotations

import importlib
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ladder.diagnoser.optimize.gate import GateResult, GateSettings
from ladder.diagnoser.optimize.journal import Journal, JournalError
from ladder.diagnoser.optimize.loop import OptimizeError, Settings, optimize
from ladder.diagnoser.optimize.proposers import load_proposer
from ladder.diagnoser.optimize.suite import operator_row, source_run, summarize

RETRIES = 2
DEFAULT_GATE = "ladder.diagnoser.optimize.gate:run_gate"
# What contestants compile for until a GPU task has reported its own target (H100/H200: sm90); a
# cache built for another target is only a miss, and the judge on the GPU compiles for itself.
PREBUILD_TARGET = "sm90"


def connect(address: str) -> dict[str, Any]:
    """Join the cluster at ``address`` (``auto``: the one this machine belongs to) or start a local one."""
    import ray

    if not ray.is_initialized():
        options = {"include_dashboard": False, "log_to_driver": False}
        ray.init(address=None if address == "local" else address, **options)
    return {key: value for key, value in ray.cluster_resources().items() if key in ("CPU", "GPU")}


@dataclass
class Board:
    """What every operator is doing, across the cluster: one line each, printed when it changes."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    echo: Callable[[str], None] = print

    def update(self, operator: str, **values: Any) -> None:
        with self.lock:
            self.rows.setdefault(operator, {}).update(values)
            row = self.rows[operator]
            self.echo(f"{operator}: round {row.get('round', 0)}, best {row.get('best', 1.0):.3f}x, "
                      f"{row.get('state', 'waiting')}" + (f" on GPU {row['gpu']}" if row.get("gpu") is not None else ""))


def _here(paths: dict[str, str], sources: dict[str, str], folder: str) -> dict[str, Path]:
    """Each file on this worker's machine: the driver's path when it holds the same text, else a copy."""
    local = {}
    for name, path in paths.items():
        if Path(path).is_file() and Path(path).read_text() == sources[name]:
            local[name] = Path(path)
        else:
            local[name] = Path(folder) / (Path(path).name if name == "problem" else f"{name}.py")
            local[name].write_text(sources[name])
    return local


def _prebuild(solution: str, problem: str, target: str, sources: dict[str, str]) -> dict[str, Any]:
    """A CPU task's body: one contestant's kernels compiled in the sandbox, its cache as an archive."""
    from ladder.runner.prebuild import prebuild

    with tempfile.TemporaryDirectory(prefix="ladder-prebuild-") as folder:
        local = _here({"solution": solution, "problem": problem}, sources, folder)
        return prebuild(local["solution"], local["problem"], target).__dict__


def _evaluate(gate: str, problem: str, best: str, initial: str, candidates: dict[str, str],
              settings: GateSettings, torch_compile: bool, sources: dict[str, str], built: tuple[str, ...] = (),
              *prebuilt: dict[str, Any]) -> tuple[GateResult, dict]:
    """The Ray task's body: one gate on the GPU Ray leased to it; files travel as text when the
    worker's machine does not share the driver's. ``prebuilt`` (Ray resolves them before the GPU is
    leased) are the caches of the contestants named in ``built``, unpacked here first."""
    started = time.time()
    import ray

    from ladder.runner.prebuild import install

    paths = {"problem": problem, "best": best, "initial": initial, **candidates}
    with tempfile.TemporaryDirectory(prefix="ladder-gate-") as folder:
        local = _here(paths, sources, folder)
        compiled = {name: {"kernels": found["kernels"], "installed_files": install(local[name], found),
                           "seconds": found["seconds"], "finished_at": found["finished_at"],
                           "why_not": found["error"] or (found["rejected"] or {}).get("reason")}
                    for name, found in zip(built, prebuilt)}
        module, _, attribute = gate.partition(":")
        run = getattr(importlib.import_module(module), attribute)
        result = run(local["problem"], local["best"], local["initial"], {n: local[n] for n in candidates}, settings,
                     torch_compile=torch_compile)
    lease = {"gpu": ray.get_gpu_ids(), "node": ray.get_runtime_context().get_node_id(), "started": started,
             "ended": time.time(), "prebuilt": compiled, "target": _device_target()}
    return result, lease


@dataclass
class RunView:
    """What a diagnosis reads of its run (``loop.Run`` holds a journal and callbacks; this travels)."""

    settings: Settings
    best_in_gate: str


def _diagnose(best: str, problem: str, sources: dict[str, str], last_gate: GateResult | None,
              view: RunView, capture: str = "aot") -> tuple[dict[str, Any], float]:
    """A task's body: the ladder on the run's best, as its target diagnoses (on a CPU task with no GPU,
    ``capture="aot"``; on a GPU task of its own, ``"device"``); and the seconds it took (the rest of
    the driver's wait was the task's queueing)."""
    import functools

    from ladder.diagnoser.optimize import ascend, loop

    began = time.monotonic()
    diagnose = ascend.diagnose_for(view.settings.target) or functools.partial(loop.diagnose_best, capture=capture)
    with tempfile.TemporaryDirectory(prefix="ladder-diagnose-") as folder:
        local = _here({"best": best, "problem": problem}, sources, folder)
        return diagnose(local["best"], local["problem"], last_gate, view), time.monotonic() - began


def _device_target() -> str | None:
    """The compile target of the GPU this task holds (``sm90``, as the judge compiles for it), or None."""
    from ladder.runner.backends import load_backend
    from ladder.runner.precompile import compile_target

    cuda = load_backend("cuda")
    return compile_target(cuda) if cuda.is_available() else None


def _awaited(reference: Any, what: str) -> Any:
    """A task's result; a task Ray lost on every retry stops the operator's run, journal intact."""
    import ray
    from ray.exceptions import RayError

    try:
        return ray.get(reference)
    except RayError as error:
        raise OptimizeError(f"the {what} was lost {RETRIES + 1} times ({type(error).__name__}); the journal is "
                            "intact: rerun with --resume") from None


class RemoteGate:
    """The loop's gate function, submitting each evaluation as a Ray task on one GPU."""

    def __init__(self, operator: str, board: Board, gate: str = DEFAULT_GATE, leases: list | None = None,
                 prebuild_target: str | None = PREBUILD_TARGET):
        import ray

        self.operator, self.board, self.gate = operator, board, gate
        self.leases = leases if leases is not None else []
        self.prebuild_target = prebuild_target
        self._task = ray.remote(num_gpus=1, max_retries=RETRIES)(_evaluate)
        self._compile = ray.remote(num_cpus=1, max_retries=RETRIES)(_prebuild)
        self._built: dict[tuple[str, str, str], Any] = {}  # (source, problem, target) -> its cache's object

    def __call__(self, problem: Path, best: Path, initial: Path, candidates: dict[str, Path],
                 settings: GateSettings, torch_compile: bool = False) -> GateResult:
        files = {"problem": problem, "best": best, "initial": initial, **candidates}
        sources = {name: Path(path).read_text() for name, path in files.items()}
        self.board.update(self.operator, state=f"gating {len(candidates)} candidate(s)")
        built = tuple(name for name in files if name != "problem") if self.prebuild_target else ()
        prebuilt = [self._prebuilt(files[name], problem, sources[name], sources["problem"]) for name in built]
        submitted = time.time()
        reference = self._task.remote(self.gate, str(problem), str(best), str(initial),
                                      {n: str(p) for n, p in candidates.items()}, settings, torch_compile, sources,
                                      built, *prebuilt)
        result, lease = _awaited(reference, "evaluation")
        self.leases.append({"operator": self.operator, **lease})
        if self.prebuild_target and lease.get("target"):  # the cluster's GPUs say what to compile for next
            self.prebuild_target = lease["target"]
        self.board.update(self.operator, state="proposing", gpu=None)
        return replace(result, waited_s=round(queued_for_a_gpu(submitted, lease), 2))

    def _prebuilt(self, solution: Path, problem: Path, source: str, problem_source: str) -> Any:
        """The CPU task compiling one contestant (its object: the same source is compiled once per
        run and target; the target changes once a GPU task has named its own)."""
        key = (source, problem_source, self.prebuild_target)
        if key not in self._built:
            self._built[key] = self._compile.remote(str(solution), str(problem), self.prebuild_target,
                                                    {"solution": source, "problem": problem_source})
        return self._built[key]


def queued_for_a_gpu(submitted: float, lease: dict[str, Any]) -> float:
    """Seconds between submitting a gate and its GPU task starting, less its compiles (the run's own
    work, which a gate in one process does too): the wait for a GPU another operator held, or for
    a worker process to start."""
    compiling = max((built.get("seconds") or 0.0 for built in lease.get("prebuilt", {}).values()), default=0.0)
    return max(0.0, lease["started"] - submitted - compiling)


class RemoteDiagnose:
    """The loop's diagnosis function, submitting each diagnosis as a Ray CPU task; the first round
    after a resume, which has no gate of this call to read rung 2 from, as a task on a GPU of its own,
    where rung 2 profiles the best (leased like a gate's, so it times nothing beside a gate)."""

    def __init__(self, operator: str, board: Board):
        import ray

        self.operator, self.board = operator, board
        self._task = ray.remote(num_cpus=1, max_retries=RETRIES)(_diagnose)
        self._gpu_task = ray.remote(num_gpus=1, max_retries=RETRIES)(_diagnose)

    def __call__(self, best: Path, problem: Path, last_gate: GateResult | None, run: Any) -> dict[str, Any]:
        on_gpu = last_gate is None
        self.board.update(self.operator, state=f"diagnosing ({'GPU' if on_gpu else 'CPU'} task)")
        sources = {"best": Path(best).read_text(), "problem": Path(problem).read_text()}
        view = RunView(run.settings, run.best_in_gate)
        began = time.monotonic()
        submitted = (self._gpu_task.remote(str(best), str(problem), sources, None, view, "device") if on_gpu
                     else self._task.remote(str(best), str(problem), sources, last_gate, view))
        diagnosis, ran_s = _awaited(submitted, "diagnosis")
        return {**diagnosis, "waited_s": round(max(0.0, time.monotonic() - began - ran_s), 2)}


def optimize_suite_ray(operators: list[Any], settings: Settings, proposer: str, out: Path, *, address: str = "local",
                       gate: str = DEFAULT_GATE, echo: Callable[[str], None] = print,
                       leases: list | None = None, prebuild_target: str | None = PREBUILD_TARGET,
                       continue_from: Path | None = None) -> dict[str, Any]:
    """Every operator's loop at once on the cluster; the same document as ``optimize_suite``."""
    resources = connect(address)
    board = Board(echo=echo)
    echo(f"ladder suite --optimize: {len(operators)} operators on {resources.get('GPU', 0):g} GPUs, "
         f"{resources.get('CPU', 0):g} CPUs")

    def one(op: Any) -> dict[str, Any]:
        folder = out / op.key
        remote = RemoteGate(op.key, board, gate, leases, prebuild_target)
        started = time.monotonic()
        try:
            optimize(op.solution, op.problem, folder, load_proposer(proposer, run=folder), settings,
                     resume=Journal(folder).exists(), continue_from=source_run(continue_from, op.key), gate=remote,
                     diagnose=RemoteDiagnose(op.key, board),
                     progress=lambda line: board.update(op.key, round=Journal(folder).last_round() + 1
                                                        if Journal(folder).exists() else 0, state=line))
            row = operator_row(op.key, Journal(folder))
            board.update(op.key, best=row["speedup_vs_initial"], state=f"done: {row['stopped']}")
        except (OptimizeError, JournalError) as error:
            row = {"operator": op.key, "error": str(error)}
            board.update(op.key, state=f"stopped: {error}")
        row["elapsed_s"] = round(time.monotonic() - started, 1)
        return row

    with ThreadPoolExecutor(max_workers=max(1, len(operators)), thread_name_prefix="ladder-operator") as pool:
        rows = list(pool.map(one, operators))
    return {"proposer": proposer, "summary": summarize(rows), "operators": rows, "stopped": None,
            "cluster": resources}
