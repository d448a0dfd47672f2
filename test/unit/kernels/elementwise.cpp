//===- elementwise.cpp - tests of dtcrt/kernels/Elementwise.h -------------===//
//
// Expected values follow the reference interpreter's rules
// (dialects/DTG/Interp/KernelsElementwise.cpp, Tensor::set); transcendental
// values were computed with NumPy in double precision.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/kernels/Elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using dtck::bf16;
using dtck::f16;
using dtck::Shape;

namespace {

Shape shape1(int64_t n) { return Shape{1, {n}}; }

/// Bits of a float, to compare signed zeros and NaN payloads exactly.
uint32_t bits(float f) { return dtck::floatBits(f); }

TEST(ElementwiseTest, UnaryMathMatchesDoublePrecision) {
  std::vector<float> x = {-2.5f, -0.75f, 0.0f, 0.3f, 1.25f, 4.0f};
  std::vector<float> y(x.size());
  dtck::exp(shape1(6), x.data(), y.data());
  // numpy.exp of the float inputs, in double.
  const double expected[] = {
      0.0820849986238988, 0.4723665527410147, 1.0,
      1.3498588075760032, 3.4903429574618414, 54.598150033144236};
  for (int i = 0; i < 6; ++i)
    EXPECT_NEAR(y[i], expected[i], 2e-7 * expected[i]) << i;
  dtck::tanh(shape1(6), x.data(), y.data());
  EXPECT_NEAR(y[0], -0.9866142981514303, 2e-7);
  EXPECT_NEAR(y[3], 0.2913126124515909, 2e-7);
}

/// Distance in floats between `got` and the float nearest `want` (0 when
/// both are NaN); signed floats ordered as integers.
int64_t ulpsFrom(float got, double want) {
  float w = static_cast<float>(want);
  if (std::isnan(got) || std::isnan(w))
    return std::isnan(got) && std::isnan(w) ? 0 : INT64_MAX;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof(i));
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::llabs(ordered(got) - ordered(w));
}

/// Every `stride`-th float from `lo` to `hi` by bits, and the specials.
std::vector<float> sampledFloats(float lo, float hi, uint32_t stride) {
  std::vector<float> xs = {0.0f,  -0.0f,  INFINITY, -INFINITY, NAN,
                           1e30f, -1e30f, 1e-30f,   -1e-30f,   1.0f,
                           -1.0f, 10.0f,  -10.0f};
  for (float sign : {1.0f, -1.0f})
    for (uint32_t b = 0;; b += stride) {
      float f;
      std::memcpy(&f, &b, sizeof(f));
      if (!(f <= (sign > 0 ? hi : -lo)))
        break;
      xs.push_back(sign * f);
    }
  return xs;
}

// MathFloat.h's exp, tanh, erf and erfc, which the float kernels use (they
// vectorize where libm's do not): exp, tanh and erf within one float ulp of
// libm's double result over the whole float range, erfc within four (its
// header says where they are lost), the specials as libm has them.
TEST(ElementwiseTest, VectorizableExpTanhErfErfcAreWithinTheirBounds) {
  int64_t worst[4] = {0, 0, 0, 0};
  for (float x : sampledFloats(-120.0f, 100.0f, 1009)) {
    int64_t e = ulpsFrom(dtck::math::expFloat(x), std::exp(double(x)));
    int64_t t = ulpsFrom(dtck::math::tanhFloat(x), std::tanh(double(x)));
    EXPECT_LE(e, 1) << "exp(" << x << ")";
    EXPECT_LE(t, 1) << "tanh(" << x << ")";
    worst[0] = std::max(worst[0], e);
    worst[3] = std::max(worst[3], t);
  }
  for (float x : sampledFloats(-12.0f, 12.0f, 1013)) {
    int64_t e = ulpsFrom(dtck::math::erfFloat(x), std::erf(double(x)));
    int64_t c = ulpsFrom(dtck::math::erfcFloat(x), std::erfc(double(x)));
    EXPECT_LE(e, 1) << "erf(" << x << ")";
    EXPECT_LE(c, 4) << "erfc(" << x << ")";
    worst[1] = std::max(worst[1], e);
    worst[2] = std::max(worst[2], c);
  }
  std::printf("worst ulps: exp %lld, erf %lld, erfc %lld, tanh %lld\n",
              (long long)worst[0], (long long)worst[1], (long long)worst[2],
              (long long)worst[3]);
  // The kernels take them for floats and 16-bit floats.
  std::vector<float> x = {-3.0f, -0.5f, 0.25f, 2.0f};
  std::vector<float> y(x.size());
  dtck::erf(shape1(4), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_LE(ulpsFrom(y[i], std::erf(double(x[i]))), 1) << i;
}

TEST(ElementwiseTest, SigmoidAndSoftplusAreStableForLargeMagnitudes) {
  std::vector<float> x = {-100.0f, -20.0f, 0.0f, 20.0f, 100.0f};
  std::vector<float> y(5);
  dtck::sigmoid(shape1(5), x.data(), y.data());
  // 1 / (1 + exp(100)) = 3.72e-44, a float subnormal: not flushed to 0.
  EXPECT_NEAR(y[0], 3.720075976020836e-44, 2e-45);
  EXPECT_NEAR(y[1], 2.061153618190204e-09, 1e-15);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[4], 1.0f);
  dtck::softplus(shape1(5), x.data(), y.data());
  EXPECT_NEAR(y[1], 2.0611536181902037e-09, 1e-15);
  EXPECT_NEAR(y[2], 0.6931471805599453, 1e-7);
  EXPECT_EQ(y[4], 100.0f);
}

