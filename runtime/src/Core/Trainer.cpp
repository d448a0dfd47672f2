//===- Trainer.cpp - dtcrt_train_main: the training loop ------------------===//
//
// Implements OUTDIR/train: reads the command line, loads the initial
// weights (or a checkpoint), feeds the step its data batch by batch, carries
// parameters, state and optimizer state from one step to the next, and logs,
// evaluates, checkpoints and exports as asked.
//
//===----------------------------------------------------------------------===//

#include "dtcrt/dtcrt.h"

#include "runtime/src/Checkpoint/Checkpoint.h"
#include "runtime/src/Comm/Collectives.h"
#include "runtime/src/Comm/Mesh.h"
#include "runtime/src/Core/Buffer.h"
#include "runtime/src/Core/Files.h"
#include "runtime/src/Core/Hyper.h"
#include "runtime/src/Core/Model.h"
#include "runtime/src/Core/Options.h"
#include "runtime/src/Core/Report.h"
#include "runtime/src/Data/DataSource.h"
#include "runtime/src/Data/Npy.h"
#include "runtime/src/Log/Json.h"
#include "runtime/src/Log/Log.h"
#include "runtime/src/Onnx/SaveOnnx.h"

#include "runtime/src/Core/Timeline.h"
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <unistd.h>

using namespace dtcrt;

namespace {
/// One run of `train`.
class Trainer {
public:
  explicit Trainer(const dtcrt_model_desc *desc) : desc(desc) {}

  /// Runs the command line; returns the exit status.
  int run(int argc, char **argv);
  /// A data input of some stage of the pipeline (--data may name it).
  void addPipelineInput(const std::string &name) {
    pipelineInputs.push_back(name);
  }

private:
  bool joinMesh(std::string &error);
  void setThreadsPerRank();
  bool writeRankReport(std::string &error);
  bool wholeTensor(int arg, std::vector<uint8_t> &whole, std::string &error);
  bool wholeOf(const TensorInfo &t, const uint8_t *block,
               std::vector<uint8_t> &whole, std::string &error);
  static void aroundSplit(const TensorInfo &t, int64_t &outer, int64_t &inner);
  void keepBlock(int arg, const void *whole);
  bool checkOutputs(std::string &error);
  bool allocate(std::string &error);
  bool loadWeights(std::string &error);
  bool openData(std::string &error);
  bool resume(std::string &error);
  bool trainStep(std::string &error);
  double evaluate();
  bool saveCheckpointNow(std::string &error);
  bool saveDistributedCheckpoint(
      const std::vector<CheckpointTensor> &tensors,
      const std::vector<std::pair<std::string, double>> &values,
      std::string &path, std::string &error);
  std::vector<CheckpointTensor> writtenTensors();
  bool saveOnnx(std::string &error);
  bool dumpGradients(std::string &error);
  std::vector<CheckpointTensor>
  carriedTensors(std::vector<std::vector<uint8_t>> &wholes, bool gather);
  std::vector<uint8_t *> inputBuffers();
  void logHeader();

  const dtcrt_model_desc *desc;
  ModelInfo model;
  std::vector<std::string> pipelineInputs;
  TrainOptions options;
  std::vector<HyperValue> hypers;
  std::vector<std::string> notes;
  std::vector<AlignedBuffer> argBuffers, resultBuffers, evalResultBuffers;
  /// Bytes of every argument and result buffer of the steps.
  int64_t tensorBytes = 0;
  std::vector<void *> argPointers, resultPointers, evalResultPointers;
  AlignedBuffer arena;
  dtcrt_step_ctx ctx = {};
  std::unique_ptr<DataSource> data, evalData;
  JsonlLog log;
  /// Steps completed, and samples taken from the data stream.
  int64_t step = 0, position = 0;
  /// The data position whose batch the program already holds (staged
  /// during the previous step), or -1.
  int64_t stagedPosition = -1;
  int64_t lastCheckpoint = -1;
  /// The step this run started after (0, or the resumed checkpoint's).
  int64_t firstStep = 0;
  /// Result indices of role gradient.
  std::vector<int> gradients;
  /// This process's place in the mesh; its data-parallel coordinate.
  Mesh *mesh = nullptr;
  int dpRank = 0;
  /// Threads each rank runs when the runtime chose them (0: OpenMP's
  /// default or OMP_NUM_THREADS).
  int threadsPerRank = 0;
  /// Bytes sent per mesh-axis group in the last step, by mask.
  int64_t lastStepBytes[8] = {};
  /// Seconds blocked in each group's collectives: the last step, and the
  /// sum over the steps after a run's first (its warm-up) and their count.
  double lastStepWait[8] = {}, waitAfterFirst[8] = {};
  int64_t stepsAfterFirst = 0;
};
} // namespace

/// Joins the mesh the program was compiled for; under a launcher, only
/// the first rank reports a mismatch (every rank finds the same one).
bool Trainer::joinMesh(std::string &error) {
  mesh = &processMesh();
  std::array<int, kNumAxes> sizes = {model.meshSizes[0], model.meshSizes[1],
                                     model.meshSizes[2]};
  if (!mesh->init(sizes, error))
    return false;
  setProgressQuiet(mesh->rank() != 0);
  dpRank = mesh->coord(kAxisDP);
  ctx.mesh = mesh->isDistributed() ? mesh : nullptr;
  if (mesh->isDistributed())
    setThreadsPerRank();
  return true;
}

// OpenMP's, where the generated program links it (it does: its kernels
// are OpenMP loops); the runtime itself does not.
extern "C" void omp_set_num_threads(int) __attribute__((weak));

