//===- HandlersShape.cpp - ONNX Shape ops -> dtg -------------------------===//

#include "compiler/Import/ONNX/NodeImporter.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;

void mlir::dtc::onnx_import::registerShapeHandlers(HandlerRegistry &registry) {}