TEST(ElementwiseTest, RoundIsHalfToEven) {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4999f};
  std::vector<float> y(6);
  dtck::round(shape1(6), x.data(), y.data());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[2], 2.0f);
  EXPECT_EQ(bits(y[3]), bits(-0.0f));
  EXPECT_EQ(y[4], -2.0f);
  EXPECT_EQ(y[5], 2.0f);
}

TEST(ElementwiseTest, IntegerUnaryOpsFollowTheInterpreter) {
  // The interpreter computes integer unary ops in double and stores with
  // saturation at the int64 range, then wraps to the width.
  std::vector<int8_t> a = {-128, -3, 0, 5, 127};
  std::vector<int8_t> b(5);
  dtck::neg(shape1(5), a.data(), b.data());
  EXPECT_EQ(b[0], -128); // 128 wraps in 8 bits
  EXPECT_EQ(b[1], 3);
  EXPECT_EQ(b[4], -127);
  dtck::sign(shape1(5), a.data(), b.data());
  EXPECT_EQ(b[0], -1);
  EXPECT_EQ(b[2], 0);
  EXPECT_EQ(b[3], 1);
  dtck::relu(shape1(5), a.data(), b.data());
  EXPECT_EQ(b[1], 0);
  EXPECT_EQ(b[4], 127);
  std::vector<int64_t> c = {INT64_MIN, -7};
  std::vector<int64_t> d(2);
  dtck::neg(shape1(2), c.data(), d.data());
  EXPECT_EQ(d[0], INT64_MAX); // saturates, as Tensor::set
  EXPECT_EQ(d[1], 7);
  bool e[3] = {true, false, true}, f[3];
  dtck::logicalNot(shape1(3), e, f);
  EXPECT_FALSE(f[0]);
  EXPECT_TRUE(f[1]);
}

TEST(ElementwiseTest, GeluExactAndApproximate) {
  std::vector<float> x = {-3.0f, -0.5f, 0.0f, 1.0f, 2.0f};
  std::vector<float> y(5);
  dtck::gelu(shape1(5), x.data(), false, y.data());
  // 0.5 x (1 + erf(x / sqrt 2)), in double.
  const double exact[] = {-0.004049694094890287, -0.15426876936299347, 0.0,
                          0.8413447460685429, 1.9544997361036416};
  // Float math: erfc's condition number at x = -3 makes 1e-6 the bound
  // (1 + erf in float would lose 1e-5 there).
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(y[i], exact[i], 1e-6 * std::fabs(exact[i]) + 1e-12) << i;
  dtck::gelu(shape1(5), x.data(), true, y.data());
  const double approx[] = {-0.0036373920817729943, -0.15428599017485606, 0.0,
                           0.8411919906082768, 1.954597694087775};
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(y[i], approx[i], 1e-6 * std::fabs(approx[i]) + 1e-12) << i;
}

