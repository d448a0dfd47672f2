//===- Passes.h - training-step construction passes -----------------*- C++
//-*-===//

#ifndef DTC_PASSES_TRAINING_PASSES_H
#define DTC_PASSES_TRAINING_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtg {
class DTGDialect;
} // namespace mlir::dtg

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Training/Passes.h.inc"

} // namespace mlir::dtc

#endif // DTC_PASSES_TRAINING_PASSES_H
