//===- ModelRunner.h - import a model and run it in the interpreter -*- C++
//-*-===//

#ifndef DTC_COMPILER_DRIVER_MODELRUNNER_H
#define DTC_COMPILER_DRIVER_MODELRUNNER_H

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {

/// Imports `path`, a TorchScript archive (torch.jit.save) or an ONNX model.
FailureOr<OwningOpRef<ModuleOp>> importModel(MLIRContext *context,
                                             StringRef path,
                                             const ImportOptions &options,
                                             ImportFailure *kind = nullptr);

/// Imports `path` and runs the clean-up pipeline; failure after errors.
FailureOr<OwningOpRef<ModuleOp>> importAndClean(MLIRContext *context,
                                                StringRef path,
                                                const ImportOptions &options,
                                                ImportFailure *kind = nullptr);

/// Runs @main of `module` with parameters and state from their initial
/// values and data inputs from `inputs` (by ONNX name). Errors name the
/// missing or mistyped input.
FailureOr<SmallVector<dtg::interp::Tensor>>
runMain(ModuleOp module, const llvm::StringMap<dtg::interp::Tensor> &inputs);

/// ONNX names of @main's results, in order.
SmallVector<std::string> resultNames(ModuleOp module);

} // namespace mlir::dtc

#endif // DTC_COMPILER_DRIVER_MODELRUNNER_H
