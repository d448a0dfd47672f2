//===- DistAttrs.h - dist dialect, attributes and types ---------*- C++ -*-===//
//
// The dist dialect class, its enums, attributes (#dist.mesh, #dist.sharding,
// #dist.schedule) and types (!dist.future).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DIST_IR_DISTATTRS_H
#define DTC_DIALECTS_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/Hashing.h"

#include "dialects/Dist/IR/DistDialect.h.inc"
#include "dialects/Dist/IR/DistEnums.h.inc"

namespace mlir {
namespace dist {

/// One named axis of a device mesh.
struct MeshAxis {
  /// The axis name ("dp", "tp", "pp", ...).
  StringAttr name;
  /// The number of ranks along the axis.
  int64_t size;

  bool operator==(const MeshAxis &other) const {
    return name == other.name && size == other.size;
  }
};

/// Hashes a mesh axis (for attribute uniquing).
inline llvm::hash_code hash_value(const MeshAxis &axis) {
  return llvm::hash_combine(axis.name, axis.size);
}

/// The resource that communication ops read and write, which keeps them in
/// program order with respect to each other.
struct CommResource : public SideEffects::Resource::Base<CommResource> {
  StringRef getName() final { return "dist.comm"; }
};

} // namespace dist
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "dialects/Dist/IR/DistAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Dist/IR/DistTypes.h.inc"

#endif // DTC_DIALECTS_DIST_IR_DISTATTRS_H
