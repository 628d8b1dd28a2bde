#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

#define GEN_PASS_DEF_TRITONGPUACCELERATEMATMUL
#include "triton/Dialect/TritonGPU/Transforms/Passes.h.inc"

// MMA v3 (wgmma) needs a warp group: num_warps a multiple of 4 and an M tile of at least 64
// rows per warp group. Anything else on Hopper falls back to MMA v2 (mma.sync), and operands no
// MMA version supports fall back to FMA.
static int getMMAVersionSafe(int computeCapability, DotOp op, int numWarps) {
  auto shape = cast<RankedTensorType>(op.getType()).getShape();
  if (computeCapability == 90 && numWarps % 4 == 0 && shape[0] >= 64 && supportMMA(op, 3))
    return 3;
  if (supportMMA(op, 2))
    return 2;
  return 0;
}

struct AccelerateMatmulPass : public impl::TritonGPUAccelerateMatmulBase<AccelerateMatmulPass> {
  void runOnOperation() override {
    getOperation()->walk([&](DotOp dot) {
      int version = getMMAVersionSafe(getComputeCapability(), dot, lookupNumWarps(dot));
      if (version == 0)
        return;  // stays a blocked FMA dot
      rewriteToMMA(dot, version);
    });
  }
};

} // namespace mlir::triton::gpu
