//===- InPlace.cpp - which results may be written over an operand ---------===//

#include "passes/Memory/InPlace.h"

#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

using namespace mlir;

/// Bytes of one element of `type` (i1 takes a byte), or 0 when `type` is not
/// a statically shaped tensor of integers or floats.
static int64_t elementBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return 0;
  Type e = tensor.getElementType();
  return e.isInteger(1) ? 1 : (e.getIntOrFloatBitWidth() + 7) / 8;
}

/// True if each element of `a` and of `b` lies at the same bytes: the same
/// static shape and the same element byte width.
static bool sameLayout(Value a, Value b) {
  int64_t bytes = elementBytes(a.getType());
  return bytes > 0 && bytes == elementBytes(b.getType()) &&
         cast<RankedTensorType>(a.getType()).getShape() ==
             cast<RankedTensorType>(b.getType()).getShape();
}

/// A `loop` fusion reads an operand of the iteration shape at the position
/// it writes, unless a view (transpose, slice, reshape) inside the kernel
/// reads it at other positions: then each output element depends, of that
/// operand, only on the element at its position.
static bool loopKernelReadsInPlace(dtg::FusionOp fusion, unsigned operand) {
  if (fusion.getKind() != "loop" || fusion.getBody().empty())
    return false;
  BlockArgument arg = fusion.getBody().front().getArgument(operand);
  return llvm::none_of(
      arg.getUsers(), [](Operation *user) { return dtg::isFusibleView(user); });
}

bool mlir::dtc::memory::mayWriteOver(Operation *op, unsigned result,
                                     unsigned operand) {
  // An all-reduce's future: the runtime copies the operand into it when
  // the reduction starts and reduces it there.
  if (isa<dist::AllReduceStartOp>(op))
    return result == 0 && operand == 0;
  if (result >= op->getNumResults() || operand >= op->getNumOperands() ||
      !sameLayout(op->getOperand(operand), op->getResult(result)))
    return false;
  if (auto fusion = dyn_cast<dtg::FusionOp>(op))
    return loopKernelReadsInPlace(fusion, operand);
  if (op->getNumRegions() > 0)
    return false;
  // y[i] = f(x[i]).
  if (op->hasTrait<OpTrait::Elementwise>() &&
      isa<dtg::DTGDialect>(op->getDialect()))
    return true;
  // r[i] = f(a[i], b[j]), the operand not broadcast (sameLayout).
  if (isa<dtg::AddOp, dtg::SubOp, dtg::MulOp, dtg::DivOp, dtg::PowOp,
          dtg::MaxOp, dtg::MinOp, dtg::ModOp, dtg::AndOp, dtg::OrOp, dtg::XorOp,
          dtg::EqualOp, dtg::LessOp, dtg::LessEqualOp, dtg::GreaterOp,
          dtg::GreaterEqualOp, dtg::WhereOp>(op))
    return true;
  // y[i] = x[i] scaled or zeroed.
  if (isa<dtg::DropoutOp, dtg::TriluOp>(op))
    return result == 0 && operand == 0;
  // y[i] = data[i] or some updates[j].
  if (isa<dtg::ScatterElementsOp>(op))
    return result == 0 && operand == 0;
  // Element k of each new tensor from element k of the old ones.
  if (isa<dtg::SgdUpdateOp>(op))
    return operand <= 2; // param, grad, momentum_buffer
  if (isa<dtg::AdamWUpdateOp>(op))
    return operand <= 3; // param, grad, exp_avg, exp_avg_sq
  return false;
}
