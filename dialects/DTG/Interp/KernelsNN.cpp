//===- KernelsNN.cpp - interpreter kernels of the NN family ---------------===//
//
// Contractions (matmul, gemm, einsum), convolution, pooling, normalizations,
// softmax and dropout. Float results accumulate in double and are rounded to
// the element type once, by Tensor::set; integer contractions accumulate in
// wrapping 64-bit arithmetic. Loops follow the op's definition directly.
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/IR/DTGShapeInference.h"
#include "dialects/DTG/Interp/Interpreter.h"
#include "dialects/DTG/Interp/Philox.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

namespace {

/// Product of `shape`'s dimensions.
int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Advances `index` to the next multi-index of `shape` in row-major order;
/// false once every index has been visited (and `index` is back at zero).
bool nextIndex(MutableArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

/// Wrapping 64-bit integer arithmetic for integer contractions.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult matmulKernel(Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  const Tensor &lhs = in[0], &rhs = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  if (lhs.rank() < 2 || rhs.rank() < 2)
    return op->emitError("operands need rank at least 2");
  int64_t m = lhs.shape[lhs.rank() - 2], k = lhs.shape.back();
  int64_t n = rhs.shape.back();
  if (rhs.shape[rhs.rank() - 2] != k || result.rank() < 2 ||
      result.shape[result.rank() - 2] != m || result.shape.back() != n)
    return op->emitError("operand shapes do not match the result");
  ArrayRef<int64_t> batch = ArrayRef<int64_t>(result.shape).drop_back(2);
  if (!isBroadcastableTo(ArrayRef<int64_t>(lhs.shape).drop_back(2), batch) ||
      !isBroadcastableTo(ArrayRef<int64_t>(rhs.shape).drop_back(2), batch))
    return op->emitError("batch dimensions do not broadcast to the result");
  BroadcastIndexer lhsBatch(ArrayRef<int64_t>(lhs.shape).drop_back(2), batch);
  BroadcastIndexer rhsBatch(ArrayRef<int64_t>(rhs.shape).drop_back(2), batch);
  bool isFloat = result.isFloat();
  for (int64_t b = 0, e = product(batch); b < e; ++b) {
    int64_t lhsBase = lhsBatch(b) * m * k, rhsBase = rhsBatch(b) * k * n;
    int64_t resultBase = b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t lhsRow = lhsBase + i * k, rhsCol = rhsBase + j;
        if (isFloat) {
          double acc = 0.0;
          for (int64_t p = 0; p < k; ++p)
            acc += lhs.get(lhsRow + p) * rhs.get(rhsCol + p * n);
          result.set(resultBase + i * n + j, acc);
        } else {
          int64_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc = wrapAdd(acc, wrapMul(lhs.getInt(lhsRow + p),
                                       rhs.getInt(rhsCol + p * n)));
          result.setInt(resultBase + i * n + j, acc);
        }
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult gemmKernel(Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) {
  auto gemm = cast<GemmOp>(op);
  const Tensor &a = in[0], &b = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  if (a.rank() != 2 || b.rank() != 2 || result.rank() != 2)
    return op->emitError("A, B and the result must be matrices");
  bool transA = gemm.getTransA(), transB = gemm.getTransB();
  int64_t m = a.shape[transA ? 1 : 0], k = a.shape[transA ? 0 : 1];
  int64_t n = b.shape[transB ? 0 : 1];
  if (b.shape[transB ? 1 : 0] != k || result.shape[0] != m ||
      result.shape[1] != n)
    return op->emitError("operand shapes do not match the result");
  // Element (i, p) of op(A) and (p, j) of op(B).
  int64_t aRowStride = transA ? 1 : k, aColStride = transA ? m : 1;
  int64_t bRowStride = transB ? 1 : n, bColStride = transB ? k : 1;
  double alpha = gemm.getAlpha().convertToDouble();
  double beta = gemm.getBeta().convertToDouble();
  const Tensor *c = gemm.getC() ? &in[2] : nullptr;
  if (c && !isBroadcastableTo(c->shape, result.shape))
    return op->emitError("C does not broadcast to the result");
  std::optional<BroadcastIndexer> cIndex;
  if (c)
    cIndex.emplace(c->shape, result.shape);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p)
        acc += a.get(i * aRowStride + p * aColStride) *
               b.get(p * bRowStride + j * bColStride);
      double value = alpha * acc;
      if (c)
        value += beta * c->get((*cIndex)(i * n + j));
      result.set(i * n + j, value);
    }
  }
  out.push_back(std::move(result));
  return success();
}

