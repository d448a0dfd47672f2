//===- PlanJson.cpp - plan.json of a compiled step -----------------------===//

#include "compiler/Plan/PlanJson.h"

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Analysis/CostModel.h"
#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::dtc;
using llvm::json::Array;
using llvm::json::Object;

static StringRef argRole(func::FuncOp f, unsigned i) {
  auto s = f.getArgAttrOfType<StringAttr>(i, "dtg.role");
  return s ? s.getValue() : "";
}
static StringRef argName(func::FuncOp f, unsigned i) {
  auto s = f.getArgAttrOfType<StringAttr>(i, "dtg.name");
  return s ? s.getValue() : "";
}

static int64_t arenaOf(func::FuncOp f) {
  auto a =
      f ? f->getAttrOfType<IntegerAttr>(memory::kArenaBytes) : IntegerAttr();
  return a ? a.getInt() : 0;
}

/// Sums `fn` over the ops of `func`, counting a call as its callee's sum. A
/// dtg.fusion counts as the ops it holds when `intoFusions` (work), else as
/// one op (a kernel, whose region the cost model sums itself).
template <typename Fn>
static double sumOps(func::FuncOp func, Fn fn, bool intoFusions = true) {
  double total = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && !callee.isExternal())
        total += sumOps(callee, fn, intoFusions);
      continue;
    }
    if (auto fusion = dyn_cast<dtg::FusionOp>(op); fusion && intoFusions) {
      for (Operation &inner : fusion.getBody().front().without_terminator())
        total += fn(&inner);
      continue;
    }
    total += fn(&op);
  }
  return total;
}

/// sumOps with each dtg.fusion as one op.
template <typename Fn> static double sumKernelOps(func::FuncOp func, Fn fn) {
  return sumOps(func, fn, /*intoFusions=*/false);
}

int64_t mlir::dtc::countKernels(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    return 0;
  // A dtg.fusion is one kernel (its ops are none); reshapes alias their
  // operand and constants are static data.
  std::function<int64_t(func::FuncOp)> count = [&](func::FuncOp func) {
    int64_t n = 0;
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
          n += count(callee);
        continue;
      }
      n += isa<dtg::ConstantOp, dtg::ReshapeOp>(op) ? 0 : 1;
    }
    return n;
  };
  return count(step);
}

/// The sharding of argument `i` as text: "replicated", or the whole
/// tensor's #dist.sharding of a block (dtc.sharding).
static std::string shardingText(func::FuncOp step, unsigned i) {
  Attribute sharding = step.getArgAttr(i, "dtc.sharding");
  if (!sharding)
    return "replicated";
  std::string text;
  llvm::raw_string_ostream(text) << sharding;
  return text;
}

/// The index of mesh axis `axis` in (pp, dp, tp) order.
static int axisIndex(StringRef axis) {
  return axis == "pp" ? 0 : axis == "dp" ? 1 : 2;
}

/// Into how many blocks argument `i`'s dtc.sharding cuts the whole tensor
/// (1 if it has none): the product of the sizes of the axes splitting its
/// dimensions, on a mesh of `sizes` (pp, dp, tp).
/// With `only`, the axes of that name alone count.
static int64_t blocksOf(func::FuncOp step, unsigned i, const int64_t sizes[3],
                        StringRef only = "") {
  auto sharding = step.getArgAttrOfType<dist::ShardingAttr>(i, "dtc.sharding");
  if (!sharding)
    return 1;
  int64_t blocks = 1;
  for (dist::AxisListAttr dim : sharding.getDims())
    for (StringAttr axis : dim.getAxes())
      if (only.empty() || axis.getValue() == only)
        blocks *= sizes[axisIndex(axis.getValue())];
  return blocks;
}

/// Elements of ring chunk `i` of `count` over `n` (count / n, the first
/// count % n one more): how a ring all-reduce cuts its buffer.
static int64_t ringChunk(int64_t count, int64_t n, int64_t i) {
  return count / n + (i < count % n ? 1 : 0);
}

