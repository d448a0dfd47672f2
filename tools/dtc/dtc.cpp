//===- dtc.cpp - the dtc command line -------------------------------------===//
//
// Binds flags to the option structs of compiler/Driver and dispatches to the
// subcommand. The only place command-line flags are declared.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;
using namespace mlir::dtc;

static cl::SubCommand importCmd("import", "Import an ONNX model and print it "
                                          "as dtg IR");
static cl::SubCommand
    interpretCmd("interpret",
                 "Run an ONNX model in the reference interpreter and compare "
                 "its outputs with .npy files");
static cl::SubCommand
    testOnnxCmd("test-onnx",
                "Run ONNX backend-test folders (model.onnx + "
                "test_data_set_*) and report PASS/FAIL/UNSUPPORTED");
static cl::SubCommand interpretTrainCmd(
    "interpret-train",
    "Build a model's training step and run it in the "
    "reference interpreter (the oracle of compiled training)");
static cl::SubCommand
    compileCmd("compile", "Compile a model's training step into OUTDIR/train");
static cl::SubCommand
    planCmd("plan", "Plan a model's training step as compile would and "
                    "predict its memory and step time, without building "
                    "(weights may be absent)");
static cl::SubCommand autotuneCmd(
    "autotune",
    "Sweep the layouts of --devices N (mesh, ZeRO stage, recompute, "
    "micro-batch, schedule, sequence parallelism), price them per layer, "
    "confirm the best on the whole model, and print the top as a table");
static cl::SubCommand
    calibrateCmd("calibrate",
                 "Measure this machine into a device profile (JSON)");

// import / interpret
static cl::opt<std::string> modelPath(cl::Positional, cl::desc("MODEL.onnx"),
                                      cl::Required, cl::sub(importCmd),
                                      cl::sub(interpretCmd));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("OUT.mlir"),
                                       cl::init("-"), cl::sub(importCmd));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Bind axis 0 of every data input"),
                              cl::value_desc("N"), cl::sub(importCmd),
                              cl::sub(interpretCmd));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Shape of a data input (NAME=DIMxDIM), repeatable"),
                cl::value_desc("NAME=DIMxDIM"), cl::sub(importCmd),
                cl::sub(interpretCmd), cl::sub(interpretTrainCmd),
                cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<bool> trainBatchNorm(
    "train-batchnorm",
    cl::desc("Train BatchNormalization exported in inference mode (PyTorch "
             "2's exporter: eval mode only) with batch statistics and "
             "running-statistics updates, as PyTorch's model.train()"),
    cl::sub(importCmd), cl::sub(interpretCmd), cl::sub(interpretTrainCmd),
    cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<bool> noCleanup("no-cleanup",
                               cl::desc("Print the importer's output before "
                                        "the clean-up pipeline"),
                               cl::sub(importCmd));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print the parameters' initial values (elided by default)"),
    cl::sub(importCmd));
static cl::list<std::string> inputs("input",
                                    cl::desc("Data input (NAME=FILE.npy)"),
                                    cl::value_desc("NAME=FILE.npy"),
                                    cl::sub(interpretCmd));
static cl::list<std::string>
    expects("expect", cl::desc("Expected output (NAME=FILE.npy)"),
            cl::value_desc("NAME=FILE.npy"), cl::sub(interpretCmd));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Write every output as "
                                               "NAME.npy into this folder"),
                                      cl::sub(interpretCmd));
static cl::opt<double> rtol("rtol",
                            cl::desc("Largest relative L2 error accepted"),
                            cl::init(1e-5), cl::sub(interpretCmd));

static cl::opt<std::string> compileModelPath(cl::Positional,
                                             cl::desc("MODEL.onnx"),
                                             cl::Required, cl::sub(compileCmd),
                                             cl::sub(planCmd),
                                             cl::sub(autotuneCmd));
static cl::opt<std::string> compileOut("o", cl::desc("Output folder"),
                                       cl::value_desc("OUTDIR"),
                                       cl::sub(compileCmd));
