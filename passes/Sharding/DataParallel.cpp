//===- DataParallel.cpp - the step of one data-parallel rank --------------===//
//
// See Passes.td (PartitionDataParallelPass) for what the pass does and the
// layout rules it follows.
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <map>

namespace mlir::dtc {
#define GEN_PASS_DEF_PARTITIONDATAPARALLELPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kRole = "dtg.role", kName = "dtg.name";

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// How one rank holds a value of the global program.
struct Layout {
  enum Kind { Replicated, Partial, Split } kind = Replicated;
  /// Split: the dimension cut over dp. Partial: the dimension a
  /// reduce-scatter should cut it along when it is resolved (ZeRO 1 and 2
  /// gradients), or -1 for an all-reduce.
  int64_t dim = -1;

  static Layout replicated() { return {}; }
  static Layout partial(int64_t preferred) { return {Partial, preferred}; }
  static Layout split(int64_t dim) { return {Split, dim}; }
};

/// The type of a block of `type` cut along `dim` into `n`.
RankedTensorType blockType(RankedTensorType type, int64_t dim, int64_t n) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= n;
  return RankedTensorType::get(shape, type.getElementType());
}

struct PartitionDataParallelPass
    : public dtc::impl::PartitionDataParallelPassBase<
          PartitionDataParallelPass> {
  using PartitionDataParallelPassBase::PartitionDataParallelPassBase;

  void runOnOperation() override;

private:
  LogicalResult partition(func::FuncOp step);
  LogicalResult visit(Operation *op);
  Layout layoutOf(Value v) const {
    auto it = layouts.find(v);
    return it == layouts.end() ? Layout::replicated() : it->second;
  }
  /// `v` as every rank's whole value (all-reduce or all-gather, once).
  Value whole(Value v, Operation *before);
  /// `v` as this rank's block along `dim` (reduce-scatter of a partial sum,
  /// local block of a replicated value, or `v` if already that block).
  FailureOr<Value> block(Value v, int64_t dim, Operation *before);
  /// A partial sum resolved as its preferred layout says.
  Value resolve(Value v, Operation *before);
  LogicalResult visitElementwise(Operation *op, bool linear);
  LogicalResult visitUpdate(Operation *op);
  LogicalResult splitAlong(Operation *op, int64_t dim);
  LogicalResult visitReturn(func::ReturnOp ret);

  /// The first dimension of `type` that dp divides, or -1.
  int64_t splitDim(RankedTensorType type) const {
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      if (size >= dp && size % dp == 0)
        return int64_t(d);
    return -1;
  }

  /// ZeRO's dimension for the tensors of `update` (its parameter's, in
  /// each rank's shape): where tensor parallelism splits the parameter
  /// already, that dimension (each rank's block is cut again over dp: a
  /// tensor is split along one dimension), else the first dp divides; -1
  /// for none.
  int64_t zeroDim(Operation *update) const {
    auto func = update->getParentOfType<func::FuncOp>();
    for (Value v : update->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && tpDim(func, arg.getArgNumber()) >= 0)
        return zeroDim(func, arg.getArgNumber());
    return splitDim(tensorType(update->getOperand(0)));
  }
  /// zeroDim of argument `i` of `func` itself (a ZeRO 3 parameter).
  int64_t zeroDim(func::FuncOp func, unsigned i) const {
    auto type = tensorType(func.getArgument(i));
    int64_t d = tpDim(func, i);
    if (d < 0)
      return splitDim(type);
    return type.getDimSize(d) >= dp && type.getDimSize(d) % dp == 0 ? d : -1;
  }
  /// The dimension tensor parallelism splits argument `i` of `func` along,
  /// or -1.
  static int64_t tpDim(func::FuncOp func, unsigned i) {
    if (auto s =
            func.getArgAttrOfType<dist::ShardingAttr>(i, sharding::kSharding))
      for (auto [d, list] : llvm::enumerate(s.getDims()))
        if (!list.getAxes().empty())
          return int64_t(d);
    return -1;
  }
  /// `existing` (tensor parallelism's, or none) with dimension `dim` split
  /// over dp too, inside its tp blocks.
  dist::ShardingAttr withDp(dist::ShardingAttr existing, int64_t rank,
                            int64_t dim) {
    MLIRContext *ctx = &getContext();
    SmallVector<dist::AxisListAttr> dims(rank,
                                         dist::AxisListAttr::get(ctx, {}));
    ArrayRef<StringAttr> partial;
    if (existing) {
      dims.assign(existing.getDims().begin(), existing.getDims().end());
      partial = existing.getPartial();
    }
    SmallVector<StringAttr> axes(dims[dim].getAxes());
    axes.push_back(StringAttr::get(ctx, "dp"));
    dims[dim] = dist::AxisListAttr::get(ctx, axes);
    return dist::ShardingAttr::get(ctx, meshRef, dims, partial);
  }

  Value createAllReduce(OpBuilder &b, Location loc, Value v) {
    return b.create<dist::AllReduceOp>(
        loc, v.getType(), v,
        dist::ReduceKindAttr::get(b.getContext(), dist::ReduceKind::Sum),
        meshRef, axes);
  }

  FlatSymbolRefAttr meshRef;
  ArrayAttr axes;
  func::FuncOp step;
  llvm::DenseMap<Value, Layout> layouts;
  /// Values already made whole or cut into blocks, by source value.
  llvm::DenseMap<Value, Value> wholes, blocks;
  /// Optimizer state arguments (and their results) held as blocks: the
  /// argument index and the dimension.
  llvm::DenseMap<unsigned, int64_t> splitArgs;
  /// ZeRO 3: callee arguments that receive a parameter's block, and the
  /// dimension it is cut along; the callee gathers it where it is used.
  std::map<std::pair<Operation *, unsigned>, int64_t> gatheredInside;
  LogicalResult gatherInside(func::FuncOp callee, unsigned index, int64_t dim);
  /// The parameter of each gradient @micro_step returns, in order.
  SmallVector<std::string> gradientNames;
  /// What values hold, for --explain ("gradient of fc.weight").
  llvm::DenseMap<Value, std::string> what;
  std::string describe(Value v, int depth = 0);
  /// Marks a collective created for `v` with what it carries.
  Value explained(Value collective, Value v) {
    collective.getDefiningOp()->setAttr(
        "dtc.explain", StringAttr::get(&getContext(), describe(v)));
    return collective;
  }
};
} // namespace

