//===- InterpretCommand.cpp - `dtc interpret` -----------------------------===//
//
// Imports a model, runs it in the reference interpreter on .npy inputs with
// its initializers as weights, and compares outputs with expected .npy files.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"
#include "compiler/Driver/Npy.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

/// Reads NAME=FILE.npy entries of `flag` into `out`; false after an error.
static bool readNamedNpys(MLIRContext *context, StringRef flag,
                          const std::vector<std::string> &entries,
                          llvm::StringMap<Tensor> &out) {
  for (const std::string &entry : entries) {
    std::string name, file, error;
    if (!splitAssignment(entry, name, file)) {
      reportError(flag + " expects NAME=FILE.npy, got '" + entry + "'");
      return false;
    }
    std::optional<Tensor> t = readNpy(context, file, error);
    if (!t) {
      reportError(flag + " " + name + ": " + error);
      return false;
    }
    out[name] = std::move(*t);
  }
  return true;
}

int mlir::dtc::runInterpretCommand(const InterpretCommandOptions &cmd) {
  ImportOptions options;
  if (!parseShapeOptions(cmd.shapes, options))
    return 1;
  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context);
  llvm::StringMap<Tensor> inputs, expects;
  if (!readNamedNpys(&context, "--input", cmd.inputs, inputs) ||
      !readNamedNpys(&context, "--expect", cmd.expects, expects))
    return 1;
  FailureOr<OwningOpRef<ModuleOp>> module =
      importAndClean(&context, cmd.model, options);
  if (failed(module))
    return 1;
  FailureOr<SmallVector<Tensor>> results = runMain(**module, inputs);
  if (failed(results))
    return 1;
  SmallVector<std::string> names = resultNames(**module);
  llvm::StringMap<const Tensor *> byName;
  for (auto [name, tensor] : llvm::zip(names, *results))
    byName[name] = &tensor;

  if (!cmd.outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(cmd.outputDir))
      return reportError("cannot create '" + cmd.outputDir + "': " +
                         ec.message());
    for (auto [name, tensor] : llvm::zip(names, *results)) {
      SmallString<256> path(cmd.outputDir);
      llvm::sys::path::append(path, name + ".npy");
      std::string error;
      if (!writeNpy(tensor, path, error))
        return reportError(error);
    }
  }

  bool ok = true;
  for (auto &entry : expects) {
    StringRef name = entry.getKey();
    auto it = byName.find(name);
    if (it == byName.end())
      return reportError("--expect " + name + ": the model has no output '" +
                         name + "'");
    const Tensor &got = *it->second, &want = entry.getValue();
    if (got.shape != want.shape) {
      llvm::outs() << name << ": shape differs MISMATCH\n";
      ok = false;
      continue;
    }
    double diff2 = 0, ref2 = 0, maxAbs = 0;
    for (int64_t k = 0, n = got.numElements(); k < n; ++k) {
      double d = got.get(k) - want.get(k);
      diff2 += d * d;
      ref2 += want.get(k) * want.get(k);
      maxAbs = std::max(maxAbs, std::fabs(d));
    }
    double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    bool match = rel <= cmd.rtol && !std::isnan(rel);
    ok &= match;
    llvm::outs() << name << ": rel_l2=" << llvm::format("%.3e", rel)
                 << " max_abs=" << llvm::format("%.3e", maxAbs) << " "
                 << (match ? "OK" : "MISMATCH") << "\n";
  }
  if (expects.empty())
    for (auto [name, tensor] : llvm::zip(names, *results))
      llvm::outs() << name << ": " << tensor.getType() << "\n";
  return ok ? 0 : 1;
}
