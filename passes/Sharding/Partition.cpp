//===- Partition.cpp - per-rank programs from propagated shardings --------===//
//
// See Passes.td (PartitionPass) for what the pass does.
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Sharding/ShardingRules.h"
#include "passes/Sharding/SplitLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace mlir::dtc {
#define GEN_PASS_DEF_PARTITIONPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::sharding;

namespace {

/// A sharding as lists: per dimension the axes, and the partial axes.
struct Split {
  SmallVector<SmallVector<StringAttr>> dims;
  SmallVector<StringAttr> partial;

  static Split of(dist::ShardingAttr s) {
    Split split;
    for (dist::AxisListAttr list : s.getDims())
      split.dims.push_back(SmallVector<StringAttr>(list.getAxes()));
    split.partial.assign(s.getPartial().begin(), s.getPartial().end());
    return split;
  }
  static Split whole(int64_t rank) {
    Split split;
    split.dims.resize(rank);
    return split;
  }
};

struct PartitionPass : public dtc::impl::PartitionPassBase<PartitionPass> {
  void runOnOperation() override;

private:
  LogicalResult partition(func::FuncOp func);
  LogicalResult visit(Operation *op);
  LogicalResult visitCall(func::CallOp call);
  void keepWholeMask(dtg::DropoutOp dropout);
  void lowerSplitAxis(Operation *op, const ShardingRule &rule,
                      ArrayRef<SmallVector<StringAttr>> factors);
  Value reshard(Value v, const Split &to, Operation *before);
  RankedTensorType localType(RankedTensorType global, const Split &split);
  int64_t groupSize(ArrayRef<StringAttr> axes) const;
  ArrayAttr axesAttr(ArrayRef<StringAttr> axes);

  dist::MeshAttr mesh;
  FlatSymbolRefAttr meshRef;
  /// Every value's sharding as it now is (blocks after partitioning), and
  /// its global type.
  llvm::DenseMap<Value, Split> splits;
  llvm::DenseMap<Value, RankedTensorType> globals;
  llvm::DenseMap<Operation *, ShardingRule> rules;
  std::map<std::pair<void *, std::string>, Value> resharded;
};
} // namespace

int64_t PartitionPass::groupSize(ArrayRef<StringAttr> axes) const {
  int64_t n = 1;
  for (StringAttr a : axes)
    n *= mesh.getAxisSize(a.getValue()).value_or(1);
  return n;
}

ArrayAttr PartitionPass::axesAttr(ArrayRef<StringAttr> axes) {
  SmallVector<Attribute> names(axes.begin(), axes.end());
  return ArrayAttr::get(&getContext(), names);
}

RankedTensorType PartitionPass::localType(RankedTensorType global,
                                          const Split &split) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [d, axes] : llvm::enumerate(split.dims))
    if (d < shape.size())
      shape[d] /= groupSize(axes);
  return RankedTensorType::get(shape, global.getElementType());
}

/// `v` (now holding `splits[v]`) as `to`: partial sums `to` does not keep
/// are all-reduced, then each dimension split otherwise is all-gathered
/// over its axes and cut to `to`'s.
/// A key for a split: its axes per dimension and its partial axes.
static std::string keyOf(const Split &s) {
  std::string key;
  for (const auto &axes : s.dims) {
    key += "[";
    for (StringAttr a : axes)
      key += a.str() + ",";
    key += "]";
  }
  key += "p";
  for (StringAttr a : s.partial)
    key += a.str() + ",";
  return key;
}

