//===- KernelsNN.cpp - interpreter kernels of the NN family ------------===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

void mlir::dtg::interp::registerNNKernels(KernelRegistry &registry) {}
