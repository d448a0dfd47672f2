//===- MathFloat.h - exp, tanh, erf, erfc of floats that vectorize --------===//
//
// libm's expf, tanhf, erff and erfcf are calls, so a loop over them stays
// scalar: the exact GELU (erfc) and its gradient (erf, exp) cost more than
// the matrix products around them on small models. These are branch-free
// inline functions of double arithmetic, bit operations and selects, which
// GCC and Clang vectorize in the fused kernels' loops. Each is evaluated in
// double and rounded once to float: within one float ulp of the exact value
// (test/unit/kernels/elementwise.cpp holds them against libm's double
// functions over the float range).
//
// exp: 2^n exp(r), n = round(x / ln 2), |r| <= ln(2) / 2, a degree-11
// Taylor polynomial (relative error below 1e-14); tanh from it. erf and
// erfc of a = |x|: below 1, a P(a^2) with P a degree-7 least-squares fit of
// erf(a) / a on [0, 1] (relative error 4e-11); from 1 to 10,
// exp(-a^2 + L(u)) with L a degree-11 fit of log(erfc(a)) + a^2 in u, the
// image of 1 / (1 + 0.15 a) on [-1, 1] (relative error 5e-10; a^2 is exact
// in double); beyond 10, erfc underflows float. The fits were made for this
// file by least squares on Chebyshev nodes against Python's math.erf and
// math.erfc.
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

/// exp(x), rounded once to float.
inline float expFloat(float x) {
  double v = x;
  // Beyond these exp overflows or underflows float: clamped, it still
  // does, without leaving expReduced's range (NaN compares false).
  double low = v < -120.0 ? -120.0 : v;
  double clamped = low > 100.0 ? 100.0 : low;
  return static_cast<float>(expReduced(clamped));
}

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

/// erf(a) / a for a^2 = s in [0, 1].
inline double erfOverA(double s) {
  double p = -9.673590365932483e-06;
  p = p * s + 0.00011268253747194155;
  p = p * s - 0.0008484396531668614;
  p = p * s + 0.0052210534113331436;
  p = p * s - 0.026865438310121996;
  p = p * s + 0.11283782622056067;
  p = p * s - 0.37612638475990878;
  p = p * s + 1.1283791670623606;
  return p;
}

/// erfc(a) for a in [1, 10] (NaN stays NaN).
inline double erfcLarge(double a) {
  double u =
      (1.0 / (1.0 + 0.15 * a) - 0.63478260869565228) / 0.23478260869565221;
  double l = 4.4016053064188069e-06;
  l = l * u - 9.1296640112271895e-06;
  l = l * u - 1.9115431089827087e-05;
  l = l * u - 0.00013505193737142873;
  l = l * u - 9.5630234957165907e-06;
  l = l * u - 0.00030085604246779226;
  l = l * u + 0.0035232151023159891;
  l = l * u + 0.0060908077087533418;
  l = l * u + 0.058310051413832026;
  l = l * u + 0.077793934706218648;
  l = l * u + 0.95333276757102947;
  l = l * u - 1.9481869723898702;
  return expReduced(l - a * a);
}

/// erfc(|x|) (`erfcOf`) and erf(|x|) (`erfOf`) of a float, in double:
/// both branches computed, one selected (every operand computed before the
/// select, so that no floating-point operation is conditional and loops
/// over them vectorize).
struct ErfParts {
  double small; // erf(a) for a < 1
  double large; // erfc(a) for 1 <= a <= 10
  double a;
};
inline ErfParts erfParts(float x) {
  double a = std::fabs(double(x));
  double s = a * a;
  double clamped = a > 10.0 ? 10.0 : a; // NaN stays NaN
  clamped = clamped < 1.0 ? 1.0 : clamped;
  return {a * erfOverA(s < 1.0 ? s : 1.0), erfcLarge(clamped), a};
}

inline float erfcFloat(float x) {
  ErfParts p = erfParts(x);
  double smallC = 1.0 - p.small, largeC = p.a > 10.0 ? 0.0 : p.large;
  double positive = p.a < 1.0 ? smallC : largeC;
  double negative = 2.0 - positive;
  return static_cast<float>(x < 0 ? negative : positive);
}

inline float erfFloat(float x) {
  ErfParts p = erfParts(x);
  double largeE = 1.0 - p.large;
  double positive = p.a < 1.0 ? p.small : largeE;
  double negative = -positive;
  return static_cast<float>(x < 0 ? negative : positive);
}

} // namespace dtck::math

#endif // DTCRT_KERNELS_MATHFLOAT_H
