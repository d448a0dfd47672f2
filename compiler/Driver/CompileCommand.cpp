//===- CompileCommand.cpp - `dtc compile` ---------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"
#include "compiler/Plan/PlanJson.h"
#include "compiler/Target/HostBuild.h"
#include "compiler/Target/TargetInfo.h"
#include "compiler/Target/WeightsLayout.h"

#include "dialects/Dist/IR/DistOps.h"

#include "passes/Analysis/CostModel.h"
#include "passes/Cleanup/Passes.h"
#include "passes/CommScheduling/Passes.h"
#include "passes/Fusion/Passes.h"
#include "passes/Memory/Passes.h"
#include "passes/MixedPrecision/Passes.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Recompute/Passes.h"
#include "passes/Sharding/Passes.h"
#include "passes/Training/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <deque>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::dtc;

/// Parses "AxBxC" or "dp=A,tp=B,pp=C" into (dp, tp, pp).
static bool parseMesh(StringRef text, int64_t &dp, int64_t &tp, int64_t &pp) {
  dp = tp = pp = 1;
  if (text.contains('=')) {
    SmallVector<StringRef> parts;
    text.split(parts, ',');
    for (StringRef part : parts) {
      auto [axis, size] = part.split('=');
      int64_t n;
      if (size.getAsInteger(10, n) || n <= 0)
        return false;
      if (axis == "dp")
        dp = n;
      else if (axis == "tp")
        tp = n;
      else if (axis == "pp")
        pp = n;
      else
        return false;
    }
    return true;
  }
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  if (parts.empty() || parts.size() > 3)
    return false;
  int64_t *dims[] = {&dp, &tp, &pp};
  for (auto [i, part] : llvm::enumerate(parts))
    if (part.getAsInteger(10, *dims[i]) || *dims[i] <= 0)
      return false;
  return true;
}

/// A copy of `plan` that owns its strings: plan.json's names are borrowed
/// from the MLIR context, which dies with the command.
static llvm::json::Value ownedCopy(const llvm::json::Value &plan) {
  std::string text;
  llvm::raw_string_ostream(text) << plan;
  return cantFail(llvm::json::parse(text));
}

/// Communication scheduling (--comm-overlap, --bucket-mb): after fusion,
/// before memory planning.
static void addCommScheduling(PassManager &pm,
                              const CompileCommandOptions &cmd) {
  if (cmd.commOverlap != "on")
    return;
  ScheduleCommunicationPassOptions options;
  options.bucketMb = cmd.bucketMb;
  pm.addPass(createScheduleCommunicationPass(options));
}

/// The generated program's file in OUTDIR: train.cu for the CUDA target.
static std::string sourceFileName(const CompileCommandOptions &cmd) {
  return cmd.target == "cuda" ? "train.cu" : "train.cpp";
}

/// The nvcc that --target cuda builds with: --nvcc (a path, or a name on
/// PATH), else $CUDA_HOME/bin/nvcc, else nvcc on PATH, else CUDA's default
/// place. Empty, with an error naming where it looked, if that is not a
/// program.
static std::string findNvcc(const CompileCommandOptions &cmd) {
  std::string nvcc = cmd.nvcc;
  const char *home = std::getenv("CUDA_HOME");
  if (nvcc.empty() && home && *home) {
    SmallString<256> path(home);
    llvm::sys::path::append(path, "bin", "nvcc");
    nvcc = std::string(path);
  }
  if (nvcc.empty() || !StringRef(nvcc).contains('/'))
    if (llvm::ErrorOr<std::string> onPath =
            llvm::sys::findProgramByName(nvcc.empty() ? "nvcc" : nvcc))
      nvcc = *onPath;
  if (nvcc.empty())
    nvcc = "/usr/local/cuda/bin/nvcc";
  if (llvm::sys::fs::can_execute(nvcc) && !llvm::sys::fs::is_directory(nvcc))
    return nvcc;
  reportError("--target cuda: no nvcc at '" + nvcc + "' (" +
              (!cmd.nvcc.empty() ? "--nvcc"
               : home && *home   ? "$CUDA_HOME/bin"
                                 : "not on PATH; CUDA's default place") +
              "); name it with --nvcc PATH or CUDA_HOME, or build for the "
              "host with --cuda-emulation");
  return "";
}