Value PartitionPass::reshard(Value v, const Split &to, Operation *before) {
  auto global = globals.lookup(v);
  if (!global)
    return v;
  // One reshard of a value to a split serves every op after it that wants
  // it (inserted before the first).
  std::pair<void *, std::string> cacheKey{v.getAsOpaquePointer(), keyOf(to)};
  if (auto it = resharded.find(cacheKey); it != resharded.end())
    return it->second;
  auto known = splits.find(v);
  Split from =
      known != splits.end() ? known->second : Split::whole(global.getRank());
  OpBuilder b(before);
  Location loc = v.getLoc();
  SmallVector<StringAttr> reduce;
  for (StringAttr a : from.partial)
    if (!llvm::is_contained(to.partial, a))
      reduce.push_back(a);
  Value cur = v;
  Split now = from;
  // Partial sums that become a split of one whole dimension, all else
  // alike: one reduce-scatter (a row-parallel output under sequence
  // parallelism), not an all-reduce and a cut.
  if (!reduce.empty()) {
    std::optional<int64_t> scatter;
    bool othersAlike = true;
    for (int64_t d = 0; d < global.getRank(); ++d) {
      if (now.dims[d] == to.dims[d])
        continue;
      if (now.dims[d].empty() && to.dims[d] == reduce && !scatter)
        scatter = d;
      else
        othersAlike = false;
    }
    if (scatter && othersAlike) {
      now.partial = to.partial;
      now.dims[*scatter] = to.dims[*scatter];
      cur = b.create<dist::ReduceScatterOp>(
          loc, localType(global, now), cur,
          dist::ReduceKindAttr::get(&getContext(), dist::ReduceKind::Sum),
          b.getI64IntegerAttr(*scatter), meshRef, axesAttr(reduce));
      reduce.clear();
    }
  }
  if (!reduce.empty()) {
    cur = b.create<dist::AllReduceOp>(
        loc, cur.getType(), cur,
        dist::ReduceKindAttr::get(&getContext(), dist::ReduceKind::Sum),
        meshRef, axesAttr(reduce));
    now.partial = to.partial;
  }
  // Every split that changes is undone first (all-gathers), then the new
  // ones made (local blocks): an axis may move from one dimension to
  // another, and a rank's block along one must not be cut while the axis
  // still splits the other.
  for (int64_t d = 0; d < global.getRank(); ++d) {
    if (now.dims[d] == to.dims[d] || now.dims[d].empty())
      continue;
    SmallVector<StringAttr> axes = now.dims[d];
    now.dims[d].clear();
    cur = b.create<dist::AllGatherOp>(loc, localType(global, now), cur,
                                      b.getI64IntegerAttr(d), meshRef,
                                      axesAttr(axes));
  }
  for (int64_t d = 0; d < global.getRank(); ++d) {
    if (now.dims[d] == to.dims[d])
      continue;
    now.dims[d] = to.dims[d];
    cur = b.create<dist::LocalBlockOp>(loc, localType(global, now), cur,
                                       b.getI64IntegerAttr(d), meshRef,
                                       axesAttr(to.dims[d]));
  }
  if (cur != v) {
    globals[cur] = global;
    splits[cur] = now;
    resharded[cacheKey] = cur;
  }
  // Collectives of a backward value (a gradient's all-reduce) belong to the
  // backward pass, as the ops they serve do (recompute, pipeline sweeps and
  // plan.json's saved activations tell the passes apart by this mark). Not
  // a constant's block: constants stand at the top of the function, and
  // recompute takes the first marked op there for the start of the
  // backward.
  Operation *producer = v.getDefiningOp();
  if (producer && producer->hasAttr("dtg.backward") &&
      !isa<dtg::ConstantOp>(producer))
    for (Value w = cur; w != v; w = w.getDefiningOp()->getOperand(0))
      w.getDefiningOp()->setAttr("dtg.backward", b.getUnitAttr());
  return cur;
}

/// A dropout of a block draws the whole tensor's mask, cut: it becomes
/// the block of its global shape (block_of) that starts where the key,
/// after seed, step and offset, says; each rank's start along a split
/// dimension is its block of the starts of all blocks.
void PartitionPass::keepWholeMask(dtg::DropoutOp dropout) {
  Split split = splits.lookup(dropout.getResult());
  if (llvm::all_of(split.dims, [](auto &axes) { return axes.empty(); }))
    return;
  MLIRContext *ctx = &getContext();
  OpBuilder b(dropout);
  Location loc = dropout.getLoc();
  auto global = globals.lookup(dropout.getResult());
  auto local = cast<RankedTensorType>(dropout.getResult().getType());
  Type i64 = b.getI64Type();
  auto zero = [&]() -> Value {
    return b.create<dtg::ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({1}, i64),
                                    ArrayRef<int64_t>{0}));
  };
  SmallVector<Value> key{dropout.getKey()};
  if (cast<RankedTensorType>(dropout.getKey().getType()).getDimSize(0) == 2)
    key.push_back(zero());
  for (auto [d, axes] : llvm::enumerate(split.dims))
    key.push_back(axes.empty()
                      ? zero()
                      : blockStart(b, loc, i64, local.getDimSize(d),
                                   {meshRef, axesAttr(axes), groupSize(axes)}));
  dropout.getKeyMutable().assign(
      b.create<dtg::ConcatOp>(loc, ValueRange(key), int64_t(0)));
  dropout.setBlockOfAttr(DenseI64ArrayAttr::get(ctx, global.getShape()));
}

