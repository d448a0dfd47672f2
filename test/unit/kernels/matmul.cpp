//===- matmul.cpp - tests of the contraction kernels ----------------------===//
//
// matmul, gemm and einsum (runtime/include/dtcrt/kernels/Matmul.h) against
// values PyTorch 1.13 computes in float64 on ramp() inputs, the BLAS, loop
// and oneDNN paths against double loops, and the ways products are split
// across threads against one thread.
//
//===----------------------------------------------------------------------===//

#include "KernelTest.h"
#include "dtcrt/kernels/NN.h"

#include <gtest/gtest.h>
#ifdef _OPENMP
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#endif

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

// Counts the threads this process creates (libgomp's included: it calls
// pthread_create through the PLT, which finds this definition first), for
// MatMul.ParallelProductsReuseThePool.
static std::atomic<int> threadsCreated{0};
extern "C" int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                              void *(*start)(void *), void *arg) {
  using Create =
      int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  static Create real =
      reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  ++threadsCreated;
  return real(thread, attr, start, arg);
}

using namespace dtck;
using namespace kerneltest;

namespace {

/// `count` samples f(step * i) of a smooth wave, as floats: operands whose
/// products are sums of distinct, unrounded-looking terms.
std::vector<float> waves(int64_t count, double step, double (*f)(double)) {
  std::vector<float> x(static_cast<size_t>(count));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(f(step * double(i)));
  return x;
}

static const double kMatMulBroadcast[] = {
    2.15625,  0.28125,  2.84375,  -0.90625, -1.5,     0.0625,
    1.40625,  -0.46875, 1.34375,  -2.40625, -0.875,   0.6875,
    0.65625,  -4.1875,  -0.15625, 2.625,    -0.25,    3.6875,
    -0.09375, -0.40625, -3.71875, 1.28125,  2.71875,  -1.34375,
    -0.21875, -0.53125, -1.71875, 3.28125,  1.09375,  -2.96875,
    -0.34375, -2.4375,  0.28125,  -0.65625, -0.53125, -1.03125};
static const double kGemmTransBias[] = {-0.828125, 1.203125, 3.234375, 0.265625,
                                        2.296875,  -2.09375, -0.46875, 1.15625,
                                        -2.21875,  2.078125, -2.28125, -0.34375,
                                        1.59375,   -1.46875, -1.015625};
static const double kGemmColumnC[] = {
    -10.1875, 2.421875, -9.90625, 2.703125, -2.5, 3.609375, -4.125, 4.171875,
    -3.5625,  0.28125,  1.234375, 3.34375,  1,    3.109375, 5.21875};
static const double kGemmNoC[] = {
    6.125, -2.28125, 5.9375,   -2.46875, 1, -2.40625, 2.75,   -2.78125,
    2.375, -0.1875,  -0.15625, -1.5625,  0, -1.40625, -2.8125};
static const double kEinsumThree[] = {
    -3.875, 3.9375, 0, 0, 3.875, -3.9375, -1.9375, 1.96875, 1.9375, -1.96875};
static const double kEinsumDiag[] = {-1.375, -1.25, -1.125, -1};
static const double kEinsumBatch[] = {2.15625,  2.84375,  -1.5,     0.28125,
                                      -0.90625, 0.0625,   -0.21875, -1.71875,
                                      1.09375,  -0.53125, 3.28125,  -2.96875};
static const double kMatMulBf16[] = {3.65625, -0.71875, 0.1875, -0.75};

/// y = a x b per batch, in double, with broadcast batch offsets.
std::vector<double> referenceMatMul(const Shape &sa, const Shape &sb,
                                    const Shape &sy, const float *a,
                                    const float *b) {
  int r = sy.rank;
  int64_t m = sy.dims[r - 2], n = sy.dims[r - 1], k = sa.dims[sa.rank - 1];
  Shape batch{r - 2, {}}, ba{sa.rank - 2, {}}, bb{sb.rank - 2, {}};
  for (int d = 0; d < r - 2; ++d)
    batch.dims[d] = sy.dims[d];
  for (int d = 0; d < sa.rank - 2; ++d)
    ba.dims[d] = sa.dims[d];
  for (int d = 0; d < sb.rank - 2; ++d)
    bb.dims[d] = sb.dims[d];
  int64_t as[kMaxRank], bs[kMaxRank], ys[kMaxRank];
  broadcastStrides(ba, batch, as);
  broadcastStrides(bb, batch, bs);
  stridesOf(batch, ys);
  std::vector<double> y(sy.numel());
  for (int64_t bi = 0; bi < batch.numel(); ++bi) {
    int64_t ao = 0, bo = 0, rest = bi;
    for (int d = 0; d < batch.rank; ++d) {
      ao += rest / ys[d] * as[d];
      bo += rest / ys[d] * bs[d];
      rest %= ys[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(a[ao * m * k + i * k + p]) * b[bo * k * n + p * n + j];
        y[bi * m * n + i * n + j] = acc;
      }
  }
  return y;
}

// torch.matmul(a [2,1,3,4], b [3,4,2]) (plain loops: a small product).
TEST(MatMul, BroadcastBatch) {
  Shape sa{4, {2, 1, 3, 4}}, sb{3, {3, 4, 2}}, sy{4, {2, 3, 3, 2}};
  std::vector<float> a = ramp(sa, 37, 23, 11, 8), b = ramp(sb, 29, 19, 9, 4);
  std::vector<float> y(sy.numel());
  matmul<float>(sa, sb, sy, a.data(), b.data(), y.data());
  expectClose(y, kMatMulBroadcast, 0, 0);
}

// BLAS paths: a shared right operand (one stacked product) and broadcasting
// on both sides (one product per batch), against double loops.
TEST(MatMul, BlasPaths) {
  struct Case {
    Shape sa, sb, sy;
  } cases[] = {{{3, {3, 40, 50}}, {2, {50, 30}}, {3, {3, 40, 30}}},
               {{4, {2, 1, 40, 33}}, {4, {1, 3, 33, 41}}, {4, {2, 3, 40, 41}}}};
  for (const Case &c : cases) {
    std::vector<float> a = ramp(c.sa, 37, 23, 11, 8);
    std::vector<float> b = ramp(c.sb, 29, 19, 9, 4), y(c.sy.numel());
    matmul<float>(c.sa, c.sb, c.sy, a.data(), b.data(), y.data());
    std::vector<double> want =
        referenceMatMul(c.sa, c.sb, c.sy, a.data(), b.data());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-4 + 1e-6 * std::fabs(want[i]))
          << "element " << i;
  }
}

// Small float products with 8, 16 or 32 columns (attention's per-head
// products; held in vectors of 8 where the rows come four at a time) sum in
// float, over the contracted dimension in order: the same bits as one
// float accumulator per element, rows four at a time or not (m = 8, 6).
TEST(MatMul, SmallProductsInOrder) {
  for (int64_t n : {8, 16, 32})
    for (int64_t m : {8, 6}) {
      int64_t k = 12;
      Shape sa{3, {2, m, k}}, sb{2, {k, n}}, sy{3, {2, m, n}};
      std::vector<float> a = ramp(sa, 37, 23, 11, 8);
      std::vector<float> b = ramp(sb, 29, 19, 9, 4), y(sy.numel());
      matmul<float>(sa, sb, sy, a.data(), b.data(), y.data());
      for (int64_t bi = 0; bi < 2; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += a[(bi * m + i) * k + p] * b[p * n + j];
            ASSERT_EQ(y[(bi * m + i) * n + j], acc)
                << "n " << n << " m " << m << " element " << bi << "," << i
                << "," << j;
          }
    }
}

// A transposed right operand (attention's keys) that several groups of four
// rows read is copied into contiguous rows per batch first: the same sums,
// in order, as the definition in float, at one and two threads.
TEST(MatMul, TransposedRightOperandInOrder) {
  for (int threads : {1, 2})
    for (int64_t n : {16, 32}) {
      const int64_t batch = 5, m = 16, k = 12;
      std::vector<float> a = waves(batch * m * k, 0.37, std::sin);
      std::vector<float> b = waves(batch * k * n, 0.23, std::cos);
      Shape sy{3, {batch, m, n}};
      MatrixView va{0, {m * k}, k, 1}, vb{0, {k * n}, 1, k};
      std::vector<float> y(size_t(batch * m * n));
      withThreads(threads, [&] {
        matmulView(sy, k, a.data(), va, b.data(), vb, y.data());
      });
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += a[size_t(bi * m * k + i * k + p)] *
                     b[size_t(bi * k * n + j * k + p)];
            ASSERT_EQ(y[size_t((bi * m + i) * n + j)], acc)
                << threads << " threads, n " << n << " at " << bi << ", " << i
                << ", " << j;
          }
    }
}