/// How one einsum operand is read: for each letter, the stride its value
/// moves through the operand (the sum over the term's positions holding the
/// letter, 0 where the dimension is a broadcast 1).
struct EinsumOperand {
  const Tensor *tensor;
  /// Indexed like the kernel's letter list.
  SmallVector<int64_t> letterStrides;
};

LogicalResult einsumKernel(Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  StringRef equation = cast<EinsumOp>(op).getEquation();
  Tensor result = makeResult(op->getResult(0).getType());
  size_t arrow = equation.find("->");
  if (arrow == StringRef::npos)
    return op->emitError("equation '") << equation << "' has no '->'";
  StringRef outputTerm = equation.drop_front(arrow + 2);
  SmallVector<StringRef> terms;
  equation.take_front(arrow).split(terms, ',');
  if (terms.size() != in.size())
    return op->emitError("equation has ")
           << terms.size() << " terms for " << in.size() << " operands";

  // Letters in order: the output's first, then the summed ones.
  SmallVector<char> letters;
  int slot[256];
  std::fill(std::begin(slot), std::end(slot), -1);
  auto addLetter = [&](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (slot[u] < 0) {
      slot[u] = static_cast<int>(letters.size());
      letters.push_back(c);
    }
    return slot[u];
  };
  for (char c : outputTerm) {
    if (slot[static_cast<unsigned char>(c)] >= 0)
      return op->emitError("output letter '") << c << "' appears twice";
    addLetter(c);
  }
  size_t numOutput = letters.size();
  if (static_cast<int64_t>(numOutput) != result.rank())
    return op->emitError("output term '")
           << outputTerm << "' does not match the result rank";

  // Letter sizes: a dimension of 1 broadcasts against any other size.
  SmallVector<int64_t> sizes(numOutput, 1);
  for (auto [term, tensor] : llvm::zip(terms, in)) {
    if (static_cast<int64_t>(term.size()) != tensor.rank())
      return op->emitError("term '")
             << term << "' does not match rank " << tensor.rank();
    for (auto [d, c] : llvm::enumerate(term)) {
      int s = addLetter(c);
      if (static_cast<size_t>(s) >= sizes.size())
        sizes.push_back(1);
      int64_t dim = tensor.shape[d];
      if (sizes[s] == 1)
        sizes[s] = dim;
      else if (dim != 1 && dim != sizes[s])
        return op->emitError("sizes of '") << c << "' disagree";
    }
  }
  for (size_t s = 0; s < numOutput; ++s) {
    // A letter in no input has no size; the verifier rejects it.
    if (result.shape[s] != sizes[s])
      return op->emitError("result dimension ")
             << s << " is " << result.shape[s] << ", expected " << sizes[s];
  }

  SmallVector<EinsumOperand> operands;
  for (auto [term, tensor] : llvm::zip(terms, in)) {
    EinsumOperand operand{&tensor, SmallVector<int64_t>(letters.size(), 0)};
    SmallVector<int64_t> strides = stridesOf(tensor.shape);
    for (auto [d, c] : llvm::enumerate(term))
      if (tensor.shape[d] != 1)
        operand.letterStrides[slot[static_cast<unsigned char>(c)]] +=
            strides[d];
    operands.push_back(std::move(operand));
  }

  ArrayRef<int64_t> summedSizes =
      ArrayRef<int64_t>(sizes).drop_front(numOutput);
  int64_t summedCount = product(summedSizes);
  bool isFloat = result.isFloat();
  SmallVector<int64_t> value(letters.size(), 0); // each letter's index
  MutableArrayRef<int64_t> outputValue(value.data(), numOutput);
  MutableArrayRef<int64_t> summedValue(value.data() + numOutput,
                                       value.size() - numOutput);
  for (int64_t r = 0, e = result.numElements(); r < e; ++r) {
    double accF = 0.0;
    int64_t accI = 0;
    std::fill(summedValue.begin(), summedValue.end(), 0);
    for (int64_t t = 0; t < summedCount; ++t) {
      double termF = 1.0;
      int64_t termI = 1;
      for (const EinsumOperand &operand : operands) {
        int64_t index = 0;
        for (size_t s = 0; s < value.size(); ++s)
          index += value[s] * operand.letterStrides[s];
        if (isFloat)
          termF *= operand.tensor->get(index);
        else
          termI = wrapMul(termI, operand.tensor->getInt(index));
      }
      accF += termF;
      accI = wrapAdd(accI, termI);
      nextIndex(summedValue, summedSizes);
    }
    if (isFloat)
      result.set(r, accF);
    else
      result.setInt(r, accI);
    nextIndex(outputValue, ArrayRef<int64_t>(sizes).take_front(numOutput));
  }
  out.push_back(std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// The geometry of a window op over the spatial dimensions of [N, C, D...].
struct Window {
  SmallVector<int64_t> inputSpatial, outputSpatial, kernel;
  ArrayRef<int64_t> strides, pads, dilations;

  int64_t rank() const { return static_cast<int64_t>(kernel.size()); }
  int64_t padBegin(int64_t d) const { return pads[d]; }
  int64_t padEnd(int64_t d) const { return pads[rank() + d]; }
};

/// The window of an op reading `input` ([N, C, D...]) into `result`.
Window makeWindow(const Tensor &input, const Tensor &result,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  Window w;
  w.inputSpatial.assign(input.shape.begin() + 2, input.shape.end());
  w.outputSpatial.assign(result.shape.begin() + 2, result.shape.end());
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = strides;
  w.pads = pads;
  w.dilations = dilations;
  return w;
}

/// One window of one output position: the row-major offsets of the input
/// elements it covers (inside the input, not the padding), the matching
/// offsets into the kernel, and how many of its taps lie inside the padded
/// input (what count_include_pad divides by; taps past the padded end, which
/// ceil_mode windows may have, count nowhere).
struct Taps {
  SmallVector<int64_t> input, kernel;
  int64_t paddedCount = 0;
};

/// Checks the window attributes against the shapes (the verifier's rules, so
/// that a kernel never indexes out of bounds) and the output size against
/// dtg::windowOutputSize.
LogicalResult checkWindow(Operation *op, const Window &w, bool ceilMode) {
  int64_t k = w.rank();
  if (static_cast<int64_t>(w.inputSpatial.size()) != k ||
      static_cast<int64_t>(w.outputSpatial.size()) != k ||
      static_cast<int64_t>(w.strides.size()) != k ||
      static_cast<int64_t>(w.dilations.size()) != k ||
      static_cast<int64_t>(w.pads.size()) != 2 * k)
    return op->emitError("window attributes need ")
           << k << " entries (pads " << 2 * k << ")";
  for (int64_t d = 0; d < k; ++d)
    if (w.strides[d] <= 0 || w.dilations[d] <= 0 || w.kernel[d] <= 0 ||
        w.pads[d] < 0 || w.pads[k + d] < 0)
      return op->emitError("bad window attributes in spatial dimension ") << d;
  for (int64_t d = 0; d < k; ++d) {
    int64_t expected =
        windowOutputSize(w.inputSpatial[d], w.kernel[d], w.strides[d],
                         w.dilations[d], w.padBegin(d), w.padEnd(d), ceilMode);
    if (w.outputSpatial[d] != expected)
      return op->emitError("result has ")
             << w.outputSpatial[d] << " positions in spatial dimension " << d
             << ", expected " << expected;
  }
  return success();
}

/// The taps of the window at output multi-index `position`.
Taps windowTaps(const Window &w, ArrayRef<int64_t> position) {
  Taps taps;
  int64_t k = w.rank();
  SmallVector<int64_t> inputStrides = stridesOf(w.inputSpatial);
  SmallVector<int64_t> tap(k, 0);
  int64_t kernelOffset = 0;
  do {
    bool inInput = true, inPadded = true;
    int64_t inputOffset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i =
          position[d] * w.strides[d] - w.padBegin(d) + tap[d] * w.dilations[d];
      if (i < 0 || i >= w.inputSpatial[d])
        inInput = false;
      if (i >= w.inputSpatial[d] + w.padEnd(d))
        inPadded = false;
      inputOffset += i * inputStrides[d];
    }
    if (inPadded)
      ++taps.paddedCount;
    if (inInput) {
      taps.input.push_back(inputOffset);
      taps.kernel.push_back(kernelOffset);
    }
    ++kernelOffset;
  } while (nextIndex(tap, w.kernel));
  return taps;
}

LogicalResult convKernel(Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) {
  auto conv = cast<ConvOp>(op);
  const Tensor &input = in[0], &weight = in[1];
  const Tensor *bias = conv.getBias() ? &in[2] : nullptr;
  Tensor result = makeResult(op->getResult(0).getType());
  if (input.rank() < 3 || weight.rank() != input.rank() ||
      result.rank() != input.rank())
    return op->emitError("input, weight and result need the same rank >= 3");
  int64_t batch = input.shape[0], channels = input.shape[1];
  int64_t filters = weight.shape[0], group = conv.getGroup();
  if (group <= 0 || filters % group != 0 ||
      weight.shape[1] * group != channels || result.shape[0] != batch ||
      result.shape[1] != filters || (bias && bias->numElements() != filters))
    return op->emitError("operand shapes do not match the result");
  Window w =
      makeWindow(input, result, ArrayRef<int64_t>(weight.shape).drop_front(2),
                 conv.getStrides(), conv.getPads(), conv.getDilations());
  if (failed(checkWindow(op, w, /*ceilMode=*/false)))
    return failure();
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);
  int64_t kernelSize = product(w.kernel);
  int64_t channelsPerGroup = channels / group;
  int64_t filtersPerGroup = filters / group;

  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t f = 0; f < filters; ++f) {
        int64_t g = f / filtersPerGroup;
        double acc = 0.0;
        for (int64_t c = 0; c < channelsPerGroup; ++c) {
          int64_t inputBase =
              (n * channels + g * channelsPerGroup + c) * inputSize;
          int64_t weightBase = (f * channelsPerGroup + c) * kernelSize;
          for (size_t t = 0; t < taps.input.size(); ++t)
            acc += input.f[inputBase + taps.input[t]] *
                   weight.f[weightBase + taps.kernel[t]];
        }
        if (bias)
          acc += bias->f[f];
        result.set((n * filters + f) * outputSize + p, acc);
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

/// Pooling: max, or average dividing by the window's input elements (or,
/// with `countIncludePad`, its taps inside the padded input).
template <typename OpTy>
LogicalResult poolKernel(Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out, bool isMax,
                         bool countIncludePad) {
  auto pool = cast<OpTy>(op);
  const Tensor &input = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  if (result.rank() != input.rank() || input.rank() < 3 ||
      result.shape[0] != input.shape[0] || result.shape[1] != input.shape[1])
    return op->emitError("operand shape does not match the result");
  Window w = makeWindow(input, result, pool.getKernel(), pool.getStrides(),
                        pool.getPads(), pool.getDilations());
  if (failed(checkWindow(op, w, pool.getCeilMode())))
    return failure();
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);

  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    for (int64_t plane = 0; plane < planes; ++plane) {
      const double *x = input.f.data() + plane * inputSize;
      double value;
      if (isMax) {
        // Padding never wins: a window of padding only is -inf.
        value = -std::numeric_limits<double>::infinity();
        for (int64_t t : taps.input) {
          if (std::isnan(x[t])) {
            value = x[t];
            break;
          }
          value = std::max(value, x[t]);
        }
      } else {
        double sum = 0.0;
        for (int64_t t : taps.input)
          sum += x[t];
        int64_t count = countIncludePad
                            ? taps.paddedCount
                            : static_cast<int64_t>(taps.input.size());
        value = sum / static_cast<double>(count);
      }
      result.set(plane * outputSize + p, value);
    }
  }
  out.push_back(std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Checks that `x` is [N, C, ...] and each of `params` has C elements.
LogicalResult checkChannels(Operation *op, const Tensor &x,
                            ArrayRef<Tensor> params) {
  if (x.rank() < 2)
    return op->emitError("input needs rank at least 2 ([N, C, ...])");
  for (const Tensor &p : params)
    if (p.numElements() != x.shape[1])
      return op->emitError("per-channel operands need ")
             << x.shape[1] << " elements";
  return success();
}

LogicalResult batchNormInferenceKernel(Operation *op, ArrayRef<Tensor> in,
                                       SmallVectorImpl<Tensor> &out) {
  double epsilon =
      cast<BatchNormInferenceOp>(op).getEpsilon().convertToDouble();
  const Tensor &x = in[0], &scale = in[1], &bias = in[2], &mean = in[3],
               &var = in[4];
  if (failed(checkChannels(op, x, in.drop_front())))
    return failure();
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t batch = x.shape[0], channels = x.shape[1];
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      double invStd = 1.0 / std::sqrt(var.f[c] + epsilon);
      int64_t base = (n * channels + c) * inner;
      for (int64_t j = 0; j < inner; ++j)
        result.set(base + j, scale.f[c] * (x.f[base + j] - mean.f[c]) * invStd +
                                 bias.f[c]);
    }
  }
  out.push_back(std::move(result));
  return success();
}

