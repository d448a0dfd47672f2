//===- Autotune.cpp - pricing candidate plans per layer ------------------===//

#include "compiler/Plan/Autotune.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dtc;

std::string AutotuneCandidate::meshText() const {
  return llvm::formatv("dp={0},tp={1},pp={2}", dp, tp, pp).str();
}

std::string AutotuneCandidate::flags() const {
  std::string out = llvm::formatv("--mesh {0}x{1}x{2} --micro-batch {3}", dp,
                                  tp, pp, microBatch)
                        .str();
  if (zero)
    out += " --zero " + std::to_string(zero);
  if (recompute != "none")
    out += " --recompute " + recompute;
  if (schedule != "none")
    out += " --schedule " + schedule;
  if (schedule == "interleaved")
    out += " --virtual-stages " + std::to_string(virtualStages);
  if (sequenceParallel)
    out += " --sequence-parallel";
  return out;
}

LayerSplit LayerSplit::fromGrid(double x11, double x21, double x12,
                                double x22) {
  LayerSplit s;
  s.layerMicro = x22 - x21 - x12 + x11;
  s.layerStep = x21 - x11 - s.layerMicro;
  s.restMicro = x12 - x11 - s.layerMicro;
  s.restStep = x11 - s.layerStep - s.restMicro - s.layerMicro;
  return s;
}

/// The link between ranks `a` and `b` (tp fastest, then dp, then pp; a node
/// holds devicesPerNode consecutive ranks).
static const DeviceProfile::Link &linkBetween(const DeviceProfile &profile,
                                              int64_t a, int64_t b) {
  int64_t perNode = std::max<int64_t>(1, profile.devicesPerNode);
  return a / perNode == b / perNode ? profile.intraNode : profile.interNode;
}

