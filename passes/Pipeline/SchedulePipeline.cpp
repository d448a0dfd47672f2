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
#include <map>
#include <tuple>

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
  SmallVector<unsigned> forwardResults, backwardResults, forwardArgs,
      backwardArgs;
  unsigned numSaved = 0;
};

constexpr int64_t kFree = -1;

/// The model chunk of each op of @micro_step's body (all 0 without
/// virtual stages): ops that read one another's values, or a chunk's
/// activation or cotangent arguments, are one chunk's; a chunk is known
/// from the forward ops dtc-split-stages marked (dtc.chunk).
FailureOr<llvm::DenseMap<Operation *, int64_t>> chunkOfOps(func::FuncOp micro,
                                                           int64_t chunks) {
  Block &body = micro.getBody().front();
  llvm::DenseMap<Operation *, int64_t> chunkOf;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (chunks == 1) {
    for (Operation *op : ops)
      chunkOf[op] = 0;
    return chunkOf;
  }
  // Union-find over ops; a chunk's arguments are nodes too.
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(ops))
    index[op] = unsigned(i);
  unsigned argBase = ops.size();
  SmallVector<unsigned> parent(ops.size() + body.getNumArguments());
  for (unsigned i = 0; i < parent.size(); ++i)
    parent[i] = i;
  std::function<unsigned(unsigned)> find = [&](unsigned x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](unsigned a, unsigned b) { parent[find(a)] = find(b); };
  SmallVector<int64_t> tag(parent.size(), -1);
  for (unsigned i = 0; i < body.getNumArguments(); ++i)
    if (auto c = micro.getArgAttrOfType<IntegerAttr>(i, "dtc.chunk"))
      tag[argBase + i] = c.getInt();
  // Free ops: computed from constants and arguments of no chunk alone (a
  // dropout key's offset, a constant). Under the interleaved schedule each
  // chunk's functions build their own copy of those they read (CSE may
  // have merged the copies of different chunks).
  llvm::DenseSet<Operation *> free;
  for (Operation *op : ops) {
    // (Constants count whatever chunk they were built for: the
    // canonicalizer keeps one of equal constants.)
    // (A collective is run once, by the chunk that needs it; taking a
    // rank's block communicates nothing.)
    if (op->getNumRegions() != 0 ||
        (op->hasAttr("dtc.chunk") && op->getNumOperands() != 0) ||
        (isa<dist::DistDialect>(op->getDialect()) &&
         !isa<dist::LocalBlockOp>(op)))
      continue;
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          if (auto arg = dyn_cast<BlockArgument>(v))
            return tag[argBase + arg.getArgNumber()] < 0;
          return free.contains(v.getDefiningOp());
        }))
      free.insert(op);
  }
  auto isFree = [&](Operation *op) { return free.contains(op); };
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (auto c = op->getAttrOfType<IntegerAttr>("dtc.chunk"); c && !isFree(op))
      tag[i] = c.getInt();
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          if (arg.getOwner() == &body && tag[argBase + arg.getArgNumber()] >= 0)
            unite(unsigned(i), argBase + arg.getArgNumber());
          continue;
        }
        // (Constants are built again by each chunk that reads one.)
        if (Operation *def = v.getDefiningOp();
            def && index.count(def) && !isFree(def))
          unite(unsigned(i), index[def]);
      }
    });
  }
  llvm::DenseMap<unsigned, int64_t> chunkOfSet;
  for (unsigned i = 0; i < parent.size(); ++i) {
    if (tag[i] < 0)
      continue;
    auto [it, inserted] = chunkOfSet.try_emplace(find(i), tag[i]);
    if (!inserted && it->second != tag[i]) {
      // Name a meeting point: an op of the component that reads both.
      Location where = micro.getLoc();
      std::string what = "an argument";
      if (i < ops.size()) {
        where = ops[i]->getLoc();
        what = ops[i]->getName().getStringRef().str();
      }
      return mlir::emitError(where, "model chunks ")
             << it->second << " and " << tag[i]
             << " of this stage share values (" << what << " of chunk "
             << tag[i]
             << " is connected to the other's; a parameter both read, "
                "whose gradients are summed, say): the interleaved "
                "schedule runs them separately; use --schedule 1f1b";
    }
  }
  for (auto [i, op] : llvm::enumerate(ops)) {
    auto it = chunkOfSet.find(find(unsigned(i)));
    chunkOf[op] = isFree(op) ? kFree : it == chunkOfSet.end() ? 0 : it->second;
  }
  return chunkOf;
}

