//===- Conv.h - convolution, pooling and batch norm of the CUDA target ----===//
//
// Part of the dtcg library (Kernels.h includes it), with dtck's arguments
// and semantics (kernels/NN.h). On a GPU a convolution and its gradients
// run in cuDNN (CudnnConv.h: 1-3 spatial dimensions, symmetric padding;
// deterministic algorithms, fp32 without TF32). The others, and every
// convolution under the emulation, are im2col into a device scratch buffer
// and cuBLASLt products (its input gradient: the transposed product, then
// col2im by atomic adds; its weight gradient: one product per image,
// accumulated); pooling takes one thread per result; batch norm one block
// per channel with its sums in double.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_CONV_H
#define DTCRT_CUDA_CONV_H

#include "dtcrt/cuda/CudnnConv.h"
#include "dtcrt/cuda/Loops.h"
#include "dtcrt/kernels/Elementwise.h"

#include <type_traits>

namespace dtcg {

/// The sliding window of a convolution or pooling over k spatial
/// dimensions: output position p, tap t -> input element (or -1 in padding).
struct Window {
  int k = 0;
  int64_t in[dtck::kMaxRank] = {}, out[dtck::kMaxRank] = {};
  int64_t kernel[dtck::kMaxRank] = {}, strides[dtck::kMaxRank] = {};
  int64_t padBegin[dtck::kMaxRank] = {}, padEnd[dtck::kMaxRank] = {};
  int64_t dilations[dtck::kMaxRank] = {};
  int64_t inSize = 1, outSize = 1, kernelSize = 1;

  Window(const dtck::Shape &input, const dtck::Shape &output,
         const int64_t *kernelDims, const int64_t *s, const int64_t *pads,
         const int64_t *d) {
    k = input.rank - 2;
    for (int i = 0; i < k; ++i) {
      in[i] = input.dims[2 + i];
      out[i] = output.dims[2 + i];
      kernel[i] = kernelDims[i];
      strides[i] = s[i];
      padBegin[i] = pads[i];
      padEnd[i] = pads[k + i];
      dilations[i] = d[i];
      inSize *= in[i];
      outSize *= out[i];
      kernelSize *= kernel[i];
    }
  }

  /// The input element tap t of output position p reads, or -1.
  __device__ int64_t tap(int64_t p, int64_t t) const {
    int64_t offset = 0, stride = 1;
    for (int d = k - 1; d >= 0; --d) {
      int64_t pos = p % out[d], j = t % kernel[d];
      p /= out[d];
      t /= kernel[d];
      int64_t i = pos * strides[d] - padBegin[d] + j * dilations[d];
      if (i < 0 || i >= in[d])
        return -1;
      offset += i * stride;
      stride *= in[d];
    }
    return offset;
  }

  /// Taps of output position p inside the input (countIncludePad false) or
  /// inside the padded input (true), as dtck's Window counts them.
  __device__ int64_t count(int64_t p, bool includePad) const {
    int64_t n = 1;
    for (int d = k - 1; d >= 0; --d) {
      int64_t pos = p % out[d], c = 0;
      p /= out[d];
      for (int64_t j = 0; j < kernel[d]; ++j) {
        int64_t i = pos * strides[d] - padBegin[d] + j * dilations[d];
        c += includePad ? (i < in[d] + padEnd[d]) : (i >= 0 && i < in[d]);
      }
      n *= c;
    }
    return n;
  }
};

/// Where a gradient scattered by atomic adds accumulates: the result itself
/// for float and double, a float buffer for the 16-bit floats (rounded once
/// at the end, as dtck accumulates them in float or double).
template <typename T>
using AccumOf = std::conditional_t<sizeof(T) == 2, float, T>;

template <typename T>
inline AccumOf<T> *accumulatorFor(T *result, int64_t count) {
  AccumOf<T> *acc;
  if constexpr (sizeof(T) == 2)
    acc = static_cast<float *>(growingScratch(size_t(count) * 4, 1));
  else
    acc = result;
  check(cudaMemsetAsync(acc, 0, size_t(count) * sizeof(AccumOf<T>), stream()),
        "clearing a gradient");
  return acc;
}

template <typename T, typename A>
__global__ void narrowKernel(int64_t n, const A *from, T *to) {
  DTCG_GRID_STRIDE(i, n) { to[i] = T(float(from[i])); }
}

template <typename T>
inline void finishAccumulator(const AccumOf<T> *acc, T *result, int64_t count) {
  if constexpr (sizeof(T) == 2)
    if (count > 0)
      launch("dtcg_narrow", gridFor(count), kBlock, narrowKernel<T, float>,
             count, acc, result);
}

/// col[n][(c * K + t) * O + p] = x[n, group channel c, tap(p, t)] for images
/// n, channels [c0, c0 + cg) of each.
template <typename T>
__global__ void im2colKernel(int64_t total, Window w, const T *x,
                             int64_t channels, int64_t c0, int64_t cg, T *col) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, rest = e / w.outSize;
    int64_t t = rest % w.kernelSize;
    rest /= w.kernelSize;
    int64_t c = rest % cg, n = rest / cg;
    int64_t i = w.tap(p, t);
    col[e] = i >= 0 ? x[(n * channels + c0 + c) * w.inSize + i] : T(0);
  }
}

