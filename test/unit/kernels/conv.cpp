//===- conv.cpp - tests of the convolution kernels ------------------------===//
//
// conv, conv_input_grad and conv_weight_grad (runtime/include/dtcrt/kernels/
// Conv.h) against values PyTorch 1.13 computes in float64 on ramp() inputs
// and against the definition summed in double: im2col, the direct
// depthwise kernels and oneDNN (float and bf16), at several thread counts.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"
#include "dtcrt/kernels/NN.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace dtck;
using namespace kerneltest;

namespace {

static const double kConv2d[] = {
    -0.625,   -1.96875, -1.15625, -1.0625,  0.8125,   -5.375,  -3.90625,
    -3.15625, -0.25,    2.25,     -6.375,   -1.875,   -0.25,   -0.78125,
    1.9375,   3.8125,   3.25,     -3.78125, -2.90625, 0.3125,  0.1875,
    1.03125,  1.15625,  -5.90625, 0.4375,   2.0625,   3.03125, -3.1875,
    -2.9375,  0.6875,   1.1875,   -0.03125, -1.96875, -1.75,   3.78125,
    1.53125,  0.3125,   1.25,     1.46875,  2.375,    -1,      -2.84375,
    1.78125,  1.375,    2.625,    -0.875,   0.75,     0.9375,  4,
    -4.625,   -2.15625, 6.6875,   -1,       -4.375,   -1.8125, 2.125,
    -2.21875, -0.8125,  -3.71875, 1.78125};
static const double kConv2dInputGrad[] = {
    2.125,   0.875,   1.875,   1.875,   -3.625,  -0.875,  -1.1875, 2.5,
    4.6875,  4,       -7,      -2.25,   -2.75,   1.5,     3.25,    1.875,
    -3.625,  -1.5,    -4.75,   3.75,    4.6875,  4,       -2.1875, -3.5,
    -2.125,  2.125,   1.875,   1.875,   1.875,   -2.125,  1.75,    1.25,
    -3,      -3.875,  0.75,    1.3125,  -0.25,   2.875,   -2.5625, -7.0625,
    2.1875,  2.9375,  -1.4375, 1.5,     0.875,   -3.4375, 1.1875,  1.5,
    -2.5,    3.375,   2.4375,  -6.1875, -3.125,  3.3125,  -1.1875, 1.75,
    2,       -3,      -3.875,  1.6875,  1.6875,  1.0625,  0.25,    -3.625,
    -4.75,   1.75,    -0.9375, 0.1875,  1.3125,  -2,      -3.9375, -0.25,
    2,       1.375,   0.8125,  -0.3125, -4.1875, -1.4375, -1.5,    -0.375,
    1.25,    1.375,   -4,      -2.5,    2.3125,  1.6875,  1.375,   0.25,
    -3.625,  -1.1875, 1.125,   1.25,    0.625,   -3.8125, -3.4375, 1.375,
    2.3125,  2.5625,  1.3125,  -3.4375, -6.8125, 0.6875,  1.0625,  1.1875,
    0.4375,  0.8125,  -3.625,  -0.125,  2.1875,  2.4375,  0.9375,  1.6875,
    -7.1875, -0.25,   1,       1.125,   0.25,    0.625,   -3.8125, -0.25};
static const double kConv2dWeightGrad[] = {
    1.5625,   0.53125,  0.5,      2.65625,  0.5,      -2.8125,  0.28125,
    -0.59375, 1.875,    0.75,     -3.125,   1.96875,  -2.8125,  3,
    2.625,    -2.0625,  -0.09375, 3.4375,   2.9375,   -0.03125, -1.3125,
    -1.84375, 3.3125,   -1.59375, -3.59375, -0.5,     1.09375,  1.6875,
    -0.0625,  1.4375,   -0.15625, 0.3125,   -1.59375, -2.34375, 1.75,
    0.96875,  1.625,    -0.125,   1.78125,  0.78125,  1.375,    -0.25,
    -0.03125, -1.65625, 1.78125,  0.6875,   0.15625,  -1};
static const double kConv1d[] = {
    3.09375, -0.625,  -2.375,   -1.25,   -2.375,  1.71875, 1.3125,   0.1875,
    -0.125,  2.875,   2.625,    -1.9375, 2.59375, -0.25,   -2.125,   1.75,
    -5.6875, -1.25,   2.75,     -4.75,   4.46875, 0.1875,  -4.53125, 2.96875,
    4.53125, -1.9375, -2.90625, 4.75,    -4.4375, 1.75,    2.75,     -4.875};
static const double kConv1dInputGrad[] = {
    1.5625,  0, 0.5,     0, 0.625,   0, 3.3125, 0, -2.3125,
    1.375,   0, 0.3125,  0, 0.625,   0, -3.5,   0, 3.9375,
    1.1875,  0, 0.125,   0, 0.625,   0, 2.75,   0, -2.875,
    3.25,    0, -3.6875, 0, 1.9375,  0, -2.125, 0, -1.3125,
    -3.1875, 0, 2.5625,  0, -4.6875, 0, -2.125, 0, -0.9375,
    3.4375,  0, -4.25,   0, 1.75,    0, -2.125, 0, -0.5625};
static const double kConv1dWeightGrad[] = {
    1.0625,  1.21875, 1.25,     -0.59375, 1.71875,  -2.5625,  -0.8125, -2.09375,
    1.53125, -2.5,    -2.21875, 1.375,    1.53125,  -0.0625,  1.375,   1.25,
    -0.0625, 1.375,   0.46875,  -1.53125, -2.28125, -1.84375, 2.28125, 1.53125,
    1.59375, -1.8125, -2.5625,  0.6875,   0.875,    0.25,     0.28125, -1.21875,
    0.3125,  -0.125,  -1.15625, 0.375};
static const double kConv3d[] = {
    -0.34375,  -3.78125,  3.9375,   3.15625,   -1,       -1.78125, -1.8125,
    -0.46875,  -0.5,      19.8125,  -13.09375, 6.75,     -14.0625, 20.59375,
    -8.9375,   7.59375,   -4.375,   5.9375,    -2.03125, 9.625,    -8.6875,
    -7.15625,  -10.59375, 5.8125,   -0.1875,   2.9375,   -3.09375, -13.09375,
    3.59375,   -4,        20.59375, -10.875,   2.59375,  -4.375,   6.65625,
    -2.0625,   -1.28125,  2.65625,  -2.96875,  -4.21875, -1,       -1,
    2.90625,   -1.40625,  -0.34375, -8.78125,  16.09375, -6.28125, 5.90625,
    -10.90625, 6.15625,   -5.25,    3.8125,    -3.46875, -4.25,    -3.09375,
    8.03125,   11.875,    -2.0625,  -3.96875,  -5.03125, -3.15625, 1.9375,
    16.09375,  -10.0625,  1.5,      -10.90625, 10.375,   -4.75,    3.8125,
    -5.09375,  3.75};
static const double kConv1x1[] = {
    -0.1875, -2.15625, 3.0625,  -4.65625, 0.375,    2.375,  -2.09375, 2.0625,
    2.0625,  -5.65625, -0.4375, 4.0625,   -2.21875, 1.9375, -2.53125, -1.96875};
static const double kConv1x1InputGrad[] = {
    3.1875, 2.3125, 0.0625,  -0.8125, -1.625,  -2.375,  1.6875,  0.9375,
    3.0625, 2.4375, -0.25,   -0.875,  -0.375,  -1.25,   -2.125,  3.1875,
    1.3125, 0.5625, -0.1875, -1.625,  -0.5625, -1.1875, -1.8125, 3.0625};
static const double kConv1x1WeightGrad[] = {3.875,    1.6875,   0.9375,
                                            -0.96875, -1.78125, 1};

// F.conv2d(F.pad(x, (0, 1, 1, 2)), w, bias, stride=(2, 1), dilation=(1, 2),
// groups=2) and its input and weight gradients for g = ramp(13, 11, 5, 4).
TEST(Conv, TwoDimensionalGroupedWithGradients) {
  Shape sx{4, {1, 4, 5, 6}}, sw{4, {4, 2, 3, 2}}, sy{4, {1, 4, 3, 5}};
  const int64_t strides[] = {2, 1}, pads[] = {1, 0, 2, 1}, dil[] = {1, 2};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), w = ramp(sw, 29, 19, 9, 4);
  std::vector<float> bias = ramp(Shape{1, {4}}, 7, 5, 2, 2), y(sy.numel());
  conv<float>(sx, sw, sy, x.data(), w.data(), bias.data(), strides, pads, dil,
              2, y.data());
  expectClose(y, kConv2d, 1e-6, 1e-6);

