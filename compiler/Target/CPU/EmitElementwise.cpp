//===- EmitElementwise.cpp - CPU emission rules of elementwise dtg ops ----===//
//
// Each elementwise op becomes one call into runtime/include/dtcrt/kernels/
// Elementwise.h, `dtck::<kernel>(shapes..., inputs..., attributes...,
// outputs...)` (the convention at the top of that header); element types
// are deduced by the kernel templates from the typed buffers. The rules
// check what the kernels rely on (ranks that fit a dtck::Shape, C++ element
// types, operand shapes that broadcast to the result), so generated code
// never indexes out of bounds whatever the input.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/IR/DTGShapeInference.h"
#include "dialects/DTG/Interp/Tensor.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Registers `rule` for OpTy behind checkTensors.
template <typename OpTy> void add(EmitRegistry &registry, EmitRule rule) {
  registry.add<OpTy>([rule = std::move(rule)](
                         Operation *op, KernelEmitter &e) -> LogicalResult {
    if (failed(e.checkTensors(op)))
      return failure();
    return rule(op, e);
  });
}

/// A C++ literal of a float attribute.
std::string doubleArg(const APFloat &value) {
  return KernelEmitter::literal(value.convertToDouble());
}

/// Registers `kernel(shape, x, attributes..., y)` for a one-operand op whose
/// result has the operand's shape; `attrs` spells the attributes.
template <typename OpTy>
void addUnary(EmitRegistry &registry, StringRef kernel,
              std::function<SmallVector<std::string>(OpTy)> attrs = nullptr) {
  add<OpTy>(registry,
            [kernel = kernel.str(), attrs](Operation *op,
                                           KernelEmitter &e) -> LogicalResult {
              Value x = op->getOperand(0), y = op->getResult(0);
              if (dimsOf(x) != dimsOf(y))
                return op->emitError("operand and result shapes differ");
              SmallVector<std::string> args = {e.shape(y), e.buffer(x)};
              if (attrs)
                for (std::string &attr : attrs(cast<OpTy>(op)))
                  args.push_back(std::move(attr));
              args.push_back(e.buffer(y));
              e.call(kernel, args);
              return success();
            });
}

/// Registers `kernel(operand shapes..., result shape, operands...,
/// attributes..., result)` for an op whose operands broadcast to its result.
template <typename OpTy>
void addBroadcasting(
    EmitRegistry &registry, StringRef kernel,
    std::function<SmallVector<std::string>(OpTy)> attrs = nullptr) {
  add<OpTy>(registry,
            [kernel = kernel.str(), attrs](Operation *op,
                                           KernelEmitter &e) -> LogicalResult {
              Value y = op->getResult(0);
              SmallVector<std::string> args;
              for (Value operand : op->getOperands()) {
                if (!dtg::isBroadcastableTo(dimsOf(operand), dimsOf(y)))
                  return op->emitError(
                      "operand shape does not broadcast to the result");
                args.push_back(e.shape(operand));
              }
              args.push_back(e.shape(y));
              for (Value operand : op->getOperands())
                args.push_back(e.buffer(operand));
              if (attrs)
                for (std::string &attr : attrs(cast<OpTy>(op)))
                  args.push_back(std::move(attr));
              args.push_back(e.buffer(y));
              e.call(kernel, args);
              return success();
            });
}

} // namespace

CastKernel mlir::dtc::cpu::castKernel(Operation *op) {
  auto cast = llvm::cast<dtg::CastOp>(op);
  Type to = cast.getType().getElementType();
  if (dtg::interp::isInt4(to))
    return {"castToInt4",
            {to.isUnsignedInteger() ? "0" : "-8",
             to.isUnsignedInteger() ? "15" : "7"}};
  if (dtg::interp::isFloat8(to) && cast.getSaturate().value_or(true))
    return {"castSaturating", {}};
  return {"cast", {}};
}

