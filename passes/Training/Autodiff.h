//===- Autodiff.h - reverse-mode differentiation of dtg functions ---*- C++
//-*-===//
//
// The reverse sweep walks a function's ops backwards and asks each op's
// gradient rule for the gradients of its operands given the gradients of its
// results. Rules live next to their op family (Gradients*.cpp) and build
// ordinary dtg ops, so a differentiated function is again a dtg function that
// the interpreter runs and every later pass handles.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_TRAINING_AUTODIFF_H
#define DTC_PASSES_TRAINING_AUTODIFF_H

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::dtc {

/// What a gradient rule builds with.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  OpBuilder &builder;
  Location loc;

  /// Builds an op whose result types are inferred.
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    return builder.create<OpTy>(loc, std::forward<Args>(args)...)->getResult(0);
  }
  /// A rank-0 constant of `elementType`.
  Value scalar(Type elementType, double value);
  /// A tensor of `type` filled with `value`.
  Value splat(RankedTensorType type, double value);
  Value zerosLike(Value value);
  /// dtg.reshape to `shape` (no-op if it has it).
  Value reshape(Value value, ArrayRef<int64_t> shape);
  /// dtg.broadcast to `type`'s shape (no-op if it has it).
  Value broadcastTo(Value value, ArrayRef<int64_t> shape);
  /// dtg.cast to `elementType` (no-op if it has it).
  Value castTo(Value value, Type elementType);
  /// Sums `grad` (of a broadcast result) down to `shape`, the shape of the
  /// operand that was broadcast: the gradient of NumPy broadcasting.
  Value unbroadcast(Value grad, ArrayRef<int64_t> shape);
  /// Sums over `axes` keeping them (size 1).
  Value sumKeep(Value value, ArrayRef<int64_t> axes);
};

/// Computes operand gradients of `op` from result gradients. A null result
/// gradient means zero. Sets a null operand gradient where the operand has
/// none (integers, masks) or it is zero. Fails with an error at the op if the
/// op cannot be differentiated (for this attribute value, say).
using GradientRule = std::function<LogicalResult(
    Operation *op, ArrayRef<Value> resultGrads, GradientBuilder &b,
    SmallVectorImpl<Value> &operandGrads)>;

/// Gradient rules by op.
class GradientRegistry {
public:
  template <typename OpTy> void add(GradientRule rule) {
    rules[TypeID::get<OpTy>()] = std::move(rule);
  }
  const GradientRule *lookup(Operation *op) const;

private:
  llvm::DenseMap<TypeID, GradientRule> rules;
};

/// The registry holding every family's rules.
const GradientRegistry &getGradientRegistry();

void registerElementwiseGradients(GradientRegistry &registry);
void registerShapeGradients(GradientRegistry &registry);
void registerNNGradients(GradientRegistry &registry);
void registerReductionGradients(GradientRegistry &registry);
void registerDistGradients(GradientRegistry &registry);

/// True for element types that carry gradients (floats).
bool isDifferentiable(Type type);

/// Appends to `func`'s body, before its terminator, the reverse sweep of
/// `loss` (a scalar float value of the body) seeded with `seed` (a scalar of
/// the loss type; null means 1), and returns the gradient of each of `wrt`
/// (values of the body, typically arguments); a zero tensor where the loss
/// does not depend on one.
FailureOr<SmallVector<Value>> buildGradients(func::FuncOp func, Value loss,
                                             Value seed, ArrayRef<Value> wrt);

} // namespace mlir::dtc

#endif // DTC_PASSES_TRAINING_AUTODIFF_H
