//===- KernelsShape.cpp - interpreter kernels of the Shape family ---------===//
//
// Data movement: every kernel here copies elements (floats from `f`, integers
// and booleans from `i`) from operand positions to result positions; none
// computes a new value except pad's fill and the sums of scatter and of the
// gradient primitives (gather_grad, pad_grad).
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

namespace {

/// Copies element `srcIndex` of `src` to element `dstIndex` of `dst`; both
/// have the same element type, so the value needs no rounding.
void copyElement(Tensor &dst, int64_t dstIndex, const Tensor &src,
                 int64_t srcIndex) {
  if (dst.isFloat())
    dst.f[dstIndex] = src.f[srcIndex];
  else
    dst.i[dstIndex] = src.i[srcIndex];
}

/// Writes the coordinates of linear index `index` in a tensor of `shape`.
void unravel(int64_t index, ArrayRef<int64_t> shape,
             SmallVectorImpl<int64_t> &coords) {
  coords.resize(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
}

/// The linear index of `coords` under `strides`.
int64_t ravel(ArrayRef<int64_t> coords, ArrayRef<int64_t> strides) {
  int64_t index = 0;
  for (auto [c, s] : llvm::zip(coords, strides))
    index += c * s;
  return index;
}

/// Product of `shape[begin:end]`.
int64_t product(ArrayRef<int64_t> shape, int64_t begin, int64_t end) {
  int64_t n = 1;
  for (int64_t d = begin; d < end; ++d)
    n *= shape[d];
  return n;
}

/// Reads index `k` of an index tensor, counts a negative value from the end
/// of a dimension of `size`, and fails (with an error at `op`) when the result
/// is not in [0, size).
FailureOr<int64_t> readIndex(Operation *op, const Tensor &indices, int64_t k,
                             int64_t size, int64_t axis) {
  int64_t raw = indices.getInt(k);
  int64_t index = raw < 0 ? raw + size : raw;
  if (index < 0 || index >= size)
    return op->emitError("index ")
           << raw << " is out of range for axis " << axis << " of size " << size
           << " (valid: [" << -size << ", " << size << "))";
  return index;
}

LogicalResult reshapeKernel(Operation *op, ArrayRef<Tensor> in,
                            SmallVectorImpl<Tensor> &out) {
  Tensor result = makeResult(op->getResult(0).getType());
  if (result.numElements() != in[0].numElements())
    return op->emitError("reshape changes the element count");
  result.f = in[0].f;
  result.i = in[0].i;
  out.push_back(std::move(result));
  return success();
}

LogicalResult transposeKernel(Operation *op, ArrayRef<Tensor> in,
                              SmallVectorImpl<Tensor> &out) {
  ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  SmallVector<int64_t> srcStrides = stridesOf(src.shape);
  // Result dimension d walks operand dimension perm[d].
  SmallVector<int64_t> strides;
  for (int64_t p : perm)
    strides.push_back(srcStrides[p]);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
    unravel(k, result.shape, coords);
    copyElement(result, k, src, ravel(coords, strides));
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult concatKernel(Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  auto axis = static_cast<int64_t>(cast<ConcatOp>(op).getAxis());
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t outer = product(result.shape, 0, axis);
  int64_t inner = product(result.shape, axis + 1, result.rank());
  int64_t resultRow = result.shape[axis] * inner;
  int64_t offset = 0; // along the axis, in units of `inner`
  for (const Tensor &input : in) {
    int64_t row = input.shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < row; ++j)
        copyElement(result, o * resultRow + offset + j, input, o * row + j);
    offset += row;
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult sliceKernel(Operation *op, ArrayRef<Tensor> in,
                          SmallVectorImpl<Tensor> &out) {
  auto slice = cast<SliceOp>(op);
  ArrayRef<int64_t> starts = slice.getStarts(), steps = slice.getSteps();
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  SmallVector<int64_t> srcStrides = stridesOf(src.shape);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
    unravel(k, result.shape, coords);
    int64_t index = 0;
    for (int64_t d = 0; d < src.rank(); ++d) {
      int64_t c = starts[d] + coords[d] * steps[d];
      if (c < 0 || c >= src.shape[d])
        return op->emitError("slice index ")
               << c << " leaves dimension " << d << " of size " << src.shape[d];
      index += c * srcStrides[d];
    }
    copyElement(result, k, src, index);
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult gatherKernel(Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  auto axis = static_cast<int64_t>(cast<GatherOp>(op).getAxis());
  const Tensor &data = in[0], &indices = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t outer = product(data.shape, 0, axis);
  int64_t size = data.shape[axis];
  int64_t inner = product(data.shape, axis + 1, data.rank());
  int64_t count = indices.numElements();
  for (int64_t j = 0; j < count; ++j) {
    FailureOr<int64_t> index = readIndex(op, indices, j, size, axis);
    if (failed(index))
      return failure();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t n = 0; n < inner; ++n)
        copyElement(result, (o * count + j) * inner + n, data,
                    (o * size + *index) * inner + n);
  }
  out.push_back(std::move(result));
  return success();
}

/// For every position of `indices` (of data's rank), the linear index into
/// `data` whose coordinates are the position's with coordinate `axis` replaced
/// by the index; fails at `op` when one leaves `data`.
FailureOr<SmallVector<int64_t>> elementTargets(Operation *op,
                                               const Tensor &data,
                                               const Tensor &indices,
                                               int64_t axis) {
  SmallVector<int64_t> targets;
  SmallVector<int64_t> strides = stridesOf(data.shape);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = indices.numElements(); k < e; ++k) {
    unravel(k, indices.shape, coords);
    FailureOr<int64_t> index =
        readIndex(op, indices, k, data.shape[axis], axis);
    if (failed(index))
      return failure();
    coords[axis] = *index;
    for (int64_t d = 0; d < data.rank(); ++d)
      if (coords[d] >= data.shape[d])
        return op->emitError("indices dimension ")
               << d << " (size " << indices.shape[d]
               << ") is larger than data's (size " << data.shape[d] << ")";
    targets.push_back(ravel(coords, strides));
  }
  return targets;
}

LogicalResult gatherElementsKernel(Operation *op, ArrayRef<Tensor> in,
                                   SmallVectorImpl<Tensor> &out) {
  auto axis = static_cast<int64_t>(cast<GatherElementsOp>(op).getAxis());
  FailureOr<SmallVector<int64_t>> targets =
      elementTargets(op, in[0], in[1], axis);
  if (failed(targets))
    return failure();
  Tensor result = makeResult(op->getResult(0).getType());
  for (auto [k, target] : llvm::enumerate(*targets))
    copyElement(result, k, in[0], target);
  out.push_back(std::move(result));
  return success();
}

LogicalResult scatterElementsKernel(Operation *op, ArrayRef<Tensor> in,
                                    SmallVectorImpl<Tensor> &out) {
  auto scatter = cast<ScatterElementsOp>(op);
  auto axis = static_cast<int64_t>(scatter.getAxis());
  StringRef reduction = scatter.getReduction();
  const Tensor &data = in[0], &updates = in[2];
  FailureOr<SmallVector<int64_t>> targets =
      elementTargets(op, data, in[1], axis);
  if (failed(targets))
    return failure();
  Tensor result = data;
  for (auto [k, target] : llvm::enumerate(*targets)) {
    if (reduction == "none") {
      copyElement(result, target, updates, k);
    } else if (result.isFloat()) {
      double t = result.f[target], u = updates.f[k];
      result.set(target, reduction == "add"   ? t + u
                         : reduction == "mul" ? t * u
                         : reduction == "max" ? std::max(t, u)
                                              : std::min(t, u));
    } else {
      int64_t t = result.i[target], u = updates.i[k];
      // Wrapping, as the integer kernels of the CPU runtime.
      result.setInt(
          target,
          reduction == "add"   ? static_cast<int64_t>(uint64_t(t) + uint64_t(u))
          : reduction == "mul" ? static_cast<int64_t>(uint64_t(t) * uint64_t(u))
          : reduction == "max" ? std::max(t, u)
                               : std::min(t, u));
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult broadcastKernel(Operation *op, ArrayRef<Tensor> in,
                              SmallVectorImpl<Tensor> &out) {
  Tensor result = makeResult(op->getResult(0).getType());
  BroadcastIndexer indexer(in[0].shape, result.shape);
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    copyElement(result, k, in[0], indexer(k));
  out.push_back(std::move(result));
  return success();
}

LogicalResult tileKernel(Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) {
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  SmallVector<int64_t> srcStrides = stridesOf(src.shape);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
    unravel(k, result.shape, coords);
    // A non-empty result dimension implies a non-empty operand dimension.
    for (int64_t d = 0; d < src.rank(); ++d)
      coords[d] %= src.shape[d];
    copyElement(result, k, src, ravel(coords, srcStrides));
  }
  out.push_back(std::move(result));
  return success();
}

/// Maps an out-of-range coordinate `c` of a dimension of `size` (> 0) back
/// into it by mirroring without repeating the edge (reflect) or clamping
/// (edge).
int64_t foldCoordinate(int64_t c, int64_t size, bool reflect) {
  if (!reflect || size == 1)
    return std::min(std::max(c, int64_t(0)), size - 1);
  int64_t period = 2 * (size - 1);
  c %= period;
  if (c < 0)
    c += period;
  return c < size ? c : period - c;
}

LogicalResult padKernel(Operation *op, ArrayRef<Tensor> in,
                        SmallVectorImpl<Tensor> &out) {
  auto pad = cast<PadOp>(op);
  ArrayRef<int64_t> low = pad.getLow();
  StringRef mode = pad.getMode();
  double fill = pad.getValue().convertToDouble();
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  SmallVector<int64_t> srcStrides = stridesOf(src.shape);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
    unravel(k, result.shape, coords);
    bool inside = true;
    int64_t index = 0;
    for (int64_t d = 0; d < src.rank(); ++d) {
      // Negative low amounts crop: the coordinate moves further in.
      int64_t c = coords[d] - low[d];
      int64_t size = src.shape[d];
      if (c < 0 || c >= size) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (size == 0)
          return op->emitError("cannot ")
                 << mode << "-pad empty dimension " << d;
        c = foldCoordinate(c, size, mode == "reflect");
      }
      index += c * srcStrides[d];
    }
    if (inside)
      copyElement(result, k, src, index);
    else
      result.set(k, fill);
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult triluKernel(Operation *op, ArrayRef<Tensor> in,
                          SmallVectorImpl<Tensor> &out) {
  auto trilu = cast<TriluOp>(op);
  bool upper = trilu.getUpper();
  auto diagonal = static_cast<int64_t>(trilu.getK());
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t rows = src.shape[src.rank() - 2], cols = src.shape[src.rank() - 1];
  for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
    int64_t col = k % cols, row = (k / cols) % rows;
    bool keep = upper ? col - row >= diagonal : col - row <= diagonal;
    if (keep)
      copyElement(result, k, src, k); // the rest stays zero
  }
  out.push_back(std::move(result));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Gradient primitives (adjoints of gather, slice and pad)
//===----------------------------------------------------------------------===//

namespace {

/// Stores the double accumulators `acc` into a float tensor, rounding each
/// to the element type once.
Tensor storeAccumulated(Type type, const std::vector<double> &acc) {
  Tensor result = makeResult(type);
  for (auto [k, value] : llvm::enumerate(acc))
    result.set(static_cast<int64_t>(k), value);
  return result;
}

LogicalResult gatherGradKernel(Operation *op, ArrayRef<Tensor> in,
                               SmallVectorImpl<Tensor> &out) {
  auto axis = static_cast<int64_t>(cast<GatherGradOp>(op).getAxis());
  const Tensor &grad = in[0], &indices = in[1];
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = product(shape, 0, axis);
  int64_t size = shape[axis];
  int64_t inner = product(shape, axis + 1, type.getRank());
  int64_t count = indices.numElements();
  std::vector<double> acc(type.getNumElements(), 0.0);
  for (int64_t j = 0; j < count; ++j) {
    FailureOr<int64_t> index = readIndex(op, indices, j, size, axis);
    if (failed(index))
      return failure();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t n = 0; n < inner; ++n)
        acc[(o * size + *index) * inner + n] +=
            grad.f[(o * count + j) * inner + n];
  }
  out.push_back(storeAccumulated(type, acc));
  return success();
}

LogicalResult sliceGradKernel(Operation *op, ArrayRef<Tensor> in,
                              SmallVectorImpl<Tensor> &out) {
  auto sliceGrad = cast<SliceGradOp>(op);
  ArrayRef<int64_t> starts = sliceGrad.getStarts(),
                    steps = sliceGrad.getSteps();
  const Tensor &grad = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  SmallVector<int64_t> strides = stridesOf(result.shape);
  SmallVector<int64_t> coords;
  for (int64_t k = 0, e = grad.numElements(); k < e; ++k) {
    unravel(k, grad.shape, coords);
    int64_t index = 0;
    for (int64_t d = 0; d < result.rank(); ++d) {
      int64_t c = starts[d] + coords[d] * steps[d];
      if (c < 0 || c >= result.shape[d])
        return op->emitError("slice index ") << c << " leaves dimension " << d
                                             << " of size " << result.shape[d];
      index += c * strides[d];
    }
    // The indices a slice takes are distinct: a copy, not a sum.
    result.f[index] = grad.f[k];
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult padGradKernel(Operation *op, ArrayRef<Tensor> in,
                            SmallVectorImpl<Tensor> &out) {
  auto padGrad = cast<PadGradOp>(op);
  ArrayRef<int64_t> low = padGrad.getLow();
  StringRef mode = padGrad.getMode();
  const Tensor &grad = in[0];
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> strides = stridesOf(shape);
  std::vector<double> acc(type.getNumElements(), 0.0);
  SmallVector<int64_t> coords;
  // The same coordinate map as the pad kernel, run backwards.
  for (int64_t k = 0, e = grad.numElements(); k < e; ++k) {
    unravel(k, grad.shape, coords);
    bool inside = true;
    int64_t index = 0;
    for (int64_t d = 0, rank = type.getRank(); d < rank; ++d) {
      int64_t c = coords[d] - low[d];
      int64_t size = shape[d];
      if (c < 0 || c >= size) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (size == 0)
          return op->emitError("cannot ")
                 << mode << "-pad empty dimension " << d;
        c = foldCoordinate(c, size, mode == "reflect");
      }
      index += c * strides[d];
    }
    if (inside)
      acc[index] += grad.f[k];
  }
  out.push_back(storeAccumulated(type, acc));
  return success();
}

} // namespace

void mlir::dtg::interp::registerShapeKernels(KernelRegistry &registry) {
  registry.add<ReshapeOp>(reshapeKernel);
  registry.add<TransposeOp>(transposeKernel);
  registry.add<ConcatOp>(concatKernel);
  registry.add<SliceOp>(sliceKernel);
  registry.add<GatherOp>(gatherKernel);
  registry.add<GatherElementsOp>(gatherElementsKernel);
  registry.add<ScatterElementsOp>(scatterElementsKernel);
  registry.add<BroadcastOp>(broadcastKernel);
  registry.add<TileOp>(tileKernel);
  registry.add<PadOp>(padKernel);
  registry.add<TriluOp>(triluKernel);
  registry.add<GatherGradOp>(gatherGradKernel);
  registry.add<SliceGradOp>(sliceGradKernel);
  registry.add<PadGradOp>(padGradKernel);
}
