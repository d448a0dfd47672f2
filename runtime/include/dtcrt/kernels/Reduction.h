//===- Reduction.h - reduction kernels of the CPU target --------*- C++ -*-===//
//
// reduce_sum/mean/max/min/prod/logsumexp, argmax/argmin, cumsum and
// nll_loss. The reference is dialects/DTG/Interp/KernelsReduction.cpp: float
// sums and products accumulate in double, in the order of the operand's
// elements, and round to the element type once; integers accumulate in
// 64-bit two's complement and wrap when stored. The argument convention is
// the one at the top of Elementwise.h.
//
// A reduction over axes takes the operand's shape and the result's shape
// *with kept dimensions* (size 1 on every reduced axis): it names the
// reduced axes, and the result's layout does not depend on keepdims.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_REDUCTION_H
#define DTCRT_KERNELS_REDUCTION_H

#include "dtcrt/kernels/Elementwise.h"

#include <vector>

namespace dtck {

/// How dtg.nll_loss reduces the per-position losses.
enum class Reduction { None, Sum, Mean };

namespace detail {

/// Walks the offsets of the row-major coordinates of a box (dims, strides),
/// last dimension fastest.
struct Odometer {
  int rank = 0;
  int64_t dims[kMaxRank] = {}, strides[kMaxRank] = {}, coords[kMaxRank] = {};
  int64_t offset = 0;

  void add(int64_t dim, int64_t stride) {
    dims[rank] = dim;
    strides[rank++] = stride;
  }
  /// Moves to the next coordinates.
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++coords[d] < dims[d])
        return;
      offset -= coords[d] * strides[d];
      coords[d] = 0;
    }
  }
  /// The offset of linear position `index` of the box.
  int64_t offsetOf(int64_t index) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (index % dims[d]) * strides[d];
      index /= dims[d];
    }
    return off;
  }
  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= dims[d];
    return n;
  }
};

/// Reduces `x` (shape `in`) to `kept` (the result with size-1 reduced
/// dimensions): for every result element r, `State s = init(r)`, then
/// `s = step(r, s, x[i])` for the operand elements i of r in increasing
/// order, then `finish(r, s)`.
template <typename State, typename T, typename Init, typename Step,
          typename Finish>