/// Training-mode batch normalization. `unbiasedRunningVar` selects the
/// variance that enters the running average: Bessel-corrected (PyTorch, and
/// the op's definition) or biased (ONNX's reference implementation).
LogicalResult batchNormTraining(Operation *op, ArrayRef<Tensor> in,
                                SmallVectorImpl<Tensor> &out,
                                bool unbiasedRunningVar) {
  auto bn = cast<BatchNormTrainingOp>(op);
  double epsilon = bn.getEpsilon().convertToDouble();
  double momentum = bn.getMomentum().convertToDouble();
  const Tensor &x = in[0], &scale = in[1], &bias = in[2], &runningMean = in[3],
               &runningVar = in[4];
  if (failed(checkChannels(op, x, in.drop_front())))
    return failure();
  int64_t batch = x.shape[0], channels = x.shape[1];
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  int64_t count = batch * inner;
  if (count < (unbiasedRunningVar ? 2 : 1))
    return op->emitError("batch statistics need more than one value per "
                         "channel, got ")
           << count;
  Tensor y = makeResult(op->getResult(0).getType());
  Tensor newMean = makeResult(op->getResult(1).getType());
  Tensor newVar = makeResult(op->getResult(2).getType());
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t j = 0; j < inner; ++j)
        sum += x.f[(n * channels + c) * inner + j];
    double mean = sum / static_cast<double>(count);
    double squares = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t j = 0; j < inner; ++j) {
        double d = x.f[(n * channels + c) * inner + j] - mean;
        squares += d * d;
      }
    }
    double biasedVar = squares / static_cast<double>(count);
    double runningVarSample = unbiasedRunningVar
                                  ? squares / static_cast<double>(count - 1)
                                  : biasedVar;
    double invStd = 1.0 / std::sqrt(biasedVar + epsilon);
    for (int64_t n = 0; n < batch; ++n) {
      int64_t base = (n * channels + c) * inner;
      for (int64_t j = 0; j < inner; ++j)
        y.set(base + j,
              scale.f[c] * (x.f[base + j] - mean) * invStd + bias.f[c]);
    }
    newMean.set(c, momentum * runningMean.f[c] + (1.0 - momentum) * mean);
    newVar.set(c, momentum * runningVar.f[c] +
                      (1.0 - momentum) * runningVarSample);
  }
  out.push_back(std::move(y));
  out.push_back(std::move(newMean));
  out.push_back(std::move(newVar));
  return success();
}

