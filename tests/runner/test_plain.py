"""Kernel arguments Triton may read without running code of the candidate's, and those it may not."""
from __future__ import annotations

import functools

import pytest
import torch
import triton.language as tl

from ladder.runner.plain import foreign_argument, tensors_in


class Pack(tuple):
    __iter__ = functools.partial(iter, ())


class Size(int):
    def __index__(self):
        return 7


class Job:
    @property
    def base(self):
        return torch.zeros(1)


@pytest.mark.parametrize("value", [3, 2.5, True, None, "relu", torch.float16, torch.zeros(2), tl.float32,
                                   (1, 2, (torch.zeros(1), None)), [4, 5]])
def test_plain_arguments_pass(value):
    assert foreign_argument(value) is None


@pytest.mark.parametrize("value,named", [(Pack((1,)), "Pack"), (Size(3), "Size"), (Job(), "Job"),
                                         ((1, Job()), "Job"), (functools.partial(print), "partial")])
def test_objects_that_run_their_own_code_when_read_are_named(value, named):
    assert foreign_argument(value).endswith(named)


def test_the_tracer_reads_no_candidate_object_for_tensors():
    """A tuple subclass is not iterated and a foreign `.base` property is not read."""
    assert list(tensors_in(Pack((torch.zeros(1),)))) == [] and list(tensors_in(Job())) == []
    tensor = torch.zeros(3)
    assert list(tensors_in((tensor, [tensor]))) == [tensor, tensor]
