// Fixture for ladder's tests: a distractor for Ascend questions, GPU code about masked loads and
// fills of registers. Written for the tests, not taken from the compiler.
#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

// A masked load whose mask is constant along the vector is widened; masked lanes take the fill
// value `other` in registers, with no separate fill of any buffer.
static unsigned getMaskedVectorWidth(Value mask, Value other, unsigned contiguity) {
  return maskConstancy(mask) >= contiguity ? contiguity : 1;
}

}  // namespace mlir::triton::gpu