  std::vector<float> g = ramp(sy, 13, 11, 5, 4), dx(sx.numel()), dw(sw.numel());
  convInputGrad<float>(sy, sw, sx, g.data(), w.data(), strides, pads, dil, 2,
                       dx.data());
  expectClose(dx, kConv2dInputGrad, 1e-6, 1e-6);
  convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), strides, pads, dil, 2,
                        dw.data());
  expectClose(dw, kConv2dWeightGrad, 1e-6, 1e-6);
}

// F.conv1d(F.pad(x, (2, 1)), w, bias, stride=2, dilation=2): positions no
// window reads get a zero input gradient.
TEST(Conv, OneDimensionalWithGradients) {
  Shape sx{3, {2, 3, 9}}, sw{3, {4, 3, 3}}, sy{3, {2, 4, 4}};
  const int64_t strides[] = {2}, pads[] = {2, 1}, dil[] = {2};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), w = ramp(sw, 29, 19, 9, 4);
  std::vector<float> bias = ramp(Shape{1, {4}}, 7, 5, 2, 2), y(sy.numel());
  conv<float>(sx, sw, sy, x.data(), w.data(), bias.data(), strides, pads, dil,
              1, y.data());
  expectClose(y, kConv1d, 1e-6, 1e-6);
  std::vector<float> g = ramp(sy, 13, 11, 5, 4), dx(sx.numel()), dw(sw.numel());
  convInputGrad<float>(sy, sw, sx, g.data(), w.data(), strides, pads, dil, 1,
                       dx.data());
  expectClose(dx, kConv1dInputGrad, 1e-6, 1e-6);
  convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), strides, pads, dil, 1,
                        dw.data());
  expectClose(dw, kConv1dWeightGrad, 1e-6, 1e-6);
}

