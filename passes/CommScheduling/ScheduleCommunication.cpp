//===- ScheduleCommunication.cpp - collectives that overlap compute -------===//
//
// See Passes.td (ScheduleCommunicationPass) for what the pass does.
//
//===----------------------------------------------------------------------===//

#include "passes/CommScheduling/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <map>

namespace mlir::dtc {
#define GEN_PASS_DEF_SCHEDULECOMMUNICATIONPASS
#include "passes/CommScheduling/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kExplain = "dtc.explain";
constexpr StringLiteral kBackward = "dtg.backward";

/// A backward collective's halves stay in the backward pass.
static void markLikeCollective(Operation *collective, Operation *start,
                               Operation *wait) {
  if (!collective->hasAttr(kBackward))
    return;
  UnitAttr unit = UnitAttr::get(collective->getContext());
  start->setAttr(kBackward, unit);
  wait->setAttr(kBackward, unit);
}
constexpr StringLiteral kPipelineOp = "dtc.pipeline_op";

bool isCollective(Operation *op) {
  return isa<dist::AllReduceOp, dist::ReduceScatterOp, dist::AllGatherOp>(op);
}

/// True for a collective over the pipeline axis: its group's ranks run
/// different stages' programs, which need not schedule it alike, so it
/// stays synchronous where it is.
bool spansStages(Operation *op) {
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  return axes && llvm::any_of(axes.getAsValueRange<StringAttr>(),
                              [](StringRef axis) { return axis == "pp"; });
}

int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  Type e = tensor.getElementType();
  int64_t bytes = e.isInteger(1) ? 1 : (e.getIntOrFloatBitWidth() + 7) / 8;
  return tensor.getNumElements() * bytes;
}

ArrayAttr meshAxesOf(Operation *op) {
  return op->getAttrOfType<ArrayAttr>("mesh_axes");
}

/// Replaces the last call of `body` with the callee's ops when a collective
/// follows it, so that the collectives of the callee's results can start
/// inside it. A pipeline's forwards and backwards stay calls (the runtime
/// times them), and so do calls of functions of several blocks.
void inlineLastCall(Block &body) {
  func::CallOp last;
  for (Operation &op : body)
    if (auto call = dyn_cast<func::CallOp>(op))
      last = call;
  if (!last || last->hasAttr(kPipelineOp))
    return;
  bool collectiveAfter = false;
  for (Operation *op = last->getNextNode(); op && !collectiveAfter;
       op = op->getNextNode())
    collectiveAfter = isCollective(op);
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      last, last.getCalleeAttr());
  if (!collectiveAfter || !callee || callee.isExternal() ||
      !callee.getBody().hasOneBlock())
    return;
  Block &calleeBody = callee.getBody().front();
  IRMapping map;
  for (auto [arg, operand] :
       llvm::zip(calleeBody.getArguments(), last.getOperands()))
    map.map(arg, operand);
  OpBuilder b(last);
  for (Operation &op : calleeBody.without_terminator())
    b.clone(op, map);
  for (auto [result, value] :
       llvm::zip(last.getResults(), calleeBody.getTerminator()->getOperands()))
    result.replaceAllUsesWith(map.lookupOrDefault(value));
  last.erase();
}

