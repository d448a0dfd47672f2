//===- Microbench.h - timings of the CPU kernels for dtc calibrate -*- C++ -*-//
//
// The microbenchmarks behind `dtc calibrate`. dtc builds a program that
// calls runMicrobenchmarks with the CPU target's own compiler and flags
// (-O3, -march, -ffp-contract=off, ...), so that the kernels timed are the
// code a generated train program runs, not dtc's own build of them
// (baseline x86-64, where exp and the reductions run scalar). Each line
// printed is `NAME SECONDS`: the best time of one call over repetitions
// (noise from other processes inflates no figure); dtc divides the FLOPs
// its cost model counts for the same op at the same shape by it.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CALIBRATE_MICROBENCH_H
#define DTCRT_CALIBRATE_MICROBENCH_H

#include "dtcrt/calibrate/Shapes.h"
#include "dtcrt/kernels/Elementwise.h"
#include "dtcrt/kernels/NN.h"
#include "dtcrt/kernels/Reduction.h"
#include "dtcrt/kernels/Shape.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <vector>

namespace dtcrt::calibrate {

/// The best time of `body` over repetitions that together take about
/// `budgetS` seconds (at least 3, after one warm-up run).
template <typename F> double bestSeconds(F body, double budgetS = 0.25) {
  using Clock = std::chrono::steady_clock;
  body();
  double best = std::numeric_limits<double>::infinity();
  auto start = Clock::now();
  for (int reps = 0;
       reps < 3 ||
       (reps < 10000 &&
        std::chrono::duration<double>(Clock::now() - start).count() < budgetS);
       ++reps) {
    auto t0 = Clock::now();
    body();
    best = std::min(best,
                    std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

/// Keeps a value alive so that the loop computing it is not removed.
inline volatile float sink;

/// Multiply-adds on 64 independent float lanes in registers, `iters` times;
/// 128 FLOPs per iteration, vectorized as the generated code's loops are.
inline float multiplyAddLoop(int64_t iters, float m, float c) {
  float acc[64];
  for (int j = 0; j < 64; ++j)
    acc[j] = 1.0f + float(j) * 1e-3f;
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < 64; ++j)
      acc[j] = acc[j] * m + c;
  float s = 0;
  for (float a : acc)
    s += a;
  return s;
}

/// Times every kernel with `threads` threads and prints `NAME SECONDS`
/// lines: fork (an empty parallel region), call (the mean of six kernels
/// on 4x8 tensors, whose work takes nanoseconds), vector (the multiply-add
/// loop on every thread), triad (a = b + s c over kTriadSize floats),
/// matmul_N, conv, exp, layer_norm, softmax.
inline void runMicrobenchmarks(int threads) {
  omp_set_num_threads(threads);
  auto print = [](const char *name, double seconds) {
    std::printf("%s %.9e\n", name, seconds);
  };
  print("fork", bestSeconds([&] {
                  for (int i = 0; i < 100; ++i) {
#pragma omp parallel num_threads(threads)
                    { sink = sink + 0.0f; }
                  }
                }) / 100);
  {
    float x[32], y[32], w[8], z[32];
    for (int i = 0; i < 32; ++i)
      x[i] = float(i) * 0.125f;
    for (float &v : w)
      v = 1.0f;
    dtck::Shape s{2, {4, 8}}, st{2, {8, 4}}, sk{2, {4, 1}}, sv{1, {8}},
        sm{2, {8, 8}};
    const int64_t perm[] = {1, 0};
    auto perCall = [&](auto body) {
      return bestSeconds([&] {
               for (int i = 0; i < 100; ++i)
                 body();
             }) /
             100;
    };
    double times[] = {
        perCall([&] { dtck::add(s, s, s, x, y, z); }),
        perCall([&] { dtck::reduceSum(s, sk, x, y); }),
        perCall([&] { dtck::transpose(s, st, x, perm, y); }),
        perCall([&] { dtck::layerNorm(s, sv, sv, x, w, w, 1, 1e-5, y); }),
        perCall([&] { dtck::softmax(s, x, 1, y); }),
        perCall([&] { dtck::matmul(s, sm, s, x, z, y); })};
    double mean = 0;
    for (double t : times)
      mean += t / double(std::size(times));
    print("call", mean);
  }
  print("vector", bestSeconds([&] {
#pragma omp parallel num_threads(threads)
          {
            float r = multiplyAddLoop(kVectorIters, 0.999f, 1e-3f);
#pragma omp critical
            sink = sink + r;
          }
        }));
  {
    const int64_t n = kTriadSize;
    std::vector<float> a(n), b(n), c(n);
#pragma omp parallel for num_threads(threads)
    for (int64_t i = 0; i < n; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
    float *pa = a.data();
    const float *pb = b.data(), *pc = c.data();
    print("triad", bestSeconds(
                       [&] {
#pragma omp parallel for num_threads(threads)
                         for (int64_t i = 0; i < n; ++i)
                           pa[i] = pb[i] + 0.5f * pc[i];
                       },
                       0.4));
  }
  for (int64_t n : kGemmSizes) {
    std::vector<float> a(n * n, 0.5f), y(n * n);
    dtck::Shape s{2, {n, n}};
    double t = bestSeconds(
        [&] { dtck::matmul(s, s, s, a.data(), a.data(), y.data()); });
    std::printf("matmul_%lld %.9e\n", static_cast<long long>(n), t);
  }
  {
    // 3x3, 32 -> 64 channels, 32x32 images, batch 4.
    std::vector<float> x(4 * 32 * 32 * 32, 0.25f), w(64 * 32 * 9, 0.5f),
        y(4 * 64 * 32 * 32);
    dtck::Shape sx{4, {4, 32, 32, 32}}, sw{4, {64, 32, 3, 3}},
        sy{4, {4, 64, 32, 32}};
    const int64_t strides[] = {1, 1}, pads[] = {1, 1, 1, 1},
                  dilations[] = {1, 1};
    print("conv", bestSeconds([&] {
            dtck::conv(sx, sw, sy, x.data(), w.data(),
                       static_cast<const float *>(nullptr), strides, pads,
                       dilations, 1, y.data());
          }));
  }
  {
    // exp over 256 KiB (cache-resident).
    std::vector<float> x(kExpSize, 0.5f), y(kExpSize);
    dtck::Shape s{1, {kExpSize}};
    print("exp", bestSeconds([&] { dtck::exp(s, x.data(), y.data()); }));
  }
  {
    std::vector<float> x(kRows * kCols), v(kCols, 1.0f), y(kRows * kCols);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i % 97) * 0.01f;
    dtck::Shape s{2, {kRows, kCols}}, sv{1, {kCols}};
    print("layer_norm", bestSeconds([&] {
            dtck::layerNorm(s, sv, sv, x.data(), v.data(), v.data(), 1, 1e-5,
                            y.data());
          }));
    print("softmax",
          bestSeconds([&] { dtck::softmax(s, x.data(), 1, y.data()); }));
  }
}

} // namespace dtcrt::calibrate

#endif // DTCRT_CALIBRATE_MICROBENCH_H
