// Fixture for ladder's tests: a stand-in for the Ascend backend's conversion of tt.load / tt.store
// into linalg and memref ops (TritonToLinalg). Written for the tests, not taken from the compiler.
#include "TritonToLinalg/LoadStoreConverter.h"

namespace mlir::triton {

// A masked load with an `other` value (zero when none is given) becomes a fill of the whole
// on-chip buffer with `other`, emitted under scf.if when the mask may be partial, followed by
// the memref.copy of the valid part. The vector unit performs the fill and MTE2 the copy, so the
// copy waits for the fill: care_padding=False on the load asks for no fill.
static void fillTensorWithOtherForMaskScenario(OpBuilder &builder, Location loc, Value other, Value buffer,
                                               Value partialMask) {
  auto branch = builder.create<scf::IfOp>(loc, partialMask, /*withElseRegion=*/false);
  builder.setInsertionPointToStart(branch.thenBlock());
  builder.create<linalg::FillOp>(loc, other, buffer);
}

LogicalResult LoadConverter::matchAndRewrite(triton::LoadOp op, OpAdaptor adaptor,
                                             ConversionPatternRewriter &rewriter) const {
  Value buffer = allocateLocalBuffer(rewriter, op);
  if (op.getMask() && !op.getCarePadding().has_value())
    fillTensorWithOtherForMaskScenario(rewriter, op.getLoc(), otherOrZero(op), buffer, partialMask(op));
  copyValidPart(rewriter, op, buffer);
  return success();
}

}  // namespace mlir::triton