TEST(ElementwiseTest, ActivationsWithAttributes) {
  std::vector<float> x = {-2.0f, -1e-4f, 0.0f, 0.1f, 3.0f};
  std::vector<float> y(5);
  dtck::leakyRelu(shape1(5), x.data(), 0.1, y.data());
  EXPECT_EQ(y[0], static_cast<float>(-2.0 * 0.1));
  EXPECT_EQ(y[4], 3.0f);
  dtck::elu(shape1(5), x.data(), 0.5, y.data());
  EXPECT_NEAR(y[0], 0.5 * (std::exp(-2.0) - 1), 1e-7);
  // expm1 keeps the relative accuracy near 0 that exp(x) - 1 loses.
  EXPECT_NEAR(y[1], 0.5 * std::expm1(double(x[1])), 1e-7 * 5e-5);
  dtck::selu(shape1(5), x.data(), 1.67326, 1.0507, y.data());
  EXPECT_NEAR(y[0], 1.0507 * 1.67326 * std::expm1(-2.0), 2e-7);
  EXPECT_NEAR(y[4], 1.0507 * 3.0, 4e-7);
  dtck::celu(shape1(5), x.data(), 2.0, y.data());
  EXPECT_NEAR(y[0], 2.0 * std::expm1(-1.0), 2e-7);
  dtck::hardSigmoid(shape1(5), x.data(), 0.2, 0.5, y.data());
  EXPECT_EQ(y[0], static_cast<float>(0.1));
  EXPECT_EQ(y[4], 1.0f);
  // The threshold compares in double: 0.1f is above 0.1.
  dtck::thresholdedRelu(shape1(5), x.data(), 0.1, y.data());
  EXPECT_EQ(y[3], 0.1f);
  EXPECT_EQ(y[2], 0.0f);
}

TEST(ElementwiseTest, ClipKeepsNaNAndTruncatesIntegerBounds) {
  std::vector<float> x = {NAN, -5.0f, 0.5f, 5.0f};
  std::vector<float> y(4);
  dtck::clip(shape1(4), x.data(), true, -1.0, true, 2.0, y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[3], 2.0f);
  dtck::clip(shape1(4), x.data(), false, 0.0, true, 0.3, y.data());
  EXPECT_EQ(y[1], -5.0f);
  EXPECT_EQ(y[3], static_cast<float>(0.3));
  std::vector<int32_t> a = {-9, 3, 9};
  std::vector<int32_t> b(3);
  dtck::clip(shape1(3), a.data(), true, -5.5, true, 7.9, b.data());
  EXPECT_EQ(b[0], -5); // -5.5 truncates toward zero
  EXPECT_EQ(b[1], 3);
  EXPECT_EQ(b[2], 7);
}

TEST(ElementwiseTest, IsNanAndIsInf) {
  std::vector<float> x = {NAN, INFINITY, -INFINITY, 1.0f};
  bool y[4];
  dtck::isNan(shape1(4), x.data(), y);
  EXPECT_TRUE(y[0]);
  EXPECT_FALSE(y[1]);
  dtck::isInf(shape1(4), x.data(), true, false, y);
  EXPECT_FALSE(y[0]);
  EXPECT_FALSE(y[1]);
  EXPECT_TRUE(y[2]);
  EXPECT_FALSE(y[3]);
  dtck::isInf(shape1(4), x.data(), true, true, y);
  EXPECT_TRUE(y[1]);
}

/// Naive broadcast of a binary function, as the interpreter does it.
template <typename F>
std::vector<float> naiveBroadcast(const Shape &sa, const Shape &sb,
                                  const Shape &sr, const std::vector<float> &a,
                                  const std::vector<float> &b, F f) {
  int64_t ra[dtck::kMaxRank], rb[dtck::kMaxRank], rr[dtck::kMaxRank];
  dtck::broadcastStrides(sa, sr, ra);
  dtck::broadcastStrides(sb, sr, rb);
  dtck::stridesOf(sr, rr);
  std::vector<float> r(sr.numel());
  for (int64_t k = 0; k < sr.numel(); ++k) {
    int64_t ia = 0, ib = 0, rest = k;
    for (int d = 0; d < sr.rank; ++d) {
      int64_t c = rest / rr[d];
      rest -= c * rr[d];
      ia += c * ra[d];
      ib += c * rb[d];
    }
    r[k] = f(a[ia], b[ib]);
  }
  return r;
}

