//===- Normalization.h - batch and layer norm, softmax --------------------===//
//
// The normalizations of the dtg NN family (NN.h): batch norm (inference
// and training, with gradients), layer norm and its gradient, softmax and
// log-softmax, in double and rounded once.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_NORMALIZATION_H
#define DTCRT_KERNELS_NORMALIZATION_H

#include "dtcrt/kernels/NNSupport.h"

namespace dtck {
namespace nndetail {

/// Softmax (or its logarithm) of the rows `x[o, :, j]` for j in
/// [j0, j0 + count), in double as the interpreter computes it.
template <typename T>
void softmaxTile(const T *x, T *y, int64_t size, int64_t inner, int64_t count,
                 bool log) {
  constexpr int64_t kTile = 64;
  double max[kTile], sum[kTile];
  std::fill(max, max + count, -std::numeric_limits<double>::infinity());
  std::fill(sum, sum + count, 0.0);
  for (int64_t a = 0; a < size; ++a)
    for (int64_t j = 0; j < count; ++j)
      max[j] = std::max(max[j], toDouble(x[a * inner + j]));
  for (int64_t a = 0; a < size; ++a)
    for (int64_t j = 0; j < count; ++j)
      sum[j] += std::exp(toDouble(x[a * inner + j]) - max[j]);
  if (log)
    for (int64_t j = 0; j < count; ++j)
      sum[j] = std::log(sum[j]);
  for (int64_t a = 0; a < size; ++a) {
    for (int64_t j = 0; j < count; ++j) {
      double shifted = toDouble(x[a * inner + j]) - max[j];
      y[a * inner + j] =
          store<T>(log ? shifted - sum[j] : std::exp(shifted) / sum[j]);
    }
  }
}

/// exp(x) in float for x <= 0 (0 below -87.3, where exp leaves the normal
/// floats; NaN stays NaN): 2^n exp(r) with n = round(x / ln 2) and a
/// degree-6 Taylor polynomial on |r| <= ln(2) / 2 (relative error below
/// 2e-7). Branch-free, so that loops over it vectorize.
inline float expNonPositive(float x) {
  float n = std::floor(x * 1.44269504088896341f + 0.5f);
  // min(max(n, -126), 0) with NaN -> -126, as selects: std::fmin and
  // std::fmax are calls into libm unless NaNs are ruled out, which keeps
  // the loops around this function scalar.
  float low = n > -126.0f ? n : -126.0f;
  float c = low < 0.0f ? low : 0.0f;
  float r = x - c * 0.693145751953125f - c * 1.428606765330187e-06f;
  float p =
      1.0f +
      r * (1.0f + r * (0.5f + r * (1.0f / 6 +
                                   r * (1.0f / 24 +
                                        r * (1.0f / 120 + r * (1.0f / 720))))));
  int32_t bits = (static_cast<int32_t>(c) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x < -87.3f ? 0.0f : p * scale;
}

/// expNonPositive of every lane of `x`, in GCC's vector extension: the same
/// operations (the floor as a truncation corrected by one below zero; a
/// NaN, or a lane below -2^31, truncates to INT_MIN and clamps to -126 as
/// the floor's result does), so the same bits.
template <typename V> inline void expNonPositiveLanes(const V &x, V &result) {
  typedef int32_t I __attribute__((vector_size(sizeof(V))));
  V y = x * 1.44269504088896341f + 0.5f;
  V truncated = __builtin_convertvector(__builtin_convertvector(y, I), V);
  V n = truncated > y ? truncated - 1.0f : truncated;
  V low = n > -126.0f ? n : V{} - 126.0f;
  V c = low < 0.0f ? low : V{};
  V r = x - c * 0.693145751953125f - c * 1.428606765330187e-06f;
  V p = 1.0f +
        r * (1.0f +
             r * (0.5f +
                  r * (1.0f / 6 +
                       r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  I bits = (__builtin_convertvector(c, I) + 127) << 23;
  result = x < -87.3f ? V{} : p * __builtin_bit_cast(V, bits);
}

/// 16 consecutive floats or bf16s as a vector of floats, and back (bf16
/// rounded as its constructor rounds: bf16BitsOf). Vectors
/// go by reference, here and in expNonPositiveLanes: a 64-byte vector by
/// value is passed differently with and without AVX-512, and these inline
/// functions are compiled into objects built with either.
typedef float Lanes16 __attribute__((vector_size(64)));
template <typename T> inline void loadLanes(const T *x, Lanes16 &v) {
  typedef float Vu __attribute__((vector_size(64), aligned(4), may_alias));
  typedef uint16_t Hu __attribute__((vector_size(32), aligned(2), may_alias));
  typedef uint32_t U __attribute__((vector_size(64)));
  if constexpr (std::is_same_v<T, float>) {
    v = *reinterpret_cast<const Vu *>(x);
  } else {
    static_assert(std::is_same_v<T, bf16>);
    U wide = __builtin_convertvector(*reinterpret_cast<const Hu *>(x), U) << 16;
    v = __builtin_bit_cast(Lanes16, wide);
  }
}
template <typename T> inline void storeLanes(T *y, const Lanes16 &v) {
  typedef float Vu __attribute__((vector_size(64), aligned(4), may_alias));
  typedef uint16_t H __attribute__((vector_size(32)));
  typedef uint16_t Hu __attribute__((vector_size(32), aligned(2), may_alias));
  typedef uint32_t U __attribute__((vector_size(64)));
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<Vu *>(y) = v;
  } else {
    static_assert(std::is_same_v<T, bf16>);
    U bits;
    bf16BitsOf(__builtin_bit_cast(U, v), bits);
    *reinterpret_cast<Hu *>(y) = __builtin_convertvector(bits, H);
  }
}

/// Softmax (or its logarithm) of one contiguous float or bf16 row of S
/// elements (a multiple of 16) held in vectors of 16 floats: softmaxRow's
/// maximum and exps (the same bits), their sum in double in 8 lanes then across
/// them, one scale. For short rows (attention's over a short sequence), where
/// softmaxRow's loops and remainders per row cost more than the arithmetic.
template <int S, typename T>
void softmaxRowOfLanes(const T *x, T *y, bool log) {
  typedef Lanes16 V;
  typedef float H __attribute__((vector_size(32)));
  typedef double D __attribute__((vector_size(64)));
  constexpr int W = S / 16;
  V v[W];
  for (int w = 0; w < W; ++w)
    loadLanes(x + 16 * w, v[w]);
  // NaNs skipped as in softmaxRow: a lane keeps its value unless less.
  V lanes = v[0];
  for (int w = 1; w < W; ++w)
    lanes = lanes < v[w] ? v[w] : lanes;
  // Across the lanes in a tree (a NaN may win here, where softmaxRow skips
  // it: either way it makes the sum, so the whole row, NaN).
  H half = __builtin_shufflevector(lanes, lanes, 0, 1, 2, 3, 4, 5, 6, 7);
  H other = __builtin_shufflevector(lanes, lanes, 8, 9, 10, 11, 12, 13, 14, 15);
  half = half < other ? other : half;
  other = __builtin_shufflevector(half, half, 4, 5, 6, 7, 0, 1, 2, 3);
  half = half < other ? other : half;
  other = __builtin_shufflevector(half, half, 2, 3, 0, 1, 6, 7, 4, 5);
  half = half < other ? other : half;
  float max = half[0] < half[1] ? half[1] : half[0];
  if (max == -std::numeric_limits<float>::infinity())
    max = 0; // every element -inf: NaN below, as exp(-inf - -inf)
  V e[W];
  D sums{};
  for (int w = 0; w < W; ++w) {
    expNonPositiveLanes(V(v[w] - max), e[w]);
    sums += __builtin_convertvector(
        __builtin_shufflevector(e[w], e[w], 0, 1, 2, 3, 4, 5, 6, 7), D);
    sums += __builtin_convertvector(
        __builtin_shufflevector(e[w], e[w], 8, 9, 10, 11, 12, 13, 14, 15), D);
  }
  typedef double Q __attribute__((vector_size(32)));
  Q quarter = __builtin_shufflevector(sums, sums, 0, 1, 2, 3) +
              __builtin_shufflevector(sums, sums, 4, 5, 6, 7);
  double sum = (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
  if (log) {
    float logSum = static_cast<float>(std::log(sum));
    for (int w = 0; w < W; ++w)
      storeLanes(y + 16 * w, V((v[w] - max) - logSum));
    return;
  }
  float scale = static_cast<float>(1.0 / sum);
  for (int w = 0; w < W; ++w)
    storeLanes(y + 16 * w, V(e[w] * scale));
}

/// Calls softmaxRowOfLanes<size>(row, ...) for each row where `size` is one
/// of its sizes; false otherwise.
template <typename Rows> bool forRowsOfLanes(int64_t size, Rows rows) {
  switch (size) {
  case 16:
    return rows(std::integral_constant<int, 16>()), true;
  case 32:
    return rows(std::integral_constant<int, 32>()), true;
  case 48:
    return rows(std::integral_constant<int, 48>()), true;
  case 64:
    return rows(std::integral_constant<int, 64>()), true;
  case 96:
    return rows(std::integral_constant<int, 96>()), true;
  case 128:
    return rows(std::integral_constant<int, 128>()), true;
  default:
    return false;
  }
}

/// Softmax (or its logarithm) of one contiguous row of a 16- or 32-bit float
/// tensor: the maximum, one exp per element kept in `e` while summing (in
/// double), then one scale. Float arithmetic: within a few float ulps of
/// the interpreter's double result.
template <typename T>
void softmaxRow(const T *x, T *y, int64_t size, bool log, float *e) {
  // The maximum over 16 lanes, then over the lanes: a loop that vectorizes
  // (the same maximum: NaNs are skipped either way, and a zero of either
  // sign subtracts alike).
  constexpr int kLanes = 16;
  float lanes[kLanes];
  for (float &lane : lanes)
    lane = -std::numeric_limits<float>::infinity();
  int64_t a = 0;
  for (; a + kLanes <= size; a += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      float v = static_cast<float>(toDouble(x[a + l]));
      lanes[l] = lanes[l] < v ? v : lanes[l];
    }
  float max = -std::numeric_limits<float>::infinity();
  for (; a < size; ++a)
    max = std::max(max, static_cast<float>(toDouble(x[a])));
  for (float lane : lanes)
    max = std::max(max, lane);
  if (max == -std::numeric_limits<float>::infinity())
    max = 0; // every element -inf: NaN below, as exp(-inf - -inf)
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t a = 0; a < size; ++a) {
    float v = static_cast<float>(toDouble(x[a])) - max;
    e[a] = expNonPositive(v);
    sum += e[a];
  }
  if (log) {
    // (x - max) - log(sum): folding max + log(sum) first would lose a small
    // log(sum) against a large max.
    float logSum = static_cast<float>(std::log(sum));
    for (int64_t a = 0; a < size; ++a)
      y[a] = store<T>((static_cast<float>(toDouble(x[a])) - max) - logSum);
    return;
  }
  float scale = static_cast<float>(1.0 / sum);
#pragma omp simd
  for (int64_t a = 0; a < size; ++a)
    y[a] = store<T>(e[a] * scale);
}

/// Softmax (or its logarithm) of kRowLanes contiguous rows of `size`
/// elements at once, one row per vector lane: the rows transposed into `t`
/// (size x kRowLanes floats), softmaxRow's arithmetic on each (its maximum,
/// its exps, their sum in double in element order, one scale), transposed
/// back. For short rows (attention's over a short sequence), where
/// softmaxRow's loops, reductions across lanes and remainders per row cost
/// more than the arithmetic.
constexpr int kRowLanes = 16;
/// The longest rows softmaxRowsAcross takes.
constexpr int64_t kAcrossRowsMax = 32;
template <typename T>
void softmaxRowsAcross(const T *x, T *y, int64_t size, bool log, float *t) {
  for (int l = 0; l < kRowLanes; ++l)
    for (int64_t a = 0; a < size; ++a)
      t[a * kRowLanes + l] = static_cast<float>(toDouble(x[l * size + a]));
  float max[kRowLanes];
  for (float &m : max)
    m = -std::numeric_limits<float>::infinity();
  // NaNs are skipped here as in softmaxRow (and poison the sum below).
  for (int64_t a = 0; a < size; ++a)
    for (int l = 0; l < kRowLanes; ++l) {
      float v = t[a * kRowLanes + l];
      max[l] = max[l] < v ? v : max[l];
    }
  for (float &m : max)
    if (m == -std::numeric_limits<float>::infinity())
      m = 0; // every element -inf: NaN below, as exp(-inf - -inf)
  double sum[kRowLanes] = {};
  float *e = t + size * kRowLanes;
  for (int64_t a = 0; a < size; ++a)
    for (int l = 0; l < kRowLanes; ++l) {
      float v = expNonPositive(t[a * kRowLanes + l] - max[l]);
      e[a * kRowLanes + l] = v;
      sum[l] += v;
    }
  if (log) {
    float logSum[kRowLanes];
    for (int l = 0; l < kRowLanes; ++l)
      logSum[l] = static_cast<float>(std::log(sum[l]));
    for (int l = 0; l < kRowLanes; ++l)
      for (int64_t a = 0; a < size; ++a)
        y[l * size + a] = store<T>((t[a * kRowLanes + l] - max[l]) - logSum[l]);
    return;
  }
  float scale[kRowLanes];
  for (int l = 0; l < kRowLanes; ++l)
    scale[l] = static_cast<float>(1.0 / sum[l]);
  for (int l = 0; l < kRowLanes; ++l)
    for (int64_t a = 0; a < size; ++a)
      y[l * size + a] = store<T>(e[a * kRowLanes + l] * scale[l]);
}

/// Softmax or log-softmax along `axis`.
template <typename T>
void softmaxImpl(const Shape &sx, const T *x, int64_t axis, bool log, T *y) {
  constexpr int64_t kTile = 64;
  int64_t outer = numelOf(sx, 0, int(axis)), size = sx.dims[axis];
  int64_t inner = numelOf(sx, int(axis) + 1, sx.rank);
  if constexpr (!std::is_same_v<T, double>) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>)
      if (inner == 1 && forRowsOfLanes(size, [&](auto fixed) {
            constexpr int S = decltype(fixed)::value;
            parallelFor(outer * size, outer,
                        [&](int64_t chunkBegin, int64_t chunkEnd) {
                          for (int64_t o = chunkBegin; o < chunkEnd; ++o)
                            softmaxRowOfLanes<S>(x + o * S, y + o * S, log);
                        });
          }))
        return;
    if (inner == 1) {
      // Rows along the last axis: contiguous, in float; short ones
      // kRowLanes at a time across the lanes, the rest one by one.
      int64_t across = size <= kAcrossRowsMax ? outer / kRowLanes : 0;
      parallelFor(across * kRowLanes * size, across,
                  [&](int64_t chunkBegin, int64_t chunkEnd) {
                    for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
                      thread_local std::vector<float> scratch;
                      if (static_cast<int64_t>(scratch.size()) <
                          2 * kRowLanes * size)
                        scratch.resize(2 * kRowLanes * size);
                      int64_t first = b * kRowLanes * size;
                      softmaxRowsAcross(x + first, y + first, size, log,
                                        scratch.data());
                    }
                  });
      int64_t done = across * kRowLanes;
      parallelFor(
          (outer - done) * size, outer - done,
          [&](int64_t chunkBegin, int64_t chunkEnd) {
            for (int64_t o = done + chunkBegin; o < done + chunkEnd; ++o) {
              thread_local std::vector<float> scratch;
              if (static_cast<int64_t>(scratch.size()) < size)
                scratch.resize(size);
              softmaxRow(x + o * size, y + o * size, size, log, scratch.data());
            }
          });
      return;
    }
  }
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallelFor(sx.numel(), outer * tiles,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t task = chunkBegin; task < chunkEnd; ++task) {
                  int64_t o = task / tiles, j0 = (task % tiles) * kTile;
                  int64_t base = o * size * inner + j0;
                  softmaxTile(x + base, y + base, size, inner,
                              std::min(kTile, inner - j0), log);
                }
              });
}

} // namespace nndetail

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

