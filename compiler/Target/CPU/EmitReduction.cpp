//===- EmitReduction.cpp - CPU emission rules of reduction dtg ops --------===//
//
// reduce_sum/mean/max/min/prod/logsumexp, argmax/argmin, cumsum and
// nll_loss: each becomes one call into runtime/include/dtcrt/kernels/
// Reduction.h (argument convention at the top of Elementwise.h). A
// reduction over axes passes the operand's shape and the result's shape
// with kept dimensions, which names the reduced axes; keepdims does not
// change the result's layout.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/IR/DTGShapeInference.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Checks that an axis attribute is in [0, rank).
LogicalResult checkAxis(Operation *op, int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    return op->emitError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

/// Registers `kernel(in, kept, x, y)` for a reduction over axes.
template <typename OpTy>
void addReduce(EmitRegistry &registry, StringRef kernel) {
  registry.add<OpTy>([kernel = kernel.str()](
                         Operation *op, KernelEmitter &e) -> LogicalResult {
    if (failed(e.checkTensors(op)))
      return failure();
    auto reduce = cast<OpTy>(op);
    Value x = reduce.getOperand(), y = reduce.getResult();
    ArrayRef<int64_t> in = dimsOf(x);
    SmallVector<int64_t> kept(in);
    for (auto [i, axis] : llvm::enumerate(reduce.getAxes())) {
      if (failed(checkAxis(op, axis, in.size())))
        return failure();
      if (i > 0 && reduce.getAxes()[i - 1] >= axis)
        return op->emitError("reduction axes must be strictly increasing");
      kept[axis] = 1;
    }
    if (dtg::numElements(kept) != dtg::numElements(dimsOf(y)))
      return op->emitError("result shape does not match the reduction");
    e.call(kernel, {e.shape(x), e.shapeOf(kept), e.buffer(x), e.buffer(y)});
    return success();
  });
}

/// Registers `kernel(in, x, axis, selectLastIndex, y)` for an
/// arg-reduction.
template <typename OpTy>
void addArgReduce(EmitRegistry &registry, StringRef kernel) {
  registry.add<OpTy>([kernel = kernel.str()](
                         Operation *op, KernelEmitter &e) -> LogicalResult {
    if (failed(e.checkTensors(op)))
      return failure();
    auto argOp = cast<OpTy>(op);
    Value x = argOp.getOperand(), y = argOp.getResult();
    ArrayRef<int64_t> in = dimsOf(x);
    auto axis = static_cast<int64_t>(argOp.getAxis());
    if (failed(checkAxis(op, axis, in.size())))
      return failure();
    SmallVector<int64_t> kept(in);
    kept[axis] = 1;
    if (dtg::numElements(kept) != dtg::numElements(dimsOf(y)))
      return op->emitError("result shape does not match the reduction");
    if (in[axis] == 0 && dtg::numElements(kept) > 0)
      return op->emitError("cannot take the ")
             << op->getName().stripDialect() << " of an empty axis " << axis;
    e.call(kernel,
           {e.shape(x), e.buffer(x), KernelEmitter::literal(axis),
            KernelEmitter::literal(argOp.getSelectLastIndex()), e.buffer(y)});
    return success();
  });
}

LogicalResult emitCumSum(Operation *op, KernelEmitter &e) {
  if (failed(e.checkTensors(op)))
    return failure();
  auto cumsum = cast<dtg::CumSumOp>(op);
  Value x = cumsum.getOperand(), y = cumsum.getResult();
  auto axis = static_cast<int64_t>(cumsum.getAxis());
  if (failed(checkAxis(op, axis, dimsOf(x).size())))
    return failure();
  if (dimsOf(x) != dimsOf(y))
    return op->emitError("operand and result shapes differ");
  e.call("cumSum", {e.shape(x), e.buffer(x), KernelEmitter::literal(axis),
                    KernelEmitter::literal(cumsum.getExclusive()),
                    KernelEmitter::literal(cumsum.getReverse()), e.buffer(y)});
  return success();
}

LogicalResult emitNllLoss(Operation *op, KernelEmitter &e) {
  if (failed(e.checkTensors(op)))
    return failure();
  auto nll = cast<dtg::NllLossOp>(op);
  Value input = nll.getInput(), target = nll.getTarget(),
        weight = nll.getWeight(), y = nll.getResult();
  ArrayRef<int64_t> in = dimsOf(input);
  if (in.size() < 2)
    return op->emitError("input needs rank at least 2");
  int64_t positions = in[0] * dtg::numElements(in.drop_front(2));
  Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
  for (Value v : {weight, y})
    if (v &&
        cast<RankedTensorType>(v.getType()).getElementType() != elementType)
      return op->emitError("weight and result need the input's element type");
  if (dtg::numElements(dimsOf(target)) != positions)
    return op->emitError("target has ") << dtg::numElements(dimsOf(target))
                                        << " elements, expected " << positions;
  if (weight && dtg::numElements(dimsOf(weight)) != in[1])
    return op->emitError("weight has ") << dtg::numElements(dimsOf(weight))
                                        << " elements, expected " << in[1];
  StringRef reduction = nll.getReduction();
  std::string kind;
  int64_t resultElements = 1;
  if (reduction == "none") {
    kind = "dtck::Reduction::None";
    resultElements = positions;
  } else if (reduction == "sum") {
    kind = "dtck::Reduction::Sum";
  } else if (reduction == "mean") {
    kind = "dtck::Reduction::Mean";
  } else {
    return op->emitError("unknown reduction '") << reduction << "'";
  }
  if (dtg::numElements(dimsOf(y)) != resultElements)
    return op->emitError("result shape does not match reduction '")
           << reduction << "'";
  std::optional<uint64_t> ignore = nll.getIgnoreIndex();
  e.call("nllLoss",
         {e.shape(input), e.buffer(input), e.buffer(target),
          weight ? e.buffer(weight) : "nullptr", kind,
          KernelEmitter::literal(ignore.has_value()),
          KernelEmitter::literal(static_cast<int64_t>(ignore.value_or(0))),
          e.buffer(y)});
  return success();
}

} // namespace

void mlir::dtc::cpu::registerReductionEmitters(EmitRegistry &registry) {
  addReduce<dtg::ReduceSumOp>(registry, "reduceSum");
  addReduce<dtg::ReduceMeanOp>(registry, "reduceMean");
  addReduce<dtg::ReduceMaxOp>(registry, "reduceMax");
  addReduce<dtg::ReduceMinOp>(registry, "reduceMin");
  addReduce<dtg::ReduceProdOp>(registry, "reduceProd");
  addReduce<dtg::ReduceLogSumExpOp>(registry, "reduceLogSumExp");
  addArgReduce<dtg::ArgMaxOp>(registry, "argMax");
  addArgReduce<dtg::ArgMinOp>(registry, "argMin");
  registry.add<dtg::CumSumOp>(emitCumSum);
  registry.add<dtg::NllLossOp>(emitNllLoss);
}
