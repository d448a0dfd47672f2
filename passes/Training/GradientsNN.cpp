//===- GradientsNN.cpp - gradient rules of the NN family -----------===//

#include "passes/Training/Autodiff.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtg;

void mlir::dtc::registerNNGradients(GradientRegistry &registry) {}
