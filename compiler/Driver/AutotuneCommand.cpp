//===- AutotuneCommand.cpp - `dtc autotune` and `--mesh auto` -------------===//
//
// Sweeps the layouts of --devices N: every factorization dp x tp x pp, ZeRO
// stage, recompute, micro-batch, pipeline schedule and sequence
// parallelism. Drops analytically what cannot hold its model states, prices
// the rest per layer (compiler/Plan/Autotune.h: proxies of the model cut to
// one and two of its repeated layers, planned once per distinct layer
// configuration (tp, sequence parallelism, recompute) and scaled), plans
// the best few whole to confirm them, and prints the top as a table. The
// winner is the fastest plan confirmed to fit.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"
#include "compiler/Plan/Autotune.h"
#include "compiler/Plan/LayerCut.h"
#include "compiler/Plan/PlanReport.h"
#include "compiler/Support/ChildProcess.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::dtc;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A progress bar on stderr when it is a terminal.
class Progress {
public:
  Progress(StringRef what, size_t total, bool show)
      : what(what.str()), total(total),
        show(show && llvm::errs().is_displayed()) {}
  void step() {
    ++done;
    if (!show)
      return;
    size_t width = 30, filled = total ? done * width / total : width;
    llvm::errs() << "\r" << what << " [" << std::string(filled, '#')
                 << std::string(width - filled, ' ') << "] " << done << "/"
                 << total;
    if (done == total)
      llvm::errs() << "\n";
  }

private:
  std::string what;
  size_t total, done = 0;
  bool show;
};

/// What a proxy plan gives: the figures split over layers and
/// micro-batches.
struct ProxyFigures {
  double seconds = 0, flops = 0, params = 0, gradients = 0, optimizer = 0,
         saved = 0, workspace = 0, inputs = 0;
};

std::optional<ProxyFigures> figuresOf(const llvm::json::Object &plan,
                                      int64_t tp) {
  const llvm::json::Array *ranks = plan.getArray("ranks");
  const llvm::json::Object *predicted = plan.getObject("predicted");
  if (!ranks || ranks->empty() || !predicted)
    return std::nullopt;
  const llvm::json::Object *memory =
      (*ranks)[0].getAsObject()->getObject("memory_bytes");
  if (!memory)
    return std::nullopt;
  auto num = [](const llvm::json::Object *o, StringRef key) {
    return o->getNumber(key).value_or(0);
  };
  ProxyFigures f;
  f.seconds =
      num(predicted, "compute_s") + num(predicted, "exposed_communication_s");
  f.flops = num(&plan, "flops_per_step") / double(tp);
  f.params = num(memory, "parameters");
  f.gradients = num(memory, "gradients");
  f.optimizer = num(memory, "optimizer_state");
  f.saved = num(memory, "saved_activations");
  f.workspace = num(memory, "workspace");
  f.inputs = num(memory, "inputs") + num(memory, "outputs");
  return f;
}

/// Plans `cmd` whole in a child process that may take at most `seconds`
/// (a whole plan of a large model can take minutes): the plan, or nullopt
/// with `error` saying why.
std::optional<llvm::json::Value>
planWithin(CompileCommandOptions cmd, double seconds, std::string &error) {
  ChildOutcome child = runInChild(
      [&] {
        llvm::json::Value plan = nullptr;
        std::string childError;
        cmd.planResult = &plan;
        cmd.firstError = &childError;
        int rc = runCompileCommand(cmd);
        return rc == 0 && plan.getAsObject()
                   ? llvm::formatv("{0}", plan).str()
                   : "!" + (childError.empty() ? std::string("it does not plan")
                                               : childError);
      },
      seconds);
  if (!child.error.empty()) {
    error = child.error;
    return std::nullopt;
  }
  const std::string &text = child.output;
  if (child.timedOut) {
    error = llvm::formatv("planning it whole takes longer than the {0:f0} s "
                          "left of --confirm-seconds",
                          seconds)
                .str();
    return std::nullopt;
  }
  if (text.empty() || text[0] == '!') {
    error = text.empty() ? "the planner ended without a plan" : text.substr(1);
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    error = "the planner's plan.json does not parse";
    return std::nullopt;
  }
  return std::move(*parsed);
}

