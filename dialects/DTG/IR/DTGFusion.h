//===- DTGFusion.h - which dtg ops a dtg.fusion may hold -------------*- C++
//-*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGFUSION_H
#define DTC_DIALECTS_DTG_IR_DTGFUSION_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::dtg {

/// True for the elementwise ops (unary, activations, binary with
/// broadcasting, comparisons, where, cast) a fused kernel evaluates element
/// by element.
bool isFusibleElementwise(Operation *op);
/// True for the ops a fused kernel reads as strided views of its inputs
/// (transpose, slice, reshape).
bool isFusibleView(Operation *op);
/// True for the reductions a `reduction` fusion holds (sum, mean, max, min
/// over axes).
bool isFusibleReduction(Operation *op);

/// Row-major strides (in elements) of `shape`.
SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> shape);

/// Describes the result of a view op (transpose, slice, reshape) as a
/// strided view of the memory its operand reads with `strides` from
/// `offset` (both in elements): sets `resultStrides` and `resultOffset`.
/// Fails for a reshape that no strides express (merging dimensions that are
/// not laid out one after the other).
LogicalResult applyView(Operation *view, ArrayRef<int64_t> strides,
                        int64_t offset, SmallVectorImpl<int64_t> &resultStrides,
                        int64_t &resultOffset);

} // namespace mlir::dtg

#endif // DTC_DIALECTS_DTG_IR_DTGFUSION_H
