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