/// dx[n, c0 + c, tap(p, t)] += col[n][(c * K + t) * O + p].
template <typename T, typename A>
__global__ void col2imKernel(int64_t total, Window w, const T *col,
                             int64_t channels, int64_t c0, int64_t cg, A *dx) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, rest = e / w.outSize;
    int64_t t = rest % w.kernelSize;
    rest /= w.kernelSize;
    int64_t c = rest % cg, n = rest / cg;
    int64_t i = w.tap(p, t);
    if (i >= 0)
      atomicAddValue(&dx[(n * channels + c0 + c) * w.inSize + i], A(col[e]));
  }
}

template <typename A, typename T>
__global__ void addChannelBiasKernel(int64_t total, int64_t filters,
                                     int64_t inner, const T *bias, A *y) {
  DTCG_GRID_STRIDE(e, total) {
    y[e] = A(float(y[e]) + float(bias[(e / inner) % filters]));
  }
}

template <typename T>
void conv(const dtck::Shape &sx, const dtck::Shape &sw, const dtck::Shape &sy,
          const T *x, const T *w, const T *bias, const int64_t *strides,
          const int64_t *pads, const int64_t *dilations, int64_t group, T *y) {
  Window win(sx, sy, sw.dims + 2, strides, pads, dilations);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize, o = win.outSize;
  if (sy.numel() == 0)
    return;
  if (cudnn::convolve(cudnn::Pass::Forward, sx, sw, sy, x, w, y, strides, pads,
                      dilations, group)) {
    if (bias)
      launch("dtcg_conv_bias", gridFor(sy.numel()), kBlock,
             addChannelBiasKernel<T, T>, sy.numel(), filters, o, bias, y);
    return;
  }
  T *col =
      static_cast<T *>(growingScratch(size_t(batch * rows * o) * sizeof(T)));
  // 16-bit: the product and the bias in float, rounded once.
  using A = AccumOf<T>;
  A *acc =
      sizeof(T) == 2
          ? static_cast<A *>(growingScratch(size_t(sy.numel()) * sizeof(A), 1))
          : reinterpret_cast<A *>(y);
  for (int64_t g = 0; g < group; ++g) {
    int64_t total = batch * rows * o;
    launch("dtcg_im2col", gridFor(total), kBlock, im2colKernel<T>, total, win,
           x, channels, g * cg, cg, col);
    // y[n, g's filters] = w[g's filters] (fg x rows) x col[n] (rows x o).
    gemmBatched<T, A>(false, false, fg, o, rows, 1.0f, w + g * fg * rows, rows,
                      0, col, o, rows * o, 0.0f, acc + g * fg * o, filters * o,
                      batch);
  }
  if (bias)
    launch("dtcg_conv_bias", gridFor(sy.numel()), kBlock,
           addChannelBiasKernel<A, T>, sy.numel(), filters, o, bias, acc);
  finishAccumulator(acc, y, sy.numel());
}

