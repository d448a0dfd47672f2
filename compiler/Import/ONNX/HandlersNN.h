//===- HandlersNN.h - registration of the NN handler files ----------*- C++
//-*-===//
//
// The NN family spans two files: HandlersNN.cpp (contractions, softmax,
// dropout, normalization) and HandlersConv.cpp (convolution and pooling).
// registerNNHandlers registers both.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_ONNX_HANDLERSNN_H
#define DTC_COMPILER_IMPORT_ONNX_HANDLERSNN_H

#include "compiler/Import/ONNX/NodeImporter.h"

namespace mlir::dtc::onnx_import {

/// Registers Conv, ConvTranspose and the pooling ops (HandlersConv.cpp).
void registerConvHandlers(HandlerRegistry &registry);

} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_HANDLERSNN_H
