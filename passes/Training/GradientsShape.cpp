//===- GradientsShape.cpp - gradient rules of the Shape family -----------===//

#include "passes/Training/Autodiff.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtg;

void mlir::dtc::registerShapeGradients(GradientRegistry &registry) {}