/// What `v` holds, in words: a step argument's name, what a call of
/// @micro_step returns, or what the value it derives from holds.
std::string PartitionDataParallelPass::describe(Value v, int depth) {
  if (auto it = what.find(v); it != what.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto name = step.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kName);
    return name ? name.str() : "argument";
  }
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return "a value";
  if (isa<dtg::AdamWUpdateOp, dtg::SgdUpdateOp>(def))
    return "updated " + describe(def->getOperand(0), depth + 1);
  if (isa<dtg::ReduceSumOp>(def))
    return "a sum over " + describe(def->getOperand(0), depth + 1);
  if (isa<dtg::AddOp>(def) && def->getNumOperands() == 2) {
    std::string a = describe(def->getOperand(0), depth + 1),
                b = describe(def->getOperand(1), depth + 1);
    if (a != b)
      return StringRef(a).starts_with("a sum of several") ? a
                                                          : "a sum of several "
                                                            "values (" +
                                                                a + ", ...)";
  }
  for (Value operand : def->getOperands())
    if (isa<RankedTensorType>(operand.getType()) &&
        tensorType(operand).getRank() == tensorType(v).getRank())
      return describe(operand, depth + 1);
  return def->getNumOperands() ? describe(def->getOperand(0), depth + 1)
                               : "a value";
}

Value PartitionDataParallelPass::whole(Value v, Operation *before) {
  Layout l = layoutOf(v);
  if (l.kind == Layout::Replicated)
    return v;
  if (Value done = wholes.lookup(v))
    return done;
  OpBuilder b(before);
  Value result;
  if (l.kind == Layout::Partial) {
    result = explained(createAllReduce(b, v.getLoc(), v), v);
  } else {
    auto local = tensorType(v);
    SmallVector<int64_t> shape(local.getShape());
    shape[l.dim] *= dp;
    result = explained(b.create<dist::AllGatherOp>(
                           v.getLoc(),
                           RankedTensorType::get(shape, local.getElementType()),
                           v, b.getI64IntegerAttr(l.dim), meshRef, axes),
                       v);
  }
  wholes[v] = result;
  return result;
}

