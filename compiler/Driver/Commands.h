//===- Commands.h - the dtc subcommands -----------------------------*- C++
//-*-===//
//
// Each subcommand takes an options struct (bound to flags in tools/dtc) and
// returns the process exit code. Errors are printed to stderr as
// "FILE: node 'NAME': error: MESSAGE" (see Diagnostics.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_DRIVER_COMMANDS_H
#define DTC_COMPILER_DRIVER_COMMANDS_H

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "passes/MixedPrecision/Passes.h"
#include "passes/Training/Passes.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

/// Options that bind a model's shapes (import, interpret, compile, plan).
struct ShapeOptions {
  std::optional<int64_t> batch;
  /// NAME=DIMxDIM entries of --input-shape.
  std::vector<std::string> inputShapes;
  /// --train-batchnorm (ImportOptions::trainBatchNorm).
  bool trainBatchNorm = false;
  /// --loss, --logits and --labels (ImportOptions::appendedLoss).
  std::optional<AppendedLoss> appendedLoss;
};

struct ImportCommandOptions {
  std::string model;
  std::string output = "-";
  ShapeOptions shapes;
  /// Print the importer's output without the clean-up pipeline.
  bool noCleanup = false;
  /// --print-weights: print the parameters' initial values (elided, as
  /// `dense_resource<__elided__>`, by default).
  bool printWeights = false;
};
int runImportCommand(const ImportCommandOptions &options);

struct InterpretCommandOptions {
  std::string model;
  ShapeOptions shapes;
  /// NAME=FILE.npy entries: data inputs.
  std::vector<std::string> inputs;
  /// NAME=FILE.npy entries: expected outputs.
  std::vector<std::string> expects;
  /// Folder to write every output as NAME.npy.
  std::string outputDir;
  double rtol = 1e-5;
};
int runInterpretCommand(const InterpretCommandOptions &options);

struct TestONNXCommandOptions {
  /// Test folders (holding model.onnx), or folders of test folders.
  std::vector<std::string> dirs;
  std::string target = "interp";
  /// Seconds one test may run.
  unsigned timeoutSeconds = 120;
  /// Bytes one test may use (resident), else it fails.
  uint64_t memoryLimitBytes = uint64_t(2) << 30;
  /// Tests run at once.
  unsigned jobs = 1;
  /// File listing the tests expected to pass; any of them not passing is a
  /// regression and makes the command fail.
  std::string expectFile;
  /// Run only tests whose name contains this.
  std::string filter;
};
int runTestONNXCommand(const TestONNXCommandOptions &options);

struct InterpretTrainCommandOptions {
  std::string model;
  ShapeOptions shapes;
  /// Samples per optimizer step (this rank) and per micro-batch.
  int64_t globalBatch = 0;
  int64_t microBatch = 0;
  /// NAME=FILE.npy entries (comma-separated lists allowed), or synthetic data.
  std::vector<std::string> data;
  int64_t steps = 1;
  std::string logJsonl;
  /// Folder to write the step-1 gradients into, one NAME.npy per parameter.
  std::string dumpGradients;
  /// How the training step is built (loss, optimizer, hyperparameters);
  /// micro-batches is derived from the batch sizes.
  BuildTrainStepPassOptions training;
};
int runInterpretTrainCommand(const InterpretTrainCommandOptions &options);

