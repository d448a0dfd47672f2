//===- DTGOps.h - dtg dialect and ops -------------------------------*- C++
//-*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGOPS_H
#define DTC_DIALECTS_DTG_IR_DTGOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/DTG/IR/DTGDialect.h.inc"
#include "dialects/DTG/IR/DTGShapeInference.h"

#define GET_OP_CLASSES
#include "dialects/DTG/IR/DTGOps.h.inc"

#endif // DTC_DIALECTS_DTG_IR_DTGOPS_H
