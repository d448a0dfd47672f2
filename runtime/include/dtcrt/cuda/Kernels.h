//===- Kernels.h - the CUDA target's kernel library (namespace dtcg) ------===//
//
// What the generated CUDA step calls for an op that is not fused: the same
// names, arguments and semantics as the CPU target's dtck kernels, run on
// the device. Elementwise kernels are dtck's own over device loops
// (Loops.h); rows (softmax, layer norm, reductions, the loss) take one block
// each, reduced by warp shuffles and shared memory, in double where dtck
// accumulates in double; matrix products go to cuBLASLt (Device.h). The
// compiler knows this list (compiler/Target/CUDA/CUDAKernels.cpp): an op
// whose kernel is not here is refused at compile time, naming its node.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_KERNELS_H
#define DTCRT_CUDA_KERNELS_H

#include "dtcrt/cuda/Loops.h"
#include "dtcrt/kernels/Elementwise.h"
#include "dtcrt/kernels/Reduction.h"

#include <initializer_list>

namespace dtcg {

using dtck::Shape;

// Elementwise: dtck's kernels, whose loops run on the device.
using dtck::abs;
using dtck::add;
using dtck::cast;
using dtck::div;
using dtck::equal;
using dtck::exp;
using dtck::gelu;
using dtck::greater;
using dtck::greaterEqual;
using dtck::less;
using dtck::lessEqual;
using dtck::log;
using dtck::logicalAnd;
using dtck::logicalNot;
using dtck::logicalOr;
using dtck::max;
using dtck::min;
using dtck::mul;
using dtck::neg;
using dtck::pow;
using dtck::reciprocal;
using dtck::relu;
using dtck::rsqrt;
using dtck::sigmoid;
using dtck::sqrt;
using dtck::sub;
using dtck::tanh;
using dtck::where;

namespace detail {
using dtck::detail::load;
using dtck::detail::roundTo;
using dtck::detail::toDouble;

inline int64_t product(const Shape &s, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d)
    n *= s.dims[d];
  return n;
}

/// Threads per row of a row kernel: a warp for short rows, else a block.
inline unsigned rowThreads(int64_t size) {
  return size <= 32 ? 32u : size <= 128 ? 128u : kBlock;
}
} // namespace detail

//===----------------------------------------------------------------------===//
// Reductions over kept dimensions: one block per result
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void reduceKernel(Shape in, Shape kept, const T *x, T *y,
                             int op /* 0 sum, 1 mean */) {
  // Result r's elements: its kept coordinates, every reduced one.
  int64_t r = blockIdx.x;
  int64_t keptStrides[dtck::kMaxRank], inStrides[dtck::kMaxRank];
  dtck::stridesOf(kept, keptStrides);
  dtck::stridesOf(in, inStrides);
  int64_t base = 0, rest = r, count = 1;
  for (int d = 0; d < in.rank; ++d) {
    int64_t c = rest / keptStrides[d];
    rest -= c * keptStrides[d];
    base += c * inStrides[d];
    if (kept.dims[d] == 1)
      count *= in.dims[d];
  }
  double acc = 0;
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x) {
    int64_t offset = base, left = q;
    for (int d = in.rank - 1; d >= 0; --d)
      if (kept.dims[d] == 1) {
        offset += (left % in.dims[d]) * inStrides[d];
        left /= in.dims[d];
      }
    acc = dtck::scalar::sumStep(acc, x[offset]);
  }
  acc = blockReduce(acc, 0);
  if (threadIdx.x == 0)
    y[r] = dtck::scalar::finish<T>(op == 1 ? acc / double(count) : acc);
}

template <typename T>
inline void reduceSum(const Shape &in, const Shape &kept, const T *x, T *y) {
  if (kept.numel() > 0)
    launch("dtcg_reduce_sum", unsigned(kept.numel()), kBlock, reduceKernel<T>,
           in, kept, x, y, 0);
}
template <typename T>
inline void reduceMean(const Shape &in, const Shape &kept, const T *x, T *y) {
  if (kept.numel() > 0)
    launch("dtcg_reduce_mean", unsigned(kept.numel()), kBlock,
           reduceKernel<T>, in, kept, x, y, 1);
}

//===----------------------------------------------------------------------===//
// Softmax and layer norm: one block (or warp) per row
//===----------------------------------------------------------------------===//

