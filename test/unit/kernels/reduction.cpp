//===- reduction.cpp - tests of dtcrt/kernels/Reduction.h -----------------===//
//
// Expected values follow dialects/DTG/Interp/KernelsReduction.cpp (floats
// accumulate in double in the operand's order, integers wrap); sums were
// checked with NumPy.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/kernels/Reduction.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <vector>

using dtck::Reduction;
using dtck::Shape;

namespace {

/// x[i] = i / 4 - 2 for a [2, 3, 4] tensor: exact in float.
std::vector<float> ramp() {
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i)
    x[i] = float(i) * 0.25f - 2.0f;
  return x;
}

TEST(ReductionTest, SumOverAnyAxes) {
  Shape in{3, {2, 3, 4}};
  std::vector<float> x = ramp();
  std::vector<float> y(3);
  // Reduced axes 0 and 2 (kept shape [1, 3, 1]): numpy a.sum(axis=(0, 2)).
  dtck::reduceSum(in, Shape{3, {1, 3, 1}}, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-1.0f, 7.0f, 15.0f}));
  std::vector<float> z(8);
  dtck::reduceSum(in, Shape{3, {2, 1, 4}}, x.data(), z.data());
  EXPECT_EQ(z, (std::vector<float>{-3.0f, -2.25f, -1.5f, -0.75f, 6.0f, 6.75f,
                                   7.5f, 8.25f}));
  float all;
  dtck::reduceSum(in, Shape{3, {1, 1, 1}}, x.data(), &all);
  EXPECT_EQ(all, 21.0f);
  // No axes: a copy.
  std::vector<float> same(24);
  dtck::reduceSum(in, in, x.data(), same.data());
  EXPECT_EQ(same, x);
}

TEST(ReductionTest, SumAccumulatesInDouble) {
  // 2^24 + 1 + 1 + ... is exact in double, not in float.
  std::vector<float> x(1001, 1.0f);
  x[0] = 16777216.0f;
  float y;
  dtck::reduceSum(Shape{1, {1001}}, Shape{1, {1}}, x.data(), &y);
  EXPECT_EQ(y, 16778216.0f);
  // A column sum large enough to run in parallel blocks.
  Shape in{2, {300, 200}};
  std::vector<float> big(in.numel());
  for (int64_t i = 0; i < in.numel(); ++i)
    big[i] = float(i % 7);
  std::vector<float> cols(200);
  dtck::reduceSum(in, Shape{2, {1, 200}}, big.data(), cols.data());
  for (int c = 0; c < 200; ++c) {
    double expect = 0;
    for (int r = 0; r < 300; ++r)
      expect += double((r * 200 + c) % 7);
    ASSERT_EQ(cols[c], float(expect)) << c;
  }
}

// A BatchNorm gradient's sums (over axes 0 and 2, per channel), each the
// sequential sum in double of its elements in order, rounded once, at 1 and
// 2 threads: 19 results (two groups of eight interleaved and three alone)
// and 267 (eight groups of 32 whose runs are transposed in blocks of 8 x 8,
// one of eight, three alone).
TEST(ReductionTest, PerChannelSumsInOrder) {
  for (int64_t channels : {19, 267}) {
    Shape in{3, {3, channels, 37}}, kept{3, {1, channels, 1}};
    std::vector<float> x(in.numel());
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float((i * 7919) % 1009) / 97.0f - 5.0f + 1e-7f * float(i % 13);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      std::vector<float> y(channels), mean(channels);
      dtck::reduceSum(in, kept, x.data(), y.data());
      dtck::reduceMean(in, kept, x.data(), mean.data());
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < 3; ++n)
          for (int64_t j = 0; j < 37; ++j)
            sum += double(x[(n * channels + c) * 37 + j]);
        EXPECT_EQ(y[c], float(sum)) << c << ", " << threads << " threads";
        EXPECT_EQ(mean[c], float(sum / 111))
            << c << ", " << threads << " threads";
      }
    }
  }
  omp_set_num_threads(1);
}