/// Ranks sharing a node share its cores: unless OMP_NUM_THREADS says
/// otherwise, each rank runs the cores divided by the ranks on its node
/// (at least one), so `mpirun -np 8` on 2 cores does not run 8 x 2
/// threads.
void Trainer::setThreadsPerRank() {
  if (std::getenv("OMP_NUM_THREADS") || !omp_set_num_threads)
    return;
  int local = 1;
  for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                          "MV2_COMM_WORLD_LOCAL_SIZE"})
    if (const char *text = std::getenv(var)) {
      int64_t n = 0;
      if (parseInt64(text, n) && n > 0) {
        local = int(n);
        break;
      }
    }
  int cores = int(std::thread::hardware_concurrency());
  threadsPerRank = std::max(1, cores / std::max(local, 1));
  omp_set_num_threads(threadsPerRank);
}

/// A carried argument as the whole tensor: its own buffer, or for a block
/// of a split tensor the blocks of its group gathered (every rank of the
/// group takes part).
bool Trainer::wholeTensor(int arg, std::vector<uint8_t> &whole,
                          std::string &error) {
  return wholeOf(model.args[size_t(arg)], argBuffers[size_t(arg)].data(), whole,
                 error);
}

/// The whole tensor of which `block` is this rank's block, as `t` (an
/// argument or a result) describes it.
bool Trainer::wholeOf(const TensorInfo &t, const uint8_t *block,
                      std::vector<uint8_t> &whole, std::string &error) {
  int64_t outer, inner, dim = t.shape[size_t(t.shardDim)];
  aroundSplit(t, outer, inner);
  std::vector<uint8_t> mid;
  Channel *group = &mesh->group(t.shardAxes);
  if (t.shardInnerAxes) {
    // The block of the outer axes first, from the inner group's blocks.
    Channel &in = mesh->group(t.shardInnerAxes);
    mid.resize(t.bytes * size_t(in.size()));
    if (!allGather(in, t.dtype, block, mid.data(), outer, dim, inner, error))
      return false;
    block = mid.data();
    dim *= in.size();
    group = &mesh->group(t.shardAxes & ~t.shardInnerAxes);
  }
  whole.resize(t.bytes * size_t(mesh->group(t.shardAxes).size()));
  return allGather(*group, t.dtype, block, whole.data(), outer, dim, inner,
                   error);
}