/// Softmax or log-softmax of rows [outer, size, inner] along size; block
/// b takes row (b / inner, b % inner). Max in float, the sum in double, as
/// dtck's softmaxRow.
template <typename T>
__global__ void softmaxKernel(int64_t size, int64_t inner, const T *x, T *y,
                              bool log) {
  int64_t o = blockIdx.x / inner, j = blockIdx.x % inner;
  const T *row = x + o * size * inner + j;
  T *out = y + o * size * inner + j;
  float max = -INFINITY;
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x) {
    float v = float(detail::toDouble(row[a * inner]));
    max = v > max || v != v ? v : max;
  }
  max = blockReduce(max, 1);
  if (max == -INFINITY)
    max = 0;
  double sum = 0;
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x)
    sum += double(expf(float(detail::toDouble(row[a * inner])) - max));
  sum = blockReduce(sum, 0);
  float logSum = float(::log(sum)), scale = float(1.0 / sum);
  for (int64_t a = threadIdx.x; a < size; a += blockDim.x) {
    float v = float(detail::toDouble(row[a * inner])) - max;
    out[a * inner] = dtck::store<T>(log ? v - logSum : expf(v) * scale);
  }
}

template <typename T>
inline void softmaxImpl(const Shape &sx, const T *x, int64_t axis, bool log,
                        T *y) {
  int64_t outer = detail::product(sx, 0, int(axis)), size = sx.dims[axis];
  int64_t inner = detail::product(sx, int(axis) + 1, sx.rank);
  if (outer * inner > 0)
    launch(log ? "dtcg_log_softmax" : "dtcg_softmax", unsigned(outer * inner),
           detail::rowThreads(size), softmaxKernel<T>, size, inner, x, y, log);
}
template <typename T>
inline void softmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  softmaxImpl(sx, x, axis, false, y);
}
template <typename T>
inline void logSoftmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  softmaxImpl(sx, x, axis, true, y);
}

/// Layer norm of row blockIdx.x: mean and biased variance in double.
template <typename T, typename S, typename B>
__global__ void layerNormKernel(int64_t inner, const T *x, const S *scale,
                                int64_t scaleSize, const B *bias,
                                int64_t biasSize, double epsilon, T *y) {
  const T *row = x + int64_t(blockIdx.x) * inner;
  T *out = y + int64_t(blockIdx.x) * inner;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x)
    sum += detail::toDouble(row[j]);
  double mean = blockReduce(sum, 0) / double(inner);
  double squares = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    double d = detail::toDouble(row[j]) - mean;
    squares += d * d;
  }
  squares = blockReduce(squares, 0);
  double invStd = 1.0 / ::sqrt(squares / double(inner) + epsilon);
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    // Scale and bias broadcast to the row: their trailing elements.
    double v = (detail::toDouble(row[j]) - mean) * invStd *
               detail::toDouble(scale[scaleSize == 1 ? 0 : j % scaleSize]);
    if (bias)
      v += detail::toDouble(bias[biasSize == 1 ? 0 : j % biasSize]);
    out[j] = dtck::store<T>(v);
  }
}

template <typename T, typename S, typename B>
inline void layerNorm(const Shape &sx, const Shape &sscale, const Shape &sbias,
                      const T *x, const S *scale, const B *bias, int64_t axis,
                      double epsilon, T *y) {
  int64_t inner = detail::product(sx, int(axis), sx.rank);
  int64_t outer = detail::product(sx, 0, int(axis));
  if (outer > 0)
    launch("dtcg_layer_norm", unsigned(outer), detail::rowThreads(inner),
           layerNormKernel<T, S, B>, inner, x, scale, sscale.numel(), bias,
           bias ? sbias.numel() : int64_t(1), epsilon, y);
}

//===----------------------------------------------------------------------===//
// The loss
//===----------------------------------------------------------------------===//

using dtck::Reduction;

/// Negative log-likelihood, one block: per-position losses, then the sum
/// (and weight) in double.
template <typename T, typename I>
__global__ void nllLossKernel(int64_t batch, int64_t classes, int64_t inner,
                              const T *x, const I *target, const T *weight,
                              Reduction reduction, bool hasIgnoreIndex,
                              int64_t ignoreIndex, T *y, int *error) {
  double total = 0, totalWeight = 0;
  for (int64_t position = threadIdx.x; position < batch * inner;
       position += blockDim.x) {
    int64_t n = position / inner, p = position % inner;
    int64_t t = int64_t(target[position]);
    double loss = 0;
    if (!hasIgnoreIndex || t != ignoreIndex) {
      if (t < 0 || t >= classes) {
        *error = 1;
        continue;
      }
      double w = weight ? detail::toDouble(weight[t]) : 1.0;
      loss = -w * detail::toDouble(x[(n * classes + t) * inner + p]);
      total += loss;
      totalWeight += w;
    }
    if (reduction == Reduction::None)
      y[position] = detail::roundTo<T>(loss);
  }
  total = blockReduce(total, 0);
  totalWeight = blockReduce(totalWeight, 0);
  if (threadIdx.x == 0) {
    if (reduction == Reduction::Sum)
      y[0] = detail::roundTo<T>(total);
    else if (reduction == Reduction::Mean)
      y[0] = detail::roundTo<T>(total / totalWeight);
  }
}

