//===- nn.cpp - tests of the pooling and normalization kernels ------------===//
//
// Pooling, batch and layer normalization and softmax
// (runtime/include/dtcrt/kernels/Pooling.h, Normalization.h) against values
// PyTorch 1.13 computes in float64 on the same inputs (ramp() in
// KernelTest.h builds them from exact binary fractions, so PyTorch and the
// kernels see identical values; the torch calls are named per test).
//
//===----------------------------------------------------------------------===//

#include "dtcrt/kernels/NN.h"
#include "KernelTest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <vector>

using namespace dtck;
using namespace kerneltest;

namespace {

static const double kMaxPool[] = {
    1.125, 1.125, 1,     1.25,  1.125, NAN,  NAN,   1.25,  1.25,  1.25,  1.125,
    1.375, 1.25,  1.25,  0.75,  1.375, 1,    0.875, 1.125, 1.125, 1.375, 1.375,
    1.25,  1.125, 1.375, 1.375, 1.25,  1.25, 1.125, 0.625, 1.25,  1.25};
static const double kMaxPoolGradTies[] = {
    0, -2,   0, 0, -0.25, 0, 0,     0.75,  0,   0,     0.25,  0,    0,   -0.25,
    0, 0,    0, 0, 0,     0, 0,     0,     0.5, 0,     0,     1,    0,   0,
    0, 0,    0, 0, 0,     0, -1.25, -0.75, 0,   -0.25, 0,     0,    1,   0,
    0, 0.25, 0, 0, -0.5,  0, 0,     0.5,   0,   0,     -0.25, 0,    0,   -0.75,
    0, 0,    0, 0, 0,     0, 0,     0,     0,   0,     0,     0.75, 0,   0,
    0, 0,    0, 0, 0,     0, 1.25,  -1,    0,   -0.5,  0,     0,    0.5, 0};
static const double kMaxPool1d[] = {1,    0.5,   0,     1.125,
                                    1.25, 1.375, 0.875, -0.25};
static const double kAvgPoolIncl[] = {-0.0555555556,
                                      0.0694444444,
                                      -0.152777778,
                                      0,
                                      0.0277777778,
                                      -0.208333333,
                                      0.0972222222,
                                      0.111111111,
                                      0.0694444444,
                                      0.0138888889,
                                      0,
                                      0.152777778,
                                      0.125,
                                      0.0625,
                                      -0.104166667,
                                      0.166666667,
                                      0.0277777778,
                                      -0.125,
                                      -0.0277777778,
                                      0.0833333333,
                                      0.152777778,
                                      0.138888889,
                                      0.125,
                                      -0.0833333333,
                                      0.194444444,
                                      0.0416666667,
                                      0.0277777778,
                                      -0.0416666667,
                                      0.1875,
                                      -0.0833333333,
                                      0.229166667,
                                      0.229166667};
static const double kAvgPoolGradIncl[] = {-0.138888889,
                                          -0.222222222,
                                          -0.0833333333,
                                          -0.111111111,
                                          -0.0277777778,
                                          0,
                                          0.0277777778,
                                          -0.0555555556,
                                          0,
                                          0.0555555556,
                                          -0.0833333333,
                                          -0.138888889,
                                          -0.166666667,
                                          -0.0277777778,
                                          0.0833333333,
                                          0.222222222,
                                          0.138888889,
                                          0.0277777778,
                                          -0.111111111,
                                          -0.166666667,
                                          -0.0555555556,
                                          0.0833333333,
                                          0.277777778,
                                          0.194444444,
                                          0.194444444,
                                          0,
                                          -0.194444444,
                                          -0.194444444,
                                          0,
                                          0.0555555556,
                                          0.0555555556,
                                          0.166666667,
                                          0.111111111,
                                          -0.0277777778,
                                          -0.138888889,
                                          -0.125,
                                          -0.111111111,
                                          0.0138888889,
                                          0.166666667,
                                          0.152777778,
                                          0.138888889,
                                          -0.0138888889,
                                          0.138888889,
                                          0.0277777778,
                                          -0.111111111,
                                          -0.166666667,
                                          -0.0555555556,
                                          -0.0555555556,
                                          0,
                                          0.194444444,
                                          0.194444444,
                                          0,
                                          -0.194444444,
                                          -0.194444444,
                                          -0.277777778,
                                          -0.0833333333,
                                          0.0555555556,
                                          0.166666667,
                                          0.111111111,
                                          -0.0277777778,
                                          -0.138888889,
                                          -0.222222222,
                                          -0.0833333333,
                                          0.0277777778,
                                          0.166666667,
                                          0.138888889,
                                          0.0833333333,
                                          -0.0555555556,
                                          0,
                                          0.0555555556,
                                          -0.0277777778,
                                          0,
                                          0.0277777778,
                                          0.111111111,
                                          0.0833333333,
                                          0.222222222,
                                          0.138888889,
                                          -0.194444444,
                                          -0.25,
                                          -0.0555555556,
                                          0.0277777778,
                                          0.0833333333,
                                          0.305555556,
                                          0.222222222};
static const double kAvgPoolExcl[] = {-0.125,
                                      0.104166667,
                                      -0.229166667,
                                      0,
                                      0.0416666667,
                                      -0.208333333,
                                      0.0972222222,
                                      0.166666667,
                                      0.104166667,
                                      0.0138888889,
                                      0,
                                      0.229166667,
                                      0.375,
                                      0.125,
                                      -0.208333333,
                                      0.5,
                                      0.0625,
                                      -0.1875,
                                      -0.0416666667,
                                      0.1875,
                                      0.229166667,
                                      0.138888889,
                                      0.125,
                                      -0.125,
                                      0.291666667,
                                      0.0416666667,
                                      0.0277777778,
                                      -0.0625,
                                      0.5625,
                                      -0.166666667,
                                      0.458333333,
                                      0.6875};
static const double kAvgPoolGradExcl[] = {-0.3125,
                                          -0.4375,
                                          -0.125,
                                          -0.166666667,
                                          -0.0416666667,
                                          0.0208333333,
                                          0.0625,
                                          -0.1875,
                                          -0.173611111,
                                          0.0138888889,
                                          -0.138888889,
                                          -0.152777778,
                                          -0.173611111,
                                          -0.0208333333,
                                          0.125,
                                          0.263888889,
                                          0.138888889,
                                          0.0277777778,
                                          -0.111111111,
                                          -0.194444444,
                                          -0.0833333333,
                                          0.125,
                                          0.319444444,
                                          0.194444444,
                                          0.194444444,
                                          0,
                                          -0.291666667,
                                          -0.291666667,
                                          0,
                                          0.0555555556,
                                          0.0555555556,
                                          0.166666667,
                                          0.111111111,
                                          -0.0972222222,
                                          -0.208333333,
                                          -0.375,
                                          -0.402777778,
                                          -0.0277777778,
                                          0.166666667,
                                          0.194444444,
                                          0.361111111,
                                          0.166666667,
                                          0.3125,
                                          0.145833333,
                                          -0.166666667,
                                          -0.25,
                                          -0.0833333333,
                                          -0.0833333333,
                                          0,
                                          0.395833333,
                                          0.340277778,
                                          -0.0555555556,
                                          -0.277777778,
                                          -0.222222222,
                                          -0.347222222,
                                          -0.125,
                                          0.0833333333,
                                          0.194444444,
                                          0.111111111,
                                          -0.0277777778,
                                          -0.138888889,
                                          -0.263888889,
                                          -0.125,
                                          0.0416666667,
                                          0.180555556,
                                          0.138888889,
                                          0.0833333333,
                                          -0.0555555556,
                                          0.0277777778,
                                          0.0833333333,
                                          -0.0416666667,
                                          -0.0138888889,
                                          0.0277777778,
                                          0.111111111,
                                          0.0833333333,
                                          0.291666667,
                                          0.208333333,
                                          -0.541666667,
                                          -0.680555556,
                                          -0.138888889,
                                          -0.0555555556,
                                          0.0833333333,
                                          0.541666667,
                                          0.458333333};
static const double kBatchNormInference[] = {
    1.16419942,  -1.31064957,  0.280324783, -2.1945242,  0.5, 0.5, 0.5, 0.5,
    -2.37129913, -0.780324783, 0.810649565, -1.66419942, 0.5, 0.5, 0.5, 0.5,
    -1.84097435, -0.25,        -2.72484899, -1.13387464, 0.5, 0.5, 0.5, 0.5};
static const double kBatchNormTraining[] = {
    1.53013957,   -0.504305653,  0.803551992, -1.23089323,  0.5, 0.5, 0.5, 0.5,
    -1.37621075,  -0.0683531048, 1.23950454,  -0.794940686, 0.5, 0.5, 0.5, 0.5,
    -0.940258202, 0.367599444,   -1.66684578, -0.358988137, 0.5, 0.5, 0.5, 0.5};
static const double kBatchNormRunningMean[] = {-0.321875, 0.197916667};
static const double kBatchNormRunningVar[] = {0.53071733, 1.19455492};
static const double kBatchNormBiasedRunningVar[] = {0.523990885, 1.18875868};
static const double kLayerNorm[] = {1.22159476,
                                    0.5,
                                    -0.729614208,
                                    0.0760343333,
                                    -0.243816829,
                                    1.82319865,
                                    0,
                                    0.168781902,
                                    -0.998163722,
                                    0.580381226,
                                    1.17480254,
                                    0.75,
                                    0.352624337,
                                    0.5,
                                    0.120524867,
                                    1.34057185,
                                    0.171837036,
                                    0.957994496,
                                    0,
                                    1.01515471,
                                    0.26825693,
                                    0.994151956,
                                    0.313364655,
                                    0.75};
static const double kSoftmaxMiddle[] = {1.80485139e-35,
                                        0.999993856,
                                        4.24835426e-18,
                                        0.999993856,
                                        4.24835426e-18,
                                        2.61026303e-23,
                                        1,
                                        2.61026303e-23,
                                        1,
                                        6.1441746e-06,
                                        2.61027907e-23,
                                        6.1441746e-06,
                                        4.24835426e-18,
                                        0.999993856,
                                        4.24835426e-18,
                                        4.24835426e-18,
                                        1,
                                        2.61026303e-23,
                                        1,
                                        1,
                                        2.61027907e-23,
                                        6.1441746e-06,
                                        2.61027907e-23,
                                        2.61027907e-23};
static const double kLogSoftmaxLast[] = {-76,
                                         -20,
                                         -56,
                                         -2.06115369e-09,
                                         -20,
                                         -56,
                                         -2.06115391e-09,
                                         -36,
                                         -1.12535169e-07,
                                         -36.0000001,
                                         -72.0000001,
                                         -16.0000001,
                                         -56,
                                         -2.22044605e-16,
                                         -36,
                                         -72,
                                         -20,
                                         -56,
                                         -2.06115391e-09,
                                         -36,
                                         -56,
                                         -2.22044605e-16,
                                         -36,
                                         -72};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// F.max_pool2d(x, 3, 2, 1, ceil_mode=True) with a NaN, which wins its
// windows.
TEST(Pool, MaxCeilModeNaN) {
  Shape sx{4, {1, 2, 6, 7}}, sy{4, {1, 2, 4, 4}};
  const int64_t k[] = {3, 3}, st[] = {2, 2}, pads[] = {1, 1, 1, 1},
                dil[] = {1, 1};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), y(sy.numel());
  x[2 * 7 + 3] = NAN;
  maxPool<float>(sx, sy, x.data(), k, st, pads, dil, y.data());
  expectClose(y, kMaxPool, 0, 0);
}

