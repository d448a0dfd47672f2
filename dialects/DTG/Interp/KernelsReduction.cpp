//===- KernelsReduction.cpp - interpreter kernels of the Reduction family -===//
//
// Reductions, arg-reductions, cumsum and nll_loss. Floats accumulate in
// double and round to the element type once, when stored; integers accumulate
// in 64-bit two's complement and wrap to their width when stored.
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Integer helpers
//===----------------------------------------------------------------------===//

/// True for element types whose values compare as unsigned (i1 included).
bool isUnsignedLike(Type type) {
  auto intType = cast<IntegerType>(type);
  return intType.isUnsigned() || intType.getWidth() == 1;
}

/// The smallest value of integer type `type`, as the interpreter holds it.
int64_t intTypeMin(Type type) {
  unsigned width = cast<IntegerType>(type).getWidth();
  if (isUnsignedLike(type))
    return 0;
  return width >= 64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t(1) << (width - 1));
}

/// The largest value of integer type `type`, as the interpreter holds it (the
/// bit pattern for ui64).
int64_t intTypeMax(Type type) {
  unsigned width = cast<IntegerType>(type).getWidth();
  if (width == 1)
    return 1;
  if (isUnsignedLike(type))
    return wrapToIntegerType(type, -1);
  return width >= 64 ? std::numeric_limits<int64_t>::max()
                     : (int64_t(1) << (width - 1)) - 1;
}

/// `a < b` for integers of `type` (unsigned types compare their bit
/// patterns).
bool intLess(int64_t a, int64_t b, bool isUnsigned) {
  return isUnsigned ? uint64_t(a) < uint64_t(b) : a < b;
}

int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
}

int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}

/// Stores a real-valued result; for integer element types, infinities and
/// values beyond the type's range saturate instead of overflowing.
void storeReal(Tensor &t, int64_t k, double value) {
  if (t.isFloat() || std::isnan(value)) {
    t.set(k, value);
    return;
  }
  Type type = t.elementType;
  double lo = static_cast<double>(intTypeMin(type));
  double hi = cast<IntegerType>(type).getWidth() >= 64
                  ? 0x1p63
                  : static_cast<double>(intTypeMax(type));
  if (value <= lo)
    t.setInt(k, intTypeMin(type));
  else if (value >= hi)
    t.setInt(k, intTypeMax(type));
  else
    t.set(k, value);
}

//===----------------------------------------------------------------------===//
// Reductions over a set of axes
//===----------------------------------------------------------------------===//

/// For every operand element, the linear index of the result element it
/// reduces into (keepdims does not change it: kept dimensions have size 1).
SmallVector<int64_t> reductionTargets(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> axes) {
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> keptShape(shape);
  for (int64_t axis : axes)
    keptShape[axis] = 1;
  SmallVector<int64_t> resultStrides = stridesOf(keptShape);
  for (int64_t axis : axes)
    resultStrides[axis] = 0;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  SmallVector<int64_t> targets(n, 0);
  SmallVector<int64_t> coords(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t target = 0;
    for (int64_t d = 0; d < rank; ++d)
      target += coords[d] * resultStrides[d];
    targets[k] = target;
    // Advance the coordinates (row-major).
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coords[d] < shape[d])
        break;
      coords[d] = 0;
    }
  }
  return targets;
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod, LogSumExp };

