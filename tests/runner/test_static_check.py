"""Static rules: each fires on the trick it names, at the right line, and not on a clean kernel."""
from pathlib import Path
import textwrap

import pytest

from ladder.runner.static_check import ERROR, RULES, check_source, describe_rules

FIXTURES = Path(__file__).parent / "fixtures"

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.exp(tl.load(x_ptr + offsets, mask=mask)), mask=mask)


"""


def rules_hit(body: str) -> dict[str, int]:
    """rule -> line (relative to the body) of the violations of a solution made of HEADER + body."""
    offset = HEADER.count("\n")
    found = {}
    for violation in check_source(HEADER + textwrap.dedent(body)):
        found.setdefault(violation.rule, violation.line - offset)
    return found


CLEAN_FORWARD = """\
class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        flat = x.contiguous().view(-1)
        n = flat.numel()
        kernel[(triton.cdiv(n, 256),)](flat, out, n, BLOCK=256)
        return out.reshape(x.shape)
"""


def test_clean_solution_has_no_violation():
    assert rules_hit(CLEAN_FORWARD) == {}


def test_fixture_solutions_that_should_pass_are_clean():
    for path in (FIXTURES / "add" / "solution.py", FIXTURES / "matmul" / "solution.py"):
        assert [v for v in check_source(path.read_text()) if v.severity == ERROR] == []


@pytest.mark.parametrize("call", ["torch.matmul(x, x)", "F.relu(x)", "torch.ops.aten.mm(x, x)",
                                  "x.sum()", "torch.nn.functional.softmax(x, -1)"])
def test_torch_compute_in_forward_is_flagged(call):
    hits = rules_hit(f"""\
        class ModelNew(nn.Module):
            def forward(self, x):
                return {call}
        """)
    assert hits == {"torch-compute": 3}


def test_at_operator_is_flagged():
    assert "torch-compute" in rules_hit("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                return x @ x
        """)


def test_compute_in_a_helper_called_from_forward_is_flagged():
    hits = rules_hit("""\
        def helper(x):
            return torch.softmax(x, dim=-1)


        class ModelNew(nn.Module):
            def forward(self, x):
                return helper(x)
        """)
    assert hits.get("torch-compute") == 2


def test_torch_in_init_is_allowed():
    hits = rules_hit("""\
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(4, 4).t().contiguous())

            def forward(self, x):
                out = torch.empty_like(x)
                kernel[(1,)](x, out, x.numel(), BLOCK=256)
                return out
        """)
    assert hits == {}


def test_calling_an_nn_module_in_forward_is_flagged():
    hits = rules_hit("""\
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(4, 4)

            def forward(self, x):
                return self.linear(x)
        """)
    assert hits == {"nn-module-call": 7}


def test_try_except_fallback_is_flagged():
    hits = rules_hit("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                try:
                    kernel[(1,)](x, out, x.numel(), BLOCK=256)
                except Exception:
                    out = torch.exp(x)
                return out
        """)
    assert hits["try-except"] == 4


@pytest.mark.parametrize("line", ["s = torch.cuda.Stream()", "torch.cuda.current_stream().wait_stream(s)",
                                  "ctx = torch.cuda.stream(s)"])
def test_streams_are_flagged(line):
    assert "side-stream" in rules_hit(f"""\
        class ModelNew(nn.Module):
            def forward(self, x, s=None):
                {line}
                return x
        """)


def test_cuda_graphs_are_flagged():
    assert "cuda-graph" in rules_hit("g = torch.cuda.CUDAGraph()\n")


@pytest.mark.parametrize("module", ["threading", "concurrent.futures", "multiprocessing", "asyncio"])
def test_concurrency_imports_are_flagged(module):
    assert "concurrency" in rules_hit(f"import {module}\n")


def test_cache_keyed_on_data_pointers_is_flagged_through_a_local_name():
    hits = rules_hit("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                key = x.data_ptr()
                if key in self.cache:
                    return self.cache[key]
                return x
        """)
    assert hits["caching"] == 4


def test_alignment_check_on_data_ptr_is_not_caching():
    hits = rules_hit("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                aligned = x.data_ptr() % 16 == 0
                out = torch.empty_like(x)
                kernel[(1,)](x, out, x.numel(), BLOCK=256 if aligned else 128)
                return out
        """)
    assert hits == {}


def test_memoised_forward_helpers_are_flagged():
    hits = rules_hit("""\
        import functools


        @functools.lru_cache
        def cached(shape):
            return shape


        class ModelNew(nn.Module):
            def forward(self, x):
                return cached(x.shape)
        """)
    assert hits["caching"] == 4


def test_host_reads_in_forward_are_flagged():
    assert "host-read" in rules_hit("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                if x[0].item() > 0:
                    return x
                return x
        """)


@pytest.mark.parametrize("line", ["torch.cuda.synchronize = lambda: None",
                                  "torch.cuda.Event.elapsed_time = lambda self, other: 0.001",
                                  "setattr(triton.testing, 'do_bench', None)",
                                  "torch.Tensor.to, torch.Tensor.clone = len, len",  # inside a tuple target
                                  "[*torch.Tensor.contiguous] = [len]"])
def test_monkey_patching_is_flagged(line):
    assert "monkey-patch" in rules_hit(line + "\n")


@pytest.mark.parametrize("line", ["import gc", "import inspect", "frame = sys._getframe(1)",
                                  "value = eval('1')"])
def test_introspection_is_flagged(line):
    assert "introspection" in rules_hit("import sys\n" + line + "\n")


