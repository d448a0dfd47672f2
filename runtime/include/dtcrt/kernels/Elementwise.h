//===- Elementwise.h - elementwise kernels of the CPU target ----*- C++ -*-===//
//
// Unary math and activations, binary arithmetic, logic and comparisons with
// NumPy broadcasting, where, cast, clip, is_nan and is_inf. The reference is
// dialects/DTG/Interp/KernelsElementwise.cpp.
//
// Argument convention of every dtck kernel (Elementwise.h, Shape.h,
// Reduction.h, Training.h and the families beside them):
//
//   dtck::kernel(shapes..., inputs..., attributes..., outputs...);
//
// - shapes: `const Shape &`, the operands' in operand order, then the
//   results'; a shape equal to one already passed by construction is left
//   out (a unary op passes one shape for operand and result);
// - inputs: `const T *` in operand order (an absent optional operand is
//   `nullptr`); rank-0 run-time scalars (a learning rate) are pointers too;
// - attributes: in the op's attribute order, `double` for float attributes,
//   `int64_t` for integers, `bool`, enums of this library
//   (`dtck::PadMode::Reflect`), and `const int64_t *` arrays with one entry
//   per dimension of a shape already passed;
// - outputs: `T *` in result order.
//
// Element types are template parameters deduced from the pointers. Kernels
// read every input element they need before writing the output element at
// the same position, so an output may alias an input of its shape.
//
// Numerics: f32 and f64 compute in their own type, bf16 and f16 in float,
// integers in 64-bit two's complement wrapped to their width (as the
// interpreter's Tensor::setInt), booleans as 0/1. Results that the
// interpreter produces by one double-precision rounding step (casts, clip,
// optimizer statements) use the same step here (roundTo, fromDouble).
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_ELEMENTWISE_H
#define DTCRT_KERNELS_ELEMENTWISE_H

#include "dtcrt/kernels/Common.h"
#include "dtcrt/kernels/MathFloat.h"

#include <algorithm>