TEST(ElementwiseTest, BinaryOpsBroadcast) {
  struct Case {
    Shape a, b, r;
  } cases[] = {
      {Shape{3, {2, 3, 4}}, Shape{2, {3, 1}}, Shape{3, {2, 3, 4}}},
      {Shape{3, {4, 1, 3}}, Shape{3, {1, 5, 1}}, Shape{3, {4, 5, 3}}},
      {Shape{0, {}}, Shape{2, {2, 3}}, Shape{2, {2, 3}}},
      {Shape{4, {2, 1, 1, 3}}, Shape{2, {2, 3}}, Shape{4, {2, 1, 2, 3}}},
      // Large enough to run in parallel blocks.
      {Shape{2, {70, 300}}, Shape{1, {300}}, Shape{2, {70, 300}}},
  };
  for (const Case &c : cases) {
    std::vector<float> a(c.a.numel()), b(c.b.numel()), r(c.r.numel());
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float(i % 17) - 8.0f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = float(i % 5) + 0.5f;
    dtck::sub(c.a, c.b, c.r, a.data(), b.data(), r.data());
    EXPECT_EQ(r, naiveBroadcast(c.a, c.b, c.r, a, b,
                                [](float x, float y) { return x - y; }));
    dtck::div(c.a, c.b, c.r, a.data(), b.data(), r.data());
    EXPECT_EQ(r, naiveBroadcast(c.a, c.b, c.r, a, b,
                                [](float x, float y) { return x / y; }));
  }
}

TEST(ElementwiseTest, IntegerArithmeticWrapsAndDividesByZeroToZero) {
  Shape s = shape1(5);
  std::vector<int64_t> a = {7, -7, 7, INT64_MIN, 5}, b = {2, 2, 0, -1, -3};
  std::vector<int64_t> r(5);
  dtck::div(s, s, s, a.data(), b.data(), r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{3, -3, 0, INT64_MIN, -1}));
  dtck::mod(s, s, s, a.data(), b.data(), false, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, 1, 0, 0, -1}));
  dtck::mod(s, s, s, a.data(), b.data(), true, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, -1, 0, 0, 2}));
  std::vector<int8_t> c = {100, -100}, d = {100, 100}, e(2);
  dtck::add(shape1(2), shape1(2), shape1(2), c.data(), d.data(), e.data());
  EXPECT_EQ(e[0], -56);
  EXPECT_EQ(e[1], 0);
  std::vector<int32_t> base = {2, -1, 3, 1}, exp = {10, -3, -1, -7}, p(4);
  dtck::pow(shape1(4), shape1(4), shape1(4), base.data(), exp.data(), p.data());
  EXPECT_EQ(p, (std::vector<int32_t>{1024, -1, 0, 1}));
}

TEST(ElementwiseTest, FloatModFollowsTheDivisorOrDividend) {
  Shape s = shape1(4);
  std::vector<float> a = {5.5f, -5.5f, 5.5f, -5.5f}, b = {2, 2, -2, -2}, r(4);
  dtck::mod(s, s, s, a.data(), b.data(), false, r.data());
  EXPECT_EQ(r, (std::vector<float>{1.5f, 0.5f, -0.5f, -1.5f}));
  dtck::mod(s, s, s, a.data(), b.data(), true, r.data());
  EXPECT_EQ(r, (std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f}));
}

TEST(ElementwiseTest, MaxMinPropagateNaN) {
  Shape s = shape1(3);
  std::vector<float> a = {NAN, 1.0f, 2.0f}, b = {1.0f, NAN, 3.0f}, r(3);
  dtck::max(s, s, s, a.data(), b.data(), r.data());
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], 3.0f);
  dtck::min(s, s, s, a.data(), b.data(), r.data());
  EXPECT_EQ(r[2], 2.0f);
}