std::optional<CollectiveBytes>
mlir::dtc::collectiveBytes(Operation *op, const int64_t sizes[3],
                           const int64_t coords[3]) {
  auto group = [&](ArrayAttr axes, CollectiveBytes &c) {
    c.groupSize = 1;
    c.position = 0;
    for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
      int a = axisIndex(axis);
      c.groupSize *= sizes[a];
      c.position = c.position * sizes[a] + coords[a];
      c.axes += (c.axes.empty() ? "" : "+") + axis.str();
    }
  };
  CollectiveBytes c;
  // An asynchronous collective sends what its synchronous form does (the
  // size of a future is its result's).
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  auto inBytes = [&] { return memory::byteSize(op->getOperand(0).getType()); };
  if (isa<dist::AllReduceOp, dist::AllReduceStartOp>(op)) {
    c.kind = CollectiveKind::AllReduce;
    group(axes, c);
    auto t = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t count = t.getNumElements(), n = c.groupSize, r = c.position;
    int64_t es = inBytes() / std::max<int64_t>(count, 1);
    if (n > 1)
      c.bytes = (2 * count - ringChunk(count, n, r) -
                 ringChunk(count, n, (r + 1) % n)) *
                es;
    c.tensorBytes = inBytes();
    return c;
  }
  if (isa<dist::ReduceScatterOp, dist::ReduceScatterStartOp>(op)) {
    c.kind = CollectiveKind::ReduceScatter;
    group(axes, c);
    c.bytes = (c.groupSize - 1) * memory::byteSize(op->getResult(0).getType());
    c.tensorBytes = inBytes();
    return c;
  }
  if (isa<dist::AllGatherOp, dist::AllGatherStartOp>(op)) {
    c.kind = CollectiveKind::AllGather;
    group(axes, c);
    c.bytes = (c.groupSize - 1) * inBytes();
    c.tensorBytes = memory::byteSize(op->getResult(0).getType());
    return c;
  }
  // A pipeline's transfer: the whole tensor, to one peer.
  if (auto send = dyn_cast<dist::SendOp>(op)) {
    Builder b(op->getContext());
    group(b.getStrArrayAttr({send.getMeshAxis()}), c);
    c.bytes = c.tensorBytes = memory::byteSize(send.getInput().getType());
    return c;
  }
  return std::nullopt;
}

/// The bytes one rank sends per step through each mesh-axis group: the
/// dist collectives of `func` and of the functions it calls (once per
/// call; each callee's bytes are counted once and kept in `callees`).
using AxisBytes = std::map<std::string, int64_t>;
static const AxisBytes &
commBytesPerStep(func::FuncOp func, const int64_t sizes[3],
                 const int64_t coords[3],
                 DenseMap<Operation *, AxisBytes> &callees) {
  auto it = callees.find(func);
  if (it != callees.end())
    return it->second;
  AxisBytes bytes;
  func.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          op, call.getCalleeAttr());
      if (callee)
        for (auto [key, b] : commBytesPerStep(callee, sizes, coords, callees))
          bytes[key] += b;
      return;
    }
    if (std::optional<CollectiveBytes> c = collectiveBytes(op, sizes, coords))
      if (c->bytes > 0)
        bytes[c->axes] += c->bytes;
  });
  return callees[func] = std::move(bytes);
}

/// The time of one step of a rank's program, as a simulation of its ops in
/// program order: kernels one after another on the device (the roofline of
/// estimateOpSeconds), collectives one after another on the rank's link
/// (estimateCollectiveSeconds over the slowest link of their group). A
/// synchronous collective stops the kernels until it ends; an asynchronous
/// one (dist.*_start) runs beside them, and its dist.wait stops them only
/// if it has not ended yet, except on a CPU host whose cores the ranks
/// fill (collectivesTakeKernelTime), where every collective stops them. A
/// dist.recv costs nothing here: the pipeline's
/// waits for other stages are its bubble, priced apart.
namespace {
struct StepTime {
  /// Kernels (recompute included), the replayed forward ops alone, the
  /// collectives' own time, and the part of it the kernels wait for.
  double compute = 0, recompute = 0, communication = 0, exposed = 0;
};

class StepSimulation {
public:
  StepSimulation(const DeviceProfile &profile, const int64_t sizes[3],
                 const int64_t coords[3])
      : profile(profile), sizes(sizes), coords(coords) {}

