//===- Passes.h - kernel fusion --------------------------------------*- C++
//-*-===//

#ifndef DTC_PASSES_FUSION_PASSES_H
#define DTC_PASSES_FUSION_PASSES_H

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Fusion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Fusion/Passes.h.inc"

} // namespace mlir::dtc

#endif // DTC_PASSES_FUSION_PASSES_H
