//===- RulesTraining.cpp - sharding rules of optimizer and fusion ops -----===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dtc::sharding;
using namespace mlir::dtg;

void mlir::dtc::sharding::registerTrainingShardingRules(
    ShardingRuleRegistry &registry) {
  // Updates are elementwise over the parameter, its gradient and state;
  // the hyperparameters are scalars (ZeRO splits the state this way).
  auto update = [](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  };
  registry.add<SgdUpdateOp>(update);
  registry.add<AdamWUpdateOp>(update);
  // Scalars only.
  registry.add<LrScheduleOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  });
  // Fused kernels are formed after partitioning, from per-rank ops: a
  // fusion met before it is kept whole.
  registry.add<FusionOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::blocked(op);
  });
  registry.add<YieldOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::blocked(op);
  });
  // A data-parallel all-reduce that the training step holds already
  // (synchronized batch-norm statistics): each tensor-parallel rank reduces
  // its block over dp alike.
  registry.add<dist::AllReduceOp>([](Operation *op) -> FailureOr<ShardingRule> {
    if (llvm::any_of(
            cast<dist::AllReduceOp>(op).getMeshAxes(),
            [](Attribute a) { return cast<StringAttr>(a).getValue() == "tp"; }))
      return rules::blocked(op);
    return rules::elementwise(op);
  });
  // A pipeline's transfers move whole tensors: every tensor-parallel rank
  // of a stage sends (and its peer receives) the same value.
  registry.add<dist::SendOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::blocked(op);
  });
  registry.add<dist::RecvOp>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::blocked(op);
  });
}
