//===- UpdateRuns.h - optimizer updates one multi-tensor kernel can take --===//
//
// The CUDA target updates many parameters in one launch (multi-tensor
// apply): a run is a sequence of consecutive sgd_update ops, or of
// adamw_update ops, with the same hyperparameter operands, whose results
// are all written directly into the function's results (never into the
// arena, so no update of the run writes what another reads), each possibly
// preceded by a multiplication of its gradient by a one-element tensor
// (gradient clipping's coefficient) that only it uses, possibly through
// views (reshapes): the kernel applies that multiplication itself, and the
// multiplication is not emitted. Ops that emit no code (views, constants)
// do not break a run.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_CPU_UPDATERUNS_H
#define DTC_TARGET_CPU_UPDATERUNS_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace mlir::dtc::cpu {

struct UpdateRun {
  SmallVector<Operation *> updates;
  /// Per update: the multiplication folded into it, or null.
  SmallVector<Operation *> scales;
};

/// The runs of `body` of at least two updates. `isDirect(v)`: `v` is
/// written straight into a result of the function.
std::vector<UpdateRun> findUpdateRuns(Block &body,
                                      llvm::function_ref<bool(Value)> isDirect);

/// For a folded multiplication: its gradient operand and its scale.
std::pair<Value, Value> scaledOperands(Operation *mul);

} // namespace mlir::dtc::cpu

#endif // DTC_TARGET_CPU_UPDATERUNS_H