/// Reduces the operand of a dtg reduce op of kind `kind`.
template <typename OpTy>
LogicalResult reduceKernel(ReduceKind kind, Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  auto reduce = cast<OpTy>(op);
  ArrayRef<int64_t> axes = reduce.getAxes();
  const Tensor &src = in[0];
  for (int64_t axis : axes)
    if (axis < 0 || axis >= src.rank())
      return op->emitError("reduction axis ")
             << axis << " is out of range for rank " << src.rank();
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t outCount = result.numElements();
  int64_t groupSize = 1;
  for (int64_t axis : axes)
    groupSize *= src.shape[axis];
  SmallVector<int64_t> targets = reductionTargets(src.shape, axes);
  int64_t n = src.numElements();

  if (src.isFloat()) {
    double init = 0.0;
    if (kind == ReduceKind::Prod)
      init = 1.0;
    else if (kind == ReduceKind::Max || kind == ReduceKind::LogSumExp)
      init = -kInf;
    else if (kind == ReduceKind::Min)
      init = kInf;
    std::vector<double> acc(outCount, init);
    // Max and min propagate NaN (as NumPy's and ONNX's do).
    auto maxOf = [](double a, double b) {
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    };
    auto minOf = [](double a, double b) {
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    };
    for (int64_t k = 0; k < n; ++k) {
      double x = src.f[k];
      double &a = acc[targets[k]];
      switch (kind) {
      case ReduceKind::Sum:
      case ReduceKind::Mean:
        a += x;
        break;
      case ReduceKind::Prod:
        a *= x;
        break;
      case ReduceKind::Max:
      case ReduceKind::LogSumExp: // first pass: the maximum
        a = maxOf(a, x);
        break;
      case ReduceKind::Min:
        a = minOf(a, x);
        break;
      }
    }
    if (kind == ReduceKind::LogSumExp) {
      // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum; an
      // infinite or NaN maximum is the answer itself (avoids inf - inf).
      std::vector<double> sums(outCount, 0.0);
      for (int64_t k = 0; k < n; ++k) {
        double m = acc[targets[k]];
        if (std::isfinite(m))
          sums[targets[k]] += std::exp(src.f[k] - m);
      }
      for (int64_t r = 0; r < outCount; ++r)
        if (std::isfinite(acc[r]))
          acc[r] += std::log(sums[r]);
    }
    if (kind == ReduceKind::Mean)
      for (double &a : acc)
        a /= static_cast<double>(groupSize);
    for (int64_t r = 0; r < outCount; ++r)
      result.set(r, acc[r]);
    out.push_back(std::move(result));
    return success();
  }

  // Integers (and booleans).
  Type type = src.elementType;
  bool isUnsigned = isUnsignedLike(type);
  if (kind == ReduceKind::LogSumExp) {
    std::vector<double> maxima(outCount, -kInf), sums(outCount, 0.0);
    for (int64_t k = 0; k < n; ++k)
      maxima[targets[k]] = std::max(maxima[targets[k]], src.get(k));
    for (int64_t k = 0; k < n; ++k)
      sums[targets[k]] += std::exp(src.get(k) - maxima[targets[k]]);
    for (int64_t r = 0; r < outCount; ++r)
      storeReal(result, r,
                std::isfinite(maxima[r]) ? maxima[r] + std::log(sums[r])
                                         : maxima[r]);
    out.push_back(std::move(result));
    return success();
  }
  int64_t init = 0;
  if (kind == ReduceKind::Prod)
    init = 1;
  else if (kind == ReduceKind::Max)
    init = intTypeMin(type);
  else if (kind == ReduceKind::Min)
    init = intTypeMax(type);
  std::vector<int64_t> acc(outCount, init);
  for (int64_t k = 0; k < n; ++k) {
    int64_t x = src.i[k];
    int64_t &a = acc[targets[k]];
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      a = wrappingAdd(a, x);
      break;
    case ReduceKind::Prod:
      a = wrappingMul(a, x);
      break;
    case ReduceKind::Max:
      if (intLess(a, x, isUnsigned))
        a = x;
      break;
    case ReduceKind::Min:
      if (intLess(x, a, isUnsigned))
        a = x;
      break;
    case ReduceKind::LogSumExp:
      break;
    }
  }
  for (int64_t r = 0; r < outCount; ++r) {
    int64_t a = acc[r];
    // The mean of integers truncates toward zero, as a cast of NumPy's would.
    if (kind == ReduceKind::Mean)
      a = groupSize == 0 ? 0
          : isUnsigned   ? static_cast<int64_t>(uint64_t(a) / groupSize)
                         : a / groupSize;
    result.setInt(r, a);
  }
  out.push_back(std::move(result));
  return success();
}

template <typename OpTy>
void addReduce(KernelRegistry &registry, ReduceKind kind) {
  registry.add<OpTy>(
      [kind](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        return reduceKernel<OpTy>(kind, op, in, out);
      });
}

//===----------------------------------------------------------------------===//
// Arg-reductions
//===----------------------------------------------------------------------===//

/// Registers argmax (`isMax`) or argmin. NaN counts as beyond every number (as
/// in NumPy, the first NaN wins; with select_last_index, the last).
template <typename OpTy>
void addArgReduce(KernelRegistry &registry, bool isMax) {
  registry.add<OpTy>([isMax](Operation *op, ArrayRef<Tensor> in,
                             SmallVectorImpl<Tensor> &out) -> LogicalResult {
    auto argOp = cast<OpTy>(op);
    auto axis = static_cast<int64_t>(argOp.getAxis());
    bool last = argOp.getSelectLastIndex();
    const Tensor &src = in[0];
    if (axis < 0 || axis >= src.rank())
      return op->emitError("axis ")
             << axis << " is out of range for rank " << src.rank();
    Tensor result = makeResult(op->getResult(0).getType());
    int64_t size = src.shape[axis];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= src.shape[d];
    for (int64_t d = axis + 1; d < src.rank(); ++d)
      inner *= src.shape[d];
    if (result.numElements() > 0 && size == 0)
      return op->emitError("cannot take the ")
             << (isMax ? "argmax" : "argmin") << " of an empty axis " << axis;
    bool isUnsigned = !src.isFloat() && isUnsignedLike(src.elementType);
    // True when element `a` is strictly better than element `b`.
    auto better = [&](int64_t a, int64_t b) {
      if (src.isFloat()) {
        double x = src.f[a], y = src.f[b];
        if (std::isnan(y))
          return false;
        if (std::isnan(x))
          return true;
        return isMax ? x > y : x < y;
      }
      int64_t x = src.i[a], y = src.i[b];
      return isMax ? intLess(y, x, isUnsigned) : intLess(x, y, isUnsigned);
    };
    auto equal = [&](int64_t a, int64_t b) {
      if (src.isFloat())
        return src.f[a] == src.f[b] ||
               (std::isnan(src.f[a]) && std::isnan(src.f[b]));
      return src.i[a] == src.i[b];
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t n = 0; n < inner; ++n) {
        int64_t base = o * size * inner + n;
        int64_t best = 0;
        for (int64_t j = 1; j < size; ++j) {
          int64_t a = base + j * inner, b = base + best * inner;
          if (better(a, b) || (last && equal(a, b)))
            best = j;
        }
        result.i[o * inner + n] = best;
      }
    }
    out.push_back(std::move(result));
    return success();
  });
}

