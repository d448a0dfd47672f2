//===- DistOps.h - dist ops and the mesh lookup ---------------*- C++ -*-===//
//-*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTOPS_H
#define DTC_DIALECTS_DIST_IR_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Dist/IR/DistAttrs.h"

#include <array>

#define GET_OP_CLASSES
#include "dialects/Dist/IR/DistOps.h.inc"

namespace mlir {
namespace dist {

/// Resolves `meshRef` from `from` to the `dist.mesh` it names and returns its
/// mesh; emits an error at `from` (and returns failure) when it names none.
/// `symbolTables` caches the lookups of a verifier pass; without it the
/// symbol table is searched afresh.
FailureOr<MeshAttr> lookupMesh(Operation *from, FlatSymbolRefAttr meshRef,
                               SymbolTableCollection *symbolTables = nullptr);

/// The sizes of dtc's standard mesh axes pp, dp and tp, in that order, of
/// the first `dist.mesh` directly in `module`: 1 for an axis the mesh lacks,
/// all 1 without a mesh (a one-rank program).
std::array<int64_t, 3> getStandardMeshSizes(Operation *module);

} // namespace dist
} // namespace mlir

#endif // DTC_DIALECTS_DIST_IR_DISTOPS_H