  StepTime run(func::FuncOp func) {
    visit(func);
    return time;
  }

private:
  /// How this rank's group over `axes` lies on the nodes (ranks are
  /// numbered tp fastest, then dp, then pp, and a node holds
  /// devicesPerNode consecutive ranks).
  GroupPlacement placementOf(StringRef axes) {
    auto it = placements.find(axes);
    if (it != placements.end())
      return it->second;
    SmallVector<StringRef> names;
    axes.split(names, '+');
    SmallVector<int64_t> ranks;
    int64_t c[3] = {coords[0], coords[1], coords[2]};
    // Every coordinate of the group's axes, the others this rank's.
    std::function<void(unsigned)> enumerate = [&](unsigned i) {
      if (i == names.size()) {
        ranks.push_back((c[0] * sizes[1] + c[1]) * sizes[2] + c[2]);
        return;
      }
      int a = axisIndex(names[i]);
      for (c[a] = 0; c[a] < sizes[a]; ++c[a])
        enumerate(i + 1);
      c[a] = coords[a];
    };
    enumerate(0);
    return placements[axes] = placeGroup(ranks, profile.devicesPerNode);
  }

  /// Seconds `op` keeps the link busy; nullopt if it is no collective. A
  /// group with several ranks in each of several nodes runs
  /// hierarchically; any other as one ring over the slowest link it
  /// crosses.
  std::optional<double> collectiveSeconds(Operation *op) {
    std::optional<CollectiveBytes> bytes = collectiveBytes(op, sizes, coords);
    if (!bytes)
      return std::nullopt;
    GroupPlacement where = placementOf(bytes->axes);
    if (bytes->kind != CollectiveKind::Send && where.isHierarchical())
      return estimateHierarchicalCollectiveSeconds(
          bytes->kind, where, double(bytes->tensorBytes), profile);
    return estimateCollectiveSeconds(
        bytes->kind, bytes->groupSize, double(bytes->bytes),
        groupLink(profile, where), profile.networkEfficiency);
  }

  void visit(func::FuncOp func) {
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal())
          visit(callee);
        continue;
      }
      if (auto wait = dyn_cast<dist::WaitOp>(op)) {
        auto it = done.find(op.getOperand(0));
        if (it != done.end() && it->second > now) {
          time.exposed += it->second - now;
          now = it->second;
        }
        continue;
      }
      if (isa<dist::RecvOp>(op))
        continue;
      if (std::optional<double> seconds = collectiveSeconds(&op)) {
        double start = std::max(now, linkFree);
        linkFree = start + *seconds;
        time.communication += *seconds;
        if (isa<dist::AllReduceStartOp, dist::AllGatherStartOp,
                dist::ReduceScatterStartOp>(op) &&
            !collectivesTakeKernelTime(profile)) {
          done[op.getResult(0)] = linkFree;
          continue;
        }
        time.exposed += linkFree - now;
        now = linkFree;
        continue;
      }
      double seconds = estimateOpSeconds(&op, profile);
      bool replayed = op.hasAttr("dtg.recompute");
      if (!replayed && op.getNumRegions())
        op.walk([&](Operation *inner) {
          replayed |= inner != &op && inner->hasAttr("dtg.recompute");
        });
      if (replayed)
        time.recompute += seconds;
      time.compute += seconds;
      now += seconds;
    }
  }

  const DeviceProfile &profile;
  const int64_t *sizes, *coords;
  StepTime time;
  /// The kernels' clock, the moment the link is next free, and when each
  /// asynchronous collective ends.
  double now = 0, linkFree = 0;
  DenseMap<Value, double> done;
  llvm::StringMap<GroupPlacement> placements;
};
} // namespace

