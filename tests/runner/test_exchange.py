"""Outputs between a contestant and the judge: what is written is what is read, a file the judge has
not read yet is never written over, and a malformed file is an error, never a result."""
import os

import pytest
import torch
from ladder.runner.exchange import OutputsFile, load_outputs, save_outputs

OUTPUTS = [torch.arange(12, dtype=torch.float32).reshape(3, 4), torch.tensor(True), torch.empty(0, 5),
           torch.randn(2, 3, dtype=torch.complex64), 7, "text", torch.arange(6, dtype=torch.int16)[::2]]


def same(read, written):
    assert len(read) == len(written)
    for got, want in zip(read, written):
        if isinstance(want, torch.Tensor):
            assert got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)
        else:
            assert got == want


@pytest.mark.parametrize("writer", ["once", "kept"])
def test_outputs_round_trip(tmp_path, writer):
    path = str(tmp_path / "out.pt")
    if writer == "once":
        save_outputs(OUTPUTS, path)
    else:
        OutputsFile(tmp_path / ".outputs").save(OUTPUTS, path)
    same(load_outputs(path, "cpu"), OUTPUTS)


def test_a_kept_file_is_reused_once_read_and_what_was_read_stays_the_judges(tmp_path):
    kept = OutputsFile(tmp_path / ".outputs")
    first = str(tmp_path / "a.pt")
    kept.save([torch.ones(1000)], first)
    read = load_outputs(first, "cpu")
    os.unlink(first)
    memory = kept.memory
    kept.save([torch.zeros(1000)], str(tmp_path / "b.pt"))
    assert kept.memory is memory  # same size, already read: the same warm mapping
    assert torch.equal(read[0], torch.ones(1000))  # a copy, not a view of the file written over
    assert torch.equal(load_outputs(tmp_path / "b.pt", "cpu")[0], torch.zeros(1000))


def test_a_file_not_read_yet_is_never_written_over(tmp_path):
    kept = OutputsFile(tmp_path / ".outputs")
    kept.save([torch.ones(10)], str(tmp_path / "a.pt"))
    kept.save([torch.full((10,), 2.0)], str(tmp_path / "b.pt"))
    assert torch.equal(load_outputs(tmp_path / "a.pt", "cpu")[0], torch.ones(10))
    assert torch.equal(load_outputs(tmp_path / "b.pt", "cpu")[0], torch.full((10,), 2.0))


def test_a_size_change_remaps(tmp_path):
    kept = OutputsFile(tmp_path / ".outputs")
    for index, count in enumerate((10, 1000, 3)):
        path = str(tmp_path / f"{index}.pt")
        kept.save([torch.arange(count)], path)
        assert torch.equal(load_outputs(path, "cpu")[0], torch.arange(count))
        os.unlink(path)


@pytest.mark.parametrize("damage", ["short", "long", "header", "tiny"])
def test_a_malformed_file_is_an_error(tmp_path, damage):
    path = tmp_path / "out.pt"
    save_outputs([torch.ones(100)], str(path))
    data = path.read_bytes()
    damaged = {"short": data[:-8], "long": data + b"\0" * 8, "header": data[:8] + b"{" + data[9:],
               "tiny": data[:4]}[damage]
    path.write_bytes(damaged)
    with pytest.raises(ValueError):
        load_outputs(path, "cpu")


def test_a_device_tensor_is_read_a_piece_at_a_time(tmp_path, monkeypatch):
    from ladder.runner import exchange

    monkeypatch.setattr(exchange, "STAGING_BYTES", 7)
    monkeypatch.setattr(exchange, "_staging", {})
    data = torch.arange(25, dtype=torch.uint8)
    path = tmp_path / "bytes"
    path.write_bytes(data.numpy().tobytes())
    result = torch.empty(25, dtype=torch.uint8)
    with open(path, "rb") as handle:
        exchange.read_staged(handle, result)
    assert torch.equal(result, data) and exchange._staging["buffer"].numel() == 7


def test_a_file_truncated_while_read_is_an_error_not_a_crash(tmp_path):
    path = tmp_path / "out.pt"
    save_outputs([torch.ones(1000)], str(path))
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size - 100)
    with pytest.raises(ValueError):
        load_outputs(path, "cpu")


def test_a_kept_file_removed_underneath_is_made_again(tmp_path):
    kept = OutputsFile(tmp_path / ".outputs")
    kept.save([torch.ones(10)], str(tmp_path / "a.pt"))
    os.unlink(tmp_path / "a.pt")
    os.unlink(tmp_path / ".outputs")
    kept.save([torch.zeros(10)], str(tmp_path / "b.pt"))
    assert torch.equal(load_outputs(tmp_path / "b.pt", "cpu")[0], torch.zeros(10))