// F.max_pool1d(x, 3, 3, 1, dilation=2).
TEST(Pool, MaxDilated1d) {
  Shape sx{3, {1, 2, 12}}, sy{3, {1, 2, 4}};
  const int64_t k[] = {3}, st[] = {3}, pads[] = {1, 1}, dil[] = {2};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), y(sy.numel());
  maxPool<float>(sx, sy, x.data(), k, st, pads, dil, y.data());
  expectClose(y, kMaxPool1d, 0, 0);
}

// The gradient of F.max_pool2d(x, 3, 2, 1, ceil_mode=True) on values in
// {-1, 0, 1}: ties go to the first maximum, as in PyTorch's CPU kernel.
TEST(Pool, MaxGradTies) {
  Shape sx{4, {1, 2, 6, 7}}, sy{4, {1, 2, 4, 4}};
  const int64_t k[] = {3, 3}, st[] = {2, 2}, pads[] = {1, 1, 1, 1},
                dil[] = {1, 1};
  std::vector<float> x = ramp(sx, 5, 3, 1, 1), g = ramp(sy, 13, 11, 5, 4);
  std::vector<float> dx(sx.numel());
  maxPoolGrad<float>(sy, sx, g.data(), x.data(), k, st, pads, dil, dx.data());
  expectClose(dx, kMaxPoolGradTies, 0, 0);
}