// F.conv3d(F.pad(x, (0, 1, 0, 1, 1, 0)), w) in double.
TEST(Conv, ThreeDimensionalDouble) {
  Shape sx{5, {1, 2, 4, 3, 4}}, sw{5, {2, 2, 2, 2, 3}}, sy{5, {1, 2, 4, 3, 3}};
  const int64_t strides[] = {1, 1, 1}, pads[] = {1, 0, 0, 0, 1, 1},
                dil[] = {1, 1, 1};
  std::vector<double> x = ramp<double>(sx, 37, 23, 11, 8);
  std::vector<double> w = ramp<double>(sw, 29, 19, 9, 4), y(sy.numel());
  conv<double>(sx, sw, sy, x.data(), w.data(), nullptr, strides, pads, dil, 1,
               y.data());
  expectClose(y, kConv3d, 1e-12, 1e-12);
}

// A 1x1 convolution (im2col is the input itself) and its gradients.
TEST(Conv, PointwiseWithGradients) {
  Shape sx{4, {2, 3, 2, 2}}, sw{4, {2, 3, 1, 1}}, sy{4, {2, 2, 2, 2}};
  const int64_t ones[] = {1, 1}, zeros[] = {0, 0, 0, 0};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), w = ramp(sw, 29, 19, 9, 4);
  std::vector<float> bias = ramp(Shape{1, {2}}, 7, 5, 2, 2), y(sy.numel());
  conv<float>(sx, sw, sy, x.data(), w.data(), bias.data(), ones, zeros, ones, 1,
              y.data());
  expectClose(y, kConv1x1, 1e-6, 1e-6);
  std::vector<float> g = ramp(sy, 13, 11, 5, 4), dx(sx.numel()), dw(sw.numel());
  convInputGrad<float>(sy, sw, sx, g.data(), w.data(), ones, zeros, ones, 1,
                       dx.data());
  expectClose(dx, kConv1x1InputGrad, 1e-6, 1e-6);
  convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), ones, zeros, ones, 1,
                        dw.data());
  expectClose(dw, kConv1x1WeightGrad, 1e-6, 1e-6);
}

