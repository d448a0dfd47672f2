//===- ModelRunner.cpp - import a model and run it in the interpreter ----===//

#include "compiler/Driver/ModelRunner.h"

#include "compiler/Import/TorchScript/TorchScriptImporter.h"

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::importAndClean(MLIRContext *context, StringRef path,
                          const ImportOptions &options, ImportFailure *kind) {
  FailureOr<OwningOpRef<ModuleOp>> module =
      importModel(context, path, options, kind);
  if (failed(module))
    return failure();
  PassManager pm(context);
  buildCleanupPipeline(pm);
  if (failed(pm.run(**module))) {
    if (kind)
      *kind = ImportFailure::Invalid;
    return failure();
  }
  return module;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::importModel(MLIRContext *context, StringRef path,
                       const ImportOptions &options, ImportFailure *kind) {
  if (isTorchScriptFile(path))
    return importTorchScriptModel(context, path, options, kind);
  // A .pt file that is no zip archive is not an ONNX model either.
  if (llvm::sys::fs::exists(path) &&
      llvm::is_contained({".pt", ".pth", ".ts"},
                         llvm::sys::path::extension(path))) {
    loadImportedDialects(context);
    if (kind)
      *kind = ImportFailure::Invalid;
    emitError(FileLineColLoc::get(context, path, 0, 0),
              "not a TorchScript archive (torch.jit.save writes a zip file; "
              "truncated or another format?)");
    return failure();
  }
  return importONNXModel(context, path, options, kind);
}

static func::FuncOp mainOf(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

SmallVector<std::string> mlir::dtc::resultNames(ModuleOp module) {
  SmallVector<std::string> names;
  func::FuncOp func = mainOf(module);
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, attrs::kName);
    names.push_back(name ? name.str() : "result#" + std::to_string(i));
  }
  return names;
}

FailureOr<SmallVector<Tensor>>
mlir::dtc::runMain(ModuleOp module, const llvm::StringMap<Tensor> &inputs) {
  func::FuncOp func = mainOf(module);
  if (!func)
    return module.emitError("the module has no @main");
  SmallVector<Tensor> arguments;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kName);
    auto role = func.getArgAttrOfType<StringAttr>(i, attrs::kRole);
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    std::string argName = name ? name.str() : "#" + std::to_string(i);
    if (role && role.getValue() != "input") {
      auto initial = func.getArgAttrOfType<ElementsAttr>(i, attrs::kInitial);
      if (!initial)
        return func.emitError("weights of '")
               << argName << "' are absent (a weightless model cannot run)";
      FailureOr<Tensor> value = dtg::interp::tensorFromAttr(initial);
      if (failed(value))
        return func.emitError("cannot read the weights of '") << argName << "'";
      arguments.push_back(std::move(*value));
      continue;
    }
    auto it = inputs.find(argName);
    if (it == inputs.end())
      return func.emitError("no data for input '") << argName << "'";
    if (it->second.getType() != type)
      return func.emitError("input '")
             << argName << "' has type " << it->second.getType()
             << ", but the model expects " << type;
    arguments.push_back(it->second);
  }
  return dtg::interp::interpretFunction(func, arguments);
}
