//===- Propagate.cpp - shardings for every tensor, from constraints -------===//
//
// See Passes.td (PropagateShardingPass) for what the pass does, and
// ShardingRules.h for the rules it follows.
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Sharding/ShardingRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <deque>

namespace mlir::dtc {
#define GEN_PASS_DEF_PROPAGATESHARDINGPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::sharding;

namespace {

/// The ONNX node of a location (its NameLoc), or "".
std::string nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = nodeName(inner); !s.empty())
        return s;
  return "";
}

/// How one dimension of a value is split, and where that came from.
struct DimSplit {
  SmallVector<StringAttr> axes;
  /// 0: a user's constraint; otherwise the sweep that set it.
  int round = 0;
  /// The ONNX node (or "a constraint") the split spread from.
  std::string origin;
  /// Kept as it is, whole or split (an argument its training twin has).
  bool pinned = false;
};

struct ValueSharding {
  SmallVector<DimSplit> dims;
  SmallVector<StringAttr> partial;
};

struct PropagateShardingPass
    : public dtc::impl::PropagateShardingPassBase<PropagateShardingPass> {
  using PropagateShardingPassBase::PropagateShardingPassBase;
  void runOnOperation() override;

private:
  LogicalResult propagate(func::FuncOp func);
  bool visit(Operation *op, const ShardingRule &rule, int round);
  bool stopPartialSums(ArrayRef<std::pair<Operation *, ShardingRule>> ops);
  int sweep(func::FuncOp func,
            ArrayRef<std::pair<Operation *, ShardingRule>> ops, int round);
  void seedSequenceSplits(func::FuncOp func, int round);
  ValueSharding &stateOf(Value v);
  int64_t splitSize(ArrayRef<StringAttr> axes) const;
  bool canSplit(Value v, int64_t dim, ArrayRef<StringAttr> axes);
  dist::ShardingAttr toAttr(Value v);

  dist::MeshAttr mesh;
  FlatSymbolRefAttr meshRef;
  /// Each value's state, in a deque (whose elements stay where they are as
  /// it grows: visit() holds references into several values' states while
  /// it looks others up, which a DenseMap's growth would move).
  llvm::DenseMap<Value, size_t> stateIndex;
  std::deque<ValueSharding> state;
  llvm::DenseSet<std::pair<Operation *, int64_t>> reported;
  /// Per op, the axes each of its factors is split over.
  llvm::DenseMap<Operation *, SmallVector<SmallVector<StringAttr>>> factorAxes;
  /// Ops whose results are partial sums of their own (a split contraction),
  /// not only of partial operands.
  llvm::DenseSet<Operation *> origins;
  /// Values whose partial sums were stopped: they stay whole.
  llvm::DenseSet<Value> wholeSums;
  /// The shardings a propagated function's arguments and results ended
  /// with: a call of it seeds its operands and results with them.
  llvm::DenseMap<Operation *, SmallVector<ValueSharding>> calleeArgs,
      calleeResults;
};
} // namespace

ValueSharding &PropagateShardingPass::stateOf(Value v) {
  auto [it, inserted] = stateIndex.try_emplace(v, state.size());
  if (inserted)
    state.emplace_back();
  ValueSharding &s = state[it->second];
  if (s.dims.empty())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()))
      s.dims.resize(t.getRank());
  return s;
}

int64_t PropagateShardingPass::splitSize(ArrayRef<StringAttr> axes) const {
  int64_t n = 1;
  for (StringAttr a : axes)
    n *= mesh.getAxisSize(a.getValue()).value_or(1);
  return n;
}

/// True if dimension `dim` of `v` is whole and can take `axes`: it
/// divides, and no other dimension of `v` uses one of them.
bool PropagateShardingPass::canSplit(Value v, int64_t dim,
                                     ArrayRef<StringAttr> axes) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || dim >= t.getRank())
    return false;
  ValueSharding &s = stateOf(v);
  if (!s.dims[dim].axes.empty() || s.dims[dim].pinned)
    return false;
  if (t.getDimSize(dim) % splitSize(axes) != 0)
    return false;
  for (const DimSplit &d : s.dims)
    for (StringAttr a : d.axes)
      if (llvm::is_contained(axes, a))
        return false;
  for (StringAttr a : s.partial)
    if (llvm::is_contained(axes, a))
      return false;
  return true;
}