// The two-dimensional max-pool gradient against its definition (each
// window's gradient to its first strict maximum in tap order, a NaN over any
// number, a later NaN over an earlier one) on values with ties and NaNs, for
// strides, dilations and asymmetric padding.
TEST(Pool, MaxGrad2dMatchesTheDefinition) {
  struct Case {
    int64_t h, w, kh, kw, sh, sw, dh, dw, pads[4];
  };
  const Case cases[] = {{32, 32, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
                        {6, 7, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
                        {9, 11, 2, 3, 1, 3, 2, 1, {0, 2, 1, 0}},
                        {5, 5, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}}};
  for (const Case &c : cases) {
    int64_t oh = (c.h + c.pads[0] + c.pads[2] - c.dh * (c.kh - 1) - 1) / c.sh +
                 1,
            ow = (c.w + c.pads[1] + c.pads[3] - c.dw * (c.kw - 1) - 1) / c.sw +
                 1;
    Shape sx{4, {2, 3, c.h, c.w}}, sy{4, {2, 3, oh, ow}};
    std::vector<float> x = ramp(sx, 5, 3, 1, 1), g = ramp(sy, 13, 11, 5, 4);
    x[7] = NAN;
    x[sx.numel() / 2] = NAN;
    x[sx.numel() / 2 + 1] = NAN;
    std::vector<double> expected(sx.numel(), 0.0);
    for (int64_t plane = 0; plane < 6; ++plane)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t best = -1;
          float max = 0;
          for (int64_t a = 0; a < c.kh; ++a)
            for (int64_t b = 0; b < c.kw; ++b) {
              int64_t r = i * c.sh - c.pads[0] + a * c.dh;
              int64_t q = j * c.sw - c.pads[1] + b * c.dw;
              if (r < 0 || r >= c.h || q < 0 || q >= c.w)
                continue;
              int64_t at = (plane * c.h + r) * c.w + q;
              if (best < 0 || x[at] > max || std::isnan(x[at]))
                best = at, max = x[at];
            }
          if (best >= 0)
            expected[best] += g[(plane * oh + i) * ow + j];
        }
    const int64_t k[] = {c.kh, c.kw}, st[] = {c.sh, c.sw}, dil[] = {c.dh, c.dw};
    std::vector<float> dx(sx.numel(), 7.0f);
    maxPoolGrad<float>(sy, sx, g.data(), x.data(), k, st, c.pads, dil,
                       dx.data());
    for (int64_t i = 0; i < sx.numel(); ++i)
      ASSERT_EQ(dx[i], float(expected[i])) << c.h << "x" << c.w << " at " << i;
  }
}

