//===- DTGDialect.cpp - dtg dialect registration -------------------------===//

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtg;

#include "dialects/DTG/IR/DTGDialect.cpp.inc"

void DTGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/DTG/IR/DTGOps.cpp.inc"
      >();
}

Operation *DTGDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}
