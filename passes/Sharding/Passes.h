//===- Passes.h - sharding and partitioning -------------------------*- C++
//-*-===//

#ifndef DTC_PASSES_SHARDING_PASSES_H
#define DTC_PASSES_SHARDING_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dist {
class DistDialect;
} // namespace mlir::dist

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Sharding/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Sharding/Passes.h.inc"

namespace sharding {
/// The mesh symbol the partitioned program refers to.
constexpr StringLiteral kMeshName = "mesh";
/// On a step argument or result of the partitioned (per-rank) program: the
/// #dist.sharding of the whole tensor its local value is a block of. (Not a
/// `dist.` attribute: the dist dialect checks those against the local
/// type, as shardings of the global program.)
constexpr StringLiteral kSharding = "dtc.sharding";
/// The ZeRO stage, on the module (IntegerAttr).
constexpr StringLiteral kZero = "dtc.zero";
} // namespace sharding

} // namespace mlir::dtc

#endif // DTC_PASSES_SHARDING_PASSES_H