template <typename T>
void convInputGrad(const dtck::Shape &sg, const dtck::Shape &sw,
                   const dtck::Shape &sx, const T *g, const T *w,
                   const int64_t *strides, const int64_t *pads,
                   const int64_t *dilations, int64_t group, T *dx) {
  Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize, o = win.outSize;
  if (sg.numel() > 0 && cudnn::convolve(cudnn::Pass::InputGrad, sx, sw, sg, dx,
                                        w, g, strides, pads, dilations, group))
    return;
  AccumOf<T> *acc = accumulatorFor(dx, sx.numel());
  if (sg.numel() == 0) {
    finishAccumulator(acc, dx, sx.numel());
    return;
  }
  using A = AccumOf<T>;
  A *col =
      static_cast<A *>(growingScratch(size_t(batch * rows * o) * sizeof(A)));
  for (int64_t gr = 0; gr < group; ++gr) {
    // col[n] (rows x o) = w[g]^T (rows x fg) x g[n, g's filters] (fg x o).
    gemmBatched<T, A>(true, false, rows, o, fg, 1.0f, w + gr * fg * rows, rows,
                      0, g + gr * fg * o, o, filters * o, 0.0f, col, rows * o,
                      batch);
    int64_t total = batch * rows * o;
    launch("dtcg_col2im", gridFor(total), kBlock, col2imKernel<A, A>, total,
           win, col, channels, gr * cg, cg, acc);
  }
  finishAccumulator(acc, dx, sx.numel());
}

template <typename T>
void convWeightGrad(const dtck::Shape &sg, const dtck::Shape &sx,
                    const dtck::Shape &sw, const T *g, const T *x,
                    const int64_t *strides, const int64_t *pads,
                    const int64_t *dilations, int64_t group, T *dw) {
  Window win(sx, sg, sw.dims + 2, strides, pads, dilations);
  int64_t batch = sx.dims[0], channels = sx.dims[1], filters = sw.dims[0];
  int64_t cg = channels / group, fg = filters / group;
  int64_t rows = cg * win.kernelSize, o = win.outSize;
  if (sg.numel() > 0 && cudnn::convolve(cudnn::Pass::WeightGrad, sx, sw, sg, x,
                                        dw, g, strides, pads, dilations, group))
    return;
  AccumOf<T> *acc = accumulatorFor(dw, sw.numel());
  if (sg.numel() == 0) {
    finishAccumulator(acc, dw, sw.numel());
    return;
  }
  T *col =
      static_cast<T *>(growingScratch(size_t(batch * rows * o) * sizeof(T)));
  for (int64_t gr = 0; gr < group; ++gr) {
    int64_t total = batch * rows * o;
    launch("dtcg_im2col", gridFor(total), kBlock, im2colKernel<T>, total, win,
           x, channels, gr * cg, cg, col);
    // dw[g] (fg x rows) += g[n, g's filters] (fg x o) x col[n]^T (o x rows),
    // image by image.
    for (int64_t n = 0; n < batch; ++n)
      gemmBatched<T, AccumOf<T>>(
          false, true, fg, rows, o, 1.0f, g + (n * filters + gr * fg) * o, o, 0,
          col + n * rows * o, o, 0, 1.0f, acc + gr * fg * rows, 0, 1);
  }
  finishAccumulator(acc, dw, sw.numel());
}

//===----------------------------------------------------------------------===//
// Pooling: one thread per result
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void maxPoolKernel(int64_t total, Window w, const T *x, T *y) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, plane = e / w.outSize;
    float acc = -INFINITY;
    for (int64_t t = 0; t < w.kernelSize; ++t) {
      int64_t i = w.tap(p, t);
      if (i < 0)
        continue;
      float v = float(x[plane * w.inSize + i]);
      acc = v != v ? v : (acc != acc ? acc : (v > acc ? v : acc));
    }
    y[e] = dtck::store<T>(acc);
  }
}