namespace dtck {
// Helpers live in dtck::detail: generated code calls only the kernels, and
// argument-dependent lookup on dtck::bf16 never sees them.
namespace detail {

/// Types whose every value a float holds exactly: float, bf16, f16.
template <typename T>
constexpr bool kFloatHeld = std::is_same_v<T, float> ||
                            std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

/// pi, as a double.
constexpr double kPi = 3.14159265358979323846;

// exp, tanh, erf and erfc: of a float on the host, the vectorizable ones of
// MathFloat.h; of a double, or on a GPU, the library's.
#ifdef __CUDA_ARCH__
constexpr bool kHostFloatMath = false;
#else
constexpr bool kHostFloatMath = true;
#endif
#define DTCK_FLOAT_MATH(name, floatFn, libFn)                                  \
  template <typename C> DTCK_HD inline C name(C v) {                           \
    if constexpr (kHostFloatMath && std::is_same_v<C, float>)                  \
      return math::floatFn(v);                                                 \
    else                                                                       \
      return libFn(v);                                                         \
  }
DTCK_FLOAT_MATH(expOf, expFloat, std::exp)
DTCK_FLOAT_MATH(tanhOf, tanhFloat, std::tanh)
DTCK_FLOAT_MATH(erfOf, erfFloat, std::erf)
DTCK_FLOAT_MATH(erfcOf, erfcFloat, std::erfc)
#undef DTCK_FLOAT_MATH

//===----------------------------------------------------------------------===//
// Conversions with the interpreter's rounding rules
//===----------------------------------------------------------------------===//

/// Rounds `value` to float with round-to-odd (truncate, then set the lowest
/// bit when inexact). Rounding that float to a type of at most 22 significand
/// bits (bf16, f16) then gives the correctly rounded result of `value`, with
/// no double rounding.
/// Branch-free (so that loops over it vectorize): where the nearest float
/// lies beyond `value`, the float one step toward zero is one less in its
/// magnitude's bits (infinity's is the largest finite float).
DTCK_HD inline float roundToOddFloat(double value) {
  float f = static_cast<float>(value);
  double back = static_cast<double>(f);
  uint32_t inexact = back != value && value == value ? 1u : 0u;
  uint32_t beyond = std::fabs(back) > std::fabs(value) ? 1u : 0u;
  return bitsFloat((floatBits(f) - (inexact & beyond)) | inexact);
}

/// `value` rounded to float type T, to nearest even, in one step.
template <typename T> DTCK_HD inline T roundTo(double value) {
  if constexpr (std::is_same_v<T, double>)
    return value;
  else if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(value);
  else
    return T(detail::roundToOddFloat(value));
}

/// An integer (64-bit two's complement) wrapped to integer type T; bool is
/// `value != 0`.
template <typename T> DTCK_HD inline T wrapInt(int64_t value) {
  if constexpr (std::is_same_v<T, bool>)
    return value != 0;
  else
    return static_cast<T>(value);
}

/// Stores a real `value` in T as the interpreter's Tensor::set: floats round
/// to nearest even; NaN becomes 0; bool is `value != 0`; other integers
/// truncate toward zero, saturate at the int64 range, then wrap to T.
template <typename T> DTCK_HD inline T fromDouble(double value) {
  if constexpr (isFloating<T>) {
    return detail::roundTo<T>(value);
  } else {
    if (std::isnan(value))
      return T(0);
    if constexpr (std::is_same_v<T, bool>)
      return value != 0.0;
    if (value >= 9223372036854775807.0)
      return detail::wrapInt<T>(std::numeric_limits<int64_t>::max());
    if (value <= -9223372036854775808.0)
      return detail::wrapInt<T>(std::numeric_limits<int64_t>::min());
    return detail::wrapInt<T>(static_cast<int64_t>(std::trunc(value)));
  }
}

/// Stores an integer `value` in T as the interpreter's Tensor::setInt.
template <typename T> DTCK_HD inline T fromInt(int64_t value) {
  if constexpr (isFloating<T>)
    return detail::roundTo<T>(static_cast<double>(value));
  else
    return detail::wrapInt<T>(value);
}

/// The value of `x` in its compute type (compute_t<T>): float for 16-bit
/// floats, int64_t for integers (unsigned 64-bit values keep their bits).
template <typename T> DTCK_HD inline compute_t<T> load(T x) {
  if constexpr (std::is_same_v<T, bool>)
    return x;
  else
    return static_cast<compute_t<T>>(x);
}

/// The value of `x` as a double, as the interpreter's Tensor::get.
template <typename T> DTCK_HD inline double toDouble(T x) {
  if constexpr (isFloating<T>)
    return static_cast<double>(detail::load(x));
  else
    return static_cast<double>(static_cast<int64_t>(x));
}

//===----------------------------------------------------------------------===//
// Loop helpers
//===----------------------------------------------------------------------===//

/// T in a parameter that does not take part in template argument deduction
/// (so `nullptr` can be passed for an absent optional operand).
template <typename T> struct TypeIdentity { using type = T; };
template <typename T> using NonDeduced = typename TypeIdentity<T>::type;

/// Product of `s.dims[begin:end]`.
DTCK_HD inline int64_t product(const Shape &s, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d)
    n *= s.dims[d];
  return n;
}

/// `f` at one element: `f` takes and returns the compute type (integers go
/// through double, as the interpreter's unary kernels do).
template <typename T, typename F> DTCK_HD inline T applyUnary(T x, F f) {
  if constexpr (isFloating<T>)
    return T(f(detail::load(x)));
  else
    return detail::fromDouble<T>(f(detail::toDouble(x)));
}

#ifndef DTCK_DEVICE_LOOPS
// The host loops (the CUDA target supplies device ones: cuda/Loops.h).
/// Elements of the innermost loop one parallel task runs at most.
constexpr int64_t kBlock = 4096;

/// A loop nest over a shape that walks N arrays, each by its own strides (in
/// elements). Dimensions of size 1 are dropped and adjacent dimensions that
/// every array walks as one are merged, so the innermost loop is as long as
/// the arrays allow.
template <int N> struct StridedLoop {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};
  bool empty = false;

  StridedLoop(const Shape &shape, const int64_t (&arrayStrides)[N][kMaxRank]) {
    for (int d = 0; d < shape.rank; ++d) {
      int64_t size = shape.dims[d];
      if (size == 0)
        empty = true;
      if (size == 1)
        continue;
      bool merge = rank > 0;
      for (int k = 0; k < N && merge; ++k)
        merge = strides[k][rank - 1] == arrayStrides[k][d] * size;
      if (merge) {
        dims[rank - 1] *= size;
        for (int k = 0; k < N; ++k)
          strides[k][rank - 1] = arrayStrides[k][d];
        continue;
      }
      dims[rank] = size;
      for (int k = 0; k < N; ++k)
        strides[k][rank] = arrayStrides[k][d];
      ++rank;
    }
  }
};

