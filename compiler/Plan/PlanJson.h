//===- PlanJson.h - plan.json of a compiled step --------------------*- C++
//-*-===//

#ifndef DTC_COMPILER_PLAN_PLANJSON_H
#define DTC_COMPILER_PLAN_PLANJSON_H

#include "passes/Analysis/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::dtc {

/// The plan of a module with @train_step (and @micro_step) whose memory is
/// planned, in the schema of DESIGN.md ("mesh", "ranks" with "memory_bytes"
/// and "saved_activations", "kernels", "flops_per_step", "tensors", ...).
/// `kernelsBeforeFusion` and `kernelsAfterFusion` count kernel launches of
/// one step. "predicted" (step time, samples/s, MFU) comes from the per-op
/// roofline on `profile` (nullptr: the built-in `cpu` profile).
llvm::json::Value buildPlanJson(ModuleOp module, int64_t kernelsBeforeFusion,
                                int64_t kernelsAfterFusion,
                                const DeviceProfile *profile = nullptr);

/// Kernel launches of one step of @train_step: one per op that is neither a
/// constant nor an alias, calls counted through.
int64_t countKernels(ModuleOp module);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_PLANJSON_H
