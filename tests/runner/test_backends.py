"""Backend table and automatic selection on a machine without a device."""
import pytest

from ladder.runner.backends import BACKENDS, BackendError, load_backend, select_backend


def test_auto_selection_falls_back_to_the_interpreter_without_a_device():
    backend = select_backend()
    assert backend.name == "interpret" and not backend.can_time
    assert backend.env == {"TRITON_INTERPRET": "1"}


def test_asking_for_an_absent_device_says_why():
    with pytest.raises(BackendError, match="backend 'cuda' is not available here"):
        select_backend("cuda")


def test_npu_without_torch_npu_is_unavailable_with_a_reason():
    backend = load_backend("npu")
    assert not backend.is_available() and "torch_npu" in backend.unavailable_reason()


def test_aot_is_registered_but_does_not_run_kernels():
    assert BACKENDS["aot"] == "ladder.runner.backends.aot"
    with pytest.raises(BackendError, match="does not run kernels"):
        select_backend("aot")


def test_unknown_backend_is_a_one_line_error():
    with pytest.raises(BackendError, match="unknown backend 'tpu'"):
        load_backend("tpu")


class FakeDeviceModule:
    """torch.cuda as far as releasing its cache goes."""

    def __init__(self, initialized: bool):
        self.initialized, self.emptied = initialized, 0

    def is_available(self):
        return True

    def is_initialized(self):
        return self.initialized

    def empty_cache(self):
        self.emptied += 1


@pytest.mark.parametrize("initialized, emptied", [(True, 1), (False, 0)])
def test_a_device_backend_gives_its_cached_memory_back_only_once_the_device_runtime_started(
        monkeypatch, initialized, emptied):
    backend = load_backend("cuda")
    module = FakeDeviceModule(initialized)
    monkeypatch.setattr(type(backend), "torch_module", lambda self: module)
    backend.release_cached_memory()
    assert module.emptied == emptied  # starting the runtime only to empty its cache would cost seconds


def test_a_contestant_gives_the_last_case_s_memory_back_before_it_builds_the_next(monkeypatch):
    from ladder.runner.contestant import Contestant

    released = []

    class Backend:
        def release_cached_memory(self):
            released.append(contestant.model)

    contestant = Contestant("solution", sandboxed=False, backend=Backend())
    contestant.model, contestant.problem, contestant.case = object(), None, {"n": 1}
    with pytest.raises(AttributeError):  # no problem loaded: building goes no further than the release
        contestant.build({"case": 0, "init_seed": 1})
    assert released == [None]  # the last case's model went first


def test_a_contestant_s_first_case_has_nothing_to_give_back():
    from ladder.runner.contestant import Contestant

    released = []

    class Backend:
        def release_cached_memory(self):
            released.append(True)

    contestant = Contestant("solution", sandboxed=False, backend=Backend())
    with pytest.raises(AttributeError):  # no problem loaded: building stops right after the release step
        contestant.build({"case": 0, "init_seed": 1})
    assert released == []
