//===- NoTorchScript.cpp - the entry points of a build without libtorch ---===//

#include "compiler/Import/TorchScript/TorchScriptImporter.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

bool mlir::dtc::hasTorchScriptSupport() { return false; }

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::importTorchScriptModel(MLIRContext *context, StringRef path,
                                  const ImportOptions &options,
                                  ImportFailure *failureKind) {
  loadImportedDialects(context);
  if (failureKind)
    *failureKind = ImportFailure::Unsupported;
  emitError(FileLineColLoc::get(context, path, 0, 0),
            "this build of dtc has no TorchScript support (libtorch-dev was "
            "not found when it was configured: install it and reconfigure, "
            "or export the model to ONNX)");
  return failure();
}
