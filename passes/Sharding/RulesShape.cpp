//===- RulesShape.cpp - sharding rules of shape dtg ops -------------------===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc::sharding;
using namespace mlir::dtg;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static int64_t axisOf(Operation *op) {
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  return axis ? axis.getInt() : -1;
}

/// Reshape: dimensions group into runs of equal products. A run of one
/// operand and one result dimension is one parallel factor. In a run that
/// merges or splits dimensions, the leading (most major) operand and
/// result dimensions share a parallel factor (a split of the major
/// dimension keeps each rank's elements contiguous, so it stays a split of
/// the leading dimension: [B, S, H] -> [B*S, H] keeps B's split); the
/// others are blocked.
static FailureOr<ShardingRule> reshapeRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0)),
                    out = shapeOf(op->getResult(0));
  SmallVector<int64_t> operand(in.size(), -1), result(out.size(), -1);
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    // Dimensions of size 1 are no factor.
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (o < out.size() && out[o] == 1) {
      ++o;
      continue;
    }
    if (i == in.size() || o == out.size())
      return op->emitError("reshape of ")
             << op->getOperand(0).getType() << " to "
             << op->getResult(0).getType() << " has no consistent grouping";
    size_t i0 = i, o0 = o;
    int64_t pi = in[i++], po = out[o++];
    while (pi != po) {
      if (pi < po && i < in.size())
        pi *= in[i++];
      else if (po < pi && o < out.size())
        po *= out[o++];
      else
        return op->emitError("reshape of ")
               << op->getOperand(0).getType() << " to "
               << op->getResult(0).getType() << " has no consistent grouping";
    }
    int64_t lead =
        rule.addFactor(std::min(in[i0], out[o0]), FactorKind::Parallel);
    operand[i0] = lead;
    result[o0] = lead;
    for (size_t k = i0 + 1; k < i; ++k)
      operand[k] = rule.addFactor(in[k], FactorKind::Blocked);
    for (size_t k = o0 + 1; k < o; ++k)
      result[k] = rule.addFactor(out[k], FactorKind::Blocked);
  }
  rule.operands.push_back(operand);
  rule.results.push_back(result);
  return rule;
}

/// Result dimension i is operand dimension perm[i].
static FailureOr<ShardingRule> transposeRule(Operation *op) {
  auto perm = op->getAttrOfType<DenseI64ArrayAttr>("perm");
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  if (!perm || perm.size() != int64_t(in.size()))
    return op->emitError("transpose without a permutation of its rank");
  ShardingRule rule;
  SmallVector<int64_t> operand, result;
  for (int64_t size : in)
    operand.push_back(rule.addFactor(size, FactorKind::Parallel));
  for (int64_t p : perm.asArrayRef()) {
    if (p < 0 || p >= int64_t(in.size()))
      return op->emitError("transpose permutation out of range");
    result.push_back(operand[p]);
  }
  rule.operands.push_back(operand);
  rule.results.push_back(result);
  return rule;
}

/// Ops whose every operand has the result's rank and which keep every
/// dimension but those in `blocked` (a concat's axis, a slice's cut
/// dimensions, a tile's repeated ones).
static ShardingRule sameRankRule(Operation *op, ArrayRef<int64_t> blocked) {
  ShardingRule rule;
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  SmallVector<int64_t> factors;
  for (auto [d, size] : llvm::enumerate(out))
    factors.push_back(rule.addFactor(
        size, llvm::is_contained(blocked, int64_t(d)) ? FactorKind::Blocked
                                                      : FactorKind::Parallel));
  for (Value v : op->getOperands()) {
    ArrayRef<int64_t> shape = shapeOf(v);
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      dims.push_back(d < int64_t(out.size()) && !llvm::is_contained(blocked, d)
                         ? factors[d]
                         : rule.addFactor(shape[d], FactorKind::Blocked));
    rule.operands.push_back(dims);
  }
  rule.results.push_back(factors);
  return rule;
}

/// The dimensions where `a` and `b` (operand and result shapes, or pads)
/// differ, or where an attribute array is nonzero.
static SmallVector<int64_t> changedDims(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> b) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < int64_t(std::min(a.size(), b.size())); ++d)
    if (a[d] != b[d])
      dims.push_back(d);
  return dims;
}