LogicalResult layerNormKernel(Operation *op, ArrayRef<Tensor> in,
                              SmallVectorImpl<Tensor> &out) {
  auto ln = cast<LayerNormOp>(op);
  const Tensor &x = in[0], &scale = in[1];
  const Tensor *bias = ln.getBias() ? &in[2] : nullptr;
  int64_t axis = ln.getAxis();
  if (axis < 0 || axis >= x.rank())
    return op->emitError("axis ") << axis << " is out of range";
  ArrayRef<int64_t> normalized = ArrayRef<int64_t>(x.shape).drop_front(axis);
  if (!isBroadcastableTo(scale.shape, normalized) ||
      (bias && !isBroadcastableTo(bias->shape, normalized)))
    return op->emitError("scale or bias does not broadcast to the normalized "
                         "shape");
  double epsilon = ln.getEpsilon().convertToDouble();
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t inner = product(normalized);
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  BroadcastIndexer scaleIndex(scale.shape, normalized);
  std::optional<BroadcastIndexer> biasIndex;
  if (bias)
    biasIndex.emplace(bias->shape, normalized);
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = x.f.data() + o * inner;
    double sum = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      sum += row[j];
    double mean = sum / static_cast<double>(inner);
    double squares = 0.0;
    for (int64_t j = 0; j < inner; ++j)
      squares += (row[j] - mean) * (row[j] - mean);
    double invStd =
        1.0 / std::sqrt(squares / static_cast<double>(inner) + epsilon);
    for (int64_t j = 0; j < inner; ++j) {
      double value = (row[j] - mean) * invStd * scale.f[scaleIndex(j)];
      if (bias)
        value += bias->f[(*biasIndex)(j)];
      result.set(o * inner + j, value);
    }
  }
  out.push_back(std::move(result));
  return success();
}