/// all_reduce(x / s) -> all_reduce(x) / s, and the same for a
/// reduce-scatter, where s is a scalar already summed over (at least) the
/// collective's axes: the same on every rank of its group. The reduction
/// then no longer waits for s (a gradient for the global loss count).
void reduceBeforeDividing(Block &body) {
  SmallVector<Operation *> collectives;
  for (Operation &op : body)
    if (isa<dist::AllReduceOp, dist::ReduceScatterOp>(op))
      collectives.push_back(&op);
  for (Operation *op : collectives) {
    auto kind = op->getAttrOfType<dist::ReduceKindAttr>("kind");
    auto div = op->getOperand(0).getDefiningOp<dtg::DivOp>();
    if (!kind || kind.getValue() != dist::ReduceKind::Sum || !div ||
        !div->hasOneUse() || div.getLhs().getType() != div.getType())
      continue;
    Value scalar = div.getRhs();
    auto count = scalar.getDefiningOp<dist::AllReduceOp>();
    if (!count || cast<RankedTensorType>(scalar.getType()).getRank() != 0)
      continue;
    auto countAxes = count.getMeshAxes();
    if (!llvm::all_of(meshAxesOf(op), [&](Attribute axis) {
          return llvm::is_contained(countAxes, axis);
        }))
      continue;
    OpBuilder b(op);
    Operation *reduced = b.clone(*op);
    reduced->setOperand(0, div.getLhs());
    auto quotient =
        b.create<dtg::DivOp>(div.getLoc(), op->getResult(0).getType(),
                             reduced->getResult(0), scalar);
    op->getResult(0).replaceAllUsesWith(quotient.getResult());
    op->erase();
    div.erase();
  }
}

/// Moves the op computing `value` (and, first, those computing its
/// operands, `depth` levels up) to right after the last op it reads, when
/// it is a side-effect-free op of `body` whose results nothing else reads:
/// a gradient's layout change the backward left for the end is then ready
/// as soon as the gradient is.
void hoistProducer(Block &body, Value value, int depth) {
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != &body || op->getNumRegions() > 0 ||
      !isMemoryEffectFree(op) || isa<dtg::ConstantOp>(op) ||
      !llvm::all_of(op->getResults(),
                    [](Value r) { return r.hasOneUse() || r.use_empty(); }))
    return;
  if (depth > 0)
    for (Value operand : op->getOperands())
      hoistProducer(body, operand, depth - 1);
  Operation *after = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def)
      continue;
    def = body.findAncestorOpInBlock(*def);
    if (def && (!after || after->isBeforeInBlock(def)))
      after = def;
  }
  if (after && after->getNextNode() != op)
    op->moveAfter(after);
  else if (!after && &body.front() != op)
    op->moveBefore(&body.front());
}

/// Where the ops of one block stand, and where each collective could start
/// and must end.
struct Placement {
  Operation *op;
  /// Position of the op computing the operand (-1: an argument), and that
  /// op (null for an argument).
  int64_t ready;
  Operation *readyOp;
  /// Position of the first op using the result (through the block's ops).
  int64_t firstUse;
  Operation *firstUser;
  int64_t position;
};

/// A run of all-reduces that go as one.
struct Bucket {
  SmallVector<Placement> members;
  int64_t bytes = 0, ready = -1, firstUse = INT64_MAX;
  Operation *readyOp = nullptr, *firstUser = nullptr;
};

struct ScheduleCommunicationPass
    : public dtc::impl::ScheduleCommunicationPassBase<
          ScheduleCommunicationPass> {
  using ScheduleCommunicationPassBase::ScheduleCommunicationPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      Block &body = func.getBody().front();
      inlineLastCall(body);
      reduceBeforeDividing(body);
      schedule(body);
    }
    // Functions no call reaches any more (a micro-step inlined into its
    // only caller).
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (func.isPrivate() && SymbolTable::symbolKnownUseEmpty(func, module))
        func.erase();
  }

private:
  void schedule(Block &body);
  void emitBucket(Bucket &bucket);
  void emitSingle(const Placement &p, Operation *startBefore);

  /// Where each new start goes after its anchor (keeping their order).
  llvm::DenseMap<Operation *, Operation *> lastAfter;
  /// Each block's first op, for starts of arguments.
  Operation *blockStart = nullptr;

  void insertAfterReady(OpBuilder &b, Operation *readyOp) {
    Operation *anchor = readyOp ? readyOp : blockStart;
    auto it = lastAfter.find(anchor);
    if (it != lastAfter.end())
      b.setInsertionPointAfter(it->second);
    else if (readyOp)
      b.setInsertionPointAfter(readyOp);
    else
      b.setInsertionPoint(blockStart);
  }
  void noteInserted(Operation *readyOp, Operation *last) {
    lastAfter[readyOp ? readyOp : blockStart] = last;
  }
};