// F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=...) and its
// gradient: ceil-mode windows past the padded end divide by their taps
// inside it.
TEST(Pool, AverageAndGradient) {
  Shape sx{4, {1, 2, 6, 7}}, sy{4, {1, 2, 4, 4}};
  const int64_t k[] = {3, 3}, st[] = {2, 2}, pads[] = {1, 1, 1, 1},
                dil[] = {1, 1};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), g = ramp(sy, 13, 11, 5, 4);
  for (bool include : {true, false}) {
    std::vector<float> y(sy.numel()), dx(sx.numel());
    avgPool<float>(sx, sy, x.data(), k, st, pads, dil, include, y.data());
    avgPoolGrad<float>(sy, sx, g.data(), k, st, pads, dil, include, dx.data());
    if (include) {
      expectClose(y, kAvgPoolIncl, 1e-6, 1e-7);
      expectClose(dx, kAvgPoolGradIncl, 1e-6, 1e-7);
    } else {
      expectClose(y, kAvgPoolExcl, 1e-6, 1e-7);
      expectClose(dx, kAvgPoolGradExcl, 1e-6, 1e-7);
    }
  }
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

struct BatchNormInputs {
  Shape sx{4, {3, 2, 2, 2}}, sc{1, {2}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), scale = ramp(sc, 7, 5, 2, 2);
  std::vector<float> bias = ramp(sc, 3, 5, 1, 4), mean = ramp(sc, 5, 7, 3, 8);
  std::vector<float> var = {0.5f, 1.25f}; // ramp(3, 7, 0, 4) + 0.5
};