/// dtg.batch_norm_inference: y = scale (x - mean) / sqrt(var + epsilon) +
/// bias per channel (axis 1), in double.
template <typename T, typename S, typename B, typename M, typename V>
void batchNormInference(const Shape &sx, const T *x, const S *scale,
                        const B *bias, const M *mean, const V *var,
                        double epsilon, T *y) {
  using nndetail::toDouble;
  int64_t channels = sx.dims[1], inner = nndetail::numelOf(sx, 2, sx.rank);
  parallelFor(sx.numel(), sx.dims[0] * channels,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t nc = chunkBegin; nc < chunkEnd; ++nc) {
                  int64_t c = nc % channels;
                  double invStd = 1.0 / std::sqrt(toDouble(var[c]) + epsilon);
                  double s = toDouble(scale[c]), m = toDouble(mean[c]),
                         b = toDouble(bias[c]);
                  for (int64_t j = 0; j < inner; ++j)
                    y[nc * inner + j] = store<T>(
                        s * (toDouble(x[nc * inner + j]) - m) * invStd + b);
                }
              });
}

/// dtg.batch_norm_training: normalizes with the batch statistics of each
/// channel (over every axis but 1) and updates the running statistics,
/// new = momentum * running + (1 - momentum) * batch, with the batch
/// variance Bessel-corrected when `unbiasedRunningVar` is set. The emitter
/// guarantees N * D1 * ... >= 2 (>= 1 when biased).
template <typename T, typename S, typename B, typename M, typename V>
void batchNormTraining(const Shape &sx, const T *x, const S *scale,
                       const B *bias, const M *runningMean, const V *runningVar,
                       double epsilon, double momentum, bool unbiasedRunningVar,
                       T *y, M *newMean, V *newVar) {
  using nndetail::toDouble;
  int64_t batch = sx.dims[0], channels = sx.dims[1];
  int64_t inner = nndetail::numelOf(sx, 2, sx.rank), count = batch * inner;
  // Each channel's sums in kLanes partial sums (element j of each image's
  // plane into sum j % kLanes, added in order at the end): contiguous
  // loops of vector additions, in an order the shape fixes (MobileNetV2's
  // 52 at one thread: 3.6 ms with 8 channels' scalar chains interleaved).
  constexpr int64_t kLanes = 8;
  // The sum over channel c's elements of (x - shift), or of its square.
  auto sumPlanes = [&](int64_t c, double shift, bool square) {
    double lane[kLanes] = {};
    for (int64_t n = 0; n < batch; ++n) {
      const T *p = x + (n * channels + c) * inner;
      auto term = [&](int64_t j) {
        double d = toDouble(p[j]) - shift;
        return square ? d * d : d;
      };
      int64_t j = 0;
      for (; j + kLanes <= inner; j += kLanes)
        for (int64_t l = 0; l < kLanes; ++l)
          lane[l] += term(j + l);
      for (; j < inner; ++j)
        lane[j % kLanes] += term(j);
    }
    double sum = 0;
    for (int64_t l = 0; l < kLanes; ++l)
      sum += lane[l];
    return sum;
  };
  parallelFor(sx.numel(), channels, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t c = chunkBegin; c < chunkEnd; ++c) {
      double mean = sumPlanes(c, 0.0, false) / static_cast<double>(count);
      double squares = sumPlanes(c, mean, true);
      double biasedVar = squares / static_cast<double>(count);
      double sampleVar = unbiasedRunningVar
                             ? squares / static_cast<double>(count - 1)
                             : biasedVar;
      double invStd = 1.0 / std::sqrt(biasedVar + epsilon);
      double s = toDouble(scale[c]), b = toDouble(bias[c]);
      for (int64_t n = 0; n < batch; ++n) {
        int64_t base = (n * channels + c) * inner;
        for (int64_t j = 0; j < inner; ++j)
          y[base + j] =
              store<T>(s * (toDouble(x[base + j]) - mean) * invStd + b);
      }
      newMean[c] = store<M>(momentum * toDouble(runningMean[c]) +
                            (1.0 - momentum) * mean);
      newVar[c] = store<V>(momentum * toDouble(runningVar[c]) +
                           (1.0 - momentum) * sampleVar);
    }
  });
}