FailureOr<Value> PartitionDataParallelPass::block(Value v, int64_t dim,
                                                  Operation *before) {
  Layout l = layoutOf(v);
  if (l.kind == Layout::Split) {
    if (l.dim == dim)
      return v;
    v = whole(v, before);
    l = Layout::replicated();
  }
  if (Value done = blocks.lookup(v); done && layoutOf(done).dim == dim)
    return done;
  auto type = tensorType(v);
  if (type.getRank() <= dim || type.getDimSize(dim) % dp != 0)
    return before->emitError("cannot split ")
           << type << " along dimension " << dim << " over dp=" << int64_t(dp);
  OpBuilder b(before);
  Value result;
  if (l.kind == Layout::Partial)
    result = explained(
        b.create<dist::ReduceScatterOp>(
            v.getLoc(), blockType(type, dim, dp), v,
            dist::ReduceKindAttr::get(b.getContext(), dist::ReduceKind::Sum),
            b.getI64IntegerAttr(dim), meshRef, axes),
        v);
  else
    result = explained(
        b.create<dist::LocalBlockOp>(v.getLoc(), blockType(type, dim, dp), v,
                                     b.getI64IntegerAttr(dim), meshRef, axes),
        v);
  layouts[result] = Layout::split(dim);
  blocks[v] = result;
  return result;
}

Value PartitionDataParallelPass::resolve(Value v, Operation *before) {
  Layout l = layoutOf(v);
  if (l.kind == Layout::Partial && l.dim >= 0) {
    FailureOr<Value> b = block(v, l.dim, before);
    if (succeeded(b))
      return *b;
  }
  return whole(v, before);
}

/// Elementwise ops (and casts). `linear`: the result of a partial sum and
/// replicated values is again a partial sum (add/sub of partial sums only,
/// mul/div by a replicated value, cast).
LogicalResult PartitionDataParallelPass::visitElementwise(Operation *op,
                                                          bool linear) {
  SmallVector<Layout> in;
  for (Value v : op->getOperands())
    in.push_back(layoutOf(v));
  bool anyPartial = llvm::any_of(
      in, [](const Layout &l) { return l.kind == Layout::Partial; });
  if (anyPartial && linear) {
    // add/sub: every operand partial; mul/div: only the numerator (or one
    // factor) partial.
    bool ok = true;
    if (isa<dtg::AddOp, dtg::SubOp>(op))
      ok = llvm::all_of(
          in, [](const Layout &l) { return l.kind == Layout::Partial; });
    else if (isa<dtg::MulOp>(op))
      ok = llvm::count_if(in, [](const Layout &l) {
             return l.kind != Layout::Replicated;
           }) == 1;
    else if (isa<dtg::DivOp>(op))
      ok = in[0].kind == Layout::Partial && in[1].kind == Layout::Replicated;
    if (ok) {
      int64_t preferred = -1;
      for (const Layout &l : in)
        if (l.kind == Layout::Partial && l.dim >= 0)
          preferred = l.dim;
      for (Value r : op->getResults())
        if (tensorType(r).getShape() ==
            tensorType(op->getOperand(0)).getShape())
          layouts[r] = Layout::partial(preferred);
        else
          layouts[r] = Layout::partial(-1);
      return success();
    }
  }
  // Resolve partial sums; then the result is split if an operand is.
  for (OpOperand &use : op->getOpOperands())
    if (layoutOf(use.get()).kind == Layout::Partial)
      use.set(resolve(use.get(), op));
  int64_t dim = -1;
  for (Value v : op->getOperands())
    if (layoutOf(v).kind == Layout::Split)
      dim = layoutOf(v).dim;
  if (dim < 0)
    return success();
  auto resultType = tensorType(op->getResult(0));
  for (OpOperand &use : op->getOpOperands()) {
    auto type = tensorType(use.get());
    if (type.getRank() == 0 || layoutOf(use.get()).kind == Layout::Split) {
      if (layoutOf(use.get()).kind == Layout::Split &&
          layoutOf(use.get()).dim != dim)
        use.set(whole(use.get(), op));
      continue;
    }
    if (type.getRank() != resultType.getRank() ||
        type.getDimSize(dim) != resultType.getDimSize(dim)) {
      // A broadcast operand along the split dimension: make every operand
      // whole instead.
      dim = -1;
      break;
    }
  }
  if (dim < 0) {
    for (OpOperand &use : op->getOpOperands())
      use.set(whole(use.get(), op));
    return success();
  }
  return splitAlong(op, dim);
}

