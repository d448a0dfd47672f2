//===- Interpreter.h - reference interpreter of the dtg dialect -----*- C++
//-*-===//
//
// The oracle: runs a function of dtg ops on concrete tensors with plain C++
// loops. Each op family registers its kernels (Kernels*.cpp); an op without a
// kernel is an error naming the op, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_INTERP_INTERPRETER_H
#define DTC_DIALECTS_DTG_INTERP_INTERPRETER_H

#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::dtg::interp {

/// Computes the results of `op` from its operand values. On bad values (an
/// index out of range, say) it emits an error at the op and fails.
using Kernel =
    std::function<LogicalResult(Operation *op, ArrayRef<Tensor> operands,
                                SmallVectorImpl<Tensor> &results)>;

/// Kernels by op.
class KernelRegistry {
public:
  template <typename OpTy> void add(Kernel kernel) {
    kernels[TypeID::get<OpTy>()] = std::move(kernel);
  }
  const Kernel *lookup(Operation *op) const;

private:
  llvm::DenseMap<TypeID, Kernel> kernels;
};

/// The registry holding every family's kernels (built once).
const KernelRegistry &getKernelRegistry();

/// Families register their kernels here (one file each).
void registerElementwiseKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerNNKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerTrainingKernels(KernelRegistry &registry);

/// The learning rate at optimizer step k (1-based) under a schedule `kind`
/// (0 constant, 1 linear, 2 cosine), as REFERENCE.md defines it.
double scheduledLearningRate(double lr, int64_t k, int64_t warmup,
                             int64_t total, double minLr, int64_t kind);

/// Most elements a single result may have (guards memory on hostile input).
constexpr int64_t kMaxElements = int64_t(1) << 27;

/// Multiply-adds (or window visits) evaluating `op` would take, for the ops
/// whose work grows faster than their operands and results (contractions,
/// convolutions, pooling); the result size for the others. Callers that fold
/// constants bound it, so a hostile model cannot make them run for hours.
int64_t estimateWork(Operation *op);

/// Most work folding may spend on one op.
constexpr int64_t kMaxFoldWork = int64_t(1) << 26;

/// Evaluates one op on operand values.
FailureOr<SmallVector<Tensor>> evaluateOp(Operation *op,
                                          ArrayRef<Tensor> operands);

/// Runs `func` on `arguments` (one per function argument, matching types).
FailureOr<SmallVector<Tensor>> interpretFunction(func::FuncOp func,
                                                 ArrayRef<Tensor> arguments);

/// Makes a tensor of `type` whose elements are written later.
Tensor makeResult(Type type);

} // namespace mlir::dtg::interp

#endif // DTC_DIALECTS_DTG_INTERP_INTERPRETER_H
