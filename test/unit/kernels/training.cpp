//===- training.cpp - tests of dtcrt/kernels/Training.h -------------------===//
//
// Two optimizer steps on a 4-element float parameter against
// torch.optim.SGD / torch.optim.AdamW 1.13 (the values below), and the
// schedule formulas of REFERENCE.md.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/kernels/Training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using dtck::Shape;

namespace {

const Shape kShape{1, {4}};
const std::vector<float> kParam = {1.0f, -2.0f, 0.5f, 3.0f};
const std::vector<float> kGrad1 = {0.1f, 0.2f, -0.3f, 0.4f};
const std::vector<float> kGrad2 = {-0.05f, 0.1f, 0.25f, -0.5f};

/// Expects `got` to equal PyTorch's `want` within an ulp of the terms that
/// produced it: PyTorch rounds a scalar hyperparameter to float before it
/// multiplies, the interpreter (which these kernels match bit for bit)
/// multiplies in double, and where the terms cancel (a momentum buffer
/// turning sign) that last-bit difference is large relative to the result.
void expectUlp(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-8 + 1.2e-7 * std::fabs(want[i])) << i;
}

/// Runs two SGD steps; returns (param, buffer).
std::pair<std::vector<float>, std::vector<float>>
sgdTwoSteps(double momentum, double dampening, double wd, bool nesterov) {
  std::vector<float> p = kParam, buf(4, 0.0f);
  double lr = 0.1;
  for (int step = 1; step <= 2; ++step) {
    bool first = step == 1;
    const std::vector<float> &g = step == 1 ? kGrad1 : kGrad2;
    // In place, as a training step may write its results over its inputs.
    dtck::sgdUpdate(kShape, p.data(), g.data(), buf.data(), &lr, &momentum,
                    &dampening, &wd, &nesterov, &first, p.data(), buf.data());
  }
  return {p, buf};
}

TEST(TrainingTest, SgdMomentumDampeningWeightDecay) {
  auto [p, buf] = sgdTwoSteps(0.9, 0.1, 0.01, false);
  expectUlp(p, {0.9827099442481995, -2.041383743286133, 0.5330734848976135,
                2.9606387615203857});
  expectUlp(buf, {0.06290099769830704, 0.23383799195289612,
                  -0.03573450818657875, -0.03638698160648346});
}

TEST(TrainingTest, SgdNesterov) {
  auto [p, buf] = sgdTwoSteps(0.9, 0.0, 0.01, true);
  expectUlp(p, {0.9778296947479248, -2.0639150142669678, 0.531388521194458,
                2.9729251861572266});
  expectUlp(buf, {0.05879099667072296, 0.24165800213813782,
                  -0.009939521551132202, -0.0838170051574707});
}

TEST(TrainingTest, SgdWithoutMomentumKeepsTheBuffer) {
  std::vector<float> p(4), buf = {7.0f, 8.0f, 9.0f, 10.0f}, newBuf(4);
  double lr = 0.5, momentum = 0.0, dampening = 0.0, wd = 0.0;
  bool nesterov = false, first = false;
  dtck::sgdUpdate(kShape, kParam.data(), kGrad1.data(), buf.data(), &lr,
                  &momentum, &dampening, &wd, &nesterov, &first, p.data(),
                  newBuf.data());
  EXPECT_EQ(newBuf, buf);
  EXPECT_EQ(p[0], float(1.0 - 0.5 * double(0.1f)));
}

TEST(TrainingTest, AdamWTwoSteps) {
  std::vector<float> p = kParam, m(4, 0.0f), v(4, 0.0f);
  double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.1;
  for (int64_t step = 1; step <= 2; ++step) {
    const std::vector<float> &g = step == 1 ? kGrad1 : kGrad2;
    dtck::adamWUpdate(kShape, p.data(), g.data(), m.data(), v.data(), &lr,
                      &beta1, &beta2, &eps, &wd, &step, p.data(), m.data(),
                      v.data());
  }
  expectUlp(p, {0.9853476881980896, -2.0153138637542725, 0.5093717575073242,
                2.985640287399292});
  expectUlp(m, {0.004000000189989805, 0.02800000086426735,
                -0.0020000003278255463, -0.013999998569488525});
  expectUlp(v, {1.2490000699472148e-05, 4.996000279788859e-05,
                0.00015241000801324844, 0.0004098400240764022});
}

TEST(TrainingTest, AdamWInBf16RoundsToBf16) {
  // In bf16 every statement rounds to 8 significant bits: the step is the
  // interpreter's, not a float computation rounded at the end.
  std::vector<dtck::bf16> p = {dtck::bf16(1.0f)}, g = {dtck::bf16(0.1f)},
                          m = {dtck::bf16(0.0f)}, v = {dtck::bf16(0.0f)};
  double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.0;
  int64_t step = 1;
  dtck::adamWUpdate(Shape{1, {1}}, p.data(), g.data(), m.data(), v.data(), &lr,
                    &beta1, &beta2, &eps, &wd, &step, p.data(), m.data(),
                    v.data());
  // m = bf16(0.1 * (1 - 0.9)) with g = bf16(0.1) = 0.10009765625.
  EXPECT_EQ(float(m[0]), float(dtck::bf16(float(0.1 * 0.10009765625))));
  // p = 1 - 0.01 * m / (sqrt(v) / sqrt(0.001) + eps) / 0.1 = 0.99 -> bf16.
  EXPECT_EQ(float(p[0]), 0.98828125f);
}

