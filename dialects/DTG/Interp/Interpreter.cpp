//===- Interpreter.cpp - reference interpreter of the dtg dialect --------===//

#include "dialects/DTG/Interp/Interpreter.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::dtg::interp;

const Kernel *KernelRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = kernels.find(name->getTypeID());
  return it == kernels.end() ? nullptr : &it->second;
}

/// Runs `body` with its arguments bound to `arguments` and the values of
/// enclosing regions visible through `outer`; returns the terminator's
/// operand values. Handles dtg ops (dtg.fusion by its region),
/// arith.constant, scf.for and func.call.
static FailureOr<SmallVector<Tensor>>
runBlock(Block &body, ArrayRef<Tensor> arguments,
         const llvm::DenseMap<Value, Tensor> *outer, unsigned depth);

const KernelRegistry &mlir::dtg::interp::getKernelRegistry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerShapeKernels(r);
    registerNNKernels(r);
    registerReductionKernels(r);
    registerTrainingKernels(r);
    // A fused kernel means what its region computes.
    r.add<dtg::FusionOp>([](Operation *op, ArrayRef<Tensor> operands,
                            SmallVectorImpl<Tensor> &results) {
      Block &body = cast<dtg::FusionOp>(op).getBody().front();
      if (operands.size() != body.getNumArguments())
        return LogicalResult(op->emitError("expected ")
                             << body.getNumArguments() << " operands");
      FailureOr<SmallVector<Tensor>> values =
          runBlock(body, operands, nullptr, 1);
      if (failed(values))
        return failure();
      results.append(values->begin(), values->end());
      return success();
    });
    return r;
  }();
  return registry;
}

Tensor mlir::dtg::interp::makeResult(Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  return Tensor::zeros(tensorType.getElementType(), tensorType.getShape());
}

int64_t mlir::dtg::interp::estimateWork(Operation *op) {
  auto elements = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getNumElements();
  };
  auto volume = [](ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n = d > 0 && n > (int64_t(1) << 62) / d ? (int64_t(1) << 62) : n * d;
    return n;
  };
  int64_t results = 0;
  for (Value r : op->getResults())
    results += elements(r);
  auto times = [&](int64_t a, int64_t b) { return volume({a, b}); };
  if (auto mm = dyn_cast<MatMulOp>(op))
    return times(results, mm.getLhs().getType().getShape().back());
  if (auto gemm = dyn_cast<GemmOp>(op))
    return times(results,
                 gemm.getA().getType().getDimSize(gemm.getTransA() ? 0 : 1));
  if (auto conv = dyn_cast<ConvOp>(op))
    return times(results,
                 volume(conv.getWeight().getType().getShape().drop_front()));
  if (isa<ConvInputGradOp, ConvWeightGradOp>(op))
    return times(
        volume(cast<RankedTensorType>(op->getOperand(0).getType()).getShape()),
        volume(cast<RankedTensorType>(op->getOperand(1).getType())
                   .getShape()
                   .drop_front()));
  if (auto pool = dyn_cast<MaxPoolOp>(op))
    return times(results, volume(pool.getKernel()));
  if (auto pool = dyn_cast<AvgPoolOp>(op))
    return times(results, volume(pool.getKernel()));
  if (auto grad = dyn_cast<MaxPoolGradOp>(op))
    return times(elements(grad->getOperand(0)), volume(grad.getKernel()));
  if (auto grad = dyn_cast<AvgPoolGradOp>(op))
    return times(elements(grad->getOperand(0)), volume(grad.getKernel()));
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    int64_t work = 1;
    for (Value v : einsum.getInputs())
      work = times(work, elements(v));
    return work;
  }
  return results;
}

