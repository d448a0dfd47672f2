//===- TorchScriptImporter.h - TorchScript modules to dtg -------*- C++ -*-===//
//
// `dtc import model.pt` (and compile, plan, ...) take a module saved with
// torch.jit.save, scripted or traced, as they take an ONNX export. Only
// TorchScriptImporter.cpp links libtorch; a build without it still has
// these entry points, which then say so.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
#define DTC_COMPILER_IMPORT_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H

#include "compiler/Import/ONNX/ONNXImporter.h"

namespace mlir::dtc {

/// Whether the file at `path` is a TorchScript archive (torch.jit.save
/// writes a zip file) rather than an ONNX model.
bool isTorchScriptFile(StringRef path);

/// Whether this build of dtc links libtorch.
bool hasTorchScriptSupport();

/// Imports the TorchScript module at `path` into a module with one function,
/// @main, as importONNXModel does for ONNX: parameters (requires_grad) and
/// BatchNormalization statistics become arguments with their initial
/// values, the forward's arguments data inputs (shapes from the trace or
/// from `options.inputShapes`), its results `output0`, `output1`, ...
/// Locations are the TorchScript source ranges (file:line).
FailureOr<OwningOpRef<ModuleOp>>
importTorchScriptModel(MLIRContext *context, StringRef path,
                       const ImportOptions &options,
                       ImportFailure *failureKind = nullptr);

} // namespace mlir::dtc

#endif // DTC_COMPILER_IMPORT_TORCHSCRIPT_TORCHSCRIPTIMPORTER_H
