//===- KernelsShape.cpp - interpreter kernels of the Shape family ------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

void mlir::dtg::interp::registerShapeKernels(KernelRegistry &registry) {}
