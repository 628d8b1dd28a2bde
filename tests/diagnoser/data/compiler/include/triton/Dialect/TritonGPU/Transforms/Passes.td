#ifndef TRITONGPU_PASSES
#define TRITONGPU_PASSES

include "mlir/Pass/PassBase.td"

def TritonGPUCoalesce: Pass<"tritongpu-coalesce", "mlir::ModuleOp"> {
  let summary = "coalesce global memory accesses";
  let description = [{
    Reorders the threads of every load and store so that consecutive threads touch consecutive
    addresses, and gives each thread as many contiguous elements as the pointer's contiguity and
    divisibility (from AxisInfo) allow, up to 128 bits: that is the vector width of the access.
  }];
  let dependentDialects = ["mlir::triton::gpu::TritonGPUDialect"];
}

def TritonGPURemoveLayoutConversions : Pass<"tritongpu-remove-layout-conversions", "mlir::ModuleOp"> {
  let summary = "remove superfluous layout conversions";
  let description = [{
    Propagates layouts forward and backward and rematerializes cheap producers so that
    convert_layout ops disappear, or are hoisted out of loops when they cannot.
  }];
}

def TritonGPUAccelerateMatmul : Pass<"tritongpu-accelerate-matmul", "mlir::ModuleOp"> {
  let summary = "accelerate matmul";
  let description = [{
    Rewrites tt.dot to use tensor cores: MMA v3 (wgmma) on Hopper when the tile and warp layout
    allow it, MMA v2 (mma.sync) otherwise, and FMA when no MMA version supports the operands.
  }];
}

def TritonGPUPipeline : Pass<"tritongpu-pipeline", "mlir::ModuleOp"> {
  let summary = "pipeline loops";
  let description = [{
    Software-pipelines scf.for loops that feed tt.dot: loads become async copies issued
    num_stages - 1 iterations ahead.
  }];
  let options = [Option<"numStages", "num-stages", "int32_t", "3", "number of pipeline stages">];
}

#endif