/// A layer configuration: what changes the plan of one layer.
using LayerKey = std::tuple<int64_t, bool, std::string>;

struct Tuner {
  const AutotuneCommandOptions &options;
  const CompileCommandOptions &base;
  DeviceProfile profile;
  double limit = 0;
  std::string limitSource;
  unsigned bits = 32;

  int64_t layers = 0;
  std::optional<RepeatedLayers> repeated;
  /// The proxies: the model with one and with two layers (or the whole
  /// model, if it repeats none).
  std::string proxyOne, proxyTwo;
  double parameters = 0;

  std::map<LayerKey, std::optional<LayerCosts>> costs;
  std::map<LayerKey, std::string> costErrors;
  int64_t proxyPlans = 0;

  Tuner(const AutotuneCommandOptions &options)
      : options(options), base(options.compile) {}

  /// Plans `source` on 1 x tp x 1 with `micro` micro-batches of 1.
  std::optional<ProxyFigures> planProxy(const std::string &source,
                                        const LayerKey &key, int64_t micro,
                                        std::string &error) {
    auto [tp, sp, recompute] = key;
    CompileCommandOptions cmd = base;
    cmd.mesh = "1x" + std::to_string(tp) + "x1";
    cmd.devices = 0;
    cmd.globalBatch = micro;
    cmd.microBatch = 1;
    cmd.zero = 0;
    cmd.schedule.clear();
    cmd.virtualStages = 0;
    cmd.recompute = recompute;
    cmd.sequenceParallel = sp;
    cmd.planOnly = true;
    cmd.quiet = true;
    cmd.explain = false;
    cmd.timing = false;
    cmd.moduleSource = source;
    cmd.firstError = &error;
    llvm::json::Value plan = nullptr;
    cmd.planResult = &plan;
    ++proxyPlans;
    if (runCompileCommand(cmd) != 0 || !plan.getAsObject()) {
      if (error.empty())
        error = "it does not plan";
      return std::nullopt;
    }
    return figuresOf(*plan.getAsObject(), tp);
  }

  /// The per-layer costs of `key` from its four proxy plans (two if the
  /// model repeats no layer).
  void measure(const LayerKey &key) {
    std::string error;
    std::optional<ProxyFigures> x11, x21, x12, x22;
    x11 = planProxy(proxyOne, key, 1, error);
    if (x11 && layers > 0)
      x21 = planProxy(proxyTwo, key, 1, error);
    if (x11 && (x21 || layers == 0))
      x12 = planProxy(proxyOne, key, 2, error);
    if (x12 && layers > 0)
      x22 = planProxy(proxyTwo, key, 2, error);
    if (!x11 || !x12 || (layers > 0 && (!x21 || !x22))) {
      costs[key] = std::nullopt;
      costErrors[key] = error;
      return;
    }
    if (layers == 0) {
      // The whole model is "the rest": no layer to scale.
      x21 = x11;
      x22 = x12;
    }
    auto split = [&](double ProxyFigures::*field) {
      return LayerSplit::fromGrid((*x11).*field, (*x21).*field, (*x12).*field,
                                  (*x22).*field);
    };
    LayerCosts c;
    c.seconds = split(&ProxyFigures::seconds);
    c.flops = split(&ProxyFigures::flops);
    auto perLayer = [&](double ProxyFigures::*field, double &layer,
                        double &rest) {
      layer = layers > 0 ? (*x21).*field - (*x11).*field : 0;
      rest = (*x11).*field - layer;
    };
    perLayer(&ProxyFigures::params, c.layerParams, c.restParams);
    perLayer(&ProxyFigures::gradients, c.layerGradients, c.restGradients);
    perLayer(&ProxyFigures::optimizer, c.layerOptimizer, c.restOptimizer);
    perLayer(&ProxyFigures::saved, c.layerSaved, c.restSaved);
    for (int accumulating : {0, 1}) {
      const ProxyFigures &one = accumulating ? *x12 : *x11;
      const ProxyFigures &two = accumulating ? *x22 : *x21;
      c.layerWorkspace[accumulating] =
          layers > 0 ? two.workspace - one.workspace : 0;
      c.restWorkspace[accumulating] =
          one.workspace - c.layerWorkspace[accumulating];
    }
    c.inputs = x11->inputs;
    c.carriedBytes = repeated ? double(repeated->carriedBytes) : 0;
    costs[key] = c;
  }