// F.batch_norm(..., training=False, eps=1e-5).
TEST(BatchNorm, Inference) {
  BatchNormInputs in;
  std::vector<float> y(in.sx.numel());
  batchNormInference<float, float, float, float, float>(
      in.sx, in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(),
      in.var.data(), 1e-5, y.data());
  expectClose(y, kBatchNormInference);
}

// F.batch_norm(..., training=True, momentum=0.1) (ONNX momentum 0.9) with
// PyTorch's unbiased running variance; and the biased update.
TEST(BatchNorm, Training) {
  BatchNormInputs in;
  std::vector<float> y(in.sx.numel()), newMean(2), newVar(2);
  batchNormTraining<float, float, float, float, float>(
      in.sx, in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(),
      in.var.data(), 1e-5, 0.9, true, y.data(), newMean.data(), newVar.data());
  expectClose(y, kBatchNormTraining);
  expectClose(newMean, kBatchNormRunningMean);
  expectClose(newVar, kBatchNormRunningVar);
  batchNormTraining<float, float, float, float, float>(
      in.sx, in.x.data(), in.scale.data(), in.bias.data(), in.mean.data(),
      in.var.data(), 1e-5, 0.9, false, y.data(), newMean.data(), newVar.data());
  expectClose(y, kBatchNormTraining);
  expectClose(newVar, kBatchNormBiasedRunningVar);
}

// Planes of 10 x 10 over 3 images and 5 channels (each channel's sums in
// 8 partial sums): against the definition in double (mean, then the
// biased variance of the centred values), and the running statistics.
TEST(BatchNorm, TrainingLargerPlanes) {
  Shape sx{4, {3, 5, 10, 10}};
  std::vector<float> x(sx.numel()), scale = {0.5f, 1.5f, -1.f, 2.f, 0.25f},
                                    bias = {0.f, 1.f, -2.f, 0.5f, 3.f},
                                    running(5, 0.f), ones(5, 1.f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float((i * 7919) % 1009) / 97.0f - 5.0f + float(i % 5);
  std::vector<float> y(x.size()), newMean(5), newVar(5);
  batchNormTraining<float, float, float, float, float>(
      sx, x.data(), scale.data(), bias.data(), running.data(), ones.data(),
      1e-5, 0.9, true, y.data(), newMean.data(), newVar.data());
  for (int64_t c = 0; c < 5; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t j = 0; j < 100; ++j)
        sum += x[(n * 5 + c) * 100 + j];
    double mean = sum / 300;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t j = 0; j < 100; ++j) {
        double d = x[(n * 5 + c) * 100 + j] - mean;
        squares += d * d;
      }
    double invStd = 1 / std::sqrt(squares / 300 + 1e-5);
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t j = 0; j < 100; ++j) {
        int64_t i = (n * 5 + c) * 100 + j;
        double expected = scale[c] * (x[i] - mean) * invStd + bias[c];
        EXPECT_NEAR(y[i], expected, 1e-6 * (1 + std::fabs(expected))) << i;
      }
    EXPECT_NEAR(newMean[c], 0.1 * mean, 1e-6 * (1 + std::fabs(mean)));
    EXPECT_NEAR(newVar[c], 0.9 + 0.1 * squares / 299, 1e-5);
  }
}

