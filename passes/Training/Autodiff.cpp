//===- Autodiff.cpp - reverse-mode differentiation of dtg functions ------===//

#include "passes/Training/Autodiff.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dtc-autodiff"

using namespace mlir;
using namespace mlir::dtc;

//===----------------------------------------------------------------------===//
// GradientBuilder
//===----------------------------------------------------------------------===//

Value GradientBuilder::scalar(Type elementType, double value) {
  return splat(RankedTensorType::get({}, elementType), value);
}

Value GradientBuilder::splat(RankedTensorType type, double value) {
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(type.getElementType()))
    element = builder.getFloatAttr(floatType, value);
  else
    element = builder.getIntegerAttr(type.getElementType(),
                                     static_cast<int64_t>(value));
  return builder.create<dtg::ConstantOp>(loc,
                                         DenseElementsAttr::get(type, element));
}

Value GradientBuilder::zerosLike(Value value) {
  return splat(cast<RankedTensorType>(value.getType()), 0.0);
}

Value GradientBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return builder.create<dtg::ReshapeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), value);
}

Value GradientBuilder::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return builder.create<dtg::BroadcastOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), value);
}

Value GradientBuilder::castTo(Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return builder.create<dtg::CastOp>(
      loc, RankedTensorType::get(type.getShape(), elementType), value);
}

Value GradientBuilder::sumKeep(Value value, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return value;
  return create<dtg::ReduceSumOp>(value, builder.getDenseI64ArrayAttr(axes),
                                  builder.getBoolAttr(true));
}

Value GradientBuilder::unbroadcast(Value grad, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(grad.getType());
  if (type.getShape() == shape)
    return grad;
  int64_t lead = type.getRank() - static_cast<int64_t>(shape.size());
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d < lead || (shape[d - lead] == 1 && type.getDimSize(d) != 1))
      axes.push_back(d);
  Value summed = sumKeep(grad, axes);
  return reshape(summed, shape);
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

const GradientRule *GradientRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = rules.find(name->getTypeID());
  return it == rules.end() ? nullptr : &it->second;
}

const GradientRegistry &mlir::dtc::getGradientRegistry() {
  static const GradientRegistry registry = [] {
    GradientRegistry r;
    registerElementwiseGradients(r);
    registerShapeGradients(r);
    registerNNGradients(r);
    registerReductionGradients(r);
    registerDistGradients(r);
    return r;
  }();
  return registry;
}

bool mlir::dtc::isDifferentiable(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  return tensorType && isa<FloatType>(tensorType.getElementType());
}

//===----------------------------------------------------------------------===//
// The reverse sweep
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Value>> mlir::dtc::buildGradients(func::FuncOp func,
                                                        Value loss, Value seed,
                                                        ArrayRef<Value> wrt) {
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  auto lossType = dyn_cast<RankedTensorType>(loss.getType());
  if (!lossType || lossType.getRank() != 0 || !isDifferentiable(lossType))
    return func.emitError("the loss must be a scalar float, got ")
           << loss.getType();

  // Values that depend on `wrt` (forward) and that the loss depends on
  // (backward) are active; only they get gradients.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  llvm::DenseSet<Value> fromWrt(wrt.begin(), wrt.end());
  for (Operation *op : forwardOps)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return fromWrt.contains(v); }))
      for (Value result : op->getResults())
        if (isDifferentiable(result.getType()))
          fromWrt.insert(result);
  llvm::DenseSet<Value> toLoss{loss};
  for (Operation *op : llvm::reverse(forwardOps))
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return toLoss.contains(v); }))
      for (Value operand : op->getOperands())
        toLoss.insert(operand);

  OpBuilder builder(terminator);
  llvm::DenseMap<Value, Value> grads;
  {
    GradientBuilder b(builder, loss.getLoc());
    grads[loss] = seed ? seed : b.scalar(lossType.getElementType(), 1.0);
  }
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      Value g = grads.lookup(result);
      resultGrads.push_back(g);
      any |= static_cast<bool>(g);
    }
    if (!any)
      continue;
    bool needed = llvm::any_of(op->getOperands(), [&](Value v) {
      return fromWrt.contains(v) && toLoss.contains(v) &&
             isDifferentiable(v.getType());
    });
    if (!needed)
      continue;
    const GradientRule *rule = getGradientRegistry().lookup(op);
    if (!rule)
      return op->emitError("'") << op->getName()
                                << "' has no gradient rule, but the loss "
                                   "depends on it through a parameter";
    GradientBuilder b(builder, op->getLoc());
    SmallVector<Value> operandGrads;
    if (failed((*rule)(op, resultGrads, b, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError("internal: gradient rule of '")
             << op->getName() << "' returned " << operandGrads.size()
             << " gradients for " << op->getNumOperands() << " operands";
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !fromWrt.contains(operand) ||
          !isDifferentiable(operand.getType()))
        continue;
      if (g.getType() != operand.getType())
        return op->emitError("internal: gradient rule of '")
               << op->getName() << "' gave " << g.getType()
               << " for an operand of type " << operand.getType();
      Value &acc = grads[operand];
      acc = acc ? b.create<dtg::AddOp>(acc, g) : g;
    }
  }
  SmallVector<Value> results;
  GradientBuilder b(builder, func.getLoc());
  for (Value v : wrt) {
    Value g = grads.lookup(v);
    results.push_back(g ? g : b.zerosLike(v));
  }
  return results;
}