template <typename T, typename I>
inline void nllLoss(const Shape &input, const T *x, const I *target,
                    const dtck::detail::NonDeduced<T> *weight,
                    Reduction reduction, bool hasIgnoreIndex,
                    int64_t ignoreIndex, T *y) {
  launch("dtcg_nll_loss", 1, kBlock, nllLossKernel<T, I>, input.dims[0],
         input.dims[1], detail::product(input, 2, input.rank), x, target,
         weight, reduction, hasIgnoreIndex, ignoreIndex, y, errorFlag());
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Up to eight inputs of a concatenation.
struct ConcatInputs {
  const void *x[8];
  int64_t rows[8]; // each input's extent along the axis times inner
  int count;
};

template <typename T>
__global__ void concatKernel(int64_t n, ConcatInputs in, int64_t outRow,
                             T *y) {
  DTCG_GRID_STRIDE(i, n) {
    int64_t o = i / outRow, c = i % outRow;
    int k = 0;
    while (k + 1 < in.count && c >= in.rows[k]) {
      c -= in.rows[k];
      ++k;
    }
    y[i] = static_cast<const T *>(in.x[k])[o * in.rows[k] + c];
  }
}

template <typename T>
inline void concat(std::initializer_list<Shape> ins, const Shape &out,
                   std::initializer_list<const T *> xs, int64_t axis, T *y) {
  int a = int(axis);
  int64_t inner = detail::product(out, a + 1, out.rank);
  if (ins.size() > 8)
    fatal("concat of more than 8 inputs");
  ConcatInputs in{};
  in.count = int(ins.size());
  int k = 0;
  for (const Shape &s : ins)
    in.rows[k++] = s.dims[a] * inner;
  k = 0;
  for (const T *x : xs)
    in.x[k++] = x;
  int64_t n = out.numel();
  if (n > 0)
    launch("dtcg_concat", gridFor(n), kBlock, concatKernel<T>, n, in,
           out.dims[a] * inner, y);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void fillBroadcastKernel(int64_t m, int64_t n, const T *c,
                                    int64_t rowStride, int64_t colStride,
                                    float beta, T *y) {
  DTCG_GRID_STRIDE(i, m * n) {
    y[i] = T(beta * float(c[(i / n) * rowStride + (i % n) * colStride]));
  }
}

/// dtg.gemm: y = alpha op(a) op(b) + beta c, with c (optional) broadcast to
/// [M, N].
template <typename T>
inline void gemm(const Shape &sa, const Shape &sb, const Shape &sc, const T *a,
                 const T *b, const T *c, double alpha, double beta,
                 bool transA, bool transB, T *y) {
  int64_t m = sa.dims[transA ? 1 : 0], k = sa.dims[transA ? 0 : 1];
  int64_t n = sb.dims[transB ? 0 : 1];
  if (c) {
    int64_t strides[dtck::kMaxRank] = {0, 0};
    dtck::broadcastStrides(sc, Shape{2, {m, n}}, strides);
    launch("dtcg_gemm_bias", gridFor(m * n), kBlock, fillBroadcastKernel<T>,
           m, n, c, strides[0], strides[1], float(beta), y);
  }
  gemmBatched<T>(transA, transB, m, n, k, float(alpha), a, sa.dims[1], 0, b,
                 sb.dims[1], 0, c ? 1.0f : 0.0f, y, 0, 1);
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void adamWKernel(int64_t n, const T *param, const T *grad,
                            const T *expAvg, const T *expAvgSq,
                            const double *lr, const double *beta1,
                            const double *beta2, const double *eps,
                            const double *weightDecay, const int64_t *step,
                            T *newParam, T *newExpAvg, T *newExpAvgSq) {
  double t = double(*step < 1 ? 1 : *step);
  double lrV = *lr, b1 = *beta1, b2 = *beta2, epsV = *eps, wd = *weightDecay;
  double bc1 = 1 - ::pow(b1, t), bc2 = 1 - ::pow(b2, t);
  double stepSize = lrV / bc1, bc2Sqrt = ::sqrt(bc2);
  auto round = [](double v) { return detail::toDouble(detail::roundTo<T>(v)); };
  DTCG_GRID_STRIDE(k, n) {
    double g = detail::toDouble(grad[k]);
    double p = round(detail::toDouble(param[k]) * (1 - lrV * wd));
    double m = round(round(detail::toDouble(expAvg[k]) * b1) + (1 - b1) * g);
    double v =
        round(round(detail::toDouble(expAvgSq[k]) * b2) + (1 - b2) * g * g);
    double denom = round(round(::sqrt(v)) / bc2Sqrt + epsV);
    newExpAvg[k] = detail::roundTo<T>(m);
    newExpAvgSq[k] = detail::roundTo<T>(v);
    newParam[k] = detail::roundTo<T>(p - stepSize * round(m / denom));
  }
}

template <typename T>
inline void adamWUpdate(const Shape &s, const T *param, const T *grad,
                        const T *expAvg, const T *expAvgSq, const double *lr,
                        const double *beta1, const double *beta2,
                        const double *eps, const double *weightDecay,
                        const int64_t *step, T *newParam, T *newExpAvg,
                        T *newExpAvgSq) {
  int64_t n = s.numel();
  if (n > 0)
    launch("dtcg_adamw", gridFor(n), kBlock, adamWKernel<T>, n, param, grad,
           expAvg, expAvgSq, lr, beta1, beta2, eps, weightDecay, step,
           newParam, newExpAvg, newExpAvgSq);
}

template <typename T>
__global__ void sgdKernel(int64_t n, const T *param, const T *grad,
                          const T *buf, const double *lr,
                          const double *momentum, const double *dampening,
                          const double *weightDecay, const bool *nesterov,
                          const bool *firstStep, T *newParam, T *newBuf) {
  double lrV = *lr, mom = *momentum, damp = *dampening, wd = *weightDecay;
  bool nest = *nesterov, first = *firstStep;
  DTCG_GRID_STRIDE(k, n) {
    double p = detail::toDouble(param[k]);
    double b = detail::toDouble(buf[k]);
    double d = detail::toDouble(grad[k]);
    if (wd != 0)
      d = detail::toDouble(detail::roundTo<T>(d + wd * p));
    if (mom != 0) {
      if (!first) {
        double scaled = detail::toDouble(detail::roundTo<T>(mom * b));
        b = detail::toDouble(detail::roundTo<T>(scaled + (1 - damp) * d));
      } else {
        b = d;
      }
      d = nest ? detail::toDouble(detail::roundTo<T>(d + mom * b)) : b;
    }
    newBuf[k] = detail::roundTo<T>(b);
    newParam[k] = detail::roundTo<T>(p - lrV * d);
  }
}

template <typename T>
inline void sgdUpdate(const Shape &s, const T *param, const T *grad,
                      const T *buf, const double *lr, const double *momentum,
                      const double *dampening, const double *weightDecay,
                      const bool *nesterov, const bool *firstStep, T *newParam,
                      T *newBuf) {
  int64_t n = s.numel();
  if (n > 0)
    launch("dtcg_sgd", gridFor(n), kBlock, sgdKernel<T>, n, param, grad, buf,
           lr, momentum, dampening, weightDecay, nesterov, firstStep, newParam,
           newBuf);
}

__global__ inline void lrScheduleKernel(const double *lr, const int64_t *step,
                                        const int64_t *warmup,
                                        const int64_t *total,
                                        const double *minLr,
                                        const int64_t *kind, double *result) {
  if (threadIdx.x != 0)
    return;
  double peak = *lr, floor = *minLr;
  int64_t k = *step, w = *warmup, t = *total, which = *kind;
  double span = double(t - w);
  if (w > 0 && k <= w)
    *result = peak * double(k) / double(w);
  else if (which == 0)
    *result = peak;
  else if (k > t || span <= 0)
    *result = floor;
  else if (which == 1)
    *result = floor + (peak - floor) * double(t - k) / span;
  else
    *result = floor + (peak - floor) *
                          (1 + ::cos(3.14159265358979323846 * double(k - w) /
                                     span)) /
                          2;
}

/// The runtime checks the schedule's kind before a step (Options.cpp).
inline void lrSchedule(const double *lr, const int64_t *step,
                       const int64_t *warmup, const int64_t *total,
                       const double *minLr, const int64_t *kind,
                       double *result) {
  launch("dtcg_lr_schedule", 1, 32, lrScheduleKernel, lr, step, warmup, total,
         minLr, kind, result);
}

} // namespace dtcg

#endif // DTCRT_CUDA_KERNELS_H
