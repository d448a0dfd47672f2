//===- SplitLowering.h - ops that run on a block of an axis they read whole
//===//
//
// Some ops read along an axis as a whole: a gather takes rows anywhere in
// its table, a softmax normalizes over its axis, a loss picks one class.
// When tensor parallelism splits that axis (Megatron's vocabulary-parallel
// embedding and cross entropy), dtc-partition rewrites each such op into
// what one rank computes on its block, with the collectives that combine
// the blocks. The sharding rules mark those axes as factors a split may
// take (ShardingRules.h); these functions are the other half of the
// bargain.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_SHARDING_SPLITLOWERING_H
#define DTC_PASSES_SHARDING_SPLITLOWERING_H

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::dtc::sharding {

/// The mesh axes splitting an op's axis, and how many blocks they make.
struct SplitAxes {
  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
  int64_t blocks = 1;
};

/// This rank's first index along an axis cut into `split.blocks` blocks of
/// `blockSize`: a tensor<1x`indexType`> (it broadcasts against indices),
/// before `b`'s insertion point.
Value blockStart(OpBuilder &b, Location loc, Type indexType, int64_t blockSize,
                 const SplitAxes &split);

/// A gather from a table split along the gathered axis: each rank takes
/// the indices in its block (shifted to it) and zeros elsewhere; the
/// result is a partial sum over the split's axes. Returns the value that
/// replaces the gather's result for its users.
Value lowerSplitGather(dtg::GatherOp gather, const SplitAxes &split);

/// gather_grad into a table split along its axis: each rank adds the
/// slices whose index falls in its block.
void lowerSplitGatherGrad(dtg::GatherGradOp grad, const SplitAxes &split);

/// softmax or log_softmax over a split axis: the maximum and the sum of
/// exponentials are reduced over the split's axes (max, then sum). The op
/// is erased; returns the value that replaces its result.
Value lowerSplitSoftmax(Operation *softmax, const SplitAxes &split);

/// nll_loss (sum or none, no weight) over split classes: each rank picks
/// the targets in its block (the others ignored); the result is a partial
/// sum over the split's axes.
void lowerSplitNllLoss(dtg::NllLossOp loss, const SplitAxes &split);

} // namespace mlir::dtc::sharding

#endif // DTC_PASSES_SHARDING_SPLITLOWERING_H
