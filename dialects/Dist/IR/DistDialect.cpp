//===- DistDialect.cpp - dist dialect registration -----------------------===//
//
// Registers the dist ops, attributes and types, and checks the discardable
// dist.* attributes other ops carry.
//
//===----------------------------------------------------------------------===//

#include "dialects/Dist/IR/DistOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dist;

#include "dialects/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Dist/IR/DistOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  if (attribute.getName() != kScheduleAttrName)
    return op->emitError() << "unknown attribute '"
                           << attribute.getName().getValue()
                           << "' of the dist dialect on an operation";
  if (!isa<ScheduleAttr>(attribute.getValue()))
    return op->emitError() << "'" << kScheduleAttrName
                           << "' must be a #dist.schedule, not "
                           << attribute.getValue();
  return success();
}

/// Checks a `dist.sharding` on argument or result `index` (`what` says
/// which) of a function whose value has type `type` (null when unknown).
static LogicalResult verifyValueSharding(Operation *op,
                                         NamedAttribute attribute,
                                         StringRef what, unsigned index,
                                         Type type) {
  if (attribute.getName() != DistDialect::kShardingAttrName)
    return op->emitError() << "unknown attribute '"
                           << attribute.getName().getValue()
                           << "' of the dist dialect on " << what << " "
                           << index;
  auto sharding = dyn_cast<ShardingAttr>(attribute.getValue());
  if (!sharding)
    return op->emitError() << "'" << DistDialect::kShardingAttrName << "' of "
                           << what << " " << index
                           << " must be a #dist.sharding, not "
                           << attribute.getValue();
  if (!type)
    return success();
  FailureOr<MeshAttr> mesh = lookupMesh(op, sharding.getMesh());
  if (failed(mesh))
    return failure();
  return sharding.verifyFor(*mesh, type, [&] {
    return op->emitError() << "'" << DistDialect::kShardingAttrName << "' of "
                           << what << " " << index << ": ";
  });
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op)) {
    if (regionIndex == 0 && argIndex < function.getNumArguments())
      type = function.getArgumentTypes()[argIndex];
  } else if (regionIndex < op->getNumRegions() &&
             !op->getRegion(regionIndex).empty() &&
             argIndex < op->getRegion(regionIndex).getNumArguments()) {
    type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  }
  return verifyValueSharding(op, attribute, "argument", argIndex, type);
}

LogicalResult
DistDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                         unsigned resultIndex,
                                         NamedAttribute attribute) {
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    if (regionIndex == 0 && resultIndex < function.getNumResults())
      type = function.getResultTypes()[resultIndex];
  return verifyValueSharding(op, attribute, "result", resultIndex, type);
}