/// dtg.layer_norm: normalizes each row of the dimensions [axis, rank) by its
/// mean and biased variance, times scale plus bias (nullptr if none), both
/// broadcast to the normalized shape; in double.
template <typename T, typename S, typename B>
void layerNorm(const Shape &sx, const Shape &sscale, const Shape &sbias,
               const T *x, const S *scale, const B *bias, int64_t axis,
               double epsilon, T *y) {
  using nndetail::toDouble;
  Shape normalized = nndetail::subShape(sx, int(axis), sx.rank);
  int64_t inner = normalized.numel();
  int64_t outer = nndetail::numelOf(sx, 0, int(axis));
  // Element j of the normalized shape reads scale[scaleIndex[j]].
  auto indexOf = [&](const Shape &s) {
    std::vector<int64_t> index(inner);
    int64_t strides[kMaxRank], own[kMaxRank];
    broadcastStrides(s, normalized, strides);
    stridesOf(normalized, own);
    for (int64_t j = 0; j < inner; ++j) {
      int64_t offset = 0, rest = j;
      for (int d = 0; d < normalized.rank; ++d) {
        offset += (rest / own[d]) * strides[d];
        rest %= own[d];
      }
      index[j] = offset;
    }
    return index;
  };
  std::vector<int64_t> scaleIndex = indexOf(sscale);
  std::vector<int64_t> biasIndex = bias ? indexOf(sbias) : scaleIndex;
  // (Scale and bias of the normalized shape itself, the usual case: read
  // in place, so that the last loop vectorizes.)
  bool direct = true;
  for (int64_t j = 0; j < inner; ++j)
    direct = direct && scaleIndex[j] == j && biasIndex[j] == j;
  // Rows go 8 (float rows 32) at a time with their sums interleaved
  // (forPlacesOfRows): each row sums in its own order (the same bits), and
  // the independent chains overlap instead of each addition waiting for
  // the one before.
  auto normalizeRows = [&](auto waysConstant, int64_t o0) {
    constexpr int64_t W = decltype(waysConstant)::value;
    const T *rows[W];
    for (int64_t k = 0; k < W; ++k)
      rows[k] = x + (o0 + k) * inner;
    double sums[W] = {}, means[W], squares[W] = {};
    forPlacesOfRows<W>(rows, inner, [&](auto at) {
      for (int64_t k = 0; k < W; ++k)
        sums[k] += toDouble(at(k));
    });
    for (int64_t k = 0; k < W; ++k)
      means[k] = sums[k] / static_cast<double>(inner);
    forPlacesOfRows<W>(rows, inner, [&](auto at) {
      for (int64_t k = 0; k < W; ++k) {
        double d = toDouble(at(k)) - means[k];
        squares[k] += d * d;
      }
    });
    for (int64_t k = 0; k < W; ++k) {
      const T *row = rows[k];
      T *out = y + (o0 + k) * inner;
      double mean = means[k];
      double invStd =
          1.0 / std::sqrt(squares[k] / static_cast<double>(inner) + epsilon);
      if (direct && bias) {
        for (int64_t j = 0; j < inner; ++j)
          out[j] =
              store<T>((toDouble(row[j]) - mean) * invStd * toDouble(scale[j]) +
                       toDouble(bias[j]));
        continue;
      }
      for (int64_t j = 0; j < inner; ++j) {
        double value =
            (toDouble(row[j]) - mean) * invStd * toDouble(scale[scaleIndex[j]]);
        if (bias)
          value += toDouble(bias[biasIndex[j]]);
        out[j] = store<T>(value);
      }
    }
    return o0 + W;
  };
  parallelFor(sx.numel(), outer, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t o0 = chunkBegin; o0 < chunkEnd;) {
      if (std::is_same_v<T, float> && inner >= 8 && chunkEnd - o0 >= 32)
        o0 = normalizeRows(std::integral_constant<int64_t, 32>(), o0);
      else if (chunkEnd - o0 >= 8)
        o0 = normalizeRows(std::integral_constant<int64_t, 8>(), o0);
      else
        o0 = normalizeRows(std::integral_constant<int64_t, 1>(), o0);
    }
  });
}

/// dtg.softmax: exp(x - max) / sum(exp(x - max)) along `axis`, in double.
template <typename T>
void softmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  nndetail::softmaxImpl(sx, x, axis, /*log=*/false, y);
}

/// dtg.log_softmax: x - max - log(sum(exp(x - max))) along `axis`.
template <typename T>
void logSoftmax(const Shape &sx, const T *x, int64_t axis, T *y) {
  nndetail::softmaxImpl(sx, x, axis, /*log=*/true, y);
}
} // namespace dtck

#endif // DTCRT_KERNELS_NORMALIZATION_H
