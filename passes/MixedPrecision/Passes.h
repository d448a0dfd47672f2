//===- Passes.h - mixed precision -----------------------------------*- C++
//-*-===//

#ifndef DTC_PASSES_MIXEDPRECISION_PASSES_H
#define DTC_PASSES_MIXEDPRECISION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtg {
class DTGDialect;
} // namespace mlir::dtg

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/MixedPrecision/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/MixedPrecision/Passes.h.inc"

/// The module attribute naming the step's precision ("fp32", "bf16" or
/// "fp16"); absent means fp32.
constexpr StringLiteral kPrecisionAttr = "dtc.precision";

} // namespace mlir::dtc

#endif // DTC_PASSES_MIXEDPRECISION_PASSES_H
