//===- PlanJson.h - plan.json of a compiled step --------------------*- C++
//-*-===//

#ifndef DTC_COMPILER_PLAN_PLANJSON_H
#define DTC_COMPILER_PLAN_PLANJSON_H

#include "passes/Analysis/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::dtc {

/// The plan of a module with @train_step (and @micro_step) whose memory is
/// planned, in the schema of DESIGN.md ("mesh", "ranks" with "memory_bytes"
/// and "saved_activations", "kernels", "flops_per_step", "tensors", ...).
/// `kernelsBeforeFusion` and `kernelsAfterFusion` count kernel launches of
/// one step. "predicted" (step time, samples/s, MFU) comes from the per-op
/// roofline on `profile` (nullptr: the built-in `cpu` profile). "ranks"
/// lists every rank of the mesh, or only those of pipeline stage `stage`
/// when it is not negative (a pipeline stage's program).
llvm::json::Value buildPlanJson(ModuleOp module, int64_t kernelsBeforeFusion,
                                int64_t kernelsAfterFusion,
                                const DeviceProfile *profile = nullptr,
                                int64_t stage = -1);

/// What one collective of a rank's program sends.
struct CollectiveBytes {
  /// What it does (a pipeline's send is a Send).
  CollectiveKind kind = CollectiveKind::Send;
  /// The mesh axes of its group, joined by '+' ("dp").
  std::string axes;
  int64_t groupSize = 1, position = 0;
  /// Bytes this rank sends, as ring algorithms send them
  /// (../shared/REFERENCE.md): an all-reduce 2(n-1)/n of the buffer, cut
  /// into ring chunks (count / n elements, the first count % n one more) so
  /// that a rank sends every chunk but its own in the reduce-scatter phase
  /// and every chunk but the next rank's in the all-gather phase; a
  /// reduce-scatter or all-gather (n-1)/n of the whole tensor.
  int64_t bytes = 0;
  /// Bytes of the whole tensor it moves.
  int64_t tensorBytes = 0;
};

/// The bytes of `op` (a dist collective; nullopt for any other op) for the
/// rank at `coords` of a mesh of `sizes` (both pp, dp, tp).
std::optional<CollectiveBytes>
collectiveBytes(Operation *op, const int64_t sizes[3], const int64_t coords[3]);

/// Prints what --explain shows: the mesh, each parameter's sharding (and
/// its optimizer state's), and each collective of a step with what it
/// carries, the ONNX node it comes from, its bytes on rank 0 and its axis.
void printExplanation(ModuleOp module, llvm::raw_ostream &os);

/// Kernel launches of one step of @train_step: one per op that is neither a
/// constant nor an alias, calls counted through.
int64_t countKernels(ModuleOp module);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_PLANJSON_H
