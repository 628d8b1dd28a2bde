#include "triton/Dialect/TritonGPU/Transforms/Passes.h"

namespace mlir::triton::gpu {

#define GEN_PASS_DEF_TRITONGPUPIPELINE
#include "triton/Dialect/TritonGPU/Transforms/Passes.h.inc"

// Loops whose num_stages is 1 or less are left alone: their loads stay synchronous and every
// iteration waits for global memory before the tt.dot can start.
static bool shouldPipeline(scf::ForOp forOp, int numStages) {
  return numStages > 1 && hasDotInLoop(forOp);
}

struct PipelinePass : public impl::TritonGPUPipelineBase<PipelinePass> {
  void runOnOperation() override {
    getOperation()->walk([&](scf::ForOp forOp) {
      if (shouldPipeline(forOp, getNumStagesOrDefault(forOp, numStages)))
        lowerLoadsToAsyncCopies(forOp);
    });
  }
};

} // namespace mlir::triton::gpu
