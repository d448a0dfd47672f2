//===- PlanJson.cpp - plan.json of a compiled step -----------------------===//

#include "compiler/Plan/PlanJson.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::dtc;
using llvm::json::Array;
using llvm::json::Object;

static StringRef argRole(func::FuncOp f, unsigned i) {
  auto s = f.getArgAttrOfType<StringAttr>(i, "dtg.role");
  return s ? s.getValue() : "";
}
static StringRef argName(func::FuncOp f, unsigned i) {
  auto s = f.getArgAttrOfType<StringAttr>(i, "dtg.name");
  return s ? s.getValue() : "";
}

static int64_t arenaOf(func::FuncOp f) {
  auto a =
      f ? f->getAttrOfType<IntegerAttr>(memory::kArenaBytes) : IntegerAttr();
  return a ? a.getInt() : 0;
}

/// FLOPs of a contraction or convolution (2 per multiply-add); 0 otherwise.
static double modelFlops(Operation *op) {
  auto resultElems = [&](unsigned i) {
    return double(
        cast<RankedTensorType>(op->getResult(i).getType()).getNumElements());
  };
  auto dim = [](Value v, int64_t d) {
    auto t = cast<RankedTensorType>(v.getType());
    return double(t.getDimSize(d < 0 ? t.getRank() + d : d));
  };
  if (auto mm = dyn_cast<dtg::MatMulOp>(op))
    return 2 * resultElems(0) * dim(mm.getLhs(), -1);
  if (auto gemm = dyn_cast<dtg::GemmOp>(op))
    return 2 * resultElems(0) * dim(gemm.getA(), gemm.getTransA() ? 0 : 1);
  auto kernelVolume = [](Value w) {
    auto t = cast<RankedTensorType>(w.getType());
    double v = double(t.getDimSize(1));
    for (int64_t d = 2; d < t.getRank(); ++d)
      v *= double(t.getDimSize(d));
    return v;
  };
  if (auto conv = dyn_cast<dtg::ConvOp>(op))
    return 2 * resultElems(0) * kernelVolume(conv.getWeight());
  if (auto g = dyn_cast<dtg::ConvInputGradOp>(op))
    return 2 *
           double(cast<RankedTensorType>(g.getOperand(0).getType())
                      .getNumElements()) *
           kernelVolume(g.getOperand(1));
  if (auto g = dyn_cast<dtg::ConvWeightGradOp>(op))
    return 2 *
           double(cast<RankedTensorType>(g.getOperand(0).getType())
                      .getNumElements()) *
           kernelVolume(g.getResult());
  if (auto e = dyn_cast<dtg::EinsumOp>(op)) {
    // Product of every letter's size, times 2 for more than one operand.
    llvm::DenseMap<char, int64_t> sizes;
    StringRef eq = e.getEquation();
    SmallVector<StringRef> terms;
    eq.split("->").first.split(terms, ',');
    for (auto [term, v] : llvm::zip(terms, e.getInputs()))
      for (auto [k, c] : llvm::enumerate(term))
        sizes[c] = std::max(sizes[c],
                            cast<RankedTensorType>(v.getType()).getDimSize(k));
    double f = terms.size() > 1 ? 2 : 1;
    for (auto &entry : sizes)
      f *= double(entry.second);
    return f;
  }
  return 0;
}

/// Sums `fn` over the ops of `func`, counting a call `count` times as its
/// callee's sum.
template <typename Fn> static double sumOps(func::FuncOp func, Fn fn) {
  double total = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && !callee.isExternal())
        total += sumOps(callee, fn);
      continue;
    }
    total += fn(&op);
  }
  return total;
}

int64_t mlir::dtc::countKernels(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    return 0;
  return int64_t(sumOps(step, [](Operation *op) {
    return isa<dtg::ConstantOp, dtg::ReshapeOp>(op) ? 0.0 : 1.0;
  }));
}

