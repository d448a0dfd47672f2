//===- shape.cpp - tests of dtcrt/kernels/Shape.h -------------------------===//
//
// Expected values follow dialects/DTG/Interp/KernelsShape.cpp; the pad
// tables are numpy.pad's, the triangles numpy.triu/tril's. The gradient
// primitives are checked as adjoints: <forward(x), g> == <x, grad(g)>.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/kernels/Shape.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <numeric>
#include <vector>

using dtck::PadMode;
using dtck::Shape;

namespace {

/// 0, 1, 2, ... as T, `n` of them.
template <typename T = int64_t> std::vector<T> iota(int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = T(i);
  return v;
}

TEST(ShapeTest, TransposeMatchesNaiveIndexing) {
  Shape in{4, {2, 3, 4, 5}}, out{4, {5, 4, 2, 3}};
  const int64_t perm[] = {3, 2, 0, 1};
  std::vector<int64_t> x = iota(in.numel()), y(out.numel());
  dtck::transpose(in, out, x.data(), perm, y.data());
  for (int64_t a = 0; a < 5; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t d = 0; d < 3; ++d)
          ASSERT_EQ(y[((a * 4 + b) * 2 + c) * 3 + d],
                    x[((c * 3 + d) * 4 + b) * 5 + a]);
  // A large transpose runs in parallel blocks.
  Shape big{2, {100, 300}}, bigT{2, {300, 100}};
  const int64_t swap[] = {1, 0};
  std::vector<float> p = iota<float>(big.numel()), q(big.numel());
  dtck::transpose(big, bigT, p.data(), swap, q.data());
  EXPECT_EQ(q[1 * 100 + 2], p[2 * 300 + 1]);
  EXPECT_EQ(q[299 * 100 + 99], p[99 * 300 + 299]);
}

// A head split, [B, T, H, D] -> [B, H, T, D] with short rows of D: more
// rows than the 256 groups the copy shares among threads, so groups step
// their offsets across every dimension's carry; every thread count gives
// the naive indexing.
TEST(ShapeTest, HeadSplitOfShortRowsMatchesNaiveIndexing) {
  Shape in{4, {3, 37, 5, 3}}, out{4, {3, 5, 37, 3}};
  const int64_t perm[] = {0, 2, 1, 3};
  std::vector<int64_t> x = iota(in.numel());
  for (int threads : {1, 2, 3}) {
    std::vector<int64_t> y(out.numel(), -1);
    omp_set_num_threads(threads);
    dtck::transpose(in, out, x.data(), perm, y.data());
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t h = 0; h < 5; ++h)
        for (int64_t t = 0; t < 37; ++t)
          for (int64_t d = 0; d < 3; ++d)
            ASSERT_EQ(y[((b * 5 + h) * 37 + t) * 3 + d],
                      x[((b * 37 + t) * 5 + h) * 3 + d])
                << threads << " threads";
  }
  omp_set_num_threads(1);
}

TEST(ShapeTest, ConcatAlongAMiddleAxis) {
  Shape a{3, {2, 1, 2}}, b{3, {2, 2, 2}}, out{3, {2, 3, 2}};
  std::vector<int64_t> x = {0, 1, 2, 3}, y = {10, 11, 12, 13, 14, 15, 16, 17};
  std::vector<int64_t> r(12);
  dtck::concat({a, b}, out, {x.data(), y.data()}, 1, r.data());
  EXPECT_EQ(r,
            (std::vector<int64_t>{0, 1, 10, 11, 12, 13, 2, 3, 14, 15, 16, 17}));
}

TEST(ShapeTest, SliceWithNegativeSteps) {
  Shape in{2, {5, 6}}, out{2, {4, 3}};
  const int64_t starts[] = {4, 5}, steps[] = {-1, -2};
  std::vector<int64_t> x = iota(30), y(12);
  dtck::slice(in, out, x.data(), starts, steps, y.data());
  EXPECT_EQ(
      y, (std::vector<int64_t>{29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7}));
}

TEST(ShapeTest, GatherCountsNegativeIndicesFromTheEnd) {
  Shape data{2, {3, 4}}, indices{1, {3}};
  std::vector<float> x = iota<float>(12), y(3 * 3);
  std::vector<int32_t> idx = {-1, 0, 2};
  dtck::gather(data, indices, x.data(), idx.data(), 1, y.data());
  EXPECT_EQ(y, (std::vector<float>{3, 0, 2, 7, 4, 6, 11, 8, 10}));
}

