//===- Profile.h - device time per op, measured with events ---------------===//
//
// DTCG_PROFILE=FILE (or `-` for stderr) makes a CUDA program time every op
// of its step on the device: the generated code calls dtcg::beginOp before
// each op, which (when profiling) records an event on the compute stream;
// after each step the time between consecutive events is charged to the op
// that began at the first. The first two steps (plans, scratch buffers) are
// not counted. At exit the program writes a table of the ops by device
// time per step, named by their ONNX nodes; with DTCG_PROFILE_BY=kernel, of
// the kernels and library calls instead (by kernel name: the generated ones
// carry their first ONNX node's). Communication on the communication
// stream shows as the compute stream's waits for it.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_PROFILE_H
#define DTCRT_CUDA_PROFILE_H

#include "dtcrt/cuda/Device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace dtcg {

class OpProfiler {
public:
  static OpProfiler &get() {
    // Never destroyed: the table is written at exit.
    static OpProfiler *profiler = new OpProfiler;
    return *profiler;
  }

  bool enabled() const { return !path.empty(); }
  /// Whether ops mark their beginnings (else kernels do).
  bool byOp() const { return enabled() && !byKernel; }

  /// An event on the compute stream where `name` begins (nullptr: the
  /// step's end).
  void mark(const char *name) {
    if (used == events.size()) {
      cudaEvent_t event = nullptr;
      check(cudaEventCreate(&event), "creating a profiling event");
      events.push_back(event);
      names.push_back(nullptr);
    }
    check(cudaEventRecord(events[used], stream()), "recording an event");
    names[used++] = name;
  }

  /// After the step's synchronization: charges the intervals (not those of
  /// an evaluation's forward pass, `counted` false).
  void endStep(bool counted) {
    if (counted && steps++ >= kWarmup) {
      for (size_t i = 0; i + 1 < used; ++i) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, events[i], events[i + 1]),
              "reading a profiling event");
        Total &t = totals[names[i] ? names[i] : "(step)"];
        t.ms += ms;
        ++t.calls;
      }
    }
    used = 0;
  }

private:
  struct Total {
    double ms = 0;
    int64_t calls = 0;
  };
  static constexpr int kWarmup = 2;

  OpProfiler() {
    const char *env = std::getenv("DTCG_PROFILE");
    if (!env || !*env)
      return;
    path = env;
    const char *by = std::getenv("DTCG_PROFILE_BY");
    byKernel = by && std::string(by) == "kernel";
    if (byKernel)
      kernelMark() = [](const char *name) { get().mark(name); };
    std::atexit([] { get().write(); });
  }

  void write() const {
    int counted = steps - kWarmup;
    if (counted <= 0)
      return;
    FILE *out = path == "-" ? stderr : std::fopen(path.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "error: cannot write the profile to %s\n",
                   path.c_str());
      return;
    }
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto &[name, t] : totals) {
      rows.push_back({t.ms / counted, name});
      total += t.ms / counted;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(out,
                 "# device time per step by %s (mean of %d steps after %d "
                 "of warm-up): %.3f ms\n# ms/step   share  calls/step  %s\n",
                 byKernel ? "kernel" : "op", counted, kWarmup, total,
                 byKernel ? "kernel" : "op");
    for (const auto &[ms, name] : rows)
      std::fprintf(out, "%9.4f  %5.1f%%  %10.1f  %s\n", ms,
                   total > 0 ? 100 * ms / total : 0.0,
                   double(totals.at(name).calls) / counted, name.c_str());
    if (out != stderr)
      std::fclose(out);
  }

  std::string path;
  bool byKernel = false;
  std::vector<cudaEvent_t> events;
  std::vector<const char *> names;
  size_t used = 0;
  int steps = 0;
  std::map<std::string, Total> totals;
};

/// The op about to run (its ONNX node): named in error messages and, under
/// DTCG_PROFILE, timed.
inline void beginOp(const char *name) {
  currentOp() = name;
  OpProfiler &profiler = OpProfiler::get();
  if (profiler.byOp())
    profiler.mark(name);
}

} // namespace dtcg

#endif // DTCRT_CUDA_PROFILE_H