// Integer products wrap like the interpreter's: 100 + 100 + 1 is -55 in i8.
TEST(MatMul, IntegersWrap) {
  Shape sa{2, {2, 3}}, sb{2, {3, 1}}, sy{2, {2, 1}};
  int8_t a[] = {100, 100, 1, -128, 2, 3}, b[] = {1, 1, 1}, y[2];
  matmul<int8_t>(sa, sb, sy, a, b, y);
  EXPECT_EQ(y[0], -55);
  EXPECT_EQ(y[1], -123);
  int64_t a64[] = {INT64_MAX, 1, 0, 0, 0, 0}, b64[] = {2, 3, 4}, y64[2];
  matmul<int64_t>(sa, sb, sy, a64, b64, y64);
  EXPECT_EQ(y64[0], 1); // 2 * INT64_MAX + 3 wraps to 1
  EXPECT_EQ(y64[1], 0);
  bool ab[] = {true, false, false, false, false, false},
       bb[] = {true, true, true}, yb[2];
  matmul<bool>(sa, sb, sy, ab, bb, yb);
  EXPECT_TRUE(yb[0]);
  EXPECT_FALSE(yb[1]);
}

// bf16 operands, one rounding of the exact product to bf16.
TEST(MatMul, BFloat16) {
  Shape sa{2, {2, 3}}, sb{2, {3, 2}}, sy{2, {2, 2}};
  std::vector<bf16> a = ramp<bf16>(sa, 37, 23, 11, 8);
  std::vector<bf16> b = ramp<bf16>(sb, 29, 19, 9, 4), y(4);
  matmul<bf16>(sa, sb, sy, a.data(), b.data(), y.data());
  expectClose(y, kMatMulBf16, 0, 0);
}

