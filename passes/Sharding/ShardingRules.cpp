//===- ShardingRules.cpp - the registry and shared rule builders ----------===//

#include "passes/Sharding/ShardingRules.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::dtc::sharding;

const ShardingRuleFn *ShardingRuleRegistry::lookup(TypeID op) const {
  auto it = rules.find(op);
  return it == rules.end() ? nullptr : &it->second;
}

const ShardingRuleFn *ShardingRuleRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  return name ? lookup(name->getTypeID()) : nullptr;
}

const ShardingRuleRegistry &mlir::dtc::sharding::getShardingRuleRegistry() {
  static const ShardingRuleRegistry registry = [] {
    ShardingRuleRegistry r;
    registerElementwiseShardingRules(r);
    registerShapeShardingRules(r);
    registerNNShardingRules(r);
    registerReductionShardingRules(r);
    registerTrainingShardingRules(r);
    return r;
  }();
  return registry;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return {};
}

/// Maps `shape` right-aligned onto `factorOfDim` (the factors of a shape of
/// `rank` dimensions with sizes `sizes`): equal sizes share the factor.
static SmallVector<int64_t> broadcastOnto(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> sizes,
                                          ArrayRef<int64_t> factorOfDim) {
  SmallVector<int64_t> dims(shape.size(), -1);
  int64_t shift = int64_t(sizes.size()) - int64_t(shape.size());
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    int64_t r = d + shift;
    if (r >= 0 && shape[d] == sizes[r])
      dims[d] = factorOfDim[r];
  }
  return dims;
}

ShardingRule
mlir::dtc::sharding::rules::elementwise(Operation *op,
                                        ArrayRef<int64_t> blocked) {
  ShardingRule rule;
  ArrayRef<int64_t> shape =
      op->getNumResults() ? shapeOf(op->getResult(0)) : ArrayRef<int64_t>();
  SmallVector<int64_t> factors;
  for (auto [d, size] : llvm::enumerate(shape))
    factors.push_back(rule.addFactor(
        size, llvm::is_contained(blocked, int64_t(d)) ? FactorKind::Blocked
                                                      : FactorKind::Parallel));
  for (Value v : op->getOperands())
    rule.operands.push_back(broadcastOnto(shapeOf(v), shape, factors));
  for (Value v : op->getResults())
    rule.results.push_back(broadcastOnto(shapeOf(v), shape, factors));
  return rule;
}

ShardingRule mlir::dtc::sharding::rules::blocked(Operation *op) {
  ShardingRule rule;
  auto own = [&](Value v) {
    SmallVector<int64_t> dims;
    for (int64_t size : shapeOf(v))
      dims.push_back(rule.addFactor(size, FactorKind::Blocked));
    return dims;
  };
  for (Value v : op->getOperands())
    rule.operands.push_back(own(v));
  for (Value v : op->getResults())
    rule.results.push_back(own(v));
  return rule;
}

bool mlir::dtc::sharding::passesPartialSums(
    Operation *op, ArrayRef<unsigned> partialOperands) {
  if (partialOperands.empty())
    return true;
  bool all = partialOperands.size() == op->getNumOperands();
  bool one = partialOperands.size() == 1;
  if (isa<dtg::AddOp, dtg::SubOp, dtg::ConcatOp>(op))
    return all;
  if (isa<dtg::NegOp, dtg::TransposeOp, dtg::ReshapeOp, dtg::CastOp,
          dtg::BroadcastOp, dtg::SliceOp, dtg::SliceGradOp, dtg::PadGradOp,
          dtg::ReduceSumOp, dtg::TileOp>(op))
    return true;
  if (isa<dtg::MulOp, dtg::MatMulOp, dtg::EinsumOp>(op))
    return one;
  if (isa<dtg::DivOp, dtg::GatherGradOp>(op))
    return one && partialOperands[0] == 0;
  return false;
}

FailureOr<dist::MeshOp> mlir::dtc::sharding::findMesh(ModuleOp module,
                                                      StringRef who) {
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  if (meshes.size() != 1)
    return module.emitError(who)
           << " needs exactly one dist.mesh, the module has " << meshes.size();
  return meshes.front();
}

SmallVector<func::FuncOp> mlir::dtc::sharding::calleesFirst(ModuleOp module) {
  SmallVector<func::FuncOp> order;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.walk([](func::CallOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      order.push_back(func);
    else
      order.insert(order.begin(), func);
  return order;
}
