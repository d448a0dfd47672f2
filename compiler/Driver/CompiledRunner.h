//===- CompiledRunner.h - run a model's forward through generated code -*- C++
//-*-===//

#ifndef DTC_COMPILER_DRIVER_COMPILEDRUNNER_H
#define DTC_COMPILER_DRIVER_COMPILEDRUNNER_H

#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::dtc {

/// @main of an imported module compiled by the CPU target into a forward
/// program in a folder of its own.
class CompiledForward {
public:
  /// Plans memory, emits and builds; failure with `error` set.
  LogicalResult build(ModuleOp module, StringRef folder, std::string &error);
  /// Runs the program on `inputs` (by ONNX name); the results in @main's
  /// order.
  FailureOr<SmallVector<dtg::interp::Tensor>>
  run(const llvm::StringMap<dtg::interp::Tensor> &inputs, std::string &error);

private:
  std::string folder;
  SmallVector<std::string> inputNames, resultNames;
  MLIRContext *context = nullptr;
};

} // namespace mlir::dtc

#endif // DTC_COMPILER_DRIVER_COMPILEDRUNNER_H