/// The elements before and after the split dimension of a block.
void Trainer::aroundSplit(const TensorInfo &t, int64_t &outer, int64_t &inner) {
  outer = inner = 1;
  for (int d = 0; d < t.shardDim; ++d)
    outer *= t.shape[size_t(d)];
  for (size_t d = size_t(t.shardDim) + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
}

/// Copies this rank's block of the whole tensor `whole` into split argument
/// `arg`.
void Trainer::keepBlock(int arg, const void *whole) {
  const TensorInfo &t = model.args[size_t(arg)];
  int64_t outer, inner, dim = t.shape[size_t(t.shardDim)];
  aroundSplit(t, outer, inner);
  size_t es = dtypeSize(t.dtype);
  if (!t.shardInnerAxes) {
    Channel &group = mesh->group(t.shardAxes);
    localBlock(group.rank(), group.size(), es, whole,
               argBuffers[size_t(arg)].data(), outer, dim, inner);
    return;
  }
  // The outer axes' block, then the inner group's block of it.
  Channel &out = mesh->group(t.shardAxes & ~t.shardInnerAxes);
  Channel &in = mesh->group(t.shardInnerAxes);
  std::vector<uint8_t> mid(t.bytes * size_t(in.size()));
  localBlock(out.rank(), out.size(), es, whole, mid.data(), outer,
             dim * in.size(), inner);
  localBlock(in.rank(), in.size(), es, mid.data(),
             argBuffers[size_t(arg)].data(), outer, dim, inner);
}

/// Finds problems with the outputs before training, not after it.
bool Trainer::checkOutputs(std::string &error) {
  if (!options.saveOnnx.empty()) {
    std::string why;
    if (!saveOnnxAvailable(why)) {
      error = "--save-onnx: " + why;
      return false;
    }
    std::string folder;
    if (!executableFolder(folder, error))
      return false;
    std::string source = joinPath(folder, "model.onnx");
    if (!isFile(source)) {
      error = "--save-onnx: '" + source +
              "' is missing (compile leaves model.onnx next to train)";
      return false;
    }
    std::string target = parentPath(options.saveOnnx);
    if (!isFolder(target) || access(target.c_str(), W_OK) != 0) {
      error = "--save-onnx: cannot write '" + options.saveOnnx +
              "': its folder does not exist or is not writable";
      return false;
    }
  }
  if (!options.dumpGradients.empty()) {
    for (size_t r = 0; r < model.results.size(); ++r)
      if (model.results[r].role == "gradient")
        gradients.push_back(int(r));
    if (gradients.empty()) {
      error = "--dump-gradients: this program returns no gradients; compile "
              "it with `dtc compile --return-gradients`";
      return false;
    }
    for (int r : gradients)
      if (model.results[r].name.find('/') != std::string::npos) {
        error = "--dump-gradients: the gradient of '" + model.results[r].name +
                "' cannot be written as NAME.npy (the name holds '/')";
        return false;
      }
    std::string why;
    if (!createFolders(options.dumpGradients, why)) {
      error = "--dump-gradients: " + why;
      return false;
    }
  }
  if (!options.checkpointDir.empty() && !options.resume) {
    std::string why;
    if (!createFolders(options.checkpointDir, why)) {
      error = "--checkpoint-dir: " + why;
      return false;
    }
  }
  return true;
}

bool Trainer::allocate(std::string &error) {
  argBuffers.resize(model.args.size());
  resultBuffers.resize(model.results.size());
  for (size_t i = 0; i < model.args.size(); ++i)
    if (!argBuffers[i].allocate(model.args[i].bytes)) {
      error = "out of memory for argument '" + model.args[i].name + "' (" +
              formatBytes(int64_t(model.args[i].bytes)) + ")";
      return false;
    }
  for (size_t i = 0; i < model.results.size(); ++i)
    if (!model.results[i].inPlace &&
        !resultBuffers[i].allocate(model.results[i].bytes)) {
      error = "out of memory for result '" + model.results[i].name + "' (" +
              formatBytes(int64_t(model.results[i].bytes)) + ")";
      return false;
    }
  evalResultBuffers.resize(model.evalResults.size());
  for (size_t i = 0; i < model.evalResults.size(); ++i)
    if (!evalResultBuffers[i].allocate(model.evalResults[i].bytes)) {
      error =
          "out of memory for eval result '" + model.evalResults[i].name + "'";
      return false;
    }
  // What the steps' tensors occupy outside the arena (measured from the
  // allocations; the arena's share is its high-water mark).
  for (size_t i = 0; i < model.args.size(); ++i)
    tensorBytes += int64_t(model.args[i].bytes);
  for (size_t i = 0; i < model.results.size(); ++i)
    if (!model.results[i].inPlace)
      tensorBytes += int64_t(model.results[i].bytes);
  for (size_t i = 0; i < model.evalResults.size(); ++i)
    tensorBytes += int64_t(model.evalResults[i].bytes);
  for (AlignedBuffer &b : argBuffers)
    argPointers.push_back(b.data());
  // A result written in place is its argument's buffer.
  for (size_t i = 0; i < model.results.size(); ++i)
    resultPointers.push_back(model.results[i].inPlace
                                 ? argPointers[model.resultToArg[i]]
                                 : resultBuffers[i].data());
  for (AlignedBuffer &b : evalResultBuffers)
    evalResultPointers.push_back(b.data());
  if (!arena.allocate(size_t(desc->arena_bytes))) {
    error =
        "out of memory for the arena (" + formatBytes(desc->arena_bytes) + ")";
    return false;
  }
  ctx.arena = arena.data();
  ctx.arena_bytes = desc->arena_bytes;
  ctx.high_water = 0;
  ctx.guard = options.guard ? 1 : 0;
  ctx.current_op = nullptr;
  return true;
}

bool Trainer::loadWeights(std::string &error) {
  std::vector<int> loaded = model.carried;
  loaded.insert(loaded.end(), model.constants.begin(), model.constants.end());
  bool needed = false;
  for (int i : loaded)
    needed |= model.args[i].desc->weights_offset >= 0;
  if (!needed)
    return true;
  std::string path = options.weights;
  if (path.empty()) {
    std::string folder;
    if (!executableFolder(folder, error))
      return false;
    path = joinPath(folder,
                    desc->weights_file ? desc->weights_file : "weights.bin");
  }
  MappedFile file;
  std::string why;
  if (!file.open(path, why)) {
    error = "initial weights: " + why;
    return false;
  }
  for (int i : loaded) {
    const TensorInfo &t = model.args[i];
    int64_t offset = t.desc->weights_offset;
    if (offset < 0)
      continue;
    // The file holds whole tensors; a rank keeps its block of a split one.
    int groupSize = t.shardAxes ? mesh->group(t.shardAxes).size() : 1;
    size_t wholeBytes = t.bytes * size_t(groupSize);
    if (uint64_t(offset) > file.size() || wholeBytes > file.size() - offset) {
      error = "initial weights: '" + path + "' (" +
              std::to_string(file.size()) + " bytes) ends before " + t.role +
              " '" + t.name + "' (bytes " + std::to_string(offset) + " to " +
              std::to_string(offset + int64_t(wholeBytes)) +
              "); is it the weights.bin compiled with this program?";
      return false;
    }
    if (t.shardAxes) {
      keepBlock(i, file.data() + offset);
    } else {
      std::memcpy(argBuffers[i].data(), file.data() + offset, t.bytes);
    }
    // The file's copy of the tensor leaves memory: the step's peak, not
    // loading, is the run's high-water mark.
    file.release(size_t(offset), wholeBytes);
  }
  return true;
}

bool Trainer::openData(std::string &error) {
  if (!model.inputs.empty()) {
    if (options.synthetic)
      data = makeSyntheticData(model);
    else if (!options.data.empty()) {
      if (!openNpyData(model, options.data, "--data", data, error))
        return false;
    } else if (options.steps > 0) {
      error = "no training data: pass --data NAME=FILE.npy,... or --synthetic";
      return false;
    }
  } else if (!options.data.empty() && model.pipelineInputs.empty()) {
    error = "--data: this model has no data inputs";
    return false;
  }
  if (!options.evalData.empty()) {
    if (!desc->eval_step) {
      error = "--eval-data: a forward-only step is not available in this "
              "build";
      return false;
    }
    if (!openNpyData(model, options.evalData, "--eval-data", evalData, error))
      return false;
    int64_t n = evalData->numSamples(), g = model.globalBatch;
    if (n < g) {
      error = "--eval-data: " + std::to_string(n) +
              " samples do not fill one global batch (" + std::to_string(g) +
              ")";
      return false;
    }
    if (n % g != 0)
      notes.push_back("eval data: the last " + std::to_string(n % g) + " of " +
                      std::to_string(n) +
                      " samples do not fill a global batch (" +
                      std::to_string(g) + ") and are not evaluated");
  }
  return true;
}

/// The carried tensors, whole: a split one is gathered into `wholes` when
/// `gather` is set (saving), or given a whole-sized buffer there to load
/// into (resuming).
std::vector<CheckpointTensor>
Trainer::carriedTensors(std::vector<std::vector<uint8_t>> &wholes,
                        bool gather) {
  // A device program's state is newer than the host's copies.
  if (desc->state_to_host)
    desc->state_to_host(argPointers.data());
  std::vector<CheckpointTensor> tensors;
  wholes.clear();
  wholes.reserve(model.carried.size());
  for (int i : model.carried) {
    const TensorInfo &t = model.args[i];
    if (!t.shardAxes) {
      tensors.push_back({t.name, t.role, t.dtype,
                         t.modelShape.empty() ? t.shape : t.modelShape,
                         argBuffers[i].data(), t.bytes});
      continue;
    }
    int n = mesh->group(t.shardAxes).size();
    std::vector<int64_t> shape = t.shape;
    shape[size_t(t.shardDim)] *= n;
    if (!t.modelShape.empty())
      shape = t.modelShape;
    wholes.emplace_back();
    std::string error;
    if (gather) {
      if (!wholeTensor(i, wholes.back(), error))
        fatalError("gathering '" + t.name + "': " + error);
    } else {
      wholes.back().resize(t.bytes * size_t(n));
    }
    tensors.push_back({t.name, t.role, t.dtype, shape, wholes.back().data(),
                       t.bytes * size_t(n)});
  }
  return tensors;
}

std::vector<uint8_t *> Trainer::inputBuffers() {
  std::vector<uint8_t *> buffers;
  for (int i : model.inputs)
    buffers.push_back(argBuffers[i].data());
  return buffers;
}

bool Trainer::resume(std::string &error) {
  std::string path;
  if (!findNewestCheckpoint(options.checkpointDir, path, error))
    return false;
  CheckpointPosition at;
  std::vector<std::vector<uint8_t>> wholes;
  std::vector<CheckpointTensor> tensors = carriedTensors(wholes, false);
  // (A pipeline stage loads its own of the whole model's tensors.)
  if (!loadCheckpoint(path, tensors, at, error, model.meshSizes[0] > 1))
    return false;
  // Each rank keeps its block of a split tensor.
  size_t w = 0;
  for (int i : model.carried)
    if (model.args[i].shardAxes)
      keepBlock(i, wholes[w++].data());
  step = at.step;
  position = at.dataPosition;
  lastCheckpoint = step;
  progress("resuming from '" + path + "' after step " + std::to_string(step));
  return true;
}

void Trainer::logHeader() {
  int64_t values = 0;
  for (int i : model.carried)
    if (model.args[i].role == "parameter")
      values += model.args[i].numElements;
  int64_t micro = model.localBatch / model.microBatch;
  std::string ranks;
  if (mesh->isDistributed())
    ranks = ", " + std::to_string(mesh->size()) +
            " ranks (dp=" + std::to_string(model.meshSizes[1]) +
            ",tp=" + std::to_string(model.meshSizes[2]) +
            ",pp=" + std::to_string(model.meshSizes[0]) + ")" +
            (threadsPerRank ? " of " + std::to_string(threadsPerRank) +
                                  (threadsPerRank == 1 ? " thread" : " threads")
                            : "");
  progress(
      "model '" + model.name + "': " + std::to_string(values) +
      " parameter values" + (mesh->isDistributed() ? " (rank 0's)" : "") +
      ", global batch " + std::to_string(model.globalBatch) + ranks + " (" +
      std::to_string(micro) + " micro-batch" + (micro == 1 ? "" : "es") +
      " of " + std::to_string(model.microBatch) +
      (mesh->isDistributed() ? " per data-parallel rank" : "") + "), arena " +
      formatBytes(desc->arena_bytes) + (options.guard ? ", guard mode" : ""));
  if (data)
    progress("data: " + data->describe());
  if (evalData)
    progress("eval data: " + evalData->describe());
  for (const std::string &note : notes)
    progress("note: " + note);
}

/// The forward-only loss over the eval data, in floor(N / G) global batches
/// (a remainder that does not fill one is left out, as a DataLoader with
/// drop_last): the total loss sum over the total count, PyTorch's
/// reduction='mean' over those samples; or, for a step without its own eval
/// results, the mean of the batches' losses.
double Trainer::evaluate() {
  int64_t g = model.globalBatch;
  int64_t batches = evalData->numSamples() / g;
  std::vector<uint8_t *> buffers = inputBuffers();
  bool ownResults = !model.evalResults.empty();
  double sum = 0, count = 0;
  int64_t local = model.localBatch;
  for (int64_t b = 0; b < batches; ++b) {
    evalData->fill(b * g + dpRank * local, local, buffers);
    setRunningStep(&ctx, step, "eval after");
    ctx.current_op = nullptr;
    desc->eval_step(
        argPointers.data(),
        ownResults ? evalResultPointers.data() : resultPointers.data(), &ctx);
    setRunningStep(nullptr, 0, nullptr);
    if (ownResults) {
      const TensorInfo &s = model.evalResults[model.evalLossSum];
      const TensorInfo &c = model.evalResults[model.evalLossCount];
      sum += loadAsDouble(s.dtype, evalResultPointers[model.evalLossSum], 0);
      count +=
          loadAsDouble(c.dtype, evalResultPointers[model.evalLossCount], 0);
    } else {
      const TensorInfo &l = model.results[model.lossMetric];
      sum += loadAsDouble(l.dtype, resultPointers[model.lossMetric], 0);
      count += 1;
    }
  }
  return sum / count;
}

/// A metric's value as JSON, with the digits that round-trip its dtype.
static std::string metricJson(const TensorInfo &t, double v) {
  return t.dtype == DType::F64 || !isFloatDType(t.dtype) ? jsonNumber(v)
                                                         : jsonNumber(v, 9);
}

bool Trainer::trainStep(std::string &error) {
  int64_t g = model.globalBatch;
  // This data-parallel rank's share of the global batch.
  if (data && stagedPosition != position)
    data->fill(position + dpRank * model.localBatch, model.localBatch,
               inputBuffers());
  stagedPosition = -1;
  int64_t bytesBefore[8];
  double waitBefore[8];
  for (int m = 0; m < 8; ++m)
    bytesBefore[m] = mesh->bytesSent(m), waitBefore[m] = commBlockedSeconds(m);
  if (model.stepArg >= 0) {
    HyperValue counter;
    counter.dtype = model.args[model.stepArg].dtype;
    counter.integer = step;
    counter.store(argBuffers[model.stepArg].data());
  }
  setRunningStep(&ctx, step + 1, "training");
  ctx.current_op = nullptr;
  auto start = std::chrono::steady_clock::now();
  timelineStartStep();
  desc->step(argPointers.data(), resultPointers.data(), &ctx);
  if (desc->finish_step) {
    // The step runs on a device: fill the next batch and have it copied
    // meanwhile, then wait.
    if (data && desc->stage_inputs && step + 1 < options.steps) {
      int64_t next = data->numSamples() > 0
                         ? (position + g) % data->numSamples()
                         : position + g;
      data->fill(next + dpRank * model.localBatch, model.localBatch,
                 inputBuffers());
      desc->stage_inputs(argPointers.data());
      stagedPosition = next;
    }
    desc->finish_step();
  }
  traceEndStep();
  // A pipeline stage's last sends may still be on their way.
  if (model.meshSizes[0] > 1 && !mesh->group(DTCRT_AXIS_PP).flush(error))
    return false;
  auto end = std::chrono::steady_clock::now();
  setRunningStep(nullptr, 0, nullptr);
  double seconds = std::chrono::duration<double>(end - start).count();
  for (int m = 0; m < 8; ++m)
    lastStepBytes[m] = mesh->bytesSent(m) - bytesBefore[m];
  for (int m = 0; m < 8; ++m) {
    lastStepWait[m] = commBlockedSeconds(m) - waitBefore[m];
    if (step > firstStep)
      waitAfterFirst[m] += lastStepWait[m];
  }
  if (step > firstStep)
    ++stepsAfterFirst;

  // The new parameters and state become the next step's arguments.
  for (size_t r = 0; r < model.results.size(); ++r) {
    int a = model.resultToArg[r];
    if (a < 0 || model.results[r].inPlace)
      continue; // not carried, or already in its argument's buffer
    argBuffers[a].swap(resultBuffers[r]);
    argPointers[a] = argBuffers[a].data();
    resultPointers[r] = resultBuffers[r].data();
  }
  ++step;
  if (data && data->numSamples() > 0)
    position = (position + g) % data->numSamples();
  else
    position += g;

  // Metrics: loss, lr, grad_norm and loss_scale first, then the others.
  JsonObjectWriter line;
  line.integer("step", step);
  std::string shown =
      "step " + std::to_string(step) + "/" + std::to_string(options.steps);
  std::vector<int> order;
  for (const char *first : {"loss", "lr", "grad_norm", "loss_scale"})
    for (int r : model.metrics)
      if (model.results[r].name == first)
        order.push_back(r);
  for (int r : model.metrics)
    if (std::find(order.begin(), order.end(), r) == order.end())
      order.push_back(r);
  for (int r : order) {
    const TensorInfo &t = model.results[r];
    double v = loadAsDouble(t.dtype, resultPointers[r], 0);
    line.raw(t.name, metricJson(t, v));
    shown += "  " + t.name + " " + jsonNumber(v, 6);
  }
  bool evalDue =
      evalData && ((options.evalEvery > 0 && step % options.evalEvery == 0) ||
                   (options.evalEvery == 0 && step == options.steps));
  if (evalDue) {
    double evalLoss = evaluate();
    line.raw("eval_loss", jsonNumber(evalLoss));
    shown += "  eval_loss " + jsonNumber(evalLoss, 6);
  }
  double rate = seconds > 0 ? double(g) / seconds : 0;
  line.num("step_time_s", seconds, 6)
      .num("samples_per_s", rate, 6)
      .integer("arena_high_water_bytes", ctx.high_water)
      .integer("memory_peak_bytes", tensorBytes + ctx.high_water);
  if (mesh->isDistributed())
    for (int m = 1; m < 8; ++m)
      if (lastStepBytes[m] > 0)
        line.integer("comm_bytes_" + axesName(m), lastStepBytes[m])
            .num("comm_wait_s_" + axesName(m), lastStepWait[m], 6);
  shown += "  (" + formatSeconds(seconds) + ", " + jsonNumber(rate, 4) +
           " samples/s)";
  progress(shown);
  if (log.isOpen() && !log.write(line.finish(), error))
    return false;
  if (!options.dumpGradients.empty() && step == firstStep + 1 &&
      !dumpGradients(error))
    return false;
  if (options.checkpointEvery > 0 && step % options.checkpointEvery == 0)
    return saveCheckpointNow(error);
  return true;
}

/// Writes every gradient result as DIR/NAME.npy: whole (the blocks of a
/// split one gathered, every rank taking part), in its parameter's shape in
/// the model; the first rank writes them.
bool Trainer::dumpGradients(std::string &error) {
  for (int r : gradients) {
    const TensorInfo &t = model.results[r];
    const auto *data = static_cast<const uint8_t *>(resultPointers[r]);
    size_t bytes = t.bytes;
    std::vector<int64_t> shape = t.shape;
    std::vector<uint8_t> whole;
    if (t.shardAxes) {
      if (!wholeOf(t, data, whole, error)) {
        error = "--dump-gradients: gathering '" + t.name + "': " + error;
        return false;
      }
      data = whole.data();
      bytes = whole.size();
      shape[size_t(t.shardDim)] *= mesh->group(t.shardAxes).size();
    }
    for (const TensorInfo &a : model.args)
      if (a.name == t.name && a.role == "parameter" && !a.modelShape.empty())
        shape = a.modelShape;
    if (mesh->rank() != 0)
      continue;
    std::string path = joinPath(options.dumpGradients, t.name + ".npy");
    std::string why;
    if (!writeNpyFile(path, t.dtype, shape, data, bytes, why)) {
      error = "--dump-gradients: " + why;
      return false;
    }
  }
  if (mesh->rank() != 0)
    return true;
  progress("gradients of step " + std::to_string(step) + " written to '" +
           options.dumpGradients + "'");
  return true;
}

/// The carried tensors this rank writes into a checkpoint, as it holds
/// them: a whole one if it is its stage's first rank (dp 0, tp 0), its
/// block of a split one if it is the first of that block's replicas (0 on
/// the mesh axes that do not split it). No rank gathers a whole tensor.
std::vector<CheckpointTensor> Trainer::writtenTensors() {
  // A device program's state is newer than the host's copies.
  if (desc->state_to_host)
    desc->state_to_host(argPointers.data());
  std::vector<CheckpointTensor> tensors;
  for (int i : model.carried) {
    const TensorInfo &t = model.args[i];
    bool writer = true;
    for (int axis : {kAxisDP, kAxisTP})
      if (!(t.shardAxes & (1 << axis)) && mesh->coord(axis) != 0)
        writer = false;
    if (!writer)
      continue;
    CheckpointTensor c{
        t.name, t.role, t.dtype, t.modelShape, argBuffers[i].data(), t.bytes};
    if (!t.shardAxes) {
      if (c.shape.empty())
        c.shape = t.shape;
      tensors.push_back(std::move(c));
      continue;
    }
    // Block b of n along the split dimension: with two levels, the outer
    // group's block holds the inner group's blocks in order (wholeOf).
    Channel &group = mesh->group(t.shardAxes);
    c.splitDim = t.shardDim;
    c.blocks = group.size();
    c.blockShape = t.shape;
    if (t.shardInnerAxes) {
      Channel &in = mesh->group(t.shardInnerAxes);
      c.block = int64_t(mesh->group(t.shardAxes & ~t.shardInnerAxes).rank()) *
                    in.size() +
                in.rank();
    } else {
      c.block = group.rank();
    }
    if (c.shape.empty()) {
      c.shape = t.shape;
      c.shape[size_t(t.shardDim)] *= c.blocks;
    }
    tensors.push_back(std::move(c));
  }
  return tensors;
}

/// A distributed run's checkpoint: every rank writes what writtenTensors
/// gives it into the step's shared temporary folder and sends its manifest
/// entries to rank 0 (over the group of all ranks), which lists each
/// tensor or block once (a tied parameter's copies in two stages are
/// equal) and renames the folder into place when every rank's are in.
bool Trainer::saveDistributedCheckpoint(
    const std::vector<CheckpointTensor> &tensors,
    const std::vector<std::pair<std::string, double>> &values,
    std::string &path, std::string &error) {
  std::string tmp = sharedCheckpointTemp(options.checkpointDir, step);
  std::vector<std::string> entries;
  std::string why;
  std::string prefix = "stage" + std::to_string(mesh->coord(kAxisPP)) +
                       "-rank" + std::to_string(mesh->rank()) + "-";
  if (!tensors.empty() &&
      (!createFolders(options.checkpointDir, why) ||
       !writeCheckpointTensors(tmp, prefix, tensors, entries, why))) {
    error = "checkpoint of step " + std::to_string(step) + ": " + why;
    return false;
  }
  Channel &all = mesh->group(DTCRT_AXIS_PP | DTCRT_AXIS_DP | DTCRT_AXIS_TP);
  // Stream 2: apart from any other traffic of the group.
  constexpr int kStream = 2;
  if (all.rank() != 0) {
    std::string text;
    for (const std::string &e : entries)
      text += e + '\n';
    int64_t size = int64_t(text.size());
    return all.post(0, kStream, &size, sizeof size, error) &&
           (size == 0 ||
            all.post(0, kStream, text.data(), text.size(), error)) &&
           all.flush(error);
  }
  // An entry's identity: its text before the file it names.
  auto key = [](const std::string &e) {
    return e.substr(0, e.find("\"file\""));
  };
  std::vector<std::string> listed = entries;
  std::set<std::string> seen;
  for (const std::string &e : entries)
    seen.insert(key(e));
  for (int r = 1; r < all.size(); ++r) {
    int64_t size = 0;
    if (!all.receive(r, kStream, &size, sizeof size, "checkpoint", error))
      return false;
    if (size == 0)
      continue;
    std::string text(size_t(size), '\0');
    if (!all.receive(r, kStream, text.data(), text.size(), "checkpoint", error))
      return false;
    size_t at = 0;
    for (size_t end; (end = text.find('\n', at)) != std::string::npos;
         at = end + 1) {
      std::string e = text.substr(at, end - at);
      if (seen.insert(key(e)).second)
        listed.push_back(e);
    }
  }
  return finishCheckpoint(options.checkpointDir, tmp, model.name,
                          model.globalBatch, {step, position}, listed, values,
                          path, error);
}

bool Trainer::saveCheckpointNow(std::string &error) {
  std::vector<std::pair<std::string, double>> values;
  for (const HyperValue &h : hypers)
    values.push_back({h.name, h.asDouble()});
  std::string path;
  std::vector<CheckpointTensor> tensors = writtenTensors();
  if (mesh->isDistributed()) {
    if (!saveDistributedCheckpoint(tensors, values, path, error))
      return false;
  } else if (!saveCheckpoint(options.checkpointDir, model.name,
                             model.globalBatch, {step, position}, tensors,
                             values, path, error)) {
    return false;
  }
  if (mesh->rank() == 0 && options.keepCheckpoints > 0 &&
      !pruneCheckpoints(options.checkpointDir, options.keepCheckpoints,
                        error)) {
    error = "--keep-checkpoints: " + error;
    return false;
  }
  lastCheckpoint = step;
  progress("checkpoint '" + path + "'");
  return true;
}

bool Trainer::saveOnnx(std::string &error) {
  // Blocks of split parameters (ZeRO 3) are gathered on every rank; the
  // first writes the whole tensors.
  std::vector<std::vector<uint8_t>> wholes;
  std::vector<CheckpointTensor> carried = carriedTensors(wholes, true);
  if (mesh->rank() != 0)
    return true;
  std::string folder;
  if (!executableFolder(folder, error))
    return false;
  std::vector<TrainedTensor> trained;
  for (const CheckpointTensor &t : carried)
    if (t.role == "parameter" || t.role == "state")
      trained.push_back({t.name, t.dtype, t.shape, t.data, t.bytes});
  // Constants (a causal mask) are written as loaded: the saved model keeps
  // them whatever model.onnx holds.
  for (int i : model.constants) {
    const TensorInfo &t = model.args[i];
    trained.push_back(
        {t.name, t.dtype, t.shape, argBuffers[i].data(), t.bytes});
  }
  if (!saveOnnxWithWeights(joinPath(folder, "model.onnx"), options.saveOnnx,
                           trained, error))
    return false;
  progress("saved '" + options.saveOnnx + "'");
  return true;
}

/// An error every rank of a launch finds alike, before the ranks have
/// joined a communicator: the first rank says it; the others wait before
/// they end. (Had they ended at once, the launcher could abort the job,
/// first rank included, before that rank's message got out: the launch
/// would fail without a word.)
static int failOnFirstRank(const std::string &error) {
  const char *launcherRank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (launcherRank && std::string(launcherRank) != "0") {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return 1;
  }
  std::fprintf(stderr, "train: error: %s\n", error.c_str());
  std::fflush(stderr);
  return 1;
}

int Trainer::run(int argc, char **argv) {
  std::string error;
  auto fail = [&]() {
    // Under MPI, every rank ends: the others would wait in a collective.
    if (mesh && mesh->isDistributed())
      mesh->abort(error);
    std::fprintf(stderr, "train: error: %s\n", error.c_str());
    return 1;
  };
  if (!describeModel(desc, model, error)) {
    error = "internal: the compiled model's descriptor is malformed: " + error;
    return fail();
  }
  std::vector<std::string> hyperNames;
  for (int i : model.hypers)
    hyperNames.push_back(model.args[i].name);
  if (!parseTrainOptions(argc, argv, hyperNames, options, error))
    return fail();
  if (options.help) {
    std::fputs(trainUsage(model).c_str(), stdout);
    return 0;
  }
  model.pipelineInputs = pipelineInputs;
  if (model.meshSizes[0] > 1) {
    // What a pipelined run cannot do yet: each needs the whole model, of
    // which this rank holds one stage.
    const char *flag = !options.saveOnnx.empty()        ? "--save-onnx"
                       : !options.dumpGradients.empty() ? "--dump-gradients"
                       : !options.evalData.empty()      ? "--eval-data"
                                                        : nullptr;
    if (flag) {
      error = std::string(flag) + " is not available for a pipelined " +
              "program yet (pp=" + std::to_string(model.meshSizes[0]) +
              "): each rank holds one stage of the model";
      return failOnFirstRank(error);
    }
  }
  if (!joinMesh(error))
    return failOnFirstRank(error); // every rank finds the same mismatch
  if (!checkOutputs(error) ||
      !resolveHyperparameters(model, options, hypers, notes, error) ||
      !allocate(error) || !loadWeights(error) || !openData(error))
    return fail();
  for (const HyperValue &h : hypers)
    h.store(argBuffers[h.arg].data());
  if (model.dataOffsetArg >= 0) {
    int64_t offset = int64_t(dpRank) * model.localBatch;
    std::memcpy(argBuffers[size_t(model.dataOffsetArg)].data(), &offset,
                sizeof(offset));
  }
  if (options.resume && !resume(error))
    return fail();
  firstStep = step;
  if (!options.trace.empty()) {
    ctx.trace = 1;
    traceEnable();
  }
  if (!options.dumpGradients.empty() && step >= options.steps) {
    error = "--dump-gradients: this run takes no step (--steps " +
            std::to_string(options.steps) + ", already at step " +
            std::to_string(step) + ")";
    return fail();
  }
  // The first rank logs (metrics are the same on every rank).
  if (!options.logJsonl.empty() && mesh->rank() == 0 &&
      !log.open(options.logJsonl, options.resume, error))
    return fail();
  logHeader();

  auto start = std::chrono::steady_clock::now();
  int64_t first = step;
  if (step >= options.steps && options.steps > 0)
    progress("nothing to do: already at step " + std::to_string(step) +
             " of --steps " + std::to_string(options.steps));
  while (step < options.steps)
    if (!trainStep(error))
      return fail();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!options.checkpointDir.empty() && lastCheckpoint != step &&
      !saveCheckpointNow(error))
    return fail();
  if (evalData && step == first) {
    double evalLoss = evaluate();
    progress("eval_loss " + jsonNumber(evalLoss, 6));
  }
  if (!options.saveOnnx.empty() && !saveOnnx(error))
    return fail();
  if (!options.rankReport.empty() && !writeRankReport(error))
    return fail();
  if (!options.trace.empty()) {
    // Each rank of a run of several writes its own file.
    std::string path = options.trace;
    if (mesh->isDistributed()) {
      size_t slash = path.find_last_of('/');
      size_t dot = path.find_last_of('.');
      std::string suffix = ".rank" + std::to_string(mesh->rank());
      if (dot == std::string::npos ||
          (slash != std::string::npos && dot < slash))
        path += suffix;
      else
        path.insert(dot, suffix);
    }
    std::string labels;
    for (int a = 0; a < kNumAxes; ++a)
      labels += (a ? ", " : "") + std::string(axisName(a)) + " " +
                std::to_string(mesh->coord(a));
    if (!writeTrace(path, mesh->rank(), labels, error))
      return fail();
  }
  progress("done: " + std::to_string(step - first) +
           (step - first == 1 ? " step in " : " steps in ") +
           formatSeconds(seconds) + "; arena high-water " +
           std::to_string(ctx.high_water) + " bytes of " +
           std::to_string(desc->arena_bytes) + " planned");
  mesh->finalize();
  return 0;
}

