//===- SplitLowering.cpp - ops that run on a block of an axis they read ---===//
//
// See SplitLowering.h.
//
//===----------------------------------------------------------------------===//

#include "passes/Sharding/SplitLowering.h"

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::sharding;

namespace {
RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A rank-0 constant of `type` (integer or float).
Value scalar(OpBuilder &b, Location loc, Type type, double value) {
  auto scalarType = RankedTensorType::get({}, type);
  Attribute element =
      isa<FloatType>(type)
          ? Attribute(b.getFloatAttr(type, value))
          : Attribute(b.getIntegerAttr(type, static_cast<int64_t>(value)));
  return b.create<dtg::ConstantOp>(loc,
                                   DenseElementsAttr::get(scalarType, element));
}

/// Indices of a whole axis cut into blocks of `blockSize` (negative ones
/// counting from its end) as this rank's block of it sees them: `local`
/// shifted to the block, `inBlock` true where they fall in it, `safe` the
/// local index there and 0 elsewhere.
struct BlockIndices {
  Value local, inBlock, safe;
};

BlockIndices blockIndices(OpBuilder &b, Location loc, Value indices,
                          int64_t blockSize, const SplitAxes &split) {
  Type type = tensorType(indices).getElementType();
  Value zero = scalar(b, loc, type, 0);
  Value size = scalar(b, loc, type, double(blockSize * split.blocks));
  Value wrapped =
      b.create<dtg::WhereOp>(loc, b.create<dtg::LessOp>(loc, indices, zero),
                             b.create<dtg::AddOp>(loc, indices, size), indices);
  BlockIndices out;
  out.local = b.create<dtg::SubOp>(loc, wrapped,
                                   blockStart(b, loc, type, blockSize, split));
  out.inBlock = b.create<dtg::AndOp>(
      loc, b.create<dtg::GreaterEqualOp>(loc, out.local, zero),
      b.create<dtg::LessOp>(loc, out.local,
                            scalar(b, loc, type, double(blockSize))));
  out.safe = b.create<dtg::WhereOp>(loc, out.inBlock, out.local, zero);
  return out;
}

/// `gathered` (slices at the indices along `axis` of a table of rank
/// `rank`) where `inBlock` (the indices' shape) holds, 0 elsewhere.
Value keepInBlock(OpBuilder &b, Location loc, Value gathered, Value inBlock,
                  int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(axis, 1);
  llvm::append_range(shape, tensorType(inBlock).getShape());
  shape.append(rank - axis - 1, 1);
  Value mask = b.create<dtg::ReshapeOp>(
      loc, RankedTensorType::get(shape, tensorType(inBlock).getElementType()),
      inBlock);
  return b.create<dtg::WhereOp>(
      loc, mask, gathered,
      scalar(b, loc, tensorType(gathered).getElementType(), 0));
}
} // namespace

Value mlir::dtc::sharding::blockStart(OpBuilder &b, Location loc,
                                      Type indexType, int64_t blockSize,
                                      const SplitAxes &split) {
  SmallVector<Attribute> starts;
  for (int64_t k = 0; k < split.blocks; ++k)
    starts.push_back(b.getIntegerAttr(indexType, k * blockSize));
  Value all = b.create<dtg::ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({split.blocks}, indexType), starts));
  return b.create<dist::LocalBlockOp>(
      loc, RankedTensorType::get({1}, indexType), all, b.getI64IntegerAttr(0),
      split.mesh, split.axes);
}

Value mlir::dtc::sharding::lowerSplitGather(dtg::GatherOp gather,
                                            const SplitAxes &split) {
  OpBuilder b(gather);
  Location loc = gather.getLoc();
  int64_t axis = gather.getAxis();
  auto table = tensorType(gather.getData());
  int64_t block = table.getDimSize(axis);
  BlockIndices at = blockIndices(b, loc, gather.getIndices(), block, split);
  gather->setOperand(1, at.safe);
  b.setInsertionPointAfter(gather);
  Value result = gather.getResult();
  Value masked = keepInBlock(b, loc, result, at.inBlock, axis, table.getRank());
  result.replaceAllUsesExcept(masked, masked.getDefiningOp());
  return masked;
}

void mlir::dtc::sharding::lowerSplitGatherGrad(dtg::GatherGradOp grad,
                                               const SplitAxes &split) {
  OpBuilder b(grad);
  Location loc = grad.getLoc();
  int64_t axis = grad.getAxis();
  auto table = tensorType(grad.getResult());
  int64_t block = table.getDimSize(axis);
  BlockIndices at = blockIndices(b, loc, grad.getIndices(), block, split);
  grad->setOperand(0, keepInBlock(b, loc, grad.getGrad(), at.inBlock, axis,
                                  table.getRank()));
  grad->setOperand(1, at.safe);
}

Value mlir::dtc::sharding::lowerSplitSoftmax(Operation *op,
                                             const SplitAxes &split) {
  bool log = isa<dtg::LogSoftmaxOp>(op);
  int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto axes = b.getDenseI64ArrayAttr({axis});
  auto reduce = [&](Value v, dist::ReduceKind kind) {
    return b.create<dist::AllReduceOp>(
        loc, v.getType(), v, dist::ReduceKindAttr::get(b.getContext(), kind),
        split.mesh, split.axes);
  };
  Value max =
      reduce(b.create<dtg::ReduceMaxOp>(loc, x, axes, b.getBoolAttr(true)),
             dist::ReduceKind::Max);
  Value shifted = b.create<dtg::SubOp>(loc, x, max);
  Value exp = b.create<dtg::ExpOp>(loc, shifted);
  Value sum =
      reduce(b.create<dtg::ReduceSumOp>(loc, exp, axes, b.getBoolAttr(true)),
             dist::ReduceKind::Sum);
  Value y = log ? Value(b.create<dtg::SubOp>(loc, shifted,
                                             b.create<dtg::LogOp>(loc, sum)))
                : Value(b.create<dtg::DivOp>(loc, exp, sum));
  op->getResult(0).replaceAllUsesWith(y);
  op->erase();
  return y;
}

void mlir::dtc::sharding::lowerSplitNllLoss(dtg::NllLossOp loss,
                                            const SplitAxes &split) {
  OpBuilder b(loss);
  Location loc = loss.getLoc();
  int64_t block = tensorType(loss.getInput()).getDimSize(1);
  Value target = loss.getTarget();
  Type type = tensorType(target).getElementType();
  BlockIndices at = blockIndices(b, loc, target, block, split);
  Value counted = at.inBlock;
  if (std::optional<uint64_t> ignore = loss.getIgnoreIndex())
    counted = b.create<dtg::AndOp>(
        loc, counted,
        b.create<dtg::NotOp>(
            loc,
            b.create<dtg::EqualOp>(
                loc, target, scalar(b, loc, type, double(int64_t(*ignore))))));
  // The others are ignored: -1 is no block's index.
  loss->setOperand(1, b.create<dtg::WhereOp>(loc, counted, at.local,
                                             scalar(b, loc, type, -1)));
  loss->setAttr("ignore_index", b.getI64IntegerAttr(-1));
}