/// Calls `body(offsets, steps, length)` for runs of the innermost dimension
/// (split into blocks of at most kBlock elements): array k starts at
/// `offsets[k]` and moves by `steps[k]`. Blocks (or groups of short rows)
/// run in parallel when the loop is large.
template <int N, typename Body>
inline void forEachRun(const StridedLoop<N> &loop, Body body) {
  if (loop.empty)
    return;
  int rank = loop.rank;
  int64_t inner = rank ? loop.dims[rank - 1] : 1;
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d)
    rows *= loop.dims[d];
  int64_t steps[N];
  for (int k = 0; k < N; ++k)
    steps[k] = rank ? loop.strides[k][rank - 1] : 0;
  int64_t chunks = (inner + kBlock - 1) / kBlock;
  if (chunks > 1) {
    // Long rows: blocks of kBlock elements, each finding its offsets by
    // division.
    parallelFor(rows * inner, rows * chunks,
                [&](int64_t chunkBegin, int64_t chunkEnd) {
                  for (int64_t b = chunkBegin; b < chunkEnd; ++b) {
                    int64_t row = b / chunks, start = (b % chunks) * kBlock;
                    int64_t offsets[N] = {};
                    for (int d = rank - 2; d >= 0; --d) {
                      int64_t coord = row % loop.dims[d];
                      row /= loop.dims[d];
                      for (int k = 0; k < N; ++k)
                        offsets[k] += coord * loop.strides[k][d];
                    }
                    for (int k = 0; k < N; ++k)
                      offsets[k] += start * steps[k];
                    body(offsets, steps, std::min(kBlock, inner - start));
                  }
                });
    return;
  }
  // Short rows in groups (at most 256 of them, for the threads to share):
  // the first row of a group finds its offsets by division, the next ones
  // step an odometer, which matters when rows are a few elements long (a
  // head split's).
  int64_t groups = std::min<int64_t>(rows, 256);
  int64_t perGroup = (rows + groups - 1) / groups;
  groups = (rows + perGroup - 1) / perGroup;
  parallelFor(rows * inner, groups, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t group = chunkBegin; group < chunkEnd; ++group) {
      int64_t first = group * perGroup;
      int64_t last = std::min(rows, first + perGroup);
      int64_t coords[kMaxRank] = {}, offsets[N] = {};
      int64_t rest = first;
      for (int d = rank - 2; d >= 0; --d) {
        coords[d] = rest % loop.dims[d];
        rest /= loop.dims[d];
        for (int k = 0; k < N; ++k)
          offsets[k] += coords[d] * loop.strides[k][d];
      }
      for (int64_t row = first; row < last; ++row) {
        int64_t at[N];
        for (int k = 0; k < N; ++k)
          at[k] = offsets[k];
        body(at, steps, inner);
        for (int d = rank - 2; d >= 0; --d) { // the next row
          for (int k = 0; k < N; ++k)
            offsets[k] += loop.strides[k][d];
          if (++coords[d] < loop.dims[d])
            break;
          for (int k = 0; k < N; ++k)
            offsets[k] -= coords[d] * loop.strides[k][d];
          coords[d] = 0;
        }
      }
    }
  });
}

/// Strides of `operand` aligned to the broadcast `result` (0 along broadcast
/// and missing leading dimensions).
inline void alignedStrides(const Shape &operand, const Shape &result,
                           int64_t (&strides)[kMaxRank]) {
  broadcastStrides(operand, result, strides);
}

/// `y[i] = f(x[i])` for each element, with f of the storage types.
template <typename T, typename R, typename F>
inline void mapEach(const Shape &s, const T *x, R *y, F f) {
  int64_t n = s.numel();
  parallelFor(n, n, [&](int64_t chunkBegin, int64_t chunkEnd) {
    for (int64_t i = chunkBegin; i < chunkEnd; ++i) {
      y[i] = f(x[i]);
    }
  });
}

/// Applies `f` to broadcast pairs: `r[i] = f(a[ia], b[ib])` with `f` taking
/// two values of type T (already loaded by the caller's choice) and
/// returning R.
template <typename T, typename R, typename F>
inline void binaryMap(const Shape &sa, const Shape &sb, const Shape &sr,
                      const T *a, const T *b, R *r, F f) {
  int64_t strides[3][kMaxRank];
  detail::alignedStrides(sa, sr, strides[0]);
  detail::alignedStrides(sb, sr, strides[1]);
  stridesOf(sr, strides[2]);
  detail::StridedLoop<3> loop(sr, strides);
  detail::forEachRun(loop,
                     [&](const int64_t *off, const int64_t *step, int64_t len) {
                       const T *pa = a + off[0], *pb = b + off[1];
                       R *out = r + off[2];
                       if (step[0] && step[1]) {
                         for (int64_t j = 0; j < len; ++j)
                           out[j] = f(pa[j], pb[j]);
                       } else if (step[0]) {
                         T vb = pb[0];
                         for (int64_t j = 0; j < len; ++j)
                           out[j] = f(pa[j], vb);
                       } else if (step[1]) {
                         T va = pa[0];
                         for (int64_t j = 0; j < len; ++j)
                           out[j] = f(va, pb[j]);
                       } else {
                         R v = f(pa[0], pb[0]);
                         for (int64_t j = 0; j < len; ++j)
                           out[j] = v;
                       }
                     });
}