TEST(ReductionTest, EmptyGroups) {
  std::vector<float> x(1);
  std::vector<float> y(2);
  Shape in{2, {2, 0}}, kept{2, {2, 1}};
  dtck::reduceSum(in, kept, x.data(), y.data());
  EXPECT_EQ(y[0], 0.0f);
  dtck::reduceMax(in, kept, x.data(), y.data());
  EXPECT_EQ(y[1], -INFINITY);
  dtck::reduceMean(in, kept, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  dtck::reduceProd(in, kept, x.data(), y.data());
  EXPECT_EQ(y[0], 1.0f);
}

TEST(ReductionTest, IntegerMeansTruncateAndSumsWrap) {
  std::vector<int32_t> x = {-7, 0, 2, 5, 2, 1};
  std::vector<int32_t> y(2);
  dtck::reduceMean(Shape{2, {2, 3}}, Shape{2, {2, 1}}, x.data(), y.data());
  EXPECT_EQ(y[0], -1); // -5 / 3 toward zero
  EXPECT_EQ(y[1], 2);
  std::vector<uint8_t> u = {200, 100, 255, 255};
  std::vector<uint8_t> v(2);
  dtck::reduceSum(Shape{2, {2, 2}}, Shape{2, {2, 1}}, u.data(), v.data());
  EXPECT_EQ(v[0], 44); // 300 mod 256
  dtck::reduceMean(Shape{2, {2, 2}}, Shape{2, {2, 1}}, u.data(), v.data());
  EXPECT_EQ(v[0], 150);
  EXPECT_EQ(v[1], 255);
  dtck::reduceMax(Shape{2, {2, 2}}, Shape{2, {1, 2}}, u.data(), v.data());
  EXPECT_EQ(v[0], 255); // unsigned order
  bool b[4] = {false, true, false, false}, r[2];
  dtck::reduceMax(Shape{2, {2, 2}}, Shape{2, {2, 1}}, b, r);
  EXPECT_TRUE(r[0]);
  EXPECT_FALSE(r[1]);
}

TEST(ReductionTest, MaxMinPropagateNaN) {
  std::vector<float> x = {1.0f, NAN, 3.0f, 1.0f, 2.0f, -0.5f};
  std::vector<float> y(2);
  dtck::reduceMax(Shape{2, {2, 3}}, Shape{2, {2, 1}}, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 2.0f);
  dtck::reduceMin(Shape{2, {2, 3}}, Shape{2, {2, 1}}, x.data(), y.data());
  EXPECT_EQ(y[1], -0.5f);
}

TEST(ReductionTest, LogSumExpIsStable) {
  std::vector<float> x = {1000.0f,   1000.0f, 990.0f,   -INFINITY, -INFINITY,
                          -INFINITY, 1.0f,    INFINITY, 2.0f};
  std::vector<float> y(3);
  dtck::reduceLogSumExp(Shape{2, {3, 3}}, Shape{2, {3, 1}}, x.data(), y.data());
  EXPECT_EQ(y[0], float(1000.6931698802672));
  EXPECT_EQ(y[1], -INFINITY);
  EXPECT_EQ(y[2], INFINITY);
  std::vector<int64_t> i = {1, 2, 3}, j(1);
  dtck::reduceLogSumExp(Shape{1, {3}}, Shape{1, {1}}, i.data(), j.data());
  EXPECT_EQ(j[0], 3); // 3.4076 truncated
}

TEST(ReductionTest, ArgMaxTiesAndNaN) {
  std::vector<float> x = {1.0f, 3.0f, 3.0f, 0.0f, //
                          NAN,  5.0f, NAN,  1.0f};
  std::vector<int64_t> y(2);
  dtck::argMax(Shape{2, {2, 4}}, x.data(), 1, false, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{1, 0}));
  dtck::argMax(Shape{2, {2, 4}}, x.data(), 1, true, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{2, 2}));
  dtck::argMin(Shape{2, {2, 4}}, x.data(), 1, false, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{3, 0}));
  std::vector<int64_t> z(4);
  dtck::argMin(Shape{2, {2, 4}}, x.data(), 0, false, z.data());
  EXPECT_EQ(z, (std::vector<int64_t>{1, 0, 1, 0}));
}