/// Softmax (or its logarithm) along `axis`, shifted by the maximum.
LogicalResult softmax(Operation *op, const Tensor &x, int64_t axis, bool log,
                      SmallVectorImpl<Tensor> &out) {
  if (axis < 0 || axis >= x.rank())
    return op->emitError("axis ") << axis << " is out of range";
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  int64_t size = x.shape[axis];
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t base = o * size * inner + j;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < size; ++a)
        max = std::max(max, x.f[base + a * inner]);
      double sum = 0.0;
      for (int64_t a = 0; a < size; ++a)
        sum += std::exp(x.f[base + a * inner] - max);
      double logSum = std::log(sum);
      for (int64_t a = 0; a < size; ++a) {
        double shifted = x.f[base + a * inner] - max;
        result.set(base + a * inner,
                   log ? shifted - logSum : std::exp(shifted) / sum);
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// Dropout with the Philox construction documented in Philox.h: element k is
/// kept iff dropoutBits(dropoutOpKey(seed, step, stream), k + offset) >=
/// dropoutThreshold(ratio), offset the key's third element (0 without); the
/// mask is true where kept.
LogicalResult dropoutKernel(Operation *op, ArrayRef<Tensor> in,
                            SmallVectorImpl<Tensor> &out) {
  auto dropout = cast<DropoutOp>(op);
  const Tensor &x = in[0], &key = in[1];
  double ratio = dropout.getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return op->emitError("ratio ") << ratio << " is outside [0, 1)";
  std::optional<ArrayRef<int64_t>> whole = dropout.getBlockOf();
  int64_t rank = int64_t(x.shape.size());
  if (whole ? key.numElements() != 3 + rank
            : (key.numElements() != 2 && key.numElements() != 3))
    return op->emitError("key must hold two or three integers (seed, step[, "
                         "element offset]), and the block's start with "
                         "block_of");
  if (key.isFloat())
    return op->emitError("key must hold integers");
  int64_t offset = key.numElements() >= 3 ? key.i[2] : 0;
  if (offset < 0)
    return op->emitError("the key's element offset is negative");
  // (With block_of: element k's index in the whole tensor.)
  auto indexOf = [&](int64_t k) {
    if (!whole)
      return k;
    int64_t index = 0, rest = k;
    SmallVector<int64_t> at(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      at[d] = rest % x.shape[d];
      rest /= x.shape[d];
    }
    for (int64_t d = 0; d < rank; ++d)
      index = index * (*whole)[d] + at[d] + key.i[3 + d];
    return index;
  };
  Tensor y = makeResult(op->getResult(0).getType());
  Tensor mask = makeResult(op->getResult(1).getType());
  std::array<uint32_t, 2> opKey =
      dropoutOpKey(key.i[0], key.i[1], dropout.getStream());
  uint64_t threshold = dropoutThreshold(ratio);
  double keptScale = 1.0 / (1.0 - ratio);
  for (int64_t k = 0, e = x.numElements(); k < e; ++k) {
    bool keep =
        dropoutBits(opKey, static_cast<uint64_t>(indexOf(k) + offset)) >=
        threshold;
    y.set(k, keep ? x.f[k] * keptScale : 0.0);
    mask.i[k] = keep;
  }
  out.push_back(std::move(y));
  out.push_back(std::move(mask));
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient primitives of convolution and pooling
//===----------------------------------------------------------------------===//

/// Checks the shapes of a convolution of `input` [N, C, D...] with `weight`
/// [F, C/group, K...] into `grad` [N, F, O...], as the verifiers of the
/// gradient ops do (the window itself is checked by checkWindow).
LogicalResult checkConvGradShapes(Operation *op, ArrayRef<int64_t> input,
                                  ArrayRef<int64_t> weight,
                                  ArrayRef<int64_t> grad, int64_t group) {
  if (input.size() < 3 || weight.size() != input.size() ||
      grad.size() != input.size())
    return op->emitError("input, weight and gradient need the same rank >= 3");
  if (group <= 0 || weight[0] % group != 0 || input[1] % group != 0 ||
      weight[1] != input[1] / group || grad[0] != input[0] ||
      grad[1] != weight[0])
    return op->emitError("operand shapes do not match the result");
  return success();
}

/// The gradient of dtg.conv with respect to its input: every output
/// position's gradient, times each tap's weight, added to the input element
/// the tap read.
LogicalResult convInputGradKernel(Operation *op, ArrayRef<Tensor> in,
                                  SmallVectorImpl<Tensor> &out) {
  auto convGrad = cast<ConvInputGradOp>(op);
  const Tensor &grad = in[0], &weight = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t group = convGrad.getGroup();
  if (failed(checkConvGradShapes(op, result.shape, weight.shape, grad.shape,
                                 group)))
    return failure();
  Window w = makeWindow(
      result, grad, ArrayRef<int64_t>(weight.shape).drop_front(2),
      convGrad.getStrides(), convGrad.getPads(), convGrad.getDilations());
  if (failed(checkWindow(op, w, /*ceilMode=*/false)))
    return failure();
  int64_t batch = result.shape[0], channels = result.shape[1];
  int64_t filters = weight.shape[0];
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);
  int64_t kernelSize = product(w.kernel);
  int64_t channelsPerGroup = channels / group;
  int64_t filtersPerGroup = filters / group;

  std::vector<double> acc(result.numElements(), 0.0);
  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t f = 0; f < filters; ++f) {
        int64_t g = f / filtersPerGroup;
        double gradValue = grad.f[(n * filters + f) * outputSize + p];
        for (int64_t c = 0; c < channelsPerGroup; ++c) {
          int64_t inputBase =
              (n * channels + g * channelsPerGroup + c) * inputSize;
          int64_t weightBase = (f * channelsPerGroup + c) * kernelSize;
          for (size_t t = 0; t < taps.input.size(); ++t)
            acc[inputBase + taps.input[t]] +=
                gradValue * weight.f[weightBase + taps.kernel[t]];
        }
      }
    }
  }
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    result.set(k, acc[k]);
  out.push_back(std::move(result));
  return success();
}

