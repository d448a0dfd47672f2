//===- PlanTensorParallel.cpp - Megatron splits of a model's linear layers ===//
//
// See Passes.td (PlanTensorParallelPass).
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_PLANTENSORPARALLELPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
struct Linear {
  BlockArgument weight;
  /// The weight's output-feature and input-feature dimensions.
  int64_t out, in;
};

struct PlanTensorParallelPass
    : public dtc::impl::PlanTensorParallelPassBase<PlanTensorParallelPass> {
  using PlanTensorParallelPassBase::PlanTensorParallelPassBase;
  void runOnOperation() override;
};
} // namespace

/// The parameter argument `v` is, through a 2-D transpose, and whether it
/// was transposed.
static std::optional<std::pair<BlockArgument, bool>> parameterOf(Value v) {
  bool transposed = false;
  if (auto t = v.getDefiningOp<dtg::TransposeOp>()) {
    if (t.getPerm() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    v = t.getOperand();
    transposed = true;
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || cast<RankedTensorType>(arg.getType()).getRank() != 2)
    return std::nullopt;
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto role = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dtg.role");
  if (!role || role.getValue() != "parameter")
    return std::nullopt;
  return std::make_pair(arg, transposed);
}

void PlanTensorParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || tp <= 1)
    return;
  auto meshAttr = dist::MeshAttr::get(
      ctx, {dist::MeshAxis{StringAttr::get(ctx, "pp"), 1},
            dist::MeshAxis{StringAttr::get(ctx, "dp"), dp},
            dist::MeshAxis{StringAttr::get(ctx, "tp"), tp}});
  if (!module.lookupSymbol("mesh"))
    OpBuilder::atBlockBegin(module.getBody())
        .create<dist::MeshOp>(module.getLoc(), "mesh", meshAttr);

  // Linear layers in program order: a parameter matrix a matmul or gemm
  // multiplies by (its only use but a transpose), not one a gather also
  // reads (a tied embedding: vocabulary parallelism is its own plan).
  SmallVector<Linear> layers;
  main.walk([&](Operation *op) {
    Value weight;
    bool transB = false;
    if (auto mm = dyn_cast<dtg::MatMulOp>(op))
      weight = mm.getRhs();
    else if (auto gemm = dyn_cast<dtg::GemmOp>(op)) {
      if (gemm.getTransA())
        return;
      weight = gemm.getB();
      transB = gemm.getTransB();
    } else {
      return;
    }
    auto param = parameterOf(weight);
    if (!param)
      return;
    auto [arg, transposed] = *param;
    for (Operation *user : arg.getUsers())
      if (isa<dtg::GatherOp>(user))
        return;
    if (llvm::any_of(layers, [&](const Linear &l) { return l.weight == arg; }))
      return;
    // [in, out] as the product reads it; transposed or transB: [out, in].
    bool outFirst = transposed != transB;
    layers.push_back({arg, outFirst ? 0 : 1, outFirst ? 1 : 0});
  });
  // Column-parallel, then row-parallel, in turn (Megatron's pairs: the
  // first's split output is the second's split input).
  auto type = [](BlockArgument a) {
    return cast<RankedTensorType>(a.getType());
  };
  bool column = true;
  for (const Linear &l : layers) {
    int64_t dim = column ? l.out : l.in;
    if (type(l.weight).getDimSize(dim) % tp != 0)
      continue;
    SmallVector<dist::AxisListAttr> dims(2, dist::AxisListAttr::get(ctx, {}));
    dims[dim] = dist::AxisListAttr::get(ctx, {StringAttr::get(ctx, "tp")});
    main.setArgAttr(l.weight.getArgNumber(), "dist.sharding",
                    dist::ShardingAttr::get(
                        ctx, FlatSymbolRefAttr::get(ctx, "mesh"), dims, {}));
    column = !column;
  }

  // The user's splits.
  for (const std::string &entry : shard) {
    auto [name, spec] = StringRef(entry).split('=');
    std::optional<unsigned> index;
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (auto n = main.getArgAttrOfType<StringAttr>(i, "dtg.name");
          n && n.getValue() == name)
        index = i;
    if (!index) {
      main.emitError("--shard ")
          << entry << ": the model has no tensor '" << name << "'";
      return signalPassFailure();
    }
    auto argType =
        dyn_cast<RankedTensorType>(main.getArgument(*index).getType());
    // (Entries are separated by ',' or ':', which pass pipelines, whose
    // list options split at commas, can carry.)
    SmallVector<StringRef> parts, entries;
    spec.split(parts, ',');
    for (StringRef part : parts)
      part.split(entries, ':');
    if (!argType || int64_t(entries.size()) != argType.getRank()) {
      main.emitError("--shard ")
          << entry << ": '" << name << "' is "
          << main.getArgument(*index).getType()
          << "; give one entry ('tp' or '-') per dimension";
      return signalPassFailure();
    }
    SmallVector<dist::AxisListAttr> dims;
    for (auto [d, e] : llvm::enumerate(entries)) {
      if (e == "-") {
        dims.push_back(dist::AxisListAttr::get(ctx, {}));
        continue;
      }
      if (e != "tp") {
        main.emitError("--shard ")
            << entry << ": '" << e
            << "' is not a split this build makes (per dimension 'tp' or "
               "'-')";
        return signalPassFailure();
      }
      if (argType.getDimSize(d) % tp != 0) {
        main.emitError("--shard ") << entry << ": dimension " << d << " of '"
                                   << name << "' (" << argType.getDimSize(d)
                                   << ") does not divide by tp=" << int64_t(tp);
        return signalPassFailure();
      }
      dims.push_back(
          dist::AxisListAttr::get(ctx, {StringAttr::get(ctx, "tp")}));
    }
    if (llvm::count_if(dims, [](dist::AxisListAttr a) {
          return !a.getAxes().empty();
        }) > 1) {
      main.emitError("--shard ") << entry << ": tp splits one dimension";
      return signalPassFailure();
    }
    main.setArgAttr(*index, "dist.sharding",
                    dist::ShardingAttr::get(
                        ctx, FlatSymbolRefAttr::get(ctx, "mesh"), dims, {}));
  }
}
