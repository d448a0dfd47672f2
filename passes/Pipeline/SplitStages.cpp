//===- SplitStages.cpp - the forward model cut into pipeline stages -------===//
//
// See Passes.td (SplitStagesPass).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipeline/Passes.h"

#include "passes/Analysis/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mlir::dtc {
#define GEN_PASS_DEF_SPLITSTAGESPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kRole = "dtg.role", kName = "dtg.name";

int64_t bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

struct SplitStagesPass
    : public dtc::impl::SplitStagesPassBase<SplitStagesPass> {
  using SplitStagesPassBase::SplitStagesPassBase;
  void runOnOperation() override;
};

/// Chooses N - 1 cut positions in `cost` (ops in order; a cut at i puts ops
/// [.., i) before it): each near its balanced point k * total / N, the one
/// with the fewest boundary bytes within a tenth of a stage's time of it.
SmallVector<size_t> chooseCuts(ArrayRef<double> cost, ArrayRef<int64_t> bytes,
                               int64_t n) {
  size_t ops = cost.size();
  SmallVector<double> prefix(ops + 1, 0);
  for (size_t i = 0; i < ops; ++i)
    prefix[i + 1] = prefix[i] + cost[i];
  double total = prefix[ops], per = total / double(n);
  SmallVector<size_t> cuts;
  size_t previous = 0;
  for (int64_t k = 1; k < n; ++k) {
    double target = per * double(k);
    // Stages after this one each need an op of their own.
    size_t last = ops - size_t(n - k);
    size_t best = 0;
    double bestDistance = 0;
    int64_t bestBytes = 0;
    for (size_t i = previous + 1; i <= last; ++i) {
      double distance = std::fabs(prefix[i] - target);
      bool inWindow = distance <= 0.1 * per;
      bool better;
      if (best == 0)
        better = true;
      else if (inWindow && std::fabs(prefix[best] - target) <= 0.1 * per)
        better = bytes[i] < bestBytes ||
                 (bytes[i] == bestBytes && distance < bestDistance);
      else
        better = distance < bestDistance;
      if (better) {
        best = i;
        bestDistance = distance;
        bestBytes = bytes[i];
      }
    }
    cuts.push_back(best);
    previous = best;
  }
  return cuts;
}
} // namespace

void SplitStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return (void)module.emitError("the module has no @main to cut into "
                                  "pipeline stages"),
           signalPassFailure();
  if (stages < 1)
    return (void)(main.emitError("pipeline stages must be positive, got ")
                  << int64_t(stages)),
           signalPassFailure();
  if (virtualStages < 1)
    return (void)(main.emitError("virtual stages must be positive, got ")
                  << int64_t(virtualStages)),
           signalPassFailure();
  // The model is cut into pp x V chunks; rank r runs chunks r, r + pp, ...
  int64_t chunks = stages * virtualStages;
  Block &body = main.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // Ops computed from parameters and constants alone are copied into each
  // stage that reads them; the others (they depend on the data) are cut.
  llvm::DenseSet<Value> fixed;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto role = main.getArgAttrOfType<StringAttr>(i, kRole);
    if (!role || role.getValue() != "input")
      fixed.insert(body.getArgument(i));
  }
  SmallVector<Operation *> cut;
  llvm::DenseSet<Operation *> copied;
  for (Operation &op : body.without_terminator()) {
    if (llvm::all_of(op.getOperands(),
                     [&](Value v) { return fixed.contains(v); })) {
      copied.insert(&op);
      for (Value r : op.getResults())
        fixed.insert(r);
      continue;
    }
    cut.push_back(&op);
  }

  std::string profileError;
  FailureOr<DeviceProfile> profile = loadDeviceProfile("cpu", profileError);
  if (failed(profile))
    return (void)(main.emitError("the cpu device profile: ") << profileError),
           signalPassFailure();
  SmallVector<double> cost;
  int64_t working = 0;
  for (Operation *op : cut) {
    cost.push_back(estimateOpSeconds(op, *profile));
    if (isKernelOp(op) && cost.back() > 0)
      ++working;
  }
  if (working < chunks)
    return (void)(main.emitError("pp=")
                  << int64_t(stages)
                  << (virtualStages > 1
                          ? " with " + std::to_string(virtualStages) +
                                " virtual stages"
                          : std::string())
                  << " asks for more pipeline stages than the model allows: "
                  << "it has " << working
                  << " ops that compute on the data, and each of the " << chunks
                  << " stages needs at least one"),
           signalPassFailure();

  // Bytes crossing a cut at each position: a value defined by cut op d and
  // read by cut ops up to u (or the results) crosses cuts d+1 .. u.
  llvm::DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(cut))
    position[op] = i;
  SmallVector<int64_t> delta(cut.size() + 2, 0);
  for (auto [d, op] : llvm::enumerate(cut))
    for (Value r : op->getResults()) {
      size_t last = d;
      for (Operation *user : r.getUsers())
        last =
            std::max(last, user == ret.getOperation() ? cut.size()
                                                      : position.lookup(user));
      if (last > d) {
        delta[d + 1] += bytesOf(r);
        delta[last + 1] -= bytesOf(r);
      }
    }
  SmallVector<int64_t> crossing(cut.size() + 1, 0);
  int64_t running = 0;
  for (size_t i = 0; i <= cut.size(); ++i)
    crossing[i] = running += delta[i];
  SmallVector<size_t> cuts = chooseCuts(cost, crossing, chunks);

  // The stage of each cut op.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  SmallVector<double> seconds(chunks, 0);
  {
    int64_t s = 0;
    for (auto [i, op] : llvm::enumerate(cut)) {
      while (s < int64_t(cuts.size()) && i >= cuts[s])
        ++s;
      stageOf[op] = s;
      seconds[s] += cost[i];
    }
  }
  auto stageOfUser = [&](Operation *user) -> int64_t {
    if (user == ret.getOperation())
      return chunks - 1;
    auto it = stageOf.find(user);
    return it == stageOf.end() ? -1 : it->second;
  };
  // The last stage that reads each cut value (through copied ops too: they
  // read only fixed values, so none reads a cut value).
  // boundary[s]: the values computed in stages <= s that a stage > s reads,
  // in order of definition.
  SmallVector<SmallVector<Value>> boundary(chunks);
  for (Operation *op : cut)
    for (Value r : op->getResults()) {
      int64_t lastUse = -1;
      for (Operation *user : r.getUsers())
        lastUse = std::max(lastUse, stageOfUser(user));
      for (int64_t s = stageOf[op]; s < lastUse; ++s)
        boundary[s].push_back(r);
    }

  // Each stage's ops: its cut ops, and the copied ops they (or the
  // results, on the last stage) read; and the model arguments it reads.
  SmallVector<llvm::SetVector<Operation *>> neededOf(chunks);
  SmallVector<SmallVector<unsigned>> argsOf(chunks);
  for (int64_t s = 0; s < chunks; ++s) {
    llvm::SetVector<Operation *> &needed = neededOf[s];
    std::function<void(Value)> need = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || !copied.contains(def) || needed.contains(def))
        return;
      for (Value operand : def->getOperands())
        need(operand);
      needed.insert(def);
    };
    SmallVector<Operation *> own;
    for (Operation *op : cut)
      if (stageOf[op] == s)
        own.push_back(op);
    for (Operation *op : own)
      for (Value v : op->getOperands())
        need(v);
    if (s == chunks - 1)
      for (Value v : ret.getOperands())
        need(v);
    llvm::SetVector<unsigned> args;
    auto useArg = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body)
        args.insert(arg.getArgNumber());
    };
    for (Operation *op :
         llvm::concat<Operation *const>(needed.getArrayRef(), ArrayRef(own)))
      for (Value v : op->getOperands())
        useArg(v);
    if (s == chunks - 1) {
      for (Value v : ret.getOperands())
        useArg(v);
      // Data inputs no op reads (the labels of a loss that --loss
      // appends) go to the last stage, where the loss is.
      for (unsigned i = 0; i < main.getNumArguments(); ++i) {
        auto role = main.getArgAttrOfType<StringAttr>(i, kRole);
        if (role && role.getValue() == "input" &&
            body.getArgument(i).use_empty())
          args.insert(i);
      }
    }
    argsOf[s].assign(args.begin(), args.end());
    llvm::sort(argsOf[s]);
  }
  // The stages that read each argument (a parameter read by two is tied:
  // their gradients are summed).
  llvm::DenseMap<unsigned, SmallVector<int64_t>> readers;
  for (int64_t s = 0; s < chunks; ++s)
    for (unsigned i : argsOf[s])
      if (!llvm::is_contained(readers[i], s % stages))
        readers[i].push_back(s % stages);
  for (auto &[i, list] : readers)
    llvm::sort(list);

  // Build each rank's function: its chunks, in order.
  OpBuilder top(ctx);
  top.setInsertionPoint(main);
  // An activation passed between stages: its name, role and chunk, and
  // where it was made (dtc.source, the producing op's location: its ONNX
  // node names the transfers in traces and diagnostics).
  auto activationAttrs = [&](int64_t from, size_t k, int64_t chunk) {
    std::string name =
        "stage" + std::to_string(from) + ".out" + std::to_string(k);
    return DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, kName),
                             StringAttr::get(ctx, name)),
              NamedAttribute(StringAttr::get(ctx, kRole),
                             StringAttr::get(ctx, "activation")),
              NamedAttribute(StringAttr::get(ctx, pipeline::kChunk),
                             top.getI64IntegerAttr(chunk)),
              NamedAttribute(StringAttr::get(ctx, pipeline::kSource),
                             LocationAttr(boundary[from][k].getLoc()))});
  };
  for (int64_t r = 0; r < stages; ++r) {
    SmallVector<int64_t> mine;
    for (int64_t v = 0; v < virtualStages; ++v)
      mine.push_back(r + v * stages);
    llvm::SetVector<Operation *> needed;
    llvm::SetVector<unsigned> argSet;
    for (int64_t c : mine) {
      needed.insert(neededOf[c].begin(), neededOf[c].end());
      argSet.insert(argsOf[c].begin(), argsOf[c].end());
    }
    SmallVector<unsigned> argList(argSet.begin(), argSet.end());
    llvm::sort(argList);

    SmallVector<Type> inTypes;
    SmallVector<DictionaryAttr> inAttrs;
    for (unsigned i : argList) {
      inTypes.push_back(main.getArgument(i).getType());
      NamedAttrList attrs(main.getArgAttrDict(i));
      if (readers[i].size() > 1)
        attrs.set("dtc.pipeline_stages_using",
                  DenseI64ArrayAttr::get(ctx, readers[i]));
      inAttrs.push_back(attrs.getDictionary(ctx));
    }
    IRMapping map;
    SmallVector<std::pair<Value, unsigned>> incoming;
    for (auto [v, c] : llvm::enumerate(mine))
      if (c > 0)
        for (auto [k, value] : llvm::enumerate(boundary[c - 1])) {
          incoming.push_back({value, inTypes.size()});
          inTypes.push_back(value.getType());
          inAttrs.push_back(activationAttrs(c - 1, k, int64_t(v)));
        }
    auto func = top.create<func::FuncOp>(main.getLoc(),
                                         ("main_stage" + std::to_string(r)),
                                         FunctionType::get(ctx, inTypes, {}));
    func.setAllArgAttrs(inAttrs);
    Block *entry = func.addEntryBlock();
    for (auto [k, i] : llvm::enumerate(argList))
      map.map(body.getArgument(i), entry->getArgument(k));
    // (A value passed on by a chunk arrives once per chunk that reads it;
    // each chunk reads its own.)
    OpBuilder builder = OpBuilder::atBlockEnd(entry);
    // Ops of parameters alone: once for the stage, or under the interleaved
    // schedule once per chunk that reads them (chunks run apart).
    if (virtualStages == 1)
      for (Operation &op : body.without_terminator())
        if (needed.contains(&op))
          builder.clone(op, map);
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> outAttrs;
    for (auto [v, c] : llvm::enumerate(mine)) {
      IRMapping chunkMap = map;
      if (c > 0)
        for (auto [value, index] : incoming)
          if (func.getArgAttrOfType<IntegerAttr>(index, pipeline::kChunk)
                  .getInt() == int64_t(v))
            chunkMap.map(value, entry->getArgument(index));
      if (virtualStages > 1)
        for (Operation &op : body.without_terminator())
          if (neededOf[c].contains(&op))
            builder.clone(op, chunkMap)
                ->setAttr(pipeline::kChunk, top.getI64IntegerAttr(v));
      for (Operation *op : cut)
        if (stageOf[op] == c) {
          Operation *clone = builder.clone(*op, chunkMap);
          if (virtualStages > 1)
            clone->setAttr(pipeline::kChunk, top.getI64IntegerAttr(v));
        }
      if (c == chunks - 1) {
        for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
          results.push_back(chunkMap.lookup(value));
          NamedAttrList attrs(main.getResultAttrDict(i));
          attrs.set(pipeline::kChunk, top.getI64IntegerAttr(v));
          outAttrs.push_back(attrs.getDictionary(ctx));
        }
      } else {
        for (auto [k, value] : llvm::enumerate(boundary[c])) {
          results.push_back(chunkMap.lookup(value));
          outAttrs.push_back(activationAttrs(c, k, int64_t(v)));
          auto type = dyn_cast<RankedTensorType>(value.getType());
          if (type && type.getRank() == 0)
            return (void)(func.emitError("stage ")
                          << c << " would send a scalar to the next stage, "
                          << "which has no sample axis to split "
                             "micro-batches by"),
                   signalPassFailure();
        }
      }
    }
    builder.create<func::ReturnOp>(main.getLoc(), results);
    func.setFunctionType(
        FunctionType::get(ctx, inTypes, ValueRange(results).getTypes()));
    func.setAllResultAttrs(outAttrs);
    func->setAttr(pipeline::kStage, top.getI64IntegerAttr(r));
    double total = 0;
    for (int64_t c : mine)
      total += seconds[c];
    func->setAttr(pipeline::kStageSeconds, top.getF64FloatAttr(total));
  }
  main.erase();
  module->setAttr(pipeline::kStages, top.getI64IntegerAttr(stages));
}
