//===- PlanReport.cpp - `dtc plan`'s readable report ----------------------===//

#include "compiler/Plan/PlanReport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::dtc;
using llvm::json::Array;
using llvm::json::Object;

static double number(const Object *o, llvm::StringRef key) {
  if (!o)
    return 0;
  std::optional<double> d = o->getNumber(key);
  return d ? *d : 0;
}

static const Object *memoryOf(const llvm::json::Value &rank) {
  const Object *o = rank.getAsObject();
  return o ? o->getObject("memory_bytes") : nullptr;
}

PlanFit mlir::dtc::checkPlanFit(const Object &plan, double limitBytes) {
  PlanFit fit;
  fit.limitBytes = limitBytes;
  fit.peakBytes = -1;
  if (const Array *ranks = plan.getArray("ranks"))
    for (const llvm::json::Value &rank : *ranks) {
      double peak = number(memoryOf(rank), "peak");
      if (peak > fit.peakBytes) {
        fit.peakBytes = peak;
        fit.rank = number(rank.getAsObject(), "rank");
      }
    }
  fit.peakBytes = std::max(fit.peakBytes, 0.0);
  return fit;
}

std::string mlir::dtc::formatGiB(double bytes) {
  // Two decimals, four below 1 GiB (a small model's, or a test's, limit).
  if (bytes < double(1 << 30))
    return llvm::formatv("{0:f4} GiB ({1:f4} GB)", bytes / double(1 << 30),
                         bytes / 1e9)
        .str();
  return llvm::formatv("{0:f2} GiB ({1:f2} GB)", bytes / double(1 << 30),
                       bytes / 1e9)
      .str();
}

/// Seconds as "12.3 ms" (or s, us).
static std::string formatSeconds(double s) {
  if (s >= 1)
    return llvm::formatv("{0:f3} s", s).str();
  if (s >= 1e-3)
    return llvm::formatv("{0:f3} ms", s * 1e3).str();
  return llvm::formatv("{0:f3} us", s * 1e6).str();
}

/// A count as "124.48 M" (or k, G, T).
static std::string formatCount(double n) {
  const char *units[] = {"", " k", " M", " G", " T"};
  int u = 0;
  while (n >= 1000 && u < 4) {
    n /= 1000;
    ++u;
  }
  return llvm::formatv("{0:f2}{1}", n, units[u]).str();
}

