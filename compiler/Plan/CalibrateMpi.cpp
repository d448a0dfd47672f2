//===- CalibrateMpi.cpp - measure MPI collectives into a device profile ---===//

#include "compiler/Plan/Calibrate.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// dtc-comm-bench beside this executable.
std::string benchPath() {
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  SmallString<256> path(self);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "dtc-comm-bench");
  return path.str().str();
}

/// Runs the benchmark on `ranks` ranks; its lines into `samples`.
LogicalResult measure(int64_t ranks, StringRef mpirun, StringRef bench,
                      std::vector<DeviceProfile::AllReduceSample> &samples,
                      std::string &error) {
  SmallString<128> out, err;
  if (llvm::sys::fs::createTemporaryFile("dtc-comm-bench", "out", out) ||
      llvm::sys::fs::createTemporaryFile("dtc-comm-bench", "err", err)) {
    error = "cannot create a temporary file for mpirun's output";
    return failure();
  }
  std::string np = std::to_string(ranks);
  SmallVector<StringRef> argv = {mpirun, "--oversubscribe",   "-np", np,
                                 "-x",   "OMP_NUM_THREADS=1", bench};
  std::optional<StringRef> redirects[] = {std::nullopt, out.str(), err.str()};
  std::string why;
  int rc = llvm::sys::ExecuteAndWait(mpirun, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/300, 0, &why);
  auto text = llvm::MemoryBuffer::getFile(out);
  auto errText = llvm::MemoryBuffer::getFile(err);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(err);
  if (rc != 0 || !text) {
    error = llvm::formatv(
        "mpirun -np {0} {1} failed{2}{3}", ranks, bench,
        why.empty() ? "" : ": " + why,
        errText ? "\n" + (*errText)->getBuffer().take_front(2000).rtrim().str()
                : "");
    return failure();
  }
  SmallVector<StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, false);
  size_t before = samples.size();
  for (StringRef line : lines) {
    SmallVector<StringRef> f;
    line.split(f, ' ', -1, false);
    int64_t n = 0;
    double bytes = 0, seconds = 0;
    if (f.size() != 3 || f[0].getAsInteger(10, n) || f[1].getAsDouble(bytes) ||
        f[2].getAsDouble(seconds) || n != ranks || seconds <= 0) {
      error = "unexpected output of dtc-comm-bench: '" + line.str() + "'";
      return failure();
    }
    samples.push_back({n, bytes, seconds});
  }
  if (samples.size() == before) {
    error = "dtc-comm-bench printed no measurements";
    return failure();
  }
  return success();
}

/// t = a + b * bytes by least squares in relative error (weights 1/t^2),
/// so that small messages (latency) and large ones (bandwidth) both count.
std::pair<double, double> fit(ArrayRef<DeviceProfile::AllReduceSample> s) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const DeviceProfile::AllReduceSample &p : s) {
    double w = 1 / (p.seconds * p.seconds);
    sw += w;
    sx += w * p.bytes;
    sy += w * p.seconds;
    sxx += w * p.bytes * p.bytes;
    sxy += w * p.bytes * p.seconds;
  }
  double det = sw * sxx - sx * sx;
  double b = det > 0 ? (sw * sxy - sx * sy) / det : 0;
  double a = (sy - b * sx) / sw;
  return {std::max(a, 0.0), std::max(b, 1e-18)};
}

} // namespace

LogicalResult mlir::dtc::calibrateMpi(ArrayRef<int64_t> ranks, DeviceProfile &p,
                                      llvm::raw_ostream &log,
                                      std::string &error) {
  auto mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun) {
    error = "--mpi-ranks: cannot find mpirun on PATH (OpenMPI); give "
            "--mpi-ranks none to keep the built-in links";
    return failure();
  }
  std::string bench = benchPath();
  if (!llvm::sys::fs::can_execute(bench)) {
    error = "--mpi-ranks: cannot find " + bench +
            " (built with dtc, beside the dtc binary)";
    return failure();
  }
  int64_t inside = 0, beyond = 0;
  for (int64_t n : ranks) {
    size_t first = p.allReduceSamples.size();
    if (failed(measure(n, *mpirun, bench, p.allReduceSamples, error)))
      return failure();
    auto [a, b] = fit(ArrayRef(p.allReduceSamples).drop_front(first));
    // The ring: 2(n-1) messages, each rank sending 2(n-1)/n of the bytes.
    DeviceProfile::Link link;
    link.latencyS = a / (2.0 * double(n - 1));
    link.bandwidth = 2.0 * double(n - 1) / double(n) / b;
    log << llvm::formatv("  MPI all-reduce over {0} ranks: {1:f2} us a "
                         "message, {2:f2} GB/s ({3} sizes)\n",
                         n, link.latencyS * 1e6, link.bandwidth / 1e9,
                         p.allReduceSamples.size() - first);
    if (n <= p.devicesPerNode && n >= inside) {
      p.intraNode = link;
      inside = n;
    } else if (n > p.devicesPerNode && n >= beyond) {
      p.interNode = link;
      beyond = n;
    }
  }
  p.networkEfficiency = 1;
  return success();
}
