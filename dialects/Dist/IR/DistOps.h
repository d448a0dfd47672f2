//===- DistOps.h - dist dialect, attributes and ops -----------------*- C++ -*-===//

#ifndef DTC_DIALECTS_DIST_IR_DISTOPS_H
#define DTC_DIALECTS_DIST_IR_DISTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Dist/IR/DistDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Dist/IR/DistOps.h.inc"

#endif // DTC_DIALECTS_DIST_IR_DISTOPS_H