/// The gradient of dtg.conv with respect to its weight: for each tap, the
/// sum over batch and output positions of the output gradient times the
/// input element the tap read (padding reads zero and adds nothing).
LogicalResult convWeightGradKernel(Operation *op, ArrayRef<Tensor> in,
                                   SmallVectorImpl<Tensor> &out) {
  auto convGrad = cast<ConvWeightGradOp>(op);
  const Tensor &grad = in[0], &input = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t group = convGrad.getGroup();
  if (failed(checkConvGradShapes(op, input.shape, result.shape, grad.shape,
                                 group)))
    return failure();
  Window w = makeWindow(
      input, grad, ArrayRef<int64_t>(result.shape).drop_front(2),
      convGrad.getStrides(), convGrad.getPads(), convGrad.getDilations());
  if (failed(checkWindow(op, w, /*ceilMode=*/false)))
    return failure();
  int64_t batch = input.shape[0], channels = input.shape[1];
  int64_t filters = result.shape[0];
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);
  int64_t kernelSize = product(w.kernel);
  int64_t channelsPerGroup = channels / group;
  int64_t filtersPerGroup = filters / group;

  std::vector<double> acc(result.numElements(), 0.0);
  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t f = 0; f < filters; ++f) {
        int64_t g = f / filtersPerGroup;
        double gradValue = grad.f[(n * filters + f) * outputSize + p];
        for (int64_t c = 0; c < channelsPerGroup; ++c) {
          int64_t inputBase =
              (n * channels + g * channelsPerGroup + c) * inputSize;
          int64_t weightBase = (f * channelsPerGroup + c) * kernelSize;
          for (size_t t = 0; t < taps.input.size(); ++t)
            acc[weightBase + taps.kernel[t]] +=
                gradValue * input.f[inputBase + taps.input[t]];
        }
      }
    }
  }
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    result.set(k, acc[k]);
  out.push_back(std::move(result));
  return success();
}

