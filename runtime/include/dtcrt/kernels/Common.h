//===- Common.h - shapes, element types and helpers of the CPU kernels ---===//
//
// The header-only kernel library that generated CPU code calls (namespace
// dtck). Every kernel computes what the reference interpreter computes for
// the same dtg op (dialects/DTG/Interp), on static shapes.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_COMMON_H
#define DTCRT_KERNELS_COMMON_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

/// Functions device code calls too (the CUDA target's kernels and fused
/// kernels share the scalar semantics of the CPU target): __host__
/// __device__ under nvcc, nothing for the host compiler. DTCK_LAMBDA marks a
/// lambda a host function hands to a device loop (nvcc --extended-lambda).
#ifdef __CUDACC__
#define DTCK_HD __host__ __device__
#define DTCK_LAMBDA __host__ __device__
#else
#define DTCK_HD
#define DTCK_LAMBDA
#endif

namespace dtck {

/// Most dimensions a tensor may have.
constexpr int kMaxRank = 8;

/// A static shape; generated code declares one `static constexpr` per shape.
struct Shape {
  int rank;
  int64_t dims[kMaxRank];
  DTCK_HD constexpr int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= dims[d];
    return n;
  }
};

/// Row-major strides of `s` into `strides`.
DTCK_HD inline void stridesOf(const Shape &s, int64_t *strides) {
  int64_t stride = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= s.dims[d];
  }
}

/// Strides of `operand` as seen from the broadcast `result` shape (NumPy
/// rules): 0 along broadcast dimensions, aligned to the trailing axes.
DTCK_HD inline void broadcastStrides(const Shape &operand, const Shape &result,
                                     int64_t *strides) {
  int64_t own[kMaxRank];
  stridesOf(operand, own);
  int lead = result.rank - operand.rank;
  for (int d = 0; d < result.rank; ++d) {
    int o = d - lead;
    strides[d] = (o < 0 || operand.dims[o] == 1) ? 0 : own[o];
  }
}

/// True if `a` and `b` are the same shape.
DTCK_HD inline bool sameShape(const Shape &a, const Shape &b) {
  if (a.rank != b.rank)
    return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.dims[d] != b.dims[d])
      return false;
  return true;
}

/// Reports a run-time error of a kernel (the runtime installs a handler that
/// names the op being run) and ends the process with a non-zero exit.
using FailHandler = void (*)(const char *message);
inline FailHandler &failHandler() {
  static FailHandler handler = nullptr;
  return handler;
}
[[noreturn]] inline void fail(const char *message) {
  if (FailHandler h = failHandler())
    h(message);
  std::fprintf(stderr, "error: %s\n", message);
  std::exit(1);
}

//===----------------------------------------------------------------------===//
// 16-bit floats: stored in 16 bits, computed in float.
//===----------------------------------------------------------------------===//

DTCK_HD inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
DTCK_HD inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A bool read through its byte: GCC vectorizes a loop that loads bools
/// beside wider elements this way, and not by plain loads.
DTCK_HD inline bool loadBool(const bool *p) {
  return *reinterpret_cast<const uint8_t *>(p) != 0;
}

/// The bfloat16 bits (in the low half) of float bits `u`: rounded to
/// nearest even, a NaN kept quiet. Both computed, one selected: no branch,
/// so that loops of conversions vectorize; `U` is uint32_t, or a vector of
/// them (GCC's vector extension) converting a vector of floats, passed by
/// reference (a 64-byte vector by value is passed differently with and
/// without AVX-512).
template <typename U> DTCK_HD inline void bf16BitsOf(const U &u, U &bits) {
  U rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
  U quietNaN = (u >> 16) | 0x40;
  bits = (u & 0x7fffffff) > 0x7f800000 ? quietNaN : rounded;
}

