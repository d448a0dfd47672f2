//===- Passes.h - communication scheduling ----------------------*- C++ -*-===//

#ifndef DTC_PASSES_COMMSCHEDULING_PASSES_H
#define DTC_PASSES_COMMSCHEDULING_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/CommScheduling/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/CommScheduling/Passes.h.inc"

} // namespace mlir::dtc

#endif // DTC_PASSES_COMMSCHEDULING_PASSES_H