/// Checks that a pooling gradient `grad` fits the pooled input's shape
/// `input` (the window itself is checked by checkWindow).
LogicalResult checkPoolGradShapes(Operation *op, const Tensor &grad,
                                  ArrayRef<int64_t> input) {
  if (grad.rank() < 3 || grad.rank() != static_cast<int64_t>(input.size()) ||
      grad.shape[0] != input[0] || grad.shape[1] != input[1])
    return op->emitError("gradient shape does not match the input");
  return success();
}

/// The gradient of dtg.max_pool: each window's gradient goes to the element
/// PyTorch's CPU kernel selects, the first strict maximum in tap order
/// (`val > max || isnan(val)`, starting from the first tap inside the input).
LogicalResult maxPoolGradKernel(Operation *op, ArrayRef<Tensor> in,
                                SmallVectorImpl<Tensor> &out) {
  auto pool = cast<MaxPoolGradOp>(op);
  const Tensor &grad = in[0], &input = in[1];
  Tensor result = makeResult(op->getResult(0).getType());
  if (failed(checkPoolGradShapes(op, grad, input.shape)))
    return failure();
  Window w = makeWindow(input, grad, pool.getKernel(), pool.getStrides(),
                        pool.getPads(), pool.getDilations());
  if (failed(checkWindow(op, w, pool.getCeilMode())))
    return failure();
  int64_t planes = input.shape[0] * input.shape[1];
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);

  std::vector<double> acc(result.numElements(), 0.0);
  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    // A window of padding only selects nothing.
    if (taps.input.empty())
      continue;
    for (int64_t plane = 0; plane < planes; ++plane) {
      const double *x = input.f.data() + plane * inputSize;
      int64_t best = taps.input.front();
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t t : taps.input) {
        if (x[t] > max || std::isnan(x[t])) {
          max = x[t];
          best = t;
        }
      }
      acc[plane * inputSize + best] += grad.f[plane * outputSize + p];
    }
  }
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    result.set(k, acc[k]);
  out.push_back(std::move(result));
  return success();
}

