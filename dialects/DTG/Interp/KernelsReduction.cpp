//===- KernelsReduction.cpp - interpreter kernels of the Reduction family ------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

void mlir::dtg::interp::registerReductionKernels(KernelRegistry &registry) {}
