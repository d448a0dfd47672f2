//===- DistDialect.cpp - dist dialect registration -----------------------===//

#include "dialects/Dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dist;

#include "dialects/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Dist/IR/DistOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "dialects/Dist/IR/DistOps.cpp.inc"