LogicalResult PartitionPass::visit(Operation *op) {
  if (auto c = dyn_cast<dist::ShardingConstraintOp>(op)) {
    Value r = reshard(c.getInput(), Split::of(c.getSharding()), op);
    c.getResult().replaceAllUsesWith(r);
    op->erase();
    return success();
  }
  if (isa<func::ReturnOp>(op))
    return success();
  if (auto call = dyn_cast<func::CallOp>(op))
    return visitCall(call);
  // (Rules were taken on the global program, before any op changed.)
  auto found = rules.find(op);
  if (found == rules.end())
    return op->emitError("no sharding rule for '") << op->getName() << "'";
  ShardingRule *rule = &found->second;
  SmallVector<SmallVector<StringAttr>> factors(rule->factors.size());
  if (auto attr = op->getAttrOfType<ArrayAttr>("dtc.factor_axes"))
    for (auto [f, a] : llvm::enumerate(attr.getAsRange<dist::AxisListAttr>()))
      if (f < factors.size() && rule->factors[f].kind != FactorKind::Blocked)
        factors[f].assign(a.getAxes().begin(), a.getAxes().end());
  // Operands as the op runs them.
  SmallVector<unsigned> partialOperands;
  for (OpOperand &use : op->getOpOperands())
    if (!splits.lookup(use.get()).partial.empty())
      partialOperands.push_back(use.getOperandNumber());
  // (Propagation may have stopped partial sums here: results it left
  // whole take whole operands.)
  bool resultsPartial = false;
  if (auto shardings = op->getAttrOfType<ArrayAttr>("dtc.shardings"))
    for (auto s : shardings.getAsRange<dist::ShardingAttr>())
      resultsPartial |= !s.getPartial().empty();
  bool keepPartial = resultsPartial && passesPartialSums(op, partialOperands);
  for (OpOperand &use : op->getOpOperands()) {
    auto global = globals.lookup(use.get());
    if (!global)
      continue;
    Split want = Split::whole(global.getRank());
    for (auto [d, f] : llvm::enumerate(rule->operands[use.getOperandNumber()]))
      if (f >= 0)
        want.dims[d] = factors[f];
    if (keepPartial)
      want.partial = splits.lookup(use.get()).partial;
    use.set(reshard(use.get(), want, op));
  }
  // Results: the blocks the op computes with those operands (its factors'
  // splits; partial sums as propagation found them). Where a user wants
  // another split, the constraint after it reshards.
  auto shardings = op->getAttrOfType<ArrayAttr>("dtc.shardings");
  unsigned k = 0;
  for (auto [index, r] : llvm::enumerate(op->getResults())) {
    auto global = dyn_cast<RankedTensorType>(r.getType());
    if (!global)
      continue;
    Split split = Split::whole(global.getRank());
    for (auto [d, f] : llvm::enumerate(rule->results[index]))
      if (f >= 0 && d < split.dims.size())
        split.dims[d] = factors[f];
    if (shardings && k < shardings.size())
      split.partial = Split::of(cast<dist::ShardingAttr>(shardings[k])).partial;
    ++k;
    globals[r] = global;
    splits[r] = split;
    r.setType(localType(global, split));
  }
  // Ops whose attributes hold global extents.
  if (auto constant = dyn_cast<dtg::ConstantOp>(op)) {
    Value r = constant.getResult();
    auto global = globals.lookup(r);
    if (r.getType() != global) {
      // Each rank's block of the whole constant.
      r.setType(global);
      Split split = splits[r];
      splits[r] = Split::whole(global.getRank());
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : r.getUses())
        uses.push_back(&use);
      Value block = reshard(r, split, op->getNextNode());
      for (OpOperand *use : uses)
        use->set(block);
    }
  }
  // A gemm whose contraction is split adds its bias on every rank: each
  // adds its share, so that the partial sums add up to one bias.
  if (auto gemm = dyn_cast<dtg::GemmOp>(op))
    if (gemm.getC() && !factors[2].empty())
      gemm.setBetaAttr(FloatAttr::get(gemm.getBetaAttr().getType(),
                                      gemm.getBeta().convertToDouble() /
                                          double(groupSize(factors[2]))));
  // A mean over a split axis: each rank's mean of its block, scaled by
  // its share, so that the partial sums add up to the whole mean.
  if (auto mean = dyn_cast<dtg::ReduceMeanOp>(op)) {
    int64_t share = 1;
    for (auto [f, factor] : llvm::enumerate(rule->factors))
      if (factor.kind == FactorKind::Reduction)
        share *= groupSize(factors[f]);
    if (share > 1) {
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      Value r = mean.getResult();
      auto type = cast<RankedTensorType>(r.getType());
      Value scale = b.create<dtg::ConstantOp>(
          op->getLoc(),
          DenseElementsAttr::get(
              RankedTensorType::get({}, type.getElementType()),
              b.getFloatAttr(type.getElementType(), 1.0 / double(share))));
      auto scaled = b.create<dtg::MulOp>(op->getLoc(), r, scale);
      r.replaceAllUsesExcept(scaled.getResult(), scaled);
      // (Copies first: inserting the new key may move the maps' entries.)
      RankedTensorType global = globals.lookup(r);
      Split split = splits.lookup(r);
      globals[scaled.getResult()] = global;
      splits[scaled.getResult()] = split;
    }
  }
  if (auto slice = dyn_cast<dtg::SliceOp>(op)) {
    SmallVector<int64_t> limits(slice.getLimits());
    auto local = cast<RankedTensorType>(slice.getResult().getType());
    auto global = globals.lookup(slice.getResult());
    for (int64_t d = 0; d < local.getRank(); ++d)
      if (local.getDimSize(d) != global.getDimSize(d))
        limits[d] = local.getDimSize(d);
    slice.setLimits(limits);
  }
  if (auto dropout = dyn_cast<dtg::DropoutOp>(op))
    keepWholeMask(dropout);
  lowerSplitAxis(op, *rule, factors);
  return success();
}