// bf16 products as the library (MatmulLibrary.h, on CPUs with
// AVX512_BF16) or the widening path computes them: float sums of exact
// products rounded once to bf16, so within half a bf16 ulp of the double
// product (and float's rounding of the sums). Each layout the library
// takes: a batch stacked over one right operand, batches a constant
// stride apart with both operands transposed, broadcasting on both sides
// (one product at a time), and dtg.gemm's transposes, alpha and beta c.
TEST(MatMul, BFloat16Layouts) {
  auto check = [](const char *what, const std::vector<bf16> &y,
                  const std::vector<double> &want) {
    for (size_t i = 0; i < y.size(); ++i) {
      double got = double(float(y[i]));
      ASSERT_NEAR(got, want[i], std::ldexp(std::fabs(want[i]), -8) + 1e-5)
          << what << " element " << i;
    }
  };
  auto values = [](int64_t n, double step) {
    std::vector<bf16> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[size_t(i)] = bf16(float(std::sin(step * double(i))));
    return v;
  };
  auto widened = [](const std::vector<bf16> &v) {
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      f[i] = float(v[i]);
    return f;
  };
  struct Case {
    Shape sa, sb, sy;
  } cases[] = {{{3, {3, 40, 50}}, {2, {50, 30}}, {3, {3, 40, 30}}},
               {{4, {2, 1, 40, 33}}, {4, {1, 3, 33, 41}}, {4, {2, 3, 40, 41}}},
               {{2, {64, 96}}, {2, {96, 80}}, {2, {64, 80}}}};
  for (const Case &c : cases) {
    std::vector<bf16> a = values(c.sa.numel(), 0.37);
    std::vector<bf16> b = values(c.sb.numel(), 0.23), y(c.sy.numel());
    matmul<bf16>(c.sa, c.sb, c.sy, a.data(), b.data(), y.data());
    std::vector<float> af = widened(a), bf = widened(b);
    check("matmul", y, referenceMatMul(c.sa, c.sb, c.sy, af.data(), bf.data()));
  }
  // Four products of [24, 40] by [40, 16], both operands stored transposed.
  const int64_t batch = 4, m = 24, k = 40, n = 16;
  std::vector<bf16> a = values(batch * m * k, 0.37);
  std::vector<bf16> b = values(batch * k * n, 0.23), y(batch * m * n);
  MatrixView va{0, {m * k}, 1, m}, vb{0, {k * n}, 1, k};
  matmulView(Shape{3, {batch, m, n}}, k, a.data(), va, b.data(), vb, y.data());
  std::vector<double> want(y.size());
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          want[size_t((bi * m + i) * n + j)] +=
              double(float(a[size_t(bi * m * k + i + p * m)])) *
              double(float(b[size_t(bi * k * n + p + j * k)]));
  check("transposed views", y, want);
  // gemm: y = 0.5 a^T b^T + 2 c, c a row broadcast.
  std::vector<bf16> ga = values(k * m, 0.41), gb = values(n * k, 0.29);
  std::vector<bf16> gc = values(n, 0.5), gy(m * n);
  gemm<bf16>(Shape{2, {k, m}}, Shape{2, {n, k}}, Shape{1, {n}}, ga.data(),
             gb.data(), gc.data(), 0.5, 2.0, true, true, gy.data());
  std::vector<double> gwant(gy.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += double(float(ga[size_t(p * m + i)])) *
               double(float(gb[size_t(j * k + p)]));
      gwant[size_t(i * n + j)] = 0.5 * acc + 2.0 * double(float(gc[size_t(j)]));
    }
  check("gemm", gy, gwant);
  // Where the library runs: noted, not required (a CPU without
  // AVX512_BF16 widens, which the cases above then check).
  std::printf(
      "oneDNN bf16 matmul: %s\n",
      nndetail::bf16MatmulFor(1, m, n, k, {0, k, 1}, {0, n, 1}, dnnl_bf16)
          ? "used"
          : "not available here");
}