struct CompileCommandOptions {
  std::string model;
  std::string outDir;
  /// "8x4x2" or "dp=8,tp=4,pp=2" (data parallelism only so far: tp and pp
  /// of 1).
  std::string mesh = "1x1x1";
  /// --zero: the ZeRO stage over dp.
  int64_t zero = 0;
  /// --schedule and --virtual-stages: the pipeline schedule over pp (empty:
  /// 1f1b when pp > 1).
  std::string schedule;
  int64_t virtualStages = 0;
  /// --bucket-mb and --comm-overlap: communication scheduling (gradient
  /// bucket size in MiB; "on" or "off").
  double bucketMb = 25;
  std::string commOverlap = "on";
  /// --explain: print the shardings and the collectives (stdout).
  bool explain = false;
  /// --shard NAME=SPEC: user splits of parameters over tp.
  std::vector<std::string> shards;
  /// --sequence-parallel: norms and the residual stream split over tp by
  /// tokens.
  bool sequenceParallel = false;
  /// --local-batchnorm: per-rank batch statistics.
  bool localBatchNorm = false;
  std::string target = "cpu";
  /// --cuda-emulation, --cuda-arch and --nvcc (with --target cuda).
  bool cudaEmulation = false;
  std::string cudaArchs = "80,90";
  std::string nvcc;
  ShapeOptions shapes;
  int64_t globalBatch = 0;
  int64_t microBatch = 0;
  BuildTrainStepPassOptions training;
  /// --recompute: none, full, selective or auto.
  std::string recompute = "none";
  /// --memory-limit in GiB: the bound on each rank's whole peak (0: none).
  double memoryLimitGiB = 0;
  /// --device-profile: a built-in profile's name or a JSON file; plan.json's
  /// "predicted" figures use it.
  std::string deviceProfile = "cpu";
  /// False under --no-fuse: one kernel per op (the unfused baseline).
  bool fuse = true;
  /// --timing: print where compile time went (MLIR's timing report).
  bool timing = false;
  /// --cpu-arch: the CPU the generated program is compiled for.
  std::string cpuArch = "native";
  /// Where cpuArch came from, for messages: "--cpu-arch" or
  /// "$DTC_CPU_ARCH".
  std::string cpuArchOrigin = "--cpu-arch";
  /// --precision (fp32, bf16 or fp16) and the fp16 loss-scale defaults.
  MixedPrecisionPassOptions precision{/*precision=*/"fp32"};
  /// True if --loss-scale-init or --loss-scale-window was given.
  bool lossScaleFlags = false;
  /// `dtc plan`'s mode: nothing is written or built and no output folder is
  /// needed, weights may be absent (a weightless model), and the plan
  /// (plan.json's form) goes to *planResult. The memory limit is then the
  /// caller's to check, except under --recompute auto, which needs it.
  bool planOnly = false;
  llvm::json::Value *planResult = nullptr;
  /// Keep the diagnostics of the passes to oneself (a candidate plan that
  /// `dtc plan` tries); the first error goes to *firstError if set.
  bool quiet = false;
  std::string *firstError = nullptr;
  /// The model as imported and cleaned up (MLIR text), in place of reading
  /// `model`: `dtc autotune`'s proxies of a model (planOnly).
  std::string moduleSource;
  /// --devices N: the devices `--mesh auto` lays out (dtc autotune's
  /// choice).
  int64_t devices = 0;
};
int runCompileCommand(const CompileCommandOptions &options);

struct AutotuneCommandOptions {
  /// The model and the options that are not swept, as `dtc compile` takes
  /// them. A swept option given explicitly (--zero, --recompute,
  /// --micro-batch, --schedule, --sequence-parallel) is held fixed.
  CompileCommandOptions compile;
  /// Which swept options the user fixed.
  bool fixedZero = false, fixedRecompute = false, fixedMicroBatch = false,
       fixedSchedule = false, fixedSequenceParallel = false;
  /// Rows of the table, plans confirmed on the whole model.
  int64_t top = 10, confirm = 3;
  /// Seconds the confirmations may take in all (a whole plan of a large
  /// model takes seconds to minutes); 0: no bound.
  double confirmSeconds = 40;
  /// Files for every candidate as CSV, and the plot (SVG); empty: none.
  std::string csv, svg;
  /// Print only the summary (`compile --mesh auto`).
  bool brief = false;
};
/// `dtc autotune`: sweeps the layouts of --devices (mesh factorizations,
/// ZeRO stage, recompute, micro-batch, schedule, sequence parallelism),
/// prices them per layer, confirms the best on the whole model, and prints
/// the top as a table. On success, `*best` (if set) is the winner's options.
int runAutotuneCommand(const AutotuneCommandOptions &options,
                       CompileCommandOptions *best = nullptr);
/// `--mesh auto`: `cmd` with autotune's best layout of cmd.devices.
int chooseAutoMesh(const CompileCommandOptions &cmd,
                   CompileCommandOptions &chosen);

struct PlanCommandOptions {
  /// The model and every option of the plan, as `dtc compile` takes them.
  CompileCommandOptions compile;
  /// --json: print plan.json instead of the report.
  bool json = false;
};
/// `dtc plan`: the plan of `options.compile` with its predicted memory and
/// step time, as a report or as plan.json. A plan over the memory limit
/// (--memory-limit, else the device profile's memory) names the rank, by
/// how much, and the cheapest change of ZeRO stage, recompute or
/// micro-batch that fits, and exits with 1.
int runPlanCommand(const PlanCommandOptions &options);

struct CalibrateCommandOptions {
  /// Where the profile JSON goes ("-": stdout).
  std::string output = "-";
  /// OpenMP threads to measure with (0: OpenMP's default).
  int64_t threads = 0;
  /// --mpi-ranks: "2,4" (rank counts to time MPI all-reduces over), "none",
  /// or "" (the default: 2 and 4 when mpirun is found).
  std::string mpiRanks;
};
int runCalibrateCommand(const CalibrateCommandOptions &options);

} // namespace mlir::dtc

#endif // DTC_COMPILER_DRIVER_COMMANDS_H