FailureOr<SmallVector<Tensor>>
mlir::dtg::interp::evaluateOp(Operation *op, ArrayRef<Tensor> operands) {
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

/// Checks that a computed value fits the SSA value's type (tensors, or the
/// scalar index/integer values of loops).
static bool fitsType(const Tensor &tensor, Value value) {
  if (isa<RankedTensorType>(value.getType()))
    return tensor.getType() == value.getType();
  return tensor.elementType == value.getType() && tensor.shape.empty();
}

static FailureOr<SmallVector<Tensor>>
evaluateStructured(Operation &op, ArrayRef<Tensor> operands,
                   const llvm::DenseMap<Value, Tensor> &values,
                   unsigned depth) {
  if (depth > 64)
    return op.emitError("calls nest deeper than 64");
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto typed = dyn_cast<TypedAttr>(constant.getValue());
    Type type = constant.getType();
    Tensor t;
    t.elementType = type;
    if (auto intAttr = dyn_cast<IntegerAttr>(typed))
      t.i = {intAttr.getValue().getSExtValue()};
    else if (auto floatAttr = dyn_cast<FloatAttr>(typed))
      t.f = {floatAttr.getValueAsDouble()};
    else
      return op.emitError("the interpreter handles scalar arith.constant only");
    return SmallVector<Tensor>{std::move(t)};
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    int64_t lb = operands[0].i[0], ub = operands[1].i[0],
            step = operands[2].i[0];
    if (step <= 0)
      return loop.emitError("loop step must be positive");
    SmallVector<Tensor> carried(operands.begin() + 3, operands.end());
    for (int64_t iv = lb; iv < ub; iv += step) {
      Tensor index;
      index.elementType = loop.getInductionVar().getType();
      index.i = {iv};
      SmallVector<Tensor> args{index};
      llvm::append_range(args, carried);
      FailureOr<SmallVector<Tensor>> next =
          runBlock(*loop.getBody(), args, &values, depth + 1);
      if (failed(next))
        return failure();
      carried = std::move(*next);
    }
    return carried;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return call.emitError("cannot interpret a call to '")
             << call.getCallee() << "'";
    return runBlock(callee.getBody().front(), operands, nullptr, depth + 1);
  }
  return evaluateOp(&op, operands);
}

static FailureOr<SmallVector<Tensor>>
runBlock(Block &body, ArrayRef<Tensor> arguments,
         const llvm::DenseMap<Value, Tensor> *outer, unsigned depth) {
  llvm::DenseMap<Value, Tensor> values;
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), arguments))
    values[arg] = tensor;
  auto lookup = [&](Value v) -> const Tensor * {
    auto it = values.find(v);
    if (it != values.end())
      return &it->second;
    if (outer) {
      auto outerIt = outer->find(v);
      if (outerIt != outer->end())
        return &outerIt->second;
    }
    return nullptr;
  };
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      SmallVector<Tensor> results;
      for (Value v : op.getOperands()) {
        const Tensor *t = lookup(v);
        if (!t)
          return op.emitError("returned value is not defined");
        results.push_back(*t);
      }
      return results;
    }
    SmallVector<Tensor> operands;
    for (Value v : op.getOperands()) {
      const Tensor *t = lookup(v);
      if (!t)
        return op.emitError("operand is not defined before its use");
      operands.push_back(*t);
    }
    // Loops see the values of this block (and those it sees).
    llvm::DenseMap<Value, Tensor> visible;
    const llvm::DenseMap<Value, Tensor> *scope = &values;
    if (outer && op.getNumRegions() > 0) {
      visible = *outer;
      for (auto &entry : values)
        visible[entry.first] = entry.second;
      scope = &visible;
    }
    FailureOr<SmallVector<Tensor>> results =
        evaluateStructured(op, operands, *scope, depth);
    if (failed(results))
      return failure();
    if (results->size() != op.getNumResults())
      return op.emitError("kernel produced the wrong number of results");
    for (auto [value, tensor] : llvm::zip(op.getResults(), *results)) {
      if (!fitsType(tensor, value))
        return op.emitError("kernel produced ")
               << tensor.getType() << " for a result of type "
               << value.getType();
      values[value] = std::move(tensor);
    }
    // Free values whose last use in this block was this op (values used by
    // nested regions stay until the op holding the region).
    for (Value v : op.getOperands()) {
      if (v.getParentBlock() != &body)
        continue;
      bool live = llvm::any_of(v.getUsers(), [&](Operation *user) {
        Operation *ancestor = body.findAncestorOpInBlock(*user);
        return ancestor && ancestor != &op && op.isBeforeInBlock(ancestor);
      });
      if (!live)
        values.erase(v);
    }
  }
  return body.getParentOp()->emitError("block has no terminator");
}

FailureOr<SmallVector<Tensor>>
mlir::dtg::interp::interpretFunction(func::FuncOp func,
                                     ArrayRef<Tensor> arguments) {
  if (func.isExternal())
    return func.emitError("cannot interpret a function without a body");
  Block &body = func.getBody().front();
  if (arguments.size() != body.getNumArguments())
    return func.emitError("expected ")
           << body.getNumArguments() << " arguments, got " << arguments.size();
  for (auto [arg, tensor] : llvm::zip(body.getArguments(), arguments))
    if (!fitsType(tensor, arg))
      return func.emitError("argument #")
             << arg.getArgNumber() << " has type " << tensor.getType()
             << ", expected " << arg.getType();
  return runBlock(body, arguments, nullptr, 0);
}