/// The target `dtc compile --target` names, with its options.
static std::unique_ptr<TargetInfo>
makeTarget(const CompileCommandOptions &cmd) {
  if (cmd.target == "cuda") {
    CUDATargetOptions options;
    options.emulation = cmd.cudaEmulation;
    if (!cmd.cudaEmulation)
      options.nvcc = findNvcc(cmd);
    options.archs.clear();
    SmallVector<StringRef> archs;
    StringRef(cmd.cudaArchs).split(archs, ',');
    for (StringRef a : archs)
      options.archs.push_back(a.str());
    return createCUDATargetInfo(options);
  }
  CPUTargetOptions options;
  options.arch = cmd.cpuArch;
  return createCPUTargetInfo(options);
}

static LogicalResult writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    reportError("cannot write '" + path + "': " + ec.message());
    return failure();
  }
  os << contents;
  return success();
}

/// Checks that the stages' transfers meet: running every stage's
/// @train_step in order, each dist.recv finds the message it names
/// (dtc.message) first in line from its peer (per direction, as the
/// runtime's streams keep them), and every stage runs to its end. A failure
/// is a bug of the schedule, reported before anything runs.
static LogicalResult verifyTransfers(ArrayRef<ModuleOp> stages) {
  struct Transfer {
    bool send;
    int64_t shift;
    std::string message;
  };
  int64_t pp = stages.size();
  SmallVector<SmallVector<Transfer>> program(pp);
  for (auto [s, stage] : llvm::enumerate(stages)) {
    ModuleOp module = stage;
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    for (Operation &op : step.getBody().front()) {
      auto message = op.getAttrOfType<StringAttr>("dtc.message");
      if (auto send = dyn_cast<dist::SendOp>(op))
        program[s].push_back(
            {true, send.getShift(), message ? message.str() : ""});
      else if (auto recv = dyn_cast<dist::RecvOp>(op))
        program[s].push_back(
            {false, recv.getShift(), message ? message.str() : ""});
    }
  }
  std::map<std::tuple<int64_t, int64_t, int>, std::deque<std::string>> lines;
  SmallVector<size_t> at(pp, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < pp; ++s)
      while (at[s] < program[s].size()) {
        const Transfer &t = program[s][at[s]];
        int64_t peer = ((s + t.shift) % pp + pp) % pp;
        if (t.send) {
          lines[{s, peer, t.shift > 0 ? 0 : 1}].push_back(t.message);
        } else {
          auto &line = lines[{peer, s, t.shift < 0 ? 0 : 1}];
          if (line.empty())
            break;
          if (line.front() != t.message) {
            reportError("internal: pipeline stage " + Twine(s) + " receives '" +
                        t.message + "' where stage " + Twine(peer) +
                        " sends '" + line.front() + "'");
            return failure();
          }
          line.pop_front();
        }
        ++at[s];
        progress = true;
      }
  }
  for (int64_t s = 0; s < pp; ++s)
    if (at[s] < program[s].size()) {
      reportError("internal: pipeline stage " + Twine(s) +
                  " would wait "
                  "forever for '" +
                  program[s][at[s]].message + "'");
      return failure();
    }
  return success();
}