#endif // DTCK_DEVICE_LOOPS

} // namespace detail

//===----------------------------------------------------------------------===//
// Unary math: kernel(shape, x, y)
//===----------------------------------------------------------------------===//

/// Defines `scalar::name(x)`, y = EXPR of `v` (the compute type C) for one
/// element, and the kernel `name(s, x, y)` applying it to each element.
/// Fused kernels call the scalar functions, so they compute exactly what
/// the kernels compute.
#define DTCK_UNARY(name, EXPR)                                                 \
  namespace scalar {                                                           \
  template <typename T> DTCK_HD inline T name(T x) {                           \
    return detail::applyUnary(x, [](auto v) {                                  \
      using C = decltype(v);                                                   \
      (void)sizeof(C);                                                         \
      return static_cast<C>(EXPR);                                             \
    });                                                                        \
  }                                                                            \
  }                                                                            \
  template <typename T> inline void name(const Shape &s, const T *x, T *y) {   \
    detail::mapEach(s, x, y, [] DTCK_LAMBDA(T v) { return scalar::name(v); }); \
  }

DTCK_UNARY(neg, -v)
DTCK_UNARY(abs, std::fabs(v))
DTCK_UNARY(sign, v > C(0) ? C(1) : (v < C(0) ? C(-1) : C(0)))
DTCK_UNARY(exp, detail::expOf(v))
DTCK_UNARY(log, std::log(v))
DTCK_UNARY(sqrt, std::sqrt(v))
// In double: one rounding, as the interpreter (sqrt is cheap).
DTCK_UNARY(rsqrt, 1.0 / std::sqrt(static_cast<double>(v)))
DTCK_UNARY(reciprocal, C(1) / v)
DTCK_UNARY(floor, std::floor(v))
DTCK_UNARY(ceil, std::ceil(v))
DTCK_UNARY(round, std::nearbyint(v))
DTCK_UNARY(sin, std::sin(v))
DTCK_UNARY(cos, std::cos(v))
DTCK_UNARY(tan, std::tan(v))
DTCK_UNARY(asin, std::asin(v))
DTCK_UNARY(acos, std::acos(v))
DTCK_UNARY(atan, std::atan(v))
DTCK_UNARY(sinh, std::sinh(v))
DTCK_UNARY(cosh, std::cosh(v))
DTCK_UNARY(asinh, std::asinh(v))
DTCK_UNARY(acosh, std::acosh(v))
DTCK_UNARY(atanh, std::atanh(v))
DTCK_UNARY(tanh, detail::tanhOf(v))
DTCK_UNARY(erf, detail::erfOf(v))
// Stable on both sides: exp never overflows into 1/inf.
DTCK_UNARY(sigmoid, v >= C(0) ? C(1) / (C(1) + detail::expOf(-v))
                              : detail::expOf(v) / (C(1) + detail::expOf(v)))
DTCK_UNARY(relu, v > C(0) ? v : C(0))
DTCK_UNARY(softplus,
           v > C(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)))
DTCK_UNARY(softsign, v / (C(1) + std::fabs(v)))

#undef DTCK_UNARY

namespace scalar {
/// Negation of a boolean, bitwise of another integer.
template <typename T> DTCK_HD inline T logicalNot(T x) {
  if constexpr (std::is_same_v<T, bool>)
    return !x;
  else
    return static_cast<T>(~x);
}
} // namespace scalar

/// Negation of booleans, bitwise of other integers (`not` is a C++ keyword).
template <typename T> inline void logicalNot(const Shape &s, const T *x, T *y) {
  detail::mapEach(s, x, y,
                  [] DTCK_LAMBDA(T v) { return scalar::logicalNot(v); });
}

//===----------------------------------------------------------------------===//
// Activations with attributes: kernel(shape, x, attributes..., y)
//===----------------------------------------------------------------------===//