llvm::json::Value mlir::dtc::buildPlanJson(ModuleOp module,
                                           int64_t kernelsBeforeFusion,
                                           int64_t kernelsAfterFusion) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto micro = module.lookupSymbol<func::FuncOp>("micro_step");
  auto intAttr = [&](StringRef key) {
    auto a = module->getAttrOfType<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  int64_t globalBatch = intAttr("dtc.global_batch");
  int64_t microBatch = intAttr("dtc.micro_batch");

  int64_t params = 0, state = 0, opt = 0, inputs = 0, other = 0, results = 0,
          gradients = 0, parametersTotal = 0;
  Array tensors;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    Type type = step.getArgument(i).getType();
    int64_t bytes = memory::byteSize(type);
    StringRef role = argRole(step, i);
    if (role == "parameter") {
      params += bytes;
      if (step.getArgAttr(i, "dtg.trainable")) {
        gradients += bytes;
        parametersTotal += cast<RankedTensorType>(type).getNumElements();
      }
    } else if (role == "state") {
      state += bytes;
    } else if (role == "optimizer_state") {
      opt += bytes;
    } else if (role == "input") {
      inputs += bytes;
    } else {
      other += bytes;
    }
    auto t = cast<RankedTensorType>(type);
    std::string dtype;
    llvm::raw_string_ostream(dtype) << t.getElementType();
    tensors.push_back(Object{{"name", argName(step, i)},
                             {"role", role},
                             {"shape", Array(t.getShape())},
                             {"dtype", dtype},
                             {"sharding", "replicated"}});
  }
  for (Type t : step.getResultTypes())
    results += memory::byteSize(t);
  int64_t arena = arenaOf(step), activations = arenaOf(micro);
  int64_t workspace = std::max<int64_t>(0, arena - activations - gradients);

  Array saved;
  int64_t savedBytes = 0;
  if (micro)
    for (Operation &op : micro.getBody().front().without_terminator()) {
      if (op.hasAttr("dtg.backward") ||
          isa<dtg::ConstantOp, dtg::ReshapeOp>(op))
        continue;
      for (Value v : op.getResults()) {
        bool usedByBackward = false;
        SmallVector<Value> worklist{v};
        while (!worklist.empty() && !usedByBackward) {
          Value w = worklist.pop_back_val();
          for (Operation *user : w.getUsers()) {
            if (isa<dtg::ReshapeOp>(user) && !user->hasAttr("dtg.backward"))
              worklist.push_back(user->getResult(0));
            else if (user->hasAttr("dtg.backward"))
              usedByBackward = true;
          }
        }
        if (!usedByBackward)
          continue;
        int64_t bytes = memory::byteSize(v.getType());
        savedBytes += bytes;
        saved.push_back(Object{{"tensor", op.getName().getStringRef()},
                               {"onnx_node", onnxNodeName(op.getLoc())},
                               {"bytes", bytes}});
      }
    }

  double flops = sumOps(step, modelFlops);
  double flopsAll = sumOps(step, [](Operation *op) {
    double f = modelFlops(op);
    if (f > 0 || isa<dtg::ConstantOp, dtg::ReshapeOp>(op))
      return f;
    double n = 0;
    for (Type t : op->getResultTypes())
      n += double(cast<RankedTensorType>(t).getNumElements());
    return n;
  });

  Object memoryBytes{
      {"parameters", params + state},
      {"gradients", gradients},
      {"optimizer_state", opt},
      {"activations", activations},
      {"saved_activations", savedBytes},
      {"workspace", workspace},
      {"inputs", inputs + other},
      {"outputs", results},
      {"arena", arena},
      {"peak", params + state + opt + inputs + other + results + arena}};
  Object rank{{"rank", 0},
              {"coords", Object{{"dp", 0}, {"tp", 0}, {"pp", 0}}},
              {"stage", 0},
              {"memory_bytes", std::move(memoryBytes)},
              {"saved_activations", std::move(saved)},
              {"comm_bytes_per_step", Object{{"dp", 0}, {"tp", 0}, {"pp", 0}}}};
  return Object{{"mesh", Object{{"dp", 1}, {"tp", 1}, {"pp", 1}}},
                {"precision", "fp32"},
                {"zero", 0},
                {"schedule", "none"},
                {"global_batch", globalBatch},
                {"micro_batch", microBatch},
                {"micro_batches", microBatch ? globalBatch / microBatch : 0},
                {"parameters_total", parametersTotal},
                {"flops_per_step", flops},
                {"flops_per_step_all", flopsAll},
                {"ranks", Array{std::move(rank)}},
                {"kernels", Object{{"before_fusion", kernelsBeforeFusion},
                                   {"after_fusion", kernelsAfterFusion}}},
                {"tensors", std::move(tensors)}};
}
