//===- Autotune.h - pricing candidate plans per layer
//----------------------===//
//
// `dtc autotune`'s model of a candidate plan from the plans of a model's
// proxies (the model cut to one and two of its repeated layers, with one and
// two micro-batches of one sample, on dp=1 and pp=1 at the candidate's tp,
// sequence parallelism and recompute): what one layer and the rest of the
// model cost per micro-batch and per step, scaled to the candidate's layers
// per stage, micro-batches, data parallelism (ZeRO's shares and the
// gradient collectives' alpha-beta time), and pipeline schedule (the bubble
// (p - 1) / (v m) and the micro-batches in flight of ../shared/REFERENCE.md).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_PLAN_AUTOTUNE_H
#define DTC_COMPILER_PLAN_AUTOTUNE_H

#include "passes/Analysis/CostModel.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::dtc {

/// One choice of every swept option.
struct AutotuneCandidate {
  int64_t dp = 1, tp = 1, pp = 1;
  int64_t zero = 0;
  std::string recompute = "none";
  /// Samples per micro-batch, and micro-batches per step.
  int64_t microBatch = 1, microBatches = 1;
  /// "none" (pp = 1), "gpipe", "1f1b" or "interleaved" (virtualStages).
  std::string schedule = "none";
  int64_t virtualStages = 1;
  bool sequenceParallel = false;

  /// The estimate: step time and its parts, the largest rank's peak.
  double stepSeconds = 0, computeSeconds = 0, bubbleSeconds = 0,
         exposedSeconds = 0, peakBytes = 0, mfu = 0;
  /// Memory parts of the largest rank.
  double stateBytes = 0, activationBytes = 0;
  /// Whether the peak is within the limit; why it was dropped (empty if
  /// priced).
  bool fits = false;
  std::string pruned;
  /// The full plan's figures (confirmed), when planned whole.
  bool confirmed = false;
  double confirmedSeconds = 0, confirmedPeakBytes = 0, confirmedMfu = 0,
         confirmedComputeSeconds = 0, confirmedBubbleSeconds = 0,
         confirmedExposedSeconds = 0;
  bool confirmedFits = false;
  /// Why the whole plan failed, if it did.
  std::string confirmError;

  /// The flags of `dtc compile` that choose this candidate.
  std::string flags() const;
  /// "dp=2,tp=4,pp=1".
  std::string meshText() const;
};

/// One figure of a proxy plan split as a + b k + c m + d k m over its layers
/// k and micro-batches m: the rest of the model per step (a) and per
/// micro-batch (c), a layer per step (b) and per micro-batch (d).
struct LayerSplit {
  double restStep = 0, layerStep = 0, restMicro = 0, layerMicro = 0;
  /// From the figure at (k, m) = (1, 1), (2, 1), (1, 2) and (2, 2).
  static LayerSplit fromGrid(double x11, double x21, double x12, double x22);
};

/// What a model's proxies cost at one (tp, sequence parallelism,
/// recompute), one sample per micro-batch, dp = 1.
struct LayerCosts {
  /// Seconds on the device (kernels and tensor-parallel collectives the
  /// kernels wait for).
  LayerSplit seconds;
  /// Model FLOPs of one rank.
  LayerSplit flops;
  /// Bytes of one rank (per step: m = 1 only): parameters (with state),
  /// gradients, optimizer state, saved activations.
  double layerParams = 0, restParams = 0, layerGradients = 0, restGradients = 0,
         layerOptimizer = 0, restOptimizer = 0, layerSaved = 0, restSaved = 0,
         inputs = 0;
  /// The workspace (the arena beyond activations and gradients) per layer
  /// and for the rest, at one micro-batch ([0]) and at two or more ([1]:
  /// each micro-batch's gradients then take buffers of their own before
  /// they are added up, a layer's worth per layer).
  double layerWorkspace[2] = {0, 0}, restWorkspace[2] = {0, 0};
  /// Bytes one layer hands the next (a pipeline send per micro-batch
  /// sample), 16-bit parameter copies per parameter byte (bf16/fp16: 0.5).
  double carriedBytes = 0;
};

/// Prices `c` (filling its estimate) for a model of `layers` repeated
/// layers whose proxies cost `costs` at c's (tp, sp, recompute), on
/// `profile`, under `limitBytes` (0: the profile's memory).
void priceCandidate(AutotuneCandidate &c, const LayerCosts &costs,
                    int64_t layers, const DeviceProfile &profile,
                    double limitBytes, unsigned precisionBits);

/// The top `k` of `ranked` (priced, fastest first) as a table.
void printAutotuneTable(llvm::ArrayRef<const AutotuneCandidate *> ranked,
                        size_t k, llvm::raw_ostream &os);

/// Every priced candidate as CSV.
void printAutotuneCsv(llvm::ArrayRef<AutotuneCandidate> all,
                      llvm::raw_ostream &os);

/// An SVG scatter plot of predicted step time against peak memory of
/// every priced candidate, the limit as a line, `best` marked.
void printAutotuneSvg(llvm::ArrayRef<AutotuneCandidate> all,
                      const AutotuneCandidate *best, double limitBytes,
                      llvm::StringRef title, llvm::raw_ostream &os);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_AUTOTUNE_H