inline void reduceNest(const Shape &in, const Shape &kept, const T *x,
                       Init init, Step step, Finish finish) {
  int64_t outCount = kept.numel();
  if (outCount == 0)
    return;
  if (in.numel() == 0) {
    for (int64_t r = 0; r < outCount; ++r)
      finish(r, init(r));
    return;
  }
  // Collapse to alternating runs of kept and reduced dimensions.
  int rank = 0;
  int64_t dims[kMaxRank], strides[kMaxRank], inStrides[kMaxRank];
  bool reduced[kMaxRank];
  stridesOf(in, inStrides);
  for (int d = 0; d < in.rank; ++d) {
    if (in.dims[d] == 1)
      continue;
    bool r = kept.dims[d] == 1;
    if (rank > 0 && reduced[rank - 1] == r) {
      dims[rank - 1] *= in.dims[d];
      strides[rank - 1] = inStrides[d];
      continue;
    }
    dims[rank] = in.dims[d];
    strides[rank] = inStrides[d];
    reduced[rank++] = r;
  }
  Odometer keptNest, reducedNest;
  bool innerReduced = rank == 0 || reduced[rank - 1];
  int last = rank - 1;
  for (int d = 0; d < rank; ++d) {
    if (d == last)
      continue;
    (reduced[d] ? reducedNest : keptNest).add(dims[d], strides[d]);
  }
  int64_t total = in.numel();
  int64_t inner = rank ? dims[last] : 1;
  if (innerReduced) {
    // Each result element sums contiguous runs of the operand. Results go
    // kWays at a time, their steps interleaved: each result's steps stay in
    // its own order (the same bits), and the independent chains overlap
    // instead of each step waiting for the one before (a BatchNorm
    // gradient's per-channel sums).
    int64_t runs = reducedNest.count();
    // Groups of W results from `first` on; returns the first result after.
    auto inGroupsOf = [&](auto waysConstant, int64_t first,
                          int64_t groups) -> int64_t {
      constexpr int64_t W = decltype(waysConstant)::value;
      parallelFor(groups * W * runs * inner, groups,
                  [&](int64_t chunkBegin, int64_t chunkEnd) {
                    for (int64_t g = chunkBegin; g < chunkEnd; ++g) {
                      int64_t r0 = first + g * W;
                      State s[W];
                      const T *p[W];
                      for (int64_t k = 0; k < W; ++k) {
                        s[k] = init(r0 + k);
                        p[k] = x + keptNest.offsetOf(r0 + k);
                      }
                      Odometer walk = reducedNest;
                      for (int64_t q = 0; q < runs; ++q, walk.next()) {
                        if constexpr (W == 32) {
                          const T *rows[W];
                          for (int64_t k = 0; k < W; ++k)
                            rows[k] = p[k] + walk.offset;
                          forPlacesOfRows<W>(rows, inner, [&](auto at) {
                            for (int64_t k = 0; k < W; ++k)
                              s[k] = step(r0 + k, s[k], at(k));
                          });
                        } else {
                          for (int64_t j = 0; j < inner; ++j)
                            for (int64_t k = 0; k < W; ++k)
                              s[k] = step(r0 + k, s[k], p[k][walk.offset + j]);
                        }
                      }
                      for (int64_t k = 0; k < W; ++k)
                        finish(r0 + k, s[k]);
                    }
                  });
      return first + groups * W;
    };
    int64_t done = 0;
    // Float results 32 at a time where forPlacesOfRows transposes their
    // runs (a run of 8 or more): four vectors of sums in flight. Only where
    // there are 8 such groups or more: fewer would leave threads idle (96
    // channels are 3 groups of 32, or 12 of 8).
    if constexpr (std::is_same_v<T, float>)
      if (inner >= 8 && outCount >= 8 * 32)
        done =
            inGroupsOf(std::integral_constant<int64_t, 32>(), 0, outCount / 32);
    done = inGroupsOf(std::integral_constant<int64_t, 8>(), done,
                      (outCount - done) / 8);
    parallelFor((outCount - done) * runs * inner, outCount - done,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t r = done + chunkBegin; r < done + chunkEnd;
                       ++r) {
                    Odometer walk = reducedNest;
                    int64_t base = keptNest.offsetOf(r);
                    State s = init(r);
                    for (int64_t q = 0; q < runs; ++q, walk.next()) {
                      const T *p = x + base + walk.offset;
                      for (int64_t j = 0; j < inner; ++j)
                        s = step(r, s, p[j]);
                    }
                    finish(r, s);
                  }
                });
    return;
  }
  // The last dimension is kept: reduce blocks of contiguous results at once.
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  int64_t rows = outCount / inner;
  int64_t runs = reducedNest.count();
  parallelFor(total, rows * chunks, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
      int64_t row = b / chunks, n0 = (b % chunks) * kChunk;
      int64_t len = std::min(kChunk, inner - n0);
      int64_t r0 = row * inner + n0;
      int64_t base = keptNest.offsetOf(row) + n0;
      State s[kChunk];
      for (int64_t n = 0; n < len; ++n)
        s[n] = init(r0 + n);
      Odometer walk = reducedNest;
      for (int64_t q = 0; q < runs; ++q, walk.next()) {
        const T *p = x + base + walk.offset;
        for (int64_t n = 0; n < len; ++n)
          s[n] = step(r0 + n, s[n], p[n]);
      }
      for (int64_t n = 0; n < len; ++n)
        finish(r0 + n, s[n]);
    }
  });
}

/// Operand elements per result element of a reduction.
inline int64_t groupSize(const Shape &in, const Shape &kept) {
  int64_t n = 1;
  for (int d = 0; d < in.rank; ++d)
    if (kept.dims[d] == 1)
      n *= in.dims[d];
  return n;
}

/// `a` or `b`, whichever is larger; NaN if either is.
DTCK_HD inline double maxOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
DTCK_HD inline double minOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

/// Stores a real-valued result as the interpreter's storeReal: for integer
/// types, infinities and values beyond the type's range saturate.
template <typename T> inline T storeReal(double value) {
  if constexpr (isFloating<T>) {
    return detail::roundTo<T>(value);
  } else {
    if (std::isnan(value))
      return detail::fromDouble<T>(value);
    double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    double hi = sizeof(T) >= 8
                    ? 0x1p63
                    : static_cast<double>(std::numeric_limits<T>::max());
    if (value <= lo)
      return std::numeric_limits<T>::lowest();
    if (value >= hi)
      return std::numeric_limits<T>::max();
    return detail::fromDouble<T>(value);
  }
}

} // namespace detail