// 600 elements (blocks of the update and a partial one), in place and out
// of place, against each statement evaluated in double and rounded to float
// (the interpreter's semantics, written out here): the float square root
// and quotient the kernel takes are the same bits.
TEST(TrainingTest, AdamWManyElementsMatchesDoubleStatements) {
  const int64_t n = 600;
  Shape shape{1, {n}};
  std::vector<float> p(n), g(n), m(n), v(n);
  uint32_t state = 12345;
  auto next = [&] { // in [-1, 1)
    state = state * 1664525u + 1013904223u;
    return float(int32_t(state)) / 2147483648.0f;
  };
  for (int64_t i = 0; i < n; ++i) {
    float scale = std::ldexp(1.0f, int(i % 40) - 30);
    p[i] = next() * 4, g[i] = next() * scale, m[i] = next() * scale;
    v[i] = std::fabs(next()) * scale * scale;
  }
  double lr = 3e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.01;
  int64_t step = 7;
  std::vector<float> p2(n), m2(n), v2(n);
  dtck::adamWUpdate(shape, p.data(), g.data(), m.data(), v.data(), &lr, &beta1,
                    &beta2, &eps, &wd, &step, p2.data(), m2.data(), v2.data());
  std::vector<float> p3 = p, m3 = m, v3 = v;
  dtck::adamWUpdate(shape, p3.data(), g.data(), m3.data(), v3.data(), &lr,
                    &beta1, &beta2, &eps, &wd, &step, p3.data(), m3.data(),
                    v3.data());
  auto r = [](double x) { return double(float(x)); };
  double stepSize = lr / (1 - std::pow(beta1, 7.0));
  double bc2Sqrt = std::sqrt(1 - std::pow(beta2, 7.0));
  for (int64_t i = 0; i < n; ++i) {
    double gi = g[i];
    double pi = r(p[i] * (1 - lr * wd));
    double mi = r(r(m[i] * beta1) + (1 - beta1) * gi);
    double vi = r(r(v[i] * beta2) + (1 - beta2) * gi * gi);
    double denom = r(r(std::sqrt(vi)) / bc2Sqrt + eps);
    float want = float(pi - stepSize * r(mi / denom));
    ASSERT_EQ(p2[i], want) << i;
    ASSERT_EQ(m2[i], float(mi)) << i;
    ASSERT_EQ(v2[i], float(vi)) << i;
    ASSERT_EQ(p3[i], p2[i]) << i;
    ASSERT_EQ(m3[i], m2[i]) << i;
    ASSERT_EQ(v3[i], v2[i]) << i;
  }
}

TEST(TrainingDeathTest, AdamWStepZeroFails) {
  std::vector<float> p(4), m(4), v(4);
  double h = 0.1;
  int64_t step = 0;
  EXPECT_EXIT(dtck::adamWUpdate(kShape, p.data(), kGrad1.data(), m.data(),
                                v.data(), &h, &h, &h, &h, &h, &step, p.data(),
                                m.data(), v.data()),
              testing::ExitedWithCode(1),
              "adamw_update: step must be at least 1, got 0");
}

double schedule(int64_t k, int64_t warmup, int64_t total, int64_t kind) {
  double lr = 0.1, minLr = 0.001, result = -1;
  dtck::lrSchedule(&lr, &k, &warmup, &total, &minLr, &kind, &result);
  return result;
}

TEST(TrainingTest, LrSchedule) {
  EXPECT_DOUBLE_EQ(schedule(1, 0, 10, 0), 0.1);
  EXPECT_DOUBLE_EQ(schedule(2, 4, 10, 0), 0.05);   // warmup
  EXPECT_DOUBLE_EQ(schedule(20, 4, 10, 0), 0.1);   // constant
  EXPECT_DOUBLE_EQ(schedule(7, 4, 10, 1), 0.0505); // linear, halfway
  EXPECT_DOUBLE_EQ(schedule(7, 4, 10, 2), 0.0505); // cosine, halfway
  EXPECT_DOUBLE_EQ(schedule(10, 4, 10, 2), 0.001); // end of the decay
  EXPECT_DOUBLE_EQ(schedule(11, 4, 10, 1), 0.001); // past the end
  EXPECT_NEAR(schedule(5, 4, 10, 2),
              0.001 + 0.099 * (1 + std::cos(M_PI / 6)) / 2, 1e-17);
}

TEST(TrainingDeathTest, UnknownScheduleFails) {
  EXPECT_EXIT(schedule(1, 0, 10, 3), testing::ExitedWithCode(1),
              "lr_schedule: unknown learning-rate schedule 3");
}

} // namespace