/// Runs `op` on blocks along `dim`: rank-0 operands whole, every other
/// operand cut into its block, the results blocks.
LogicalResult PartitionDataParallelPass::splitAlong(Operation *op,
                                                    int64_t dim) {
  for (OpOperand &use : op->getOpOperands()) {
    if (tensorType(use.get()).getRank() == 0) {
      use.set(whole(use.get(), op));
      continue;
    }
    FailureOr<Value> b = block(use.get(), dim, op);
    if (failed(b))
      return failure();
    use.set(*b);
  }
  for (Value r : op->getResults()) {
    r.setType(blockType(tensorType(r), dim, dp));
    layouts[r] = Layout::split(dim);
  }
  return success();
}

/// sgd_update / adamw_update: operand 0 the parameter, 1 the gradient, the
/// other tensors of the parameter's type its state, rank-0 operands
/// hyperparameters; every result has the parameter's type.
LogicalResult PartitionDataParallelPass::visitUpdate(Operation *op) {
  int64_t dim = zero >= 1 ? zeroDim(op) : -1;
  // The state arguments decide: they were split (or not) up front.
  // (A parameter held in blocks is an fp32 master weight; a replicated
  // one is simply the parameter.)
  if (layoutOf(op->getOperand(0)).kind == Layout::Split)
    dim = layoutOf(op->getOperand(0)).dim;
  for (unsigned i = 2; i < op->getNumOperands(); ++i) {
    Value v = op->getOperand(i);
    if (tensorType(v).getRank() == 0)
      continue;
    Layout l = layoutOf(v);
    if (l.kind == Layout::Split)
      dim = l.dim;
    else if (l.kind == Layout::Replicated)
      dim = -1;
  }
  if (dim < 0) {
    for (OpOperand &use : op->getOpOperands())
      use.set(whole(use.get(), op));
    return success();
  }
  return splitAlong(op, dim);
}

LogicalResult PartitionDataParallelPass::visitReturn(func::ReturnOp ret) {
  for (OpOperand &use : ret->getOpOperands()) {
    unsigned i = use.getOperandNumber();
    auto role = step.getResultAttrOfType<StringAttr>(i, kRole);
    Layout l = layoutOf(use.get());
    // Optimizer state stays in blocks where its argument is one, and so do
    // parameters under ZeRO 3.
    if (role && l.kind == Layout::Split &&
        (role.getValue() == "optimizer_state" ||
         (zero >= 3 && role.getValue() == "parameter")))
      continue;
    use.set(whole(use.get(), ret));
  }
  return success();
}