/// --rank-report DIR: DIR/rank-N.json with what this rank measured.
bool Trainer::writeRankReport(std::string &error) {
  std::string why;
  if (!createFolders(options.rankReport, why)) {
    error = "--rank-report: " + why;
    return false;
  }
  JsonObjectWriter bytes;
  for (int m = 1; m < 8; ++m)
    if (lastStepBytes[m] > 0)
      bytes.integer(axesName(m), lastStepBytes[m]);
  // Blocked time per step, the first (warm-up) step left out when there
  // are others.
  JsonObjectWriter wait;
  for (int m = 1; m < 8; ++m)
    if (lastStepBytes[m] > 0)
      wait.num(axesName(m),
               stepsAfterFirst > 0 ? waitAfterFirst[m] / double(stepsAfterFirst)
                                   : lastStepWait[m],
               6);
  JsonObjectWriter coords;
  for (int a = 0; a < kNumAxes; ++a)
    coords.integer(axisName(a), mesh->coord(a));
  JsonObjectWriter report;
  report.integer("rank", mesh->rank())
      .raw("coords", coords.finish())
      .integer("stage", desc->stage)
      .raw("comm_bytes_per_step", bytes.finish())
      .raw("comm_wait_s_per_step", wait.finish())
      .integer("arena_high_water_bytes", ctx.high_water)
      .integer("tensor_bytes", tensorBytes)
      .integer("memory_peak_bytes", tensorBytes + ctx.high_water);
  if (model.meshSizes[0] > 1)
    report.raw("timeline", timelineJson())
        .num("timeline_origin_s", timelineOriginSeconds(), 9);
  std::string path = joinPath(options.rankReport,
                              "rank-" + std::to_string(mesh->rank()) + ".json");
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = "--rank-report: cannot write '" + path + "'";
    return false;
  }
  std::string text = report.finish() + "\n";
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok &= std::fclose(f) == 0;
  if (!ok) {
    error = "--rank-report: cannot write '" + path + "'";
    return false;
  }
  return true;
}

