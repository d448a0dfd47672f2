//===- ImportCommand.cpp - `dtc import` -----------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::dtc;

int mlir::dtc::runImportCommand(const ImportCommandOptions &cmd) {
  ImportOptions options;
  if (!parseShapeOptions(cmd.shapes, options))
    return 1;
  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context);
  FailureOr<OwningOpRef<ModuleOp>> module =
      cmd.noCleanup ? importModel(&context, cmd.model, options)
                    : importAndClean(&context, cmd.model, options);
  if (failed(module))
    return 1;
  std::string error;
  auto output = openOutputFile(cmd.output, &error);
  if (!output)
    return reportError(error);
  OpPrintingFlags flags;
  if (!cmd.printWeights)
    flags.elideLargeResourceString(0);
  (*module)->print(output->os(), flags);
  output->os() << "\n";
  output->keep();
  return 0;
}
