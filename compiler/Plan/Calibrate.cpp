//===- Calibrate.cpp - measure this machine into a device profile ---------===//
//
// Microbenchmarks of the CPU target's kernels (the header-only library the
// generated code includes), run in-process. Each rate divides the FLOPs
// that estimateOpCost counts for the very op a kernel implements (parsed
// from dtg IR at the benchmark's shapes) by the best of several timings, so
// noise from other processes on the machine inflates no figure.
//
//===----------------------------------------------------------------------===//

#include "compiler/Plan/Calibrate.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "dtcrt/kernels/Elementwise.h"
#include "dtcrt/kernels/NN.h"
#include "dtcrt/kernels/Reduction.h"
#include "dtcrt/kernels/Shape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#ifdef _OPENMP
#include <omp.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <vector>

using namespace mlir;
using namespace mlir::dtc;

namespace {

using Clock = std::chrono::steady_clock;

/// The best time of `body` over repetitions that together take about
/// `budgetS` seconds (at least 3, after one warm-up run).
template <typename F> double bestSeconds(F body, double budgetS = 0.25) {
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
volatile float sink;

/// Multiply-adds on 64 independent float lanes in registers, `iters` times;
/// 128 FLOPs per iteration. Compiled with the flags of the rest of dtc,
/// which like the generated code's (-O2, no -march) target baseline x86-64.
float multiplyAddLoop(int64_t iters, float m, float c) {
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

/// The dtg ops whose kernels are timed, at the timed shapes.
constexpr int64_t kGemmSizes[] = {64, 128, 256, 512, 1024};
constexpr int64_t kExpSize = 1 << 16;
constexpr int64_t kRows = 256, kCols = 256;

std::string benchmarkIR() {
  std::string s = "func.func @bench(";
  for (int64_t n : kGemmSizes)
    s += llvm::formatv("%m{0}: tensor<{0}x{0}xf32>, ", n).str();
  s += "%x: tensor<4x32x32x32xf32>, %w: tensor<64x32x3x3xf32>, "
       "%e: tensor<65536xf32>, %r: tensor<256x256xf32>, "
       "%v: tensor<256xf32>) {\n";
  for (int64_t n : kGemmSizes)
    s += llvm::formatv("  %mm{0} = dtg.matmul %m{0}, %m{0} : "
                       "tensor<{0}x{0}xf32>, tensor<{0}x{0}xf32> -> "
                       "tensor<{0}x{0}xf32>\n",
                       n)
             .str();
  s += "  %c = dtg.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : "
       "i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : "
       "tensor<4x32x32x32xf32>, tensor<64x32x3x3xf32> -> "
       "tensor<4x64x32x32xf32>\n"
       "  %ex = \"dtg.exp\"(%e) : (tensor<65536xf32>) -> tensor<65536xf32>\n"
       "  %ln = dtg.layer_norm %r, %v, %v {axis = 1 : i64, epsilon = 1.0e-05 "
       ": f64} : tensor<256x256xf32>, tensor<256xf32>, tensor<256xf32> -> "
       "tensor<256x256xf32>\n"
       "  %sm = dtg.softmax %r {axis = 1 : i64} : tensor<256x256xf32>\n"
       "  return\n}\n";
  return s;
}

/// Runs `body` with OpenMP's thread count set to `threads`, then restores it.
template <typename F> void withThreads(int threads, F body) {
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  body();
  omp_set_num_threads(saved);
#else
  body();
#endif
}

} // namespace

FailureOr<DeviceProfile> mlir::dtc::calibrateCpu(int threads,
                                                 llvm::raw_ostream &log,
                                                 std::string &error) {
#ifdef _OPENMP
  if (threads <= 0)
    threads = omp_get_max_threads();
#else
  threads = 1;
#endif
  if (threads > 1024) {
    error = "--threads must be at most 1024";
    return failure();
  }

  // The FLOPs the cost model counts for each benchmarked op.
  MLIRContext context;
  context.loadDialect<dtg::DTGDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(benchmarkIR(), &context);
  if (!module) {
    error = "internal error: the benchmark IR does not parse";
    return failure();
  }
  SmallVector<OpCost> costs;
  module->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "dtg")
      costs.push_back(estimateOpCost(op));
  });
  const size_t numGemms = std::size(kGemmSizes);
  if (costs.size() != numGemms + 4) {
    error = "internal error: unexpected benchmark ops";
    return failure();
  }
  const OpCost &convCost = costs[numGemms], &expCost = costs[numGemms + 1],
               &lnCost = costs[numGemms + 2], &smCost = costs[numGemms + 3];

  DeviceProfile p;
  p.name = "cpu";
  p.threads = threads;
  // The machine's memory; the links are the built-in cpu profile's until
  // calibrate measures MPI (its source says so).
  {
    std::string ignored;
    DeviceProfile builtin = *loadDeviceProfile("cpu", ignored);
    p.intraNode = builtin.intraNode;
    p.interNode = builtin.interNode;
    // Ranks of `threads` threads each that fit on the cores.
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p.devicesPerNode = cores > 0 ? std::max<int64_t>(1, cores / threads)
                                 : builtin.devicesPerNode;
    p.coresPerNode = cores > 0 ? cores : 0;
    p.networkEfficiency = builtin.networkEfficiency;
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    p.memoryCapacity = pages > 0 && pageSize > 0
                           ? double(pages) * double(pageSize)
                           : builtin.memoryCapacity;
  }
  char date[32] = "";
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  p.source = llvm::formatv("dtc calibrate --threads {0}, {1}; links not "
                           "measured (the built-in cpu profile's)",
                           threads, date);
  log << "dtc calibrate: " << threads << " thread(s)\n";
  // Other processes on the cores slow every parallel region down by whole
  // scheduler time slices; say so rather than let it pass for the machine.
  if (auto loadavg = llvm::MemoryBuffer::getFileAsStream("/proc/loadavg")) {
    double load = 0;
    if (!(*loadavg)->getBuffer().split(' ').first.getAsDouble(load) &&
        load > 0.5)
      log << llvm::formatv("  note: load average {0:f2} before measuring: "
                           "other processes share the cores and make the "
                           "figures pessimistic\n",
                           load);
  }

  withThreads(threads, [&] {
    // Kernel overhead: the fixed cost of one kernel call (the mean time of
    // add, reduce_sum, transpose, layer_norm, softmax and matmul kernels on
    // 4x8 tensors, whose work takes nanoseconds), plus the fork and join of
    // an empty parallel region.
    double fork = bestSeconds([&] {
                    for (int i = 0; i < 100; ++i) {
#pragma omp parallel num_threads(threads)
                      { sink = sink + 0.0f; }
                    }
                  }) /
                  100;
    double tiny = 0;
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
      for (double t : times)
        tiny += t / double(std::size(times));
    }
    p.kernelOverheadS = tiny + fork;
    log << llvm::formatv("  kernel overhead: {0:f2} us (call {1:f2} us, "
                         "fork/join {2:f2} us)\n",
                         (tiny + fork) * 1e6, tiny * 1e6, fork * 1e6);

    // Vector peak.
    const int64_t iters = 1 << 20;
    double vec = bestSeconds([&] {
#pragma omp parallel num_threads(threads)
      {
        float r = multiplyAddLoop(iters, 0.999f, 1e-3f);
#pragma omp critical
        sink = sink + r;
      }
    });
    p.peakVectorFlops = double(threads) * double(iters) * 128 / vec;
    log << llvm::formatv("  vector peak (multiply-add loop): {0:f2} GFLOP/s\n",
                         p.peakVectorFlops * 1e-9);

    // Memory bandwidth: a = b + s * c over 3 x 64 MiB.
    {
      const int64_t n = int64_t(1) << 24;
      std::vector<float> a(n), b(n), c(n);
#pragma omp parallel for num_threads(threads)
      for (int64_t i = 0; i < n; ++i) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
      }
      float *pa = a.data();
      const float *pb = b.data(), *pc = c.data();
      double t = bestSeconds(
          [&] {
#pragma omp parallel for num_threads(threads)
            for (int64_t i = 0; i < n; ++i)
              pa[i] = pb[i] + 0.5f * pc[i];
          },
          0.4);
      p.memoryBandwidth = 3.0 * 4.0 * double(n) / t;
      log << llvm::formatv("  memory bandwidth (triad, 192 MiB): {0:f2} GB/s\n",
                           p.memoryBandwidth * 1e-9);
    }

    // GEMM: dtck::matmul at each size.
    std::vector<double> rates;
    for (auto [i, n] : llvm::enumerate(kGemmSizes)) {
      std::vector<float> a(n * n, 0.5f), y(n * n);
      dtck::Shape s{2, {n, n}};
      double t = bestSeconds(
          [&] { dtck::matmul(s, s, s, a.data(), a.data(), y.data()); });
      rates.push_back(costs[i].flops / t);
      log << llvm::formatv("  matmul {0}x{0}x{0}: {1:f2} GFLOP/s\n", n,
                           rates.back() * 1e-9);
    }
    p.peakGemmFlops = *std::max_element(rates.begin(), rates.end());
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    p.efficiency.gemm = sorted[sorted.size() / 2] / p.peakGemmFlops;

    // Convolution: 3x3, 32 -> 64 channels, 32x32 images, batch 4.
    {
      std::vector<float> x(4 * 32 * 32 * 32, 0.25f), w(64 * 32 * 9, 0.5f),
          y(4 * 64 * 32 * 32);
      dtck::Shape sx{4, {4, 32, 32, 32}}, sw{4, {64, 32, 3, 3}},
          sy{4, {4, 64, 32, 32}};
      const int64_t strides[] = {1, 1}, pads[] = {1, 1, 1, 1},
                    dilations[] = {1, 1};
      double t = bestSeconds([&] {
        dtck::conv(sx, sw, sy, x.data(), w.data(),
                   static_cast<const float *>(nullptr), strides, pads,
                   dilations, 1, y.data());
      });
      double rate = convCost.flops / t;
      p.efficiency.conv = std::min(1.0, rate / p.peakGemmFlops);
      log << llvm::formatv("  conv 3x3 32->64 @32x32 (batch 4): {0:f2} "
                           "GFLOP/s\n",
                           rate * 1e-9);
    }

    // Elementwise: exp over 256 KiB (cache-resident).
    {
      std::vector<float> x(kExpSize, 0.5f), y(kExpSize);
      dtck::Shape s{1, {kExpSize}};
      double t = bestSeconds([&] { dtck::exp(s, x.data(), y.data()); });
      double rate = expCost.flops / t;
      p.efficiency.elementwise = std::min(1.0, rate / p.peakVectorFlops);
      log << llvm::formatv("  exp (65536 floats): {0:f2} GFLOP/s counted\n",
                           rate * 1e-9);
    }

    // Reductions: layer_norm and softmax of 256 rows of 256.
    {
      std::vector<float> x(kRows * kCols), v(kCols, 1.0f), y(kRows * kCols);
      for (auto [i, e] : llvm::enumerate(x))
        e = float(i % 97) * 0.01f;
      dtck::Shape s{2, {kRows, kCols}}, sv{1, {kCols}};
      double tln = bestSeconds([&] {
        dtck::layerNorm(s, sv, sv, x.data(), v.data(), v.data(), 1, 1e-5,
                        y.data());
      });
      double tsm =
          bestSeconds([&] { dtck::softmax(s, x.data(), 1, y.data()); });
      double ln = lnCost.flops / tln, sm = smCost.flops / tsm;
      p.efficiency.reduction = std::min(1.0, (ln + sm) / 2 / p.peakVectorFlops);
      log << llvm::formatv("  layer_norm 256x256: {0:f2} GFLOP/s counted\n",
                           ln * 1e-9);
      log << llvm::formatv("  softmax 256x256: {0:f2} GFLOP/s counted\n",
                           sm * 1e-9);
    }
  });
  p.efficiency.memory = 1;
  log << llvm::formatv("  efficiency: gemm {0:f3}, conv {1:f3}, elementwise "
                       "{2:f3}, reduction {3:f3}\n",
                       p.efficiency.gemm, p.efficiency.conv,
                       p.efficiency.elementwise, p.efficiency.reduction);
  // Timings that collapse to 0 (a clock too coarse) would give infinite
  // rates: refuse them rather than write a profile that cannot load.
  if (!std::isfinite(p.peakGemmFlops) || !std::isfinite(p.peakVectorFlops) ||
      !std::isfinite(p.memoryBandwidth) || p.peakGemmFlops <= 0 ||
      p.peakVectorFlops <= 0 || p.memoryBandwidth <= 0) {
    error = "a microbenchmark gave no usable timing";
    return failure();
  }
  return p;
}