/// The partial-sum axes that pass through `op` to its results: those of
/// its partial operands when they agree and the op is linear in them
/// (passesPartialSums); none otherwise.
static SmallVector<StringAttr>
partialThrough(Operation *op, function_ref<ValueSharding &(Value)> stateOf) {
  SmallVector<unsigned> partialOperands;
  SmallVector<StringAttr> axes;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    ValueSharding &s = stateOf(v);
    if (s.partial.empty())
      continue;
    if (!partialOperands.empty() && s.partial != axes)
      return {};
    axes = s.partial;
    partialOperands.push_back(unsigned(i));
  }
  if (partialOperands.empty() || !passesPartialSums(op, partialOperands))
    return {};
  return axes;
}

/// Spreads splits across the factors of one op; true if anything changed.
bool PropagateShardingPass::visit(Operation *op, const ShardingRule &rule,
                                  int round) {
  struct Candidate {
    bool isResult;
    unsigned index;
    int64_t dim;
    const DimSplit *split;
  };
  bool changed = false;
  for (StringAttr a : partialThrough(
           op, [&](Value v) -> ValueSharding & { return stateOf(v); }))
    for (Value r : op->getResults()) {
      ValueSharding &s = stateOf(r);
      if (!wholeSums.contains(r) && !llvm::is_contained(s.partial, a)) {
        s.partial.push_back(a);
        changed = true;
      }
    }
  for (int64_t f = 0; f < int64_t(rule.factors.size()); ++f) {
    if (rule.factors[f].kind == FactorKind::Blocked)
      continue;
    // The dimensions that are factor f, and the splits they have.
    SmallVector<Candidate> dims, split;
    for (auto [i, operand] : llvm::enumerate(rule.operands))
      for (auto [d, factor] : llvm::enumerate(operand))
        if (factor == f)
          dims.push_back({false, unsigned(i), int64_t(d), nullptr});
    for (auto [i, result] : llvm::enumerate(rule.results))
      for (auto [d, factor] : llvm::enumerate(result))
        if (factor == f)
          dims.push_back({true, unsigned(i), int64_t(d), nullptr});
    auto valueOf = [&](const Candidate &c) {
      return c.isResult ? op->getResult(c.index) : op->getOperand(c.index);
    };
    for (Candidate &c : dims) {
      const DimSplit &s = stateOf(valueOf(c)).dims[c.dim];
      if (!s.axes.empty()) {
        c.split = &s;
        split.push_back(c);
      }
    }
    if (split.empty())
      continue;
    // Priority: a constraint, then the earliest round, then operands
    // before results, in order.
    const Candidate *best = &split.front();
    for (const Candidate &c : split)
      if (std::make_tuple(c.split->round, c.isResult, c.index) <
          std::make_tuple(best->split->round, best->isResult, best->index))
        best = &c;
    DimSplit chosen = *best->split;
    // (What the op runs with: partitioning splits its operands so.) A mesh
    // axis splits one factor of an op: a factor whose split another factor
    // took already stays whole here (its operands are resharded).
    SmallVector<SmallVector<StringAttr>> &opFactors = factorAxes[op];
    opFactors.resize(rule.factors.size());
    bool taken = false;
    for (auto [g, axes] : llvm::enumerate(opFactors))
      if (int64_t(g) != f)
        for (StringAttr a : chosen.axes)
          taken |= llvm::is_contained(axes, a);
    if (taken)
      continue;
    opFactors[f] = chosen.axes;
    auto describe = [&](const Candidate &c) {
      std::string s = (c.isResult ? "result #" : "operand #") +
                      std::to_string(c.index) + " dimension " +
                      std::to_string(c.dim) + " split over {";
      for (auto [k, a] : llvm::enumerate(c.split->axes))
        s += (k ? ", " : "") + ("\"" + a.str() + "\"");
      return s + "} (from " + c.split->origin + ")";
    };
    for (const Candidate &c : split)
      if (c.split->axes != chosen.axes && reported.insert({op, f}).second)
        op->emitWarning("sharding conflict: ")
            << describe(*best) << " and " << describe(c)
            << "; the first wins, the other is resharded here";
    // Spread to the whole dimensions of factor f.
    bool reduction = rule.factors[f].kind == FactorKind::Reduction;
    for (const Candidate &c : dims) {
      Value v = valueOf(c);
      if (c.split || !canSplit(v, c.dim, chosen.axes))
        continue;
      DimSplit &s = stateOf(v).dims[c.dim];
      s.axes = chosen.axes;
      s.round = round;
      s.origin = chosen.origin;
      changed = true;
    }
    // A split contraction leaves partial sums.
    if (reduction && !best->isResult)
      origins.insert(op);
    if (reduction && !best->isResult)
      for (Value r : op->getResults()) {
        ValueSharding &s = stateOf(r);
        for (StringAttr a : chosen.axes)
          if (!llvm::is_contained(s.partial, a)) {
            s.partial.push_back(a);
            changed = true;
          }
      }
  }
  return changed;
}

