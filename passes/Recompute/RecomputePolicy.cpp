//===- RecomputePolicy.cpp - what the backward recomputes ----------------===//

#include "passes/Recompute/RecomputePolicy.h"

#include "passes/Recompute/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "passes/Memory/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::recompute;

/// The ONNX node name in `loc` (a NameLoc, possibly inside a FusedLoc), or
/// "". The walk is iterative: a hostile location cannot make it deep.
static StringRef nodeName(Location loc) {
  SmallVector<Location> worklist{loc};
  while (!worklist.empty()) {
    Location l = worklist.pop_back_val();
    if (auto name = dyn_cast<NameLoc>(l))
      return name.getName().getValue();
    if (auto fused = dyn_cast<FusedLoc>(l))
      for (Location inner : llvm::reverse(fused.getLocations()))
        worklist.push_back(inner);
  }
  return "";
}

/// The layer of a node name: the path up to and including its first
/// segment that ends in ".<digits>" (the exporter's name of a ModuleList or
/// Sequential child, "/h.3" in "/h.3/attn/MatMul"), or "".
static StringRef layerOfName(StringRef name) {
  size_t end = 0;
  while (end < name.size()) {
    size_t next = name.find('/', end + 1);
    if (next == StringRef::npos)
      next = name.size();
    StringRef segment = name.slice(end, next).ltrim('/');
    size_t dot = segment.rfind('.');
    // The last segment is the op itself ("/Gather_1"), not a module.
    if (next < name.size() && dot != StringRef::npos && dot > 0 &&
        dot + 1 < segment.size() &&
        llvm::all_of(segment.drop_front(dot + 1),
                     [](char c) { return llvm::isDigit(c); }))
      return name.take_front(next);
    end = next;
  }
  return "";
}

SmallVector<Operation *> mlir::dtc::recompute::backwardOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  if (func.isExternal())
    return ops;
  bool inBackward = false;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (op.hasAttr(kBackward) && !isa<dtg::ConstantOp>(op))
      inBackward = true;
    if (isa<dtg::ConstantOp>(op) ? op.hasAttr(kBackward) : inBackward)
      ops.push_back(&op);
  }
  return ops;
}

bool mlir::dtc::recompute::hasBackward(func::FuncOp func) {
  if (func.isExternal())
    return false;
  return llvm::any_of(func.getBody().front(),
                      [](Operation &op) { return op.hasAttr(kBackward); });
}

static bool isStaticTensor(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape();
}

ForwardInfo mlir::dtc::recompute::analyzeForward(func::FuncOp func) {
  ForwardInfo info;
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  llvm::DenseSet<Operation *> backward;
  for (Operation *op : backwardOps(func))
    backward.insert(op);
  for (Operation &op : body.without_terminator()) {
    if (backward.contains(&op) || isa<dtg::ConstantOp>(op))
      continue;
    info.ops.push_back(&op);
    bool returned = llvm::any_of(
        op.getUsers(), [&](Operation *user) { return user == terminator; });
    if (op.getNumResults() > 0 && op.getNumRegions() == 0 &&
        isMemoryEffectFree(&op) && !returned &&
        llvm::all_of(op.getResultTypes(), isStaticTensor))
      info.recomputable.insert(&op);
  }

  llvm::StringMap<int> index;
  for (Operation *op : info.ops) {
    StringRef layer = layerOfName(nodeName(op->getLoc()));
    if (layer.empty()) {
      info.layer[op] = -1;
      continue;
    }
    auto [it, inserted] = index.try_emplace(layer, info.layerNames.size());
    if (inserted)
      info.layerNames.push_back(layer.str());
    info.layer[op] = it->second;
  }
  if (!info.layerNames.empty() || info.ops.empty())
    return info;
  // No names to go by: ceil(sqrt(N)) segments of the forward order.
  int64_t n = info.ops.size();
  int64_t segments = int64_t(std::ceil(std::sqrt(double(n))));
  for (int64_t s = 0; s < segments; ++s)
    info.layerNames.push_back("#segment" + std::to_string(s));
  for (auto [i, op] : llvm::enumerate(info.ops))
    info.layer[op] = int(int64_t(i) * segments / n);
  return info;
}

/// A cast to a wider float type (bf16 or f16 to f32): exact, so its result
/// is recomputed from its 16-bit operand rather than saved beside it. Under
/// mixed precision a layer's output goes on in 16 bits and in an fp32 copy
/// for the next LayerNorm; full recompute keeps only the 16-bit one, the
/// 2 sbh of Korthikanti et al.'s table 2.
static bool isWideningCast(Operation *op) {
  auto cast = dyn_cast<dtg::CastOp>(op);
  if (!cast)
    return false;
  auto from = getElementTypeOrSelf(cast->getOperand(0).getType());
  auto to = getElementTypeOrSelf(cast->getResult(0).getType());
  return isa<FloatType>(from) && isa<FloatType>(to) &&
         from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth();
}

OpSet mlir::dtc::recompute::fullSet(const ForwardInfo &info) {
  OpSet set;
  for (Operation *op : info.ops) {
    int layer = info.layer.lookup(op);
    if (layer < 0 || !info.recomputable.contains(op))
      continue;
    // Forward users are in info.layer; the others are the backward.
    bool isOutput = llvm::any_of(op->getUsers(), [&](Operation *user) {
      auto it = info.layer.find(user);
      return it != info.layer.end() && it->second != layer;
    });
    if (!isOutput || isWideningCast(op))
      set.insert(op);
  }
  return set;
}

/// The buffer `value` lives in: through forward reshapes (aliases) to the
/// value that owns it.
static Value rootOf(Value value) {
  while (auto reshape = value.getDefiningOp<dtg::ReshapeOp>())
    value = reshape.getOperand();
  return value;
}

