//===- EmitShape.cpp - CPU emission rules of data-movement dtg ops --------===//
//
// transpose, concat, slice, gather, gather_elements, scatter_elements,
// broadcast, tile, pad, trilu and the gradient primitives gather_grad,
// slice_grad and pad_grad: each becomes one call into
// runtime/include/dtcrt/kernels/Shape.h (argument convention at the top of
// Elementwise.h). dtg.constant and dtg.reshape are the emitter core's.
//
// The rules re-check every shape relation the kernels index by (the
// verifiers state them, but generated code must never read out of bounds
// whatever reaches it); indices held in tensors are checked by the kernels
// at run time.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/IR/DTGShapeInference.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Registers `rule` for OpTy behind checkTensors.
template <typename OpTy>
void add(EmitRegistry &registry,
         LogicalResult (*rule)(OpTy op, KernelEmitter &e)) {
  registry.add<OpTy>([rule](Operation *op, KernelEmitter &e) {
    if (failed(e.checkTensors(op)))
      return failure();
    return rule(cast<OpTy>(op), e);
  });
}

/// `{a, b, ...}`: a braced list argument.
std::string braced(ArrayRef<std::string> items) {
  return "{" + llvm::join(items, ", ") + "}";
}

/// Checks that an axis attribute is in [0, rank).
LogicalResult checkAxis(Operation *op, int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    return op->emitError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

/// Checks that a strided box (starts, steps; `box` elements per dimension)
/// lies inside `shape`.
LogicalResult checkStridedBox(Operation *op, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> starts, ArrayRef<int64_t> steps,
                              ArrayRef<int64_t> box) {
  if (starts.size() != shape.size() || steps.size() != shape.size() ||
      box.size() != shape.size())
    return op->emitError("starts and steps need one entry per dimension");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (steps[d] == 0)
      return op->emitError("step of dimension ") << d << " is 0";
    if (box[d] == 0)
      continue;
    std::optional<int64_t> span = llvm::checkedMul(box[d] - 1, steps[d]);
    std::optional<int64_t> last =
        span ? llvm::checkedAdd(starts[d], *span) : std::nullopt;
    auto inside = [&](int64_t c) { return c >= 0 && c < shape[d]; };
    if (!last || !inside(starts[d]) || !inside(*last))
      return op->emitError("slice of dimension ")
             << d << " leaves its size " << shape[d];
  }
  return success();
}

/// The kernel spelling of a pad mode, or failure with an error.
FailureOr<std::string> padMode(Operation *op, StringRef mode) {
  if (mode == "constant")
    return std::string("dtck::PadMode::Constant");
  if (mode == "reflect")
    return std::string("dtck::PadMode::Reflect");
  if (mode == "edge")
    return std::string("dtck::PadMode::Edge");
  return op->emitError("unknown pad mode '") << mode << "'";
}

/// Checks that padding `source` by (low, high) gives `padded` and that a
/// reflect or edge pad never reads an empty dimension.
LogicalResult checkPad(Operation *op, ArrayRef<int64_t> source,
                       ArrayRef<int64_t> padded, ArrayRef<int64_t> low,
                       ArrayRef<int64_t> high, StringRef mode) {
  if (low.size() != source.size() || high.size() != source.size() ||
      padded.size() != source.size())
    return op->emitError("low and high need one amount per dimension");
  bool nonEmpty = dtg::numElements(padded) > 0;
  for (size_t d = 0; d < source.size(); ++d) {
    std::optional<int64_t> size = llvm::checkedAdd(source[d], low[d]);
    size = size ? llvm::checkedAdd(*size, high[d]) : std::nullopt;
    if (!size || *size != padded[d])
      return op->emitError("padded dimension ")
             << d << " is " << padded[d] << ", expected " << source[d] << " + "
             << low[d] << " + " << high[d];
    if (mode != "constant" && source[d] == 0 && nonEmpty)
      return op->emitError("cannot ") << mode << "-pad empty dimension " << d;
  }
  return success();
}

/// `data[:axis] + indices + data[axis+1:]`: the shape of a gather.
SmallVector<int64_t> gatheredShape(ArrayRef<int64_t> data,
                                   ArrayRef<int64_t> indices, int64_t axis) {
  SmallVector<int64_t> shape(data.take_front(axis));
  shape.append(indices.begin(), indices.end());
  shape.append(data.begin() + axis + 1, data.end());
  return shape;
}