// Small products by loops, each column count (1, 2, 4, 8 and 16 keep a
// row's sums in registers; 3 and 17 take the general loop), with the right
// operand as stored and transposed (a strided view), against double loops.
TEST(MatMul, SmallProductsByColumnCount) {
  const int64_t batch = 3, k = 7;
  // m = 8: rows four at a time; m = 5: one at a time.
  for (int64_t m : {5, 8})
    for (int64_t n : {1, 2, 3, 4, 8, 16, 17, 32})
      for (bool transposed : {false, true})
        for (bool aTransposed : {false, true}) {
          std::vector<float> a = waves(batch * m * k, 0.37, std::sin);
          std::vector<float> b = waves(batch * k * n, 0.23, std::cos);
          Shape sy{3, {batch, m, n}};
          MatrixView va = aTransposed ? MatrixView{0, {m * k}, 1, m}
                                      : MatrixView{0, {m * k}, k, 1};
          MatrixView vb = transposed ? MatrixView{0, {k * n}, 1, k}
                                     : MatrixView{0, {k * n}, n, 1};
          std::vector<float> y(size_t(batch * m * n));
          matmulView(sy, k, a.data(), va, b.data(), vb, y.data());
          for (int64_t bi = 0; bi < batch; ++bi)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double want = 0;
                for (int64_t p = 0; p < k; ++p)
                  want +=
                      double(a[size_t(bi * m * k + i * va.row + p * va.col)]) *
                      b[size_t(bi * k * n + p * vb.row + j * vb.col)];
                ASSERT_NEAR(y[size_t((bi * m + i) * n + j)], want, 1e-5)
                    << "m " << m << ", n " << n
                    << (transposed ? " transposed" : "")
                    << (aTransposed ? ", a transposed" : "") << " at " << bi
                    << ", " << i << ", " << j;
              }
        }
}

