#include "triton/Analysis/AxisInfo.h"
#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

#define GEN_PASS_DEF_TRITONGPUCOALESCE
#include "triton/Dialect/TritonGPU/Transforms/Passes.h.inc"

// The number of elements each thread owns along the contiguous dimension is the smaller of the
// pointer's contiguity and the alignment its divisibility proves, capped at 128 bits. A pointer
// whose divisibility AxisInfo cannot prove to be 16 bytes gets one element per thread: a scalar
// access.
static unsigned getElementsPerThread(ModuleAxisInfoAnalysis &axisInfo, Value ptr, unsigned elemBits) {
  AxisInfo *info = axisInfo.getAxisInfo(ptr);
  unsigned contiguity = info->getContiguity(info->getOrder()[0]);
  unsigned alignment = info->getDivisibility(info->getOrder()[0]) * 8 / elemBits;
  return std::min({contiguity, alignment, 128 / elemBits});
}

struct CoalescePass : public impl::TritonGPUCoalesceBase<CoalescePass> {
  void setCoalescedEncoding(ModuleAxisInfoAnalysis &axisInfo, Operation *op, int numWarps) {
    Value ptr = getMemAccessPtr(op);
    unsigned perThread = getElementsPerThread(axisInfo, ptr, getElementBitWidth(ptr));
    layoutMap[op] = buildCoalescedEncoding(op, perThread, numWarps);
  }

  void runOnOperation() override {
    ModuleAxisInfoAnalysis axisInfo(getOperation());
    getOperation()->walk([&](Operation *op) {
      if (isa<LoadOp, StoreOp, AtomicRMWOp>(op))
        setCoalescedEncoding(axisInfo, op, lookupNumWarps(op));
    });
  }
};

} // namespace mlir::triton::gpu