void ScheduleCommunicationPass::schedule(Block &body) {
  lastAfter.clear();
  for (Operation &op : llvm::make_early_inc_range(body))
    if (isCollective(&op))
      hoistProducer(body, op.getOperand(0), /*depth=*/3);
  blockStart = &body.front();
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> ops;
  for (Operation &op : body) {
    position[&op] = int64_t(ops.size());
    ops.push_back(&op);
  }
  // work[p]: ops of compute before position p (a reshape, a constant or a
  // collective hides nothing).
  SmallVector<int64_t> work(ops.size() + 1, 0);
  for (auto [p, op] : llvm::enumerate(ops))
    work[p + 1] = work[p] + (isa<dtg::ReshapeOp, dtg::ConstantOp>(op) ||
                                     isa<dist::DistDialect>(op->getDialect())
                                 ? 0
                                 : 1);

  SmallVector<Placement> placements;
  for (Operation *op : ops) {
    if (!isCollective(op))
      continue;
    Placement p{op, -1, nullptr, INT64_MAX, nullptr, position[op]};
    Value in = op->getOperand(0);
    if (Operation *def = in.getDefiningOp()) {
      Operation *top = body.findAncestorOpInBlock(*def);
      p.ready = position[top];
      p.readyOp = top;
    }
    for (Operation *user : op->getResult(0).getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && position[top] < p.firstUse) {
        p.firstUse = position[top];
        p.firstUser = top;
      }
    }
    // Unused (left for the canonicalizer), over the pipeline axis, or next
    // to another collective: it stays where it is.
    if (!p.firstUser || spansStages(op) || isCollective(p.firstUser) ||
        (p.readyOp && isCollective(p.readyOp)))
      continue;
    placements.push_back(p);
  }

  // Arguments' collectives (ZeRO-3 parameter gathers), in the order their
  // results are first used, start one ahead: right before the first use of
  // the previous one's result. The first starts where it stood.
  llvm::DenseMap<Operation *, Operation *> startBefore;
  SmallVector<const Placement *> ofArguments;
  for (const Placement &p : placements)
    if (!p.readyOp)
      ofArguments.push_back(&p);
  llvm::stable_sort(ofArguments, [](const Placement *a, const Placement *b) {
    return a->firstUse < b->firstUse;
  });
  for (auto [i, p] : llvm::enumerate(ofArguments))
    startBefore[p->op] = i == 0 ? p->op : ofArguments[i - 1]->firstUser;
  // A gather of an activation holds a buffer larger than its operand from
  // its start: it starts no earlier than the collective before it in the
  // program (one collective ahead, as the parameters' gathers), so that a
  // gather the backward repeats (sequence parallelism) is not moved into
  // the forward. Reductions start as soon as their operand is ready: their
  // result is no larger than the operand, which dies at the start.
  llvm::DenseMap<Operation *, const Placement *> placementOf;
  for (const Placement &p : placements)
    placementOf[p.op] = &p;
  Operation *previousCollective = nullptr;
  for (Operation *op : ops) {
    if (!isCollective(op))
      continue;
    const Placement *p = placementOf.lookup(op);
    if (isa<dist::AllGatherOp>(op) && p && p->readyOp && previousCollective &&
        position[previousCollective] > p->ready) {
      Operation *at = previousCollective->getNextNode();
      while (at != op && isCollective(at))
        at = at->getNextNode();
      startBefore[op] = at;
    }
    previousCollective = op;
  }
  auto startPosition = [&](const Placement &p) {
    auto it = startBefore.find(p.op);
    return it != startBefore.end() ? position[it->second] - 1 : p.ready;
  };
  // Compute between the start and the wait to hide the collective behind.
  auto hidden = [&](const Placement &p) {
    return work[size_t(p.firstUse)] - work[size_t(startPosition(p) + 1)];
  };

  // Gradient buckets: sum and mean all-reduces in the order their operands
  // are ready.
  SmallVector<const Placement *> reducible;
  for (const Placement &p : placements)
    if (auto ar = dyn_cast<dist::AllReduceOp>(p.op);
        ar && p.readyOp &&
        (ar.getKind() == dist::ReduceKind::Sum ||
         ar.getKind() == dist::ReduceKind::Mean) &&
        hidden(p) > 0)
      reducible.push_back(&p);
  llvm::stable_sort(reducible, [](const Placement *a, const Placement *b) {
    return a->ready < b->ready;
  });
  int64_t cap = int64_t(bucketMb * double(1 << 20));
  std::map<std::tuple<const void *, const void *, int, const void *>, Bucket>
      open;
  SmallVector<Bucket> buckets;
  llvm::DenseSet<Operation *> bucketed;
  for (const Placement *p : reducible) {
    auto ar = cast<dist::AllReduceOp>(p->op);
    auto key = std::make_tuple(
        ar.getMeshAttr().getAsOpaquePointer(),
        ar.getMeshAxes().getAsOpaquePointer(), int(ar.getKind()),
        ar.getType().getElementType().getAsOpaquePointer());
    Bucket &bucket = open[key];
    int64_t bytes = byteSize(ar.getType());
    if (!bucket.members.empty() &&
        (bucket.bytes + bytes > cap ||
         std::max(bucket.ready, p->ready) >=
             std::min(bucket.firstUse, p->firstUse))) {
      buckets.push_back(std::move(bucket));
      bucket = Bucket();
    }
    bucket.members.push_back(*p);
    bucket.bytes += bytes;
    if (p->ready >= bucket.ready) {
      bucket.ready = p->ready;
      bucket.readyOp = p->readyOp;
    }
    if (p->firstUse < bucket.firstUse) {
      bucket.firstUse = p->firstUse;
      bucket.firstUser = p->firstUser;
    }
    bucketed.insert(p->op);
  }
  for (auto &[key, bucket] : open)
    if (!bucket.members.empty())
      buckets.push_back(std::move(bucket));
  llvm::stable_sort(buckets, [](const Bucket &a, const Bucket &b) {
    return a.ready < b.ready;
  });

  // The rest, one by one where there is compute to hide behind. (Collect
  // first: emitting erases the ops the placements name.)
  SmallVector<std::pair<Placement, Operation *>> singles;
  for (const Placement &p : placements) {
    if (bucketed.contains(p.op) || hidden(p) <= 0)
      continue;
    auto it = startBefore.find(p.op);
    singles.push_back({p, it == startBefore.end() ? nullptr : it->second});
  }
  for (Bucket &bucket : buckets)
    emitBucket(bucket);
  for (auto &[p, before] : singles)
    emitSingle(p, before);
}