void mlir::dtc::cpu::registerElementwiseEmitters(EmitRegistry &registry) {
  // Unary math: kernel(shape, x, y).
  addUnary<dtg::NegOp>(registry, "neg");
  addUnary<dtg::AbsOp>(registry, "abs");
  addUnary<dtg::SignOp>(registry, "sign");
  addUnary<dtg::ExpOp>(registry, "exp");
  addUnary<dtg::LogOp>(registry, "log");
  addUnary<dtg::SqrtOp>(registry, "sqrt");
  addUnary<dtg::RsqrtOp>(registry, "rsqrt");
  addUnary<dtg::ReciprocalOp>(registry, "reciprocal");
  addUnary<dtg::FloorOp>(registry, "floor");
  addUnary<dtg::CeilOp>(registry, "ceil");
  addUnary<dtg::RoundOp>(registry, "round");
  addUnary<dtg::SinOp>(registry, "sin");
  addUnary<dtg::CosOp>(registry, "cos");
  addUnary<dtg::TanOp>(registry, "tan");
  addUnary<dtg::AsinOp>(registry, "asin");
  addUnary<dtg::AcosOp>(registry, "acos");
  addUnary<dtg::AtanOp>(registry, "atan");
  addUnary<dtg::SinhOp>(registry, "sinh");
  addUnary<dtg::CoshOp>(registry, "cosh");
  addUnary<dtg::AsinhOp>(registry, "asinh");
  addUnary<dtg::AcoshOp>(registry, "acosh");
  addUnary<dtg::AtanhOp>(registry, "atanh");
  addUnary<dtg::TanhOp>(registry, "tanh");
  addUnary<dtg::ErfOp>(registry, "erf");
  addUnary<dtg::SigmoidOp>(registry, "sigmoid");
  addUnary<dtg::ReluOp>(registry, "relu");
  addUnary<dtg::SoftplusOp>(registry, "softplus");
  addUnary<dtg::SoftsignOp>(registry, "softsign");
  addUnary<dtg::NotOp>(registry, "logicalNot");
  // Element types are the buffers' (from and to deduced by the kernel).
  add<dtg::CastOp>(registry,
                   [](Operation *op, KernelEmitter &e) -> LogicalResult {
                     Value x = op->getOperand(0), y = op->getResult(0);
                     if (dimsOf(x) != dimsOf(y))
                       return op->emitError("operand and result shapes differ");
                     CastKernel kernel = castKernel(op);
                     SmallVector<std::string> args = {e.shape(y), e.buffer(x)};
                     args.append(kernel.attrs);
                     args.push_back(e.buffer(y));
                     e.call(kernel.name, args);
                     return success();
                   });

  // Activations and tests with attributes: kernel(shape, x, attrs..., y).
  addUnary<dtg::GeluOp>(registry, "gelu", [](dtg::GeluOp op) {
    return SmallVector<std::string>{
        KernelEmitter::literal(op.getApproximate())};
  });
  addUnary<dtg::LeakyReluOp>(registry, "leakyRelu", [](dtg::LeakyReluOp op) {
    return SmallVector<std::string>{doubleArg(op.getAlpha())};
  });
  addUnary<dtg::EluOp>(registry, "elu", [](dtg::EluOp op) {
    return SmallVector<std::string>{doubleArg(op.getAlpha())};
  });
  addUnary<dtg::CeluOp>(registry, "celu", [](dtg::CeluOp op) {
    return SmallVector<std::string>{doubleArg(op.getAlpha())};
  });
  addUnary<dtg::SeluOp>(registry, "selu", [](dtg::SeluOp op) {
    return SmallVector<std::string>{doubleArg(op.getAlpha()),
                                    doubleArg(op.getGamma())};
  });
  addUnary<dtg::HardSigmoidOp>(
      registry, "hardSigmoid", [](dtg::HardSigmoidOp op) {
        return SmallVector<std::string>{doubleArg(op.getAlpha()),
                                        doubleArg(op.getBeta())};
      });
  addUnary<dtg::ThresholdedReluOp>(
      registry, "thresholdedRelu", [](dtg::ThresholdedReluOp op) {
        return SmallVector<std::string>{doubleArg(op.getAlpha())};
      });
  addUnary<dtg::ClipOp>(registry, "clip", [](dtg::ClipOp op) {
    std::optional<APFloat> min = op.getMin(), max = op.getMax();
    return SmallVector<std::string>{
        KernelEmitter::literal(min.has_value()),
        KernelEmitter::literal(min ? min->convertToDouble() : 0.0),
        KernelEmitter::literal(max.has_value()),
        KernelEmitter::literal(max ? max->convertToDouble() : 0.0)};
  });
  addUnary<dtg::IsNanOp>(registry, "isNan");
  addUnary<dtg::IsInfOp>(registry, "isInf", [](dtg::IsInfOp op) {
    return SmallVector<std::string>{
        KernelEmitter::literal(op.getDetectNegative()),
        KernelEmitter::literal(op.getDetectPositive())};
  });

  // Broadcasting ops: kernel(sa, sb, sr, a, b, [attrs...,] r).
  addBroadcasting<dtg::AddOp>(registry, "add");
  addBroadcasting<dtg::SubOp>(registry, "sub");
  addBroadcasting<dtg::MulOp>(registry, "mul");
  addBroadcasting<dtg::DivOp>(registry, "div");
  addBroadcasting<dtg::PowOp>(registry, "pow");
  addBroadcasting<dtg::MaxOp>(registry, "max");
  addBroadcasting<dtg::MinOp>(registry, "min");
  addBroadcasting<dtg::ModOp>(registry, "mod", [](dtg::ModOp op) {
    return SmallVector<std::string>{KernelEmitter::literal(op.getFmod())};
  });
  addBroadcasting<dtg::AndOp>(registry, "logicalAnd");
  addBroadcasting<dtg::OrOp>(registry, "logicalOr");
  addBroadcasting<dtg::XorOp>(registry, "logicalXor");
  addBroadcasting<dtg::EqualOp>(registry, "equal");
  addBroadcasting<dtg::LessOp>(registry, "less");
  addBroadcasting<dtg::LessEqualOp>(registry, "lessEqual");
  addBroadcasting<dtg::GreaterOp>(registry, "greater");
  addBroadcasting<dtg::GreaterEqualOp>(registry, "greaterEqual");
  // where(sc, st, sf, sr, condition, on_true, on_false, r).
  addBroadcasting<dtg::WhereOp>(registry, "where");
}