LogicalResult PartitionDataParallelPass::visit(Operation *op) {
  // (Collectives over other axes, from tensor parallelism, take whole
  // values over dp like any op without a rule here.)
  // A partial sum resolved for an earlier user is read resolved.
  for (OpOperand &use : op->getOpOperands()) {
    if (layoutOf(use.get()).kind != Layout::Partial)
      continue;
    if (Value b = blocks.lookup(use.get()))
      use.set(b);
    else if (Value w = wholes.lookup(use.get()))
      use.set(w);
  }
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return visitReturn(ret);
  if (auto call = dyn_cast<func::CallOp>(op)) {
    // Every operand is whole but the data, which is already this rank's,
    // and under ZeRO 3 the parameters' blocks, which the callee gathers
    // where it uses them.
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, call.getCalleeAttr());
    for (OpOperand &use : op->getOpOperands()) {
      Layout l = layoutOf(use.get());
      auto arg = dyn_cast<BlockArgument>(use.get());
      if (zero >= 3 && l.kind == Layout::Split && arg &&
          splitArgs.count(arg.getArgNumber())) {
        auto key =
            std::make_pair(callee.getOperation(), use.getOperandNumber());
        auto [it, inserted] = gatheredInside.try_emplace(key, l.dim);
        if (!inserted && it->second != l.dim)
          return op->emitError("@")
                 << callee.getSymName() << " argument #"
                 << use.getOperandNumber()
                 << " gets blocks along different dimensions";
        continue;
      }
      use.set(whole(use.get(), op));
    }
    for (OpResult r : op->getResults()) {
      auto role =
          callee.getResultAttrOfType<StringAttr>(r.getResultNumber(), kRole);
      StringRef kind = role ? role.getValue() : "";
      if (kind == "loss_sum" || kind == "loss_count") {
        layouts[r] = Layout::partial(-1);
        what[r] = kind == "loss_sum" ? "the loss sum" : "the loss count";
      } else if (kind == "gradient") {
        unsigned g = 0;
        for (unsigned k = 0; k < r.getResultNumber(); ++k)
          if (auto rk = callee.getResultAttrOfType<StringAttr>(k, kRole);
              rk && rk.getValue() == "gradient")
            ++g;
        what[r] = "the gradient of " + (g < gradientNames.size()
                                            ? gradientNames[g]
                                            : std::string("a parameter"));
        int64_t dim = -1;
        if (auto d = callee.getResultAttrOfType<IntegerAttr>(
                r.getResultNumber(), "dtc.split_dim"))
          dim = d.getInt();
        layouts[r] = Layout::partial(dim);
        if (zero >= 2 && dim >= 0) {
          // ZeRO 2: each micro-batch's gradient is reduce-scattered at
          // once, so accumulation holds blocks.
          OpBuilder b(op);
          b.setInsertionPointAfter(op);
          auto rs = b.create<dist::ReduceScatterOp>(
              r.getLoc(), blockType(tensorType(r), dim, dp), r,
              dist::ReduceKindAttr::get(b.getContext(), dist::ReduceKind::Sum),
              b.getI64IntegerAttr(dim), meshRef, axes);
          explained(rs, r);
          r.replaceAllUsesExcept(rs, rs);
          layouts[rs] = Layout::split(dim);
        }
      } else if (kind == "state" && localBatchNorm) {
        // Running statistics of per-rank batches: averaged over dp.
        OpBuilder b(op);
        b.setInsertionPointAfter(op);
        what[r] = "a running statistic (per-rank batch norm)";
        auto avg = b.create<dist::AllReduceOp>(
            r.getLoc(), r.getType(), r,
            dist::ReduceKindAttr::get(b.getContext(), dist::ReduceKind::Mean),
            meshRef, axes);
        explained(avg, r);
        r.replaceAllUsesExcept(avg, avg);
      }
    }
    return success();
  }
  if (isa<dtg::AdamWUpdateOp, dtg::SgdUpdateOp>(op))
    return visitUpdate(op);
  if (isa<dtg::AddOp, dtg::SubOp, dtg::MulOp, dtg::DivOp, dtg::CastOp>(op))
    return visitElementwise(op, /*linear=*/true);
  if (auto sum = dyn_cast<dtg::ReduceSumOp>(op)) {
    Layout l = layoutOf(sum.getOperand());
    if (l.kind == Layout::Partial) {
      layouts[sum.getResult()] = Layout::partial(-1);
      return success();
    }
    if (l.kind == Layout::Split) {
      if (llvm::is_contained(sum.getAxes(), l.dim)) {
        layouts[sum.getResult()] = Layout::partial(-1);
        return success();
      }
      sum->setOperand(0, whole(sum.getOperand(), op));
    }
    return success();
  }
  // (dtg.where broadcasts, so it lacks the trait; fp16 selects the old
  // optimizer state or the new with it on an overflow.)
  if (op->hasTrait<OpTrait::Elementwise>() || isa<dtg::WhereOp>(op))
    return visitElementwise(op, /*linear=*/false);
  // Any other op: replicated operands, replicated results.
  for (OpOperand &use : op->getOpOperands())
    if (isa<RankedTensorType>(use.get().getType()))
      use.set(whole(use.get(), op));
  return success();
}