/// The plan of a pipeline: each stage's plan.json, its ranks' entries
/// taken from its own plan, the totals summed, and the schedule's bubble.
/// `sharing` is how many times longer kernels take because ranks share
/// cores (coreSharing of the profile).
static llvm::json::Value
mergeStagePlans(ArrayRef<llvm::json::Value> plans,
                ArrayRef<double> stageSeconds, StringRef schedule, int64_t pp,
                int64_t virtualStages, int64_t microBatches,
                int64_t sharedParameters, double sharing) {
  using llvm::json::Array;
  using llvm::json::Object;
  Object merged = *plans.front().getAsObject();
  Array ranks, stages, tensors;
  double flops = 0, flopsAll = 0, slowest = -1, peakSeconds = 0;
  Object slowestPredicted;
  int64_t parameters = -sharedParameters, before = 0, after = 0;
  for (auto [s, plan] : llvm::enumerate(plans)) {
    const Object &o = *plan.getAsObject();
    for (const llvm::json::Value &rank : *o.getArray("ranks"))
      if (rank.getAsObject()->getInteger("stage") == int64_t(s))
        ranks.push_back(rank);
    for (const llvm::json::Value &t : *o.getArray("tensors"))
      tensors.push_back(t);
    flops += *o.getNumber("flops_per_step");
    flopsAll += *o.getNumber("flops_per_step_all");
    parameters += *o.getInteger("parameters_total");
    const Object &kernels = *o.getObject("kernels");
    before += *kernels.getInteger("before_fusion");
    after += *kernels.getInteger("after_fusion");
    double time = *o.getObject("predicted")->getNumber("step_time_s");
    // mfu x step time is a stage rank's model FLOPs over the peak.
    peakSeconds += *o.getObject("predicted")->getNumber("mfu") * time;
    if (time > slowest) {
      slowest = time;
      slowestPredicted = *o.getObject("predicted");
    }
    stages.push_back(Object{{"stage", int64_t(s)},
                            {"forward_seconds", stageSeconds[s]},
                            {"step_time_s", time},
                            {"parameters", *o.getInteger("parameters_total")}});
  }
  // (p - 1) / m of the ideal time (../shared/REFERENCE.md): the slowest
  // stage's compute, stretched by the fill and drain of the pipeline.
  double bubble = double(pp - 1) / double(virtualStages * microBatches);
  // The slowest stage's breakdown, and the time its bubble adds (less
  // where ranks share cores: sharedCoreBubbleSeconds).
  Object predicted = std::move(slowestPredicted);
  double bubbleSeconds =
      sharedCoreBubbleSeconds(slowest, slowest * bubble, sharing);
  double stepTime = slowest + bubbleSeconds;
  predicted["bubble_s"] = bubbleSeconds;
  predicted["mfu"] = stepTime > 0 ? peakSeconds / (double(pp) * stepTime) : 0;
  int64_t globalBatch = *merged.getInteger("global_batch");
  predicted["step_time_s"] = stepTime;
  predicted["samples_per_s"] = stepTime > 0 ? globalBatch / stepTime : 0.0;
  predicted["bubble_fraction"] = bubble;
  merged["predicted"] = std::move(predicted);
  merged["schedule"] = schedule;
  merged["virtual_stages"] = virtualStages;
  merged["ranks"] = std::move(ranks);
  merged["stages"] = std::move(stages);
  merged["tensors"] = std::move(tensors);
  merged["flops_per_step"] = flops;
  merged["flops_per_step_all"] = flopsAll;
  merged["parameters_total"] = parameters;
  merged["kernels"] =
      Object{{"before_fusion", before}, {"after_fusion", after}};
  return merged;
}