/// A convolution's geometry over two spatial dimensions: input h x w,
/// kernel kh x kw, strides, dilations, pads (top, left, bottom, right).
struct Geometry {
  int64_t h, w, kh, kw, sh, sw, dh, dw, pads[4];
  int64_t outH() const {
    return (h + pads[0] + pads[2] - dh * (kh - 1) - 1) / sh + 1;
  }
  int64_t outW() const {
    return (w + pads[1] + pads[3] - dw * (kw - 1) - 1) / sw + 1;
  }
};

// Windows over two spatial dimensions build their tap table from row and
// column offsets: the general construction's table, entry for entry, for
// strides, dilations and paddings on either side, and windows that read
// padding only.
TEST(Conv, PlanarTapTableMatchesTheGeneralOne) {
  const Geometry cases[] = {
      {5, 6, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}},
      {4, 4, 2, 3, 3, 2, 2, 1, {2, 0, 1, 4}},
      {2, 3, 3, 3, 1, 1, 1, 1, {3, 3, 3, 3}},
  };
  for (const Geometry &c : cases) {
    int64_t oh = c.outH(), ow = c.outW();
    Shape sx{4, {1, 2, c.h, c.w}}, sy{4, {1, 2, oh, ow}};
    const int64_t kernel[] = {c.kh, c.kw}, strides[] = {c.sh, c.sw},
                  dil[] = {c.dh, c.dw}, inStride[] = {c.w, 1};
    nndetail::Window win(sx, sy, kernel, strides, c.pads, dil);
    std::vector<int64_t> planar = win.taps;
    std::fill(win.taps.begin(), win.taps.end(), -7);
    win.generalTaps(sx, sy, kernel, strides, c.pads, dil, inStride);
    ASSERT_EQ(planar, win.taps) << c.h << "x" << c.w;
  }
}

/// Runs conv, convInputGrad and convWeightGrad (with a bias) of geometry
/// `c` over `batch` images of `channels` channels into `filters` filters in
/// `group` groups at 1, 2 and 3 threads, and holds them against the
/// definition summed in double.
template <typename T = float>
void expectConvMatchesTheDefinition(const Geometry &c, int64_t batch,
                                    int64_t channels, int64_t filters,
                                    int64_t group) {
  int64_t oh = c.outH(), ow = c.outW();
  int64_t cg = channels / group, fg = filters / group;
  Shape sx{4, {batch, channels, c.h, c.w}}, sw{4, {filters, cg, c.kh, c.kw}},
      sy{4, {batch, filters, oh, ow}};
  const int64_t strides[] = {c.sh, c.sw}, dil[] = {c.dh, c.dw};
  std::vector<T> x = ramp<T>(sx, 37, 23, 11, 8), w = ramp<T>(sw, 29, 19, 9, 4);
  std::vector<T> bias = ramp<T>(Shape{1, {filters}}, 7, 5, 2, 2);
  std::vector<T> g = ramp<T>(sy, 13, 11, 5, 4);
  auto v = [](T e) { return double(float(e)); };
  // The definition: output (n, f, i, j) reads input row i * sh - top +
  // a * dh and column j * sw - left + b * dw of the channels of f's group,
  // for tap (a, b).
  std::vector<double> y0(sy.numel()), dx0(sx.numel(), 0), dw0(sw.numel(), 0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < filters; ++f)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t out = ((n * filters + f) * oh + i) * ow + j;
          double sum = v(bias[f]);
          for (int64_t k = 0; k < cg; ++k)
            for (int64_t a = 0; a < c.kh; ++a)
              for (int64_t b = 0; b < c.kw; ++b) {
                int64_t r = i * c.sh - c.pads[0] + a * c.dh;
                int64_t q = j * c.sw - c.pads[1] + b * c.dw;
                if (r < 0 || r >= c.h || q < 0 || q >= c.w)
                  continue;
                int64_t ch = (f / fg) * cg + k;
                int64_t in = ((n * channels + ch) * c.h + r) * c.w + q;
                int64_t tap = ((f * cg + k) * c.kh + a) * c.kw + b;
                sum += v(w[tap]) * v(x[in]);
                dx0[in] += v(w[tap]) * v(g[out]);
                dw0[tap] += v(g[out]) * v(x[in]);
              }
          y0[out] = sum;
        }
  for (int threads : {1, 2, 3}) {
    std::vector<T> y(sy.numel()), dx(sx.numel()), dw(sw.numel());
    // bf16 results are rounded once: within half a bf16 ulp (2^-9).
    double tolerance = std::is_same_v<T, float> ? 1e-5 : 4e-3;
    withThreads(threads, [&] {
      conv<T>(sx, sw, sy, x.data(), w.data(), bias.data(), strides, c.pads, dil,
              group, y.data());
      convInputGrad<T>(sy, sw, sx, g.data(), w.data(), strides, c.pads, dil,
                       group, dx.data());
      convWeightGrad<T>(sy, sx, sw, g.data(), x.data(), strides, c.pads, dil,
                        group, dw.data());
    });
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(v(y[i]), y0[i], tolerance * (1 + std::fabs(y0[i])))
          << c.h << "x" << c.w << ", " << threads << " threads, y " << i;
    for (size_t i = 0; i < dx.size(); ++i)
      ASSERT_NEAR(v(dx[i]), dx0[i], tolerance * (1 + std::fabs(dx0[i])))
          << c.h << "x" << c.w << ", " << threads << " threads, dx " << i;
    for (size_t i = 0; i < dw.size(); ++i)
      ASSERT_NEAR(v(dw[i]), dw0[i], tolerance * (1 + std::fabs(dw0[i])))
          << c.h << "x" << c.w << ", " << threads << " threads, dw " << i;
  }
}

