//===- Interpreter.cpp - reference interpreter of the dtg dialect --------===//

#include "dialects/DTG/Interp/Interpreter.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::dtg::interp;

const Kernel *KernelRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = kernels.find(name->getTypeID());
  return it == kernels.end() ? nullptr : &it->second;
}

const KernelRegistry &mlir::dtg::interp::getKernelRegistry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerShapeKernels(r);
    registerNNKernels(r);
    registerReductionKernels(r);
    return r;
  }();
  return registry;
}

Tensor mlir::dtg::interp::makeResult(Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  return Tensor::zeros(tensorType.getElementType(), tensorType.getShape());
}

FailureOr<SmallVector<Tensor>> mlir::dtg::interp::evaluateOp(
    Operation *op, ArrayRef<Tensor> operands) {
  if (auto constant = dyn_cast<dtg::ConstantOp>(op)) {
    FailureOr<Tensor> value = tensorFromAttr(constant.getValue());
    if (failed(value))
      return op->emitError("the interpreter cannot hold constants of type ")
             << constant.getType();
    return SmallVector<Tensor>{std::move(*value)};
  }
  for (Type type : op->getResultTypes()) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !tensorType.hasStaticShape())
      return op->emitError("the interpreter needs statically shaped tensors");
    if (!isSupportedElementType(tensorType.getElementType()))
      return op->emitError("the interpreter does not hold element type ")
             << tensorType.getElementType();
    if (tensorType.getNumElements() > kMaxElements)
      return op->emitError("result of ")
             << tensorType.getNumElements()
             << " elements is more than the interpreter holds (" << kMaxElements
             << ")";
  }
  const Kernel *kernel = getKernelRegistry().lookup(op);
  if (!kernel)
    return op->emitError("the interpreter has no kernel for '")
           << op->getName() << "'";
  SmallVector<Tensor> results;
  if (failed((*kernel)(op, operands, results)))
    return failure();
  return results;
}

FailureOr<SmallVector<Tensor>> mlir::dtg::interp::interpretFunction(
    func::FuncOp func, ArrayRef<Tensor> arguments) {
  if (func.isExternal())
    return func.emitError("cannot interpret a function without a body");
  Block &body = func.getBody().front();
  if (arguments.size() != body.getNumArguments())
    return func.emitError("expected ")
           << body.getNumArguments() << " arguments, got " << arguments.size();
  llvm::DenseMap<Value, Tensor> values;
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), arguments)) {
    if (arg.getType() != tensor.getType())
      return func.emitError("argument #")
             << arg.getArgNumber() << " has type " << tensor.getType()
             << ", expected " << arg.getType();
    values[arg] = tensor;
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Tensor> results;
      for (Value v : ret.getOperands())
        results.push_back(values.lookup(v));
      return results;
    }
    SmallVector<Tensor> operands;
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end())
        return op.emitError("operand is not defined before its use");
      operands.push_back(it->second);
    }
    FailureOr<SmallVector<Tensor>> results = evaluateOp(&op, operands);
    if (failed(results))
      return failure();
    if (results->size() != op.getNumResults())
      return op.emitError("kernel produced the wrong number of results");
    for (auto [value, tensor] : llvm::zip(op.getResults(), *results)) {
      if (tensor.getType() != value.getType())
        return op.emitError("kernel produced ")
               << tensor.getType() << " for a result of type "
               << value.getType();
      values[value] = std::move(tensor);
    }
    // Free values whose last use was this op.
    for (Value v : op.getOperands()) {
      bool live = llvm::any_of(v.getUsers(), [&](Operation *user) {
        return user->getBlock() == &body && op.isBeforeInBlock(user);
      });
      if (!live)
        values.erase(v);
    }
  }
  return func.emitError("function has no return");
}