/// The gradient of dtg.avg_pool: each window's gradient divided by the
/// forward op's divisor, added to every input element the window covers.
LogicalResult avgPoolGradKernel(Operation *op, ArrayRef<Tensor> in,
                                SmallVectorImpl<Tensor> &out) {
  auto pool = cast<AvgPoolGradOp>(op);
  const Tensor &grad = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  if (failed(checkPoolGradShapes(op, grad, result.shape)))
    return failure();
  Window w = makeWindow(result, grad, pool.getKernel(), pool.getStrides(),
                        pool.getPads(), pool.getDilations());
  if (failed(checkWindow(op, w, pool.getCeilMode())))
    return failure();
  bool countIncludePad = pool.getCountIncludePad();
  int64_t planes = result.shape[0] * result.shape[1];
  int64_t inputSize = product(w.inputSpatial);
  int64_t outputSize = product(w.outputSpatial);

  std::vector<double> acc(result.numElements(), 0.0);
  SmallVector<int64_t> position(w.rank(), 0);
  for (int64_t p = 0; p < outputSize;
       ++p, nextIndex(position, w.outputSpatial)) {
    Taps taps = windowTaps(w, position);
    if (taps.input.empty())
      continue;
    int64_t count = countIncludePad ? taps.paddedCount
                                    : static_cast<int64_t>(taps.input.size());
    for (int64_t plane = 0; plane < planes; ++plane) {
      double share =
          grad.f[plane * outputSize + p] / static_cast<double>(count);
      for (int64_t t : taps.input)
        acc[plane * inputSize + t] += share;
    }
  }
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    result.set(k, acc[k]);
  out.push_back(std::move(result));
  return success();
}

} // namespace

void mlir::dtg::interp::registerNNKernels(KernelRegistry &registry) {
  registry.add<MatMulOp>(matmulKernel);
  registry.add<GemmOp>(gemmKernel);
  registry.add<EinsumOp>(einsumKernel);
  registry.add<ConvOp>(convKernel);
  registry.add<MaxPoolOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return poolKernel<MaxPoolOp>(op, in, out, /*isMax=*/true,
                                     /*countIncludePad=*/false);
      });
  registry.add<AvgPoolOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return poolKernel<AvgPoolOp>(op, in, out, /*isMax=*/false,
                                     cast<AvgPoolOp>(op).getCountIncludePad());
      });
  registry.add<BatchNormInferenceOp>(batchNormInferenceKernel);
  registry.add<BatchNormTrainingOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return batchNormTraining(
            op, in, out, cast<BatchNormTrainingOp>(op).getUnbiasedRunningVar());
      });
  registry.add<LayerNormOp>(layerNormKernel);
  registry.add<SoftmaxOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return softmax(op, in[0], cast<SoftmaxOp>(op).getAxis(), /*log=*/false,
                       out);
      });
  registry.add<LogSoftmaxOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return softmax(op, in[0], cast<LogSoftmaxOp>(op).getAxis(),
                       /*log=*/true, out);
      });
  registry.add<DropoutOp>(dropoutKernel);
  registry.add<ConvInputGradOp>(convInputGradKernel);
  registry.add<ConvWeightGradOp>(convWeightGradKernel);
  registry.add<MaxPoolGradOp>(maxPoolGradKernel);
  registry.add<AvgPoolGradOp>(avgPoolGradKernel);
}
