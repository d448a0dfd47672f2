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

/// True if `axes` is the tp axis alone.
bool isTp(ArrayAttr axes) {
  return axes.size() == 1 && cast<StringAttr>(axes[0]).getValue() == "tp";
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
  // Collected first: rewriting one erases ops around it.
  SmallVector<Operation *> transfers;
  module.walk([&](Operation *op) {
    if (isa<dist::SendOp, dist::RecvOp>(op))
      transfers.push_back(op);
  });
  for (Operation *op : transfers) {
    auto send = dyn_cast<dist::SendOp>(op);
    auto recv = dyn_cast<dist::RecvOp>(op);
    if ((send ? send.getMeshAxis() : recv.getMeshAxis()) != "pp")
      continue;
    auto type = cast<RankedTensorType>(send ? send.getInput().getType()
                                            : recv.getResult().getType());
    std::optional<int64_t> dim = scatterDim(type, tp);
    if (!dim)
      continue;
    OpBuilder b(op);
    IntegerAttr axis = b.getI64IntegerAttr(*dim);
    RankedTensorType block = blockType(type, *dim, tp);
    if (send) {
      // A value that was all-gathered over tp along the same dimension
      // (sequence parallelism's blocks made whole for the send) goes as
      // the block it was gathered from.
      auto gathered = send.getInput().getDefiningOp<dist::AllGatherOp>();
      if (gathered && isTp(gathered.getMeshAxes()) &&
          gathered.getGatherAxis() == *dim &&
          gathered.getInput().getType() == block) {
        send.getInputMutable().assign(gathered.getInput());
        if (gathered->use_empty())
          gathered->erase();
        continue;
      }
      auto local = b.create<dist::LocalBlockOp>(
          op->getLoc(), block, send.getInput(), axis, meshRef, tpAxes);
      send.getInputMutable().assign(local);
      continue;
    }
    b.setInsertionPointAfter(op);
    recv.getResult().setType(block);
    auto gather = b.create<dist::AllGatherOp>(
        op->getLoc(), type, recv.getResult(), axis, meshRef, tpAxes);
    recv.getResult().replaceAllUsesExcept(gather.getResult(), gather);
    // Where the receiving stage takes this rank's block of it again
    // (sequence parallelism), it is the block received.
    for (Operation *user : llvm::make_early_inc_range(gather->getUsers()))
      if (auto local = dyn_cast<dist::LocalBlockOp>(user);
          local && isTp(local.getMeshAxes()) && local.getSliceAxis() == *dim &&
          local.getType() == block) {
        local.getResult().replaceAllUsesWith(recv.getResult());
        local->erase();
      }
    if (gather->use_empty())
      gather->erase();
  }
}