void ScheduleCommunicationPass::emitBucket(Bucket &bucket) {
  MLIRContext *ctx = &getContext();
  auto first = cast<dist::AllReduceOp>(bucket.members.front().op);
  Location loc = first.getLoc();
  OpBuilder b(ctx);
  insertAfterReady(b, bucket.readyOp);
  Type element = first.getType().getElementType();
  Value flat;
  SmallVector<int64_t> counts;
  if (bucket.members.size() == 1) {
    flat = first.getInput();
  } else {
    SmallVector<Value> pieces;
    int64_t total = 0;
    for (const Placement &m : bucket.members) {
      auto ar = cast<dist::AllReduceOp>(m.op);
      int64_t n = ar.getType().getNumElements();
      counts.push_back(n);
      total += n;
      pieces.push_back(b.create<dtg::ReshapeOp>(
          ar.getLoc(), RankedTensorType::get({n}, element), ar.getInput()));
    }
    flat = b.create<dtg::ConcatOp>(loc, RankedTensorType::get({total}, element),
                                   pieces, b.getI64IntegerAttr(0));
  }
  auto start = b.create<dist::AllReduceStartOp>(
      loc, dist::FutureType::get(ctx, flat.getType()), flat,
      first.getKindAttr(), first.getMeshAttr(), first.getMeshAxes());
  std::string explain;
  if (bucket.members.size() == 1) {
    if (auto e = first->getAttrOfType<StringAttr>(kExplain))
      explain = e.str();
  } else {
    // What it holds: the first few members' explanations.
    explain = "a bucket of " + std::to_string(bucket.members.size()) +
              " reductions (" + std::to_string(bucket.bytes) + " bytes):";
    constexpr size_t kNamed = 3;
    size_t named = 0;
    for (const Placement &m : bucket.members)
      if (auto e = m.op->getAttrOfType<StringAttr>(kExplain);
          e && named < kNamed)
        explain += (named++ ? ", " : " ") + e.str();
    if (bucket.members.size() > named)
      explain += named ? ", ..." : " ...";
  }
  if (!explain.empty())
    start->setAttr(kExplain, b.getStringAttr(explain));
  noteInserted(bucket.readyOp, start);

  b.setInsertionPoint(bucket.firstUser);
  auto wait = b.create<dist::WaitOp>(loc, flat.getType(), start.getResult());
  markLikeCollective(first, start, wait);
  if (bucket.members.size() == 1) {
    first.getResult().replaceAllUsesWith(wait.getResult());
    first.erase();
    return;
  }
  int64_t offset = 0;
  for (auto [m, n] : llvm::zip(bucket.members, counts)) {
    auto ar = cast<dist::AllReduceOp>(m.op);
    auto piece = b.create<dtg::SliceOp>(
        ar.getLoc(), RankedTensorType::get({n}, element), wait.getResult(),
        b.getDenseI64ArrayAttr({offset}), b.getDenseI64ArrayAttr({offset + n}),
        b.getDenseI64ArrayAttr({1}));
    auto shaped =
        b.create<dtg::ReshapeOp>(ar.getLoc(), ar.getType(), piece.getResult());
    ar.getResult().replaceAllUsesWith(shaped.getResult());
    ar.erase();
    offset += n;
  }
}