/// Partial sums spread through every op linear in them; where a value
/// then fans out to users that need it whole, each of them would reduce
/// its own copy (a layer norm's backward reduces two products of one
/// partial gradient). So a partial result of an op that only passed its
/// operands' partial sums on goes back to whole wherever one of its users
/// needs it whole and the op does not shrink it: the reduction moves up
/// to the operand, one collective where there were several. An op that
/// runs split over an axis its partial sums are over (sequence
/// parallelism splits a norm's backward by tokens) cannot pass them on
/// either: its operands are reduced (scattered) before it. Results
/// downstream that were partial only through such a value become whole
/// too. Returns true if anything changed.
bool PropagateShardingPass::stopPartialSums(
    ArrayRef<std::pair<Operation *, ShardingRule>> ops) {
  auto partialOperands = [&](Operation *op) {
    SmallVector<unsigned> indices;
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (isa<RankedTensorType>(v.getType()) && !stateOf(v).partial.empty())
        indices.push_back(unsigned(i));
    return indices;
  };
  // True if `op` runs split over one of `partial`.
  auto splitOver = [&](Operation *op, ArrayRef<StringAttr> partial) {
    auto it = factorAxes.find(op);
    if (origins.contains(op) || it == factorAxes.end())
      return false;
    for (const SmallVector<StringAttr> &axes : it->second)
      for (StringAttr a : axes)
        if (llvm::is_contained(partial, a))
          return true;
    return false;
  };
  auto needsWhole = [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (user->hasTrait<OpTrait::IsTerminator>() ||
        isa<func::CallOp, dist::ShardingConstraintOp>(user))
      return false;
    return !passesPartialSums(user, partialOperands(user)) ||
           splitOver(user, stateOf(use.get()).partial);
  };
  auto elements = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getNumElements();
  };
  auto makeWhole = [&](Value r) {
    stateOf(r).partial.clear();
    wholeSums.insert(r);
  };
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &[op, rule] : llvm::reverse(ops)) {
      if (origins.contains(op))
        continue;
      int64_t in = 0;
      for (unsigned i : partialOperands(op))
        in = std::max(in, elements(op->getOperand(i)));
      for (Value r : op->getResults()) {
        ValueSharding &s = stateOf(r);
        if (s.partial.empty())
          continue;
        if (!splitOver(op, s.partial) &&
            (in > elements(r) || llvm::none_of(r.getUses(), needsWhole)))
          continue;
        makeWhole(r);
        changed = true;
      }
    }
    for (auto &[op, rule] : ops) {
      if (origins.contains(op) ||
          !partialThrough(op, [&](Value v) -> ValueSharding & {
             return stateOf(v);
           }).empty())
        continue;
      for (Value r : op->getResults())
        if (isa<RankedTensorType>(r.getType()) && !stateOf(r).partial.empty()) {
          makeWhole(r);
          changed = true;
        }
    }
    any |= changed;
  }
  return any;
}

/// Sweeps forward and backward from `round` on until nothing changes;
/// returns the last round.
int PropagateShardingPass::sweep(
    func::FuncOp func, ArrayRef<std::pair<Operation *, ShardingRule>> ops,
    int round) {
  int last = round + 4 * int(ops.size()) + 8;
  for (bool changed = true; changed && round < last; ++round) {
    changed = false;
    for (auto &[op, rule] : ops)
      changed |= visit(op, rule, round);
    for (auto &[op, rule] : llvm::reverse(ops))
      changed |= visit(op, rule, round);
    // Constraints pass their operand's partial sums through.
    func.walk([&](dist::ShardingConstraintOp c) {
      stateOf(c.getResult()).partial = stateOf(c.getInput()).partial;
    });
  }
  return round;
}

