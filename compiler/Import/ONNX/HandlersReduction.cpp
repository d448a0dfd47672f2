//===- HandlersReduction.cpp - ONNX Reduction ops -> dtg -------------------------===//

#include "compiler/Import/ONNX/NodeImporter.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;

void mlir::dtc::onnx_import::registerReductionHandlers(HandlerRegistry &registry) {}
