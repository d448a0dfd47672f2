//===- GradientsReduction.cpp - gradient rules of reductions and losses --===//

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
}