namespace scalar {

/// GELU, exact (erf) or tanh-approximated.
template <typename T> DTCK_HD inline T gelu(T x, bool approximate) {
  // 1 + erf(z) = erfc(-z) and (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u)) avoid
  // the cancellation of 1 + (almost -1) for negative x.
  if (approximate)
    return detail::applyUnary(x, [](auto v) {
      using C = decltype(v);
      C u = std::sqrt(C(2) / C(detail::kPi)) * (v + C(0.044715) * v * v * v);
      return v / (C(1) + detail::expOf(C(-2) * u));
    });
  return detail::applyUnary(x, [](auto v) {
    using C = decltype(v);
    return C(0.5) * v * detail::erfcOf(-v / std::sqrt(C(2)));
  });
}

/// x if x >= 0, else alpha * x.
template <typename T> DTCK_HD inline T leakyRelu(T x, double alpha) {
  return detail::applyUnary(x, [alpha](auto v) {
    using C = decltype(v);
    // The product in double rounds once, as the interpreter's.
    return v >= C(0) ? v : static_cast<C>(alpha * static_cast<double>(v));
  });
}

/// x if x > 0, else alpha * (exp(x) - 1) (expm1: exact near 0).
template <typename T> DTCK_HD inline T elu(T x, double alpha) {
  return detail::applyUnary(x, [alpha](auto v) {
    using C = decltype(v);
    return v > C(0) ? v : C(alpha) * std::expm1(v);
  });
}

/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
template <typename T> DTCK_HD inline T celu(T x, double alpha) {
  return detail::applyUnary(x, [alpha](auto v) {
    using C = decltype(v);
    C a = C(alpha);
    return std::max(C(0), v) + std::min(C(0), a * std::expm1(v / a));
  });
}

/// gamma * x if x > 0, else gamma * alpha * (exp(x) - 1).
template <typename T> DTCK_HD inline T selu(T x, double alpha, double gamma) {
  return detail::applyUnary(x, [alpha, gamma](auto v) {
    using C = decltype(v);
    return v > C(0) ? C(gamma) * v : C(gamma) * C(alpha) * std::expm1(v);
  });
}

/// max(0, min(1, alpha * x + beta)).
template <typename T>
DTCK_HD inline T hardSigmoid(T x, double alpha, double beta) {
  return detail::applyUnary(x, [alpha, beta](auto v) {
    using C = decltype(v);
    double z = alpha * static_cast<double>(v) + beta; // as the interpreter
    return static_cast<C>(std::max(0.0, std::min(1.0, z)));
  });
}

/// x if x > alpha, else 0 (compared in double, as the interpreter).
template <typename T> DTCK_HD inline T thresholdedRelu(T x, double alpha) {
  return detail::applyUnary(x, [alpha](auto v) {
    using C = decltype(v);
    return static_cast<double>(v) > alpha ? v : C(0);
  });
}

/// Clamps into [min, max] (a bound applies only when its flag is set); NaN
/// stays NaN. Computed in double and stored as the interpreter's
/// Tensor::set (integers truncate a fractional bound toward zero).
template <typename T>
DTCK_HD inline T clip(T x, bool hasMin, double min, bool hasMax, double max) {
  if constexpr (detail::kFloatHeld<T>) {
    // The result is x or a bound rounded once to T: the same selection
    // without the double rounding's branches (with constant bounds the
    // roundings fold), so that loops over it vectorize. Same bits.
    float f = static_cast<float>(x);
    double v = f;
    T result = T(f);
    if (hasMin && v < min) {
      result = detail::roundTo<T>(min);
      v = min;
    }
    if (hasMax && v > max)
      result = detail::roundTo<T>(max);
    return result;
  }
  double v = detail::toDouble(x);
  if (!std::isnan(v)) {
    if (hasMin)
      v = std::max(v, min);
    if (hasMax)
      v = std::min(v, max);
  }
  return detail::fromDouble<T>(v);
}

/// True where x is NaN.
template <typename T> DTCK_HD inline bool isNan(T x) {
  return std::isnan(detail::load(x));
}

/// True where x is an infinity of a selected sign.
template <typename T>
DTCK_HD inline bool isInf(T x, bool detectNegative, bool detectPositive) {
  auto v = detail::load(x);
  return std::isinf(v) &&
         ((v > 0 && detectPositive) || (v < 0 && detectNegative));
}

} // namespace scalar