//===----------------------------------------------------------------------===//
// One step of the float reductions, shared with fused kernels
//===----------------------------------------------------------------------===//

namespace scalar {
/// An element as a float reduction accumulates it: in double.
template <typename T> DTCK_HD inline double accumulated(T v) {
  return static_cast<double>(detail::load(v));
}
/// A float sum (or mean) accumulates each element in double.
template <typename T> DTCK_HD inline double sumStep(double s, T v) {
  return s + accumulated(v);
}
/// A float maximum / minimum in double; NaN propagates.
template <typename T> DTCK_HD inline double maxStep(double s, T v) {
  return detail::maxOf(s, static_cast<double>(detail::load(v)));
}
template <typename T> DTCK_HD inline double minStep(double s, T v) {
  return detail::minOf(s, static_cast<double>(detail::load(v)));
}
/// The accumulated double rounded once to float type T.
template <typename T> DTCK_HD inline T finish(double s) {
  return detail::roundTo<T>(s);
}
} // namespace scalar

//===----------------------------------------------------------------------===//
// Reductions over axes: kernel(in, kept, x, y)
//===----------------------------------------------------------------------===//

/// Sum over the reduced axes.
template <typename T>
inline void reduceSum(const Shape &in, const Shape &kept, const T *x, T *y) {
  if constexpr (isFloating<T>)
    detail::reduceNest<double>(
        in, kept, x, [](int64_t) { return 0.0; },
        [](int64_t, double s, T v) { return scalar::sumStep(s, v); },
        [y](int64_t r, double s) { y[r] = detail::roundTo<T>(s); });
  else
    detail::reduceNest<int64_t>(
        in, kept, x, [](int64_t) { return int64_t(0); },
        [](int64_t, int64_t s, T v) {
          return detail::wrappingAdd(s, static_cast<int64_t>(v));
        },
        [y](int64_t r, int64_t s) { y[r] = detail::wrapInt<T>(s); });
}

/// Mean over the reduced axes; integer means truncate toward zero.
template <typename T>
inline void reduceMean(const Shape &in, const Shape &kept, const T *x, T *y) {
  int64_t count = detail::groupSize(in, kept);
  if constexpr (isFloating<T>)
    detail::reduceNest<double>(
        in, kept, x, [](int64_t) { return 0.0; },
        [](int64_t, double s, T v) { return scalar::sumStep(s, v); },
        [y, count](int64_t r, double s) {
          y[r] = detail::roundTo<T>(s / static_cast<double>(count));
        });
  else
    detail::reduceNest<int64_t>(
        in, kept, x, [](int64_t) { return int64_t(0); },
        [](int64_t, int64_t s, T v) {
          return detail::wrappingAdd(s, static_cast<int64_t>(v));
        },
        [y, count](int64_t r, int64_t s) {
          int64_t mean = count == 0 ? 0
                         : std::is_unsigned_v<T>
                             ? static_cast<int64_t>(uint64_t(s) / count)
                             : s / count;
          y[r] = detail::wrapInt<T>(mean);
        });
}

/// Maximum over the reduced axes; NaN propagates; an empty group gives
/// -inf (floats) or the type's lowest value.
template <typename T>
inline void reduceMax(const Shape &in, const Shape &kept, const T *x, T *y) {
  if constexpr (isFloating<T>)
    detail::reduceNest<double>(
        in, kept, x, [](int64_t) { return -HUGE_VAL; },
        [](int64_t, double s, T v) { return scalar::maxStep(s, v); },
        [y](int64_t r, double s) { y[r] = detail::roundTo<T>(s); });
  else
    detail::reduceNest<T>(
        in, kept, x, [](int64_t) { return std::numeric_limits<T>::lowest(); },
        [](int64_t, T s, T v) { return s < v ? v : s; },
        [y](int64_t r, T s) { y[r] = s; });
}

/// Minimum over the reduced axes; NaN propagates; an empty group gives +inf
/// (floats) or the type's largest value.
template <typename T>
inline void reduceMin(const Shape &in, const Shape &kept, const T *x, T *y) {
  if constexpr (isFloating<T>)
    detail::reduceNest<double>(
        in, kept, x, [](int64_t) { return HUGE_VAL; },
        [](int64_t, double s, T v) { return scalar::minStep(s, v); },
        [y](int64_t r, double s) { y[r] = detail::roundTo<T>(s); });
  else
    detail::reduceNest<T>(
        in, kept, x, [](int64_t) { return std::numeric_limits<T>::max(); },
        [](int64_t, T s, T v) { return v < s ? v : s; },
        [y](int64_t r, T s) { y[r] = s; });
}

