//===- FoldConstants.cpp - evaluate ops on constants with the interpreter -===//

#include "passes/Cleanup/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dtc-fold-constants"

namespace mlir::dtc {
#define GEN_PASS_DEF_FOLDCONSTANTSPASS
#include "passes/Cleanup/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
struct FoldConstantsPass
    : public dtc::impl::FoldConstantsPassBase<FoldConstantsPass> {
  using FoldConstantsPassBase::FoldConstantsPassBase;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<dtg::DTGDialect>(op->getDialect()) && !isa<dtg::ConstantOp>(op))
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      // Dropout's mask belongs to the step; an op without a kernel cannot
      // be evaluated (the interpreter reports that when it runs the op).
      if (isa<dtg::DropoutOp>(op) ||
          !dtg::interp::getKernelRegistry().lookup(op) ||
          dtg::interp::estimateWork(op) > dtg::interp::kMaxFoldWork)
        continue;
      SmallVector<dtg::interp::Tensor> operands;
      bool allConstant = true;
      for (Value v : op->getOperands()) {
        auto constant = v.getDefiningOp<dtg::ConstantOp>();
        if (!constant) {
          allConstant = false;
          break;
        }
        FailureOr<dtg::interp::Tensor> t =
            dtg::interp::tensorFromAttr(constant.getValue());
        if (failed(t)) {
          allConstant = false;
          break;
        }
        operands.push_back(std::move(*t));
      }
      if (!allConstant)
        continue;
      int64_t elements = 0;
      for (Type type : op->getResultTypes())
        elements += cast<RankedTensorType>(type).getNumElements();
      if (elements > maxElements)
        continue;
      FailureOr<SmallVector<dtg::interp::Tensor>> results =
          dtg::interp::evaluateOp(op, operands);
      if (failed(results))
        return signalPassFailure();
      LLVM_DEBUG(llvm::dbgs() << "folding " << op->getName() << "\n");
      OpBuilder builder(op);
      for (auto [value, tensor] : llvm::zip(op->getResults(), *results))
        value.replaceAllUsesWith(builder.create<dtg::ConstantOp>(
            op->getLoc(), dtg::interp::tensorToAttr(tensor)));
      op->erase();
    }
  }
};
} // namespace
