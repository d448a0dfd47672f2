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
// Host copies go through pinned buffers. A training step returns once it
// is queued (`finish_step` waits for it and hands its results over), so the
// runtime can fill the next batch meanwhile and hand it to `stage_inputs`,
// which copies it to a second device buffer on a stream of its own while
// the step runs; the next step waits for that copy by an event instead of
// copying its inputs itself.
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

/// The stream that copies the next step's inputs to the device.
inline cudaStream_t copyStream() {
  static cudaStream_t s = createStream("creating the copy stream");
  return s;
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
    // Inputs (what changes every step but is not a hyperparameter) get a
    // second device buffer for the staged next batch.
    int64_t staged = 0;
    for (auto &t : this->args)
      if (std::string(t.role) == "input")
        staged += align(tensorBytes(t));
    if (staged > 0) {
      void *second = nullptr;
      check(cudaMalloc(&second, size_t(staged)),
            "allocating device memory for the next batch");
      stagedMemory = static_cast<uint8_t *>(second);
    }
    int64_t at = 0;
    for (auto &t : this->args) {
      isInput.push_back(std::string(t.role) == "input");
      stagedDevice.push_back(isInput.back() ? stagedMemory + at : nullptr);
      if (isInput.back())
        at += align(tensorBytes(t));
    }
    check(cudaEventCreateWithFlags(&stagedEvent, cudaEventDisableTiming),
          "creating an event");
  }

  /// One step (or, with `eval`, the forward-only loss) of `fn` on the
  /// device, with the host's `hostArgs` and `hostResults`.
  void run(void *const *hostArgs, void *const *hostResults, dtcrt_step_ctx *ctx,
           StepFunction fn, bool eval) {
    finish();
    if (ctx->guard)
      fatal("train --guard checks the CPU target's arena; the CUDA "
            "emulation checks every access itself (see Emulation.h)");
    // The inputs staged during the previous step (not for an eval, which
    // brings its own and leaves them for the next training step).
    bool useStaged = haveStaged && !eval;
    if (useStaged) {
      check(cudaStreamWaitEvent(stream(), stagedEvent, 0),
            "waiting for the next batch's copy");
      for (size_t a = 0; a < args.size(); ++a)
        if (isInput[a])
          std::swap(argDevice[a], stagedDevice[a]);
      haveStaged = false;
    }
    // The carried state goes over once, straight from the host's buffers
    // (pinned staging as large as the model would stay allocated); what a
    // step brings goes through pinned memory.
    std::vector<size_t> copies;
    for (size_t a = 0; a < args.size(); ++a) {
      if (!isCarried(args[a].role)) {
        if (!(useStaged && isInput[a]))
          copies.push_back(a);
      } else if (!statePushed) {
        check(cudaMemcpyAsync(argDevice[a], hostArgs[a],
                              size_t(tensorBytes(args[a])),
                              cudaMemcpyHostToDevice, stream()),
              "copying the state to the device");
      }
    }
    copyToDevice(hostArgs, copies, argDevice, stream(), pinnedArgs[turn]);
    turn ^= 1;
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
    // The results the host reads, and the error flag, into pinned memory.
    const std::vector<dtcrt_tensor_desc> &descs = eval ? evalResults : results;
    pending.clear();
    size_t bytes = sizeof(int);
    for (size_t r = 0; r < descs.size(); ++r) {
      if (!eval && resultArg[r] >= 0)
        continue; // carried: stays on the device
      pending.push_back(
          {hostResults[r], out[r], bytes, size_t(tensorBytes(descs[r]))});
      bytes += size_t(tensorBytes(descs[r]));
    }
    auto *pinned = static_cast<uint8_t *>(pinnedResults.reserve(bytes));
    for (const Pending &p : pending)
      check(cudaMemcpyAsync(pinned + p.offset, p.device, p.bytes,
                            cudaMemcpyDeviceToHost, stream()),
            "copying a result to the host");
    check(cudaMemcpyAsync(pinned, errorFlag(), sizeof(int),
                          cudaMemcpyDeviceToHost, stream()),
          "reading the kernels' error flag");
    running = ctx;
    runningEval = eval;
    // The next step's arguments: each carried result that is not in place
    // trades buffers with its argument (the runtime does the same with its
    // host buffers).
    if (!eval)
      for (size_t r = 0; r < results.size(); ++r)
        if (resultArg[r] >= 0 && !results[r].in_place)
          std::swap(argDevice[resultArg[r]], resultDevice[r]);
    if (eval || !asyncSteps)
      finish();
  }

  /// Waits for the step that `run` queued and hands its results over.
  void finish() {
    if (!running)
      return;
    synchronize(running, "running the step");
    running = nullptr;
    currentOp() = nullptr;
    OpProfiler &profiler = OpProfiler::get();
    if (profiler.enabled())
      profiler.endStep(!runningEval);
    auto *pinned = static_cast<uint8_t *>(pinnedResults.data);
    for (const Pending &p : pending)
      std::memcpy(p.host, pinned + p.offset, p.bytes);
    int failed = 0;
    std::memcpy(&failed, pinned, sizeof(int));
    if (failed)
      fatal("a kernel found an index out of range (a class label or token "
            "id outside its table)");
  }

  /// Copies the next training step's inputs (in the host's `hostArgs`) to
  /// the device while the queued step runs.
  void stageInputs(void *const *hostArgs) {
    std::vector<size_t> inputs;
    for (size_t a = 0; a < args.size(); ++a)
      if (isInput[a])
        inputs.push_back(a);
    if (inputs.empty())
      return;
    // The staged buffers were last read by the step before the queued one,
    // which has finished: no wait is needed before overwriting them.
    copyToDevice(hostArgs, inputs, stagedDevice, copyStream(),
                 pinnedStaged[stageTurn]);
    stageTurn ^= 1;
    check(cudaEventRecord(stagedEvent, copyStream()),
          "recording the next batch's copy");
    haveStaged = true;
  }

  /// Whether `run` returns before a training step ends (DTCG_SYNC_STEPS=1
  /// makes every step synchronous).
  bool asyncSteps = [] {
    const char *text = std::getenv("DTCG_SYNC_STEPS");
    return !(text && std::string(text) == "1");
  }();

  /// Copies the carried state into the host's argument buffers.
  void stateToHost(void *const *hostArgs) {
    finish();
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
  /// Copies the host's `hostArgs[a]` for each `a` of `which` into
  /// `device[a]` on `s`, through `pinned` (which the previous copy through
  /// it has finished reading: copies alternate between two).
  void copyToDevice(void *const *hostArgs, const std::vector<size_t> &which,
                    std::vector<void *> &device, cudaStream_t s,
                    PinnedBuffer &pinned) {
    size_t total = 0;
    for (size_t a : which)
      total += size_t(tensorBytes(args[a]));
    auto *staging = static_cast<uint8_t *>(pinned.reserve(total));
    size_t at = 0;
    for (size_t a : which) {
      size_t n = size_t(tensorBytes(args[a]));
      std::memcpy(staging + at, hostArgs[a], n);
      check(cudaMemcpyAsync(device[a], staging + at, n, cudaMemcpyHostToDevice,
                            s),
            "copying an argument to the device");
      at += n;
    }
  }

  /// A result the host reads: where it goes, where it is, its place in
  /// the pinned buffer, its size.
  struct Pending {
    void *host;
    const void *device;
    size_t offset, bytes;
  };

  std::vector<dtcrt_tensor_desc> args, results, evalResults;
  std::vector<int> resultArg; // the argument a carried result updates
  std::vector<void *> argDevice, resultDevice, evalDevice;
  uint8_t *memory = nullptr;
  bool statePushed = false;
  // Inputs: which arguments they are, their second buffers (staged).
  std::vector<bool> isInput;
  std::vector<void *> stagedDevice;
  uint8_t *stagedMemory = nullptr;
  cudaEvent_t stagedEvent = nullptr;
  bool haveStaged = false;
  // Pinned copies of the arguments a step copies itself and of the staged
  // inputs (each alternating between two: a copy through one may still be
  // running when the next begins), and of the results.
  PinnedBuffer pinnedArgs[2], pinnedStaged[2], pinnedResults;
  int turn = 0, stageTurn = 0;
  // The queued step: its context, whether an eval, results to hand over.
  dtcrt_step_ctx *running = nullptr;
  bool runningEval = false;
  std::vector<Pending> pending;
};

} // namespace dtcg

#endif // DTCRT_CUDA_PROGRAM_H