/// bfloat16: the upper half of a float, rounded to nearest even.
struct bf16 {
  uint16_t bits;
  bf16() = default;
  DTCK_HD bf16(float f) {
    uint32_t rounded;
    bf16BitsOf(floatBits(f), rounded);
    bits = uint16_t(rounded);
  }
  DTCK_HD operator float() const { return bitsFloat(uint32_t(bits) << 16); }
};

/// IEEE half precision, rounded to nearest even.
struct f16 {
  uint16_t bits;
  f16() = default;
  DTCK_HD f16(float f) {
    uint32_t u = floatBits(f);
    uint32_t sign = (u >> 16) & 0x8000;
    uint32_t abs = u & 0x7fffffff;
    if (abs > 0x7f800000) {
      bits = uint16_t(sign | 0x7e00);
    } else if (abs >= 0x477ff000) { // rounds to >= 65520: infinity
      bits = uint16_t(sign | 0x7c00);
    } else if (abs < 0x38800000) {                 // subnormal or zero in half
      float scaled = bitsFloat(abs) * 16777216.0f; // 2^24
      // Round half to even in the subnormal range.
      float r = std::nearbyint(scaled);
      bits = uint16_t(sign | uint32_t(r));
    } else {
      uint32_t mant = abs & 0x7fffff;
      uint32_t exp = (abs >> 23) - 112;
      uint32_t h = (exp << 10) | (mant >> 13);
      uint32_t rest = mant & 0x1fff;
      if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        ++h;
      bits = uint16_t(sign | h);
    }
  }
  DTCK_HD operator float() const {
    uint32_t sign = uint32_t(bits & 0x8000) << 16;
    uint32_t exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
    if (exp == 0)
      return (sign ? -1.0f : 1.0f) * float(mant) / 16777216.0f;
    if (exp == 31)
      return bitsFloat(sign | 0x7f800000 | (mant << 13));
    return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

//===----------------------------------------------------------------------===//
// 8-bit floats (ONNX's FLOAT8 types): stored in 8 bits, computed in float.
//===----------------------------------------------------------------------===//

/// How an 8-bit float spells what lies outside the finite numbers.
enum class F8Kind {
  Ieee, // E5M2: infinities and NaNs at the top exponent, as IEEE 754
  Fn,   // E4M3FN: no infinities, NaN at all ones (sign either way)
  Fnuz, // E4M3FNUZ, E5M2FNUZ: no infinities, no -0, NaN is 0x80
};

/// An 8-bit float with kMant mantissa bits and exponent bias kBias, rounded
/// to nearest even from float; a value beyond the largest finite one
/// becomes infinity or NaN as the kind has them (the saturating conversion
/// of ONNX's Cast is scalar::castSaturating).
template <int kMant, int kBias, F8Kind kKind> struct f8 {
  uint8_t bits;
  /// Exponent of the smallest normal number.
  static constexpr int kMinExp = 1 - kBias;
  f8() = default;
  DTCK_HD f8(float f) {
    uint32_t u = floatBits(f);
    uint8_t sign = uint8_t((u >> 24) & 0x80);
    uint32_t abs = u & 0x7fffffff;
    if (abs > 0x7f800000) {
      bits = nanBits(sign);
      return;
    }
    // Round to a multiple of the 8-bit float's spacing at this magnitude
    // (exact scalings by powers of two; nearbyint rounds half to even).
    int exp = int(abs >> 23) - 127;
    exp = exp < kMinExp ? kMinExp : exp;
    float spacing = bitsFloat(uint32_t(exp - kMant + 127) << 23);
    float r = std::nearbyint(bitsFloat(abs) / spacing) * spacing;
    if (r > largest()) {
      bits = kKind == F8Kind::Ieee ? uint8_t(sign | 0x7c) : nanBits(sign);
      return;
    }
    if (r == 0.0f) {
      bits = kKind == F8Kind::Fnuz ? 0 : sign;
      return;
    }
    uint32_t ur = floatBits(r);
    int rexp = int(ur >> 23) - 127;
    if (rexp < kMinExp) // subnormal: a multiple of the smallest spacing
      bits = uint8_t(sign | uint32_t(r / spacing));
    else
      bits = uint8_t(sign | uint32_t(rexp + kBias) << kMant |
                     ((ur >> (23 - kMant)) & ((1u << kMant) - 1)));
  }
  DTCK_HD operator float() const {
    float sign = bits & 0x80 ? -1.0f : 1.0f;
    uint32_t exp = (bits & 0x7f) >> kMant, mant = bits & ((1u << kMant) - 1);
    if (kKind == F8Kind::Fnuz ? bits == 0x80
        : kKind == F8Kind::Fn ? (bits & 0x7f) == 0x7f
                              : exp == (0x7fu >> kMant) && mant != 0)
      return bitsFloat(0x7fc00000);
    if (kKind == F8Kind::Ieee && exp == (0x7fu >> kMant))
      return sign * bitsFloat(0x7f800000);
    if (exp == 0)
      return sign * float(mant) *
             bitsFloat(uint32_t(kMinExp - kMant + 127) << 23);
    return bitsFloat((bits & 0x80u) << 24 |
                     uint32_t(int(exp) - kBias + 127) << 23 |
                     mant << (23 - kMant));
  }
  /// The largest finite value.
  static DTCK_HD float largest() {
    int topExp = (0x7f >> kMant) - (kKind == F8Kind::Ieee ? 1 : 0);
    uint32_t topMant =
        (1u << kMant) - (kKind == F8Kind::Fn ? 2 : 1); // Fn: all ones is NaN
    return bitsFloat(uint32_t(topExp - kBias + 127) << 23 |
                     topMant << (23 - kMant));
  }

private:
  static DTCK_HD uint8_t nanBits(uint8_t sign) {
    return kKind == F8Kind::Fnuz ? 0x80
           : kKind == F8Kind::Fn ? uint8_t(sign | 0x7f)
                                 : uint8_t(sign | 0x7e);
  }
};
using f8e4m3fn = f8<3, 7, F8Kind::Fn>;
using f8e4m3fnuz = f8<3, 8, F8Kind::Fnuz>;
using f8e5m2 = f8<2, 15, F8Kind::Ieee>;
using f8e5m2fnuz = f8<2, 16, F8Kind::Fnuz>;

template <typename T> constexpr bool isFloat8 = false;
template <int M, int B, F8Kind K> constexpr bool isFloat8<f8<M, B, K>> = true;

/// The type arithmetic on T is done in: float for 8- and 16-bit floats, T
/// itself for float and double, int64_t for integers, bool for bool.
template <typename T> struct ComputeType {
  using type =
      std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                         int64_t, T>;
};
template <> struct ComputeType<bf16> { using type = float; };
template <> struct ComputeType<f16> { using type = float; };
template <int M, int B, F8Kind K> struct ComputeType<f8<M, B, K>> {
  using type = float;
};
template <typename T> using compute_t = typename ComputeType<T>::type;

template <typename T>
constexpr bool isFloating =
    std::is_floating_point_v<T> || std::is_same_v<T, bf16> ||
    std::is_same_v<T, f16> || isFloat8<T>;

/// Converts a computed value back to storage type T: floats round; integers
/// wrap (two's complement) as the interpreter's wrapToIntegerType does;
/// bool is value != 0.
template <typename T, typename C> DTCK_HD inline T store(C value) {
  if constexpr (std::is_same_v<T, bool>)
    return value != C(0);
  else if constexpr (isFloating<T>)
    return T(static_cast<compute_t<T>>(value));
  else
    return static_cast<T>(static_cast<int64_t>(value));
}

/// Elements above which a loop runs across OpenMP threads.
constexpr int64_t kParallelThreshold = 1 << 14;

namespace detail {
/// Calls `range(begin, end)`. Not inlined: a loop body that parallelFor
/// reaches from two places is compiled once.
template <typename Range>
__attribute__((noinline)) void callRange(const Range &range, int64_t begin,
                                         int64_t end) {
  range(begin, end);
}
} // namespace detail

/// Runs `range(begin, end)` over pieces of [0, count): across OpenMP's
/// threads, split as `omp for schedule(static)` splits a loop, when `work`
/// (the loop's elements) reaches kParallelThreshold; else on this thread in
/// one piece, with no parallel region: an `omp parallel for if (false)`
/// still makes a team of one, about 0.35 us a call, a third of a small
/// MLP's step (test/bench/README.md). `range` is compiled once, called from
/// both paths.
template <typename Range>
inline void parallelFor(int64_t work, int64_t count, const Range &range) {
#ifdef _OPENMP
  if (work >= kParallelThreshold && count > 1) {
#pragma omp parallel
    {
      int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t size = count / threads, extra = count % threads;
      int64_t begin = t * size + std::min(t, extra);
      int64_t end = begin + size + (t < extra ? 1 : 0);
      if (begin < end)
        detail::callRange(range, begin, end);
    }
    return;
  }
#endif
  detail::callRange(range, int64_t(0), count);
}

#ifndef __CUDACC__
/// Eight columns of eight float rows: `column[c]` holds element j0 + c of
/// rows[0..7], the 8 x 8 block transposed in registers (three rounds of
/// shuffles, as in a textbook AVX transpose). Where eight rows are reduced
/// together each in its own order, their elements at one place are then
/// one vector instead of eight loads from eight rows.
typedef float Floats8 __attribute__((vector_size(32)));
inline void columnsOf8Rows(const float *const *rows, int64_t j0,
                           Floats8 *column) {
  typedef float Unaligned8
      __attribute__((vector_size(32), aligned(4), may_alias));
  Floats8 r[8], t[8], u[8];
  for (int k = 0; k < 8; ++k)
    r[k] = *reinterpret_cast<const Unaligned8 *>(rows[k] + j0);
  // Pairs of rows interleaved: t[k] columns 0 1 4 5, t[k + 1] 2 3 6 7.
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[k + 1] =
        __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  // Four rows: u[k + c] columns c and c + 4 of rows k..k+3.
  for (int k = 0; k < 8; k += 4) {
    u[k] = __builtin_shufflevector(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 1] =
        __builtin_shufflevector(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[k + 2] =
        __builtin_shufflevector(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[k + 3] =
        __builtin_shufflevector(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int c = 0; c < 4; ++c) {
    column[c] =
        __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    column[c + 4] =
        __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}
#endif

/// Calls visit(at) for the places j = 0, 1, ..., count - 1 in order, at(k)
/// = rows[k][j] for k < W: W results reduced together, each in its own
/// order. Float rows go 8 places at a time through columnsOf8Rows where W
/// is a multiple of 8; the rest one place at a time.
template <int64_t W, typename T, typename Visit>
inline void forPlacesOfRows(const T *const *rows, int64_t count, Visit visit) {
  int64_t j = 0;
#ifndef __CUDACC__
  if constexpr (std::is_same_v<T, float> && W % 8 == 0) {
    for (; j + 8 <= count; j += 8) {
      Floats8 at[8][W / 8];
      for (int64_t b = 0; b < W / 8; ++b) {
        Floats8 column[8];
        columnsOf8Rows(rows + 8 * b, j, column);
        for (int c = 0; c < 8; ++c)
          at[c][b] = column[c];
      }
      for (int c = 0; c < 8; ++c) {
        const float *values = reinterpret_cast<const float *>(at[c]);
        visit([values](int64_t k) { return values[k]; });
      }
    }
  }
#endif
  for (; j < count; ++j)
    visit([rows, j](int64_t k) { return rows[k][j]; });
}

} // namespace dtck

#endif // DTCRT_KERNELS_COMMON_H