template <typename T>
void maxPool(const dtck::Shape &sx, const dtck::Shape &sy, const T *x,
             const int64_t *kernel, const int64_t *strides, const int64_t *pads,
             const int64_t *dilations, T *y) {
  Window win(sx, sy, kernel, strides, pads, dilations);
  if (sy.numel() > 0)
    launch("dtcg_max_pool", gridFor(sy.numel()), kBlock, maxPoolKernel<T>,
           sy.numel(), win, x, y);
}

template <typename T>
__global__ void avgPoolKernel(int64_t total, Window w, const T *x,
                              bool includePad, T *y) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, plane = e / w.outSize;
    double sum = 0;
    for (int64_t t = 0; t < w.kernelSize; ++t) {
      int64_t i = w.tap(p, t);
      if (i >= 0)
        sum += dtck::detail::toDouble(x[plane * w.inSize + i]);
    }
    y[e] = dtck::store<T>(sum / double(w.count(p, includePad)));
  }
}

template <typename T>
void avgPool(const dtck::Shape &sx, const dtck::Shape &sy, const T *x,
             const int64_t *kernel, const int64_t *strides, const int64_t *pads,
             const int64_t *dilations, bool countIncludePad, T *y) {
  Window win(sx, sy, kernel, strides, pads, dilations);
  if (sy.numel() > 0)
    launch("dtcg_avg_pool", gridFor(sy.numel()), kBlock, avgPoolKernel<T>,
           sy.numel(), win, x, countIncludePad, y);
}

/// Each result's gradient goes to the first maximum of its window (a NaN
/// wins), as dtck::maxPoolGrad.
template <typename T, typename A>
__global__ void maxPoolGradKernel(int64_t total, Window w, const T *g,
                                  const T *x, A *dx) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, plane = e / w.outSize;
    float max = 0;
    int64_t best = -1;
    for (int64_t t = 0; t < w.kernelSize; ++t) {
      int64_t i = w.tap(p, t);
      if (i < 0)
        continue;
      float v = float(x[plane * w.inSize + i]);
      if (best < 0 || v > max || v != v) {
        max = v;
        best = i;
      }
    }
    if (best >= 0)
      atomicAddValue(&dx[plane * w.inSize + best], A(g[e]));
  }
}

template <typename T>
void maxPoolGrad(const dtck::Shape &sg, const dtck::Shape &sx, const T *g,
                 const T *x, const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, const int64_t *dilations, T *dx) {
  Window win(sx, sg, kernel, strides, pads, dilations);
  AccumOf<T> *acc = accumulatorFor(dx, sx.numel());
  if (sg.numel() > 0)
    launch("dtcg_max_pool_grad", gridFor(sg.numel()), kBlock,
           maxPoolGradKernel<T, AccumOf<T>>, sg.numel(), win, g, x, acc);
  finishAccumulator(acc, dx, sx.numel());
}

template <typename T, typename A>
__global__ void avgPoolGradKernel(int64_t total, Window w, const T *g,
                                  bool includePad, A *dx) {
  DTCG_GRID_STRIDE(e, total) {
    int64_t p = e % w.outSize, plane = e / w.outSize;
    A share = A(dtck::detail::toDouble(g[e]) / double(w.count(p, includePad)));
    for (int64_t t = 0; t < w.kernelSize; ++t) {
      int64_t i = w.tap(p, t);
      if (i >= 0)
        atomicAddValue(&dx[plane * w.inSize + i], share);
    }
  }
}

template <typename T>
void avgPoolGrad(const dtck::Shape &sg, const dtck::Shape &sx, const T *g,
                 const int64_t *kernel, const int64_t *strides,
                 const int64_t *pads, const int64_t *dilations,
                 bool countIncludePad, T *dx) {
  Window win(sx, sg, kernel, strides, pads, dilations);
  AccumOf<T> *acc = accumulatorFor(dx, sx.numel());
  if (sg.numel() > 0)
    launch("dtcg_avg_pool_grad", gridFor(sg.numel()), kBlock,
           avgPoolGradKernel<T, AccumOf<T>>, sg.numel(), win, g,
           countIncludePad, acc);
  finishAccumulator(acc, dx, sx.numel());
}

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