/// Ops that read an axis whole, run on a block of it (SplitLowering.h).
void PartitionPass::lowerSplitAxis(Operation *op, const ShardingRule &rule,
                                   ArrayRef<SmallVector<StringAttr>> factors) {
  auto splitOf = [&](int64_t f) -> std::optional<SplitAxes> {
    if (f < 0 || factors[f].empty())
      return std::nullopt;
    return SplitAxes{meshRef, axesAttr(factors[f]), groupSize(factors[f])};
  };
  // The value that takes the place of `old` (its global type and split).
  auto replaced = [&](Value old, Value now) {
    globals[now] = globals.lookup(old);
    splits[now] = splits.lookup(old);
  };
  if (auto gather = dyn_cast<dtg::GatherOp>(op)) {
    if (auto split = splitOf(rule.operands[0][gather.getAxis()]))
      replaced(gather.getResult(), lowerSplitGather(gather, *split));
  } else if (auto grad = dyn_cast<dtg::GatherGradOp>(op)) {
    if (auto split = splitOf(rule.results[0][grad.getAxis()]))
      lowerSplitGatherGrad(grad, *split);
  } else if (isa<dtg::SoftmaxOp, dtg::LogSoftmaxOp>(op)) {
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (auto split = splitOf(rule.operands[0][axis])) {
      Value old = op->getResult(0);
      RankedTensorType global = globals.lookup(old);
      Split blocks = splits.lookup(old);
      Value y = lowerSplitSoftmax(op, *split);
      globals[y] = global;
      splits[y] = blocks;
    }
  } else if (auto loss = dyn_cast<dtg::NllLossOp>(op)) {
    if (auto split = splitOf(rule.operands[0][1]))
      lowerSplitNllLoss(loss, *split);
  }
}

/// A call of a partitioned function: its operands as the callee's
/// arguments are split, its results as the callee's results are.
LogicalResult PartitionPass::visitCall(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitError("calls an unknown function");
  for (OpOperand &use : call->getOpOperands()) {
    auto global = globals.lookup(use.get());
    if (!global)
      continue;
    Split want = Split::whole(global.getRank());
    if (auto s = callee.getArgAttrOfType<dist::ShardingAttr>(
            use.getOperandNumber(), "dtc.sharding"))
      want = Split::of(s);
    use.set(reshard(use.get(), want, call));
  }
  for (OpResult r : call->getResults()) {
    auto global = dyn_cast<RankedTensorType>(r.getType());
    if (!global)
      continue;
    Split split = Split::whole(global.getRank());
    if (auto s = callee.getResultAttrOfType<dist::ShardingAttr>(
            r.getResultNumber(), "dtc.sharding"))
      split = Split::of(s);
    globals[r] = global;
    splits[r] = split;
    r.setType(callee.getResultTypes()[r.getResultNumber()]);
  }
  return success();
}