/// gather(data, indices, axis): result = data[:axis] + indices + data[axis+1:].
/// The gathered axis is blocked (a split vocabulary needs its own
/// partitioning); the rest is parallel, indices' dimensions included.
/// gather_grad is its adjoint: the same factors, operand and result swapped,
/// the indices' dimensions reductions.
static FailureOr<ShardingRule> gatherRule(Operation *op, bool adjoint) {
  int64_t axis = axisOf(op);
  Value data = adjoint ? op->getResult(0) : op->getOperand(0);
  Value gathered = adjoint ? op->getOperand(0) : op->getResult(0);
  ArrayRef<int64_t> dataShape = shapeOf(data),
                    indices = shapeOf(op->getOperand(1));
  if (axis < 0 || axis >= int64_t(dataShape.size()))
    return op->emitError("gather axis out of range");
  ShardingRule rule;
  SmallVector<int64_t> dataDims, indexDims, gatheredDims;
  // The gathered axis may be split (a vocabulary-parallel embedding):
  // dtc-partition has each rank take the indices in its block, so a
  // gather's results are partial sums over it, and a gather_grad fills
  // its block (SplitLowering.h).
  for (int64_t d = 0; d < int64_t(dataShape.size()); ++d)
    dataDims.push_back(rule.addFactor(
        dataShape[d],
        d == axis && !adjoint ? FactorKind::Reduction : FactorKind::Parallel));
  // (In the adjoint the index positions are summed into the table: a split
  // of them leaves partial sums.)
  for (int64_t size : indices)
    indexDims.push_back(rule.addFactor(size, adjoint ? FactorKind::Reduction
                                                     : FactorKind::Parallel));
  for (int64_t d = 0; d < axis; ++d)
    gatheredDims.push_back(dataDims[d]);
  llvm::append_range(gatheredDims, indexDims);
  for (int64_t d = axis + 1; d < int64_t(dataShape.size()); ++d)
    gatheredDims.push_back(dataDims[d]);
  if (gatheredDims.size() != shapeOf(gathered).size())
    return op->emitError("gather shapes do not match its axis");
  if (adjoint) {
    rule.operands = {gatheredDims, indexDims};
    rule.results = {dataDims};
  } else {
    rule.operands = {dataDims, indexDims};
    rule.results = {gatheredDims};
  }
  return rule;
}

void mlir::dtc::sharding::registerShapeShardingRules(
    ShardingRuleRegistry &registry) {
  // A constant can be split any way: each rank materializes its block.
  registry.add<ConstantOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  });
  registry.add<ReshapeOp>(reshapeRule);
  registry.add<TransposeOp>(transposeRule);
  registry.add<ConcatOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(op, {axisOf(op)});
  });
  registry.add<SliceOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(
        op, changedDims(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0))));
  });
  registry.add<SliceGradOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(
        op, changedDims(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0))));
  });
  registry.add<PadOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(
        op, changedDims(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0))));
  });
  registry.add<PadGradOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(
        op, changedDims(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0))));
  });
  registry.add<TileOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(
        op, changedDims(shapeOf(op->getOperand(0)), shapeOf(op->getResult(0))));
  });
  // Broadcasting: the operand's dimensions of the result's size follow it.
  registry.add<BroadcastOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  });
  // Triangular masks: the matrix dimensions (the last two) stay whole.
  registry.add<TriluOp>([](Operation *op) -> FailureOr<ShardingRule> {
    int64_t rank = int64_t(shapeOf(op->getResult(0)).size());
    return rules::elementwise(op, {rank - 2, rank - 1});
  });
  // Elements taken or placed along an axis: that axis stays whole.
  registry.add<GatherElementsOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(op, {axisOf(op)});
  });
  registry.add<ScatterElementsOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return sameRankRule(op, {axisOf(op)});
  });
  registry.add<GatherOp>(
      [](Operation *op) { return gatherRule(op, /*adjoint=*/false); });
  registry.add<GatherGradOp>(
      [](Operation *op) { return gatherRule(op, /*adjoint=*/true); });
}
