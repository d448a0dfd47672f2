//===- CommBench.cpp - time the runtime's all-reduce under mpirun ---------===//
//
// `mpirun -np N dtc-comm-bench [SIZES...]` joins a data-parallel mesh of N
// ranks through the runtime (the channels and ring collectives every
// generated program uses) and times a float all-reduce of each size in
// bytes (default: 8 B to 16 MiB by factors of 8). For each size it prints,
// from rank 0, one line `ranks bytes seconds`: the median over repetitions
// of the slowest rank's time, each repetition started together (after a
// small all-reduce). `dtc calibrate --mpi-ranks` reads these lines.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Comm/Collectives.h"
#include "runtime/src/Comm/Mesh.h"

#include "dtcrt/dtcrt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dtcrt;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void fail(const std::string &message) {
  abortRun("dtc-comm-bench: " + message);
}

/// The all-reduce of `count` floats over `c`, its maximum over the ranks.
double timedAllReduce(Channel &c, std::vector<float> &data, int64_t count) {
  std::string error;
  float token = 0;
  if (!allReduce(c, DType::F32, ReduceOp::Sum, &token, &token, 1, error))
    fail(error);
  double start = now();
  if (!allReduce(c, DType::F32, ReduceOp::Sum, data.data(), data.data(), count,
                 error))
    fail(error);
  double seconds = now() - start;
  if (!allReduce(c, DType::F64, ReduceOp::Max, &seconds, &seconds, 1, error))
    fail(error);
  return seconds;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    char *end = nullptr;
    long long v = std::strtoll(argv[i], &end, 10);
    if (!end || *end || v < 4 || v > (1LL << 32)) {
      std::fprintf(stderr,
                   "dtc-comm-bench: error: sizes are bytes from 4 to 2^32, "
                   "got '%s'\n",
                   argv[i]);
      return 1;
    }
    sizes.push_back(v);
  }
  if (sizes.empty())
    for (int64_t b = 8; b <= (int64_t(16) << 20); b *= 8)
      sizes.push_back(b);
  int launched = 1;
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *v = std::getenv(var)) {
      launched = std::atoi(v);
      break;
    }
  Mesh &mesh = processMesh();
  std::string error;
  if (launched < 2 || !mesh.init({1, launched, 1}, error)) {
    std::fprintf(stderr, "dtc-comm-bench: error: %s\n",
                 launched < 2 ? "run it under mpirun -np N with N >= 2"
                              : error.c_str());
    return 1;
  }
  Channel &c = mesh.group(DTCRT_AXIS_DP);
  for (int64_t bytes : sizes) {
    int64_t count = bytes / 4;
    std::vector<float> data(size_t(count), 1.0f);
    // Repetitions: enough for about 0.2 s, from 5 to 200.
    double first = timedAllReduce(c, data, count);
    int reps = int(std::clamp(0.2 / std::max(first, 1e-7), 5.0, 200.0));
    std::vector<double> times;
    for (int r = 0; r < reps; ++r)
      times.push_back(timedAllReduce(c, data, count));
    std::sort(times.begin(), times.end());
    if (mesh.rank() == 0)
      std::printf("%d %lld %.9g\n", mesh.size(), (long long)(count * 4),
                  times[times.size() / 2]);
  }
  std::fflush(stdout);
  mesh.finalize();
  return 0;
}