/// Product over the reduced axes.
template <typename T>
inline void reduceProd(const Shape &in, const Shape &kept, const T *x, T *y) {
  if constexpr (isFloating<T>)
    detail::reduceNest<double>(
        in, kept, x, [](int64_t) { return 1.0; },
        [](int64_t, double s, T v) {
          return s * static_cast<double>(detail::load(v));
        },
        [y](int64_t r, double s) { y[r] = detail::roundTo<T>(s); });
  else
    detail::reduceNest<int64_t>(
        in, kept, x, [](int64_t) { return int64_t(1); },
        [](int64_t, int64_t s, T v) {
          return detail::wrappingMul(s, static_cast<int64_t>(v));
        },
        [y](int64_t r, int64_t s) { y[r] = detail::wrapInt<T>(s); });
}

/// log(sum(exp(x))) over the reduced axes, as m + log(sum(exp(x - m))) with
/// m the maximum (an infinite or NaN maximum is the result itself).
template <typename T>
inline void reduceLogSumExp(const Shape &in, const Shape &kept, const T *x,
                            T *y) {
  std::vector<double> maxima(kept.numel());
  double *m = maxima.data();
  detail::reduceNest<double>(
      in, kept, x, [](int64_t) { return -HUGE_VAL; },
      [](int64_t, double s, T v) {
        if constexpr (isFloating<T>)
          return detail::maxOf(s, detail::toDouble(v));
        else
          return std::max(s, detail::toDouble(v));
      },
      [m](int64_t r, double s) { m[r] = s; });
  detail::reduceNest<double>(
      in, kept, x, [](int64_t) { return 0.0; },
      [m](int64_t r, double s, T v) {
        if (isFloating<T> && !std::isfinite(m[r]))
          return s;
        return s + std::exp(detail::toDouble(v) - m[r]);
      },
      [m, y](int64_t r, double s) {
        double result = std::isfinite(m[r]) ? m[r] + std::log(s) : m[r];
        y[r] = detail::storeReal<T>(result);
      });
}

//===----------------------------------------------------------------------===//
// Arg-reductions, cumsum, nll_loss
//===----------------------------------------------------------------------===//

namespace detail {

/// Index of the best element along `axis` (`better(a, b)`: a strictly
/// better than b; ties to the first, or the last with `last`).
template <typename T, typename Better>
inline void argReduce(const char *kernel, const Shape &in, const T *x,
                      int64_t axis, bool last, int64_t *y, Better better) {
  int a = static_cast<int>(axis);
  int64_t outer = product(in, 0, a), size = in.dims[a],
          inner = product(in, a + 1, in.rank);
  if (outer * inner == 0)
    return;
  if (size == 0) {
    char message[128];
    std::snprintf(message, sizeof(message),
                  "%s: cannot take the %s of an empty axis %lld", kernel,
                  kernel, static_cast<long long>(axis));
    fail(message);
  }
  auto equal = [](T p, T q) {
    if constexpr (isFloating<T>)
      return detail::load(p) == detail::load(q) ||
             (std::isnan(detail::load(p)) && std::isnan(detail::load(q)));
    else
      return p == q;
  };
  parallelFor(outer * size * inner, outer,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t o = chunkBegin; o < chunkEnd; ++o) {
                  for (int64_t n = 0; n < inner; ++n) {
                    const T *p = x + o * size * inner + n;
                    int64_t best = 0;
                    for (int64_t j = 1; j < size; ++j) {
                      T v = p[j * inner], b = p[best * inner];
                      if (better(v, b) || (last && equal(v, b)))
                        best = j;
                    }
                    y[o * inner + n] = best;
                  }
                }
              });
}

} // namespace detail

/// Index of the maximum along `axis` (the result's shape does not matter:
/// keepdims only adds a size-1 dimension). NaN is larger than every number.
template <typename T>
inline void argMax(const Shape &in, const T *x, int64_t axis,
                   bool selectLastIndex, int64_t *y) {
  detail::argReduce("argmax", in, x, axis, selectLastIndex, y, [](T p, T q) {
    if constexpr (isFloating<T>) {
      auto a = detail::load(p), b = detail::load(q);
      if (std::isnan(b))
        return false;
      return std::isnan(a) || a > b;
    } else {
      return q < p;
    }
  });
}