template <typename T>
inline void gelu(const Shape &s, const T *x, bool approximate, T *y) {
  // (One loop per form: a loop that picks the form per element stays
  // scalar.)
  if (approximate)
    detail::mapEach(s, x, y,
                    [] DTCK_LAMBDA(T v) { return scalar::gelu(v, true); });
  else
    detail::mapEach(s, x, y,
                    [] DTCK_LAMBDA(T v) { return scalar::gelu(v, false); });
}
template <typename T>
inline void leakyRelu(const Shape &s, const T *x, double alpha, T *y) {
  detail::mapEach(s, x, y, [alpha] DTCK_LAMBDA(T v) {
    return scalar::leakyRelu(v, alpha);
  });
}
template <typename T>
inline void elu(const Shape &s, const T *x, double alpha, T *y) {
  detail::mapEach(s, x, y,
                  [alpha] DTCK_LAMBDA(T v) { return scalar::elu(v, alpha); });
}
template <typename T>
inline void celu(const Shape &s, const T *x, double alpha, T *y) {
  detail::mapEach(s, x, y,
                  [alpha] DTCK_LAMBDA(T v) { return scalar::celu(v, alpha); });
}
template <typename T>
inline void selu(const Shape &s, const T *x, double alpha, double gamma, T *y) {
  detail::mapEach(s, x, y, [alpha, gamma] DTCK_LAMBDA(T v) {
    return scalar::selu(v, alpha, gamma);
  });
}
template <typename T>
inline void hardSigmoid(const Shape &s, const T *x, double alpha, double beta,
                        T *y) {
  detail::mapEach(s, x, y, [alpha, beta] DTCK_LAMBDA(T v) {
    return scalar::hardSigmoid(v, alpha, beta);
  });
}
template <typename T>
inline void thresholdedRelu(const Shape &s, const T *x, double alpha, T *y) {
  detail::mapEach(s, x, y, [alpha] DTCK_LAMBDA(T v) {
    return scalar::thresholdedRelu(v, alpha);
  });
}
template <typename T>
inline void clip(const Shape &s, const T *x, bool hasMin, double min,
                 bool hasMax, double max, T *y) {
  detail::mapEach(s, x, y, [=] DTCK_LAMBDA(T v) {
    return scalar::clip(v, hasMin, min, hasMax, max);
  });
}
template <typename T> inline void isNan(const Shape &s, const T *x, bool *y) {
  detail::mapEach(s, x, y, [] DTCK_LAMBDA(T v) { return scalar::isNan(v); });
}
template <typename T>
inline void isInf(const Shape &s, const T *x, bool detectNegative,
                  bool detectPositive, bool *y) {
  detail::mapEach(s, x, y, [=] DTCK_LAMBDA(T v) {
    return scalar::isInf(v, detectNegative, detectPositive);
  });
}

//===----------------------------------------------------------------------===//
// Binary ops with broadcasting: kernel(sa, sb, sr, a, b, [attrs,] r)
//===----------------------------------------------------------------------===//

namespace detail {

DTCK_HD inline int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
}
DTCK_HD inline int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
}
DTCK_HD inline int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}
/// Integer division truncating toward zero; x / 0 is 0 (as the interpreter)
/// and INT64_MIN / -1 wraps.
DTCK_HD inline int64_t intDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrappingSub(0, a);
  return a / b;
}
/// Integer power with the interpreter's rules for negative exponents.
DTCK_HD inline int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : (base == -1 ? (exp % 2 ? -1 : 1) : 0);
  int64_t r = 1;
  for (int64_t k = 0; k < exp && k < 64; ++k)
    r = wrappingMul(r, base);
  return r;
}

} // namespace detail

/// Defines `scalar::name(p, q)` with a float expression FEXPR and an integer
/// expression IEXPR of `x` and `y` (compute-type values), and the kernel
/// applying it to broadcast pairs.
#define DTCK_BINARY(name, FEXPR, IEXPR)                                        \
  namespace scalar {                                                           \
  template <typename T> DTCK_HD inline T name(T p, T q) {                      \
    auto x = detail::load(p), y = detail::load(q);                             \
    using C = decltype(x);                                                     \
    if constexpr (isFloating<T>)                                               \
      return T(static_cast<C>(FEXPR));                                         \
    else                                                                       \
      return detail::wrapInt<T>(IEXPR);                                        \
  }                                                                            \
  }                                                                            \
  template <typename T>                                                        \
  inline void name(const Shape &sa, const Shape &sb, const Shape &sr,          \
                   const T *a, const T *b, T *r) {                             \
    detail::binaryMap(sa, sb, sr, a, b, r, [] DTCK_LAMBDA(T p, T q) {          \
      return scalar::name(p, q);                                               \
    });                                                                        \
  }

DTCK_BINARY(add, x + y, detail::wrappingAdd(x, y))
DTCK_BINARY(sub, x - y, detail::wrappingSub(x, y))
DTCK_BINARY(mul, x *y, detail::wrappingMul(x, y))
DTCK_BINARY(div, x / y, detail::intDiv(x, y))
DTCK_BINARY(pow, std::pow(x, y), detail::intPow(x, y))
// NaN-propagating, argument order as the interpreter's std::max/std::min.
DTCK_BINARY(max,
            std::isnan(x) || std::isnan(y) ? std::numeric_limits<C>::quiet_NaN()
                                           : std::max(x, y),
            std::max(x, y))
DTCK_BINARY(min,
            std::isnan(x) || std::isnan(y) ? std::numeric_limits<C>::quiet_NaN()
                                           : std::min(x, y),
            std::min(x, y))

#undef DTCK_BINARY