/// Clean-up of the built training step: the gradients' constant
/// arithmetic folded (the exponent c - 1 of pow's derivative, which kernels
/// would otherwise compute at run time and read as a buffer: a libm pow per
/// element where x * x was asked), then canonicalization and CSE.
static void addStepCleanup(PassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createFoldConstantsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

static int compilePipelined(const CompileCommandOptions &cmd, ModuleOp module,
                            int64_t dp, int64_t tp, int64_t pp,
                            int64_t microBatches, StringRef schedule,
                            int64_t virtualStages, const DeviceProfile &profile,
                            double recomputeLimitGiB, TimingScope &root) {
  MLIRContext *context = module.getContext();
  TimingScope splitTimer = root.nest("pipeline stages");
  PassManager split(context);
  SplitStagesPassOptions splitOptions;
  splitOptions.stages = pp;
  splitOptions.virtualStages = virtualStages;
  split.addPass(createSplitStagesPass(splitOptions));
  if (failed(split.run(module)))
    return 1;
  splitTimer.stop();
  // Where each ONNX node runs (plan.json's op_stages): its stage (and
  // chunk), or every stage that computes its own copy of an op of the
  // parameters alone (a tied embedding's transpose).
  llvm::json::Array opStages;
  {
    SmallVector<std::string> order;
    llvm::StringMap<SmallVector<int64_t>> stagesOf;
    llvm::StringMap<int64_t> chunkOf;
    for (func::FuncOp f : module.getOps<func::FuncOp>()) {
      auto stage = f->getAttrOfType<IntegerAttr>(pipeline::kStage);
      if (!stage)
        continue;
      f.walk([&](Operation *op) {
        auto name = op->getLoc()->findInstanceOf<NameLoc>();
        if (!name || op == f.getOperation())
          return;
        StringRef node = name.getName().getValue();
        auto [it, inserted] = stagesOf.try_emplace(node);
        if (inserted)
          order.push_back(node.str());
        if (!llvm::is_contained(it->second, stage.getInt()))
          it->second.push_back(stage.getInt());
        if (auto chunk = op->getAttrOfType<IntegerAttr>(pipeline::kChunk))
          chunkOf[node] = chunk.getInt();
      });
    }
    for (const std::string &node : order) {
      ArrayRef<int64_t> stages = stagesOf[node];
      llvm::json::Object entry{{"onnx_node", node}};
      if (stages.size() == 1)
        entry["stage"] = stages.front();
      else
        entry["stages"] = llvm::json::Array(stages);
      if (auto it = chunkOf.find(node); it != chunkOf.end())
        entry["chunk"] = it->second;
      opStages.push_back(std::move(entry));
    }
  }

  // Each stage is compiled as a program of its own.
  SmallVector<OwningOpRef<ModuleOp>> stageModules;
  SmallVector<double> stageSeconds;
  SmallVector<int64_t> kernelsBefore;
  for (int64_t s = 0; s < pp; ++s) {
    OwningOpRef<ModuleOp> stage = module.clone();
    for (func::FuncOp f :
         llvm::make_early_inc_range(stage->getOps<func::FuncOp>())) {
      if (f.getSymName() != ("main_stage" + Twine(s)).str()) {
        f.erase();
        continue;
      }
      f.setSymName("main");
      auto seconds = f->getAttrOfType<FloatAttr>(pipeline::kStageSeconds);
      stageSeconds.push_back(seconds ? seconds.getValueAsDouble() : 0);
    }
    if (tp > 1) {
      // Megatron's splits of the stage's linear layers.
      PassManager plan(context);
      PlanTensorParallelPassOptions tpPlan;
      tpPlan.dp = dp;
      tpPlan.tp = tp;
      tpPlan.shard = cmd.shards;
      plan.addPass(createPlanTensorParallelPass(tpPlan));
      if (failed(plan.run(*stage)))
        return 1;
    }
    BuildTrainStepPassOptions training = cmd.training;
    training.microBatches = microBatches;
    training.syncBatchNormDp = cmd.localBatchNorm ? 1 : dp;
    training.pipelineStage = s;
    training.pipelineStages = pp;
    training.meshDp = dp;
    PassManager pm(context);
    pm.addPass(createBuildTrainStepPass(training));
    if (cmd.precision.precision != "fp32")
      pm.addPass(createMixedPrecisionPass(cmd.precision));
    addStepCleanup(pm);
    if (tp > 1) {
      PropagateShardingPassOptions propagation;
      propagation.sequenceParallel = cmd.sequenceParallel;
      pm.addPass(createPropagateShardingPass(propagation));
      pm.addPass(createPartitionPass());
    }
    PartitionDataParallelPassOptions partition;
    partition.dp = dp;
    partition.zero = cmd.zero;
    partition.localBatchNorm = cmd.localBatchNorm;
    pm.addPass(createPartitionDataParallelPass(partition));
    RecomputePassOptions recompute;
    recompute.mode = cmd.recompute;
    recompute.memoryLimit = int64_t(recomputeLimitGiB * double(1 << 30));
    pm.addPass(createRecomputePass(recompute));
    SchedulePipelinePassOptions scheduling;
    scheduling.schedule = schedule.str();
    scheduling.stage = s;
    scheduling.stages = pp;
    scheduling.virtualStages = virtualStages;
    pm.addPass(createSchedulePipelinePass(scheduling));
    if (tp > 1)
      pm.addPass(createScatterTransfersPass());
    TimingScope stageTimer = root.nest(("stage " + Twine(s)).str());
    pm.enableTiming(stageTimer);
    if (failed(pm.run(*stage)))
      return 1;
    kernelsBefore.push_back(countKernels(*stage));
    PassManager late(context);
    if (cmd.fuse)
      late.addNestedPass<func::FuncOp>(createFusePass());
    addCommScheduling(late, cmd);
    late.addPass(createPlanMemoryPass());
    if (failed(late.run(*stage)))
      return 1;
    if (cmd.explain) {
      llvm::outs() << "pipeline stage " << s << ":\n";
      printExplanation(*stage, llvm::outs());
    }
    stageModules.push_back(std::move(stage));
  }

  SmallVector<ModuleOp> modules;
  SmallVector<std::string> weightsFiles;
  for (int64_t s = 0; s < pp; ++s) {
    modules.push_back(*stageModules[s]);
    weightsFiles.push_back("weights.stage" + std::to_string(s) + ".bin");
  }
  if (failed(verifyTransfers(modules)))
    return 1;
  // Parameters several stages hold (tied) count once in the plan.
  int64_t shared = 0;
  {
    llvm::StringMap<int64_t> seen;
    for (ModuleOp m : modules) {
      auto step = m.lookupSymbol<func::FuncOp>("train_step");
      for (unsigned i = 0; i < step.getNumArguments(); ++i)
        if (step.getArgAttr(i, "dtg.trainable"))
          if (auto name = step.getArgAttrOfType<StringAttr>(i, "dtg.name"))
            if (seen[name.getValue()]++ > 0)
              shared += cast<RankedTensorType>(step.getArgument(i).getType())
                            .getNumElements();
    }
  }
  SmallVector<llvm::json::Value> plans;
  int64_t arenaBytes = 0;
  for (int64_t s = 0; s < pp; ++s) {
    plans.push_back(buildPlanJson(modules[s], kernelsBefore[s],
                                  countKernels(modules[s]), &profile, s));
    auto step = modules[s].lookupSymbol<func::FuncOp>("train_step");
    arenaBytes = std::max(
        arenaBytes,
        step->getAttrOfType<IntegerAttr>(memory::kArenaBytes).getInt());
  }
  llvm::json::Value merged =
      mergeStagePlans(plans, stageSeconds, schedule, pp, virtualStages,
                      microBatches, shared, coreSharing(profile));
  merged.getAsObject()->try_emplace("op_stages", std::move(opStages));
  if (cmd.planOnly) {
    *cmd.planResult = ownedCopy(merged);
    return 0;
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(cmd.outDir))
    return reportError("cannot create '" + cmd.outDir + "': " + ec.message());
  auto path = [&](StringRef name) {
    SmallString<256> p(cmd.outDir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::unique_ptr<TargetInfo> target = makeTarget(cmd);
  std::vector<SourceFile> sources;
  if (failed(target->emitPipelinedProgram(modules, weightsFiles,
                                          sourceFileName(cmd), sources)))
    return 1;
  std::string plan;
  llvm::raw_string_ostream planOs(plan);
  planOs << llvm::formatv("{0:2}", merged) << "\n";
  std::vector<std::string> sourcePaths;
  std::string error;
  if (!writeProgramSources(cmd.outDir, sources, sourcePaths, error))
    return reportError(error);
  if (failed(writeFile(path("plan.json"), plan)))
    return 1;
  for (int64_t s = 0; s < pp; ++s) {
    auto step = modules[s].lookupSymbol<func::FuncOp>("train_step");
    if (failed(WeightsLayout(step).write(path(weightsFiles[s]))))
      return 1;
    for (func::FuncOp func : modules[s].getOps<func::FuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, StringAttr::get(context, attrs::kInitial));
    std::string ir;
    llvm::raw_string_ostream irOs(ir);
    modules[s]->print(irOs, OpPrintingFlags().elideLargeElementsAttrs(16));
    if (failed(writeFile(path("step.stage" + std::to_string(s) + ".mlir"), ir)))
      return 1;
  }
  llvm::sys::fs::remove(path("model.onnx"));
  if (llvm::sys::fs::create_hard_link(cmd.model, path("model.onnx")))
    if (std::error_code ec =
            llvm::sys::fs::copy_file(cmd.model, path("model.onnx")))
      return reportError("cannot copy the model into '" + cmd.outDir +
                         "': " + ec.message());
  std::string log;
  TimingScope buildTimer = root.nest("host compiler (train)");
  if (!target->buildExecutable(sourcePaths, path("train"), log))
    return reportError(log);
  buildTimer.stop();
  llvm::errs() << "dtc: wrote " << path("train") << " (" << pp
               << " pipeline stages, " << schedule
               << (virtualStages > 1
                       ? " with " + std::to_string(virtualStages) +
                             " virtual stages"
                       : std::string())
               << ", largest arena " << arenaBytes << " bytes)\n";
  return 0;
}

int mlir::dtc::runCompileCommand(const CompileCommandOptions &cmd) {
  if (cmd.mesh == "auto") {
    // dtc autotune's best plan for --devices, then that plan compiled.
    CompileCommandOptions chosen;
    if (int rc = chooseAutoMesh(cmd, chosen))
      return rc;
    return runCompileCommand(chosen);
  }
  if (cmd.devices != 0)
    return reportError("--devices N applies to --mesh auto (the mesh "
                       "autotune chooses); --mesh " +
                       cmd.mesh + " gives the devices itself");
  int64_t dp, tp, pp;
  if (!parseMesh(cmd.mesh, dp, tp, pp))
    return reportError("--mesh expects DPxTPxPP or dp=N,tp=N,pp=N, got '" +
                       cmd.mesh + "'");
  std::string schedule = cmd.schedule.empty() ? "1f1b" : cmd.schedule;
  if (!cmd.schedule.empty() && pp == 1)
    return reportError("--schedule " + cmd.schedule +
                       " orders the stages of a pipeline: it needs a mesh "
                       "with pp > 1 (--mesh " +
                       cmd.mesh + " has none)");
  if (schedule != "gpipe" && schedule != "1f1b" && schedule != "interleaved")
    return reportError("--schedule expects gpipe, 1f1b or interleaved, got '" +
                       schedule + "'");
  if (cmd.virtualStages != 0 && schedule != "interleaved")
    return reportError("--virtual-stages applies to --schedule interleaved "
                       "only");
  int64_t virtualStages = 1;
  if (schedule == "interleaved") {
    if (cmd.virtualStages < 2)
      return reportError("--schedule interleaved needs --virtual-stages V "
                         "(model chunks per pipeline rank, at least 2)");
    virtualStages = cmd.virtualStages;
  } else if (cmd.virtualStages < 0) {
    return reportError("--virtual-stages expects a positive number");
  }
  if (cmd.zero < 0 || cmd.zero > 3)
    return reportError("--zero expects 0, 1, 2 or 3, got " + Twine(cmd.zero));
  if (cmd.commOverlap != "on" && cmd.commOverlap != "off")
    return reportError("--comm-overlap expects on or off, got '" +
                       cmd.commOverlap + "'");
  if (!(cmd.bucketMb >= 0) || cmd.bucketMb > 1e6)
    return reportError("--bucket-mb expects a size in MiB of 0 or more, got " +
                       Twine(std::to_string(cmd.bucketMb)));
  if (cmd.target != "cpu" && cmd.target != "cuda")
    return reportError("--target expects cpu or cuda, got '" + cmd.target +
                       "'");
  if (cmd.cudaEmulation && cmd.target != "cuda")
    return reportError("--cuda-emulation needs --target cuda");
  if (!cmd.nvcc.empty() && cmd.target != "cuda")
    return reportError("--nvcc needs --target cuda");
  if (cmd.target == "cuda") {
    SmallVector<StringRef> archs;
    StringRef(cmd.cudaArchs).split(archs, ',');
    for (StringRef a : archs)
      if (a.empty() || a.size() > 3 || !llvm::all_of(a, llvm::isDigit))
        return reportError("--cuda-arch expects compute capabilities such "
                           "as 80,90, got '" +
                           cmd.cudaArchs + "'");
    if (!cmd.cudaEmulation && findNvcc(cmd).empty())
      return 1;
  }
  if (cmd.outDir.empty() && !cmd.planOnly)
    return reportError("-o OUTDIR is required");
  if (cmd.globalBatch <= 0)
    return reportError("--global-batch must be a positive integer");
  if (cmd.globalBatch % dp != 0)
    return reportError("--mesh " + cmd.mesh + ": dp=" + Twine(dp) +
                       " does not divide --global-batch " +
                       Twine(cmd.globalBatch) +
                       " (each data-parallel rank takes an equal share)");
  // The micro-batch is one rank's; by default a rank's whole share.
  int64_t local = cmd.globalBatch / dp;
  int64_t micro = cmd.microBatch > 0 ? cmd.microBatch : local;
  if (local % micro != 0 && dp == 1)
    return reportError("--micro-batch " + Twine(micro) +
                       " does not divide --global-batch " +
                       Twine(cmd.globalBatch));
  if (local % micro != 0)
    return reportError("--micro-batch " + Twine(micro) +
                       " does not divide a data-parallel rank's share of "
                       "--global-batch " +
                       Twine(cmd.globalBatch) + " (" + Twine(local) + " = " +
                       Twine(cmd.globalBatch) + " / dp=" + Twine(dp) + ")");
  if (schedule == "interleaved" && (local / micro) % pp != 0)
    return reportError(
        "--schedule interleaved needs the micro-batches of a step to be a "
        "multiple of pp=" +
        Twine(pp) + ", got " + Twine(local / micro) + " (" + Twine(local) +
        " samples per data-parallel rank / --micro-batch " + Twine(micro) +
        ")");
  if (cmd.recompute != "none" && cmd.recompute != "full" &&
      cmd.recompute != "selective" && cmd.recompute != "auto")
    return reportError("--recompute expects none, full, selective or auto, "
                       "got '" +
                       cmd.recompute + "'");
  if (!(cmd.memoryLimitGiB >= 0) || cmd.memoryLimitGiB > double(1 << 30))
    return reportError("--memory-limit expects a size in GiB (a positive "
                       "number), got " +
                       llvm::formatv("{0}", cmd.memoryLimitGiB).str());
  if (cmd.recompute == "auto" && cmd.memoryLimitGiB == 0)
    return reportError("--recompute auto needs --memory-limit GiB");
  const MixedPrecisionPassOptions &precision = cmd.precision;
  if (precision.precision != "fp32" && precision.precision != "bf16" &&
      precision.precision != "fp16")
    return reportError("--precision expects fp32, bf16 or fp16, got '" +
                       precision.precision + "'");
  if (cmd.lossScaleFlags && precision.precision != "fp16")
    return reportError("--loss-scale-init and --loss-scale-window apply to "
                       "--precision fp16 only (--precision " +
                       precision.precision + " has no loss scaling)");
  if (!(precision.lossScaleInit > 0) || !std::isfinite(precision.lossScaleInit))
    return reportError("--loss-scale-init expects a positive number, got " +
                       llvm::formatv("{0}", precision.lossScaleInit).str());
  if (precision.lossScaleWindow < 1)
    return reportError("--loss-scale-window expects a positive number of "
                       "steps, got " +
                       Twine(precision.lossScaleWindow));
  if (cmd.cpuArch.empty() || !llvm::all_of(cmd.cpuArch, [](char c) {
        return llvm::isAlnum(c) || c == '-' || c == '_' || c == '.';
      }))
    return reportError(cmd.cpuArchOrigin +
                       " expects a CPU name such as native or "
                       "x86-64-v3, got '" +
                       cmd.cpuArch + "'");
  std::string profileError;
  FailureOr<DeviceProfile> profile =
      loadDeviceProfile(cmd.deviceProfile, profileError);
  if (failed(profile))
    return reportError("--device-profile: " + profileError);
  ShapeOptions shapes = cmd.shapes;
  shapes.batch = micro;
  ImportOptions options;
  if (!parseShapeOptions(shapes, options))
    return 1;
  options.requireWeights = !cmd.planOnly;
  // Warned once, not for each plan autotune (quiet) makes.
  options.forTraining = !cmd.quiet;
  // `dtc plan` reports a plan over the limit (and what would fit) rather
  // than failing in recompute.
  double recomputeLimitGiB =
      cmd.planOnly && cmd.recompute != "auto" ? 0 : cmd.memoryLimitGiB;

  // --timing: MLIR's timing report (as --mlir-timing prints it), with the
  // import, each pass, emission, the files and the host compiler as its
  // scopes; printed to stderr when the manager goes out of scope.
  DefaultTimingManager timing;
  timing.setEnabled(cmd.timing);
  timing.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope root = timing.getRootScope();

  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context, /*print=*/!cmd.quiet);
  // The first error of a quiet run, for its caller.
  auto keepFirstError = llvm::make_scope_exit([&] {
    if (cmd.firstError)
      *cmd.firstError = diagnostics.firstError();
  });
  TimingScope importTimer = root.nest("import (ONNX, clean-up)");
  FailureOr<OwningOpRef<ModuleOp>> module = failure();
  if (cmd.moduleSource.empty()) {
    module = importAndClean(&context, cmd.model, options);
  } else {
    loadImportedDialects(&context);
    OwningOpRef<ModuleOp> parsed =
        parseSourceString<ModuleOp>(cmd.moduleSource, &context);
    if (parsed)
      module = std::move(parsed);
  }
  importTimer.stop();
  if (failed(module))
    return 1;
  if (!cmd.shards.empty() && tp == 1)
    return reportError("--shard splits parameters over the tensor-parallel "
                       "axis: it needs a mesh with tp > 1 (--mesh " +
                       cmd.mesh + " has none)");
  if (cmd.sequenceParallel && tp == 1)
    return reportError("--sequence-parallel splits activations over the "
                       "tensor-parallel axis: it needs a mesh with tp > 1 "
                       "(--mesh " +
                       cmd.mesh + " has none)");
  if (pp > 1)
    return compilePipelined(cmd, **module, dp, tp, pp, local / micro, schedule,
                            virtualStages, *profile, recomputeLimitGiB, root);
  if (tp > 1) {
    // Megatron's splits of the linear layers, as the seeds of propagation.
    PassManager plan(&context);
    PlanTensorParallelPassOptions tpPlan;
    tpPlan.dp = dp;
    tpPlan.tp = tp;
    tpPlan.shard = cmd.shards;
    plan.addPass(createPlanTensorParallelPass(tpPlan));
    if (failed(plan.run(**module)))
      return 1;
  }
  BuildTrainStepPassOptions training = cmd.training;
  training.microBatches = local / micro;
  training.syncBatchNormDp = cmd.localBatchNorm ? 1 : dp;
  PassManager pm(&context);
  pm.addPass(createBuildTrainStepPass(training));
  if (precision.precision != "fp32")
    pm.addPass(createMixedPrecisionPass(precision));
  addStepCleanup(pm);
  if (tp > 1) {
    // Tensor parallelism: shardings spread from the plan's through every
    // op of the steps, then each function becomes the rank's program.
    PropagateShardingPassOptions propagation;
    propagation.sequenceParallel = cmd.sequenceParallel;
    pm.addPass(createPropagateShardingPass(propagation));
    pm.addPass(createPartitionPass());
  }
  PartitionDataParallelPassOptions partition;
  partition.dp = dp;
  partition.zero = cmd.zero;
  partition.localBatchNorm = cmd.localBatchNorm;
  pm.addPass(createPartitionDataParallelPass(partition));
  RecomputePassOptions recompute;
  recompute.mode = cmd.recompute;
  recompute.memoryLimit = int64_t(recomputeLimitGiB * double(1 << 30));
  pm.addPass(createRecomputePass(recompute));
  TimingScope trainTimer = root.nest("training step");
  pm.enableTiming(trainTimer);
  if (failed(pm.run(**module)))
    return 1;
  trainTimer.stop();
  // The unfused baseline: one kernel per op after clean-up.
  int64_t kernelsBeforeFusion = countKernels(**module);
  PassManager late(&context);
  if (cmd.fuse)
    late.addNestedPass<func::FuncOp>(createFusePass());
  addCommScheduling(late, cmd);
  late.addPass(createPlanMemoryPass());
  TimingScope lateTimer = root.nest("fusion and memory planning");
  late.enableTiming(lateTimer);
  if (failed(late.run(**module)))
    return 1;
  lateTimer.stop();
  if (cmd.explain)
    printExplanation(**module, llvm::outs());
  if (cmd.planOnly) {
    *cmd.planResult = ownedCopy(buildPlanJson(
        **module, kernelsBeforeFusion, countKernels(**module), &*profile));
    return 0;
  }

  if (std::error_code ec = llvm::sys::fs::create_directories(cmd.outDir))
    return reportError("cannot create '" + cmd.outDir + "': " + ec.message());
  auto path = [&](StringRef name) {
    SmallString<256> p(cmd.outDir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::unique_ptr<TargetInfo> target = makeTarget(cmd);
  std::vector<SourceFile> sources;
  TimingScope emitTimer = root.nest("emission");
  TimingScope programTimer = emitTimer.nest(sourceFileName(cmd));
  if (failed(target->emitProgram(**module, ProgramKind::Training,
                                 sourceFileName(cmd), sources)))
    return 1;
  programTimer.stop();
  auto step = (*module)->lookupSymbol<func::FuncOp>("train_step");
  int64_t kernels = countKernels(**module);
  TimingScope planTimer = emitTimer.nest("plan.json");
  std::string plan;
  llvm::raw_string_ostream planOs(plan);
  planOs << llvm::formatv("{0:2}", buildPlanJson(**module, kernelsBeforeFusion,
                                                 kernels, &*profile))
         << "\n";
  planTimer.stop();
  emitTimer.stop();
  TimingScope filesTimer = root.nest("files (weights.bin, model.onnx, ...)");
  std::vector<std::string> sourcePaths;
  std::string error;
  if (!writeProgramSources(cmd.outDir, sources, sourcePaths, error))
    return reportError(error);
  if (failed(writeFile(path("plan.json"), plan)) ||
      failed(WeightsLayout(step).write(path("weights.bin"))))
    return 1;
  // step.mlir without the initial values: they are in weights.bin, and the
  // printer would turn each resource blob into hex only to elide it.
  for (func::FuncOp func : (*module)->getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, StringAttr::get(&context, attrs::kInitial));
  std::string ir;
  llvm::raw_string_ostream irOs(ir);
  (*module)->print(irOs, OpPrintingFlags().elideLargeElementsAttrs(16));
  if (failed(writeFile(path("step.mlir"), ir)))
    return 1;
  // OUTDIR/model.onnx (the graph --save-onnx writes back) is a second name
  // of the model file where the file system allows, not a second copy of
  // its weights.
  llvm::sys::fs::remove(path("model.onnx"));
  if (llvm::sys::fs::create_hard_link(cmd.model, path("model.onnx")))
    if (std::error_code ec =
            llvm::sys::fs::copy_file(cmd.model, path("model.onnx")))
      return reportError("cannot copy the model into '" + cmd.outDir +
                         "': " + ec.message());
  filesTimer.stop();
  std::string log;
  TimingScope buildTimer = root.nest("host compiler (train)");
  if (!target->buildExecutable(sourcePaths, path("train"), log))
    return reportError(log);
  buildTimer.stop();
  llvm::errs() << "dtc: wrote " << path("train") << " (" << kernels
               << " kernels per step, arena "
               << step->getAttrOfType<IntegerAttr>(memory::kArenaBytes).getInt()
               << " bytes)\n";
  return 0;
}