// (x - mean) / sqrt(var + 1e-5) * scale + bias over [3, 4] (axis 1), scale
// [3, 4], bias [4] broadcast.
TEST(LayerNorm, BroadcastBias) {
  Shape sx{3, {2, 3, 4}}, ss{2, {3, 4}}, sb{1, {4}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), s = ramp(ss, 7, 5, 2, 2);
  std::vector<float> b = ramp(sb, 3, 5, 1, 4), y(sx.numel());
  layerNorm<float, float, float>(sx, ss, sb, x.data(), s.data(), b.data(), 1,
                                 1e-5, y.data());
  expectClose(y, kLayerNorm);
}

// Rows normalized 32 or 8 at a time (their sums interleaved) give the bits
// of the definition, row by row: sums in double in order, then
// (x - mean) * invStd * scale + bias rounded once; 77 rows (two groups of
// 32 read in 8 x 8 blocks, one of 8 and 5 alone), with and without a bias,
// scale and bias of the row's shape (read in place) and broadcast.
TEST(LayerNorm, RowsTogetherSameBits) {
  const int64_t rows = 77, n = 37;
  Shape sx{2, {rows, n}}, sv{1, {n}}, s1{1, {1}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 0.37f), s = ramp(sv, 7, 5, 2, 2);
  std::vector<float> b = ramp(sv, 3, 5, 1, 4), one = {1.5f};
  auto definition = [&](const float *scale, bool scaleBroadcast,
                        const float *bias) {
    std::vector<float> y(sx.numel());
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = x.data() + r * n;
      double sum = 0, squares = 0;
      for (int64_t j = 0; j < n; ++j)
        sum += row[j];
      double mean = sum / n;
      for (int64_t j = 0; j < n; ++j)
        squares += (row[j] - mean) * (row[j] - mean);
      double invStd = 1.0 / std::sqrt(squares / n + 1e-5);
      for (int64_t j = 0; j < n; ++j) {
        double v =
            (row[j] - mean) * invStd * double(scale[scaleBroadcast ? 0 : j]);
        if (bias)
          v += bias[j];
        y[r * n + j] = float(v);
      }
    }
    return y;
  };
  std::vector<float> y(sx.numel());
  layerNorm<float, float, float>(sx, sv, sv, x.data(), s.data(), b.data(), 1,
                                 1e-5, y.data());
  EXPECT_EQ(y, definition(s.data(), false, b.data()));
  layerNorm<float, float, float>(sx, sv, sv, x.data(), s.data(), nullptr, 1,
                                 1e-5, y.data());
  EXPECT_EQ(y, definition(s.data(), false, nullptr));
  layerNorm<float, float, float>(sx, s1, sv, x.data(), one.data(), b.data(), 1,
                                 1e-5, y.data());
  EXPECT_EQ(y, definition(one.data(), true, b.data()));
}