namespace scalar {

/// Remainder with the divisor's sign, or the dividend's with `fmod`; an
/// integer remainder by 0 is 0.
template <typename T> DTCK_HD inline T mod(T p, T q, bool fmod) {
  if constexpr (isFloating<T>) {
    auto x = detail::load(p), y = detail::load(q);
    using C = decltype(x);
    C m = std::fmod(x, y);
    if (!fmod && m != C(0) && ((m < C(0)) != (y < C(0))))
      m += y;
    return T(m);
  } else {
    int64_t x = detail::load(p), y = detail::load(q);
    if (y == 0)
      return detail::wrapInt<T>(0);
    int64_t m = y == -1 ? 0 : x % y;
    if (!fmod && m != 0 && ((m < 0) != (y < 0)))
      m += y;
    return detail::wrapInt<T>(m);
  }
}

/// And, or, exclusive or: of booleans logical, of other integers bitwise
/// (the same on 0 and 1; the names avoid C++'s alternative tokens `and`,
/// `or`, `xor`).
template <typename T> DTCK_HD inline T logicalAnd(T x, T y) {
  return static_cast<T>(x & y);
}
template <typename T> DTCK_HD inline T logicalOr(T x, T y) {
  return static_cast<T>(x | y);
}
template <typename T> DTCK_HD inline T logicalXor(T x, T y) {
  return static_cast<T>(x ^ y);
}

} // namespace scalar

template <typename T>
inline void mod(const Shape &sa, const Shape &sb, const Shape &sr, const T *a,
                const T *b, bool fmod, T *r) {
  detail::binaryMap(sa, sb, sr, a, b, r, [fmod] DTCK_LAMBDA(T p, T q) {
    return scalar::mod(p, q, fmod);
  });
}

template <typename T>
inline void logicalAnd(const Shape &sa, const Shape &sb, const Shape &sr,
                       const T *a, const T *b, T *r) {
  detail::binaryMap(sa, sb, sr, a, b, r, [] DTCK_LAMBDA(T p, T q) {
    return scalar::logicalAnd(p, q);
  });
}
template <typename T>
inline void logicalOr(const Shape &sa, const Shape &sb, const Shape &sr,
                      const T *a, const T *b, T *r) {
  detail::binaryMap(sa, sb, sr, a, b, r, [] DTCK_LAMBDA(T p, T q) {
    return scalar::logicalOr(p, q);
  });
}
template <typename T>
inline void logicalXor(const Shape &sa, const Shape &sb, const Shape &sr,
                       const T *a, const T *b, T *r) {
  detail::binaryMap(sa, sb, sr, a, b, r, [] DTCK_LAMBDA(T p, T q) {
    return scalar::logicalXor(p, q);
  });
}

/// Defines a comparison `scalar::name(p, q)` and its kernel with a boolean
/// result.
#define DTCK_COMPARE(name, OP)                                                 \
  namespace scalar {                                                           \
  template <typename T> DTCK_HD inline bool name(T p, T q) {                   \
    return detail::load(p) OP detail::load(q);                                 \
  }                                                                            \
  }                                                                            \
  template <typename T>                                                        \
  inline void name(const Shape &sa, const Shape &sb, const Shape &sr,          \
                   const T *a, const T *b, bool *r) {                          \
    detail::binaryMap(sa, sb, sr, a, b, r, [] DTCK_LAMBDA(T p, T q) -> bool {  \
      return scalar::name(p, q);                                               \
    });                                                                        \
  }

DTCK_COMPARE(equal, ==)
DTCK_COMPARE(less, <)
DTCK_COMPARE(lessEqual, <=)
DTCK_COMPARE(greater, >)
DTCK_COMPARE(greaterEqual, >=)

#undef DTCK_COMPARE

//===----------------------------------------------------------------------===//
// Where and cast
//===----------------------------------------------------------------------===//

namespace scalar {

/// condition ? onTrue : onFalse.
template <typename T> DTCK_HD inline T where(bool c, T t, T f) {
  // (A 16-bit float by its bits: a select of two objects keeps a loop
  // scalar.)
  if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
    T r;
    r.bits = c ? t.bits : f.bits;
    return r;
  } else {
    return c ? t : f;
  }
}

/// Converts one element to To as the interpreter: float to float rounds to
/// nearest even; float to integer truncates toward zero, saturates at the
/// int64 range and wraps (NaN is 0); to bool is `x != 0` (NaN is false);
/// integer to float rounds through double.
template <typename To, typename From> DTCK_HD inline To cast(From x) {
  if constexpr (std::is_same_v<From, To>)
    return x;
  else if constexpr (detail::kFloatHeld<From> && detail::kFloatHeld<To>)
    // Between float, bf16 and f16: one rounding of the float value (exact
    // in double too, so the same as through double), without the double
    // path's branches, so that loops over it vectorize.
    return To(static_cast<float>(x));
  else if constexpr (isFloating<From>)
    return detail::fromDouble<To>(detail::toDouble(x));
  else
    return detail::fromInt<To>(static_cast<int64_t>(x));
}