llvm::json::Value mlir::dtc::buildPlanJson(ModuleOp module,
                                           int64_t kernelsBeforeFusion,
                                           int64_t kernelsAfterFusion,
                                           const DeviceProfile *profile,
                                           int64_t stage) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto micro = module.lookupSymbol<func::FuncOp>("micro_step");
  auto intAttr = [&](StringRef key) {
    auto a = module->getAttrOfType<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  int64_t globalBatch = intAttr("dtc.global_batch");
  // Set by dtc-mixed-precision; fp32 without it.
  auto precisionAttr = module->getAttrOfType<StringAttr>("dtc.precision");
  std::string precision = precisionAttr ? precisionAttr.str() : "fp32";
  int64_t microBatch = intAttr("dtc.micro_batch");

  // The mesh this is one rank's program of (dtc-partition-data-parallel).
  std::array<int64_t, 3> meshSizes = dist::getStandardMeshSizes(module);
  int64_t dp = meshSizes[1];
  int64_t zero = intAttr("dtc.zero");
  // Names of the parameters whose optimizer state is held in blocks.
  llvm::StringSet<> splitState;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (argRole(step, i) == "optimizer_state" &&
        step.getArgAttr(i, "dtc.sharding"))
      splitState.insert(argName(step, i).rsplit('.').first);

  int64_t params = 0, state = 0, opt = 0, inputs = 0, other = 0, results = 0,
          gradients = 0, parametersTotal = 0, constants = 0;
  Array tensors;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    Type type = step.getArgument(i).getType();
    int64_t bytes = memory::byteSize(type);
    StringRef role = argRole(step, i);
    if (role == "parameter") {
      params += bytes;
      if (step.getArgAttr(i, "dtg.trainable")) {
        // ZeRO 2 and 3 accumulate the blocks of the gradients they
        // reduce-scatter. (Under ZeRO 3 the argument is itself a block over
        // dp; a tensor-parallel slice is the rank's whole gradient.)
        int64_t whole = bytes * blocksOf(step, i, meshSizes.data(), "dp");
        gradients += zero >= 2 && splitState.contains(argName(step, i))
                         ? whole / dp
                         : whole;
        parametersTotal += cast<RankedTensorType>(type).getNumElements() *
                           blocksOf(step, i, meshSizes.data());
      }
    } else if (role == "constant") {
      constants += bytes;
    } else if (role == "state") {
      state += bytes;
    } else if (role == "optimizer_state") {
      opt += bytes;
    } else if (role == "input") {
      inputs += bytes;
    } else {
      other += bytes;
    }
    auto t = cast<RankedTensorType>(type);
    std::string dtype;
    llvm::raw_string_ostream(dtype) << t.getElementType();
    tensors.push_back(Object{{"name", argName(step, i)},
                             {"role", role},
                             {"shape", Array(t.getShape())},
                             {"dtype", dtype},
                             {"sharding", shardingText(step, i)}});
  }
  // A result written over its argument (donated) takes no buffer of its own.
  results += memory::ownResultBytes(step);
  int64_t inPlace = 0;
  for (unsigned i = 0; i < step.getNumResults(); ++i)
    inPlace += step.getResultAttr(i, memory::kDonatedArg) ? 1 : 0;
  auto undonatedAttr = step->getAttrOfType<IntegerAttr>(memory::kUndonated);
  int64_t undonated = undonatedAttr ? undonatedAttr.getInt() : 0;
  // The forward-only step (--eval-data) shares the arguments and the arena.
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  if (eval)
    for (Type t : eval.getResultTypes())
      results += memory::byteSize(t);
  int64_t arena = std::max(arenaOf(step), arenaOf(eval));

  // What the forward saves for the backward: in @micro_step, or in
  // @train_step where communication scheduling inlined the only (or last)
  // micro-step.
  Array saved;
  int64_t savedBytes = 0;
  // A pipeline stage's step calls a forward and a backward per
  // micro-batch (dtc.pipeline_op "F", "B"): what it saves is what a
  // backward reads of its forward's inputs (the activation received, the
  // micro-batch's data) and results, each held from where it is made to
  // the last backward that reads it, as many micro-batches at once as the
  // schedule has in flight.
  int64_t stashPeak = 0;
  bool pipelined = false;
  if (!micro) {
    auto isCall = [](Operation *op, StringRef kind) {
      auto attr = op->getAttrOfType<StringAttr>("dtc.pipeline_op");
      return isa<func::CallOp>(op) && attr && attr.getValue() == kind;
    };
    Block &body = step.getBody().front();
    llvm::DenseMap<Operation *, int64_t> position;
    for (Operation &op : body)
      position[&op] = int64_t(position.size());
    // Each stashed value and the last backward that reads it.
    llvm::MapVector<Value, Operation *> stash;
    for (Operation &op : body) {
      if (!isCall(&op, "F"))
        continue;
      pipelined = true;
      auto callee =
          module.lookupSymbol<func::FuncOp>(cast<func::CallOp>(op).getCallee());
      auto microBatch = op.getAttrOfType<IntegerAttr>("dtc.micro_batch");
      SmallVector<Value> values;
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp();
            def && !isa<dtg::ConstantOp>(def))
          values.push_back(v);
      llvm::append_range(values, op.getResults());
      for (Value v : values) {
        Operation *last = nullptr;
        for (Operation *user : v.getUsers())
          if (isCall(user, "B") && (!last || position[user] > position[last]))
            last = user;
        if (!last || !stash.insert({v, last}).second)
          continue;
        if (!microBatch || microBatch.getInt() != 0)
          continue;
        // One micro-batch's (every chunk's forward of micro-batch 0),
        // named by the op that makes it (in the forward, for a result).
        int64_t bytes = memory::byteSize(v.getType());
        savedBytes += bytes;
        Operation *def = v.getDefiningOp();
        if (def == &op)
          def = callee ? callee.getBody()
                             .front()
                             .getTerminator()
                             ->getOperand(cast<OpResult>(v).getResultNumber())
                             .getDefiningOp()
                       : nullptr;
        saved.push_back(Object{
            {"tensor", def ? def->getName().getStringRef() : "func.call"},
            {"onnx_node", def ? onnxNodeName(def->getLoc()) : ""},
            {"bytes", bytes}});
      }
    }
    // Bytes freed at each op, and the running total.
    llvm::DenseMap<Operation *, int64_t> freed;
    for (auto [v, last] : stash)
      freed[last] += memory::byteSize(v.getType());
    int64_t live = 0;
    for (Operation &op : body) {
      live -= freed.lookup(&op);
      for (Value r : op.getResults())
        if (stash.count(r))
          live += memory::byteSize(r.getType());
      stashPeak = std::max(stashPeak, live);
    }
  }
  func::FuncOp forward = micro ? micro : step;
  for (Operation &op : forward.getBody().front().without_terminator()) {
    if (pipelined)
      break;
    if (op.hasAttr("dtg.backward") || isa<dtg::ConstantOp, dtg::ReshapeOp>(op))
      continue;
    for (Value v : op.getResults()) {
      bool usedByBackward = false;
      SmallVector<Value> worklist{v};
      while (!worklist.empty() && !usedByBackward) {
        Value w = worklist.pop_back_val();
        for (Operation *user : w.getUsers()) {
          if (isa<dtg::ReshapeOp>(user) && !user->hasAttr("dtg.backward"))
            worklist.push_back(user->getResult(0));
          else if (user->hasAttr("dtg.backward"))
            usedByBackward = true;
        }
      }
      if (!usedByBackward)
        continue;
      int64_t bytes = memory::byteSize(v.getType());
      savedBytes += bytes;
      saved.push_back(Object{{"tensor", op.getName().getStringRef()},
                             {"onnx_node", onnxNodeName(op.getLoc())},
                             {"bytes", bytes}});
    }
  }
  // The micro-step's arena holds its activations; an inlined micro-step's
  // share of the step's arena is what it saves; a pipeline stage holds its
  // stash at its fullest.
  int64_t activations = micro       ? arenaOf(micro)
                        : pipelined ? stashPeak
                                    : savedBytes;
  int64_t workspace = std::max<int64_t>(0, arena - activations - gradients);

  // Model FLOPs leave out the forward ops that recompute replays (marked
  // dtg.recompute, passes/Recompute); flops_per_step_all counts them.
  double flops = sumKernelOps(step, [](Operation *op) {
    if (op->hasAttr("dtg.recompute"))
      return 0.0;
    if (op->getNumRegions() == 0)
      return estimateModelFlops(op);
    // A fused kernel: its ops that recompute did not add.
    double f = 0;
    op->walk([&](Operation *inner) {
      if (inner != op && inner->getNumRegions() == 0 &&
          !inner->hasAttr("dtg.recompute"))
        f += estimateModelFlops(inner);
    });
    return f;
  });
  // Per rank so far; the step's model FLOPs are every rank's of the stage.
  double rankFlops = flops;
  // The stage's ranks: dp copies of tp slices (a tensor-parallel rank
  // computes its slice of each split contraction).
  double stageRanks = double(dp * meshSizes[2]);
  flops *= stageRanks;
  double flopsAll = stageRanks * sumKernelOps(step, [](Operation *op) {
                      return estimateOpCost(op).flops;
                    });
  DeviceProfile fallback;
  if (!profile) {
    std::string error;
    fallback = *loadDeviceProfile("cpu", error);
    profile = &fallback;
  }
  // Rank 0's step (the ranks of a stage run the same program; their
  // groups can cross nodes differently, which rank 0 stands for).
  int64_t origin[3] = {0, 0, 0};
  StepTime time = StepSimulation(*profile, meshSizes.data(), origin).run(step);
  double stepTime = time.compute + time.exposed;
  Object predicted{
      {"device_profile", profile->name},
      {"step_time_s", stepTime},
      {"compute_s", time.compute},
      {"recompute_s", time.recompute},
      {"communication_s", time.communication},
      {"exposed_communication_s", time.exposed},
      {"bubble_s", 0.0},
      {"samples_per_s", stepTime > 0 ? double(globalBatch) / stepTime : 0.0},
      {"mfu", stepTime > 0 ? rankFlops / stepTime /
                                 peakGemmFlopsFor(*profile,
                                                  precision == "fp32" ? 32 : 16)
                           : 0.0},
      {"bubble_fraction", 0.0}};

  // What passes/Recompute chose: its clones carry dtg.recompute.
  auto recomputeMode = module->getAttrOfType<StringAttr>("dtc.recompute");
  Object recompute{
      {"mode", recomputeMode ? recomputeMode.getValue() : "none"},
      {"recomputed_ops", sumOps(step,
                                [](Operation *op) {
                                  return op->hasAttr("dtg.recompute") ? 1.0
                                                                      : 0.0;
                                })},
      {"recomputed_flops", sumOps(step, [](Operation *op) {
         return op->hasAttr("dtg.recompute") ? estimateOpCost(op).flops : 0.0;
       })}};

  int64_t peak =
      params + state + constants + opt + inputs + other + results + arena;
  Object memoryBytes{{"parameters", params + state},
                     {"gradients", gradients},
                     {"optimizer_state", opt},
                     {"constants", constants},
                     {"activations", activations},
                     {"saved_activations", savedBytes},
                     {"workspace", workspace},
                     {"inputs", inputs + other},
                     {"outputs", results},
                     {"arena", arena},
                     {"peak", peak}};
  // Every rank runs the same program (data parallelism): the same memory,
  // and bytes that depend only on its position in each group.
  Array ranks;
  int64_t numRanks = meshSizes[0] * meshSizes[1] * meshSizes[2];
  for (int64_t r = 0; r < numRanks; ++r) {
    int64_t coords[3] = {r / (meshSizes[1] * meshSizes[2]),
                         r / meshSizes[2] % meshSizes[1], r % meshSizes[2]};
    if (stage >= 0 && coords[0] != stage)
      continue;
    Object comm{{"dp", 0}, {"tp", 0}, {"pp", 0}};
    DenseMap<Operation *, AxisBytes> callees;
    for (auto [axes, bytes] :
         commBytesPerStep(step, meshSizes.data(), coords, callees))
      comm[axes] = bytes;
    ranks.push_back(Object{
        {"rank", r},
        {"coords",
         Object{{"dp", coords[1]}, {"tp", coords[2]}, {"pp", coords[0]}}},
        {"stage", coords[0]},
        {"memory_bytes", Object(memoryBytes)},
        // Carried state written over its arguments, and carried
        // results that keep a buffer of their own (a second copy).
        {"state_in_place", Object{{"results", inPlace}, {"copied", undonated}}},
        {"saved_activations", Array(saved)},
        {"comm_bytes_per_step", std::move(comm)}});
  }
  int64_t microBatches =
      microBatch ? globalBatch / std::max<int64_t>(dp, 1) / microBatch : 0;
  return Object{{"mesh", Object{{"dp", meshSizes[1]},
                                {"tp", meshSizes[2]},
                                {"pp", meshSizes[0]}}},
                {"precision", precision},
                {"zero", zero},
                {"schedule", "none"},
                {"global_batch", globalBatch},
                {"micro_batch", microBatch},
                {"micro_batches", microBatches},
                {"parameters_total", parametersTotal},
                {"flops_per_step", flops},
                {"flops_per_step_all", flopsAll},
                {"recompute", std::move(recompute)},
                {"predicted", std::move(predicted)},
                {"ranks", std::move(ranks)},
                {"kernels", Object{{"before_fusion", kernelsBeforeFusion},
                                   {"after_fusion", kernelsAfterFusion}}},
                {"tensors", std::move(tensors)}};
}
