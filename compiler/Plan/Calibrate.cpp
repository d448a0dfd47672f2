//===- Calibrate.cpp - measure this machine into a device profile ---------===//
//
// Microbenchmarks of the CPU target's kernels (the header-only library the
// generated code includes), built as the CPU target builds a train program
// (dtcrt/calibrate/Microbench.h, the host compiler with -O3 -march=native
// and the target's other flags) and run in a child process, so that they
// time the code a generated program runs. Each rate divides the FLOPs that
// estimateOpCost counts for the very op a kernel implements (parsed from
// dtg IR at the benchmark's shapes) by the best of several timings, so
// noise from other processes on the machine inflates no figure.
//
//===----------------------------------------------------------------------===//

#include "compiler/Plan/Calibrate.h"

#include "compiler/Target/HostBuild.h"
#include "compiler/Target/TargetInfo.h"
#include "dialects/DTG/IR/DTGOps.h"

#include "dtcrt/calibrate/Shapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#ifdef _OPENMP
#include <omp.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cmath>
#include <ctime>
#include <vector>

using namespace mlir;
using namespace mlir::dtc;

namespace {

using dtcrt::calibrate::kExpSize;
using dtcrt::calibrate::kGemmSizes;
using dtcrt::calibrate::kTriadSize;
using dtcrt::calibrate::kVectorIters;

/// The dtg ops whose kernels are timed, at the timed shapes (the
/// microbenchmarks' own: kGemmSizes, kExpSize, kRows x kCols).
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

/// Builds the microbenchmarks as the CPU target builds a program (said on
/// `progress`), runs them with `threads` threads and returns their timings
/// by name; failure with `error` set.
FailureOr<llvm::StringMap<double>>
timeKernels(int threads, llvm::raw_ostream &progress, std::string &error) {
  SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("dtc-calibrate", dir)) {
    error = "cannot create a temporary folder for the microbenchmarks";
    return failure();
  }
  auto removeDir =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
  auto inDir = [&](StringRef name) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  std::string source = inDir("microbench.cpp"), program = inDir("microbench"),
              output = inDir("timings.txt"), buildLog = inDir("build.log");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source, ec);
    if (ec) {
      error = "cannot write '" + source + "': " + ec.message();
      return failure();
    }
    os << "#include \"dtcrt/calibrate/Microbench.h\"\n"
          "#include <cstdlib>\n"
          "int main(int argc, char **argv) {\n"
          "  dtcrt::calibrate::runMicrobenchmarks(argc > 1 ? "
          "std::atoi(argv[1]) : 1);\n"
          "  return 0;\n"
          "}\n";
  }
  HostBuild build = cpuHostBuild("native");
  std::string log;
  if (!buildHostProgram(build, source, program, buildLog, log)) {
    error = "cannot build the microbenchmarks: " + log;
    return failure();
  }
  progress << "  kernels built as the CPU target builds a program: "
           << build.compiler;
  for (const std::string &flag : build.compileFlags)
    if (!StringRef(flag).starts_with("-I"))
      progress << " " << flag;
  progress << "\n";
  std::string threadsText = std::to_string(threads);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(output),
                                          std::nullopt};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, {program, threadsText},
                                     std::nullopt, redirects, 0, 0, &message);
  auto text = llvm::MemoryBuffer::getFile(output);
  if (rc != 0 || !text) {
    error = "the microbenchmarks failed" +
            (message.empty() ? llvm::formatv(" (exit status {0})", rc).str()
                             : ": " + message);
    return failure();
  }
  llvm::StringMap<double> timings;
  SmallVector<StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    auto [name, value] = line.split(' ');
    double seconds = 0;
    if (value.trim().getAsDouble(seconds)) {
      error = ("the microbenchmarks printed '" + line + "'").str();
      return failure();
    }
    timings[name] = seconds;
  }
  for (StringRef name : {"fork", "call", "vector", "triad", "conv", "exp",
                         "layer_norm", "softmax"})
    if (!timings.count(name)) {
      error = ("the microbenchmarks printed no '" + name + "' timing").str();
      return failure();
    }
  for (int64_t n : kGemmSizes)
    if (!timings.count("matmul_" + std::to_string(n))) {
      error = "the microbenchmarks printed no matmul timing";
      return failure();
    }
  return timings;
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

  FailureOr<llvm::StringMap<double>> timed = timeKernels(threads, log, error);
  if (failed(timed))
    return failure();
  const llvm::StringMap<double> &t = *timed;

  // Kernel overhead: the fixed cost of one kernel call (kernels on 4x8
  // tensors, whose work takes nanoseconds), plus the fork and join of an
  // empty parallel region.
  p.kernelOverheadS = t.lookup("call") + t.lookup("fork");
  log << llvm::formatv("  kernel overhead: {0:f2} us (call {1:f2} us, "
                       "fork/join {2:f2} us)\n",
                       p.kernelOverheadS * 1e6, t.lookup("call") * 1e6,
                       t.lookup("fork") * 1e6);

  // Vector peak: the multiply-add loop on every thread.
  p.peakVectorFlops =
      double(threads) * double(kVectorIters) * 128 / t.lookup("vector");
  log << llvm::formatv("  vector peak (multiply-add loop): {0:f2} GFLOP/s\n",
                       p.peakVectorFlops * 1e-9);

  // Memory bandwidth: a = b + s * c over 3 arrays.
  p.memoryBandwidth = 3.0 * 4.0 * double(kTriadSize) / t.lookup("triad");
  log << llvm::formatv("  memory bandwidth (triad, {0} MiB): {1:f2} GB/s\n",
                       3 * 4 * kTriadSize >> 20, p.memoryBandwidth * 1e-9);

  // GEMM: dtck::matmul at each size.
  std::vector<double> rates;
  for (auto [i, n] : llvm::enumerate(kGemmSizes)) {
    rates.push_back(costs[i].flops / t.lookup("matmul_" + std::to_string(n)));
    log << llvm::formatv("  matmul {0}x{0}x{0}: {1:f2} GFLOP/s\n", n,
                         rates.back() * 1e-9);
  }
  p.peakGemmFlops = *std::max_element(rates.begin(), rates.end());
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  p.efficiency.gemm = sorted[sorted.size() / 2] / p.peakGemmFlops;

  // Convolution: 3x3, 32 -> 64 channels, 32x32 images, batch 4.
  double conv = convCost.flops / t.lookup("conv");
  p.efficiency.conv = std::min(1.0, conv / p.peakGemmFlops);
  log << llvm::formatv("  conv 3x3 32->64 @32x32 (batch 4): {0:f2} "
                       "GFLOP/s\n",
                       conv * 1e-9);

  // Elementwise: exp over 256 KiB (cache-resident).
  double exp = expCost.flops / t.lookup("exp");
  p.efficiency.elementwise = std::min(1.0, exp / p.peakVectorFlops);
  log << llvm::formatv("  exp ({0} floats): {1:f2} GFLOP/s counted\n", kExpSize,
                       exp * 1e-9);

  // Reductions: layer_norm and softmax of 256 rows of 256.
  double ln = lnCost.flops / t.lookup("layer_norm"),
         sm = smCost.flops / t.lookup("softmax");
  p.efficiency.reduction = std::min(1.0, (ln + sm) / 2 / p.peakVectorFlops);
  log << llvm::formatv("  layer_norm 256x256: {0:f2} GFLOP/s counted\n",
                       ln * 1e-9);
  log << llvm::formatv("  softmax 256x256: {0:f2} GFLOP/s counted\n",
                       sm * 1e-9);
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