TEST(ShapeDeathTest, GatherIndexOutOfRangeFails) {
  Shape data{2, {3, 4}}, indices{1, {2}};
  std::vector<float> x(12), y(8);
  std::vector<int64_t> idx = {0, 3};
  EXPECT_EXIT(dtck::gather(data, indices, x.data(), idx.data(), 0, y.data()),
              testing::ExitedWithCode(1),
              "gather: index 3 is out of range for axis 0 of size 3 "
              "\\(valid: \\[-3, 3\\)\\)");
}

TEST(ShapeTest, GatherAndScatterElements) {
  Shape data{2, {2, 3}}, indices{2, {2, 2}};
  std::vector<int64_t> x = {1, 2, 3, 4, 5, 6}, idx = {2, 0, -1, 1}, y(4);
  dtck::gatherElements(data, indices, x.data(), idx.data(), 1, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{3, 1, 6, 5}));
  // Repeated targets: the last update wins, or all are added in order.
  std::vector<int64_t> dup = {1, 1, 0, 0}, updates = {10, 20, 30, 40}, r(6);
  using dtck::ScatterReduction;
  dtck::scatterElements(data, indices, x.data(), dup.data(), updates.data(), 1,
                        ScatterReduction::None, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, 20, 3, 40, 5, 6}));
  // The other reductions combine the data with every update in turn
  // (row 0 targets column 1 twice, row 1 column 0 twice).
  dtck::scatterElements(data, indices, x.data(), dup.data(), updates.data(), 1,
                        ScatterReduction::Mul, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, 400, 3, 4800, 5, 6}));
  std::vector<int64_t> mixed = {15, -3, 2, 9};
  dtck::scatterElements(data, indices, x.data(), dup.data(), mixed.data(), 1,
                        ScatterReduction::Max, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, 15, 3, 9, 5, 6}));
  dtck::scatterElements(data, indices, x.data(), dup.data(), mixed.data(), 1,
                        ScatterReduction::Min, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, -3, 3, 2, 5, 6}));
  dtck::scatterElements(data, indices, x.data(), dup.data(), updates.data(), 1,
                        ScatterReduction::Add, r.data());
  EXPECT_EQ(r, (std::vector<int64_t>{1, 32, 3, 74, 5, 6}));
  // In place on the data.
  dtck::scatterElements(data, indices, x.data(), dup.data(), updates.data(), 1,
                        ScatterReduction::Add, x.data());
  EXPECT_EQ(x, r);
}

TEST(ShapeDeathTest, ElementIndicesOutOfRangeFail) {
  Shape data{2, {2, 3}}, indices{2, {1, 2}};
  std::vector<float> x(6), y(2), u(2);
  std::vector<int64_t> idx = {0, -4};
  EXPECT_EXIT(dtck::scatterElements(data, indices, x.data(), idx.data(),
                                    u.data(), 1, dtck::ScatterReduction::Add,
                                    x.data()),
              testing::ExitedWithCode(1),
              "scatter_elements: index -4 is out of range for axis 1");
}

