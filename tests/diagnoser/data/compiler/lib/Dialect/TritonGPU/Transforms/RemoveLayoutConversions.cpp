#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

#define GEN_PASS_DEF_TRITONGPUREMOVELAYOUTCONVERSIONS
#include "triton/Dialect/TritonGPU/Transforms/Passes.h.inc"

// A ConvertLayoutOp inside an scf.for whose operand is loop-invariant is moved before the loop.
// When the operand is carried by the loop, rematerializing its producers in the target layout
// is tried first; if that would duplicate a load or a reduction, the conversion stays in the loop
// and goes through shared memory on every iteration.
static void hoistConvertOutOfLoop(scf::ForOp forOp, ConvertLayoutOp convert) {
  if (forOp.isDefinedOutsideOfLoop(convert.getSrc())) {
    convert->moveBefore(forOp);
    return;
  }
  if (!canRematerialize(convert.getSrc().getDefiningOp()))
    return;
  rematerialize(forOp, convert);
}

struct RemoveLayoutConversionsPass
    : public impl::TritonGPURemoveLayoutConversionsBase<RemoveLayoutConversionsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](ConvertLayoutOp convert) {
      if (auto forOp = convert->getParentOfType<scf::ForOp>())
        hoistConvertOutOfLoop(forOp, convert);
    });
  }
};

} // namespace mlir::triton::gpu
