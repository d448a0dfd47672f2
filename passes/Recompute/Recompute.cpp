//===- Recompute.cpp - recompute forward values in the backward ----------===//

#include "passes/Recompute/Passes.h"

#include "passes/Analysis/CostModel.h"
#include "passes/Memory/Passes.h"
#include "passes/Recompute/RecomputePolicy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "dtc-recompute"

namespace mlir::dtc {
#define GEN_PASS_DEF_RECOMPUTEPASS
#include "passes/Recompute/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::recompute;

namespace {
enum class Mode { None, Full, Selective, Auto };

std::optional<Mode> parseMode(StringRef text) {
  return llvm::StringSwitch<std::optional<Mode>>(text)
      .Case("none", Mode::None)
      .Case("full", Mode::Full)
      .Case("selective", Mode::Selective)
      .Case("auto", Mode::Auto)
      .Default(std::nullopt);
}

/// "N bytes (G GiB)", as users give limits in GiB.
std::string formatBytes(int64_t bytes) {
  return llvm::formatv("{0} bytes ({1} GiB)", bytes,
                       llvm::format("%.6g", double(bytes) / (1 << 30)))
      .str();
}

int64_t bytesOf(TypeRange types) {
  int64_t bytes = 0;
  for (Type t : types)
    if (auto tensor = dyn_cast<RankedTensorType>(t);
        tensor && tensor.hasStaticShape())
      bytes += memory::byteSize(tensor);
  return bytes;
}

/// The whole peak of a planned module, as plan.json's memory_bytes.peak
/// (compiler/Plan/PlanJson.cpp): the entry function's (@train_step, else
/// `fallback`) arguments and the results not written over donated
/// arguments, the results of @eval_step (which shares
/// the arguments and the arena) and the larger of their arenas, callees
/// included.
FailureOr<int64_t> planPeak(ModuleOp module, StringRef fallback) {
  auto entry = module.lookupSymbol<func::FuncOp>("train_step");
  if (!entry)
    entry = module.lookupSymbol<func::FuncOp>(fallback);
  if (!entry)
    return failure();
  auto arena = entry->getAttrOfType<IntegerAttr>(memory::kArenaBytes);
  if (!arena)
    return failure();
  int64_t peak = bytesOf(entry.getArgumentTypes()) +
                 memory::ownResultBytes(entry) + arena.getInt();
  if (auto eval = module.lookupSymbol<func::FuncOp>("eval_step")) {
    auto evalArena = eval->getAttrOfType<IntegerAttr>(memory::kArenaBytes);
    if (evalArena && evalArena.getInt() > arena.getInt())
      peak += evalArena.getInt() - arena.getInt();
    peak += bytesOf(eval.getResultTypes());
  }
  return peak;
}

struct RecomputePass : public dtc::impl::RecomputePassBase<RecomputePass> {
  using RecomputePassBase::RecomputePassBase;

  /// The whole peak if `func` recomputes `recomputed`: the rewrite and
  /// dtc-plan-memory run on a copy of the module.
  FailureOr<int64_t> peakWith(func::FuncOp func, const OpSet &recomputed) {
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(func.getBody().front()))
      position[&op] = i;
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(getOperation()->clone()));
    auto copyFunc = copy->lookupSymbol<func::FuncOp>(func.getSymName());
    SmallVector<Operation *> byPosition;
    for (Operation &op : copyFunc.getBody().front())
      byPosition.push_back(&op);
    OpSet copied;
    for (Operation *op : recomputed)
      copied.insert(byPosition[position.lookup(op)]);
    applyRecompute(copyFunc, copied);
    PassManager pm(&getContext());
    pm.enableVerifier(false);
    pm.addPass(createPlanMemoryPass());
    if (failed(pm.run(*copy)))
      return failure();
    FailureOr<int64_t> peak = planPeak(*copy, func.getSymName());
    LLVM_DEBUG(llvm::dbgs() << func.getSymName() << ": " << recomputed.size()
                            << " ops recomputed, peak "
                            << (succeeded(peak) ? *peak : -1) << "\n");
    return peak;
  }

