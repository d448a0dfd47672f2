//===- Passes.h - activation recomputation --------------------------*- C++
//-*-===//

#ifndef DTC_PASSES_RECOMPUTE_PASSES_H
#define DTC_PASSES_RECOMPUTE_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Recompute/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Recompute/Passes.h.inc"

/// Attribute names the recompute pass sets.
namespace recompute {
/// Unit attribute on every op the backward recomputes (a clone of a forward
/// op).
constexpr StringLiteral kRecompute = "dtg.recompute";
/// The mode on the module (StringAttr: none, full, selective or auto).
constexpr StringLiteral kMode = "dtc.recompute";
/// The FLOPs (cost model) the recomputed ops add, one call of each function
/// summed, on the module (FloatAttr).
constexpr StringLiteral kFlops = "dtc.recompute_flops";
} // namespace recompute

} // namespace mlir::dtc

#endif // DTC_PASSES_RECOMPUTE_PASSES_H