static cl::opt<std::string> meshOpt("mesh",
                                    cl::desc("Device mesh DPxTPxPP or "
                                             "dp=N,tp=N,pp=N, or auto "
                                             "(autotune's best layout of "
                                             "--devices N)"),
                                    cl::init("1x1x1"), cl::sub(compileCmd),
                                    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::list<std::string> shardOpt(
    "shard",
    cl::desc("Split a parameter over the tensor-parallel axis, instead of "
             "the plan's choice: NAME=SPEC, SPEC one entry per dimension, "
             "'tp' (split) or '-' (whole), e.g. fc1.weight=-,tp; repeatable"),
    cl::value_desc("NAME=SPEC"), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<bool> sequenceParallelOpt(
    "sequence-parallel",
    cl::desc("Megatron's sequence parallelism: the layer norms and the "
             "residual stream between tensor-parallel blocks are split "
             "over tp along their tokens (all-gather before a block, "
             "reduce-scatter after it, in place of an all-reduce); needs "
             "tp > 1"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<bool> explainOpt(
    "explain",
    cl::desc("Print the mesh, each parameter's sharding (and its optimizer "
             "state's) and each collective of a step: what it carries, the "
             "ONNX node, the bytes a rank sends, the mesh axis"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<std::string> scheduleOpt(
    "schedule",
    cl::desc("Pipeline schedule over pp: gpipe (every forward, then every "
             "backward) or 1f1b (PipeDream-Flush: at most pp micro-batches "
             "in flight on the first stage); needs pp > 1"),
    cl::value_desc("gpipe|1f1b|interleaved"), cl::init(""), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<int64_t> virtualStagesOpt(
    "virtual-stages",
    cl::desc("Model chunks per pipeline rank of the interleaved schedule"),
    cl::value_desc("V"), cl::init(0), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<double> bucketMbOpt(
    "bucket-mb",
    cl::desc("Largest gradient bucket, in MiB (PyTorch DDP's bucket_cap_mb): "
             "gradient all-reduces ready together go as one, started while "
             "the backward pass goes on"),
    cl::value_desc("N"), cl::init(25), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<std::string> commOverlapOpt(
    "comm-overlap",
    cl::desc("Communication scheduling: on starts collectives as soon as "
             "their operands are ready and waits for them where their results "
             "are first used (gradient buckets, ZeRO-3 prefetch); off runs "
             "each collective where the program needs its result"),
    cl::value_desc("on|off"), cl::init("on"), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<int64_t> zeroOpt(
    "zero",
    cl::desc("ZeRO stage over dp: 0 all-reduces gradients, 1 shards the "
             "optimizer state, 2 also reduce-scatters gradients, 3 also "
             "shards the parameters (gathered where used)"),
    cl::value_desc("0|1|2|3"), cl::init(0), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<bool> localBatchNormOpt(
    "local-batchnorm",
    cl::desc("BatchNormalization takes each data-parallel rank's own batch "
             "statistics"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<bool> syncBatchNormOpt(
    "sync-batchnorm",
    cl::desc("BatchNormalization takes statistics over the whole batch "
             "across data-parallel ranks (the default)"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<std::string> compileTarget(
    "target",
    cl::desc("Code to generate: cpu (C++ with OpenMP and OpenBLAS) or cuda "
             "(CUDA C++ with cuBLASLt, cuDNN and NCCL, built by nvcc)"),
    cl::init("cpu"), cl::sub(compileCmd));
static cl::opt<bool> cudaEmulationOpt(
    "cuda-emulation",
    cl::desc("With --target cuda: build the CUDA program with the host "
             "compiler under the emulation header (runs on a machine without "
             "a GPU; checks bounds and shared-memory races)"),
    cl::init(false), cl::sub(compileCmd));
static cl::opt<std::string> cudaArchOpt(
    "cuda-arch",
    cl::desc("With --target cuda: compute capabilities to build machine code "
             "for, comma-separated (default 80,90)"),
    cl::init("80,90"), cl::sub(compileCmd));
static cl::opt<std::string>
    nvccOpt("nvcc",
            cl::desc("With --target cuda: the nvcc to build with (default: "
                     "$CUDA_HOME/bin/nvcc, else nvcc on PATH, else "
                     "/usr/local/cuda/bin/nvcc)"),
            cl::value_desc("PATH"), cl::init(""), cl::sub(compileCmd));
static cl::opt<bool> returnGradients(
    "return-gradients",
    cl::desc("Also return each parameter's step gradient, so that `train "
             "--dump-gradients DIR` can write them (for checking against "
             "PyTorch)"),
    cl::Hidden, cl::sub(compileCmd));
static cl::opt<std::string> recomputeOpt(
    "recompute",
    cl::desc("Which forward values the backward recomputes: none, full (per "
             "layer), selective (attention scores, elementwise chains) or "
             "auto (the least recompute under --memory-limit)"),
    cl::value_desc("MODE"), cl::init("none"), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<double> memoryLimitOpt(
    "memory-limit",
    cl::desc("GiB each rank's whole peak may take; a plan over it fails"),
    cl::value_desc("GiB"), cl::init(0), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<std::string> deviceProfileOpt(
    "device-profile",
    cl::desc("Device profile of plan.json's predictions: cpu, a100-40g, "
             "a100-80g, h100-sxm, h200, or a JSON file (dtc calibrate)"),
    cl::value_desc("NAME|FILE"), cl::init("cpu"), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<std::string>
    precisionOpt("precision",
                 cl::desc("Step precision: fp32, bf16 or fp16 (16-bit matrix "
                          "products and elementwise ops, fp32 master weights; "
                          "fp16 with dynamic loss scaling)"),
                 cl::value_desc("fp32|bf16|fp16"), cl::init("fp32"),
                 cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd));
static cl::opt<double> lossScaleInitOpt(
    "loss-scale-init",
    cl::desc("fp16: initial loss scale (default 65536; train can override)"),
    cl::value_desc("F"), cl::init(65536), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<int64_t> lossScaleWindowOpt(
    "loss-scale-window",
    cl::desc("fp16: steps without overflow before the scale doubles (default "
             "2000; train can override)"),
    cl::value_desc("N"), cl::init(2000), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::opt<std::string> cpuArchOpt(
    "cpu-arch",
    cl::desc("CPU the executable is compiled for (the host compiler's "
             "-march): native (this machine's) or a baseline that every "
             "rank's CPU has, such as x86-64-v3; the default is "
             "$DTC_CPU_ARCH when set, else native"),
    cl::value_desc("NAME"), cl::init("native"), cl::sub(compileCmd));
static cl::opt<bool> timingOpt(
    "timing",
    cl::desc("Print where compile time goes: import, each pass, emission, "
             "the files and the host compiler (MLIR's timing report)"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));
static cl::alias mlirTimingOpt("mlir-timing", cl::desc("Alias for --timing"),
                               cl::aliasopt(timingOpt));
static cl::opt<bool> noFuseOpt(
    "no-fuse",
    cl::desc("Emit one kernel per op (the unfused baseline of plan.json)"),
    cl::init(false), cl::sub(compileCmd), cl::sub(planCmd),
    cl::sub(autotuneCmd));

static cl::opt<int64_t> devicesOpt(
    "devices",
    cl::desc("Devices (ranks) to lay the model out on: autotune's sweep, and "
             "compile's --mesh auto"),
    cl::value_desc("N"), cl::init(0), cl::sub(compileCmd),
    cl::sub(autotuneCmd));
static cl::opt<int64_t> topOpt("top",
                               cl::desc("Rows of the table (default 10)"),
                               cl::value_desc("K"), cl::init(10),
                               cl::sub(autotuneCmd));
static cl::opt<int64_t> confirmOpt(
    "confirm",
    cl::desc("Best candidates planned on the whole model (default 3); the "
             "winner is the fastest of them that fits"),
    cl::value_desc("K"), cl::init(3), cl::sub(autotuneCmd));
static cl::opt<double> confirmSecondsOpt(
    "confirm-seconds",
    cl::desc("Seconds the whole-model plans may take in all (default 40; 0: "
             "no bound)"),
    cl::value_desc("S"), cl::init(40), cl::sub(autotuneCmd));
static cl::opt<std::string> csvOpt("csv",
                                   cl::desc("Write every candidate as CSV"),
                                   cl::value_desc("FILE"),
                                   cl::sub(autotuneCmd));
static cl::opt<std::string> svgOpt(
    "svg",
    cl::desc("Write a plot of predicted step time against peak memory of "
             "every candidate (SVG)"),
    cl::value_desc("FILE"), cl::sub(autotuneCmd));
static cl::opt<bool> planJsonOpt("json",
                                 cl::desc("Print plan.json instead of the "
                                          "report"),
                                 cl::init(false), cl::sub(planCmd));

// calibrate
static cl::opt<std::string> calibrateOut("o",
                                         cl::desc("Write the profile here "
                                                  "(default: stdout)"),
                                         cl::value_desc("PROFILE.json"),
                                         cl::init("-"), cl::sub(calibrateCmd));
static cl::opt<int64_t>
    calibrateThreads("threads",
                     cl::desc("Threads to measure with (default: OpenMP's, "
                              "OMP_NUM_THREADS)"),
                     cl::value_desc("N"), cl::init(0), cl::sub(calibrateCmd));
static cl::opt<std::string> calibrateMpiRanks(
    "mpi-ranks",
    cl::desc("Rank counts to time the runtime's MPI all-reduce over, under "
             "mpirun (default: 2,4 when mpirun is found; none: keep the "
             "built-in links)"),
    cl::value_desc("N,N,...|none"), cl::init(""), cl::sub(calibrateCmd));

static cl::opt<std::string> trainModelPath(cl::Positional,
                                           cl::desc("MODEL.onnx"), cl::Required,
                                           cl::sub(interpretTrainCmd));

// Model options of training (interpret-train; compile later).
static cl::OptionCategory trainingCategory("Training options");
static cl::opt<int64_t>
    globalBatch("global-batch", cl::desc("Samples per optimizer step"),
                cl::value_desc("N"), cl::sub(interpretTrainCmd),
                cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd),
                cl::cat(trainingCategory));
static cl::opt<int64_t>
    microBatch("micro-batch",
               cl::desc("Samples per micro-batch (default: the global batch)"),
               cl::value_desc("N"), cl::sub(interpretTrainCmd),
               cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd),
               cl::cat(trainingCategory));
static cl::opt<std::string> lossOutput("loss-output",
                                       cl::desc("Output that is the loss"),
                                       cl::sub(interpretTrainCmd),
                                       cl::sub(compileCmd), cl::sub(planCmd),
                                       cl::sub(autotuneCmd),
                                       cl::cat(trainingCategory));
static cl::opt<std::string>
    lossKind("loss", cl::desc("Append a loss: cross_entropy|mse"),
             cl::sub(interpretTrainCmd), cl::sub(compileCmd), cl::sub(planCmd),
             cl::sub(autotuneCmd), cl::cat(trainingCategory));
static cl::opt<std::string>
    logitsName("logits",
               cl::desc("Value the appended loss reads (an output, or any "
                        "float value of the graph, which becomes one)"),
               cl::sub(interpretTrainCmd), cl::sub(compileCmd),
               cl::sub(planCmd), cl::sub(autotuneCmd),
               cl::cat(trainingCategory));
static cl::opt<std::string>
    labelsName("labels",
               cl::desc("Input with the loss targets "
                        "(added if the model has none)"),
               cl::sub(interpretTrainCmd), cl::sub(compileCmd),
               cl::sub(planCmd), cl::sub(autotuneCmd),
               cl::cat(trainingCategory));
static cl::opt<std::string> optimizerName("optimizer", cl::desc("sgd|adamw"),
                                          cl::init("adamw"),
                                          cl::sub(interpretTrainCmd),
                                          cl::sub(compileCmd), cl::sub(planCmd),
                                          cl::sub(autotuneCmd),
                                          cl::cat(trainingCategory));
static cl::list<std::string> freezeList("freeze",
                                        cl::desc("Parameters not to train "
                                                 "(glob patterns)"),
                                        cl::CommaSeparated,
                                        cl::sub(interpretTrainCmd),
                                        cl::sub(compileCmd), cl::sub(planCmd),
                                        cl::sub(autotuneCmd),
                                        cl::cat(trainingCategory));
static cl::list<std::string>
    noDecayList("no-decay",
                cl::desc("Parameters exempt from "
                         "weight decay (glob patterns)"),
                cl::CommaSeparated, cl::sub(interpretTrainCmd),
                cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd),
                cl::cat(trainingCategory));
static cl::opt<double> lrOpt("lr", cl::desc("Peak learning rate"),
                             cl::init(1e-3), cl::sub(interpretTrainCmd),
                             cl::sub(compileCmd), cl::sub(planCmd),
                             cl::sub(autotuneCmd), cl::cat(trainingCategory));
static cl::opt<double> momentumOpt("momentum", cl::desc("SGD momentum"),
                                   cl::init(0), cl::sub(interpretTrainCmd),
                                   cl::sub(compileCmd), cl::sub(planCmd),
                                   cl::sub(autotuneCmd),
                                   cl::cat(trainingCategory));
static cl::opt<double> dampeningOpt("dampening", cl::desc("SGD dampening"),
                                    cl::init(0), cl::sub(interpretTrainCmd),
                                    cl::sub(compileCmd), cl::sub(planCmd),
                                    cl::sub(autotuneCmd),
                                    cl::cat(trainingCategory));
static cl::opt<bool> nesterovOpt("nesterov", cl::desc("SGD Nesterov momentum"),
                                 cl::sub(interpretTrainCmd),
                                 cl::sub(compileCmd), cl::sub(planCmd),
                                 cl::sub(autotuneCmd),
                                 cl::cat(trainingCategory));
static cl::list<double> betasOpt("betas", cl::desc("AdamW betas (B1,B2)"),
                                 cl::CommaSeparated, cl::sub(interpretTrainCmd),
                                 cl::sub(compileCmd), cl::sub(planCmd),
                                 cl::sub(autotuneCmd),
                                 cl::cat(trainingCategory));
static cl::opt<double> epsOpt("eps", cl::desc("AdamW epsilon"), cl::init(1e-8),
                              cl::sub(interpretTrainCmd), cl::sub(compileCmd),
                              cl::sub(planCmd), cl::sub(autotuneCmd),
                              cl::cat(trainingCategory));
static cl::opt<double> weightDecayOpt(
    "weight-decay", cl::desc("Weight decay (default 0 for SGD, 0.01 AdamW)"),
    cl::init(-1), cl::sub(interpretTrainCmd), cl::sub(compileCmd),
    cl::sub(planCmd), cl::sub(autotuneCmd), cl::cat(trainingCategory));
static cl::opt<double> clipNormOpt("clip-norm",
                                   cl::desc("Clip the global gradient norm"),
                                   cl::init(0), cl::sub(interpretTrainCmd),
                                   cl::sub(compileCmd), cl::sub(planCmd),
                                   cl::sub(autotuneCmd),
                                   cl::cat(trainingCategory));
static cl::opt<std::string>
    lrScheduleOpt("lr-schedule", cl::desc("constant|linear|cosine"),
                  cl::init("constant"), cl::sub(interpretTrainCmd),
                  cl::sub(compileCmd), cl::sub(planCmd), cl::sub(autotuneCmd),
                  cl::cat(trainingCategory));
static cl::opt<int64_t> warmupOpt("warmup", cl::desc("Warmup steps"),
                                  cl::init(0), cl::sub(interpretTrainCmd),
                                  cl::sub(compileCmd), cl::sub(planCmd),
                                  cl::sub(autotuneCmd),
                                  cl::cat(trainingCategory));
static cl::opt<int64_t> totalStepsOpt("total-steps",
                                      cl::desc("Steps of the schedule"),
                                      cl::init(0), cl::sub(interpretTrainCmd),
                                      cl::sub(compileCmd), cl::sub(planCmd),
                                      cl::sub(autotuneCmd),
                                      cl::cat(trainingCategory));
static cl::opt<double> minLrOpt("min-lr", cl::desc("Floor of the schedule"),
                                cl::init(0), cl::sub(interpretTrainCmd),
                                cl::sub(compileCmd), cl::sub(planCmd),
                                cl::sub(autotuneCmd),
                                cl::cat(trainingCategory));
static cl::opt<int64_t> seedOpt("seed", cl::desc("Dropout seed"), cl::init(0),
                                cl::sub(interpretTrainCmd), cl::sub(compileCmd),
                                cl::sub(planCmd), cl::sub(autotuneCmd),
                                cl::cat(trainingCategory));
static cl::list<std::string> trainData("data",
                                       cl::desc("Training data "
                                                "(NAME=FILE.npy,...)"),
                                       cl::sub(interpretTrainCmd));
static cl::opt<int64_t> stepsOpt("steps", cl::desc("Optimizer steps"),
                                 cl::init(1), cl::sub(interpretTrainCmd));
static cl::opt<std::string> logJsonl("log-jsonl",
                                     cl::desc("Write one JSON object per step"),
                                     cl::sub(interpretTrainCmd));
static cl::opt<std::string> dumpGradients(
    "dump-gradients",
    cl::desc("Write the step-1 gradients as NAME.npy into this folder"),
    cl::sub(interpretTrainCmd));

// test-onnx
static cl::list<std::string> testDirs(cl::Positional, cl::desc("DIR..."),
                                      cl::OneOrMore, cl::sub(testOnnxCmd));
static cl::opt<std::string> target("target",
                                   cl::desc("Where to run: interp or cpu"),
                                   cl::init("interp"), cl::sub(testOnnxCmd));
static cl::opt<unsigned> timeout("timeout",
                                 cl::desc("Seconds one test may run"),
                                 cl::init(120), cl::sub(testOnnxCmd));
static cl::opt<unsigned> memoryMiB("memory-limit-mib",
                                   cl::desc("MiB one test may use"),
                                   cl::init(2048), cl::sub(testOnnxCmd));
static cl::opt<unsigned> jobs("j", cl::desc("Tests run at once"), cl::init(1),
                              cl::sub(testOnnxCmd));
static cl::opt<std::string>
    expectFile("expect-pass",
               cl::desc("File listing tests expected to pass; any that does "
                        "not is a regression (non-zero exit)"),
               cl::sub(testOnnxCmd));
static cl::opt<std::string> filter("filter",
                                   cl::desc("Run only tests whose name "
                                            "contains this"),
                                   cl::sub(testOnnxCmd));

static ShapeOptions shapeOptions() {
  ShapeOptions shapes;
  if (batch.getNumOccurrences())
    shapes.batch = batch;
  shapes.inputShapes.assign(inputShapes.begin(), inputShapes.end());
  shapes.trainBatchNorm = trainBatchNorm;
  if (!lossKind.empty())
    shapes.appendedLoss = AppendedLoss{lossKind, logitsName, labelsName};
  return shapes;
}

/// Fills the training-step options from the training flags; false after an
/// error.
static bool trainingOptions(BuildTrainStepPassOptions &t) {
  // Flags of the other optimizer contradict the one chosen.
  auto contradicts = [](StringRef flag) {
    errs() << "dtc: error: " << flag << " does not apply to --optimizer "
           << optimizerName << "\n";
    return false;
  };
  if (optimizerName == "sgd" &&
      (betasOpt.getNumOccurrences() || epsOpt.getNumOccurrences()))
    return contradicts(betasOpt.getNumOccurrences() ? "--betas" : "--eps");
  if (optimizerName == "adamw") {
    if (momentumOpt.getNumOccurrences())
      return contradicts("--momentum");
    if (dampeningOpt.getNumOccurrences())
      return contradicts("--dampening");
    if (nesterovOpt.getNumOccurrences())
      return contradicts("--nesterov");
  }
  if (lrOpt < 0 || momentumOpt < 0 || epsOpt < 0 || clipNormOpt < 0 ||
      minLrOpt < 0) {
    errs() << "dtc: error: --lr, --momentum, --eps, --clip-norm and --min-lr "
              "must not be negative\n";
    return false;
  }
  for (double beta : betasOpt)
    if (beta < 0 || beta >= 1) {
      errs() << "dtc: error: --betas must lie in [0, 1)\n";
      return false;
    }

  t.lossOutput = lossOutput;
  t.loss = lossKind;
  t.logits = logitsName;
  t.labels = labelsName;
  t.optimizer = optimizerName;
  static std::vector<std::string> freeze(freezeList.begin(), freezeList.end());
  static std::vector<std::string> noDecay(noDecayList.begin(),
                                          noDecayList.end());
  t.freeze = freeze;
  t.noDecay = noDecay;
  t.lr = lrOpt;
  t.momentum = momentumOpt;
  t.dampening = dampeningOpt;
  t.nesterov = nesterovOpt;
  if (!betasOpt.empty()) {
    if (betasOpt.size() != 2) {
      errs() << "dtc: error: --betas expects two values B1,B2\n";
      return false;
    }
    t.beta1 = betasOpt[0];
    t.beta2 = betasOpt[1];
  }
  t.eps = epsOpt;
  t.weightDecay = weightDecayOpt;
  t.clipNorm = clipNormOpt;
  t.lrSchedule = lrScheduleOpt;
  t.warmup = warmupOpt;
  t.totalSteps = totalStepsOpt;
  t.minLr = minLrOpt;
  t.seed = seedOpt;
  return true;
}

/// The options of `dtc compile` (and `dtc plan`) from the flags; false
/// after printing an error.
static bool compileOptions(CompileCommandOptions &options) {
  options.model = compileModelPath;
  options.outDir = compileOut;
  options.mesh = meshOpt;
  options.zero = zeroOpt;
  options.schedule = scheduleOpt;
  options.virtualStages = virtualStagesOpt;
  options.bucketMb = bucketMbOpt;
  options.commOverlap = commOverlapOpt;
  options.explain = explainOpt;
  options.shards.assign(shardOpt.begin(), shardOpt.end());
  options.sequenceParallel = sequenceParallelOpt;
  if (localBatchNormOpt && syncBatchNormOpt) {
    llvm::errs() << "dtc: error: --local-batchnorm and --sync-batchnorm "
                    "contradict each other; give one\n";
    return false;
  }
  options.localBatchNorm = localBatchNormOpt;
  options.target = compileTarget;
  options.cudaEmulation = cudaEmulationOpt;
  options.cudaArchs = cudaArchOpt;
  options.nvcc = nvccOpt;
  options.shapes = shapeOptions();
  options.globalBatch = globalBatch;
  options.microBatch = microBatch;
  if (!trainingOptions(options.training))
    return false;
  options.training.returnGradients = returnGradients;
  options.recompute = recomputeOpt;
  options.memoryLimitGiB = memoryLimitOpt;
  options.deviceProfile = deviceProfileOpt;
  options.fuse = !noFuseOpt;
  options.timing = timingOpt;
  options.cpuArch = cpuArchOpt;
  // $DTC_CPU_ARCH sets the default for a whole cluster's (or test
  // suite's) builds; the flag still wins.
  if (!cpuArchOpt.getNumOccurrences())
    if (const char *arch = std::getenv("DTC_CPU_ARCH"); arch && *arch) {
      options.cpuArch = arch;
      options.cpuArchOrigin = "$DTC_CPU_ARCH";
    }
  options.devices = devicesOpt;
  options.precision.precision = precisionOpt;
  options.precision.lossScaleInit = lossScaleInitOpt;
  options.precision.lossScaleWindow = lossScaleWindowOpt;
  options.lossScaleFlags = lossScaleInitOpt.getNumOccurrences() ||
                           lossScaleWindowOpt.getNumOccurrences();
  return true;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The top level holds the hundreds of options LLVM's libraries register
  // (code generation for every target...): `dtc --help` lists dtc's
  // subcommands and each subcommand's --help its own options; the others
  // stay accepted and appear under --help-hidden.
  for (auto &entry : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (entry.getKey() != "help" && entry.getKey() != "version")
      entry.getValue()->setHiddenFlag(cl::ReallyHidden);
  cl::ParseCommandLineOptions(argc, argv,
                              "dtc: a compiler for distributed "
                              "training\n");
  if (importCmd) {
    ImportCommandOptions options;
    options.model = modelPath;
    options.output = outputPath;
    options.shapes = shapeOptions();
    options.noCleanup = noCleanup;
    options.printWeights = printWeights;
    return runImportCommand(options);
  }
  if (interpretCmd) {
    InterpretCommandOptions options;
    options.model = modelPath;
    options.shapes = shapeOptions();
    options.inputs.assign(inputs.begin(), inputs.end());
    options.expects.assign(expects.begin(), expects.end());
    options.outputDir = outputDir;
    options.rtol = rtol;
    return runInterpretCommand(options);
  }
  if (interpretTrainCmd) {
    InterpretTrainCommandOptions options;
    options.model = trainModelPath;
    options.shapes = shapeOptions();
    options.globalBatch = globalBatch;
    options.microBatch = microBatch;
    options.data.assign(trainData.begin(), trainData.end());
    options.steps = stepsOpt;
    options.logJsonl = logJsonl;
    options.dumpGradients = dumpGradients;
    if (!trainingOptions(options.training))
      return 1;
    return runInterpretTrainCommand(options);
  }
  if (compileCmd) {
    CompileCommandOptions options;
    if (!compileOptions(options))
      return 1;
    return runCompileCommand(options);
  }
  if (planCmd) {
    PlanCommandOptions options;
    if (!compileOptions(options.compile))
      return 1;
    options.json = planJsonOpt;
    return runPlanCommand(options);
  }
  if (autotuneCmd) {
    AutotuneCommandOptions options;
    if (!compileOptions(options.compile))
      return 1;
    if (meshOpt.getNumOccurrences()) {
      errs() << "dtc: error: autotune chooses the mesh: give --devices N, "
                "not --mesh\n";
      return 1;
    }
    options.fixedZero = zeroOpt.getNumOccurrences() > 0;
    options.fixedRecompute = recomputeOpt.getNumOccurrences() > 0;
    options.fixedMicroBatch = microBatch.getNumOccurrences() > 0;
    options.fixedSchedule = scheduleOpt.getNumOccurrences() > 0;
    options.fixedSequenceParallel = sequenceParallelOpt;
    options.top = topOpt;
    options.confirm = confirmOpt;
    options.confirmSeconds = confirmSecondsOpt;
    options.csv = csvOpt;
    options.svg = svgOpt;
    return runAutotuneCommand(options);
  }
  if (calibrateCmd) {
    CalibrateCommandOptions options;
    options.output = calibrateOut;
    if (calibrateThreads.getNumOccurrences() && calibrateThreads <= 0) {
      errs() << "dtc: error: --threads must be a positive integer\n";
      return 1;
    }
    options.threads = calibrateThreads;
    options.mpiRanks = calibrateMpiRanks;
    return runCalibrateCommand(options);
  }
  if (testOnnxCmd) {
    TestONNXCommandOptions options;
    options.dirs.assign(testDirs.begin(), testDirs.end());
    options.target = target;
    options.timeoutSeconds = timeout;
    options.memoryLimitBytes = uint64_t(memoryMiB) << 20;
    options.jobs = jobs;
    options.expectFile = expectFile;
    options.filter = filter;
    return runTestONNXCommand(options);
  }
  errs() << "dtc: error: no subcommand given; see 'dtc --help'\n";
  return 1;
}
