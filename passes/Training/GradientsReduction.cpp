//===- GradientsReduction.cpp - gradient rules of reductions and losses --===//
//
// Each rule follows PyTorch's autograd formula for the op: amax/amin split
// the gradient evenly among ties, prod handles zeros exactly, nll_loss's mean
// divides by the total weight of the counted positions. Arg-reductions have
// an integer result and so no gradient.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/Autodiff.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtg;

/// The gradient of a reduction result, reshaped to keep the reduced axes
/// (size 1) and broadcast back to the operand's shape.
static Value expandReduced(GradientBuilder &b, Value grad, Value operand,
                           ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> kept(type.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  return b.broadcastTo(b.reshape(grad, kept), type.getShape());
}

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Terse arithmetic on values of one float element type.
struct Math {
  GradientBuilder &b;
  Type elementType;
  Value c(double v) { return b.scalar(elementType, v); }
  Value add(Value x, Value y) { return b.create<AddOp>(x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(x, y); }
  Value neg(Value x) { return b.create<NegOp>(x); }
  /// 1.0 where `cond`, else 0.0.
  Value mask(Value cond) { return b.castTo(cond, elementType); }
  Value where(Value cond, Value x, Value y) {
    return b.create<WhereOp>(cond, x, y);
  }
};

/// Registers the rule of reduce_max or reduce_min: as torch.amax
/// and torch.amin, the gradient is split evenly among the elements equal to
/// the extremum.
template <typename OpTy> void addExtremum(GradientRegistry &registry) {
  registry.add<OpTy>([](Operation *op, ArrayRef<Value> grads,
                        GradientBuilder &b, SmallVectorImpl<Value> &out) {
    auto reduce = cast<OpTy>(op);
    Value x = reduce.getOperand();
    ArrayRef<int64_t> axes = reduce.getAxes();
    Math m{b, typeOf(x).getElementType()};
    Value y = expandReduced(b, reduce.getResult(), x, axes);
    Value hit = m.mask(b.create<EqualOp>(x, y));
    Value count = b.sumKeep(hit, axes);
    Value g = expandReduced(b, grads[0], x, axes);
    out.push_back(m.mul(g, m.div(hit, count)));
    return success();
  });
}

/// The rule of reduce_prod. Where a group holds no zero, dx = g * y / x; with
/// exactly one zero, only the zero gets g times the product of the others;
/// with more, all get zero (PyTorch's prod_backward).
LogicalResult prodRule(Operation *op, ArrayRef<Value> grads, GradientBuilder &b,
                       SmallVectorImpl<Value> &out) {
  auto reduce = cast<ReduceProdOp>(op);
  Value x = reduce.getOperand();
  ArrayRef<int64_t> axes = reduce.getAxes();
  Math m{b, typeOf(x).getElementType()};
  Value isZero = b.create<EqualOp>(x, m.c(0));
  Value safeX = m.where(isZero, m.c(1), x);
  // Product of the non-zero elements and number of zeros, per group.
  Value nonZeroProd =
      expandReduced(b,
                    b.create<ReduceProdOp>(safeX, reduce.getAxesAttr(),
                                           b.builder.getBoolAttr(true)),
                    x, axes);
  Value zeros = expandReduced(b, b.sumKeep(m.mask(isZero), axes), x, axes);
  Value noZero = b.create<EqualOp>(zeros, m.c(0));
  Value oneZero = b.create<EqualOp>(zeros, m.c(1));
  Value atNonZero = m.where(noZero, m.div(nonZeroProd, safeX), m.c(0));
  Value atZero = m.where(oneZero, nonZeroProd, m.c(0));
  Value derivative = m.where(isZero, atZero, atNonZero);
  out.push_back(m.mul(expandReduced(b, grads[0], x, axes), derivative));
  return success();
}

LogicalResult logSumExpRule(Operation *op, ArrayRef<Value> grads,
                            GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto reduce = cast<ReduceLogSumExpOp>(op);
  Value x = reduce.getOperand();
  ArrayRef<int64_t> axes = reduce.getAxes();
  Math m{b, typeOf(x).getElementType()};
  // d/dx logsumexp(x) = softmax(x) = exp(x - y).
  Value y = expandReduced(b, reduce.getResult(), x, axes);
  Value softmax = b.create<ExpOp>(m.sub(x, y));
  out.push_back(m.mul(expandReduced(b, grads[0], x, axes), softmax));
  return success();
}

/// Integer results carry no gradient; the reverse sweep never asks, and the
/// rule says so for any caller that does.
LogicalResult noGradientRule(Operation *op, ArrayRef<Value>, GradientBuilder &,
                             SmallVectorImpl<Value> &out) {
  out.append(op->getNumOperands(), Value());
  return success();
}

/// The gradient of a running sum is the running sum of the gradient taken the
/// other way: inclusive stays inclusive, exclusive stays exclusive.
LogicalResult cumSumRule(Operation *op, ArrayRef<Value> grads,
                         GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto cumsum = cast<CumSumOp>(op);
  out.push_back(b.create<CumSumOp>(
      grads[0], cumsum.getAxisAttr(), cumsum.getExclusiveAttr(),
      b.builder.getBoolAttr(!cumsum.getReverse())));
  return success();
}

/// The rule of nll_loss. Each counted position p (target t) contributes
/// -w[t] * x[n, t, ...] to the sum; `mean` divides by W = sum of the counted
/// w[t]. So dx[n, c, ...] = -w[t] * s where c = t, with s the gradient of the
/// position (g, or g / W for mean), and, for the weight,
/// dw[c] = sum over counted positions with t = c of -x_p * s (for mean
/// (-x_p - loss) * g / W, since W depends on w too).
LogicalResult nllLossRule(Operation *op, ArrayRef<Value> grads,
                          GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto nll = cast<NllLossOp>(op);
  Value x = nll.getInput(), target = nll.getTarget(), weight = nll.getWeight();
  RankedTensorType xType = typeOf(x), tType = typeOf(target);
  Type floatType = xType.getElementType(), indexType = tType.getElementType();
  Math m{b, floatType};
  StringRef reduction = nll.getReduction();
  Value g = grads[0];

  // Counted positions and a target safe to index with (ignored ones read
  // class 0, with weight 0).
  Value counted, safeTarget = target;
  std::optional<uint64_t> ignore = nll.getIgnoreIndex();
  unsigned width = indexType.getIntOrFloatBitWidth();
  // An ignore_index that the target type cannot hold matches no target.
  if (ignore && APInt(64, *ignore).isSignedIntN(width)) {
    Value ignoreValue = b.builder.create<ConstantOp>(
        b.loc, DenseElementsAttr::get(RankedTensorType::get({}, indexType),
                                      APInt(64, *ignore).trunc(width)));
    Value ignored = b.create<EqualOp>(target, ignoreValue);
    counted = b.create<NotOp>(ignored);
    safeTarget = b.create<WhereOp>(ignored, b.scalar(indexType, 0), target);
  }
  Value positionWeight =
      weight ? b.create<GatherOp>(weight, safeTarget,
                                  b.builder.getI64IntegerAttr(0))
             : b.splat(RankedTensorType::get(tType.getShape(), floatType), 1.0);
  if (counted)
    positionWeight = m.mul(positionWeight, m.mask(counted));

  // The gradient of each position's term -w[t] * x_p.
  Value scale = g, totalWeight;
  if (reduction == "mean") {
    SmallVector<int64_t> all =
        llvm::to_vector(llvm::seq<int64_t>(0, tType.getRank()));
    totalWeight = b.create<ReduceSumOp>(positionWeight,
                                        b.builder.getDenseI64ArrayAttr(all),
                                        b.builder.getBoolAttr(false));
    scale = m.div(g, totalWeight);
  }
  Value coefficient = m.neg(m.mul(positionWeight, scale));

  // One-hot of the target along axis 1: [N, 1, d...] against [1, C, 1...].
  SmallVector<int64_t> keptShape(tType.getShape());
  keptShape.insert(keptShape.begin() + 1, 1);
  SmallVector<int64_t> classShape(xType.getRank(), 1);
  classShape[1] = xType.getDimSize(1);
  SmallVector<APInt> classes;
  for (int64_t c = 0; c < xType.getDimSize(1); ++c)
    classes.push_back(APInt(width, static_cast<uint64_t>(c)));
  Value classIds = b.builder.create<ConstantOp>(
      b.loc, DenseElementsAttr::get(
                 RankedTensorType::get(classShape, indexType), classes));
  Value oneHot =
      m.mask(b.create<EqualOp>(classIds, b.reshape(safeTarget, keptShape)));
  out.push_back(m.mul(oneHot, b.reshape(coefficient, keptShape)));
  out.push_back(Value());

  if (!weight)
    return success();
  // A constant weight (the usual case) needs no gradient.
  if (!isDifferentiable(weight.getType()) ||
      weight.getDefiningOp<ConstantOp>()) {
    out.push_back(Value());
    return success();
  }
  // x at each position's target class.
  Value picked = b.create<ReduceSumOp>(m.mul(oneHot, x),
                                       b.builder.getDenseI64ArrayAttr({1}),
                                       b.builder.getBoolAttr(false));
  Value perPosition =
      reduction == "mean"
          ? m.div(m.mul(m.neg(m.add(picked, nll.getResult())), g), totalWeight)
          : m.mul(m.neg(picked), scale);
  if (counted)
    perPosition = m.mul(perPosition, m.mask(counted));
  out.push_back(b.builder.create<GatherGradOp>(b.loc, typeOf(weight),
                                               perPosition, safeTarget,
                                               b.builder.getI64IntegerAttr(0)));
  return success();
}

} // namespace

void mlir::dtc::registerReductionGradients(GradientRegistry &registry) {
  registry.add<ReduceSumOp>([](Operation *op, ArrayRef<Value> grads,
                               GradientBuilder &b,
                               SmallVectorImpl<Value> &out) {
    auto reduce = cast<ReduceSumOp>(op);
    out.push_back(
        expandReduced(b, grads[0], reduce.getOperand(), reduce.getAxes()));
    return success();
  });
  registry.add<ReduceMeanOp>([](Operation *op, ArrayRef<Value> grads,
                                GradientBuilder &b,
                                SmallVectorImpl<Value> &out) {
    auto reduce = cast<ReduceMeanOp>(op);
    auto type = reduce.getOperand().getType();
    int64_t count = 1;
    for (int64_t axis : reduce.getAxes())
      count *= type.getDimSize(axis);
    Value g = b.create<DivOp>(grads[0],
                              b.scalar(type.getElementType(), double(count)));
    out.push_back(expandReduced(b, g, reduce.getOperand(), reduce.getAxes()));
    return success();
  });
  addExtremum<ReduceMaxOp>(registry);
  addExtremum<ReduceMinOp>(registry);
  registry.add<ReduceProdOp>(prodRule);
  registry.add<ReduceLogSumExpOp>(logSumExpRule);
  registry.add<ArgMaxOp>(noGradientRule);
  registry.add<ArgMinOp>(noGradientRule);
  registry.add<CumSumOp>(cumSumRule);
  registry.add<NllLossOp>(nllLossRule);
}
