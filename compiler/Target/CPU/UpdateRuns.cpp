//===- UpdateRuns.cpp - optimizer updates one multi-tensor kernel can take ===//

#include "compiler/Target/CPU/UpdateRuns.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "passes/Memory/Passes.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

std::pair<Value, Value> mlir::dtc::cpu::scaledOperands(Operation *mul) {
  Value a = mul->getOperand(0), b = mul->getOperand(1);
  if (a.getType() == mul->getResult(0).getType())
    return {a, b};
  return {b, a};
}

namespace {

bool isUpdate(Operation *op) {
  return isa<dtg::SgdUpdateOp, dtg::AdamWUpdateOp>(op);
}

/// The hyperparameter operands: after param, grad and the state tensors.
OperandRange hyperOperands(Operation *update) {
  unsigned first = isa<dtg::SgdUpdateOp>(update) ? 3 : 4;
  return update->getOperands().drop_front(first);
}

/// Ops that emit no code: views of their operand (reshapes) and constants.
bool isSilent(Operation &op) {
  return op.hasAttr(mlir::dtc::memory::kAlias) || isa<dtg::ConstantOp>(op);
}

/// The next op after `op` that emits code, or null.
Operation *nextEmitted(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isSilent(*next))
      return next;
  return nullptr;
}

/// `v`, or the value it is a view of through silent single-use views.
Value throughViews(Value v) {
  while (Operation *def = v.getDefiningOp())
    if (def->hasAttr(mlir::dtc::memory::kAlias) && def->getNumOperands() == 1 &&
        def->getOperand(0).hasOneUse())
      v = def->getOperand(0);
    else
      break;
  return v;
}

/// `op` multiplies the gradient of `next` (directly or through views), and
/// nothing else uses it, by a one-element tensor of the same element type.
bool isFoldableScale(Operation *op, Operation *next) {
  if (!isa<dtg::MulOp>(op) || !next || !isUpdate(next) ||
      !op->getResult(0).hasOneUse() ||
      throughViews(next->getOperand(1)) != op->getResult(0))
    return false;
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  auto [grad, scale] = scaledOperands(op);
  auto scaleType = dyn_cast<RankedTensorType>(scale.getType());
  return grad.getType() == result && scaleType && scaleType.hasStaticShape() &&
         scaleType.getNumElements() == 1 &&
         scaleType.getElementType() == result.getElementType();
}

/// An update the kernel can take: results of the parameter's type, each
/// written directly into the function's results.
bool isBatchable(Operation *update, function_ref<bool(Value)> isDirect) {
  Type type = update->getOperand(0).getType();
  for (Value r : update->getResults())
    if (r.getType() != type || !isDirect(r))
      return false;
  return true;
}

} // namespace

std::vector<UpdateRun>
mlir::dtc::cpu::findUpdateRuns(Block &body,
                               function_ref<bool(Value)> isDirect) {
  std::vector<UpdateRun> runs;
  UpdateRun current;
  auto finish = [&] {
    if (current.updates.size() >= 2)
      runs.push_back(current);
    current = UpdateRun();
  };
  Operation *pendingScale = nullptr;
  for (Operation &op : body) {
    if (isSilent(op))
      continue;
    Operation *next = nextEmitted(&op);
    if (isFoldableScale(&op, next) && isBatchable(next, isDirect)) {
      pendingScale = &op;
      continue;
    }
    if (isUpdate(&op) && isBatchable(&op, isDirect)) {
      if (!current.updates.empty()) {
        Operation *first = current.updates.front();
        if (first->getName() != op.getName() ||
            getElementTypeOrSelf(first->getOperand(0)) !=
                getElementTypeOrSelf(op.getOperand(0)) ||
            !llvm::equal(hyperOperands(first), hyperOperands(&op)))
          finish();
      }
      current.updates.push_back(&op);
      current.scales.push_back(pendingScale);
      pendingScale = nullptr;
      continue;
    }
    finish();
    pendingScale = nullptr;
  }
  finish();
  return runs;
}