void ScheduleCommunicationPass::emitSingle(const Placement &p,
                                           Operation *startBefore) {
  MLIRContext *ctx = &getContext();
  Operation *op = p.op;
  OpBuilder b(ctx);
  if (startBefore)
    b.setInsertionPoint(startBefore);
  else
    insertAfterReady(b, p.readyOp);
  Value in = op->getOperand(0);
  Type resultType = op->getResult(0).getType();
  auto future = dist::FutureType::get(ctx, resultType);
  Operation *start;
  if (auto ar = dyn_cast<dist::AllReduceOp>(op))
    start = b.create<dist::AllReduceStartOp>(op->getLoc(), future, in,
                                             ar.getKindAttr(), ar.getMeshAttr(),
                                             ar.getMeshAxes());
  else if (auto rs = dyn_cast<dist::ReduceScatterOp>(op))
    start = b.create<dist::ReduceScatterStartOp>(
        op->getLoc(), future, in, rs.getKindAttr(), rs.getScatterAxisAttr(),
        rs.getMeshAttr(), rs.getMeshAxes());
  else {
    auto ag = cast<dist::AllGatherOp>(op);
    start = b.create<dist::AllGatherStartOp>(
        op->getLoc(), future, in, ag.getGatherAxisAttr(), ag.getMeshAttr(),
        ag.getMeshAxes());
  }
  if (auto e = op->getAttrOfType<StringAttr>(kExplain))
    start->setAttr(kExplain, e);
  if (!startBefore)
    noteInserted(p.readyOp, start);
  b.setInsertionPoint(p.firstUser);
  auto wait =
      b.create<dist::WaitOp>(op->getLoc(), resultType, start->getResult(0));
  markLikeCollective(op, start, wait);
  op->getResult(0).replaceAllUsesWith(wait.getResult());
  op->erase();
}

} // namespace