// Depthwise convolutions (one channel and one filter per group) take direct
// kernels (over a padded plane at unit strides, row by row otherwise):
// against the definition summed in double, for strides, dilations and
// paddings on either side, at several thread counts.
TEST(Conv, DepthwiseMatchesTheDefinition) {
  const Geometry cases[] = {
      {9, 9, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {8, 11, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
      {7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}},
      {5, 4, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}},
      {7, 9, 3, 2, 1, 1, 2, 3, {0, 2, 3, 1}},
      {6, 5, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}},
  };
  for (const Geometry &c : cases)
    expectConvMatchesTheDefinition(c, 2, 5, 5, 5);
}

// Depthwise convolutions go to oneDNN where it has a JIT kernel (else, and
// under DTCK_CONV=im2col, to the direct kernels: conv.test runs every case
// both ways): MobileNetV2's geometries (3 x 3 at strides 1 and 2, planes of
// 16 x 16 down to 2 x 2) over 24 and 40 channels, float and bf16, against
// the definition at 1, 2 and 3 threads.
TEST(Conv, DepthwiseLibraryMatchesTheDefinition) {
  const Geometry cases[] = {
      {16, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {16, 16, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
      {4, 4, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {2, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
  };
  for (const Geometry &c : cases) {
    expectConvMatchesTheDefinition(c, 2, 24, 24, 24);
    expectConvMatchesTheDefinition(c, 3, 40, 40, 40);
    expectConvMatchesTheDefinition<bf16>(c, 2, 24, 24, 24);
  }
  // Where the library runs: noted, not required.
  Shape sx{4, {2, 24, 16, 16}}, sw{4, {24, 1, 3, 3}}, sy{4, {2, 24, 16, 16}};
  const int64_t strides[] = {1, 1}, pads[] = {1, 1, 1, 1}, dil[] = {1, 1};
  std::printf("oneDNN depthwise convolution: %s\n",
              nndetail::convLibraryFor(nndetail::ConvPass::Forward, sx, sw, sy,
                                       strides, pads, dil, 24)
                  ? "used"
                  : "not available here");
}

// Small planes (at most 64 outputs) with 16 channels or more take the
// channel-blocked depthwise weight gradient (16 channels across the lanes;
// 37 channels: two blocks and 5 lanes of a third): against the definition
// at 1, 2 and 3 threads, and the same bits at every thread count (each
// channel sums in an order of its own).
TEST(Conv, DepthwiseWeightGradSmallPlanes) {
  const Geometry cases[] = {
      {2, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {4, 4, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {16, 16, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
      {7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}},
      {5, 4, 3, 3, 1, 1, 2, 2, {2, 1, 0, 2}},
  };
  for (const Geometry &c : cases) {
    expectConvMatchesTheDefinition(c, 3, 37, 37, 37);
    Shape sx{4, {3, 37, c.h, c.w}}, sw{4, {37, 1, c.kh, c.kw}},
        sy{4, {3, 37, c.outH(), c.outW()}};
    const int64_t strides[] = {c.sh, c.sw}, dil[] = {c.dh, c.dw};
    std::vector<float> x = ramp<float>(sx, 37, 23, 11, 8.3f),
                       g = ramp<float>(sy, 13, 11, 5, 4.7f);
    std::vector<float> one(sw.numel()), two(sw.numel());
    withThreads(1, [&] {
      convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), strides, c.pads,
                            dil, 37, one.data());
    });
    withThreads(2, [&] {
      convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), strides, c.pads,
                            dil, 37, two.data());
    });
    EXPECT_EQ(one, two) << c.h << "x" << c.w;
  }
}

// Short output rows take the channel-blocked depthwise kernels (channels
// last, one vector operation per tap across 16 channels), which sum each
// output and input gradient in the plane-by-plane kernels' order: the same
// bits, on values whose sums round (a ramp's exact fractions would agree in
// any order), for strides, dilations, paddings on either side, channel
// counts below, at and past a block, and 1 or 2 threads.
TEST(Conv, DepthwiseByChannelsIsByPlanesBitForBit) {
  const Geometry cases[] = {
      {4, 4, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {8, 8, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
      {2, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}},
      {7, 9, 3, 2, 1, 1, 2, 3, {0, 2, 3, 1}},
      {5, 4, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}},
      {6, 5, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}},
  };
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(int32_t(state >> 8) - (1 << 23)) / float(1 << 23) * 1.7f;
  };
  for (const Geometry &c : cases)
    for (int64_t channels : {5, 16, 37}) {
      int64_t batch = 3;
      Shape sx{4, {batch, channels, c.h, c.w}},
          sw{4, {channels, 1, c.kh, c.kw}},
          sy{4, {batch, channels, c.outH(), c.outW()}};
      const int64_t strides[] = {c.sh, c.sw}, dil[] = {c.dh, c.dw};
      nndetail::Planar g(sx, sy, sw.dims + 2, strides, c.pads, dil);
      std::vector<float> x(sx.numel()), w(sw.numel()), gy(sy.numel());
      for (float &v : x)
        v = next();
      for (float &v : w)
        v = next();
      for (float &v : gy)
        v = next();
      for (int threads : {1, 2}) {
        std::vector<float> y0(sy.numel()), y1(sy.numel(), 7.0f),
            dx0(sx.numel()), dx1(sx.numel(), 7.0f);
        withThreads(threads, [&] {
          nndetail::depthwiseConvByPlanes(g, batch * channels, channels,
                                          x.data(), w.data(), y0.data());
          nndetail::depthwiseConvByChannels(g, batch, channels, x.data(),
                                            w.data(), y1.data());
          nndetail::depthwiseConvInputGradByPlanes(
              g, batch * channels, channels, gy.data(), w.data(), dx0.data());
          nndetail::depthwiseConvInputGradByChannels(
              g, batch, channels, gy.data(), w.data(), dx1.data());
        });
        ASSERT_EQ(std::memcmp(y0.data(), y1.data(), y0.size() * 4), 0)
            << c.h << "x" << c.w << " stride " << c.sh << ", " << channels
            << " channels, " << threads << " threads: forward";
        ASSERT_EQ(std::memcmp(dx0.data(), dx1.data(), dx0.size() * 4), 0)
            << c.h << "x" << c.w << " stride " << c.sh << ", " << channels
            << " channels, " << threads << " threads: input gradient";
      }
    }
}