// A product split across the threads inside matmulView's batch loop takes
// its threads from OpenMP's pool: none is created after the first call
// (a `parallel for if` that was off around it made a team of one, in which
// every split product created and destroyed a thread).
TEST(MatMul, ParallelProductsReuseThePool) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  const int64_t m = 128, n = 128, k = 128; // above kParallelGemmWork
  std::vector<float> a(size_t(m * k), 0.5f), b(size_t(k * n), 0.25f);
  std::vector<float> y(size_t(m * n));
  Shape sy{3, {1, m, n}};
  MatrixView va{0, {0}, 1, m}; // a transposed: one product per batch
  MatrixView vb{0, {0}, n, 1};
  matmulView(sy, k, a.data(), va, b.data(), vb, y.data());
  int before = threadsCreated;
  for (int call = 0; call < 10; ++call)
    matmulView(sy, k, a.data(), va, b.data(), vb, y.data());
  EXPECT_EQ(threadsCreated - before, 0);
  EXPECT_EQ(y[0], float(k) * 0.125f);
  omp_set_num_threads(saved);
}

TEST(MatMul, EmptyContraction) {
  Shape sa{2, {2, 0}}, sb{2, {0, 3}}, sy{2, {2, 3}};
  float dummy = 0;
  std::vector<float> y(6, 7.0f);
  matmul<float>(sa, sb, sy, &dummy, &dummy, y.data());
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

// Products split across threads by rows of C (transposed A) or, for a C of
// fewer rows than threads, by columns (transposed and plain B).
TEST(Gemm, SplitsAcrossThreads) {
  Shape wide{2, {2, 300}}, bt{2, {500, 300}}, bn{2, {300, 500}};
  Shape tall{2, {300, 600}}, narrow{2, {300, 4}}, none{0, {}};
  std::vector<float> a = ramp(wide, 37, 23, 11, 8), b1 = ramp(bt, 29, 19, 9, 4);
  std::vector<float> b2 = ramp(bn, 29, 19, 9, 4),
                     a3 = ramp(tall, 37, 23, 11, 8);
  std::vector<float> b3 = ramp(narrow, 29, 19, 9, 4);
  // References in double: y1 = a b1^T, y2 = a b2, y3 = a3^T b3.
  std::vector<double> w1(1000, 0), w2(1000, 0), w3(2400, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 500; ++j)
      for (int p = 0; p < 300; ++p) {
        w1[i * 500 + j] += double(a[i * 300 + p]) * b1[j * 300 + p];
        w2[i * 500 + j] += double(a[i * 300 + p]) * b2[p * 500 + j];
      }
  for (int i = 0; i < 600; ++i)
    for (int j = 0; j < 4; ++j)
      for (int p = 0; p < 300; ++p)
        w3[i * 4 + j] += double(a3[p * 600 + i]) * b3[p * 4 + j];
  for (int threads : {1, 3, 5}) {
    std::vector<float> y1(1000), y2(1000), y3(2400);
    withThreads(threads, [&] {
      gemm<float>(wide, bt, none, a.data(), b1.data(), nullptr, 1.0, 1.0, false,
                  true, y1.data());
      gemm<float>(wide, bn, none, a.data(), b2.data(), nullptr, 1.0, 1.0, false,
                  false, y2.data());
      gemm<float>(tall, narrow, none, a3.data(), b3.data(), nullptr, 1.0, 1.0,
                  true, false, y3.data());
    });
    for (size_t i = 0; i < y1.size(); ++i) {
      ASSERT_NEAR(y1[i], w1[i], 1e-4) << threads << " threads, " << i;
      ASSERT_NEAR(y2[i], w2[i], 1e-4) << threads << " threads, " << i;
    }
    for (size_t i = 0; i < y3.size(); ++i)
      ASSERT_NEAR(y3[i], w3[i], 1e-4) << threads << " threads, " << i;
  }
}

// 0.5 * a.t() @ b.t() + 2 * c with c [5] broadcast along rows.
TEST(Gemm, TransposedWithBias) {
  Shape sa{2, {4, 3}}, sb{2, {5, 4}}, sc{1, {5}};
  std::vector<float> a = ramp(sa, 37, 23, 11, 8), b = ramp(sb, 29, 19, 9, 4);
  std::vector<float> c = ramp(sc, 7, 5, 2, 2), y(15);
  gemm<float>(sa, sb, sc, a.data(), b.data(), c.data(), 0.5, 2.0, true, true,
              y.data());
  expectClose(y, kGemmTransBias, 1e-6, 1e-6);
}

// -1.5 * a @ b + c with c [3, 1] broadcast along columns; and without c.
TEST(Gemm, ColumnBiasAndNoBias) {
  Shape sa{2, {3, 4}}, sb{2, {4, 5}}, sc{2, {3, 1}}, none{0, {}};
  std::vector<float> a = ramp(sa, 37, 23, 11, 8), b = ramp(sb, 29, 19, 9, 4);
  std::vector<float> c = ramp(sc, 7, 5, 2, 2), y(15), y2(15);
  gemm<float>(sa, sb, sc, a.data(), b.data(), c.data(), -1.5, 1.0, false, false,
              y.data());
  expectClose(y, kGemmColumnC, 1e-6, 1e-6);
  gemm<float>(sa, sb, none, a.data(), b.data(), nullptr, 1.0, 1.0, false, false,
              y2.data());
  expectClose(y2, kGemmNoC, 1e-6, 1e-6);
}

// alpha = 0 still multiplies: a NaN in A reaches its row, as 0 * NaN does in
// the interpreter (BLAS would skip the product).
TEST(Gemm, ZeroAlphaKeepsNaN) {
  Shape sa{2, {2, 2}}, sb{2, {2, 2}}, sc{0, {}};
  float a[] = {NAN, 1, 2, 3}, b[] = {1, 2, 3, 4}, c[] = {5}, y[4];
  gemm<float>(sa, sb, sc, a, b, c, 0.0, 3.0, false, false, y);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], 15.0f);
  EXPECT_EQ(y[3], 15.0f);
}