TEST(ShapeTest, BroadcastAndTile) {
  std::vector<int64_t> x = {1, 2, 3}, y(2 * 3 * 4);
  dtck::broadcast(Shape{2, {3, 1}}, Shape{3, {2, 3, 4}}, x.data(), y.data());
  for (int64_t i = 0; i < 24; ++i)
    ASSERT_EQ(y[i], x[(i / 4) % 3]) << i;
  std::vector<int64_t> t(2 * 6);
  std::vector<int64_t> m = {1, 2, 3, 4, 5, 6};
  dtck::tile(Shape{2, {2, 3}}, Shape{2, {2, 6}}, m.data(), t.data());
  EXPECT_EQ(t, (std::vector<int64_t>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  std::vector<int64_t> t2(4 * 3);
  dtck::tile(Shape{2, {2, 3}}, Shape{2, {4, 3}}, m.data(), t2.data());
  EXPECT_EQ(t2, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(ShapeTest, PadModesMatchNumpy) {
  Shape in{2, {3, 4}}, out{2, {6, 7}};
  const int64_t low[] = {1, 2};
  std::vector<int64_t> x = iota(12), y(42);
  dtck::pad(in, out, x.data(), low, PadMode::Reflect, 0.0, y.data());
  EXPECT_EQ(
      y, (std::vector<int64_t>{6, 5, 4, 5, 6, 7, 6, 2,  1, 0, 1, 2,  3,  2,
                               6, 5, 4, 5, 6, 7, 6, 10, 9, 8, 9, 10, 11, 10,
                               6, 5, 4, 5, 6, 7, 6, 2,  1, 0, 1, 2,  3,  2}));
  dtck::pad(in, out, x.data(), low, PadMode::Edge, 0.0, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{0,  0,  0, 1,  2,  3,  3,  0,  0, 0, 1,
                                     2,  3,  3, 4,  4,  4,  5,  6,  7, 7, 8,
                                     8,  8,  9, 10, 11, 11, 8,  8,  8, 9, 10,
                                     11, 11, 8, 8,  8,  9,  10, 11, 11}));
  std::vector<float> f = iota<float>(12), g(42);
  dtck::pad(in, out, f.data(), low, PadMode::Constant, -1.5, g.data());
  EXPECT_EQ(g[0], -1.5f);
  EXPECT_EQ(g[7 + 2], 0.0f);
  EXPECT_EQ(g[3 * 7 + 5], 11.0f);
  EXPECT_EQ(g[5 * 7 + 6], -1.5f);
  // Negative amounts crop.
  const int64_t crop[] = {0, -1};
  std::vector<int64_t> c(3 * 5);
  dtck::pad(in, Shape{2, {3, 5}}, x.data(), crop, PadMode::Constant, 9.0,
            c.data());
  EXPECT_EQ(
      c, (std::vector<int64_t>{1, 2, 3, 9, 9, 5, 6, 7, 9, 9, 9, 10, 11, 9, 9}));
}

TEST(ShapeDeathTest, ReflectPadOfAnEmptyDimensionFails) {
  std::vector<float> x(1), y(2);
  const int64_t low[] = {1};
  EXPECT_EXIT(dtck::pad(Shape{1, {0}}, Shape{1, {2}}, x.data(), low,
                        PadMode::Reflect, 0.0, y.data()),
              testing::ExitedWithCode(1),
              "pad: cannot reflect-pad empty dimension 0");
}

TEST(ShapeTest, TriluMatchesNumpy) {
  Shape s{2, {3, 4}};
  std::vector<int64_t> x = iota(12), y(12);
  dtck::trilu(s, x.data(), true, -1, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
  dtck::trilu(s, x.data(), false, 1, y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11}));
  dtck::trilu(s, x.data(), false, -5, x.data()); // in place
  EXPECT_EQ(x, std::vector<int64_t>(12, 0));
}

/// <a, b> in double.
template <typename T>
double dot(const std::vector<T> &a, const std::vector<T> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += double(a[i]) * double(b[i]);
  return s;
}

/// Small integers in float (so dot products are exact).
std::vector<float> pattern(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = float((i * 7 + seed * 3) % 11) - 5.0f;
  return v;
}

TEST(ShapeTest, GatherGradIsTheAdjointOfGather) {
  Shape data{2, {5, 3}}, indices{1, {7}}, gathered{2, {7, 3}};
  std::vector<int64_t> idx = {4, 0, -1, 2, 4, 0, 4};
  std::vector<float> x = pattern(15, 1), g = pattern(21, 2);
  std::vector<float> gx(21), dx(15);
  dtck::gather(data, indices, x.data(), idx.data(), 0, gx.data());
  dtck::gatherGrad(gathered, indices, data, g.data(), idx.data(), 0, dx.data());
  EXPECT_EQ(dot(gx, g), dot(x, dx));
  // Row 0 receives positions 1 and 5; no index names row 1.
  EXPECT_EQ(dx[0], g[1 * 3] + g[5 * 3]);
  EXPECT_EQ(dx[1 * 3], 0.0f);
}

TEST(ShapeTest, SliceGradIsTheAdjointOfSlice) {
  Shape in{2, {5, 6}}, out{2, {4, 3}};
  const int64_t starts[] = {4, 5}, steps[] = {-1, -2};
  std::vector<float> x = pattern(30, 3), g = pattern(12, 4), y(12), dx(30);
  dtck::slice(in, out, x.data(), starts, steps, y.data());
  dtck::sliceGrad(out, in, g.data(), starts, steps, dx.data());
  EXPECT_EQ(dot(y, g), dot(x, dx));
  EXPECT_EQ(dx[0], 0.0f); // never taken
}

TEST(ShapeTest, PadGradIsTheAdjointOfPad) {
  Shape in{3, {2, 3, 4}}, out{3, {3, 5, 7}};
  const int64_t low[] = {1, 0, 2};
  for (PadMode mode : {PadMode::Constant, PadMode::Reflect, PadMode::Edge}) {
    std::vector<float> x = pattern(in.numel(), 5), g = pattern(out.numel(), 6);
    std::vector<float> y(out.numel()), dx(in.numel());
    dtck::pad(in, out, x.data(), low, mode, 0.0, y.data());
    dtck::padGrad(out, in, g.data(), low, mode, dx.data());
    EXPECT_EQ(dot(y, g), dot(x, dx)) << int(mode);
  }
}

} // namespace