// Convolutions of one group take oneDNN's convolution primitives where it
// has a JIT kernel for them (ConvLibrary.h; the input gradient from 8
// channels up), im2col otherwise: against the definition, for strides,
// dilations and paddings on either side, and channel counts that are and
// are not multiples of oneDNN's blocks.
TEST(Conv, LibraryMatchesTheDefinition) {
  const Geometry cases[] = {
      {9, 9, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}},
      {8, 11, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},
      {7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}},
      {10, 10, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}},
      {7, 9, 3, 2, 1, 1, 2, 3, {0, 2, 3, 1}},
      {6, 5, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}},
  };
  for (const Geometry &c : cases) {
    expectConvMatchesTheDefinition(c, 2, 16, 16, 1);
    expectConvMatchesTheDefinition(c, 3, 3, 8, 1);
    expectConvMatchesTheDefinition(c, 2, 12, 20, 1);
    // bf16 operands (oneDNN's bf16 kernels on CPUs with AVX512_BF16).
    expectConvMatchesTheDefinition<bf16>(c, 2, 16, 16, 1);
    expectConvMatchesTheDefinition<bf16>(c, 2, 12, 20, 1);
  }
  // Where the library runs: noted, not required (a CPU without a JIT
  // kernel keeps im2col, which the cases above then check).
  Shape sx{4, {2, 16, 9, 9}}, sw{4, {16, 16, 3, 3}}, sy{4, {2, 16, 9, 9}};
  const int64_t strides[] = {1, 1}, pads[] = {1, 1, 1, 1}, dil[] = {1, 1};
  std::printf("oneDNN convolution: %s; bf16: %s\n",
              nndetail::convLibraryFor(nndetail::ConvPass::Forward, sx, sw, sy,
                                       strides, pads, dil, 1)
                  ? "used"
                  : "not available here",
              nndetail::convLibraryFor(nndetail::ConvPass::Forward, sx, sw, sy,
                                       strides, pads, dil, 1, dnnl_bf16)
                  ? "used"
                  : "not available here");
}