template <typename T, typename S, typename B, typename M, typename V>
__global__ void
batchNormInferenceKernel(int64_t total, int64_t channels, int64_t inner,
                         const T *x, const S *scale, const B *bias,
                         const M *mean, const V *var, double epsilon, T *y) {
  using dtck::detail::toDouble;
  DTCG_GRID_STRIDE(e, total) {
    int64_t c = (e / inner) % channels;
    double invStd = 1.0 / ::sqrt(toDouble(var[c]) + epsilon);
    y[e] = dtck::store<T>(toDouble(scale[c]) *
                              (toDouble(x[e]) - toDouble(mean[c])) * invStd +
                          toDouble(bias[c]));
  }
}

template <typename T, typename S, typename B, typename M, typename V>
void batchNormInference(const dtck::Shape &sx, const T *x, const S *scale,
                        const B *bias, const M *mean, const V *var,
                        double epsilon, T *y) {
  int64_t inner = 1;
  for (int d = 2; d < sx.rank; ++d)
    inner *= sx.dims[d];
  if (sx.numel() > 0)
    launch("dtcg_batch_norm_inference", gridFor(sx.numel()), kBlock,
           batchNormInferenceKernel<T, S, B, M, V>, sx.numel(), sx.dims[1],
           inner, x, scale, bias, mean, var, epsilon, y);
}

/// Channel blockIdx.x: its batch mean and biased variance (in double), the
/// normalized result and the running statistics.
template <typename T, typename S, typename B, typename M, typename V>
__global__ void batchNormTrainingKernel(
    int64_t batch, int64_t channels, int64_t inner, const T *x, const S *scale,
    const B *bias, const M *runningMean, const V *runningVar, double epsilon,
    double momentum, bool unbiased, T *y, M *newMean, V *newVar) {
  using dtck::detail::toDouble;
  int64_t c = blockIdx.x, count = batch * inner;
  auto at = [&](int64_t q) {
    return ((q / inner) * channels + c) * inner + q % inner;
  };
  double sum = 0;
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x)
    sum += toDouble(x[at(q)]);
  double mean = blockReduce(sum, 0) / double(count);
  double squares = 0;
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x) {
    double d = toDouble(x[at(q)]) - mean;
    squares += d * d;
  }
  squares = blockReduce(squares, 0);
  double biasedVar = squares / double(count);
  double sampleVar = unbiased ? squares / double(count - 1) : biasedVar;
  double invStd = 1.0 / ::sqrt(biasedVar + epsilon);
  double s = toDouble(scale[c]), b = toDouble(bias[c]);
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x)
    y[at(q)] = dtck::store<T>(s * (toDouble(x[at(q)]) - mean) * invStd + b);
  if (threadIdx.x == 0) {
    newMean[c] = dtck::store<M>(momentum * toDouble(runningMean[c]) +
                                (1.0 - momentum) * mean);
    newVar[c] = dtck::store<V>(momentum * toDouble(runningVar[c]) +
                               (1.0 - momentum) * sampleVar);
  }
}

template <typename T, typename S, typename B, typename M, typename V>
void batchNormTraining(const dtck::Shape &sx, const T *x, const S *scale,
                       const B *bias, const M *runningMean, const V *runningVar,
                       double epsilon, double momentum, bool unbiasedRunningVar,
                       T *y, M *newMean, V *newVar) {
  int64_t inner = 1;
  for (int d = 2; d < sx.rank; ++d)
    inner *= sx.dims[d];
  if (sx.dims[1] > 0)
    launch("dtcg_batch_norm_training", unsigned(sx.dims[1]), kBlock,
           batchNormTrainingKernel<T, S, B, M, V>, sx.dims[0], sx.dims[1],
           inner, x, scale, bias, runningMean, runningVar, epsilon, momentum,
           unbiasedRunningVar, y, newMean, newVar);
}

} // namespace dtcg

#endif // DTCRT_CUDA_CONV_H