  /// The cheapest set that fits the limit: units (each layer's selective
  /// set, each whole layer) in order of saved bytes per recompute second.
  /// Fails with an error naming the smallest peak reached.
  FailureOr<OpSet> chooseAuto(func::FuncOp func, const ForwardInfo &info) {
    FailureOr<int64_t> none = peakWith(func, {});
    if (failed(none))
      return failure();
    if (*none <= memoryLimit)
      return OpSet();
    std::string error;
    FailureOr<DeviceProfile> profile = loadDeviceProfile("cpu", error);
    if (failed(profile)) {
      func.emitError("recompute auto: ") << error;
      return failure();
    }

    struct Unit {
      OpSet ops;
      double bytes = 0, seconds = 0;
    };
    SmallVector<Unit> units;
    OpSet full = fullSet(info), selective = selectiveSet(func, info);
    int64_t base = savedBytes(func, {});
    auto addUnit = [&](const OpSet &from, int layer) {
      Unit unit;
      for (Operation *op : from)
        if (info.layer.lookup(op) == layer)
          unit.ops.insert(op);
      if (unit.ops.empty())
        return;
      unit.bytes = double(base - savedBytes(func, unit.ops));
      for (Operation *op : neededOps(func, unit.ops))
        unit.seconds += estimateOpSeconds(op, *profile);
      if (unit.bytes > 0)
        units.push_back(std::move(unit));
    };
    for (int layer = -1; layer < int(info.layerNames.size()); ++layer)
      addUnit(selective, layer);
    for (int layer = 0; layer < int(info.layerNames.size()); ++layer)
      addUnit(full, layer);
    llvm::stable_sort(units, [](const Unit &a, const Unit &b) {
      // a.bytes / a.seconds > b.bytes / b.seconds, with 0 s first.
      return a.bytes * b.seconds > b.bytes * a.seconds;
    });

    OpSet chosen;
    int64_t smallest = *none;
    for (const Unit &unit : units) {
      chosen.insert(unit.ops.begin(), unit.ops.end());
      FailureOr<int64_t> peak = peakWith(func, chosen);
      if (failed(peak))
        return failure();
      if (*peak <= memoryLimit)
        return chosen;
      smallest = std::min(smallest, *peak);
    }
    func.emitError("no recompute choice fits the memory limit of ")
        << formatBytes(memoryLimit) << ": the smallest peak it reaches is "
        << formatBytes(smallest);
    return failure();
  }

  /// Fails with an error if `recomputed` does not fit the limit.
  LogicalResult checkFits(func::FuncOp func, const ForwardInfo &info,
                          const OpSet &recomputed) {
    FailureOr<int64_t> peak = peakWith(func, recomputed);
    if (failed(peak))
      return failure();
    if (*peak <= memoryLimit)
      return success();
    // The smallest of full, selective and both.
    OpSet full = fullSet(info), selective = selectiveSet(func, info);
    OpSet both = full;
    both.insert(selective.begin(), selective.end());
    int64_t smallest = *peak;
    for (const OpSet *set : {&full, &selective, &both}) {
      FailureOr<int64_t> other = peakWith(func, *set);
      if (failed(other))
        return failure();
      smallest = std::min(smallest, *other);
    }
    return func.emitError("with recompute mode '")
           << mode << "' the peak is " << formatBytes(*peak)
           << ", over the memory limit of " << formatBytes(memoryLimit)
           << "; the smallest peak recompute reaches is "
           << formatBytes(smallest);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Mode> parsed = parseMode(mode);
    if (!parsed) {
      module.emitError("unknown recompute mode '")
          << mode << "': expected none, full, selective or auto";
      return signalPassFailure();
    }
    if (memoryLimit < 0) {
      module.emitError("the memory limit must not be negative, got ")
          << memoryLimit;
      return signalPassFailure();
    }
    if (*parsed == Mode::Auto && memoryLimit == 0) {
      module.emitError("recompute mode 'auto' needs a memory limit");
      return signalPassFailure();
    }

    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (hasBackward(func))
        funcs.push_back(func);
    double flops = 0;
    for (func::FuncOp func : funcs) {
      ForwardInfo info = analyzeForward(func);
      OpSet chosen;
      switch (*parsed) {
      case Mode::None:
        break;
      case Mode::Full:
        chosen = fullSet(info);
        break;
      case Mode::Selective:
        chosen = selectiveSet(func, info);
        break;
      case Mode::Auto: {
        FailureOr<OpSet> best = chooseAuto(func, info);
        if (failed(best))
          return signalPassFailure();
        chosen = std::move(*best);
        break;
      }
      }
      if (*parsed != Mode::Auto && memoryLimit > 0 &&
          failed(checkFits(func, info, chosen)))
        return signalPassFailure();
      for (Operation *clone : applyRecompute(func, chosen))
        flops += estimateOpCost(clone).flops;
    }
    Builder b(&getContext());
    module->setAttr(kMode, b.getStringAttr(mode));
    module->setAttr(kFlops, b.getF64FloatAttr(flops));
  }
};
} // namespace
