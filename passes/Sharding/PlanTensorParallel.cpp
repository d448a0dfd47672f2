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
#include "llvm/ADT/DenseSet.h"

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

/// The parameter argument `v` is (a block argument with role parameter).
static BlockArgument parameterArg(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto role =
      func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dtg.role")
           : StringAttr();
  return role && role.getValue() == "parameter" ? arg : BlockArgument();
}

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
  BlockArgument arg = parameterArg(v);
  if (!arg || cast<RankedTensorType>(arg.getType()).getRank() != 2)
    return std::nullopt;
  return std::make_pair(arg, transposed);
}

/// A fused projection: x [..., K] times the transpose of a parameter W
/// [N, K] (plus a parameter bias [N]), whose result is only ever sliced
/// along its features into `parts` equal, contiguous parts (attention's
/// query, key and value from one c_attn). Split by output features as
/// one matrix, a rank's block would hold whole queries and no values;
/// Megatron splits each part by heads. So W becomes [parts, N/parts, K]
/// (the same elements, row-major; dtg.model_shape keeps the model's
/// shape for checkpoints and --save-onnx), the projection a batched
/// matmul [1, d..., K] x [parts, 1..., K, N/parts] -> [parts, d...,
/// N/parts], each part one slice of it: splitting dimension 1 of W splits
/// every part alike.
/// Returns W, or null where `mm` is not such a projection.
static BlockArgument splitFusedProjection(dtg::MatMulOp mm, int64_t tp) {
  auto transpose = mm.getRhs().getDefiningOp<dtg::TransposeOp>();
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0} ||
      !transpose->hasOneUse())
    return {};
  BlockArgument weight = parameterArg(transpose.getOperand());
  auto wType = dyn_cast<RankedTensorType>(weight ? weight.getType() : Type());
  auto xType = cast<RankedTensorType>(mm.getLhs().getType());
  if (!wType || wType.getRank() != 2 || xType.getRank() < 2 ||
      !weight.hasOneUse())
    return {};
  int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
  Value y = mm.getResult();
  BlockArgument bias;
  dtg::AddOp add;
  if (y.hasOneUse())
    if ((add = dyn_cast<dtg::AddOp>(*y.getUsers().begin()))) {
      Value other = add.getLhs() == y ? add.getRhs() : add.getLhs();
      bias = parameterArg(other);
      auto bType = dyn_cast<RankedTensorType>(other.getType());
      if (!bias || !bType || bType.getShape() != ArrayRef<int64_t>{n} ||
          !bias.hasOneUse() || add.getType() != y.getType())
        return {};
      y = add.getResult();
    }
  // Every use a slice of the last dimension, step 1, the parts equal and
  // together the whole.
  SmallVector<dtg::SliceOp> slices;
  int64_t rank = xType.getRank();
  for (Operation *user : y.getUsers()) {
    auto slice = dyn_cast<dtg::SliceOp>(user);
    if (!slice)
      return {};
    auto shape = cast<RankedTensorType>(y.getType()).getShape();
    for (int64_t d = 0; d < rank; ++d)
      if (slice.getSteps()[d] != 1 ||
          (d + 1 < rank &&
           (slice.getStarts()[d] != 0 || slice.getLimits()[d] != shape[d])))
        return {};
    slices.push_back(slice);
  }
  int64_t parts = int64_t(slices.size());
  if (parts < 2 || n % parts != 0 || (n / parts) % tp != 0)
    return {};
  int64_t size = n / parts;
  SmallVector<bool> seen(parts, false);
  for (dtg::SliceOp slice : slices) {
    int64_t start = slice.getStarts()[rank - 1];
    if (start % size != 0 || slice.getLimits()[rank - 1] != start + size ||
        seen[start / size])
      return {};
    seen[start / size] = true;
  }

  MLIRContext *ctx = mm.getContext();
  auto func = cast<func::FuncOp>(weight.getOwner()->getParentOp());
  Type element = wType.getElementType();
  auto retype = [&](BlockArgument arg, ArrayRef<int64_t> shape) {
    auto old = cast<RankedTensorType>(arg.getType());
    func.setArgAttr(arg.getArgNumber(), "dtg.model_shape",
                    DenseI64ArrayAttr::get(ctx, old.getShape()));
    arg.setType(RankedTensorType::get(shape, element));
  };
  retype(weight, {parts, size, k});
  if (bias)
    retype(bias, {parts, size});
  func.setFunctionType(FunctionType::get(
      ctx, func.getBody().front().getArgumentTypes(), func.getResultTypes()));

  // x [d..., K] as [1, d..., K] and W's parts transposed as
  // [parts, 1..., K, N/parts]: the product is [parts, d..., N/parts], each
  // of x's dimensions its own (a split by tokens passes).
  OpBuilder b(mm);
  Location loc = mm.getLoc();
  SmallVector<int64_t> xShape{1}, wShape{parts}, biasShape{parts};
  for (int64_t d = 0; d + 1 < rank; ++d) {
    xShape.push_back(xType.getDimSize(d));
    biasShape.push_back(1);
    if (d + 2 < rank)
      wShape.push_back(1);
  }
  xShape.push_back(k);
  wShape.append({k, size});
  biasShape.push_back(size);
  Value wt = b.create<dtg::TransposeOp>(transpose.getLoc(), weight,
                                        ArrayRef<int64_t>{0, 2, 1});
  wt = b.create<dtg::ReshapeOp>(transpose.getLoc(),
                                RankedTensorType::get(wShape, element), wt);
  Value x = b.create<dtg::ReshapeOp>(
      loc, RankedTensorType::get(xShape, xType.getElementType()), mm.getLhs());
  Value all = b.create<dtg::MatMulOp>(loc, x, wt);
  if (bias) {
    Value b3 = b.create<dtg::ReshapeOp>(
        add.getLoc(), RankedTensorType::get(biasShape, element), bias);
    all = b.create<dtg::AddOp>(add.getLoc(), all, b3);
  }
  auto allShape = cast<RankedTensorType>(all.getType()).getShape();
  for (dtg::SliceOp slice : slices) {
    int64_t i = slice.getStarts()[rank - 1] / size;
    SmallVector<int64_t> starts(rank + 1, 0), limits(allShape),
        steps(rank + 1, 1);
    starts[0] = i;
    limits[0] = i + 1;
    OpBuilder at(slice);
    Value part =
        at.create<dtg::SliceOp>(slice.getLoc(), all, starts, limits, steps);
    Value whole =
        at.create<dtg::ReshapeOp>(slice.getLoc(), slice.getType(), part);
    slice.getResult().replaceAllUsesWith(whole);
    slice.erase();
  }
  if (add)
    add.erase();
  mm.erase();
  transpose.erase();
  return weight;
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

  // Fused projections (attention's QKV) split by parts, each by heads.
  SmallVector<dtg::MatMulOp> matmuls;
  main.walk([&](dtg::MatMulOp mm) { matmuls.push_back(mm); });
  llvm::DenseSet<BlockArgument> fused;
  for (dtg::MatMulOp mm : matmuls)
    if (BlockArgument w = splitFusedProjection(mm, tp))
      fused.insert(w);

  // Linear layers in program order: a parameter matrix a matmul or gemm
  // multiplies by (its only use but a transpose), not one a gather also
  // reads (a tied embedding: vocabulary parallelism is its own plan).
  SmallVector<Linear> layers;
  main.walk([&](Operation *op) {
    Value weight;
    bool transB = false;
    if (auto mm = dyn_cast<dtg::MatMulOp>(op)) {
      weight = mm.getRhs();
      // A fused projection's parts [parts, N/parts, K], transposed (and
      // reshaped to the batch rank).
      Value parts = weight;
      if (auto r = parts.getDefiningOp<dtg::ReshapeOp>())
        parts = r.getOperand();
      if (auto t = parts.getDefiningOp<dtg::TransposeOp>())
        if (auto arg = dyn_cast<BlockArgument>(t.getOperand());
            arg && fused.contains(arg)) {
          layers.push_back({arg, 1, 2});
          return;
        }
    } else if (auto gemm = dyn_cast<dtg::GemmOp>(op)) {
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
    SmallVector<dist::AxisListAttr> dims(type(l.weight).getRank(),
                                         dist::AxisListAttr::get(ctx, {}));
    dims[dim] = dist::AxisListAttr::get(ctx, {StringAttr::get(ctx, "tp")});
    main.setArgAttr(l.weight.getArgNumber(), "dist.sharding",
                    dist::ShardingAttr::get(
                        ctx, FlatSymbolRefAttr::get(ctx, "mesh"), dims, {}));
    column = !column;
  }

  // Vocabulary-parallel embeddings: a parameter table that gathers read
  // by rows at data-dependent indices (tokens; not a position table read
  // at constant positions) is split by rows (tokens out of a rank's rows
  // read zeros there, and the ranks' rows add up); a tied output
  // projection then gives logits split by vocabulary, and the loss
  // reduces over its blocks.
  main.walk([&](dtg::GatherOp gather) {
    auto arg = dyn_cast<BlockArgument>(gather.getData());
    if (!arg || gather.getAxis() != 0 || !parameterArg(arg) ||
        gather.getIndices().getDefiningOp<dtg::ConstantOp>() ||
        main.getArgAttr(arg.getArgNumber(), "dist.sharding"))
      return;
    auto table = cast<RankedTensorType>(arg.getType());
    if (table.getRank() != 2 || table.getDimSize(0) % tp != 0)
      return;
    SmallVector<dist::AxisListAttr> dims(2, dist::AxisListAttr::get(ctx, {}));
    dims[0] = dist::AxisListAttr::get(ctx, {StringAttr::get(ctx, "tp")});
    main.setArgAttr(arg.getArgNumber(), "dist.sharding",
                    dist::ShardingAttr::get(
                        ctx, FlatSymbolRefAttr::get(ctx, "mesh"), dims, {}));
  });

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
