//===- ScatterTransfers.cpp - pipeline transfers cut over tp --------------===//
//
// See Passes.td (ScatterTransfersPass).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipeline/Passes.h"

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_SCATTERTRANSFERSPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct ScatterTransfersPass
    : public dtc::impl::ScatterTransfersPassBase<ScatterTransfersPass> {
  using ScatterTransfersPassBase::ScatterTransfersPassBase;
  void runOnOperation() override;
};

/// The dimension of `type` that a transfer is cut along over `tp` ranks:
/// the first one `tp` divides; none if no dimension is.
std::optional<int64_t> scatterDim(RankedTensorType type, int64_t tp) {
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (size >= tp && size % tp == 0)
      return int64_t(d);
  return std::nullopt;
}

RankedTensorType blockType(RankedTensorType type, int64_t dim, int64_t tp) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= tp;
  return RankedTensorType::get(shape, type.getElementType());
}

} // namespace

void ScatterTransfersPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  if (meshes.size() != 1)
    return;
  dist::MeshOp mesh = meshes.front();
  int64_t tp = mesh.getMesh().getAxisSize("tp").value_or(1);
  if (tp <= 1)
    return;
  MLIRContext *ctx = &getContext();
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  ArrayAttr tpAxes = ArrayAttr::get(ctx, {StringAttr::get(ctx, "tp")});
  module.walk([&](Operation *op) {
    auto send = dyn_cast<dist::SendOp>(op);
    auto recv = dyn_cast<dist::RecvOp>(op);
    if ((!send && !recv) ||
        (send ? send.getMeshAxis() : recv.getMeshAxis()) != "pp")
      return;
    auto type = cast<RankedTensorType>(send ? send.getInput().getType()
                                            : recv.getResult().getType());
    std::optional<int64_t> dim = scatterDim(type, tp);
    if (!dim)
      return;
    OpBuilder b(op);
    IntegerAttr axis = b.getI64IntegerAttr(*dim);
    if (send) {
      auto block =
          b.create<dist::LocalBlockOp>(op->getLoc(), blockType(type, *dim, tp),
                                       send.getInput(), axis, meshRef, tpAxes);
      send.getInputMutable().assign(block);
      return;
    }
    b.setInsertionPointAfter(op);
    recv.getResult().setType(blockType(type, *dim, tp));
    auto gather = b.create<dist::AllGatherOp>(
        op->getLoc(), type, recv.getResult(), axis, meshRef, tpAxes);
    recv.getResult().replaceAllUsesExcept(gather.getResult(), gather);
  });
}