// torch.softmax(x, 1) and torch.log_softmax(x, 2) on values up to +-44:
// tiny probabilities keep their relative accuracy.
TEST(Softmax, MiddleAndLastAxis) {
  Shape sx{3, {2, 3, 4}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 0.25), y(sx.numel()),
                     ly(sx.numel());
  softmax<float>(sx, x.data(), 1, y.data());
  expectClose(y, kSoftmaxMiddle, 1e-6, 0);
  logSoftmax<float>(sx, x.data(), 2, ly.data());
  expectClose(ly, kLogSoftmaxLast, 1e-6, 1e-9);
}

// Rows wider than a 64-column tile along a non-last axis sum to 1.
TEST(Softmax, WideInnerTiles) {
  Shape sx{3, {2, 5, 150}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 2), y(sx.numel());
  softmax<float>(sx, x.data(), 1, y.data());
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t j = 0; j < 150; ++j) {
      double sum = 0;
      for (int64_t a = 0; a < 5; ++a)
        sum += y[(o * 5 + a) * 150 + j];
      EXPECT_NEAR(sum, 1.0, 1e-6) << o << ", " << j;
    }
}

// The float exp of the softmax rows: within 3e-7 relative of libm's double
// exp over the whole range it serves, exactly 0 below it, NaN for NaN.
TEST(Softmax, ExpNonPositive) {
  for (double x = -87.2; x <= 0; x += 0.0137) {
    double want = std::exp(double(float(x)));
    EXPECT_NEAR(nndetail::expNonPositive(float(x)) / want, 1.0, 3e-7) << x;
  }
  EXPECT_EQ(nndetail::expNonPositive(0.0f), 1.0f);
  EXPECT_EQ(nndetail::expNonPositive(-90.0f), 0.0f);
  EXPECT_EQ(nndetail::expNonPositive(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(nndetail::expNonPositive(NAN)));
}

// Short rows along the last axis go sixteen at a time across the vector
// lanes (softmaxRowsAcross), the rows past a multiple of sixteen one by one;
// rows of 16 to 128 floats in multiples of 16 one at a time in vectors
// (softmaxRowOfLanes): against the definition in double for every length
// up to 33 and those, with masked (-inf) entries exactly 0, a row of -inf
// and a row holding a NaN all NaN.
TEST(Softmax, ShortRowsAcrossLanes) {
  std::vector<int64_t> sizes = {48, 64, 96, 128};
  for (int64_t size = 1; size <= 33; ++size)
    sizes.push_back(size);
  for (int64_t size : sizes) {
    int64_t rows = 37;
    Shape sx{3, {rows, 1, size}};
    std::vector<float> x = ramp(sx, 37, 23, 11, 4), y(sx.numel()),
                       ly(sx.numel());
    for (int64_t r = 0; size > 1 && r < rows; r += 3)
      x[r * size + (r % size)] = -INFINITY; // one entry masked
    for (int64_t a = 0; a < size; ++a)
      x[5 * size + a] = -INFINITY; // row 5: every entry masked
    x[20 * size + size / 2] = NAN; // row 20
    softmax<float>(sx, x.data(), 2, y.data());
    logSoftmax<float>(sx, x.data(), 2, ly.data());
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * size;
      if (r == 5 || r == 20) {
        for (int64_t a = 0; a < size; ++a)
          ASSERT_TRUE(std::isnan(y[r * size + a]) &&
                      std::isnan(ly[r * size + a]))
              << size << ": row " << r << ", " << a;
        continue;
      }
      double max = -INFINITY, sum = 0;
      for (int64_t a = 0; a < size; ++a)
        max = std::max(max, double(xr[a]));
      for (int64_t a = 0; a < size; ++a)
        sum += std::exp(double(xr[a]) - max);
      for (int64_t a = 0; a < size; ++a) {
        double want = std::exp(double(xr[a]) - max) / sum;
        if (std::isinf(xr[a])) {
          ASSERT_EQ(y[r * size + a], 0.0f) << size << ": row " << r;
          ASSERT_EQ(ly[r * size + a], -INFINITY) << size << ": row " << r;
          continue;
        }
        ASSERT_NEAR(y[r * size + a], want, 1e-6 * want)
            << size << ": row " << r << ", " << a;
        ASSERT_NEAR(ly[r * size + a], std::log(want),
                    1e-6 * std::max(1.0, std::fabs(std::log(want))))
            << size << ": row " << r << ", " << a;
      }
    }
  }
}