/// True if `value` is held outside the arena (an argument, a constant).
static bool isFree(Value value) {
  Operation *def = value.getDefiningOp();
  return !def || isa<dtg::ConstantOp>(def);
}

OpSet mlir::dtc::recompute::neededOps(func::FuncOp func,
                                      const OpSet &recomputed) {
  OpSet needed;
  SmallVector<Operation *> worklist;
  auto visit = [&](Operation *op) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && recomputed.contains(def) && needed.insert(def))
        worklist.push_back(def);
    }
  };
  for (Operation *op : backwardOps(func))
    visit(op);
  while (!worklist.empty())
    visit(worklist.pop_back_val());
  return needed;
}

/// The buffers (roots) the backward and the clones of `recomputed` read from
/// the forward.
static llvm::SetVector<Value> savedRoots(func::FuncOp func,
                                         const OpSet &recomputed) {
  llvm::SetVector<Value> roots;
  SmallVector<Operation *> backward = backwardOps(func);
  llvm::DenseSet<Operation *> inBackward(backward.begin(), backward.end());
  auto visit = [&](Operation *op) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || inBackward.contains(def) || recomputed.contains(def))
        continue;
      Value root = rootOf(operand);
      if (!isFree(root))
        roots.insert(root);
    }
  };
  for (Operation *op : backward)
    visit(op);
  for (Operation *op : neededOps(func, recomputed))
    visit(op);
  return roots;
}

int64_t mlir::dtc::recompute::savedBytes(func::FuncOp func,
                                         const OpSet &recomputed) {
  int64_t bytes = 0;
  for (Value root : savedRoots(func, recomputed))
    if (isStaticTensor(root.getType()))
      bytes += memory::byteSize(root.getType());
  return bytes;
}

/// True for the ops Korthikanti et al. recompute: little arithmetic per byte
/// they produce.
static bool isCheap(Operation *op, const llvm::DenseSet<Value> &dataDependent) {
  if (op->hasTrait<OpTrait::Elementwise>())
    return true;
  if (isa<dtg::WhereOp, dtg::SoftmaxOp, dtg::LogSoftmaxOp, dtg::DropoutOp,
          dtg::ReshapeOp, dtg::TransposeOp, dtg::SliceOp, dtg::ConcatOp,
          dtg::BroadcastOp, dtg::TileOp, dtg::PadOp, dtg::TriluOp,
          dtg::GatherOp>(op))
    return true;
  // Attention scores and their product with the values: both operands are
  // activations, the result grows with the sequence squared.
  if (isa<dtg::MatMulOp, dtg::EinsumOp>(op))
    return llvm::all_of(op->getOperands(),
                        [&](Value v) { return dataDependent.contains(v); });
  return false;
}

OpSet mlir::dtc::recompute::selectiveSet(func::FuncOp func,
                                         const ForwardInfo &info) {
  // Values that depend on the micro-batch (not only on parameters).
  llvm::DenseSet<Value> dataDependent;
  for (BlockArgument arg : func.getArguments()) {
    auto role =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dtg.role");
    if (role && role.getValue() == "input")
      dataDependent.insert(arg);
  }
  for (Operation *op : info.ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return dataDependent.contains(v); }))
      for (Value r : op->getResults())
        dataDependent.insert(r);

  llvm::SetVector<Value> savedAnyway = savedRoots(func, {});
  OpSet set;
  for (Operation *op : info.ops)
    if (info.recomputable.contains(op) && isCheap(op, dataDependent))
      set.insert(op);
  // Drop the ops that would make a value saved that is not saved anyway,
  // until none is left.
  bool changed = true;
  while (changed) {
    changed = false;
    OpSet kept;
    for (Operation *op : set) {
      bool ok = llvm::all_of(op->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (def && set.contains(def))
          return true;
        Value root = rootOf(v);
        return isFree(root) || savedAnyway.contains(root);
      });
      if (ok)
        kept.insert(op);
      else
        changed = true;
    }
    set = std::move(kept);
  }
  return set;
}

SmallVector<Operation *>
mlir::dtc::recompute::applyRecompute(func::FuncOp func,
                                     const OpSet &recomputed) {
  Block &body = func.getBody().front();
  MLIRContext *ctx = func.getContext();
  SmallVector<Operation *> backward = backwardOps(func);

  IRMapping clones;
  SmallVector<Operation *> created;
  OpBuilder builder(ctx);
  // Clones `root` and the recomputed producers it reads (operands first)
  // before `before`, iteratively.
  auto materialize = [&](Operation *root, Operation *before) {
    builder.setInsertionPoint(before);
    SmallVector<std::pair<Operation *, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [op, expanded] = stack.pop_back_val();
      if (clones.contains(op->getResult(0)))
        continue;
      if (!expanded) {
        stack.push_back({op, true});
        for (Value operand : op->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && recomputed.contains(def) &&
              !clones.contains(def->getResult(0)))
            stack.push_back({def, false});
        }
        continue;
      }
      Operation *clone = builder.clone(*op, clones);
      clone->setAttr(kBackward, UnitAttr::get(ctx));
      clone->setAttr(kRecompute, UnitAttr::get(ctx));
      created.push_back(clone);
    }
  };
  for (Operation *user : backward)
    for (OpOperand &use : user->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (!def || !recomputed.contains(def))
        continue;
      materialize(def, user);
      use.set(clones.lookup(use.get()));
    }

  // The forward no longer computes what only the backward read.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (recomputed.contains(&op) && op.use_empty())
      op.erase();
  return created;
}
