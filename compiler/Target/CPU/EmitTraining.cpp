//===- EmitTraining.cpp - CPU emission rules of optimizer dtg ops ---------===//
//
// sgd_update, adamw_update and lr_schedule: each becomes one call into
// runtime/include/dtcrt/kernels/Training.h (argument convention at the top
// of Elementwise.h). Hyperparameters are rank-0 run-time tensors, passed as
// pointers among the inputs, so a sweep never recompiles.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc::cpu;

namespace {

/// Emits `kernel(shape of operand 0, operands..., results...)`, the shape
/// shared by the operands and results of the same type as operand 0.
LogicalResult emitUpdate(StringRef kernel, Operation *op, KernelEmitter &e) {
  if (failed(e.checkTensors(op)))
    return failure();
  Type type = op->getOperand(0).getType();
  for (Value v : op->getResults())
    if (v.getType() != type)
      return op->emitError("results need the parameter's type");
  SmallVector<std::string> args = {e.shape(op->getOperand(0))};
  for (Value v : op->getOperands())
    args.push_back(e.buffer(v));
  for (Value v : op->getResults())
    args.push_back(e.buffer(v));
  e.call(kernel, args);
  return success();
}

} // namespace

void mlir::dtc::cpu::registerTrainingEmitters(EmitRegistry &registry) {
  // sgdUpdate(s, param, grad, buf, lr, momentum, dampening, weight_decay,
  //           nesterov, first_step, new_param, new_buf)
  registry.add<dtg::SgdUpdateOp>([](Operation *op, KernelEmitter &e) {
    return emitUpdate("sgdUpdate", op, e);
  });
  // adamWUpdate(s, param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps,
  //             weight_decay, step, new_param, new_exp_avg, new_exp_avg_sq)
  registry.add<dtg::AdamWUpdateOp>([](Operation *op, KernelEmitter &e) {
    return emitUpdate("adamWUpdate", op, e);
  });
  // lrSchedule(lr, step, warmup, total, min_lr, kind, result)
  registry.add<dtg::LrScheduleOp>(
      [](Operation *op, KernelEmitter &e) -> LogicalResult {
        if (failed(e.checkTensors(op)))
          return failure();
        SmallVector<std::string> args;
        for (Value v : op->getOperands())
          args.push_back(e.buffer(v));
        args.push_back(e.buffer(op->getResult(0)));
        e.call("lrSchedule", args);
        return success();
      });
}
