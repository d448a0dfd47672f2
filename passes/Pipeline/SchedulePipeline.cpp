//===- SchedulePipeline.cpp - forward and backward in schedule order ------===//
//
// See Passes.td (SchedulePipelinePass).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipeline/Passes.h"

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::dtc {
#define GEN_PASS_DEF_SCHEDULEPIPELINEPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kRole = "dtg.role", kBackward = "dtg.backward";

/// @micro_step cut in two: which results each half returns (indices into
/// @micro_step's), which of its arguments the backward reads, and how many
/// values the forward saves for the backward (its trailing results).
struct Halves {
  func::FuncOp forward, backward;
  SmallVector<unsigned> forwardResults, backwardResults, backwardArgs;
  unsigned numSaved = 0;
};

FailureOr<Halves> splitMicroStep(func::FuncOp micro) {
  MLIRContext *ctx = micro.getContext();
  Block &body = micro.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // The backward: ops marked as the reverse sweep, what reads the
  // cotangents, and everything that reads a backward value.
  llvm::DenseSet<Value> backwardValues;
  for (unsigned i = 0; i < micro.getNumArguments(); ++i)
    if (auto role = micro.getArgAttrOfType<StringAttr>(i, kRole);
        role && role.getValue() == "cotangent")
      backwardValues.insert(body.getArgument(i));
  llvm::SetVector<Operation *> backward;
  for (Operation &op : body.without_terminator()) {
    bool isBackward = op.hasAttr(kBackward) ||
                      llvm::any_of(op.getOperands(), [&](Value v) {
                        return backwardValues.contains(v);
                      });
    if (!isBackward)
      continue;
    backward.insert(&op);
    for (Value r : op.getResults())
      backwardValues.insert(r);
  }
  // Constants only the backward reads are built there.
  for (Operation &op : body.without_terminator())
    if (!backward.contains(&op) && op.getNumOperands() == 0 &&
        op.getNumRegions() == 0 && !op.use_empty() &&
        llvm::all_of(op.getUsers(),
                     [&](Operation *u) { return backward.contains(u); }))
      backward.insert(&op);

  Halves h;
  // Results: each half returns what it computes (arguments: the forward).
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Operation *def = v.getDefiningOp();
    (def && backward.contains(def) ? h.backwardResults : h.forwardResults)
        .push_back(i);
  }
  // What the backward reads from outside itself: arguments and saved
  // forward values.
  llvm::SetVector<unsigned> args;
  llvm::SetVector<Value> saved;
  for (Operation *op : backward)
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          if (arg.getOwner() == &body)
            args.insert(arg.getArgNumber());
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (def->getBlock() == &body && !backward.contains(def))
          saved.insert(v);
      }
    });
  // (A result the backward returns may be an argument or forward value.)
  h.backwardArgs.assign(args.begin(), args.end());
  llvm::sort(h.backwardArgs);
  h.numSaved = saved.size();

  OpBuilder top(micro);
  auto roleAttrs = [&](StringRef role) {
    return DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, kRole),
                                                    StringAttr::get(ctx, role))});
  };

  // @micro_forward: the arguments but the cotangents; the forward results,
  // then the saved values.
  {
    SmallVector<Type> inTypes;
    SmallVector<DictionaryAttr> inAttrs;
    SmallVector<unsigned> kept;
    for (unsigned i = 0; i < micro.getNumArguments(); ++i) {
      auto role = micro.getArgAttrOfType<StringAttr>(i, kRole);
      if (role && role.getValue() == "cotangent")
        continue;
      kept.push_back(i);
      inTypes.push_back(micro.getArgument(i).getType());
      inAttrs.push_back(micro.getArgAttrDict(i));
    }
    auto f = top.create<func::FuncOp>(micro.getLoc(), "micro_forward",
                                      FunctionType::get(ctx, inTypes, {}));
    f.setPrivate();
    Block *entry = f.addEntryBlock();
    IRMapping map;
    for (auto [k, i] : llvm::enumerate(kept))
      map.map(body.getArgument(i), entry->getArgument(k));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (!backward.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> outAttrs;
    for (unsigned i : h.forwardResults) {
      Value v = map.lookupOrNull(ret.getOperand(i));
      if (!v)
        return micro.emitError("the forward of @micro_step returns a value "
                               "it does not compute");
      results.push_back(v);
      outAttrs.push_back(micro.getResultAttrDict(i));
    }
    for (Value v : saved) {
      results.push_back(map.lookup(v));
      outAttrs.push_back(roleAttrs("saved"));
    }
    b.create<func::ReturnOp>(micro.getLoc(), results);
    f.setFunctionType(
        FunctionType::get(ctx, inTypes, ValueRange(results).getTypes()));
    f.setAllResultAttrs(outAttrs);
    h.forward = f;
  }
  // @micro_backward: the arguments it reads, then the saved values.
  {
    SmallVector<Type> inTypes;
    SmallVector<DictionaryAttr> inAttrs;
    for (unsigned i : h.backwardArgs) {
      inTypes.push_back(micro.getArgument(i).getType());
      inAttrs.push_back(micro.getArgAttrDict(i));
    }
    for (Value v : saved) {
      inTypes.push_back(v.getType());
      inAttrs.push_back(roleAttrs("saved"));
    }
    auto f = top.create<func::FuncOp>(micro.getLoc(), "micro_backward",
                                      FunctionType::get(ctx, inTypes, {}));
    f.setPrivate();
    f.setAllArgAttrs(inAttrs);
    Block *entry = f.addEntryBlock();
    IRMapping map;
    for (auto [k, i] : llvm::enumerate(h.backwardArgs))
      map.map(body.getArgument(i), entry->getArgument(k));
    for (auto [k, v] : llvm::enumerate(saved))
      map.map(v, entry->getArgument(h.backwardArgs.size() + k));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (backward.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> outAttrs;
    for (unsigned i : h.backwardResults) {
      results.push_back(map.lookup(ret.getOperand(i)));
      outAttrs.push_back(micro.getResultAttrDict(i));
    }
    b.create<func::ReturnOp>(micro.getLoc(), results);
    f.setFunctionType(
        FunctionType::get(ctx, inTypes, ValueRange(results).getTypes()));
    f.setAllResultAttrs(outAttrs);
    h.backward = f;
  }
  return h;
}

struct SchedulePipelinePass
    : public dtc::impl::SchedulePipelinePassBase<SchedulePipelinePass> {
  using SchedulePipelinePassBase::SchedulePipelinePassBase;
  void runOnOperation() override;
};
} // namespace

void SchedulePipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto micro = module.lookupSymbol<func::FuncOp>("micro_step");
  if (!train || !micro)
    return (void)module.emitError("the pipeline schedule orders a training "
                                  "step: build one first "
                                  "(dtc-build-train-step)"),
           signalPassFailure();
  if (schedule != "gpipe" && schedule != "1f1b")
    return (void)(module.emitError("the pipeline schedule must be gpipe or "
                                   "1f1b, got '")
                  << schedule << "'"),
           signalPassFailure();
  if (stage < 0 || stage >= stages)
    return (void)(module.emitError("pipeline stage ")
                  << int64_t(stage) << " of " << int64_t(stages)
                  << " does not exist"),
           signalPassFailure();
  SmallVector<func::CallOp> calls;
  train.walk([&](func::CallOp call) {
    if (call.getCallee() == "micro_step")
      calls.push_back(call);
  });
  bool elsewhere = false;
  module.walk([&](func::CallOp call) {
    if (call.getCallee() == "micro_step" &&
        call->getParentOfType<func::FuncOp>() != train)
      elsewhere = true;
  });
  if (elsewhere)
    return (void)micro.emitError("@micro_step is called outside "
                                 "@train_step"),
           signalPassFailure();

  FailureOr<Halves> halves = splitMicroStep(micro);
  if (failed(halves))
    return signalPassFailure();

  // The schedule: (kind, micro-batch), kind 0 forward, 1 backward.
  int64_t m = calls.size();
  SmallVector<std::pair<int, int64_t>> order;
  if (schedule == "gpipe") {
    for (int64_t k = 0; k < m; ++k)
      order.push_back({0, k});
    for (int64_t k = 0; k < m; ++k)
      order.push_back({1, k});
  } else {
    int64_t warm = std::min<int64_t>(stages - stage - 1, m);
    for (int64_t k = 0; k < warm; ++k)
      order.push_back({0, k});
    for (int64_t i = 0; i < m - warm; ++i) {
      order.push_back({0, warm + i});
      order.push_back({1, i});
    }
    for (int64_t k = m - warm; k < m; ++k)
      order.push_back({1, k});
  }
  llvm::DenseMap<std::pair<int, int64_t>, double> slotOf;
  for (auto [i, entry] : llvm::enumerate(order))
    slotOf[entry] = double(i);

  // Each call becomes a forward and a backward call.
  llvm::DenseMap<Operation *, double> slot;
  Builder attrs(&getContext());
  for (auto [k, call] : llvm::enumerate(calls)) {
    OpBuilder b(call);
    SmallVector<Value> forwardOperands;
    for (unsigned i = 0; i < micro.getNumArguments(); ++i) {
      auto role = micro.getArgAttrOfType<StringAttr>(i, kRole);
      if (!role || role.getValue() != "cotangent")
        forwardOperands.push_back(call.getOperand(i));
    }
    auto f = b.create<func::CallOp>(call.getLoc(), halves->forward,
                                    forwardOperands);
    SmallVector<Value> backwardOperands;
    for (unsigned i : halves->backwardArgs)
      backwardOperands.push_back(call.getOperand(i));
    unsigned numForward = halves->forwardResults.size();
    for (unsigned s = 0; s < halves->numSaved; ++s)
      backwardOperands.push_back(f.getResult(numForward + s));
    auto bw = b.create<func::CallOp>(call.getLoc(), halves->backward,
                                     backwardOperands);
    for (auto [j, r] : llvm::enumerate(halves->forwardResults))
      call.getResult(r).replaceAllUsesWith(f.getResult(j));
    for (auto [j, r] : llvm::enumerate(halves->backwardResults))
      call.getResult(r).replaceAllUsesWith(bw.getResult(j));
    f->setAttr(pipeline::kPipelineOp, attrs.getStringAttr("F"));
    bw->setAttr(pipeline::kPipelineOp, attrs.getStringAttr("B"));
    f->setAttr(pipeline::kMicroBatch, attrs.getI64IntegerAttr(k));
    bw->setAttr(pipeline::kMicroBatch, attrs.getI64IntegerAttr(k));
    slot[f] = slotOf[{0, int64_t(k)}];
    slot[bw] = slotOf[{1, int64_t(k)}];
    call.erase();
  }
  micro.erase();

  // Order @train_step's ops: each call at its slot; an op a call reads
  // (transitively) just before the first such call; any other op after
  // the last of its operands, and a collective that no call reads after
  // every call (a sum over the stages must not wait for a stage that waits
  // for this one). Between two calls, what follows the first (the sends
  // of its results) comes before what the second needs (its receives): a
  // stage sends before it waits.
  Block &body = train.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  llvm::DenseMap<Operation *, double> firstConsumer;
  for (Operation *op : llvm::reverse(ops)) {
    double c = kNone;
    for (Operation *user : op->getUsers()) {
      if (slot.count(user))
        c = std::min(c, slot[user]);
      else if (auto it = firstConsumer.find(user); it != firstConsumer.end())
        c = std::min(c, it->second);
    }
    firstConsumer[op] = c;
  }
  double lastCall = double(order.size());
  SmallVector<std::pair<double, unsigned>> keys;
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (!slot.count(op)) {
      double s;
      if (firstConsumer[op] != kNone) {
        s = firstConsumer[op] - 0.25;
      } else {
        s = -1;
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp(); def && slot.count(def))
            s = std::max(s, slot[def] + 0.25);
        // After the last call, the model's order stands (it is the order
        // every stage wrote its transfers in).
        bool collective = isa<dist::DistDialect>(op->getDialect()) &&
                          !isa<dist::SendOp>(op);
        if (collective || s > lastCall - 1)
          s = lastCall;
      }
      slot[op] = s;
    }
    keys.push_back({slot[op], unsigned(index)});
  }
  llvm::stable_sort(keys);
  Operation *terminator = body.getTerminator();
  for (auto [s, index] : keys)
    ops[index]->moveBefore(terminator);
}