/// --sequence-parallel: each layer norm's input split over tp along its
/// tokens (the dimension before the normalized ones), where that is still
/// whole and divides.
void PropagateShardingPass::seedSequenceSplits(func::FuncOp func, int round) {
  SmallVector<StringAttr> tp{StringAttr::get(&getContext(), "tp")};
  if (splitSize(tp) <= 1)
    return;
  func.walk([&](dtg::LayerNormOp norm) {
    if (norm->getParentOp() != func)
      return;
    Value x = norm.getOperand(0);
    int64_t dim = norm.getAxis() - 1;
    if (dim < 0 || !canSplit(x, dim, tp))
      return;
    std::string node = nodeName(norm.getLoc());
    stateOf(x).dims[dim] = {tp, round,
                            "--sequence-parallel" +
                                (node.empty() ? "" : " at '" + node + "'")};
  });
}

LogicalResult PropagateShardingPass::propagate(func::FuncOp func) {
  // Seeds.
  for (BlockArgument arg : func.getArguments())
    if (auto s = func.getArgAttrOfType<dist::ShardingAttr>(arg.getArgNumber(),
                                                           "dist.sharding")) {
      ValueSharding &v = stateOf(arg);
      for (auto [d, list] : llvm::enumerate(s.getDims()))
        v.dims[d] = {SmallVector<StringAttr>(list.getAxes()), 0,
                     "the sharding of argument #" +
                         std::to_string(arg.getArgNumber())};
    }
  // The forward-only micro-step runs on the training micro-step's
  // arguments (the step holds them once): its arguments start as those
  // ended, by name.
  // Likewise @eval_step, which takes @train_step's arguments.
  StringRef twin = func.getSymName() == "eval_micro_step" ? "micro_step"
                   : func.getSymName() == "eval_step"     ? "train_step"
                                                          : "";
  if (!twin.empty())
    if (auto train = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            func, StringAttr::get(func.getContext(), twin));
        train && calleeArgs.count(train)) {
      llvm::StringMap<const ValueSharding *> byName;
      for (auto [i, s] : llvm::enumerate(calleeArgs[train]))
        if (auto n = train.getArgAttrOfType<StringAttr>(i, "dtg.name"))
          byName[n.getValue()] = &s;
      for (BlockArgument arg : func.getArguments())
        if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       "dtg.name"))
          if (const ValueSharding *s = byName.lookup(n.getValue())) {
            ValueSharding &mine = stateOf(arg);
            for (auto [d, split] : llvm::enumerate(s->dims))
              if (d < mine.dims.size())
                mine.dims[d] = {split.axes, 0,
                                "@" + twin.str() + "'s argument '" +
                                    n.getValue().str() + "'",
                                /*pinned=*/true};
          }
    }
  // A call hands its operands to a function propagated before: they and
  // its results take the shardings the callee's arguments and results
  // have (a parameter a micro-step splits is split where the step holds
  // it).
  func.walk([&](func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || !calleeArgs.count(callee))
      return;
    std::string origin = "the call of @" + callee.getSymName().str();
    for (auto [v, s] : llvm::zip(call.getOperands(), calleeArgs[callee])) {
      ValueSharding &mine = stateOf(v);
      for (auto [d, split] : llvm::enumerate(s.dims))
        if (!split.axes.empty() && d < mine.dims.size() &&
            mine.dims[d].axes.empty())
          mine.dims[d] = {split.axes, 0, origin};
    }
    for (auto [v, s] : llvm::zip(call.getResults(), calleeResults[callee])) {
      ValueSharding &mine = stateOf(v);
      for (auto [d, split] : llvm::enumerate(s.dims))
        if (d < mine.dims.size())
          mine.dims[d] = {split.axes, 0, origin};
      mine.partial = s.partial;
    }
  });
  func.walk([&](dist::ShardingConstraintOp c) {
    std::string node = nodeName(c.getLoc());
    std::string origin =
        "a constraint" + (node.empty() ? "" : " at '" + node + "'");
    for (Value v : {c.getInput(), c.getResult()}) {
      ValueSharding &s = stateOf(v);
      for (auto [d, list] : llvm::enumerate(c.getSharding().getDims()))
        s.dims[d] = {SmallVector<StringAttr>(list.getAxes()), 0, origin};
    }
  });

  // The rules of the function's ops.
  SmallVector<std::pair<Operation *, ShardingRule>> ops;
  WalkResult walk = func.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() != "dtg")
      return WalkResult::advance();
    if (op->getParentOp() != func)
      return WalkResult::advance(); // inside a fusion: no rules there
    const ShardingRuleFn *fn = getShardingRuleRegistry().lookup(op);
    if (!fn) {
      op->emitError("no sharding rule for '") << op->getName() << "'";
      return WalkResult::interrupt();
    }
    FailureOr<ShardingRule> rule = (*fn)(op);
    if (failed(rule))
      return WalkResult::interrupt();
    ops.push_back({op, std::move(*rule)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Sweeps until nothing changes, then stops partial sums where they
  // should not go on, which may leave values whole that a split can now
  // reach: again, until both settle.
  int round = 0;
  auto settle = [&] {
    for (int i = 0; i < 8; ++i) {
      round = sweep(func, ops, round + 1);
      if (!stopPartialSums(ops))
        break;
    }
  };
  settle();
  // Sequence parallelism fills in what the splits above left whole.
  if (sequenceParallel) {
    seedSequenceSplits(func, round);
    settle();
  }

  // What callers see.
  SmallVector<ValueSharding> &args = calleeArgs[func];
  args.clear();
  for (BlockArgument arg : func.getArguments())
    args.push_back(stateOf(arg));
  SmallVector<ValueSharding> &results = calleeResults[func];
  results.clear();
  for (Value v : func.getBody().front().getTerminator()->getOperands())
    results.push_back(stateOf(v));

  // Results.
  for (BlockArgument arg : func.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      func.setArgAttr(arg.getArgNumber(), "dist.sharding", toAttr(arg));
  func.walk([&](Operation *op) {
    if (op == func || op->getParentOp() != func ||
        op->hasTrait<OpTrait::IsTerminator>())
      return;
    SmallVector<Attribute> shardings;
    for (Value r : op->getResults())
      if (isa<RankedTensorType>(r.getType()))
        shardings.push_back(toAttr(r));
    if (!shardings.empty())
      op->setAttr("dtc.shardings", ArrayAttr::get(&getContext(), shardings));
    if (auto it = factorAxes.find(op); it != factorAxes.end()) {
      SmallVector<Attribute> factors;
      for (const SmallVector<StringAttr> &axes : it->second)
        factors.push_back(dist::AxisListAttr::get(&getContext(), axes));
      op->setAttr("dtc.factor_axes", ArrayAttr::get(&getContext(), factors));
    }
  });
  return success();
}

dist::ShardingAttr PropagateShardingPass::toAttr(Value v) {
  MLIRContext *ctx = &getContext();
  ValueSharding &s = stateOf(v);
  SmallVector<dist::AxisListAttr> dims;
  for (const DimSplit &d : s.dims)
    dims.push_back(dist::AxisListAttr::get(ctx, d.axes));
  return dist::ShardingAttr::get(ctx, meshRef, dims, s.partial);
}

void PropagateShardingPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<dist::MeshOp> meshOp = findMesh(module, "sharding propagation");
  if (failed(meshOp))
    return signalPassFailure();
  mesh = meshOp->getMesh();
  meshRef = FlatSymbolRefAttr::get(meshOp->getSymNameAttr());
  SmallVector<func::FuncOp> order = calleesFirst(module);
  // (@micro_step before @eval_micro_step and @train_step before
  // @eval_step, which start from their splits.)
  std::stable_partition(order.begin(), order.end(), [](func::FuncOp f) {
    return f.getSymName() == "micro_step";
  });
  auto train = llvm::find_if(
      order, [](func::FuncOp f) { return f.getSymName() == "train_step"; });
  auto eval = llvm::find_if(
      order, [](func::FuncOp f) { return f.getSymName() == "eval_step"; });
  if (train != order.end() && eval != order.end() && eval < train)
    std::iter_swap(train, eval);
  for (func::FuncOp func : order) {
    state.clear();
    stateIndex.clear();
    factorAxes.clear();
    origins.clear();
    wholeSums.clear();
    if (failed(propagate(func)))
      return signalPassFailure();
  }
}