// bf16 rows of 16 to 128 in vectors (softmaxRowOfLanes widens and rounds
// each lane): against the definition in double on the bf16 inputs, within
// one bf16 rounding (2^-8 relative, and float arithmetic); masked entries
// exactly 0 (softmax) and -inf (log-softmax).
TEST(Softmax, BFloat16RowsOfLanes) {
  for (int64_t size : {16, 32, 64, 128}) {
    int64_t rows = 9;
    Shape sx{2, {rows, size}};
    std::vector<bf16> x = ramp<bf16>(sx, 37, 23, 11, 4), y(sx.numel()),
                      ly(sx.numel());
    for (int64_t r = 0; r < rows; r += 2)
      x[r * size + (r % size)] = bf16(-INFINITY);
    softmax<bf16>(sx, x.data(), 1, y.data());
    logSoftmax<bf16>(sx, x.data(), 1, ly.data());
    for (int64_t r = 0; r < rows; ++r) {
      double max = -INFINITY, sum = 0;
      for (int64_t a = 0; a < size; ++a)
        max = std::max(max, double(float(x[r * size + a])));
      for (int64_t a = 0; a < size; ++a)
        sum += std::exp(double(float(x[r * size + a])) - max);
      for (int64_t a = 0; a < size; ++a) {
        double v = double(float(x[r * size + a]));
        float got = y[r * size + a], gotLog = ly[r * size + a];
        if (std::isinf(v)) {
          ASSERT_EQ(got, 0.0f) << size << ": row " << r;
          ASSERT_EQ(gotLog, -INFINITY) << size << ": row " << r;
          continue;
        }
        double want = std::exp(v - max) / sum,
               wantLog = (v - max) - std::log(sum);
        ASSERT_NEAR(got, want, want / 200)
            << size << ": row " << r << ", " << a;
        ASSERT_NEAR(gotLog, wantLog, std::max(1e-6, std::fabs(wantLog) / 200))
            << size << ": row " << r << ", " << a;
      }
    }
  }
}

// Softmax along the last axis (the float row path) of long rows with masked
// (-inf) entries, against the definition in double: masked entries are
// exactly 0, the others within 1e-6 relative; a row holding a NaN is NaN.
TEST(Softmax, LastAxisRowsMaskedAndNaN) {
  Shape sx{2, {3, 300}};
  std::vector<float> x = ramp(sx, 37, 23, 11, 4), y(sx.numel()), ly(sx.numel());
  for (int64_t j = 200; j < 300; ++j)
    x[j] = -INFINITY; // row 0: the last 100 masked
  x[300 + 7] = NAN;   // row 1
  softmax<float>(sx, x.data(), 1, y.data());
  logSoftmax<float>(sx, x.data(), 1, ly.data());
  for (int64_t row : {0, 2}) {
    const float *xr = x.data() + row * 300;
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < 300; ++j)
      max = std::max(max, double(xr[j]));
    for (int64_t j = 0; j < 300; ++j)
      sum += std::exp(double(xr[j]) - max);
    for (int64_t j = 0; j < 300; ++j) {
      double want = std::exp(double(xr[j]) - max) / sum;
      if (std::isinf(xr[j])) {
        EXPECT_EQ(y[row * 300 + j], 0.0f) << row << ", " << j;
        continue;
      }
      EXPECT_NEAR(y[row * 300 + j], want, 1e-6 * want) << row << ", " << j;
      EXPECT_NEAR(ly[row * 300 + j], std::log(want),
                  1e-6 * std::max(1.0, std::fabs(std::log(want))))
          << row << ", " << j;
    }
  }
  for (int64_t j = 0; j < 300; ++j)
    EXPECT_TRUE(std::isnan(y[300 + j])) << j;
}

} // namespace