TEST(ElementwiseTest, ComparisonsAndLogic) {
  Shape s = shape1(4);
  std::vector<float> a = {NAN, 1.0f, 2.0f, -0.0f}, b = {NAN, 2.0f, 2.0f, 0.0f};
  bool r[4];
  dtck::equal(s, s, s, a.data(), b.data(), r);
  EXPECT_FALSE(r[0]);
  EXPECT_FALSE(r[1]);
  EXPECT_TRUE(r[2]);
  EXPECT_TRUE(r[3]);
  dtck::lessEqual(s, s, s, a.data(), b.data(), r);
  EXPECT_FALSE(r[0]);
  EXPECT_TRUE(r[1]);
  std::vector<uint8_t> u = {0, 200}, v = {100, 100};
  bool q[2];
  dtck::greater(shape1(2), shape1(2), shape1(2), u.data(), v.data(), q);
  EXPECT_FALSE(q[0]);
  EXPECT_TRUE(q[1]); // unsigned, not -56
  bool x[2] = {true, false}, y[2][2] = {{true, true}, {false, true}};
  bool z[2][2];
  dtck::logicalXor(shape1(2), Shape{2, {2, 2}}, Shape{2, {2, 2}}, x, &y[0][0],
                   &z[0][0]);
  EXPECT_FALSE(z[0][0]);
  EXPECT_TRUE(z[0][1]);
  EXPECT_TRUE(z[1][0]);
  EXPECT_TRUE(z[1][1]);
}

TEST(ElementwiseTest, WhereBroadcastsAllThree) {
  bool c[3] = {true, false, true};
  std::vector<int64_t> t = {10, 20}, f = {-1};
  std::vector<int64_t> r(6);
  // condition [3] x on_true [2, 1] x on_false [] -> [2, 3]
  dtck::where(shape1(3), Shape{2, {2, 1}}, Shape{0, {}}, Shape{2, {2, 3}}, c,
              t.data(), f.data(), r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{10, -1, 10, 20, -1, 20}));
}

TEST(ElementwiseTest, CastFloatToIntegerTruncatesSaturatesAndWraps) {
  std::vector<float> x = {2.7f, -2.7f, 1e10f, 1e30f, -1e30f, NAN, 300.7f};
  std::vector<int32_t> y(7);
  dtck::cast(shape1(7), x.data(), y.data());
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(y[1], -2);
  EXPECT_EQ(y[2], 1410065408); // 10^10 wrapped to 32 bits
  EXPECT_EQ(y[3], -1);         // INT64_MAX wrapped
  EXPECT_EQ(y[4], 0);          // INT64_MIN wrapped
  EXPECT_EQ(y[5], 0);          // NaN
  std::vector<uint8_t> u(7);
  dtck::cast(shape1(7), x.data(), u.data());
  EXPECT_EQ(u[6], 44); // 300 mod 256
  EXPECT_EQ(u[1], 254);
  bool b[7];
  dtck::cast(shape1(7), x.data(), b);
  EXPECT_TRUE(b[0]);
  EXPECT_FALSE(b[5]); // NaN is false, as the interpreter
}

TEST(ElementwiseTest, CastToSixteenBitFloatsRoundsOnce) {
  // 1 + 2^-8 + 2^-30 is just above the midpoint of two bf16 neighbours;
  // through float it would become the exact midpoint and round to even.
  std::vector<double> x = {1.0 + 0x1p-8 + 0x1p-30, 1.0 + 0x1p-11 + 0x1p-40,
                           -3.0, 65520.0, 1e-9};
  std::vector<bf16> h(5);
  dtck::cast(shape1(5), x.data(), h.data());
  EXPECT_EQ(float(h[0]), 1.0078125f);
  EXPECT_EQ(float(h[2]), -3.0f);
  std::vector<f16> g(5);
  dtck::cast(shape1(5), x.data(), g.data());
  EXPECT_EQ(float(g[1]), 1.0f + 0x1p-10f);
  EXPECT_TRUE(std::isinf(float(g[3])));
  EXPECT_EQ(float(g[4]), 0.0f);
  std::vector<float> back(5);
  dtck::cast(shape1(5), h.data(), back.data());
  EXPECT_EQ(back[2], -3.0f);
}