void mlir::dtc::priceCandidate(AutotuneCandidate &c, const LayerCosts &costs,
                               int64_t layers, const DeviceProfile &profile,
                               double limitBytes, unsigned precisionBits) {
  double b = double(c.microBatch), m = double(c.microBatches);
  double dp = double(c.dp);
  // Layers of the fullest stage; the rest of the model (embeddings, head,
  // loss) is on the first and last stages, whose tied parameters both hold.
  double perStage = double((layers + c.pp - 1) / c.pp);
  auto clamp = [](double x) { return std::max(0.0, x); };

  // Memory: model states of the stage, ZeRO's shares over dp.
  const double params = perStage * costs.layerParams + costs.restParams;
  const double gradsWhole =
      perStage * costs.layerGradients + costs.restGradients;
  double grads = gradsWhole;
  double optimizer = perStage * costs.layerOptimizer + costs.restOptimizer;
  double states = 0;
  if (c.zero >= 1)
    optimizer /= dp;
  if (c.zero >= 2)
    grads /= dp;
  double paramsHeld = params;
  if (c.zero >= 3) // a block of each, and a layer gathered (and the next)
    paramsHeld = params / dp + 2 * costs.layerParams * precisionBits / 32.0;
  states = paramsHeld + grads + optimizer;
  // Saved activations: the first stage holds its layers' of the
  // micro-batches in flight, the last its layers' and the head's of one
  // (all of them under gpipe).
  double inFlight = 1;
  if (c.pp > 1) {
    if (c.schedule == "gpipe")
      inFlight = m;
    else
      inFlight = std::min(m, double(c.pp));
    if (c.schedule == "interleaved")
      inFlight *= 1 + double(c.pp - 1) / double(c.pp * c.virtualStages);
  }
  double layerSaved = clamp(costs.layerSaved) * b;
  double restSaved = clamp(costs.restSaved) * b;
  double activations;
  if (c.pp == 1)
    activations = perStage * layerSaved + restSaved;
  else
    activations = std::max(inFlight * perStage * layerSaved,
                           (c.schedule == "gpipe" ? m : 1.0) *
                               (perStage * layerSaved + restSaved));
  c.stateBytes = states;
  c.activationBytes = activations;
  // The workspace of the stage's layers: at one micro-batch it scales with
  // the micro-batch's size; what accumulating gradients adds does not.
  auto workspaceAt = [&](int accumulating) {
    return clamp(perStage * costs.layerWorkspace[accumulating] +
                 costs.restWorkspace[accumulating]);
  };
  double workspace = workspaceAt(0) * b;
  if (c.microBatches > 1)
    workspace += clamp(workspaceAt(1) - workspaceAt(0));
  c.peakBytes = states + activations + workspace + clamp(costs.inputs) * b;
  double limit = limitBytes > 0 ? limitBytes : profile.memoryCapacity;
  c.fits = limit <= 0 || c.peakBytes <= limit;

  // Time: the fullest stage's micro-batches, its optimizer update (of its
  // block under ZeRO), the bubble, the collectives the kernels wait for.
  double layer = clamp(costs.seconds.layerMicro);
  double rest = clamp(costs.seconds.restMicro);
  double perMicro =
      c.pp == 1 ? b * (double(layers) * layer + rest)
                : b * std::max(perStage * layer,
                               (double(layers) * layer + rest) / double(c.pp));
  double update =
      perStage * clamp(costs.seconds.layerStep) + clamp(costs.seconds.restStep);
  if (c.zero >= 1)
    update /= dp;
  c.computeSeconds = m * perMicro + update;
  // The schedule's bubble; where ranks share cores, only what the
  // critical path at unshared speed adds beyond the shared compute (as
  // plan.json prices it: a waiting stage yields its core to the others).
  c.bubbleSeconds =
      c.pp > 1 ? sharedCoreBubbleSeconds(c.computeSeconds,
                                         double(c.pp - 1) /
                                             double(c.virtualStages) * perMicro,
                                         coreSharing(profile))
               : 0;

  double exposed = 0;
  if (c.dp > 1) {
    // Rank 0's data-parallel group: ranks 0, tp, ..., (dp - 1) tp, run
    // hierarchically where it holds several ranks of each of several nodes,
    // otherwise as one ring over the slowest link it crosses.
    SmallVector<int64_t> group;
    for (int64_t i = 0; i < c.dp; ++i)
      group.push_back(i * c.tp);
    GroupPlacement where = placeGroup(group, profile.devicesPerNode);
    // One collective of the group on a buffer of `buffer` bytes (an
    // all-reduce's or reduce-scatter's operand, an all-gather's result).
    auto collective = [&](CollectiveKind kind, double buffer) {
      if (where.isHierarchical())
        return estimateHierarchicalCollectiveSeconds(kind, where, buffer,
                                                     profile);
      return estimateCollectiveSeconds(
          kind, c.dp, ringBytesSent(kind, c.dp, buffer),
          groupLink(profile, where), profile.networkEfficiency);
    };
    // ZeRO 2 and 3 keep only their block of each gradient, so every
    // micro-batch's gradients are reduce-scattered (DeepSpeed's ZeRO 2
    // does the same); ZeRO 1 reduce-scatters the accumulated gradients
    // once; each stage > 0 gathers the updated parameters.
    double reduce =
        c.zero == 0
            ? collective(CollectiveKind::AllReduce, gradsWhole)
            : (c.zero >= 2 ? m : 1.0) *
                      collective(CollectiveKind::ReduceScatter, gradsWhole) +
                  collective(CollectiveKind::AllGather, params);
    // The compiler starts the gradients' reduction as buckets fill, but
    // the micro-batch loop ends before most of it can run beside the
    // backward (a call is a barrier): counted as waited for, as the whole
    // plan's simulation mostly finds it.
    exposed += reduce;
    if (c.zero >= 3)
      // Each micro-batch gathers the stage's parameters for the forward
      // and again for the backward.
      exposed +=
          2 * m *
          collective(CollectiveKind::AllGather, params * precisionBits / 32.0);
  }
  if (c.pp > 1) {
    // A middle stage sends each micro-batch's activation on and its
    // gradient back, once per model chunk it holds: the residual stream,
    // whole on every tp rank (as the compiler sends it, also under sequence
    // parallelism), in the model's own precision.
    double bytes = costs.carriedBytes * b;
    const DeviceProfile::Link &link = linkBetween(profile, 0, c.dp * c.tp);
    exposed += 2 * m * double(c.virtualStages) *
               estimateCollectiveSeconds(CollectiveKind::Send, 2, bytes, link,
                                         profile.networkEfficiency);
  }
  c.exposedSeconds = exposed;
  c.stepSeconds = c.computeSeconds + c.bubbleSeconds + c.exposedSeconds;
  double rankFlops =
      m * b *
      (double(layers) * costs.flops.layerMicro + costs.flops.restMicro) /
      double(c.pp);
  double peak = peakGemmFlopsFor(profile, precisionBits);
  c.mfu = c.stepSeconds > 0 && peak > 0 ? rankFlops / c.stepSeconds / peak : 0;
}