  /// Imports the model (one sample per micro-batch, weights not needed)
  /// and writes its proxies; false after an error.
  bool prepare() {
    MLIRContext context;
    context.disableMultithreading();
    DriverDiagnostics diagnostics(&context, /*print=*/true);
    ShapeOptions shapes = base.shapes;
    shapes.batch = 1;
    ImportOptions importOptions;
    if (!parseShapeOptions(shapes, importOptions))
      return false;
    importOptions.requireWeights = false;
    FailureOr<OwningOpRef<ModuleOp>> module =
        importAndClean(&context, base.model, importOptions);
    if (failed(module))
      return false;
    auto main = (*module)->lookupSymbol<func::FuncOp>("main");
    if (!main) {
      reportError(base.model + ": the model has no main graph");
      return false;
    }
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      main.removeArgAttr(i, StringAttr::get(&context, attrs::kInitial));
      auto role = main.getArgAttrOfType<StringAttr>(i, attrs::kRole);
      if (role && role.getValue() == "parameter")
        parameters +=
            double(cast<RankedTensorType>(main.getArgument(i).getType())
                       .getNumElements());
    }
    repeated = findRepeatedLayers(main);
    layers = repeated ? repeated->count : 0;
    auto print = [&](ModuleOp m) {
      std::string text;
      llvm::raw_string_ostream os(text);
      m.print(os, OpPrintingFlags().enableDebugInfo());
      return text;
    };
    if (!repeated) {
      proxyOne = print(**module);
      return true;
    }
    for (int64_t keep : {1, 2}) {
      OwningOpRef<ModuleOp> proxy = (*module)->clone();
      auto proxyMain = proxy->lookupSymbol<func::FuncOp>("main");
      if (failed(keepLayers(proxyMain, *repeated, keep))) {
        // The layers do not cut cleanly: price the model whole.
        repeated.reset();
        layers = 0;
        proxyOne = print(**module);
        return true;
      }
      (keep == 1 ? proxyOne : proxyTwo) = print(*proxy);
    }
    return true;
  }

  /// A lower bound of a rank's model-state bytes (parameters, gradients,
  /// optimizer state as ZeRO shares them), from the parameter count.
  double stateLowerBound(const AutotuneCandidate &c) const {
    double perRank = parameters / double(c.tp * c.pp);
    double param = 4, grad = 4, opt = 0;
    const BuildTrainStepPassOptions &t = base.training;
    if (t.optimizer == "adamw")
      opt = 8;
    else if (t.momentum != 0)
      opt = 4;
    if (!t.freeze.empty())
      grad = opt = 0; // frozen parameters hold neither
    double dp = double(c.dp);
    if (c.zero >= 1)
      opt /= dp;
    if (c.zero >= 2)
      grad /= dp;
    if (c.zero >= 3)
      param /= dp;
    return perRank * (param + grad + opt);
  }
};

