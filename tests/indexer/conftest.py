"""A small compiler-like tree (C++, TableGen, Python, Markdown, a catalog entry) to index in tests."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

TOY = "python:tests.indexer.toy_embedding:ToyEmbedding"

PASSES_TD = """\
#ifndef TOY_PASSES
#define TOY_PASSES

include "mlir/Pass/PassBase.td"

def ToyCoalesce : Pass<"toy-coalesce", "mlir::ModuleOp"> {
  let summary = "coalesce global memory accesses";

  let description = [{
    Picks a blocked layout for every load and store so that consecutive threads
    touch consecutive addresses.
  }];
}

def ToyConvertToLLVM : Pass</*cli-arg*/"toy-convert-to-llvm", "mlir::ModuleOp"> {
  let summary = "lower toy ops to the LLVM dialect";
  let constructor = "mlir::toy::createToyLLVMLoweringPass()";
}

#endif
"""

COALESCE_CPP = """\
// Copyright 2024 The Toy Authors. Licensed under the MIT license.

#include "Passes.h"

namespace mlir {
namespace toy {

#define GEN_PASS_DEF_TOYCOALESCE
#include "Passes.h.inc"

// Order the threads of a blocked layout along the most contiguous axis.
static int contiguousOrder(int rank) {
  return rank - 1;
}

struct CoalescePass : public impl::ToyCoalesceBase<CoalescePass> {
  void runOnOperation() override {
    int order = contiguousOrder(2);
    (void)order;
  }
};

} // namespace toy
} // namespace mlir
"""

LOWERING_CPP = """\
#include "Passes.h"

namespace mlir {
namespace toy {

struct ToyLLVMLowering {
  void runOnOperation() {
    populateVectorizedLoadStorePatterns();
  }
};

std::unique_ptr<Pass> createToyLLVMLoweringPass() {
  return std::make_unique<ToyLLVMLowering>();
}

} // namespace toy
} // namespace mlir
"""

LOADSTORE_CPP = """\
#include "Passes.h"

namespace mlir {
namespace toy {

// The vector width of a global load comes from the contiguity of its pointer
// and the alignment of its mask: unaligned pointers get scalar ld.global.b32.
unsigned getVectorWidth(unsigned contiguity, unsigned alignment) {
  return contiguity < alignment ? contiguity : alignment;
}

void populateVectorizedLoadStorePatterns() {
  unsigned width = getVectorWidth(4, 4);
  (void)width;
}

} // namespace toy
} // namespace mlir
"""

BINDINGS_CC = """\
void init_toy_passes(py::module &&m) {
  ADD_PASS_WRAPPER_0("add_coalesce", createToyCoalesce);
  ADD_PASS_WRAPPER_0("add_to_llvm", createToyLLVMLoweringPass);
}
"""

COMPILER_PY = '''\
"""The toy backend's compile pipeline."""
import functools


class ToyBackend:
    """Runs the passes of each stage in order."""

    def make_ttgir(self, mod):
        passes = ["add_coalesce", "add_to_llvm"]
        return mod, passes

    def make_cubin(self, src):
        # ptxas runs with -lineinfo so that SASS maps back to source lines.
        return src


@functools.lru_cache()
def num_stages_default():
    return 3
'''

GUIDE_MD = """\
# Ascend Tuning Guide

Kernels on the NPU run one program per AI core.

## Unified buffer

A block that does not fit the unified buffer fails with "ub overflow".
Split the block into sub-blocks and loop over them.

```python
# not a heading: a comment in a code block
for sub in range(0, BLOCK, SUB):
    pass
```

## Grid size

Launch as many programs as there are cores and loop inside the kernel.
"""

CATALOG_YAML = """\
id: nv.scalar-access
title: Global loads not vectorized
backend: nvidia
symptom: PTX shows ld.global.b32 where ld.global.v4.b32 was expected
fix: make pointers 16-byte aligned and divisible
compiler:
  - path: lib/Conversion/LoadStoreOpToLLVM.cpp
    symbol: getVectorWidth
confidence: high
"""

FILES = {
    "include/Passes.td": PASSES_TD,
    "lib/Transforms/Coalesce.cpp": COALESCE_CPP,
    "lib/Conversion/ToyToLLVM.cpp": LOWERING_CPP,
    "lib/Conversion/LoadStoreOpToLLVM.cpp": LOADSTORE_CPP,
    "python/src/passes.cc": BINDINGS_CC,
    "python/compiler.py": COMPILER_PY,
    "docs/ascend_guide.md": GUIDE_MD,
    "kb/patterns/nv.scalar-access.yaml": CATALOG_YAML,
}


def write_tree(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def toy_tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "toy")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"
