//===- Program.h - one rank's device memory and the step around it --------===//
//
// The CUDA target's `step` runs the generated step function on the device.
// One cudaMalloc holds the plan's arena and a device buffer of every
// argument and result. The carried state (parameters, constants, state,
// optimizer state) goes to the device before the first step and stays
// there: a result that updates an argument in place shares its buffer, and
// the others trade buffers with their argument after each step, as the
// runtime's host buffers do. Inputs and hyperparameters go to the device
// every step; metrics (and gradients) come back every step. The runtime
// asks for the state (checkpoints, --save-onnx) through
// dtcrt_model_desc::state_to_host.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_CUDA_PROGRAM_H
#define DTCRT_CUDA_PROGRAM_H

#include "dtcrt/cuda/Device.h"
#include "dtcrt/cuda/Nccl.h"
#include "dtcrt/cuda/Profile.h"
#include "dtcrt/dtcrt.h"

#include <cstring>
#include <string>
#include <vector>

namespace dtcg {

inline int64_t tensorBytes(const dtcrt_tensor_desc &t) {
  int64_t n = dtypeBytes(t.dtype);
  for (int d = 0; d < t.rank; ++d)
    n *= t.dims[d];
  return n;
}

inline bool isCarried(const char *role) {
  std::string r = role;
  return r == "parameter" || r == "constant" || r == "state" ||
         r == "optimizer_state";
}

/// A copy of host bytes in device memory, made once (constants).
inline void *deviceCopy(const void *host, size_t bytes) {
  selectDevice();
  void *p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "allocating a constant");
  check(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice),
        "copying a constant to the device");
  return p;
}

using StepFunction = void (*)(void *const *, void *const *, dtcrt_step_ctx *,
                              int64_t);

class Program {
public:
  Program(const dtcrt_tensor_desc *args, int numArgs,
          const dtcrt_tensor_desc *results, int numResults,
          const dtcrt_tensor_desc *evalResults, int numEvalResults,
          int64_t arenaBytes)
      : args(args, args + numArgs), results(results, results + numResults),
        evalResults(evalResults, evalResults + numEvalResults) {
    selectDevice();
    // One allocation: the arena, then each buffer (256-byte aligned).
    auto align = [](int64_t n) { return (n + 255) / 256 * 256; };
    int64_t total = align(arenaBytes);
    std::vector<int64_t> argAt, resultAt, evalAt;
    for (auto &t : this->args) {
      argAt.push_back(total);
      total += align(tensorBytes(t));
    }
    resultArg.assign(numResults, -1);
    for (int r = 0; r < numResults; ++r) {
      for (int a = 0; a < numArgs; ++a)
        if (isCarried(results[r].role) &&
            std::string(args[a].name) == results[r].name &&
            std::string(args[a].role) == results[r].role)
          resultArg[r] = a;
      resultAt.push_back(total);
      if (resultArg[r] < 0 || !results[r].in_place)
        total += align(tensorBytes(results[r]));
    }
    for (auto &t : this->evalResults) {
      evalAt.push_back(total);
      total += align(tensorBytes(t));
    }
    void *base = nullptr;
    check(cudaMalloc(&base, size_t(total)),
          ("allocating " + std::to_string(total) +
           " bytes of device memory (arena and tensors)")
              .c_str());
    check(cudaMemsetAsync(base, 0, size_t(total), stream()),
          "clearing device memory");
    memory = static_cast<uint8_t *>(base);
    for (int64_t at : argAt)
      argDevice.push_back(memory + at);
    for (int r = 0; r < numResults; ++r)
      resultDevice.push_back(resultArg[r] >= 0 && results[r].in_place
                                 ? argDevice[resultArg[r]]
                                 : memory + resultAt[r]);
    for (int64_t at : evalAt)
      evalDevice.push_back(memory + at);
  }

  /// One step (or, with `eval`, the forward-only loss) of `fn` on the
  /// device, with the host's `hostArgs` and `hostResults`.
  void run(void *const *hostArgs, void *const *hostResults, dtcrt_step_ctx *ctx,
           StepFunction fn, bool eval) {
    if (ctx->guard)
      fatal("train --guard checks the CPU target's arena; the CUDA "
            "emulation checks every access itself (see Emulation.h)");
    for (size_t a = 0; a < args.size(); ++a) {
      if (statePushed && isCarried(args[a].role))
        continue;
      check(cudaMemcpyAsync(argDevice[a], hostArgs[a],
                            size_t(tensorBytes(args[a])),
                            cudaMemcpyHostToDevice, stream()),
            "copying an argument to the device");
    }
    statePushed = true;
    dtcrt_step_ctx device = *ctx;
    device.arena = memory;
    device.guard = 0;
    std::vector<void *> &out = eval ? evalDevice : resultDevice;
    fn(argDevice.data(), out.data(), &device, 0);
    OpProfiler &profiler = OpProfiler::get();
    if (profiler.enabled())
      profiler.mark(nullptr);
    ctx->high_water = device.high_water;
    const std::vector<dtcrt_tensor_desc> &descs = eval ? evalResults : results;
    for (size_t r = 0; r < descs.size(); ++r) {
      if (!eval && resultArg[r] >= 0)
        continue; // carried: stays on the device
      check(cudaMemcpyAsync(hostResults[r], out[r],
                            size_t(tensorBytes(descs[r])),
                            cudaMemcpyDeviceToHost, stream()),
            "copying a result to the host");
    }
    int failed = 0;
    check(cudaMemcpyAsync(&failed, errorFlag(), sizeof(int),
                          cudaMemcpyDeviceToHost, stream()),
          "reading the kernels' error flag");
    synchronize(ctx, "running the step");
    currentOp() = nullptr;
    if (profiler.enabled())
      profiler.endStep(!eval);
    if (failed)
      fatal("a kernel found an index out of range (a class label or token "
            "id outside its table)");
    if (eval)
      return;
    // The next step's arguments: each carried result that is not in place
    // trades buffers with its argument (the runtime does the same with its
    // host buffers).
    for (size_t r = 0; r < results.size(); ++r)
      if (resultArg[r] >= 0 && !results[r].in_place)
        std::swap(argDevice[resultArg[r]], resultDevice[r]);
  }

  /// Copies the carried state into the host's argument buffers.
  void stateToHost(void *const *hostArgs) {
    if (!statePushed)
      return; // the host's copies are the newest
    for (size_t a = 0; a < args.size(); ++a)
      if (isCarried(args[a].role))
        check(cudaMemcpyAsync(hostArgs[a], argDevice[a],
                              size_t(tensorBytes(args[a])),
                              cudaMemcpyDeviceToHost, stream()),
              "copying the state to the host");
    check(cudaStreamSynchronize(stream()), "copying the state to the host");
  }

private:
  std::vector<dtcrt_tensor_desc> args, results, evalResults;
  std::vector<int> resultArg; // the argument a carried result updates
  std::vector<void *> argDevice, resultDevice, evalDevice;
  uint8_t *memory = nullptr;
  bool statePushed = false;
};

} // namespace dtcg

#endif // DTCRT_CUDA_PROGRAM_H