/// `base` laid out as `c` (the flags of c.flags()).
CompileCommandOptions withCandidate(const CompileCommandOptions &base,
                                    const AutotuneCandidate &c) {
  CompileCommandOptions cmd = base;
  cmd.mesh = llvm::formatv("{0}x{1}x{2}", c.dp, c.tp, c.pp).str();
  cmd.devices = 0;
  cmd.zero = c.zero;
  cmd.recompute = c.recompute;
  cmd.microBatch = c.microBatch;
  cmd.schedule = c.schedule == "none" ? "" : c.schedule;
  cmd.virtualStages = c.schedule == "interleaved" ? c.virtualStages : 0;
  cmd.sequenceParallel = c.sequenceParallel;
  return cmd;
}

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

std::string gibText(double bytes) {
  return llvm::formatv("{0:f2} GiB", bytes / double(1ull << 30)).str();
}
} // namespace

int mlir::dtc::runAutotuneCommand(const AutotuneCommandOptions &options,
                                  CompileCommandOptions *best) {
  const CompileCommandOptions &base = options.compile;
  auto start = Clock::now();
  int64_t devices = base.devices;
  if (devices <= 0)
    return reportError("autotune needs --devices N, the number of devices "
                       "to lay the model out on");
  if (base.globalBatch <= 0)
    return reportError("--global-batch must be a positive integer");
  if (options.fixedRecompute && base.recompute == "auto")
    return reportError("autotune sweeps recompute: give none, selective or "
                       "full to hold it fixed, not auto");
  if (options.top < 1 || options.confirm < 0)
    return reportError("--top expects a positive number and --confirm one "
                       "of 0 or more");
  Tuner tuner(options);
  std::string profileError;
  FailureOr<DeviceProfile> profile =
      loadDeviceProfile(base.deviceProfile, profileError);
  if (failed(profile))
    return reportError("--device-profile: " + profileError);
  tuner.profile = *profile;
  tuner.limit = base.memoryLimitGiB * double(1 << 30);
  tuner.limitSource = "--memory-limit";
  if (tuner.limit <= 0) {
    tuner.limit = profile->memoryCapacity;
    tuner.limitSource = profile->name + "'s memory";
  }
  tuner.bits = base.precision.precision == "fp32" ? 32 : 16;
  if (!tuner.prepare())
    return 1;
  int64_t layers = tuner.layers;

  // Every candidate.
  std::vector<AutotuneCandidate> all;
  for (int64_t tp : divisorsOf(devices))
    for (int64_t pp : divisorsOf(devices / tp)) {
      int64_t dp = devices / tp / pp;
      if (base.globalBatch % dp != 0 || pp > std::max<int64_t>(layers, 1))
        continue;
      int64_t local = base.globalBatch / dp;
      std::vector<int64_t> micros;
      if (options.fixedMicroBatch) {
        if (local % base.microBatch == 0)
          micros.push_back(base.microBatch);
      } else {
        for (int64_t b = 1; b <= local; b *= 2)
          if (local % b == 0)
            micros.push_back(b);
        if (micros.back() != local)
          micros.push_back(local);
      }
      std::vector<std::pair<std::string, int64_t>> schedules;
      if (pp == 1) {
        schedules.push_back({"none", 1});
      } else if (options.fixedSchedule) {
        schedules.push_back({base.schedule, base.schedule == "interleaved"
                                                ? base.virtualStages
                                                : 1});
      } else {
        schedules = {{"1f1b", 1}, {"gpipe", 1}, {"interleaved", 2}};
      }
      std::vector<int64_t> zeros;
      if (options.fixedZero)
        zeros.push_back(base.zero);
      else
        for (int64_t z = 0; z <= (dp > 1 ? 3 : 0); ++z)
          zeros.push_back(z);
      std::vector<std::string> recomputes =
          options.fixedRecompute
              ? std::vector<std::string>{base.recompute}
              : std::vector<std::string>{"none", "selective", "full"};
      std::vector<bool> sps;
      if (options.fixedSequenceParallel)
        sps.push_back(true);
      else if (tp > 1)
        sps = {false, true};
      else
        sps = {false};
      for (int64_t b : micros)
        for (auto [schedule, v] : schedules) {
          int64_t m = local / b;
          if (schedule == "interleaved" &&
              (m % pp != 0 || v < 2 || layers % (pp * v) != 0))
            continue;
          for (int64_t z : zeros)
            for (const std::string &r : recomputes)
              for (bool sp : sps) {
                if (sp && tp == 1)
                  continue;
                AutotuneCandidate c;
                c.dp = dp;
                c.tp = tp;
                c.pp = pp;
                c.zero = z;
                c.recompute = r;
                c.microBatch = b;
                c.microBatches = m;
                c.schedule = schedule;
                c.virtualStages = v;
                c.sequenceParallel = sp;
                all.push_back(c);
              }
        }
    }
  if (all.empty())
    return reportError(llvm::formatv(
        "no layout of {0} devices suits the model: dp must divide "
        "--global-batch {1}{2}, pp can be at most the model's {3} repeated "
        "layers{4}",
        devices, base.globalBatch,
        options.fixedMicroBatch
            ? " and a data-parallel rank's share must be a multiple of "
              "--micro-batch " +
                  std::to_string(base.microBatch)
            : std::string(),
        layers,
        options.fixedSchedule
            ? " (and --schedule " + base.schedule + " must suit it)"
            : std::string()));

  // Analytical pruning, then the proxies of what is left.
  int64_t heldBack = 0, refused = 0;
  for (AutotuneCandidate &c : all) {
    if (c.pp > 1 && c.zero >= 2) {
      // Inside a pipeline ZeRO 2 and 3 reduce-scatter every micro-batch's
      // gradients (and keep each in flight to the step's end): DeepSpeed
      // refuses the pairing; not worth pricing.
      c.pruned = "ZeRO 2 and 3 inside a pipeline reduce-scatter the "
                 "gradients of every micro-batch";
      ++refused;
      continue;
    }
    double bound = tuner.stateLowerBound(c);
    if (tuner.limit > 0 && bound > tuner.limit) {
      c.pruned = "model states alone need " + gibText(bound);
      ++heldBack;
    }
  }
  std::vector<LayerKey> keys;
  for (const AutotuneCandidate &c : all)
    if (c.pruned.empty()) {
      LayerKey key{c.tp, c.sequenceParallel, c.recompute};
      if (!llvm::is_contained(keys, key))
        keys.push_back(key);
    }
  llvm::sort(keys);
  auto proxyStart = Clock::now();
  Progress progress("dtc autotune: planning layer configurations", keys.size(),
                    !options.brief);
  for (const LayerKey &key : keys) {
    tuner.measure(key);
    progress.step();
  }
  double proxySeconds = secondsSince(proxyStart);

  int64_t unplannable = 0, over = 0, fitting = 0;
  for (AutotuneCandidate &c : all) {
    if (!c.pruned.empty())
      continue;
    LayerKey key{c.tp, c.sequenceParallel, c.recompute};
    const std::optional<LayerCosts> &cost = tuner.costs[key];
    if (!cost) {
      c.pruned = llvm::formatv("tp={0}{1}, recompute {2}: {3}", c.tp,
                               c.sequenceParallel ? " sequence-parallel" : "",
                               c.recompute, tuner.costErrors[key])
                     .str();
      ++unplannable;
      continue;
    }
    priceCandidate(c, *cost, layers, tuner.profile, tuner.limit, tuner.bits);
    (c.fits ? fitting : over) += 1;
  }

  // Fastest first (ties: the smaller peak, then the flags, so that the
  // order is the same on every run).
  std::vector<const AutotuneCandidate *> ranked;
  for (const AutotuneCandidate &c : all)
    if (c.pruned.empty())
      ranked.push_back(&c);
  llvm::stable_sort(ranked,
                    [](const AutotuneCandidate *a, const AutotuneCandidate *b) {
                      if (a->fits != b->fits)
                        return a->fits;
                      if (a->stepSeconds != b->stepSeconds)
                        return a->stepSeconds < b->stepSeconds;
                      if (a->peakBytes != b->peakBytes)
                        return a->peakBytes < b->peakBytes;
                      return a->flags() < b->flags();
                    });

  // Confirm the best few on the whole model; the winner is the fastest
  // confirmed to fit. While none of those planned whole fits, the next
  // best are planned too (the estimate's peak can fall short of the whole
  // plan's), within --confirm-seconds and three times --confirm.
  auto confirmStart = Clock::now();
  const AutotuneCandidate *winner = nullptr;
  int64_t confirmed = 0, tried = 0;
  std::vector<const AutotuneCandidate *> failedConfirm;
  bool outOfTime = false;
  for (const AutotuneCandidate *cp : ranked) {
    if (!cp->fits || options.confirm == 0 ||
        (confirmed >= options.confirm && winner) ||
        tried >= 3 * options.confirm)
      break;
    if (options.confirmSeconds > 0 &&
        secondsSince(confirmStart) >= options.confirmSeconds) {
      outOfTime = true;
      break;
    }
    auto &c = const_cast<AutotuneCandidate &>(*cp);
    ++tried;
    CompileCommandOptions cmd = withCandidate(base, c);
    cmd.planOnly = true;
    cmd.quiet = true;
    cmd.explain = false;
    cmd.timing = false;
    std::string error;
    double left = options.confirmSeconds > 0
                      ? options.confirmSeconds - secondsSince(confirmStart)
                      : 0;
    std::optional<llvm::json::Value> plan = planWithin(cmd, left, error);
    if (!plan || !plan->getAsObject()) {
      c.confirmError = error;
      failedConfirm.push_back(&c);
      continue;
    }
    const llvm::json::Object &o = *plan->getAsObject();
    PlanFit fit = checkPlanFit(o, tuner.limit);
    const llvm::json::Object *predicted = o.getObject("predicted");
    c.confirmed = true;
    ++confirmed;
    c.confirmedPeakBytes = fit.peakBytes;
    c.confirmedFits = fit.fits();
    c.confirmedSeconds = predicted->getNumber("step_time_s").value_or(0);
    c.confirmedMfu = predicted->getNumber("mfu").value_or(0);
    c.confirmedComputeSeconds = predicted->getNumber("compute_s").value_or(0);
    c.confirmedBubbleSeconds = predicted->getNumber("bubble_s").value_or(0);
    c.confirmedExposedSeconds =
        predicted->getNumber("exposed_communication_s").value_or(0);
    if (c.confirmedFits &&
        (!winner || c.confirmedSeconds < winner->confirmedSeconds))
      winner = &c;
  }
  // Nothing planned whole (none asked, out of time, or the whole plans
  // failed): the best estimate, said so.
  bool estimateOnly = false;
  if (!winner && confirmed == 0 && !ranked.empty() && ranked.front()->fits) {
    for (const AutotuneCandidate *c : ranked)
      if (c->fits && c->confirmError.empty()) {
        winner = c;
        break;
      }
    estimateOnly = winner != nullptr;
  }
  double confirmSeconds = secondsSince(confirmStart);

  // Files: every candidate, and the plot.
  if (!options.csv.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.csv, ec);
    if (ec)
      return reportError("cannot write '" + options.csv + "': " + ec.message());
    printAutotuneCsv(all, os);
  }
  if (!options.svg.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.svg, ec);
    if (ec)
      return reportError("cannot write '" + options.svg + "': " + ec.message());
    printAutotuneSvg(all, winner, tuner.limit,
                     llvm::formatv("{0} on {1} x {2}: predicted step time "
                                   "against peak memory",
                                   llvm::sys::path::filename(base.model),
                                   devices, tuner.profile.name)
                         .str(),
                     os);
  }

  llvm::raw_ostream &os = options.brief ? llvm::errs() : llvm::outs();
  if (!options.brief) {
    os << llvm::formatv("dtc autotune: {0} on {1} devices of {2}, memory "
                        "limit {3} ({4}), global batch {5}, {6}\n",
                        base.model, devices, tuner.profile.name,
                        gibText(tuner.limit), tuner.limitSource,
                        base.globalBatch, base.precision.precision);
    if (tuner.repeated)
      os << llvm::formatv("  model: {0:f3} G parameters; {1} repeated layers "
                          "of {2} ops, priced per layer from proxies of 1 "
                          "and 2 layers\n",
                          tuner.parameters / 1e9, layers,
                          tuner.repeated->period);
    else
      os << llvm::formatv("  model: {0:f3} G parameters; no repeated layers "
                          "found: priced whole, without pipeline stages\n",
                          tuner.parameters / 1e9);
    os << llvm::formatv(
        "  candidates: {0}; {1} not swept (ZeRO 2/3 with pp > 1), {2} cannot "
        "hold their model states, {3} do not plan, {4} over the memory "
        "limit, {5} fit\n",
        all.size(), refused, heldBack, unplannable, over, fitting);
    os << llvm::formatv("  layer configurations: {0} ({1} proxy plans, "
                        "{2:f1} s); whole-model plans: {3} ({4:f1} s)\n",
                        keys.size(), tuner.proxyPlans, proxySeconds, confirmed,
                        confirmSeconds);
    os << "\n";
    printAutotuneTable(ranked, size_t(options.top), os);
    for (const AutotuneCandidate *c : failedConfirm)
      os << "  not planned whole: " << c->flags() << ": " << c->confirmError
         << "\n";
    if (outOfTime)
      os << llvm::formatv("  planned {0} whole within --confirm-seconds "
                          "{1}; the rest are estimates\n",
                          confirmed, options.confirmSeconds);
    os << "\n";
  }

  if (!winner) {
    // Why nothing fits: the candidate nearest to fitting.
    const AutotuneCandidate *smallest = nullptr;
    for (const AutotuneCandidate &c : all)
      if (c.pruned.empty() && (!smallest || c.peakBytes < smallest->peakBytes))
        smallest = &c;
    if (fitting == 0 && over == 0 && unplannable > 0) {
      const AutotuneCandidate *first = nullptr;
      for (const AutotuneCandidate &c : all)
        if (!c.pruned.empty() && c.pruned.find("model states") != 0 &&
            c.pruned.find("ZeRO 2 and 3") != 0) {
          first = &c;
          break;
        }
      return reportError(llvm::formatv("no layout of {0} devices can be "
                                       "planned (for instance {1})",
                                       devices, first->pruned));
    }
    std::string message =
        llvm::formatv("no layout of {0} devices fits {1} "
                      "({2})",
                      devices, tuner.limitSource, gibText(tuner.limit))
            .str();
    if (confirmed > 0 && fitting > 0)
      message +=
          llvm::formatv("; the {0} whose estimates fit were planned whole and "
                        "none fits (the best, {1}, peaks at {2}): a larger "
                        "--confirm or --confirm-seconds plans more of the {3} "
                        "that fit by estimate",
                        confirmed, ranked.front()->flags(),
                        gibText(ranked.front()->confirmedPeakBytes), fitting)
              .str();
    else if (smallest)
      message += llvm::formatv("; the smallest peak, {0}, is {1}'s: the "
                               "model needs more devices or a larger memory",
                               gibText(smallest->peakBytes), smallest->flags())
                     .str();
    else if (heldBack + refused == int64_t(all.size()))
      message +=
          llvm::formatv("; every layout's model states alone exceed "
                        "it ({0:f0} parameters at 16 bytes each over {1} "
                        "devices is {2} per device at best): the model "
                        "needs more devices or a larger memory",
                        tuner.parameters, devices,
                        gibText(tuner.parameters * 16 / double(devices)))
              .str();
    else
      message += "; no layout could be planned (see `dtc plan` of one)";
    return reportError(message);
  }

  os << "best: " << winner->flags()
     << (estimateOnly ? " (per-layer estimate: not planned whole)" : "")
     << "\n";
  if (winner->confirmed)
    os << llvm::formatv(
        "  planned whole: step {0:f4} s (compute {1:f4}, "
        "bubble {2:f4}, exposed communication {3:f4}), peak "
        "{4}, MFU {5:f1}%\n",
        winner->confirmedSeconds, winner->confirmedComputeSeconds,
        winner->confirmedBubbleSeconds, winner->confirmedExposedSeconds,
        gibText(winner->confirmedPeakBytes), 100 * winner->confirmedMfu);
  // Why it beat the runner-up: the parts of the two step times.
  const AutotuneCandidate *runnerUp = nullptr;
  for (const AutotuneCandidate *c : ranked)
    if (c != winner && c->fits && c->confirmError.empty() &&
        (!c->confirmed || c->confirmedFits)) {
      if (!runnerUp || (c->confirmed && !runnerUp->confirmed) ||
          (c->confirmed && runnerUp->confirmed &&
           c->confirmedSeconds < runnerUp->confirmedSeconds))
        runnerUp = c;
      if (!c->confirmed && runnerUp)
        break;
    }
  if (runnerUp && !options.brief) {
    bool both = winner->confirmed && runnerUp->confirmed;
    auto parts = [&](const AutotuneCandidate *c) {
      if (both)
        return std::array<double, 4>{
            c->confirmedSeconds, c->confirmedComputeSeconds,
            c->confirmedBubbleSeconds, c->confirmedExposedSeconds};
      return std::array<double, 4>{c->stepSeconds, c->computeSeconds,
                                   c->bubbleSeconds, c->exposedSeconds};
    };
    std::array<double, 4> w = parts(winner), r = parts(runnerUp);
    const char *names[] = {"step", "compute (recompute included)",
                           "pipeline bubble", "exposed communication"};
    os << llvm::formatv("  runner-up: {0}\n  why the best wins ({1}): step "
                        "{2:f4} s against {3:f4} s",
                        runnerUp->flags(),
                        both ? "both planned whole" : "per-layer estimates",
                        w[0], r[0]);
    // The parts by how much they favour the winner.
    std::vector<int> order{1, 2, 3};
    llvm::stable_sort(
        order, [&](int a, int b) { return (r[a] - w[a]) > (r[b] - w[b]); });
    for (int i : order)
      if (std::abs(r[i] - w[i]) > 1e-3 * std::max(w[0], 1e-12))
        os << llvm::formatv("; {0} {1:f4} s {2}", names[i],
                            std::abs(r[i] - w[i]),
                            r[i] > w[i] ? "less" : "more");
    double wPeak = both ? winner->confirmedPeakBytes : winner->peakBytes;
    double rPeak = both ? runnerUp->confirmedPeakBytes : runnerUp->peakBytes;
    os << llvm::formatv("; peak {0} against {1}\n", gibText(wPeak),
                        gibText(rPeak));
  }
  if (!options.brief)
    os << llvm::formatv("autotune took {0:f1} s\n", secondsSince(start));

  if (best)
    *best = withCandidate(base, *winner);
  return 0;
}

int mlir::dtc::chooseAutoMesh(const CompileCommandOptions &cmd,
                              CompileCommandOptions &chosen) {
  if (cmd.devices <= 0)
    return reportError("--mesh auto needs --devices N, the number of devices "
                       "(ranks) to lay the model out on");
  AutotuneCommandOptions options;
  options.compile = cmd;
  options.brief = true;
  // What the user set is held; the defaults are swept.
  options.fixedZero = cmd.zero != 0;
  options.fixedRecompute = cmd.recompute != "none";
  options.fixedMicroBatch = cmd.microBatch > 0;
  options.fixedSchedule = !cmd.schedule.empty();
  options.fixedSequenceParallel = cmd.sequenceParallel;
  if (int rc = runAutotuneCommand(options, &chosen))
    return rc;
  llvm::errs() << "dtc: --mesh auto chose " << chosen.mesh
               << " (dtc autotune --devices " << cmd.devices << ")\n";
  return 0;
}
