//===- RulesElementwise.cpp - sharding rules of elementwise dtg ops -------===//
//
// Every dimension of the result is a parallel factor; operands broadcast
// against it (a dimension of size 1 is no factor).
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc::sharding;
using namespace mlir::dtg;

template <typename... Ops> static void addElementwise(ShardingRuleRegistry &r) {
  (r.add<Ops>([](Operation *op) -> FailureOr<ShardingRule> {
    return rules::elementwise(op);
  }),
   ...);
}

void mlir::dtc::sharding::registerElementwiseShardingRules(
    ShardingRuleRegistry &registry) {
  addElementwise<NegOp, AbsOp, SignOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
                 ReciprocalOp, FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp,
                 AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp,
                 AtanhOp, TanhOp, ErfOp, SigmoidOp, ReluOp, SoftplusOp,
                 SoftsignOp, NotOp, GeluOp, LeakyReluOp, EluOp, CeluOp, SeluOp,
                 HardSigmoidOp, ThresholdedReluOp, ClipOp, IsNanOp, IsInfOp>(
      registry);
  addElementwise<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, AndOp,
                 OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
                 GreaterEqualOp, WhereOp, CastOp>(registry);
}
