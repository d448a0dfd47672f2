//===- GradientsDist.cpp - gradient rules of dist collectives -------------===//
//
// A collective inside a differentiated function (the all-reduced batch
// statistics of a synchronized BatchNorm): every rank's result depends on
// every rank's operand, so the operand's gradient gathers the result's
// gradients of the whole group.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/Autodiff.h"

#include "dialects/Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dtc;

/// y = sum over the group of x: dx = sum over the group of dy (each rank's
/// x enters every rank's y once). Mean: the same, divided by the group
/// size, which an all-reduce of kind mean does. Max and min pick one rank's
/// value: not differentiated.
static LogicalResult allReduceGradient(Operation *op, ArrayRef<Value> grads,
                                       GradientBuilder &b,
                                       SmallVectorImpl<Value> &out) {
  auto ar = cast<dist::AllReduceOp>(op);
  if (ar.getKind() != dist::ReduceKind::Sum &&
      ar.getKind() != dist::ReduceKind::Mean)
    return op->emitError("cannot differentiate an all_reduce of kind ")
           << dist::stringifyReduceKind(ar.getKind());
  if (!grads[0]) {
    out.push_back(Value());
    return success();
  }
  auto grad = b.builder.create<dist::AllReduceOp>(
      b.loc, grads[0].getType(), grads[0], ar.getKindAttr(), ar.getMeshAttr(),
      ar.getMeshAxes());
  if (auto what = op->getAttrOfType<StringAttr>("dtc.explain"))
    grad->setAttr("dtc.explain",
                  StringAttr::get(op->getContext(),
                                  "gradient of " + what.getValue().str()));
  out.push_back(grad);
  return success();
}

void mlir::dtc::registerDistGradients(GradientRegistry &registry) {
  registry.add<dist::AllReduceOp>(allReduceGradient);
}