// torch.einsum("ij,jk,kl->li"): letters l, i (output), then j, k (summed);
// strides per letter in that order.
TEST(Einsum, ThreeOperands) {
  Shape s1{2, {2, 3}}, s2{2, {3, 4}}, s3{2, {4, 5}};
  std::vector<float> e1 = ramp(s1, 37, 23, 11, 8), e2 = ramp(s2, 29, 19, 9, 4);
  std::vector<float> e3 = ramp(s3, 7, 5, 2, 2), y(10);
  const int64_t sizes[] = {5, 2, 3, 4};
  const int64_t st1[] = {0, 3, 1, 0}, st2[] = {0, 0, 4, 1},
                st3[] = {1, 0, 0, 5};
  einsum<float, 3>(4, 2, sizes, {e1.data(), e2.data(), e3.data()},
                   {st1, st2, st3}, y.data());
  expectClose(y, kEinsumThree, 0, 0);
}

// torch.einsum("ii->i") (a repeated letter sums its strides) and
// torch.einsum("bij,bjk->bki").
TEST(Einsum, DiagonalAndBatch) {
  Shape sd{2, {4, 4}};
  std::vector<float> d = ramp(sd, 37, 23, 11, 8), yd(4);
  const int64_t sizesD[] = {4}, stD[] = {5};
  einsum<float, 1>(1, 1, sizesD, {d.data()}, {stD}, yd.data());
  expectClose(yd, kEinsumDiag, 0, 0);

  Shape sa{3, {2, 3, 4}}, sb{3, {2, 4, 2}};
  std::vector<float> a = ramp(sa, 37, 23, 11, 8), b = ramp(sb, 29, 19, 9, 4);
  std::vector<float> y(12);
  const int64_t sizes[] = {2, 2, 3, 4}; // b, k, i, j
  const int64_t stA[] = {12, 0, 4, 1}, stB[] = {8, 1, 0, 2};
  einsum<float, 2>(4, 3, sizes, {a.data(), b.data()}, {stA, stB}, y.data());
  expectClose(y, kEinsumBatch, 0, 0);
}

TEST(Einsum, IntegerOuterProduct) {
  int64_t a[] = {1, -2, 3}, b[] = {4, 5}, y[6];
  const int64_t sizes[] = {2, 3}, stA[] = {0, 1}, stB[] = {1, 0};
  einsum<int64_t, 2>(2, 2, sizes, {a, b}, {stA, stB}, y);
  const int64_t want[] = {4, -8, 12, 5, -10, 15};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(y[i], want[i]);
}

} // namespace