/// Index of the minimum along `axis`. NaN is smaller than every number.
template <typename T>
inline void argMin(const Shape &in, const T *x, int64_t axis,
                   bool selectLastIndex, int64_t *y) {
  detail::argReduce("argmin", in, x, axis, selectLastIndex, y, [](T p, T q) {
    if constexpr (isFloating<T>) {
      auto a = detail::load(p), b = detail::load(q);
      if (std::isnan(b))
        return false;
      return std::isnan(a) || a < b;
    } else {
      return p < q;
    }
  });
}

/// Running sum along `axis` (floats in double, each prefix rounded once);
/// `exclusive` leaves the element itself out, `reverse` runs from the end.
/// `y` may be `x`.
template <typename T>
inline void cumSum(const Shape &s, const T *x, int64_t axis, bool exclusive,
                   bool reverse, T *y) {
  int a = static_cast<int>(axis);
  int64_t outer = detail::product(s, 0, a), size = s.dims[a],
          inner = detail::product(s, a + 1, s.rank);
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  using State = std::conditional_t<isFloating<T>, double, int64_t>;
  parallelFor(outer * size * inner, outer * chunks,
              [&](int64_t chunkBegin, int64_t chunkEnd) {
                for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
                  int64_t o = b / chunks, n0 = (b % chunks) * kChunk;
                  int64_t len = std::min(kChunk, inner - n0);
                  State acc[kChunk] = {};
                  for (int64_t step = 0; step < size; ++step) {
                    int64_t j = reverse ? size - 1 - step : step;
                    int64_t base = (o * size + j) * inner + n0;
                    for (int64_t n = 0; n < len; ++n) {
                      State v;
                      if constexpr (isFloating<T>)
                        v = static_cast<double>(detail::load(x[base + n]));
                      else
                        v = static_cast<int64_t>(x[base + n]);
                      State before = acc[n];
                      if constexpr (isFloating<T>)
                        acc[n] += v;
                      else
                        acc[n] = detail::wrappingAdd(acc[n], v);
                      State out = exclusive ? before : acc[n];
                      if constexpr (isFloating<T>)
                        y[base + n] = detail::roundTo<T>(out);
                      else
                        y[base + n] = detail::wrapInt<T>(out);
                    }
                  }
                }
              });
}

/// Negative log-likelihood: `input` [N, C, d...] log-probabilities,
/// `target` [N, d...] class indices, optional `weight` [C] (nullptr when
/// absent). Positions whose target is `ignoreIndex` (when `hasIgnoreIndex`)
/// count zero; a target out of [0, C) otherwise is an error. `None` writes
/// one loss per position; `Sum` and `Mean` (sum over the counted weight)
/// write one value, accumulated in double in order of the positions.
template <typename T, typename I>
inline void nllLoss(const Shape &input, const T *x, const I *target,
                    const detail::NonDeduced<T> *weight, Reduction reduction,
                    bool hasIgnoreIndex, int64_t ignoreIndex, T *y) {
  int64_t batch = input.dims[0], classes = input.dims[1];
  int64_t inner = detail::product(input, 2, input.rank);
  double total = 0.0, totalWeight = 0.0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < inner; ++p) {
      int64_t position = n * inner + p;
      int64_t t = static_cast<int64_t>(target[position]);
      double loss = 0.0;
      if (!hasIgnoreIndex || t != ignoreIndex) {
        if (t < 0 || t >= classes) {
          char message[192];
          std::snprintf(
              message, sizeof(message),
              "nll_loss: target %lld at position %lld is out of "
              "range for %lld classes [0, %lld)",
              static_cast<long long>(t), static_cast<long long>(position),
              static_cast<long long>(classes), static_cast<long long>(classes));
          fail(message);
        }
        double w = weight ? static_cast<double>(detail::load(weight[t])) : 1.0;
        loss = -w * static_cast<double>(
                        detail::load(x[(n * classes + t) * inner + p]));
        total += loss;
        totalWeight += w;
      }
      if (reduction == Reduction::None)
        y[position] = detail::roundTo<T>(loss);
    }
  }
  if (reduction == Reduction::Sum)
    y[0] = detail::roundTo<T>(total);
  else if (reduction == Reduction::Mean)
    y[0] = detail::roundTo<T>(total / totalWeight);
}

} // namespace dtck

#endif // DTCRT_KERNELS_REDUCTION_H
