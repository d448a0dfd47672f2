//===- KernelTest.h - what the kernel tests share ---------------*- C++ -*-===//
//
// Inputs from exact binary fractions (ramp), running under a given number
// of OpenMP threads, and comparing with PyTorch's float64 values, for the
// GoogleTest cases of runtime/include/dtcrt/kernels (nn.cpp, matmul.cpp,
// conv.cpp, dropout.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TEST_UNIT_KERNELS_KERNELTEST_H
#define DTC_TEST_UNIT_KERNELS_KERNELTEST_H

#include "dtcrt/kernels/Common.h"

#include <gtest/gtest.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <cmath>
#include <type_traits>
#include <vector>

namespace kerneltest {

using dtck::Shape;

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

} // namespace kerneltest

#endif // DTC_TEST_UNIT_KERNELS_KERNELTEST_H