static std::string gib(double bytes) {
  return llvm::formatv("{0:f2}", bytes / double(1ull << 30)).str();
}

void mlir::dtc::printAutotuneTable(
    llvm::ArrayRef<const AutotuneCandidate *> ranked, size_t k,
    llvm::raw_ostream &os) {
  os << llvm::formatv("{0,4} {1,-22} {2,4} {3,-9} {4,5} {5,5} {6,-13} {7,3} "
                      "{8,11} {9,10} {10,6} {11,11} {12,10}\n",
                      "#", "mesh", "zero", "recompute", "micro", "m",
                      "schedule", "sp", "step (s)", "peak GiB", "MFU",
                      "plan step", "plan GiB");
  for (size_t i = 0; i < ranked.size() && i < k; ++i) {
    const AutotuneCandidate &c = *ranked[i];
    std::string schedule =
        c.schedule == "interleaved"
            ? "interleaved:" + std::to_string(c.virtualStages)
            : c.schedule;
    os << llvm::formatv(
        "{0,4} {1,-22} {2,4} {3,-9} {4,5} {5,5} {6,-13} {7,3} {8,11} {9,10} "
        "{10,6} {11,11} {12,10}\n",
        i + 1, c.meshText(), c.zero, c.recompute, c.microBatch, c.microBatches,
        schedule, c.sequenceParallel ? "on" : "-",
        llvm::formatv("{0:f4}", c.stepSeconds).str(), gib(c.peakBytes),
        llvm::formatv("{0:f1}%", 100 * c.mfu).str(),
        c.confirmed ? llvm::formatv("{0:f4}", c.confirmedSeconds).str() : "-",
        c.confirmed ? gib(c.confirmedPeakBytes) : "-");
  }
}

void mlir::dtc::printAutotuneCsv(llvm::ArrayRef<AutotuneCandidate> all,
                                 llvm::raw_ostream &os) {
  os << "dp,tp,pp,zero,recompute,micro_batch,micro_batches,schedule,"
        "virtual_stages,sequence_parallel,step_s,compute_s,bubble_s,"
        "exposed_comm_s,peak_bytes,state_bytes,activation_bytes,mfu,fits,"
        "pruned,plan_step_s,plan_peak_bytes\n";
  for (const AutotuneCandidate &c : all)
    os << llvm::formatv("{0},{1},{2},{3},{4},{5},{6},{7},{8},{9},", c.dp, c.tp,
                        c.pp, c.zero, c.recompute, c.microBatch, c.microBatches,
                        c.schedule, c.virtualStages, c.sequenceParallel ? 1 : 0)
       << llvm::formatv("{0:e},{1:e},{2:e},{3:e},{4:f0},{5:f0},{6:f0},{7:f4},",
                        c.stepSeconds, c.computeSeconds, c.bubbleSeconds,
                        c.exposedSeconds, c.peakBytes, c.stateBytes,
                        c.activationBytes, c.mfu)
       << (c.fits ? 1 : 0) << ",\"" << c.pruned << "\","
       << (c.confirmed ? llvm::formatv("{0:e}", c.confirmedSeconds).str() : "")
       << ","
       << (c.confirmed ? llvm::formatv("{0:f0}", c.confirmedPeakBytes).str()
                       : "")
       << "\n";
}