// roundToOddFloat (branch-free) against its definition: truncate to
// float, then set the lowest bit when inexact; over doubles of every
// magnitude float holds, ties, values beyond float's range, subnormals,
// zeros, infinities and NaN.
TEST(ElementwiseTest, RoundToOddFloatIsTruncateThenSetTheLowestBit) {
  auto definition = [](double value) {
    float f = static_cast<float>(value);
    if (static_cast<double>(f) == value || std::isnan(value))
      return f;
    if (std::fabs(static_cast<double>(f)) > std::fabs(value))
      f = std::nextafter(f, 0.0f);
    return dtck::bitsFloat(dtck::floatBits(f) | 1u);
  };
  std::vector<double> values = {0.0,      -0.0,      1.0,      1.0 + 0x1p-24,
                                0x1p-149, 0x1p-150,  0x1p-151, 3e-45,
                                1e-46,    3.5e38,    -3.5e38,  1e300,
                                INFINITY, -INFINITY, NAN,      0.1};
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t bits = state;
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    // Exponents near float's range, and every bit pattern's sign.
    values.push_back(std::ldexp(std::fabs(d) / (1.0 + std::fabs(d)),
                                int(state >> 56) % 300 - 150) *
                     ((state & 1) ? -1.0 : 1.0));
  }
  for (double v : values) {
    float want = definition(v), got = dtck::detail::roundToOddFloat(v);
    ASSERT_EQ(dtck::floatBits(got), dtck::floatBits(want)) << v;
  }
}

// Clip of bf16 values (selects, then a bound rounded once) as the double
// path: x or the bound rounded to bf16, NaN kept.
TEST(ElementwiseTest, ClipOfBFloat16RoundsTheBoundOnce) {
  std::vector<bf16> x = {bf16(NAN), bf16(-5.0f), bf16(0.5f), bf16(5.0f),
                         bf16(-0.0f)};
  std::vector<bf16> y(5);
  dtck::clip(shape1(5), x.data(), true, 0.0, true, 0.3, y.data());
  EXPECT_TRUE(std::isnan(float(y[0])));
  EXPECT_EQ(float(y[1]), 0.0f);
  EXPECT_EQ(float(y[2]), float(bf16(0.3f)));
  EXPECT_EQ(float(y[3]), float(bf16(0.3f)));
  EXPECT_TRUE(std::signbit(float(y[4]))); // -0 is not below 0
  dtck::clip(shape1(5), x.data(), true, 2.0, true, 1.0, y.data());
  EXPECT_EQ(float(y[2]), 1.0f); // min above max: max
}

TEST(ElementwiseTest, CastIntegersAndBooleans) {
  std::vector<int64_t> x = {(int64_t(1) << 53) + 1, -1, 16777217};
  std::vector<float> f(3);
  dtck::cast(shape1(3), x.data(), f.data());
  EXPECT_EQ(f[0], 9007199254740992.0f);
  EXPECT_EQ(f[1], -1.0f);
  EXPECT_EQ(f[2], 16777216.0f);
  std::vector<uint8_t> u(3);
  dtck::cast(shape1(3), x.data(), u.data());
  EXPECT_EQ(u[1], 255);
  EXPECT_EQ(u[2], 1);
  bool b[2] = {true, false};
  std::vector<double> d(2);
  dtck::cast(shape1(2), b, d.data());
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], 0.0);
}

TEST(ElementwiseTest, Table16HoldsTheFunctionAtEveryBitPattern) {
  // The CPU target's tables of chains of one 16-bit value: every bit
  // pattern (signed zeros, subnormals, infinities, NaNs) gives the bits of
  // computing the chain.
  auto gelu = [](bf16 x) { return dtck::scalar::gelu(x, false); };
  static const dtck::Table16<bf16, bf16> geluTable(gelu);
  auto chain = [](f16 x) {
    float v = dtck::scalar::cast<float>(x);
    return dtck::scalar::mul(v, dtck::scalar::exp(v * -0.5f * v));
  };
  static const dtck::Table16<float, f16> chainTable(chain);
  int wrong = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    bf16 x;
    x.bits = uint16_t(b);
    f16 h;
    h.bits = uint16_t(b);
    wrong += geluTable(x).bits != gelu(x).bits;
    wrong += bits(chainTable(h)) != bits(chain(h));
  }
  EXPECT_EQ(wrong, 0);
  bf16 one;
  one.bits = 0x3f80;
  EXPECT_NEAR(float(geluTable(one)), 0.8413447460685429, 4e-3);
}

} // namespace
