//===- CudnnConv.h - convolutions and their gradients in cuDNN ------------===//
//
// The CUDA target's convolutions on a GPU: cuDNN's legacy convolution API
// (cudnnConvolutionForward / BackwardData / BackwardFilter) with NCHW
// tensors, groups, strides, dilations and symmetric padding over 1 to 3
// spatial dimensions (1: as 2 with a unit height). Each shape gets a plan
// once: descriptors and, per pass, the fastest algorithm cuDNN's
// heuristics rank that is deterministic (the same trajectory every run)
// and, for fp32, uses no TF32 tensor cores (fp32 products stay fp32, as
// the CPU target's; 16-bit operands accumulate in float on tensor cores).
// Everything else (asymmetric padding, four spatial dimensions) and every
// convolution under the emulation take Conv.h's im2col path:
// dtcg::cudnn::convolve says false (DTCG_NO_CUDNN=1 forces that path on a
// GPU too, to compare the two).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_CUDNNCONV_H
#define DTCRT_CUDA_CUDNNCONV_H

#include "dtcrt/cuda/Device.h"

#ifndef DTCG_EMULATION
#include <cudnn.h>
#endif

#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace dtcg::cudnn {

enum class Pass { Forward, InputGrad, WeightGrad };

#ifdef DTCG_EMULATION
/// The emulation convolves by im2col (no cuDNN on the host).
template <typename T>
inline bool convolve(Pass, const dtck::Shape &, const dtck::Shape &,
                     const dtck::Shape &, const T *, const T *, const T *,
                     const int64_t *, const int64_t *, const int64_t *,
                     int64_t) {
  return false;
}
#else

inline void check(cudnnStatus_t status, const std::string &what) {
  if (status != CUDNN_STATUS_SUCCESS)
    fatal("cuDNN: " + what + ": " + cudnnGetErrorString(status));
}

inline cudnnHandle_t handle() {
  static cudnnHandle_t h = [] {
    selectDevice();
    cudnnHandle_t created = nullptr;
    check(cudnnCreate(&created), "creating a handle");
    check(cudnnSetStream(created, stream()), "setting the compute stream");
    return created;
  }();
  return h;
}

template <typename T> constexpr cudnnDataType_t dataType() {
  if constexpr (std::is_same_v<T, float>)
    return CUDNN_DATA_FLOAT;
  else if constexpr (std::is_same_v<T, dtck::bf16>)
    return CUDNN_DATA_BFLOAT16;
  else if constexpr (std::is_same_v<T, dtck::f16>)
    return CUDNN_DATA_HALF;
  else
    return CUDNN_DATA_DOUBLE;
}

/// Descriptors and algorithms of one convolution (its shapes, geometry and
/// element type); `usable` false where cuDNN cannot take it.
struct Plan {
  bool usable = false;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t inputGrad{};
  cudnnConvolutionBwdFilterAlgo_t weightGrad{};
  size_t forwardBytes = 0, inputGradBytes = 0, weightGradBytes = 0;
};

/// The first of cuDNN's ranked algorithms that succeeded, is deterministic
/// and uses `math`; false if none.
template <typename Perf, typename Algo>
bool pickAlgorithm(const Perf *perfs, int count, cudnnMathType_t math,
                   Algo &algo, size_t &bytes) {
  for (int i = 0; i < count; ++i)
    if (perfs[i].status == CUDNN_STATUS_SUCCESS &&
        perfs[i].determinism == CUDNN_DETERMINISTIC &&
        perfs[i].mathType == math) {
      algo = perfs[i].algo;
      bytes = perfs[i].memory;
      return true;
    }
  return false;
}

