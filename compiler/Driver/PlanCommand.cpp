//===- PlanCommand.cpp - `dtc plan` ---------------------------------------===//
//
// Plans a model as `dtc compile` would (the same passes, so the plan that
// is priced is the plan that is compiled) without writing or building
// anything, and without the weights: a weightless model (external data
// absent) plans normally. Prints the report or plan.json. A plan over the
// memory limit says which rank, by how much, and the cheapest change that
// fits among the ZeRO stage, recompute and the micro-batch size, found by
// planning each candidate.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Plan/PlanReport.h"
#include "passes/Analysis/CostModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace mlir::dtc;

namespace {
/// A change of the plan's memory options, and what it gives.
struct Candidate {
  int64_t zero = 0;
  std::string recompute;
  int64_t microBatch = 0;
  /// Filled in once planned.
  double peakBytes = 0, stepSeconds = 0;
  int64_t rank = 0;

  /// The flags that differ from `base`'s.
  std::string flags(const CompileCommandOptions &base,
                    int64_t baseMicro) const {
    std::string out;
    if (zero != base.zero)
      out += " --zero " + std::to_string(zero);
    if (recompute != base.recompute)
      out += " --recompute " + recompute;
    if (microBatch != baseMicro)
      out += " --micro-batch " + std::to_string(microBatch);
    return llvm::StringRef(out).ltrim().str();
  }
};
} // namespace

/// The micro-batch a plan uses (0 if it does not say).
static int64_t microBatchOf(const llvm::json::Object &plan) {
  std::optional<int64_t> micro = plan.getInteger("micro_batch");
  return micro ? *micro : 0;
}

/// Plans `candidate` (quietly); false if it cannot be planned.
static bool planCandidate(const CompileCommandOptions &base,
                          Candidate &candidate) {
  CompileCommandOptions cmd = base;
  cmd.zero = candidate.zero;
  cmd.recompute = candidate.recompute;
  cmd.microBatch = candidate.microBatch;
  cmd.explain = false;
  cmd.quiet = true;
  llvm::json::Value plan = nullptr;
  cmd.planResult = &plan;
  if (runCompileCommand(cmd) != 0 || !plan.getAsObject())
    return false;
  PlanFit fit = checkPlanFit(*plan.getAsObject(), 0);
  candidate.peakBytes = fit.peakBytes;
  candidate.rank = fit.rank;
  const llvm::json::Object *predicted =
      plan.getAsObject()->getObject("predicted");
  candidate.stepSeconds =
      predicted ? predicted->getNumber("step_time_s").value_or(0) : 0;
  return true;
}

/// The candidates one change away from `cmd` (`single`), or every
/// combination of the changes.
static std::vector<Candidate> candidatesOf(const CompileCommandOptions &cmd,
                                           int64_t dp, int64_t micro,
                                           bool single) {
  std::vector<int64_t> zeros{cmd.zero};
  if (dp > 1)
    for (int64_t z = cmd.zero + 1; z <= 3; ++z)
      zeros.push_back(z);
  std::vector<std::string> recomputes{cmd.recompute};
  if (cmd.recompute == "none")
    recomputes.insert(recomputes.end(), {"selective", "full"});
  else if (cmd.recompute == "selective")
    recomputes.push_back("full");
  std::vector<int64_t> micros{micro};
  for (int64_t m = micro / 2; m >= 1 && micro % m == 0; m /= 2) {
    micros.push_back(m);
    if (m % 2)
      break;
  }
  std::vector<Candidate> out;
  for (int64_t z : zeros)
    for (const std::string &r : recomputes)
      for (int64_t m : micros) {
        int changes = (z != cmd.zero) + (r != cmd.recompute) + (m != micro);
        if (changes == 0 || (single && changes > 1))
          continue;
        if (!single && changes == 1)
          continue; // tried already
        Candidate c;
        c.zero = z;
        c.recompute = r;
        c.microBatch = m;
        out.push_back(c);
      }
  return out;
}

int mlir::dtc::runPlanCommand(const PlanCommandOptions &options) {
  CompileCommandOptions cmd = options.compile;
  cmd.planOnly = true;
  llvm::json::Value plan = nullptr;
  cmd.planResult = &plan;
  if (int rc = runCompileCommand(cmd))
    return rc;
  llvm::json::Object &planObject = *plan.getAsObject();

  // The limit: --memory-limit, else the device's memory.
  std::string profileError;
  FailureOr<DeviceProfile> profile =
      loadDeviceProfile(cmd.deviceProfile, profileError);
  if (failed(profile))
    return reportError("--device-profile: " + profileError);
  double limit = cmd.memoryLimitGiB * double(1 << 30);
  std::string limitSource = "--memory-limit";
  if (limit <= 0) {
    limit = profile->memoryCapacity;
    limitSource = profile->name + "'s memory";
  }
  PlanFit fit = checkPlanFit(planObject, limit);

  // What would fit: one change first, then combinations; the fastest.
  std::optional<Candidate> best, smallest;
  int64_t micro = microBatchOf(planObject);
  if (!fit.fits()) {
    const llvm::json::Object *mesh = planObject.getObject("mesh");
    int64_t dp = mesh ? mesh->getInteger("dp").value_or(1) : 1;
    for (bool single : {true, false}) {
      for (Candidate &c : candidatesOf(cmd, dp, micro, single)) {
        if (!planCandidate(cmd, c))
          continue;
        if (!smallest || c.peakBytes < smallest->peakBytes)
          smallest = c;
        if (c.peakBytes <= limit &&
            (!best || c.stepSeconds < best->stepSeconds))
          best = c;
      }
      if (best)
        break;
    }
  }

  llvm::raw_ostream &os = llvm::outs();
  if (options.json) {
    llvm::json::Object fitJson{{"memory_limit_bytes", limit},
                               {"limit_source", limitSource},
                               {"fits", fit.fits()},
                               {"largest_rank", fit.rank},
                               {"largest_peak_bytes", fit.peakBytes}};
    if (best)
      fitJson["cheapest_change"] =
          llvm::json::Object{{"flags", best->flags(cmd, micro)},
                             {"peak_bytes", best->peakBytes},
                             {"step_time_s", best->stepSeconds}};
    planObject["fit"] = std::move(fitJson);
    os << llvm::formatv("{0:2}", plan) << "\n";
  } else {
    printPlanReport(planObject, cmd.model, fit, limitSource, os);
  }
  if (fit.fits())
    return 0;
  std::string message =
      llvm::formatv("the plan does not fit: rank {0} needs {1}, {2} over {3} "
                    "{4}",
                    fit.rank, formatGiB(fit.peakBytes),
                    formatGiB(fit.peakBytes - fit.limitBytes), limitSource,
                    formatGiB(fit.limitBytes))
          .str();
  if (best)
    message +=
        llvm::formatv("; the cheapest change that fits is {0} (peak "
                      "{1} on rank {2}, predicted step {3:f6} s)",
                      best->flags(cmd, micro), formatGiB(best->peakBytes),
                      best->rank, best->stepSeconds)
            .str();
  else if (smallest)
    message += llvm::formatv("; no change of ZeRO stage, recompute or "
                             "micro-batch fits (the smallest peak, {0}, "
                             "is with {1}): it needs more devices or a "
                             "larger memory",
                             formatGiB(smallest->peakBytes),
                             smallest->flags(cmd, micro))
                   .str();
  else
    message += "; no change of ZeRO stage, recompute or micro-batch is left "
               "to try: it needs more devices or a larger memory";
  return reportError(message);
}
