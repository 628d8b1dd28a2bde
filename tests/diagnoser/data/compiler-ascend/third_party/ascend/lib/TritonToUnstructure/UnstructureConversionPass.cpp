// Fixture for ladder's tests: a stand-in for TritonToUnstructure, which lowers loads and stores
// whose addresses are not affine (gathers through loaded indices, negative strides) into scalar
// loops. Written for the tests, not taken from the compiler.
#include "TritonToUnstructure/UnstructureConversionPass.h"

namespace mlir::triton {

// Each element of a discrete access is read on its own inside an scf.for marked
// ExtractedLoadOrStore: the structured-pointer analysis could not describe the addresses as one
// strided block, so no DMA of the whole tile is possible.
struct UnstructureConversionPass : public impl::TritonToUnstructureBase<UnstructureConversionPass> {
  void runOnOperation() override {
    getOperation()->walk([&](triton::LoadOp load) {
      if (!isStructured(load.getPtr()))
        extractToScalarLoop(load, "ExtractedLoadOrStore");
    });
  }
};

}  // namespace mlir::triton