// Float convolutions whose weight is at least 32 times their output (16
// for the weight gradient) take one product over the batch (the images' im2col
// columns side by side): against the definition at 1, 2 and 3 threads, for
// strides, dilations, asymmetric padding and a 1 x 1 kernel (no im2col).
TEST(Conv, BatchedColumnsMatchTheDefinition) {
  struct Case {
    Geometry g;
    int64_t channels, filters;
  };
  const Case cases[] = {
      {{2, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 64, 64},
      {{4, 4, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}}, 32, 48},
      {{7, 9, 3, 2, 2, 3, 1, 2, {0, 2, 3, 1}}, 192, 96},
      {{2, 2, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 320, 8},
  };
  for (const Case &c : cases) {
    int64_t batch = 2;
    Shape sw{4, {c.filters, c.channels, c.g.kh, c.g.kw}},
        sy{4, {batch, c.filters, c.g.outH(), c.g.outW()}};
    for (auto pass :
         {nndetail::ConvPass::Forward, nndetail::ConvPass::InputGrad,
          nndetail::ConvPass::WeightGrad}) {
      EXPECT_TRUE(nndetail::batchedColumns<float>(pass, sw, sy, 1));
      EXPECT_FALSE(nndetail::batchedColumns<bf16>(pass, sw, sy, 1));
    }
    expectConvMatchesTheDefinition(c.g, batch, c.channels, c.filters, 1);
  }
}

// Convolutions of a batch of 4: images across threads (the weight gradient
// summing per-thread partials) or products split across threads; every
// thread count agrees with one thread.
TEST(Conv, BatchAcrossThreads) {
  Shape sx{4, {4, 6, 9, 9}}, sw{4, {8, 3, 3, 3}}, sy{4, {4, 8, 5, 5}};
  const int64_t strides[] = {2, 2}, pads[] = {1, 1, 1, 1}, dil[] = {1, 1};
  std::vector<float> x = ramp(sx, 37, 23, 11, 8), w = ramp(sw, 29, 19, 9, 4);
  std::vector<float> g = ramp(sy, 13, 11, 5, 4);
  std::vector<float> y1, dx1, dw1;
  for (int threads : {1, 2, 3, 5}) {
    std::vector<float> y(sy.numel()), dx(sx.numel()), dw(sw.numel());
    withThreads(threads, [&] {
      conv<float>(sx, sw, sy, x.data(), w.data(), nullptr, strides, pads, dil,
                  2, y.data());
      convInputGrad<float>(sy, sw, sx, g.data(), w.data(), strides, pads, dil,
                           2, dx.data());
      convWeightGrad<float>(sy, sx, sw, g.data(), x.data(), strides, pads, dil,
                            2, dw.data());
    });
    if (threads == 1) {
      y1 = y, dx1 = dx, dw1 = dw;
      continue;
    }
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], y1[i], 1e-5) << threads << " threads, " << i;
    for (size_t i = 0; i < dx.size(); ++i)
      ASSERT_NEAR(dx[i], dx1[i], 1e-5) << threads << " threads, " << i;
    for (size_t i = 0; i < dw.size(); ++i)
      ASSERT_NEAR(dw[i], dw1[i], 1e-5) << threads << " threads, " << i;
  }
}

} // namespace
