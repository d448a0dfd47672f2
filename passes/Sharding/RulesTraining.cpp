//===- RulesTraining.cpp - sharding rules of optimizer and fusion ops -----===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"

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
}
