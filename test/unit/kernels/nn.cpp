//===- nn.cpp - tests of the NN kernels (runtime/include/dtcrt/kernels) ---===//
//
// Each kernel against values PyTorch 1.13 computes in float64 on the same
// inputs (ramp() below builds them from exact binary fractions, so PyTorch
// and the kernels see identical values; the torch calls are named per test),
// the dropout masks bit for bit against the reference interpreter's Philox
// construction (dialects/DTG/Interp/Philox.cpp) and Random123's published
// known-answer vectors, and the ways GEMM-shaped work is split across
// threads against one thread.
//
//===----------------------------------------------------------------------===//

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
#include <iterator>
#include <memory>
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

namespace {

/// Element i of a ramp is ((i * mul) % mod - off) / scale: exact in float.
template <typename T = float>
std::vector<T> ramp(const Shape &s, int64_t mul, int64_t mod, int64_t off,
                    double scale) {
  std::vector<T> v(s.numel());
  for (int64_t i = 0; i < s.numel(); ++i)
    v[i] = T(float(double((i * mul) % mod - off) / scale));
  return v;
}

/// Runs `body` with OpenMP limited to `threads` threads.
template <typename F> void withThreads(int threads, F body) {
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  body();
  omp_set_num_threads(saved);
#else
  (void)threads;
  body();
#endif
}

/// Checks `got` against `want` elementwise: |got - want| <= atol + rtol *
/// |want|, NaN where `want` is NaN.
template <typename T, size_t N>
void expectClose(const std::vector<T> &got, const double (&want)[N],
                 double rtol = 1e-6, double atol = 1e-6) {
  ASSERT_EQ(got.size(), N);
  for (size_t i = 0; i < N; ++i) {
    double g = double(float(got[i]));
    if constexpr (std::is_same_v<T, double>)
      g = got[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i << " is " << g;
      continue;
    }
    EXPECT_NEAR(g, want[i], atol + rtol * std::fabs(want[i]))
        << "element " << i;
  }
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
static const double kMatMulBf16[] = {3.65625, -0.71875, 0.1875, -0.75};

//===----------------------------------------------------------------------===//
// Philox and dropout
//===----------------------------------------------------------------------===//

// Random123's known-answer vectors (kat_vectors, philox4x32 10 rounds).
TEST(Philox, Random123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Op keys and element bits as dialects/DTG/Interp/Philox.cpp computes them
// (printed by a driver linked against it), including a negative seed, a
// step above 2^32 and an index above 2^32.
TEST(Philox, MatchesInterpreterConstruction) {
  EXPECT_EQ(dropoutOpKey(0, 0, 0), (PhiloxKey{0x6627e8d5, 0xe169c58d}));
  PhiloxKey key = dropoutOpKey(42, 1, 3);
  EXPECT_EQ(key, (PhiloxKey{0x85a8df3c, 0x1d91b19b}));
  const uint32_t bits[] = {0xb7c5d6c2, 0xbb98432d, 0x47da9a10, 0x05a9b761,
                           0x09aa279c, 0xadf1e19b, 0x10c94658, 0x2db20563};
  for (uint64_t i = 0; i < 8; ++i)
    EXPECT_EQ(dropoutBits(key, i), bits[i]) << "element " << i;
  EXPECT_EQ(dropoutBits(key, 1000001), 0x3f60dc0fu);
  EXPECT_EQ(dropoutBits(key, (uint64_t(1) << 34) + 3), 0xa253a11du);
  PhiloxKey other = dropoutOpKey(-1, 123456789012, 7);
  EXPECT_EQ(other, (PhiloxKey{0xb9b805aa, 0xd5e2e132}));
  EXPECT_EQ(dropoutBits(other, 5), 0x1fe955f7u);
  EXPECT_EQ(dropoutBits(other, (uint64_t(1) << 34) + 3), 0x6de9a046u);
}

TEST(Philox, Thresholds) {
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(0.1), 429496730u);
  EXPECT_EQ(dropoutThreshold(0.3), 1288490189u);
  EXPECT_EQ(dropoutThreshold(0.5), 2147483648u);
  EXPECT_EQ(dropoutThreshold(0.9999), 4294537800u);
}

// Masks the interpreter's dtg.dropout produces: key (42, 1), stream 3,
// ratio 0.5 on 12 elements; key (7, 100), stream 0, ratio 0.1 on 40.
TEST(Dropout, MasksMatchInterpreter) {
  struct Case {
    int64_t key[2];
    int64_t stream;
    double ratio;
    const char *mask;
  } cases[] = {{{42, 1}, 3, 0.5, "110001001110"},
               {{7, 100}, 0, 0.1, "1111111111111111111111110111111111111111"}};
  for (const Case &c : cases) {
    int64_t n = int64_t(std::strlen(c.mask));
    Shape s{1, {n}};
    std::vector<float> x = ramp(s, 37, 23, 11, 8), y(n);
    std::unique_ptr<bool[]> mask(new bool[n]);
    dropout<float>(s, x.data(), c.key, 2, c.ratio, c.stream, y.data(),
                   mask.get());
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(mask[i], c.mask[i] == '1') << "element " << i;
      float want =
          mask[i] ? float(double(x[i]) * (1.0 / (1.0 - c.ratio))) : 0.0f;
      EXPECT_EQ(y[i], want) << "element " << i;
    }
  }
}

// A tensor whose size is not a multiple of 4 (the last Philox block is
// partly used) in f16: the mask is the bits of each element's own index.
TEST(Dropout, PartialBlockHalf) {
  Shape s{2, {3, 3}};
  std::vector<f16> x = ramp<f16>(s, 37, 23, 11, 8), y(9);
  int64_t key[2] = {0x123456789ab, 17};
  bool mask[9];
  dropout<f16>(s, x.data(), key, 2, 0.5, 5, y.data(), mask);
  PhiloxKey opKey = dropoutOpKey(key[0], key[1], 5);
  for (int i = 0; i < 9; ++i) {
    bool keep = dropoutBits(opKey, i) >= dropoutThreshold(0.5);
    EXPECT_EQ(mask[i], keep) << "element " << i;
    EXPECT_EQ(float(y[i]), keep ? 2.0f * float(x[i]) : 0.0f);
  }
}

// A key of three elements offsets every element's index: the rows of a
// tensor taken apart at any element (here 7 and 13 elements after the first
// 5, offsets not multiples of a Philox block) draw the whole tensor's bits.
TEST(Dropout, OffsetKeysDrawTheWholeTensorsBits) {
  const int64_t n = 25;
  Shape whole{1, {n}};
  std::vector<float> x = ramp(whole, 37, 23, 11, 8), y(n);
  int64_t key[3] = {99, 4, 0};
  bool mask[n];
  dropout<float>(whole, x.data(), key, 3, 0.3, 2, y.data(), mask);
  int64_t cuts[] = {0, 5, 12, 25};
  for (int part = 0; part < 3; ++part) {
    int64_t first = cuts[part], count = cuts[part + 1] - first;
    Shape s{1, {count}};
    std::vector<float> yp(count);
    std::unique_ptr<bool[]> mp(new bool[count]);
    int64_t partKey[3] = {99, 4, first};
    dropout<float>(s, x.data() + first, partKey, 3, 0.3, 2, yp.data(),
                   mp.get());
    for (int64_t i = 0; i < count; ++i) {
      EXPECT_EQ(mp[i], mask[first + i]) << "element " << first + i;
      EXPECT_EQ(yp[i], y[first + i]) << "element " << first + i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

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
          std::vector<float> a(size_t(batch * m * k)), b(size_t(batch * k * n));
          for (size_t i = 0; i < a.size(); ++i)
            a[i] = float(std::sin(0.37 * double(i)));
          for (size_t i = 0; i < b.size(); ++i)
            b[i] = float(std::cos(0.23 * double(i)));
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

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

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
// lanes (softmaxRowsAcross), the rows past a multiple of sixteen one by one:
// against the definition in double for every length up to 33, with masked
// (-inf) entries exactly 0, a row of -inf and a row holding a NaN all NaN.
TEST(Softmax, ShortRowsAcrossLanes) {
  for (int64_t size = 1; size <= 33; ++size) {
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