void mlir::dtc::printPlanReport(const Object &plan, llvm::StringRef model,
                                const PlanFit &fit, llvm::StringRef limitSource,
                                llvm::raw_ostream &os) {
  const Object *mesh = plan.getObject("mesh");
  const Object *predicted = plan.getObject("predicted");
  int64_t dp = number(mesh, "dp"), tp = number(mesh, "tp"),
          pp = number(mesh, "pp");
  std::optional<llvm::StringRef> profile =
      predicted ? predicted->getString("device_profile") : std::nullopt;
  std::optional<llvm::StringRef> schedule = plan.getString("schedule");
  std::optional<llvm::StringRef> precision = plan.getString("precision");
  const Object *recompute = plan.getObject("recompute");
  std::optional<llvm::StringRef> mode =
      recompute ? recompute->getString("mode") : std::nullopt;
  os << "dtc plan: " << model << " on mesh dp=" << dp << " tp=" << tp
     << " pp=" << pp << " (" << dp * tp * pp << " ranks), device profile "
     << profile.value_or("?") << "\n";
  os << "  " << precision.value_or("fp32") << ", ZeRO "
     << int64_t(number(&plan, "zero")) << ", recompute "
     << mode.value_or("none");
  if (pp > 1) {
    os << ", schedule " << schedule.value_or("?");
    if (int64_t v = number(&plan, "virtual_stages"); v > 1)
      os << " (" << v << " virtual stages)";
  }
  os << "; " << int64_t(number(&plan, "global_batch")) << " samples a step in "
     << int64_t(number(&plan, "micro_batches")) << " micro-batches of "
     << int64_t(number(&plan, "micro_batch")) << " per data-parallel rank\n";
  os << "  parameters " << formatCount(number(&plan, "parameters_total"))
     << ", model FLOPs a step "
     << llvm::formatv("{0:e3}", number(&plan, "flops_per_step"))
     << " (every op, recompute included: "
     << llvm::formatv("{0:e3}", number(&plan, "flops_per_step_all")) << ")\n\n";

  // Memory: each stage's rank with the largest peak.
  std::map<int64_t, const llvm::json::Value *> largest;
  if (const Array *ranks = plan.getArray("ranks"))
    for (const llvm::json::Value &rank : *ranks) {
      int64_t stage = number(rank.getAsObject(), "stage");
      const llvm::json::Value *&best = largest[stage];
      if (!best ||
          number(memoryOf(rank), "peak") > number(memoryOf(*best), "peak"))
        best = &rank;
    }
  os << "memory of each stage's largest rank, GiB:\n";
  os << llvm::formatv("  {0,-5} {1,-6} {2,10} {3,10} {4,10} {5,11} {6,10} "
                      "{7,10} {8,10}\n",
                      "stage", "rank", "parameters", "gradients", "optimizer",
                      "activations", "workspace", "other", "peak");
  auto gib = [](double b) {
    return llvm::formatv("{0:f3}", b / double(1 << 30)).str();
  };
  for (auto [stage, rank] : largest) {
    const Object *m = memoryOf(*rank);
    double other =
        number(m, "constants") + number(m, "inputs") + number(m, "outputs");
    os << llvm::formatv(
        "  {0,-5} {1,-6} {2,10} {3,10} {4,10} {5,11} {6,10} {7,10} {8,10}\n",
        stage, int64_t(number(rank->getAsObject(), "rank")),
        gib(number(m, "parameters")), gib(number(m, "gradients")),
        gib(number(m, "optimizer_state")), gib(number(m, "activations")),
        gib(number(m, "workspace")), gib(other), gib(number(m, "peak")));
  }
  if (fit.limitBytes > 0) {
    if (fit.fits())
      os << "  fits: the largest peak, rank " << fit.rank << "'s "
         << formatGiB(fit.peakBytes) << ", is under " << limitSource << " "
         << formatGiB(fit.limitBytes) << "\n";
    else
      os << "  DOES NOT FIT: rank " << fit.rank << " needs "
         << formatGiB(fit.peakBytes) << ", "
         << formatGiB(fit.peakBytes - fit.limitBytes) << " over " << limitSource
         << " " << formatGiB(fit.limitBytes) << "\n";
  }
  if (!largest.empty()) {
    const Object *first = largest.begin()->second->getAsObject();
    llvm::SmallVector<const Object *> saved;
    if (const Array *list = first->getArray("saved_activations"))
      for (const llvm::json::Value &v : *list)
        if (const Object *o = v.getAsObject())
          saved.push_back(o);
    llvm::stable_sort(saved, [](const Object *a, const Object *b) {
      return number(a, "bytes") > number(b, "bytes");
    });
    double total = 0;
    for (const Object *o : saved)
      total += number(o, "bytes");
    os << "\nactivations saved for the backward of one micro-batch, rank "
       << int64_t(number(first, "rank")) << ": " << saved.size() << " tensors, "
       << formatGiB(total) << "; the largest:\n";
    for (const Object *o : llvm::ArrayRef(saved).take_front(8))
      os << llvm::formatv("  {0,12:f3} MiB  {1} ({2})\n",
                          number(o, "bytes") / double(1 << 20),
                          o->getString("onnx_node").value_or("?"),
                          o->getString("tensor").value_or("?"));
  }

  double step = number(predicted, "step_time_s");
  double compute = number(predicted, "compute_s");
  double replay = number(predicted, "recompute_s");
  double exposed = number(predicted, "exposed_communication_s");
  double comm = number(predicted, "communication_s");
  double bubble = number(predicted, "bubble_s");
  auto share = [&](double part) {
    return llvm::formatv("{0,5:f1}%", step > 0 ? 100 * part / step : 0.0).str();
  };
  os << "\npredicted step time on " << profile.value_or("?") << ": "
     << formatSeconds(step) << (pp > 1 ? " (the slowest stage's)" : "") << "\n";
  os << llvm::formatv("  {0,-24} {1,12} {2}\n", "compute",
                      formatSeconds(compute - replay), share(compute - replay));
  os << llvm::formatv("  {0,-24} {1,12} {2}\n", "recompute",
                      formatSeconds(replay), share(replay));
  os << llvm::formatv("  {0,-24} {1,12} {2}  (of {3} in all; the rest runs "
                      "beside compute)\n",
                      "exposed communication", formatSeconds(exposed),
                      share(exposed), formatSeconds(comm));
  os << llvm::formatv("  {0,-24} {1,12} {2}  (fraction {3:f4} of the "
                      "ideal time)\n",
                      "pipeline bubble", formatSeconds(bubble), share(bubble),
                      number(predicted, "bubble_fraction"));
  os << llvm::formatv("  MFU {0:f1}%, {1:f1} samples/s\n",
                      100 * number(predicted, "mfu"),
                      number(predicted, "samples_per_s"));
  if (const Array *ranks = plan.getArray("ranks"); ranks && !ranks->empty()) {
    const Object *comm0 =
        (*ranks)[0].getAsObject()->getObject("comm_bytes_per_step");
    os << "  rank 0 sends a step: dp " << formatGiB(number(comm0, "dp"))
       << ", tp " << formatGiB(number(comm0, "tp")) << ", pp "
       << formatGiB(number(comm0, "pp")) << "\n";
  }
}