/// ONNX's saturating Cast to an 8-bit float: a value beyond the largest
/// finite one (infinities included) becomes it, of its sign.
template <typename To, typename From> DTCK_HD inline To castSaturating(From x) {
  double v = detail::toDouble(x);
  double max = To::largest();
  if (!std::isnan(v))
    v = v > max ? max : v < -max ? -max : v;
  return detail::roundTo<To>(v);
}

/// ONNX's Cast to a 4-bit integer held in To (int8_t, uint8_t): rounded to
/// nearest even and saturated to [lo, hi]; NaN is 0.
template <typename To, typename From>
DTCK_HD inline To castToInt4(From x, int lo, int hi) {
  double v = detail::toDouble(x);
  if (std::isnan(v))
    return To(0);
  v = v > hi ? hi : v < lo ? lo : v;
  return To(std::nearbyint(v));
}

} // namespace scalar

/// r = condition ? onTrue : onFalse, after broadcasting all three.
template <typename T>
inline void where(const Shape &sc, const Shape &st, const Shape &sf,
                  const Shape &sr, const bool *c, const T *t, const T *f,
                  T *r) {
#ifdef DTCK_DEVICE_LOOPS
  detail::ternaryMap(sc, st, sf, sr, c, t, f, r);
#else
  int64_t strides[4][kMaxRank];
  detail::alignedStrides(sc, sr, strides[0]);
  detail::alignedStrides(st, sr, strides[1]);
  detail::alignedStrides(sf, sr, strides[2]);
  stridesOf(sr, strides[3]);
  detail::StridedLoop<4> loop(sr, strides);
  detail::forEachRun(loop, [&](const int64_t *off, const int64_t *step,
                               int64_t len) {
    const bool *pc = c + off[0];
    const T *pt = t + off[1], *pf = f + off[2];
    T *out = r + off[3];
    for (int64_t j = 0; j < len; ++j)
      out[j] = scalar::where(pc[j * step[0]], pt[j * step[1]], pf[j * step[2]]);
  });
#endif
}

/// Converts each element to To (scalar::cast).
template <typename From, typename To>
inline void cast(const Shape &s, const From *x, To *y) {
  detail::mapEach(s, x, y,
                  [] DTCK_LAMBDA(From v) { return scalar::cast<To>(v); });
}

/// Converts each element to the 8-bit float To, saturating
/// (scalar::castSaturating).
template <typename From, typename To>
inline void castSaturating(const Shape &s, const From *x, To *y) {
  detail::mapEach(s, x, y, [] DTCK_LAMBDA(From v) {
    return scalar::castSaturating<To>(v);
  });
}

/// Converts each element to a 4-bit integer of range [lo, hi] held in To
/// (scalar::castToInt4).
template <typename From, typename To>
inline void castToInt4(const Shape &s, const From *x, int lo, int hi, To *y) {
  detail::mapEach(s, x, y, [lo, hi] DTCK_LAMBDA(From v) {
    return scalar::castToInt4<To>(v, lo, hi);
  });
}

/// A function of one 16-bit float (`In`: bf16 or f16) tabulated at each of
/// its 65536 bit patterns. The CPU target reads a chain of fused ops that
/// depends on one 16-bit value and holds a costly op (erf, exp, tanh...)
/// from such a table, built once (a static in the kernel): the bits of
/// computing the chain, for a gather instead of dozens of operations an
/// element (the exact GELU's gradient on bf16: 2.6 -> 0.8 ms a million
/// elements). `T` is float, bf16 or f16.
template <typename T, typename In> class Table16 {
public:
  template <typename F> explicit Table16(F f) {
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      In x;
      x.bits = uint16_t(bits);
      if constexpr (sizeof(T) == 2)
        values[bits] = f(x).bits;
      else
        values[bits] = f(x);
    }
  }
  T operator()(In x) const {
    if constexpr (sizeof(T) == 2) {
      T r;
      r.bits = uint16_t(values[x.bits]);
      return r;
    } else {
      return values[x.bits];
    }
  }

private:
  // 16-bit results in 32-bit entries: GCC vectorizes gathers of 32-bit
  // elements, not of 16-bit ones.
  std::conditional_t<sizeof(T) == 2, uint32_t, T> values[65536];
};

} // namespace dtck

#endif // DTCRT_KERNELS_ELEMENTWISE_H