template <typename T>
Plan makePlan(const dtck::Shape &sx, const dtck::Shape &sw,
              const dtck::Shape &sy, const int64_t *strides,
              const int64_t *pads, const int64_t *dilations, int64_t group) {
  Plan p;
  int k = sx.rank - 2;
  if (k < 1 || k > 3)
    return p;
  for (int i = 0; i < k; ++i)
    if (pads[i] != pads[k + i])
      return p; // cuDNN pads both ends alike
  // 1 spatial dimension: as 2, the first of size 1.
  int lead = k == 1 ? 1 : 0, n = k + lead;
  std::array<int, 5> xd{}, wd{}, yd{};
  std::array<int, 3> pad{}, stride{}, dilation{};
  for (int d = 0; d < 2; ++d) {
    xd[d] = int(sx.dims[d]);
    wd[d] = int(sw.dims[d]);
    yd[d] = int(sy.dims[d]);
  }
  for (int i = 0; i < n; ++i) {
    int from = i - lead; // -1: the added unit dimension
    xd[2 + i] = from < 0 ? 1 : int(sx.dims[2 + from]);
    wd[2 + i] = from < 0 ? 1 : int(sw.dims[2 + from]);
    yd[2 + i] = from < 0 ? 1 : int(sy.dims[2 + from]);
    pad[i] = from < 0 ? 0 : int(pads[from]);
    stride[i] = from < 0 ? 1 : int(strides[from]);
    dilation[i] = from < 0 ? 1 : int(dilations[from]);
  }
  auto contiguous = [&](const std::array<int, 5> &dims) {
    std::array<int, 5> s{};
    int at = 1;
    for (int d = n + 1; d >= 0; --d) {
      s[size_t(d)] = at;
      at *= dims[size_t(d)];
    }
    return s;
  };
  cudnnDataType_t type = dataType<T>();
  std::array<int, 5> xs = contiguous(xd), ys = contiguous(yd);
  check(cudnnCreateTensorDescriptor(&p.x), "a tensor descriptor");
  check(cudnnSetTensorNdDescriptor(p.x, type, n + 2, xd.data(), xs.data()),
        "describing the input");
  check(cudnnCreateTensorDescriptor(&p.y), "a tensor descriptor");
  check(cudnnSetTensorNdDescriptor(p.y, type, n + 2, yd.data(), ys.data()),
        "describing the output");
  check(cudnnCreateFilterDescriptor(&p.w), "a filter descriptor");
  check(cudnnSetFilterNdDescriptor(p.w, type, CUDNN_TENSOR_NCHW, n + 2,
                                   wd.data()),
        "describing the weight");
  check(cudnnCreateConvolutionDescriptor(&p.conv), "a convolution descriptor");
  // Products in float (fp32, and 16-bit operands' accumulation).
  check(cudnnSetConvolutionNdDescriptor(
            p.conv, n, pad.data(), stride.data(), dilation.data(),
            CUDNN_CROSS_CORRELATION,
            type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
        "describing the convolution");
  check(cudnnSetConvolutionGroupCount(p.conv, int(group)), "setting groups");
  cudnnMathType_t math = sizeof(T) == 2 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  check(cudnnSetConvolutionMathType(p.conv, math), "setting the math type");
  constexpr int kAlgos = 16;
  int found = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[kAlgos];
  check(cudnnGetConvolutionForwardAlgorithm_v7(handle(), p.x, p.w, p.conv, p.y,
                                               kAlgos, &found, fwd),
        "ranking forward algorithms");
  bool ok = pickAlgorithm(fwd, found, math, p.forward, p.forwardBytes);
  cudnnConvolutionBwdDataAlgoPerf_t data[kAlgos];
  check(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle(), p.w, p.y, p.conv,
                                                    p.x, kAlgos, &found, data),
        "ranking input-gradient algorithms");
  ok = ok && pickAlgorithm(data, found, math, p.inputGrad, p.inputGradBytes);
  cudnnConvolutionBwdFilterAlgoPerf_t filter[kAlgos];
  check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            handle(), p.x, p.y, p.conv, p.w, kAlgos, &found, filter),
        "ranking weight-gradient algorithms");
  ok =
      ok && pickAlgorithm(filter, found, math, p.weightGrad, p.weightGradBytes);
  p.usable = ok;
  return p;
}

/// One pass of the convolution x (*) w = y: Forward writes y, InputGrad
/// writes x from y's gradient (in y) and w, WeightGrad writes w from x and
/// y's gradient. False (nothing done) where cuDNN cannot take it.
template <typename T>
bool convolve(Pass pass, const dtck::Shape &sx, const dtck::Shape &sw,
              const dtck::Shape &sy, const T *x, const T *w, const T *y,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, int64_t group) {
  static const bool disabled = std::getenv("DTCG_NO_CUDNN") != nullptr;
  if (disabled)
    return false;
  // Plans by everything they depend on.
  using Key = std::vector<int64_t>;
  static std::map<Key, Plan> plans;
  Key key = {int64_t(dataType<T>()), group, sx.rank};
  for (const dtck::Shape *s : {&sx, &sw, &sy})
    key.insert(key.end(), s->dims, s->dims + s->rank);
  int k = sx.rank - 2;
  key.insert(key.end(), strides, strides + k);
  key.insert(key.end(), pads, pads + 2 * k);
  key.insert(key.end(), dilations, dilations + k);
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans
             .emplace(key,
                      makePlan<T>(sx, sw, sy, strides, pads, dilations, group))
             .first;
  const Plan &p = it->second;
  if (!p.usable)
    return false;
  if (kernelMark())
    kernelMark()(pass == Pass::Forward     ? "cudnn convolution"
                 : pass == Pass::InputGrad ? "cudnn input gradient"
                                           : "cudnn weight gradient");
  float one = 1.0f, zero = 0.0f;
  double oneD = 1.0, zeroD = 0.0;
  const void *alpha = dataType<T>() == CUDNN_DATA_DOUBLE
                          ? static_cast<const void *>(&oneD)
                          : static_cast<const void *>(&one);
  const void *beta = dataType<T>() == CUDNN_DATA_DOUBLE
                         ? static_cast<const void *>(&zeroD)
                         : static_cast<const void *>(&zero);
  switch (pass) {
  case Pass::Forward: {
    void *ws = growingScratch(p.forwardBytes ? p.forwardBytes : 1, 4);
    check(cudnnConvolutionForward(handle(), alpha, p.x, x, p.w, w, p.conv,
                                  p.forward, ws, p.forwardBytes, beta, p.y,
                                  const_cast<T *>(y)),
          "convolution");
    break;
  }
  case Pass::InputGrad: {
    void *ws = growingScratch(p.inputGradBytes ? p.inputGradBytes : 1, 4);
    check(cudnnConvolutionBackwardData(handle(), alpha, p.w, w, p.y, y, p.conv,
                                       p.inputGrad, ws, p.inputGradBytes, beta,
                                       p.x, const_cast<T *>(x)),
          "convolution input gradient");
    break;
  }
  case Pass::WeightGrad: {
    void *ws = growingScratch(p.weightGradBytes ? p.weightGradBytes : 1, 4);
    check(cudnnConvolutionBackwardFilter(
              handle(), alpha, p.x, x, p.y, y, p.conv, p.weightGrad, ws,
              p.weightGradBytes, beta, p.w, const_cast<T *>(w)),
          "convolution weight gradient");
    break;
  }
  }
  return true;
}
#endif

} // namespace dtcg::cudnn

#endif // DTCRT_CUDA_CUDNNCONV_H