void mlir::dtc::printAutotuneSvg(llvm::ArrayRef<AutotuneCandidate> all,
                                 const AutotuneCandidate *best,
                                 double limitBytes, llvm::StringRef title,
                                 llvm::raw_ostream &os) {
  const double width = 800, height = 560, left = 80, right = 20, top = 40,
               bottom = 60;
  double maxX = limitBytes, minY = 0, maxY = 0;
  bool any = false;
  for (const AutotuneCandidate &c : all) {
    if (!c.pruned.empty())
      continue;
    maxX = std::max(maxX, c.peakBytes);
    minY = any ? std::min(minY, c.stepSeconds) : c.stepSeconds;
    maxY = std::max(maxY, c.stepSeconds);
    any = true;
  }
  maxX = maxX > 0 ? maxX * 1.05 : 1;
  // Step times span orders of magnitude: a log scale.
  double lo = std::log10(std::max(minY, 1e-9)) - 0.05;
  double hi = std::log10(std::max(maxY, 1e-9)) + 0.05;
  if (hi - lo < 0.1)
    hi = lo + 0.1;
  auto x = [&](double bytes) {
    return left + bytes / maxX * (width - left - right);
  };
  auto y = [&](double seconds) {
    double v = std::log10(std::max(seconds, 1e-9));
    return height - bottom - (v - lo) / (hi - lo) * (height - top - bottom);
  };
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
                      "font-size=\"12\">\n",
                      width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::formatv("<text x=\"{0}\" y=\"20\" font-size=\"14\">", left);
  llvm::printHTMLEscaped(title, os);
  os << "</text>\n";
  os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                      "stroke=\"black\"/>\n",
                      left, height - bottom, width - right);
  os << llvm::formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                      "stroke=\"black\"/>\n",
                      left, top, height - bottom);
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                      "peak memory of the largest rank (GiB)</text>\n",
                      (left + width - right) / 2, height - 15);
  os << llvm::formatv("<text x=\"15\" y=\"{0}\" transform=\"rotate(-90 15 "
                      "{0})\" text-anchor=\"middle\">predicted step time (s, "
                      "log scale)</text>\n",
                      (top + height - bottom) / 2);
  for (int i = 0; i <= 4; ++i) {
    double bytes = maxX * i / 4;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">"
                        "{2}</text>\n",
                        x(bytes), height - bottom + 16, gib(bytes));
    double v = lo + (hi - lo) * i / 4;
    os << llvm::formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">"
                        "{2:g3}</text>\n",
                        left - 4, y(std::pow(10, v)) + 4, std::pow(10, v));
  }
  if (limitBytes > 0)
    os << llvm::formatv(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
        "stroke=\"red\" stroke-dasharray=\"4 3\"/><text "
        "x=\"{3}\" y=\"{4}\" fill=\"red\">memory limit</text>\n",
        x(limitBytes), top, height - bottom, x(limitBytes) + 4, top + 12);
  for (const AutotuneCandidate &c : all) {
    if (!c.pruned.empty())
      continue;
    os << llvm::formatv("<circle cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"3\" "
                        "fill=\"{2}\" fill-opacity=\"0.6\"><title>{3} "
                        "{4}</title></circle>\n",
                        x(c.peakBytes), y(c.stepSeconds),
                        c.fits ? "steelblue" : "gray", c.flags(),
                        llvm::formatv("{0:f4} s", c.stepSeconds).str());
  }
  if (best)
    os << llvm::formatv("<circle cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"7\" "
                        "fill=\"none\" stroke=\"darkorange\" "
                        "stroke-width=\"2\"/><text x=\"{2:f1}\" y=\"{1:f1}\" "
                        "fill=\"darkorange\">best</text>\n",
                        x(best->peakBytes), y(best->stepSeconds),
                        x(best->peakBytes) + 10);
  os << "</svg>\n";
}