//===----------------------------------------------------------------------===//
// Cumsum and nll_loss
//===----------------------------------------------------------------------===//

LogicalResult cumSumKernel(Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
  auto cumsum = cast<CumSumOp>(op);
  auto axis = static_cast<int64_t>(cumsum.getAxis());
  bool exclusive = cumsum.getExclusive(), reverse = cumsum.getReverse();
  const Tensor &src = in[0];
  Tensor result = makeResult(op->getResult(0).getType());
  int64_t size = src.shape[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < src.rank(); ++d)
    inner *= src.shape[d];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= src.shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t n = 0; n < inner; ++n) {
      double sum = 0.0;
      int64_t intSum = 0;
      for (int64_t step = 0; step < size; ++step) {
        int64_t j = reverse ? size - 1 - step : step;
        int64_t k = (o * size + j) * inner + n;
        if (src.isFloat()) {
          if (!exclusive)
            sum += src.f[k];
          result.set(k, sum);
          if (exclusive)
            sum += src.f[k];
        } else {
          if (!exclusive)
            intSum = wrappingAdd(intSum, src.i[k]);
          result.setInt(k, intSum);
          if (exclusive)
            intSum = wrappingAdd(intSum, src.i[k]);
        }
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult nllLossKernel(Operation *op, ArrayRef<Tensor> in,
                            SmallVectorImpl<Tensor> &out) {
  auto nll = cast<NllLossOp>(op);
  StringRef reduction = nll.getReduction();
  std::optional<int64_t> ignoreIndex;
  if (std::optional<uint64_t> ignore = nll.getIgnoreIndex())
    ignoreIndex = static_cast<int64_t>(*ignore);
  const Tensor &input = in[0], &target = in[1];
  const Tensor *weight = in.size() > 2 ? &in[2] : nullptr;
  if (input.rank() < 2)
    return op->emitError("input needs rank at least 2");
  int64_t batch = input.shape[0], classes = input.shape[1];
  int64_t inner = 1;
  for (int64_t d = 2; d < input.rank(); ++d)
    inner *= input.shape[d];
  if (target.numElements() != batch * inner)
    return op->emitError("target has ")
           << target.numElements() << " elements, expected " << batch * inner;
  if (weight && weight->numElements() != classes)
    return op->emitError("weight has ")
           << weight->numElements() << " elements, expected " << classes;
  Tensor result = makeResult(op->getResult(0).getType());
  double total = 0.0, totalWeight = 0.0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < inner; ++p) {
      int64_t position = n * inner + p;
      int64_t t = target.getInt(position);
      double loss = 0.0;
      if (!ignoreIndex || t != *ignoreIndex) {
        if (t < 0 || t >= classes)
          return op->emitError("target ")
                 << t << " at position " << position << " is out of range for "
                 << classes << " classes [0, " << classes << ")";
        double w = weight ? weight->f[t] : 1.0;
        loss = -w * input.f[(n * classes + t) * inner + p];
        total += loss;
        totalWeight += w;
      }
      if (reduction == "none")
        result.set(position, loss);
    }
  }
  if (reduction == "sum")
    result.set(0, total);
  else if (reduction == "mean")
    result.set(0, total / totalWeight);
  else if (reduction != "none")
    return op->emitError("unknown reduction '") << reduction << "'";
  out.push_back(std::move(result));
  return success();
}

} // namespace

void mlir::dtg::interp::registerReductionKernels(KernelRegistry &registry) {
  addReduce<ReduceSumOp>(registry, ReduceKind::Sum);
  addReduce<ReduceMeanOp>(registry, ReduceKind::Mean);
  addReduce<ReduceMaxOp>(registry, ReduceKind::Max);
  addReduce<ReduceMinOp>(registry, ReduceKind::Min);
  addReduce<ReduceProdOp>(registry, ReduceKind::Prod);
  addReduce<ReduceLogSumExpOp>(registry, ReduceKind::LogSumExp);
  addArgReduce<ArgMaxOp>(registry, /*isMax=*/true);
  addArgReduce<ArgMinOp>(registry, /*isMax=*/false);
  registry.add<CumSumOp>(cumSumKernel);
  registry.add<NllLossOp>(nllLossKernel);
}