TEST(ReductionDeathTest, ArgMaxOfAnEmptyAxisFails) {
  std::vector<float> x(1);
  std::vector<int64_t> y(2);
  EXPECT_EXIT(dtck::argMax(Shape{2, {2, 0}}, x.data(), 1, false, y.data()),
              testing::ExitedWithCode(1),
              "argmax: cannot take the argmax of an empty axis 1");
}

TEST(ReductionTest, CumSumVariants) {
  Shape s{2, {2, 4}};
  std::vector<int64_t> x = {1, 2, 3, 4, 10, 20, 30, 40}, y(8);
  dtck::cumSum(s, x.data(), 1, false, false, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{1, 3, 6, 10, 10, 30, 60, 100}));
  dtck::cumSum(s, x.data(), 1, true, false, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{0, 1, 3, 6, 0, 10, 30, 60}));
  dtck::cumSum(s, x.data(), 1, false, true, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{10, 9, 7, 4, 100, 90, 70, 40}));
  dtck::cumSum(s, x.data(), 0, true, true, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{10, 20, 30, 40, 0, 0, 0, 0}));
  // In place.
  dtck::cumSum(s, x.data(), 0, false, false, x.data());
  EXPECT_EQ(x, (std::vector<int64_t>{1, 2, 3, 4, 11, 22, 33, 44}));
}

TEST(ReductionTest, NllLoss) {
  // input [N=3, C=2] log-probabilities.
  std::vector<float> x = {-0.5f, -1.0f, -2.0f, -0.25f, -3.0f, -0.125f};
  std::vector<int64_t> t = {1, 0, -100};
  std::vector<float> w = {2.0f, 0.5f};
  float mean;
  dtck::nllLoss(Shape{2, {3, 2}}, x.data(), t.data(), w.data(), Reduction::Mean,
                true, -100, &mean);
  // (0.5 * 1.0 + 2.0 * 2.0) / (0.5 + 2.0)
  EXPECT_EQ(mean, 1.8f);
  float sum;
  dtck::nllLoss(Shape{2, {3, 2}}, x.data(), t.data(), nullptr, Reduction::Sum,
                true, -100, &sum);
  EXPECT_EQ(sum, 3.0f);
  std::vector<float> none(3);
  dtck::nllLoss(Shape{2, {3, 2}}, x.data(), t.data(), w.data(), Reduction::None,
                true, -100, none.data());
  EXPECT_EQ(none, (std::vector<float>{0.5f, 4.0f, 0.0f}));
  // Spatial: input [N=1, C=2, 2], target [1, 2].
  std::vector<float> s = {-1.0f, -2.0f, -3.0f, -4.0f};
  std::vector<int32_t> st = {1, 0};
  dtck::nllLoss(Shape{3, {1, 2, 2}}, s.data(), st.data(), nullptr,
                Reduction::Mean, false, 0, &mean);
  EXPECT_EQ(mean, 2.5f); // (3 + 2) / 2
}

TEST(ReductionDeathTest, NllLossTargetOutOfRangeFails) {
  std::vector<float> x(4);
  std::vector<int64_t> t = {0, 2};
  float y;
  EXPECT_EXIT(dtck::nllLoss(Shape{2, {2, 2}}, x.data(), t.data(), nullptr,
                            Reduction::Mean, false, 0, &y),
              testing::ExitedWithCode(1),
              "nll_loss: target 2 at position 1 is out of range for 2 "
              "classes");
}

} // namespace