/// Checks the shapes of gather_elements / scatter_elements.
LogicalResult checkElementsOp(Operation *op, Value data, Value indices,
                              int64_t axis) {
  ArrayRef<int64_t> d = dimsOf(data), i = dimsOf(indices);
  if (d.size() != i.size())
    return op->emitError("data and indices need the same rank");
  if (failed(checkAxis(op, axis, d.size())))
    return failure();
  if (dtg::numElements(i) == 0)
    return success();
  for (size_t k = 0; k < d.size(); ++k)
    if (static_cast<int64_t>(k) != axis && i[k] > d[k])
      return op->emitError("indices dimension ")
             << k << " (size " << i[k] << ") is larger than data's (size "
             << d[k] << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

LogicalResult emitTranspose(dtg::TransposeOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  ArrayRef<int64_t> in = dimsOf(x), out = dimsOf(y), perm = op.getPerm();
  if (perm.size() != in.size() || out.size() != in.size())
    return op.emitError("perm needs one entry per dimension");
  SmallVector<bool> seen(in.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      return op.emitError("perm is not a permutation");
    seen[p] = true;
    if (out[i] != in[p])
      return op.emitError("result dimension ")
             << i << " is not operand dimension " << p;
  }
  e.call("transpose",
         {e.shape(x), e.shape(y), e.buffer(x), e.i64Array(perm), e.buffer(y)});
  return success();
}

LogicalResult emitConcat(dtg::ConcatOp op, KernelEmitter &e) {
  Value y = op.getResult();
  ArrayRef<int64_t> out = dimsOf(y);
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (op.getInputs().empty())
    return op.emitError("needs at least one input");
  if (failed(checkAxis(op, axis, out.size())))
    return failure();
  int64_t total = 0;
  SmallVector<std::string> shapes, buffers;
  for (Value input : op.getInputs()) {
    ArrayRef<int64_t> in = dimsOf(input);
    if (in.size() != out.size())
      return op.emitError("inputs need the result's rank");
    for (size_t d = 0; d < in.size(); ++d)
      if (static_cast<int64_t>(d) != axis && in[d] != out[d])
        return op.emitError("input dimension ")
               << d << " differs from the result's";
    total += in[axis];
    shapes.push_back(e.shape(input));
    buffers.push_back(e.buffer(input));
  }
  if (total != out[axis])
    return op.emitError("inputs do not add up to the result along the axis");
  e.call("concat", {braced(shapes), e.shape(y), braced(buffers),
                    KernelEmitter::literal(axis), e.buffer(y)});
  return success();
}

LogicalResult emitSlice(dtg::SliceOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  if (failed(checkStridedBox(op, dimsOf(x), op.getStarts(), op.getSteps(),
                             dimsOf(y))))
    return failure();
  e.call("slice",
         {e.shape(x), e.shape(y), e.buffer(x), e.i64Array(op.getStarts()),
          e.i64Array(op.getSteps()), e.buffer(y)});
  return success();
}

LogicalResult emitGather(dtg::GatherOp op, KernelEmitter &e) {
  Value data = op.getData(), indices = op.getIndices(), y = op.getResult();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (failed(checkAxis(op, axis, dimsOf(data).size())))
    return failure();
  if (dimsOf(y) !=
      ArrayRef<int64_t>(gatheredShape(dimsOf(data), dimsOf(indices), axis)))
    return op.emitError("result shape is not data[:axis] + indices + "
                        "data[axis+1:]");
  e.call("gather",
         {e.shape(data), e.shape(indices), e.buffer(data), e.buffer(indices),
          KernelEmitter::literal(axis), e.buffer(y)});
  return success();
}

LogicalResult emitGatherElements(dtg::GatherElementsOp op, KernelEmitter &e) {
  Value data = op.getData(), indices = op.getIndices(), y = op.getResult();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (failed(checkElementsOp(op, data, indices, axis)))
    return failure();
  if (dimsOf(y) != dimsOf(indices))
    return op.emitError("result shape differs from the indices'");
  e.call("gatherElements",
         {e.shape(data), e.shape(indices), e.buffer(data), e.buffer(indices),
          KernelEmitter::literal(axis), e.buffer(y)});
  return success();
}

/// The runtime's ScatterReduction for dtg.scatter_elements' `reduction`.
std::string scatterReduction(StringRef reduction) {
  return llvm::StringSwitch<std::string>(reduction)
      .Case("add", "dtck::ScatterReduction::Add")
      .Case("mul", "dtck::ScatterReduction::Mul")
      .Case("max", "dtck::ScatterReduction::Max")
      .Case("min", "dtck::ScatterReduction::Min")
      .Default("dtck::ScatterReduction::None");
}

LogicalResult emitScatterElements(dtg::ScatterElementsOp op, KernelEmitter &e) {
  Value data = op.getData(), indices = op.getIndices(),
        updates = op.getUpdates(), y = op.getResult();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (failed(checkElementsOp(op, data, indices, axis)))
    return failure();
  if (dimsOf(updates) != dimsOf(indices) || dimsOf(y) != dimsOf(data))
    return op.emitError("updates need the indices' shape and the result the "
                        "data's");
  e.call("scatterElements",
         {e.shape(data), e.shape(indices), e.buffer(data), e.buffer(indices),
          e.buffer(updates), KernelEmitter::literal(axis),
          scatterReduction(op.getReduction()), e.buffer(y)});
  return success();
}

LogicalResult emitBroadcast(dtg::BroadcastOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  if (!dtg::isBroadcastableTo(dimsOf(x), dimsOf(y)))
    return op.emitError("operand shape does not broadcast to the result");
  e.call("broadcast", {e.shape(x), e.shape(y), e.buffer(x), e.buffer(y)});
  return success();
}

LogicalResult emitTile(dtg::TileOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  ArrayRef<int64_t> in = dimsOf(x), out = dimsOf(y), repeats = op.getRepeats();
  if (repeats.size() != in.size() || out.size() != in.size())
    return op.emitError("repeats need one entry per dimension");
  for (size_t d = 0; d < in.size(); ++d) {
    std::optional<int64_t> size = llvm::checkedMul(in[d], repeats[d]);
    if (repeats[d] < 0 || !size || *size != out[d])
      return op.emitError("result dimension ")
             << d << " is not " << in[d] << " x " << repeats[d];
  }
  e.call("tile", {e.shape(x), e.shape(y), e.buffer(x), e.buffer(y)});
  return success();
}

LogicalResult emitPad(dtg::PadOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  if (failed(checkPad(op, dimsOf(x), dimsOf(y), op.getLow(), op.getHigh(),
                      op.getMode())))
    return failure();
  FailureOr<std::string> mode = padMode(op, op.getMode());
  if (failed(mode))
    return failure();
  e.call("pad", {e.shape(x), e.shape(y), e.buffer(x), e.i64Array(op.getLow()),
                 *mode, KernelEmitter::literal(op.getValue().convertToDouble()),
                 e.buffer(y)});
  return success();
}

LogicalResult emitTrilu(dtg::TriluOp op, KernelEmitter &e) {
  Value x = op.getOperand(), y = op.getResult();
  if (dimsOf(x).size() < 2 || dimsOf(x) != dimsOf(y))
    return op.emitError("needs rank at least 2 and the operand's shape");
  e.call("trilu",
         {e.shape(x), e.buffer(x), KernelEmitter::literal(op.getUpper()),
          KernelEmitter::literal(static_cast<int64_t>(op.getK())),
          e.buffer(y)});
  return success();
}

LogicalResult emitGatherGrad(dtg::GatherGradOp op, KernelEmitter &e) {
  Value grad = op.getGrad(), indices = op.getIndices(), y = op.getResult();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (failed(checkAxis(op, axis, dimsOf(y).size())))
    return failure();
  if (dimsOf(grad) !=
      ArrayRef<int64_t>(gatheredShape(dimsOf(y), dimsOf(indices), axis)))
    return op.emitError("grad shape is not result[:axis] + indices + "
                        "result[axis+1:]");
  e.call("gatherGrad",
         {e.shape(grad), e.shape(indices), e.shape(y), e.buffer(grad),
          e.buffer(indices), KernelEmitter::literal(axis), e.buffer(y)});
  return success();
}

LogicalResult emitSliceGrad(dtg::SliceGradOp op, KernelEmitter &e) {
  Value grad = op.getGrad(), y = op.getResult();
  if (failed(checkStridedBox(op, dimsOf(y), op.getStarts(), op.getSteps(),
                             dimsOf(grad))))
    return failure();
  e.call("sliceGrad",
         {e.shape(grad), e.shape(y), e.buffer(grad), e.i64Array(op.getStarts()),
          e.i64Array(op.getSteps()), e.buffer(y)});
  return success();
}

LogicalResult emitPadGrad(dtg::PadGradOp op, KernelEmitter &e) {
  Value grad = op.getGrad(), y = op.getResult();
  if (failed(checkPad(op, dimsOf(y), dimsOf(grad), op.getLow(), op.getHigh(),
                      op.getMode())))
    return failure();
  FailureOr<std::string> mode = padMode(op, op.getMode());
  if (failed(mode))
    return failure();
  e.call("padGrad", {e.shape(grad), e.shape(y), e.buffer(grad),
                     e.i64Array(op.getLow()), *mode, e.buffer(y)});
  return success();
}

} // namespace

void mlir::dtc::cpu::registerShapeEmitters(EmitRegistry &registry) {
  add<dtg::TransposeOp>(registry, emitTranspose);
  add<dtg::ConcatOp>(registry, emitConcat);
  add<dtg::SliceOp>(registry, emitSlice);
  add<dtg::GatherOp>(registry, emitGather);
  add<dtg::GatherElementsOp>(registry, emitGatherElements);
  add<dtg::ScatterElementsOp>(registry, emitScatterElements);
  add<dtg::BroadcastOp>(registry, emitBroadcast);
  add<dtg::TileOp>(registry, emitTile);
  add<dtg::PadOp>(registry, emitPad);
  add<dtg::TriluOp>(registry, emitTrilu);
  add<dtg::GatherGradOp>(registry, emitGatherGrad);
  add<dtg::SliceGradOp>(registry, emitSliceGrad);
  add<dtg::PadGradOp>(registry, emitPadGrad);
}
