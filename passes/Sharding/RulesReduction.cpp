//===- RulesReduction.cpp - sharding rules of reductions and losses -------===//
//
// A reduced axis is a reduction factor where the op is a sum (sum, mean:
// a split axis leaves partial sums) and blocked otherwise (max, min,
// product, log-sum-exp, arg-max, a cumulative sum's axis).
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc::sharding;
using namespace mlir::dtg;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Reductions over `axes` of operand 0 into result 0 (kept as size 1 or
/// dropped); a reduced axis is `reducedKind`.
static ShardingRule reduceRule(Operation *op, ArrayRef<int64_t> axes,
                               FactorKind reducedKind) {
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  bool keep = in.size() == out.size();
  SmallVector<int64_t> operand, result;
  for (int64_t d = 0; d < int64_t(in.size()); ++d) {
    if (llvm::is_contained(axes, d)) {
      operand.push_back(rule.addFactor(in[d], reducedKind));
      if (keep)
        result.push_back(-1);
      continue;
    }
    int64_t f = rule.addFactor(in[d], FactorKind::Parallel);
    operand.push_back(f);
    result.push_back(f);
  }
  rule.operands.push_back(operand);
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    rule.operands.push_back(
        SmallVector<int64_t>(shapeOf(op->getOperand(i)).size(), -1));
  rule.results.push_back(result);
  return rule;
}

template <typename OpTy>
static void addReduce(ShardingRuleRegistry &r, FactorKind kind) {
  r.add<OpTy>([kind](Operation *op) -> FailureOr<ShardingRule> {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!axes)
      return op->emitError("a reduction without axes");
    return reduceRule(op, axes.asArrayRef(), kind);
  });
}

template <typename OpTy> static void addArgReduce(ShardingRuleRegistry &r) {
  r.add<OpTy>([](Operation *op) -> FailureOr<ShardingRule> {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (!axis)
      return op->emitError("an arg-reduction without an axis");
    return reduceRule(op, {axis.getInt()}, FactorKind::Blocked);
  });
}

void mlir::dtc::sharding::registerReductionShardingRules(
    ShardingRuleRegistry &registry) {
  addReduce<ReduceSumOp>(registry, FactorKind::Reduction);
  addReduce<ReduceMeanOp>(registry, FactorKind::Reduction);
  addReduce<ReduceMaxOp>(registry, FactorKind::Blocked);
  addReduce<ReduceMinOp>(registry, FactorKind::Blocked);
  addReduce<ReduceProdOp>(registry, FactorKind::Blocked);
  addReduce<ReduceLogSumExpOp>(registry, FactorKind::Blocked);
  addArgReduce<ArgMaxOp>(registry);
  addArgReduce<ArgMinOp>(registry);
  registry.add<CumSumOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(
        op, {op->getAttrOfType<IntegerAttr>("axis").getInt()});
  });
  // nll_loss(log-probabilities [N, C, d...], targets [N, d...], weights [C]):
  // the samples (and extra dimensions) are parallel for reduction 'none'
  // and a reduction otherwise (the loss is their sum, or their sum over
  // the weights'); the classes are a reduction where they may split.
  registry.add<NllLossOp>([](Operation *op) -> FailureOr<ShardingRule> {
    auto nll = cast<NllLossOp>(op);
    ShardingRule rule;
    ArrayRef<int64_t> in = shapeOf(nll.getInput());
    bool none = nll.getReduction() == "none";
    FactorKind sampleKind =
        none ? FactorKind::Parallel
             : (nll.getReduction() == "sum" ? FactorKind::Reduction
                                            : FactorKind::Blocked);
    // Split classes (vocabulary-parallel cross entropy): each rank picks
    // the targets in its block (SplitLowering.h), a partial sum; not for
    // a mean (its count would be each rank's) or class weights.
    FactorKind classKind = nll.getWeight() || nll.getReduction() == "mean"
                               ? FactorKind::Blocked
                               : FactorKind::Reduction;
    SmallVector<int64_t> input, target, result;
    for (int64_t d = 0; d < int64_t(in.size()); ++d) {
      if (d == 1) {
        input.push_back(rule.addFactor(in[d], classKind));
        continue;
      }
      int64_t f = rule.addFactor(in[d], sampleKind);
      input.push_back(f);
      target.push_back(f);
      if (none)
        result.push_back(f);
    }
    rule.operands = {input, target};
    if (nll.getWeight())
      rule.operands.push_back({input[1]});
    rule.results.push_back(result);
    return rule;
  });
}