/// Cuts chunk `chunk` of @micro_step (the ops `chunkOf` gives it; its
/// results those `owned` marks) into a forward and a backward function,
/// named with `suffix`.
FailureOr<Halves>
splitMicroStep(func::FuncOp micro,
               const llvm::DenseMap<Operation *, int64_t> &chunkOf,
               int64_t chunk, ArrayRef<bool> owned, StringRef suffix) {
  MLIRContext *ctx = micro.getContext();
  Block &body = micro.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  auto inChunk = [&](Operation *op) { return chunkOf.lookup(op) == chunk; };
  // Clones `op`, first cloning the constants (free ops) it reads that the
  // function has not built yet.
  // The arguments `op` reads, through the free ops it reads too.
  llvm::DenseSet<Operation *> visited;
  std::function<void(Operation *, llvm::SetVector<unsigned> &)> argsRead =
      [&](Operation *op, llvm::SetVector<unsigned> &out) {
        op->walk([&](Operation *inner) {
          for (Value v : inner->getOperands()) {
            if (auto arg = dyn_cast<BlockArgument>(v)) {
              if (arg.getOwner() == &body)
                out.insert(arg.getArgNumber());
              continue;
            }
            Operation *def = v.getDefiningOp();
            if (def->getBlock() == &body && chunkOf.lookup(def) == kFree &&
                visited.insert(def).second)
              argsRead(def, out);
          }
        });
      };
  std::function<void(OpBuilder &, Operation &, IRMapping &)> cloneInto =
      [&](OpBuilder &b, Operation &op, IRMapping &map) {
        op.walk([&](Operation *inner) {
          for (Value v : inner->getOperands())
            if (Operation *def = v.getDefiningOp();
                def && def->getBlock() == &body &&
                chunkOf.lookup(def) == kFree && !map.contains(v))
              cloneInto(b, *def, map);
        });
        b.clone(op, map);
      };
  // The backward: ops marked as the reverse sweep, what reads the
  // cotangents, and everything that reads a backward value.
  llvm::DenseSet<Value> backwardValues;
  for (unsigned i = 0; i < micro.getNumArguments(); ++i)
    if (auto role = micro.getArgAttrOfType<StringAttr>(i, kRole);
        role && role.getValue() == "cotangent")
      backwardValues.insert(body.getArgument(i));
  llvm::SetVector<Operation *> backward;
  for (Operation &op : body.without_terminator()) {
    if (!inChunk(&op))
      continue;
    bool isBackward =
        op.hasAttr(kBackward) || llvm::any_of(op.getOperands(), [&](Value v) {
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
    if (inChunk(&op) && !backward.contains(&op) && op.getNumOperands() == 0 &&
        op.getNumRegions() == 0 && !op.use_empty() &&
        llvm::all_of(op.getUsers(),
                     [&](Operation *u) { return backward.contains(u); }))
      backward.insert(&op);

  Halves h;
  // Results: each half returns what it computes (arguments: the forward).
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!owned[i])
      continue;
    Operation *def = v.getDefiningOp();
    (def && backward.contains(def) ? h.backwardResults : h.forwardResults)
        .push_back(i);
  }
  // What the backward reads from outside itself: arguments and saved
  // forward values.
  bool backwardFromOtherChunk = false;
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
        if (def->getBlock() == &body && chunkOf.lookup(def) == kFree) {
          llvm::SetVector<unsigned> through;
          visited.clear();
          argsRead(def, through);
          args.insert(through.begin(), through.end());
          continue;
        }
        if (def->getBlock() == &body && !backward.contains(def)) {
          if (!inChunk(def))
            return (void)(backwardFromOtherChunk = true);
          saved.insert(v);
        }
      }
    });
  if (backwardFromOtherChunk)
    return micro.emitError("the backward of model chunk ")
           << chunk << " reads another chunk's forward value";
  // (A result the backward returns may be an argument or forward value.)
  h.backwardArgs.assign(args.begin(), args.end());
  llvm::sort(h.backwardArgs);
  h.numSaved = saved.size();

  OpBuilder top(micro);
  auto roleAttrs = [&](StringRef role) {
    return DictionaryAttr::get(ctx,
                               {NamedAttribute(StringAttr::get(ctx, kRole),
                                               StringAttr::get(ctx, role))});
  };

  // @micro_forward: the arguments its ops read (or it returns); the
  // forward results, then the saved values.
  {
    llvm::SetVector<unsigned> used;
    visited.clear();
    for (Operation &op : body.without_terminator())
      if (inChunk(&op) && !backward.contains(&op))
        argsRead(&op, used);
    for (unsigned i : h.forwardResults) {
      Value v = ret.getOperand(i);
      if (auto arg = dyn_cast<BlockArgument>(v))
        used.insert(arg.getArgNumber());
      else if (chunkOf.lookup(v.getDefiningOp()) == kFree)
        argsRead(v.getDefiningOp(), used);
    }
    h.forwardArgs.assign(used.begin(), used.end());
    llvm::sort(h.forwardArgs);
    SmallVector<Type> inTypes;
    SmallVector<DictionaryAttr> inAttrs;
    ArrayRef<unsigned> kept = h.forwardArgs;
    for (unsigned i : kept) {
      inTypes.push_back(micro.getArgument(i).getType());
      inAttrs.push_back(micro.getArgAttrDict(i));
    }
    auto f = top.create<func::FuncOp>(micro.getLoc(),
                                      ("micro_forward" + suffix).str(),
                                      FunctionType::get(ctx, inTypes, {}));
    f.setPrivate();
    f.setAllArgAttrs(inAttrs);
    Block *entry = f.addEntryBlock();
    IRMapping map;
    for (auto [k, i] : llvm::enumerate(kept))
      map.map(body.getArgument(i), entry->getArgument(k));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (inChunk(&op) && !backward.contains(&op))
        cloneInto(b, op, map);
    for (unsigned i : h.forwardResults)
      if (Operation *def = ret.getOperand(i).getDefiningOp();
          def && chunkOf.lookup(def) == kFree &&
          !map.contains(def->getResult(0)))
        cloneInto(b, *def, map);
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
    auto f = top.create<func::FuncOp>(micro.getLoc(),
                                      ("micro_backward" + suffix).str(),
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
        cloneInto(b, op, map);
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
  if (schedule != "gpipe" && schedule != "1f1b" && schedule != "interleaved")
    return (void)(module.emitError("the pipeline schedule must be gpipe, "
                                   "1f1b or interleaved, got '")
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

  int64_t chunks = virtualStages;
  if (chunks < 1)
    return (void)(module.emitError("virtual stages must be positive, got ")
                  << chunks),
           signalPassFailure();
  FailureOr<llvm::DenseMap<Operation *, int64_t>> chunkOf =
      chunkOfOps(micro, chunks);
  if (failed(chunkOf))
    return signalPassFailure();
  // Each result belongs to the chunk that computes it (an argument
  // returned as is, to the first).
  auto microRet = cast<func::ReturnOp>(micro.getBody().front().getTerminator());
  std::vector<Halves> halves;
  for (int64_t c = 0; c < chunks; ++c) {
    SmallVector<bool> owned;
    for (Value v : microRet.getOperands()) {
      // (An argument passed on as is belongs to its chunk.)
      Operation *def = v.getDefiningOp();
      int64_t owner = 0;
      if (def)
        owner = chunkOf->lookup(def);
      else if (auto c = micro.getArgAttrOfType<IntegerAttr>(
                   cast<BlockArgument>(v).getArgNumber(), "dtc.chunk"))
        owner = c.getInt();
      owned.push_back((owner == kFree ? 0 : owner) == c);
    }
    std::string suffix = chunks > 1 ? "_chunk" + std::to_string(c) : "";
    FailureOr<Halves> h = splitMicroStep(micro, *chunkOf, c, owned, suffix);
    if (failed(h))
      return signalPassFailure();
    halves.push_back(std::move(*h));
  }

  // The schedule: (kind, chunk, micro-batch), kind 0 forward, 1 backward.
  int64_t m = calls.size();
  using Unit = std::tuple<int, int64_t, int64_t>;
  SmallVector<Unit> order;
  if (schedule == "gpipe") {
    for (int64_t k = 0; k < m; ++k)
      order.push_back({0, 0, k});
    for (int64_t k = 0; k < m; ++k)
      order.push_back({1, 0, k});
  } else if (schedule == "1f1b") {
    int64_t warm = std::min<int64_t>(stages - stage - 1, m);
    for (int64_t k = 0; k < warm; ++k)
      order.push_back({0, 0, k});
    for (int64_t i = 0; i < m - warm; ++i) {
      order.push_back({0, 0, warm + i});
      order.push_back({1, 0, i});
    }
    for (int64_t k = m - warm; k < m; ++k)
      order.push_back({1, 0, k});
  } else {
    // Interleaved 1F1B (Narayanan et al. 2021): forward unit i is chunk
    // (i / p) mod V of micro-batch (i / (p V)) p + i mod p; backward units
    // take the chunks in reverse. Stage s warms up with 2 (p - s - 1) +
    // (V - 1) p forwards (every one when m = p).
    if (m % stages != 0)
      return (void)(module.emitError("the interleaved schedule needs the "
                                     "micro-batches per step (")
                    << m << ") to be a multiple of pp (" << int64_t(stages)
                    << ")"),
             signalPassFailure();
    int64_t total = m * chunks;
    auto unit = [&](int64_t i, bool forward) -> Unit {
      int64_t inGroup = i % (stages * chunks);
      int64_t c = inGroup / stages;
      int64_t k = (i / (stages * chunks)) * stages + i % stages;
      return {forward ? 0 : 1, forward ? c : chunks - 1 - c, k};
    };
    int64_t warm =
        m == stages
            ? total
            : std::min(total, (stages - stage - 1) * 2 + (chunks - 1) * stages);
    for (int64_t i = 0; i < warm; ++i)
      order.push_back(unit(i, true));
    for (int64_t i = 0; i < total - warm; ++i) {
      order.push_back(unit(warm + i, true));
      order.push_back(unit(i, false));
    }
    for (int64_t i = total - warm; i < total; ++i)
      order.push_back(unit(i, false));
  }
  std::map<Unit, double> slotOf;
  for (auto [i, entry] : llvm::enumerate(order))
    slotOf[entry] = double(i);

  // Each call becomes a forward and a backward call per chunk.
  llvm::DenseMap<Operation *, double> slot;
  Builder attrs(&getContext());
  for (auto [k, call] : llvm::enumerate(calls)) {
    OpBuilder b(call);
    for (auto [c, h] : llvm::enumerate(halves)) {
      SmallVector<Value> forwardOperands;
      for (unsigned i : h.forwardArgs)
        forwardOperands.push_back(call.getOperand(i));
      auto f =
          b.create<func::CallOp>(call.getLoc(), h.forward, forwardOperands);
      SmallVector<Value> backwardOperands;
      for (unsigned i : h.backwardArgs)
        backwardOperands.push_back(call.getOperand(i));
      unsigned numForward = h.forwardResults.size();
      for (unsigned s = 0; s < h.numSaved; ++s)
        backwardOperands.push_back(f.getResult(numForward + s));
      auto bw =
          b.create<func::CallOp>(call.getLoc(), h.backward, backwardOperands);
      for (auto [j, r] : llvm::enumerate(h.forwardResults))
        call.getResult(r).replaceAllUsesWith(f.getResult(j));
      for (auto [j, r] : llvm::enumerate(h.backwardResults))
        call.getResult(r).replaceAllUsesWith(bw.getResult(j));
      for (auto [call2, kind] : {std::make_pair(f, 0), std::make_pair(bw, 1)}) {
        call2->setAttr(pipeline::kPipelineOp,
                       attrs.getStringAttr(kind == 0 ? "F" : "B"));
        call2->setAttr(pipeline::kMicroBatch, attrs.getI64IntegerAttr(k));
        call2->setAttr(pipeline::kChunk, attrs.getI64IntegerAttr(c));
        slot[call2] = slotOf[Unit{kind, int64_t(c), int64_t(k)}];
      }
    }
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
  // What a micro-batch's sends read (their operands made whole over tp,
  // say) goes with that micro-batch's call too.
  llvm::DenseSet<Operation *> feedsTransfer;
  for (Operation *op : llvm::reverse(ops))
    if ((isa<dist::SendOp>(op) && op->hasAttr("dtc.micro_batch_transfer")) ||
        llvm::any_of(op->getUsers(), [&](Operation *user) {
          return feedsTransfer.contains(user);
        }))
      feedsTransfer.insert(op);
  double lastCall = double(order.size());
  SmallVector<std::pair<double, unsigned>> keys;
  // What an op placed after its operands follows: the latest slot they are
  // placed at or follow. Every op after a call takes that call's slot +
  // 0.25, however long the chain from the call: the sends of a call's
  // results keep the order they were written in (the peer receives them
  // in that order), also where one of them reads a collective first.
  llvm::DenseMap<Operation *, double> follows;
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (!slot.count(op)) {
      double s;
      if (firstConsumer[op] != kNone) {
        s = firstConsumer[op] - 0.25;
      } else {
        double after = -1.25;
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp(); def && slot.count(def)) {
            auto it = follows.find(def);
            after =
                std::max(after, it != follows.end() ? it->second : slot[def]);
          }
        s = after + 0.25;
        // After the last call, the model's order stands (it is the order
        // every stage wrote its transfers in).
        // (Only the sends of a micro-batch's activations and their
        // gradients, and what they read, travel with their call; the sums
        // of tied parameters' gradients wait for every call, as every
        // stage wrote them.)
        bool collective = isa<dist::DistDialect>(op->getDialect()) &&
                          !feedsTransfer.contains(op);
        if (collective || s > lastCall - 1)
          s = lastCall;
        follows[op] = s - 0.25;
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