@pytest.mark.parametrize("line", [
    "_get = getattr",                                   # an alias hides what every later call reaches
    "hooks = list(map(getattr, [sys], ['modules']))",   # getattr passed as a value
    "name = '__clo' + 'sure__'\ncells = getattr(len, name)",  # a name built at run time, at import
    "table = getattr(sys, 'modules')",                  # a banned dotted name spelled through getattr
    "torch.__dict__['equal'] = lambda a, b: True",     # a module's namespace, written by subscript
    "import timeit",                                    # runs text it is given as code
    "from pkgutil import resolve_name",                 # reaches loaded objects by a dotted name
    "import operator",                                  # attrgetter: getattr by another name
    "from sys import modules\nfound = modules.get('x')",  # sys.modules by a from-import
    "cells = len.__getattribute__('__closure__')",      # getattr by a method, the name as text
    "import doctest",                                   # runs the text of a docstring
    "import pickle",                                    # a reducer runs any callable on load
    "from typing import get_type_hints\nhints = get_type_hints(object)",  # evaluates string annotations
    "__builtins__['getattr'] = len",                    # the builtins every module shares
    "sys.path.insert(0, '.hidden')",                    # imports from a folder these rules never read
])
def test_ways_around_the_introspection_rule_are_flagged_anywhere_in_the_file(line):
    """Not only in the hot path: code run at import or in __init__ reaches the runner's objects too."""
    assert rules_hit("import sys\n" + line + "\n").get("introspection") is not None


def test_a_finalizer_assigned_in_a_class_body_is_deferred_code():
    found = rules_hit("def _finish(self):\n    pass\n\n\nclass Job:\n    __del__ = _finish\n")
    assert found.get("deferred-code") == 6


@pytest.mark.parametrize("body", [
    "class Job:\n    __del__: object = print\n",                # an annotated assignment
    "class Job:\n    pass\n\n\nsetattr(Job, '__del__', print)\n",  # by name
    "import weakref\nref = weakref.KeyedRef(len, print, 0)\n",    # a weak reference's callback
    "import weakref\nref = weakref.WeakMethod(len, callback=print)\n",
])
def test_other_ways_to_a_finalizer_are_deferred_code(body):
    assert "deferred-code" in rules_hit(body)


def test_a_package_beside_the_solution_is_read_with_its_init(tmp_path):
    """``import pkg.mod`` runs ``pkg/__init__.py`` too: what it hides is checked like the rest."""
    from ladder.runner.static_check import check_solution

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from . import hidden\n")
    (tmp_path / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (tmp_path / "pkg" / "hidden.py").write_text("import gc\n")
    (tmp_path / "solution.py").write_text(HEADER + "import pkg.mod\n\n\n" + CLEAN_FORWARD)
    found = {(violation.rule, violation.message.split(":")[0])
             for violation in check_solution(tmp_path / "solution.py")}
    assert ("introspection", "hidden.py") in found


def test_tensor_subclasses_are_flagged():
    assert "lazy-tensor" in rules_hit("class Lazy(torch.Tensor):\n    pass\n")


@pytest.mark.parametrize("line", ["fast = torch.compile(lambda x: x)",
                                  "from torch.utils.cpp_extension import load_inline"])
def test_other_compilers_are_flagged(line):
    assert "other-compiler" in rules_hit(line + "\n")


def test_subclassing_the_reference_is_flagged():
    assert "calls-reference" in rules_hit("class Model(nn.Module):\n    pass\n\n\nclass ModelNew(Model):\n    pass\n")


def test_state_kept_on_self_in_forward_is_a_warning_not_an_error():
    violations = check_source(HEADER + textwrap.dedent("""\
        class ModelNew(nn.Module):
            def forward(self, x):
                self.last = x
                out = torch.empty_like(x)
                kernel[(1,)](x, out, x.numel(), BLOCK=256)
                return out
        """))
    assert [(v.rule, v.severity) for v in violations] == [("state-in-forward", "warning")]


def test_missing_triton_kernel_is_a_warning():
    violations = check_source("class ModelNew:\n    def forward(self, x):\n        return x\n")
    assert [(v.rule, v.severity) for v in violations] == [("no-triton-kernel", "warning")]


def test_kernel_bodies_are_not_the_hot_path():
    # tl.sum and friends inside @triton.jit are Triton, not torch.
    assert rules_hit(CLEAN_FORWARD) == {}


def test_every_rule_is_listed_with_its_severity():
    listing = describe_rules()
    for name, rule in RULES.items():
        assert name in listing and rule.severity in ("error", "warning")


def test_syntax_errors_propagate_for_the_loader_to_report():
    with pytest.raises(SyntaxError):
        check_source("def broken(:\n")


def test_binding_torch_function_on_a_class_is_flagged():
    found = rules_hit("class Proxy:\n    __torch_function__ = classmethod(lambda *a: None)\n")
    assert found.get("lazy-tensor") == 2


@pytest.mark.parametrize("cookie", ["# -*- coding: utf-7 -*-", "# vim: set fileencoding=raw_unicode_escape :",
                                    "# coding=latin-1"])
def test_a_source_encoding_other_than_utf8_is_rejected(cookie):
    # Under utf-7, "+AAo-" in a comment decodes to a newline: what follows it runs, unread by the rules.
    violations = check_source(f"{cookie}\n# +AAo-import os\n" + HEADER + textwrap.dedent(CLEAN_FORWARD))
    assert [(v.rule, v.line) for v in violations if v.rule == "source-encoding"] == [("source-encoding", 1)]


def test_a_utf8_declaration_is_read_as_written():
    text = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n" + HEADER + textwrap.dedent(CLEAN_FORWARD)
    assert not [v for v in check_source(text) if v.rule == "source-encoding"]
