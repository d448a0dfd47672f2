//===- ShardingRules.h - how each dtg op can be split across a mesh -------===//
//
// A sharding rule says, for one op, which dimensions of its operands and
// results move together when a tensor is split (in the manner of Shardy's
// OpShardingRule): the op iterates over *factors*, and each operand or
// result dimension is one factor (or none: a broadcast dimension of size 1,
// a key). Splitting a factor over mesh axes splits every dimension that is
// that factor alike.
//
// - A parallel factor appears in the results: a split operand dimension
//   gives the same split of the result's (a matmul's rows, an elementwise
//   op's every dimension).
// - A reduction factor appears in operands only, and the op is linear in
//   each operand along it: splitting it leaves every result a partial sum
//   over those axes (a matmul's contraction, reduce_sum's reduced axes).
// - A blocked factor must stay whole: the op needs all of it on every rank
//   (a softmax's axis, a max over axes, a slice that is not the whole
//   dimension, a convolution's spatial dimensions).
//
// Rules are registered per op, in families like the gradient rules
// (Rules*.cpp), and a test walks every registered dtg op and fails where
// one is missing (dtc-opt --dtc-test-sharding-rules).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_SHARDING_SHARDINGRULES_H
#define DTC_PASSES_SHARDING_SHARDINGRULES_H

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

namespace mlir::dtc::sharding {

enum class FactorKind { Parallel, Reduction, Blocked };

struct Factor {
  int64_t size;
  FactorKind kind;
};

struct ShardingRule {
  SmallVector<Factor> factors;
  /// For each operand, and each result: per dimension, its factor or -1.
  SmallVector<SmallVector<int64_t>> operands, results;

  int64_t addFactor(int64_t size, FactorKind kind) {
    factors.push_back({size, kind});
    return int64_t(factors.size()) - 1;
  }
};

/// Builds the rule of one op; fails with an error at the op where its
/// attributes make no sense (a bad axis).
using ShardingRuleFn = std::function<FailureOr<ShardingRule>(Operation *op)>;

class ShardingRuleRegistry {
public:
  template <typename OpTy> void add(ShardingRuleFn rule) {
    rules[TypeID::get<OpTy>()] = std::move(rule);
  }
  const ShardingRuleFn *lookup(TypeID op) const;
  const ShardingRuleFn *lookup(Operation *op) const;

private:
  llvm::DenseMap<TypeID, ShardingRuleFn> rules;
};

/// The registry holding every family's rules.
const ShardingRuleRegistry &getShardingRuleRegistry();

void registerElementwiseShardingRules(ShardingRuleRegistry &registry);
void registerShapeShardingRules(ShardingRuleRegistry &registry);
void registerNNShardingRules(ShardingRuleRegistry &registry);
void registerReductionShardingRules(ShardingRuleRegistry &registry);
void registerTrainingShardingRules(ShardingRuleRegistry &registry);

/// True if `op` is linear in its operands `partialOperands` taken together
/// (the others whole): partial sums over a mesh axis in those operands pass
/// through to its results (a sum of partial sums, a transpose, reshape or
/// slice of one, its product with a whole value). Any other op needs whole
/// operands.
bool passesPartialSums(Operation *op, ArrayRef<unsigned> partialOperands);

/// The module's one dist.mesh, or an error at the module naming `who`
/// (the pass that needs it).
FailureOr<dist::MeshOp> findMesh(ModuleOp module, StringRef who);

/// The module's functions, callees before their callers.
SmallVector<func::FuncOp> calleesFirst(ModuleOp module);

/// Rule builders the families share.
namespace rules {
/// One parallel factor per dimension of result 0; every operand and result
/// broadcast against it (NumPy, right-aligned): a dimension of the result's
/// size is that factor, others none. Dimensions in `blocked` (of result 0)
/// are blocked factors.
ShardingRule elementwise(Operation *op, ArrayRef<int64_t> blocked = {});
/// Every dimension of every operand and result its own blocked factor.
ShardingRule blocked(Operation *op);
} // namespace rules

} // namespace mlir::dtc::sharding

#endif // DTC_PASSES_SHARDING_SHARDINGRULES_H
