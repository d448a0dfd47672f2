//===- MathFloat.h - exp, tanh, erf, erfc of floats that vectorize --------===//
//
// libm's expf, tanhf, erff and erfcf are calls, so a loop over them stays
// scalar: the exact GELU (erfc) and its gradient (erf, exp) cost more than
// the matrix products around them on small models. These are branch-free
// inline functions of arithmetic, bit operations and selects, which GCC and
// Clang vectorize in the fused kernels' loops; no fused multiply-adds, so
// that results do not depend on -march. test/unit/kernels/elementwise.cpp
// holds them against libm's double functions over the float range.
//
// exp, erf and erfc are evaluated in float (sixteen lanes to a 512-bit
// register where double has eight): exp(x) = 2^n exp(r), n = round(x /
// ln 2), r by Cody and Waite's two-constant reduction (exact products),
// exp(r) = 1 + r + r^2 Q(r) with Q of degree 4; the power of two is applied
// last, in two factors, so a subnormal result is rounded once. Within one
// ulp. erf and erfc of a = |x|: below 1, erf(a) = a + a P(a^2) with P a
// degree-6 fit of erf(a) / a - 1 (the constant 2 / sqrt(pi) would lose half
// an ulp as a float; as 2 / sqrt(pi) - 1 it does not); from 1 to 10.1,
// erfc(a) = exp(-a^2) g(1/a) / a with g(v) = a erfc(a) exp(a^2), flat
// between 0.43 and 0.56, a degree-6 polynomial of v on each of a < 2 and
// a >= 2, and a^2 = hi + lo split exactly (Dekker's product): exp(-hi)
// times g (1 - lo) / a. erf within one ulp, erfc within four (the rounding
// of v and of the polynomial's steps at large a); beyond 10.1, erfc
// underflows float. tanh = 1 - 2 / (exp(2|x|) + 1) in double (its
// cancellation for small |x| would cost float its precision), within one
// ulp. The fits were made for this file by least squares on Chebyshev
// nodes against Python's math.erf, math.erfc and math.expm1, the
// coefficients fixed to floats one at a time from the constant term up,
// each step refitting the rest.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_KERNELS_MATHFLOAT_H
#define DTCRT_KERNELS_MATHFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dtck::math {

/// exp(x) for x in [-700, 700] (NaN stays NaN).
inline double expReduced(double x) {
  // Adding 1.5 * 2^52 rounds x / ln 2 to an integer held in the low bits.
  constexpr double kShift = 6755399441055744.0;
  double k = x * 1.4426950408889634 + kShift;
  double n = k - kShift;
  double r = (x - n * 0.69314718036912382) - n * 1.9082149292705877e-10;
  double p = 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t kBits, shiftBits;
  std::memcpy(&kBits, &k, sizeof(k));
  std::memcpy(&shiftBits, &kShift, sizeof(kShift));
  int64_t scaleBits = (kBits - shiftBits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scaleBits, sizeof(scale));
  return p * scale;
}

/// m * exp(x) in float, for m in [0.03, 2]: 2^n is applied after the
/// product with m, so that a subnormal result is rounded once.
inline float expTimes(float x, float m) {
  // Beyond these exp overflows or underflows float: clamped, it still
  // does, with n in range (NaN compares false and stays NaN).
  float low = x < -150.0f ? -150.0f : x;
  float c = low > 89.0f ? 89.0f : low;
  // Adding 1.5 * 2^23 rounds x / ln 2 to an integer held in the low bits.
  constexpr float kShift = 12582912.0f;
  float k = c * 1.44269504f + kShift;
  float n = k - kShift;
  // ln 2 = 0.693359375 - 2.12194440e-4, the first of 9 significant bits:
  // n times it is exact.
  float r = (c - n * 0.693359375f) + n * 2.12194440e-4f;
  float q = 0.0013745303731411695f;
  q = q * r + 0.008368944749236107f;
  q = q * r + 0.04166964814066887f;
  q = q * r + 0.166665181517601f;
  q = q * r + 0.49999988079071045f;
  float p = 1.0f + (r + (r * r) * q);
  int32_t kBits, shiftBits;
  std::memcpy(&kBits, &k, sizeof(k));
  std::memcpy(&shiftBits, &kShift, sizeof(kShift));
  int32_t e = kBits - shiftBits, half = e >> 1;
  int32_t bits1 = (half + 127) << 23, bits2 = (e - half + 127) << 23;
  float scale1, scale2;
  std::memcpy(&scale1, &bits1, sizeof(scale1));
  std::memcpy(&scale2, &bits2, sizeof(scale2));
  return ((p * m) * scale1) * scale2;
}