LogicalResult PartitionPass::partition(func::FuncOp func) {
  splits.clear();
  globals.clear();
  rules.clear();
  resharded.clear();
  Block &body = func.getBody().front();
  // The rules of the global program, before any type changes.
  SmallVector<Operation *> ops;
  for (Operation &op : body) {
    ops.push_back(&op);
    if (isa<func::ReturnOp, func::CallOp, dist::ShardingConstraintOp>(op))
      continue;
    const ShardingRuleFn *fn = getShardingRuleRegistry().lookup(&op);
    if (!fn)
      return op.emitError("no sharding rule for '") << op.getName() << "'";
    FailureOr<ShardingRule> rule = (*fn)(&op);
    if (failed(rule))
      return failure();
    rules[&op] = std::move(*rule);
  }
  for (BlockArgument arg : body.getArguments()) {
    auto global = dyn_cast<RankedTensorType>(arg.getType());
    if (!global)
      continue;
    globals[arg] = global;
    Split split = Split::whole(global.getRank());
    // (Data comes in whole: each rank reads its samples, all of each.)
    auto role =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dtg.role");
    bool data = role && role.getValue() == "input";
    if (auto s = func.getArgAttrOfType<dist::ShardingAttr>(arg.getArgNumber(),
                                                           "dist.sharding");
        s && !data)
      split = Split::of(s);
    if (data)
      func.removeArgAttr(arg.getArgNumber(), "dist.sharding");
    splits[arg] = split;
    // (Kept on the argument as dtc.sharding: the dist dialect checks
    // dist.sharding against the local type.)
    if (auto s = func.getArgAttr(arg.getArgNumber(), "dist.sharding")) {
      func.removeArgAttr(arg.getArgNumber(), "dist.sharding");
      func.setArgAttr(arg.getArgNumber(), "dtc.sharding", s);
    }
    arg.setType(localType(global, split));
  }
  for (Operation *op : ops)
    if (failed(visit(op)))
      return failure();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // Carried state (a parameter, its optimizer state, model state) comes
  // back split as the argument it replaces is: the next step takes it
  // there.
  for (OpOperand &use : ret->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    auto role = func.getResultAttrOfType<StringAttr>(i, "dtg.role");
    auto name = func.getResultAttrOfType<StringAttr>(i, "dtg.name");
    if (!role || !name ||
        !llvm::is_contained({"parameter", "optimizer_state", "state"},
                            role.getValue()))
      continue;
    for (BlockArgument arg : body.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "dtg.role") == role &&
          func.getArgAttr(arg.getArgNumber(), "dtg.name") == name) {
        use.set(reshard(use.get(), splits.lookup(arg), ret));
        break;
      }
  }
  // What an entry point returns (a loss sum, a metric) is a whole value:
  // the runtime sums data-parallel shares only.
  if (!func.isPrivate())
    for (OpOperand &use : ret->getOpOperands()) {
      Split s = splits.lookup(use.get());
      if (s.partial.empty())
        continue;
      s.partial.clear();
      use.set(reshard(use.get(), s, ret));
    }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto global = globals.lookup(v);
    if (!global)
      continue;
    Split s = splits.lookup(v);
    SmallVector<dist::AxisListAttr> dims;
    for (auto &axes : s.dims)
      dims.push_back(dist::AxisListAttr::get(&getContext(), axes));
    func.setResultAttr(
        i, "dtc.sharding",
        dist::ShardingAttr::get(&getContext(), meshRef, dims, s.partial));
  }
  func.setFunctionType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                                         ret.getOperandTypes()));
  func.walk([](Operation *op) {
    op->removeAttr("dtc.shardings");
    op->removeAttr("dtc.factor_axes");
  });
  return success();
}

void PartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<dist::MeshOp> meshOp = findMesh(module, "partitioning");
  if (failed(meshOp))
    return signalPassFailure();
  mesh = meshOp->getMesh();
  meshRef = FlatSymbolRefAttr::get(meshOp->getSymNameAttr());
  SmallVector<func::FuncOp> order = calleesFirst(module);
  for (func::FuncOp func : order)
    if (failed(partition(func)))
      return signalPassFailure();
  // @eval_step takes @train_step's arguments: those it does not read (the
  // optimizer state) take their blocks too.
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (train && eval && train.getNumArguments() == eval.getNumArguments()) {
    for (unsigned i = 0; i < train.getNumArguments(); ++i) {
      BlockArgument a = train.getArgument(i), b = eval.getArgument(i);
      if (a.getType() == b.getType())
        continue;
      if (!b.use_empty()) {
        eval.emitError("@eval_step argument #")
            << i << " is split otherwise than @train_step's (" << b.getType()
            << ", not " << a.getType() << ")";
        return signalPassFailure();
      }
      b.setType(a.getType());
      if (Attribute s = train.getArgAttr(i, "dtc.sharding"))
        eval.setArgAttr(i, "dtc.sharding", s);
    }
    eval.setFunctionType(FunctionType::get(
        &getContext(), eval.getBody().front().getArgumentTypes(),
        eval.getResultTypes()));
  }
}