/// ZeRO 3: argument `index` of `callee` becomes a block along `dim`; the
/// forward all-gathers it just before its first use, and the reverse sweep
/// (ops marked dtg.backward) gathers it again before its first use there,
/// so that the whole parameter lives only while each half needs it.
LogicalResult PartitionDataParallelPass::gatherInside(func::FuncOp callee,
                                                      unsigned index,
                                                      int64_t dim) {
  BlockArgument arg = callee.getArgument(index);
  auto whole = tensorType(arg);
  auto name = callee.getArgAttrOfType<StringAttr>(index, kName);
  SmallVector<OpOperand *> forward, backward;
  for (OpOperand &use : arg.getUses())
    (use.getOwner()->hasAttr("dtg.backward") ? backward : forward)
        .push_back(&use);
  arg.setType(blockType(whole, dim, dp));
  Block &body = callee.getBody().front();
  auto gatherFor = [&](ArrayRef<OpOperand *> uses, StringRef half) {
    if (uses.empty())
      return;
    // Before the first user in the block (every use is in the body).
    Operation *first = nullptr;
    for (OpOperand *use : uses) {
      Operation *user = body.findAncestorOpInBlock(*use->getOwner());
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
    OpBuilder b(first);
    auto gather = b.create<dist::AllGatherOp>(
        arg.getLoc(), whole, arg, b.getI64IntegerAttr(dim), meshRef, axes);
    gather->setAttr("dtc.explain",
                    b.getStringAttr((name ? name.str() : "a parameter") +
                                    " for the " + half.str() + " (ZeRO 3)"));
    if (half == "backward")
      gather->setAttr("dtg.backward", b.getUnitAttr());
    for (OpOperand *use : uses)
      use->set(gather);
  };
  gatherFor(forward, "forward");
  gatherFor(backward, "backward");
  callee.setFunctionType(FunctionType::get(
      &getContext(), body.getArgumentTypes(), callee.getResultTypes()));
  return success();
}

LogicalResult PartitionDataParallelPass::partition(func::FuncOp func) {
  step = func;
  what.clear();
  layouts.clear();
  wholes.clear();
  blocks.clear();
  MLIRContext *ctx = &getContext();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto role = func.getArgAttrOfType<StringAttr>(i, kRole);
    auto type = tensorType(arg);
    SmallVector<dist::AxisListAttr> dims(type.getRank(),
                                         dist::AxisListAttr::get(ctx, {}));
    if (role && role.getValue() == "input") {
      // The rows of this rank: the global batch is dp times as large.
      dims[0] = dist::AxisListAttr::get(ctx, {StringAttr::get(ctx, "dp")});
      func.setArgAttr(i, sharding::kSharding,
                      dist::ShardingAttr::get(ctx, meshRef, dims, {}));
      continue;
    }
    auto it = splitArgs.find(i);
    if (it == splitArgs.end())
      continue;
    int64_t dim = it->second;
    // (Shardings describe the whole tensor: set before the type shrinks.)
    func.setArgAttr(i, sharding::kSharding,
                    withDp(func.getArgAttrOfType<dist::ShardingAttr>(
                               i, sharding::kSharding),
                           type.getRank(), dim));
    arg.setType(blockType(type, dim, dp));
    layouts[arg] = Layout::split(dim);
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops)
    if (failed(visit(op)))
      return failure();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  func.setFunctionType(
      FunctionType::get(ctx, body.getArgumentTypes(), ret.getOperandTypes()));
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (layoutOf(v).kind == Layout::Split)
      func.setResultAttr(i, sharding::kSharding,
                         withDp(func.getResultAttrOfType<dist::ShardingAttr>(
                                    i, sharding::kSharding),
                                tensorType(v).getRank(), layoutOf(v).dim));
  return success();
}

void PartitionDataParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (dp < 1)
    return (void)(module.emitError("dp must be positive, got ") << int64_t(dp)),
           signalPassFailure();
  if (zero < 0 || zero > 3)
    return (void)(module.emitError("ZeRO stage ")
                  << int64_t(zero) << " does not exist (0, 1, 2 or 3)"),
           signalPassFailure();
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto micro = module.lookupSymbol<func::FuncOp>("micro_step");
  if (!train || !micro)
    return (void)module.emitError(
               "data parallelism partitions a training step: build one "
               "first (dtc-build-train-step)"),
           signalPassFailure();
  module->setAttr(sharding::kZero,
                  IntegerAttr::get(IntegerType::get(ctx, 64), zero));
  if (dp == 1)
    return;

  // Statistics over the batch inside a micro-batch.
  WalkResult bn = micro.walk([&](dtg::BatchNormTrainingOp op) {
    if (localBatchNorm)
      return WalkResult::advance();
    op.emitError("BatchNormalization in training mode takes statistics over "
                 "the whole batch, which dp=")
        << int64_t(dp)
        << " splits across ranks, and the training step does not "
           "synchronize them (build it with sync-batch-norm-dp=N, as dtc "
           "compile does); or pass --local-batchnorm for per-rank statistics";
    return WalkResult::interrupt();
  });
  if (bn.wasInterrupted())
    return signalPassFailure();

  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  auto meshAttr =
      dist::MeshAttr::get(ctx, {dist::MeshAxis{StringAttr::get(ctx, "pp"), 1},
                                dist::MeshAxis{StringAttr::get(ctx, "dp"), dp},
                                dist::MeshAxis{StringAttr::get(ctx, "tp"), 1}});
  // (Synchronized batch norms or a tensor-parallel plan declared it
  // already; its dp must be this pass's.)
  if (auto existing = module.lookupSymbol<dist::MeshOp>(sharding::kMeshName)) {
    if (existing.getMesh().getAxisSize("dp") != std::optional<int64_t>(dp))
      return (void)(existing.emitError("the module's mesh ")
                    << existing.getMesh()
                    << " does not have dp=" << int64_t(dp)),
             signalPassFailure();
  } else {
    top.create<dist::MeshOp>(module.getLoc(), sharding::kMeshName, meshAttr);
  }
  meshRef = FlatSymbolRefAttr::get(ctx, sharding::kMeshName);
  axes = top.getStrArrayAttr({"dp"});

  // Which gradients (micro_step results) are optimized in blocks, and
  // along which dimension; and the optimizer state arguments that hold
  // those blocks.
  splitArgs.clear();
  gatheredInside.clear();
  if (zero >= 1) {
    Block &body = train.getBody().front();
    train.walk([&](Operation *op) {
      if (!isa<dtg::AdamWUpdateOp, dtg::SgdUpdateOp>(op))
        return;
      int64_t dim = zeroDim(op);
      if (dim < 0)
        return;
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        auto arg = dyn_cast<BlockArgument>(op->getOperand(i));
        if (!arg || arg.getOwner() != &body || tensorType(arg).getRank() == 0)
          continue;
        // The moments, and the fp32 master weights of 16-bit parameters
        // (optimizer state that the update takes as its parameter).
        auto role =
            train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kRole);
        if (i >= 2 || (role && role.getValue() == "optimizer_state"))
          splitArgs[arg.getArgNumber()] = dim;
      }
    });
    // ZeRO 3: the trainable parameters themselves (those that enter the
    // micro-steps, 16-bit ones included).
    if (zero >= 3)
      for (unsigned i = 0; i < train.getNumArguments(); ++i) {
        auto role = train.getArgAttrOfType<StringAttr>(i, kRole);
        int64_t dim = zeroDim(train, i);
        if (role && role.getValue() == "parameter" &&
            train.getArgAttr(i, "dtg.trainable") && dim >= 0)
          splitArgs[i] = dim;
      }
    // The gradient results of @micro_step, in the order of the trainable
    // parameters, meet the updates in that order.
    SmallVector<Operation *> updates;
    train.walk([&](Operation *op) {
      if (isa<dtg::AdamWUpdateOp, dtg::SgdUpdateOp>(op))
        updates.push_back(op);
    });
    unsigned g = 0;
    for (unsigned r = 0; r < micro.getNumResults(); ++r) {
      auto role = micro.getResultAttrOfType<StringAttr>(r, kRole);
      if (!role || role.getValue() != "gradient")
        continue;
      if (g < updates.size()) {
        int64_t dim = zeroDim(updates[g]);
        if (dim >= 0)
          micro.setResultAttr(r, "dtc.split_dim", top.getI64IntegerAttr(dim));
      }
      ++g;
    }
  }
  // The parameters of the gradients, in the order @micro_step returns them
  // (the trainable parameters' order, which the updates follow).
  gradientNames.clear();
  train.walk([&](Operation *op) {
    if (!isa<dtg::AdamWUpdateOp, dtg::SgdUpdateOp>(op))
      return;
    std::string name = "a parameter";
    if (auto arg = dyn_cast<BlockArgument>(op->getOperand(0)))
      if (auto n =
              train.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kName))
        name = StringRef(n.getValue()).rsplit(".master").first.str();
    gradientNames.push_back(name);
  });
  if (failed(partition(train)))
    return signalPassFailure();
  // @eval_step takes @train_step's arguments: the same blocks.
  if (auto eval = module.lookupSymbol<func::FuncOp>("eval_step"))
    if (failed(partition(eval)))
      return signalPassFailure();
  for (auto [key, dim] : gatheredInside)
    if (failed(gatherInside(cast<func::FuncOp>(key.first), key.second, dim)))
      return signalPassFailure();
  if (auto g = module->getAttrOfType<IntegerAttr>("dtc.global_batch"))
    module->setAttr("dtc.global_batch", top.getI64IntegerAttr(g.getInt() * dp));
}
