//===- GradientsShape.cpp - gradient rules of the Shape family -----------===//
//
// Data movement is linear, so each rule moves the gradient back along the
// same path: reshape and transpose invert themselves, concat and tile split
// or sum, slices and pads pad or crop. Adjoints that scatter (gather, slices
// with non-unit steps, reflect and edge pads) use the gradient primitives of
// DTGGradShape.td. Integer operands (indices) get no gradient.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/Autodiff.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtg;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A constant of `type` (integer elements) holding 0, 1, 2, ... in row-major
/// order: the positions of a tensor of that shape.
Value iota(GradientBuilder &b, RankedTensorType type) {
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(type.getNumElements());
  for (int64_t k = 0, e = type.getNumElements(); k < e; ++k)
    values.push_back(APInt(width, static_cast<uint64_t>(k)));
  return b.builder.create<ConstantOp>(b.loc,
                                      DenseElementsAttr::get(type, values));
}

LogicalResult reshapeRule(Operation *op, ArrayRef<Value> grads,
                          GradientBuilder &b, SmallVectorImpl<Value> &out) {
  out.push_back(b.reshape(grads[0], typeOf(op->getOperand(0)).getShape()));
  return success();
}

LogicalResult transposeRule(Operation *op, ArrayRef<Value> grads,
                            GradientBuilder &b, SmallVectorImpl<Value> &out) {
  ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  out.push_back(
      b.create<TransposeOp>(grads[0], b.builder.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult concatRule(Operation *op, ArrayRef<Value> grads,
                         GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto concat = cast<ConcatOp>(op);
  auto axis = static_cast<int64_t>(concat.getAxis());
  RankedTensorType resultType = concat.getType();
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    RankedTensorType type = typeOf(input);
    SmallVector<int64_t> starts(type.getRank(), 0);
    SmallVector<int64_t> limits(resultType.getShape());
    SmallVector<int64_t> steps(type.getRank(), 1);
    starts[axis] = offset;
    limits[axis] = offset + type.getDimSize(axis);
    offset = limits[axis];
    if (type.getDimSize(axis) == 0) {
      out.push_back(b.zerosLike(input));
      continue;
    }
    out.push_back(b.create<SliceOp>(grads[0],
                                    b.builder.getDenseI64ArrayAttr(starts),
                                    b.builder.getDenseI64ArrayAttr(limits),
                                    b.builder.getDenseI64ArrayAttr(steps)));
  }
  return success();
}

/// A slice with unit steps differentiates to a zero pad (after reversing the
/// dimensions taken backwards); other steps scatter with dtg.slice_grad.
LogicalResult sliceRule(Operation *op, ArrayRef<Value> grads,
                        GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto slice = cast<SliceOp>(op);
  Value x = slice.getOperand();
  RankedTensorType xType = typeOf(x), gType = slice.getType();
  if (gType.getNumElements() == 0) {
    out.push_back(b.zerosLike(x));
    return success();
  }
  ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
  int64_t rank = xType.getRank();
  if (llvm::any_of(steps, [](int64_t s) { return s != 1 && s != -1; })) {
    out.push_back(b.builder.create<SliceGradOp>(
        b.loc, xType, grads[0], slice.getStartsAttr(), slice.getLimitsAttr(),
        slice.getStepsAttr()));
    return success();
  }
  // Reverse the dimensions taken with step -1 so that the gradient runs in
  // the operand's order, then place it with a zero pad.
  Value g = grads[0];
  SmallVector<int64_t> revStarts(rank, 0), revLimits(gType.getShape()),
      revSteps(rank, 1), low(rank), high(rank);
  bool reversed = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = gType.getDimSize(d), size = xType.getDimSize(d);
    int64_t first = steps[d] > 0 ? starts[d] : starts[d] - (count - 1);
    low[d] = first;
    high[d] = size - first - count;
    if (steps[d] < 0) {
      reversed = true;
      revStarts[d] = count - 1;
      revLimits[d] = -1;
      revSteps[d] = -1;
    }
  }
  if (reversed)
    g = b.create<SliceOp>(g, b.builder.getDenseI64ArrayAttr(revStarts),
                          b.builder.getDenseI64ArrayAttr(revLimits),
                          b.builder.getDenseI64ArrayAttr(revSteps));
  out.push_back(b.create<PadOp>(g, b.builder.getDenseI64ArrayAttr(low),
                                b.builder.getDenseI64ArrayAttr(high),
                                b.builder.getStringAttr("constant"),
                                b.builder.getF64FloatAttr(0.0)));
  return success();
}

LogicalResult gatherRule(Operation *op, ArrayRef<Value> grads,
                         GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto gather = cast<GatherOp>(op);
  out.push_back(b.builder.create<GatherGradOp>(
      b.loc, gather.getData().getType(), grads[0], gather.getIndices(),
      gather.getAxisAttr()));
  out.push_back(Value());
  return success();
}

LogicalResult gatherElementsRule(Operation *op, ArrayRef<Value> grads,
                                 GradientBuilder &b,
                                 SmallVectorImpl<Value> &out) {
  auto gather = cast<GatherElementsOp>(op);
  // Repeated indices add up, as in torch.gather's backward (scatter_add).
  out.push_back(b.create<ScatterElementsOp>(
      b.zerosLike(gather.getData()), gather.getIndices(), grads[0],
      gather.getAxisAttr(), b.builder.getStringAttr("add")));
  out.push_back(Value());
  return success();
}

LogicalResult scatterElementsRule(Operation *op, ArrayRef<Value> grads,
                                  GradientBuilder &b,
                                  SmallVectorImpl<Value> &out) {
  auto scatter = cast<ScatterElementsOp>(op);
  Value g = grads[0], indices = scatter.getIndices();
  IntegerAttr axis = scatter.getAxisAttr();
  Value gathered =
      b.create<GatherElementsOp>(g, indices, axis); // g at each target
  StringRef reduction = scatter.getReduction();
  if (reduction != "none" && reduction != "add")
    return op->emitError("the gradient of a scatter with reduction '")
           << reduction << "' is not supported (only none and add)";
  if (reduction == "add") {
    out.push_back(g);
    out.push_back(Value());
    out.push_back(gathered);
    return success();
  }
  // Assignment: the overwritten data elements get nothing, and of several
  // updates aimed at one element only the last written (the one the result
  // holds) gets the gradient. Which update won is found by scattering the
  // update positions the same way and reading them back.
  out.push_back(
      b.create<ScatterElementsOp>(g, indices, b.zerosLike(scatter.getUpdates()),
                                  axis, b.builder.getStringAttr("none")));
  out.push_back(Value());
  RankedTensorType positionsType =
      RankedTensorType::get(typeOf(indices).getShape(), b.builder.getI64Type());
  Value positions = iota(b, positionsType);
  Value noOwner = b.splat(RankedTensorType::get(scatter.getType().getShape(),
                                                b.builder.getI64Type()),
                          -1.0);
  Value owners = b.create<ScatterElementsOp>(noOwner, indices, positions, axis,
                                             b.builder.getStringAttr("none"));
  Value won = b.create<EqualOp>(
      b.create<GatherElementsOp>(owners, indices, axis), positions);
  out.push_back(b.create<WhereOp>(won, gathered, b.zerosLike(gathered)));
  return success();
}

LogicalResult broadcastRule(Operation *op, ArrayRef<Value> grads,
                            GradientBuilder &b, SmallVectorImpl<Value> &out) {
  out.push_back(b.unbroadcast(grads[0], typeOf(op->getOperand(0)).getShape()));
  return success();
}

/// The gradient of tile sums the copies: viewed as [r0, d0, r1, d1, ...],
/// the result gradient is summed over the repeat axes.
LogicalResult tileRule(Operation *op, ArrayRef<Value> grads, GradientBuilder &b,
                       SmallVectorImpl<Value> &out) {
  auto tile = cast<TileOp>(op);
  Value x = tile.getOperand();
  RankedTensorType xType = typeOf(x);
  if (tile.getType().getNumElements() == 0) {
    out.push_back(b.zerosLike(x));
    return success();
  }
  SmallVector<int64_t> split, axes;
  for (auto [d, r] : llvm::zip(xType.getShape(), tile.getRepeats())) {
    if (r != 1) {
      axes.push_back(static_cast<int64_t>(split.size()));
      split.push_back(r);
    }
    split.push_back(d);
  }
  Value g = b.reshape(grads[0], split);
  if (!axes.empty())
    g = b.create<ReduceSumOp>(g, b.builder.getDenseI64ArrayAttr(axes),
                              b.builder.getBoolAttr(false));
  out.push_back(b.reshape(g, xType.getShape()));
  return success();
}

/// Constant padding differentiates to a crop (a pad by the negated amounts,
/// which also zero-fills what the forward pad cropped); reflect and edge
/// padding fold the copies back with dtg.pad_grad.
LogicalResult padRule(Operation *op, ArrayRef<Value> grads, GradientBuilder &b,
                      SmallVectorImpl<Value> &out) {
  auto pad = cast<PadOp>(op);
  if (pad.getMode() != "constant") {
    out.push_back(b.builder.create<PadGradOp>(
        b.loc, pad.getOperand().getType(), grads[0], pad.getLowAttr(),
        pad.getHighAttr(), pad.getModeAttr()));
    return success();
  }
  SmallVector<int64_t> low, high;
  for (auto [d, l, h] : llvm::enumerate(pad.getLow(), pad.getHigh())) {
    // The crop back must be a valid pad: the negated amounts and the sizes
    // on the way (result size - low, then - high) fit in int64_t.
    int64_t size = pad.getType().getDimSize(d), partial;
    if (l == std::numeric_limits<int64_t>::min() ||
        h == std::numeric_limits<int64_t>::min() ||
        llvm::SubOverflow(size, l, partial))
      return pad.emitOpError("has no gradient: padding amounts ")
             << l << " and " << h << " of dimension " << d
             << " overflow when negated";
    low.push_back(-l);
    high.push_back(-h);
  }
  out.push_back(b.create<PadOp>(grads[0], b.builder.getDenseI64ArrayAttr(low),
                                b.builder.getDenseI64ArrayAttr(high),
                                b.builder.getStringAttr("constant"),
                                b.builder.getF64FloatAttr(0.0)));
  return success();
}

LogicalResult triluRule(Operation *op, ArrayRef<Value> grads,
                        GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto trilu = cast<TriluOp>(op);
  out.push_back(
      b.create<TriluOp>(grads[0], trilu.getUpperAttr(), trilu.getKAttr()));
  return success();
}

} // namespace

void mlir::dtc::registerShapeGradients(GradientRegistry &registry) {
  registry.add<ReshapeOp>(reshapeRule);
  registry.add<TransposeOp>(transposeRule);
  registry.add<ConcatOp>(concatRule);
  registry.add<SliceOp>(sliceRule);
  registry.add<GatherOp>(gatherRule);
  registry.add<GatherElementsOp>(gatherElementsRule);
  registry.add<ScatterElementsOp>(scatterElementsRule);
  registry.add<BroadcastOp>(broadcastRule);
  registry.add<TileOp>(tileRule);
  registry.add<PadOp>(padRule);
  registry.add<TriluOp>(triluRule);
  // dtg.constant has no operands, so it never needs a rule.
}