extern "C" int dtcrt_train_main_stages(int argc, char **argv,
                                       const dtcrt_model_desc *const *stages,
                                       int num_stages) {
  // This rank's stage, from its place in the launch (ranks are laid out tp
  // fastest, then dp, then pp); the mesh checks the launch itself.
  const dtcrt_model_desc *first = stages[0];
  int perStage = std::max(1, first->mesh_dp) * std::max(1, first->mesh_tp);
  int worldRank = 0;
  if (const char *r = std::getenv("OMPI_COMM_WORLD_RANK"))
    worldRank = std::atoi(r);
  else if (const char *r = std::getenv("PMIX_RANK"))
    worldRank = std::atoi(r);
  int stage = std::min(std::max(worldRank / perStage, 0), num_stages - 1);
  installKernelFailHandler();
  Trainer trainer(stages[stage]);
  for (int s = 0; s < num_stages; ++s)
    for (int i = 0; i < stages[s]->num_args; ++i)
      if (std::string(stages[s]->args[i].role) == "input")
        trainer.addPipelineInput(stages[s]->args[i].name);
  return trainer.run(argc, argv);
}

extern "C" int dtcrt_train_main(int argc, char **argv,
                                const dtcrt_model_desc *model) {
  installKernelFailHandler();
  Trainer trainer(model);
  return trainer.run(argc, argv);
}