/// exp(x) of a float.
inline float expFloat(float x) { return expTimes(x, 1.0f); }

/// tanh(x), rounded once to float: 1 - 2 / (exp(2|x|) + 1) in double
/// (whose cancellation for small |x| leaves float's precision intact down
/// to |x| = 2^-14, below which tanh(x) is x in float), the sign restored.
inline float tanhFloat(float x) {
  double a = std::fabs(double(x));
  double clamped = a > 20.0 ? 20.0 : a; // tanh(20) is 1 in float
  double large = 1.0 - 2.0 / (expReduced(2.0 * clamped) + 1.0);
  double positive = a < 0x1p-14 ? a : large;
  double negative = -positive;
  return static_cast<float>(x < 0 ? negative : positive);
}

/// erf(a) / a - 1 for a^2 = s in [0, 1].
inline float erfOverAMinusOne(float s) {
  float p = 7.842288323445246e-05f;
  p = p * s - 0.0008006793214008212f;
  p = p * s + 0.005187962669879198f;
  p = p * s - 0.026853643357753754f;
  p = p * s + 0.1128358244895935f;
  p = p * s - 0.3761262595653534f;
  p = p * s + 0.12837916612625122f;
  return p;
}

/// erfc(a) exp(a^2) for a in [1, 10.1].
inline float erfcScaled(float a) {
  // g(v) = a erfc(a) exp(a^2), v = 1 / a mapped onto [-1, 1] on each
  // piece, its coefficients selected per lane.
  float v = 1.0f / a;
  bool near = a < 2.0f;
  float t =
      near ? v * 4.0f - 3.0f : v * 4.987654209136963f - 1.4938271045684814f;
  float g = near ? -3.97370376958861e-06f : 2.1074376491014846e-05f;
  g = g * t + (near ? 3.6719324270961806e-05f : -5.6691445934120566e-05f);
  g = g * t + (near ? -0.00019749526109080762f : -0.00013040272460784763f);
  g = g * t + (near ? 0.0006296488572843373f : 0.0016806205967441201f);
  g = g * t + (near ? 0.0012093492550775409f : -0.005462847650051117f);
  g = g * t + (near ? -0.04227025434374809f : -0.026960177347064018f);
  g = g * t + (near ? 0.4681795835494995f : 0.5416998267173767f);
  return g / a;
}

/// erf(a) - a for a = |x| < 1 (`small`) and erfc(a) for 1 <= a
/// (`large`; 0 in float beyond 10.1): both computed, one selected (every
/// operand computed before the select, so that no floating-point operation
/// is conditional and loops over them vectorize).
struct ErfParts {
  float a;
  float small;
  float large;
};
inline ErfParts erfParts(float x) {
  float a = std::fabs(x);
  float s = a * a;
  float small = a * erfOverAMinusOne(s < 1.0f ? s : 1.0f);
  float clamped = a > 10.1f ? 10.1f : a; // NaN stays NaN
  clamped = clamped < 1.0f ? 1.0f : clamped;
  // clamped^2 = hi + lo exactly (Dekker: 4097 = 2^12 + 1 splits a float
  // into two halves whose products are exact).
  float big = clamped * 4097.0f;
  float head = big - (big - clamped), tail = clamped - head;
  float hi = clamped * clamped;
  float lo = ((head * head - hi) + 2.0f * head * tail) + tail * tail;
  // exp(-hi - lo) = exp(-hi) (1 - lo): |lo| < 4e-6.
  float scaled = erfcScaled(clamped);
  float large = expTimes(-hi, scaled - scaled * lo);
  return {a, small, large};
}

inline float erfcFloat(float x) {
  ErfParts p = erfParts(x);
  float smallC = (1.0f - p.a) - p.small;
  float positive = p.a < 1.0f ? smallC : p.large;
  float negative = 2.0f - positive;
  return x < 0 ? negative : positive;
}

inline float erfFloat(float x) {
  ErfParts p = erfParts(x);
  float smallE = p.a + p.small, largeE = 1.0f - p.large;
  float positive = p.a < 1.0f ? smallE : largeE;
  float negative = -positive;
  return x < 0 ? negative : positive;
}

} // namespace dtck::math

#endif // DTCRT_KERNELS_MATHFLOAT_H
