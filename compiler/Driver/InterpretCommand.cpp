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

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

/// Reads NAME=FILE.npy entries of `flag` into `out` (and their files into
/// `files`); false after an error.
static bool readNamedNpys(MLIRContext *context, StringRef flag,
                          const std::vector<std::string> &entries,
                          llvm::StringMap<Tensor> &out,
                          llvm::StringMap<std::string> &files) {
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
    files[name] = file;
  }
  return true;
}

/// Checks that every --input names a data input of @main and has its type,
/// and that every data input has one; false after an error naming the flag
/// and the file.
static bool checkInputs(ModuleOp module, const llvm::StringMap<Tensor> &inputs,
                        const llvm::StringMap<std::string> &files) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  llvm::StringMap<Type> expected;
  std::string names;
  for (unsigned i = 0; func && i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kName);
    auto role = func.getArgAttrOfType<StringAttr>(i, attrs::kRole);
    if (!name || !role || role.getValue() != "input")
      continue;
    expected[name.getValue()] = func.getArgument(i).getType();
    names += (names.empty() ? "" : ", ") + name.getValue().str();
  }
  for (const auto &entry : inputs) {
    StringRef name = entry.getKey();
    auto it = expected.find(name);
    if (it == expected.end()) {
      reportError("--input " + name + ": the model has no data input '" + name +
                  "' (its data inputs: " + (names.empty() ? "none" : names) +
                  ")");
      return false;
    }
    if (entry.getValue().getType() != it->second) {
      std::string got, want;
      llvm::raw_string_ostream(got) << entry.getValue().getType();
      llvm::raw_string_ostream(want) << it->second;
      reportError("--input " + name + ": '" + files.lookup(name) + "' holds " +
                  got + ", but the model's input '" + name + "' is " + want);
      return false;
    }
  }
  for (const auto &entry : expected)
    if (!inputs.count(entry.getKey())) {
      reportError("the model's input '" + entry.getKey() +
                  "' has no data: give it with --input " + entry.getKey() +
                  "=FILE.npy");
      return false;
    }
  return true;
}

/// A file name for output `name`: path separators become '_', so an output
/// name cannot lead out of --output-dir.
static std::string outputFileName(StringRef name) {
  std::string file = name.str();
  std::replace(file.begin(), file.end(), '/', '_');
  return file + ".npy";
}

int mlir::dtc::runInterpretCommand(const InterpretCommandOptions &cmd) {
  ImportOptions options;
  if (!parseShapeOptions(cmd.shapes, options))
    return 1;
  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context);
  llvm::StringMap<Tensor> inputs, expects;
  llvm::StringMap<std::string> inputFiles, expectFiles;
  if (!readNamedNpys(&context, "--input", cmd.inputs, inputs, inputFiles) ||
      !readNamedNpys(&context, "--expect", cmd.expects, expects, expectFiles))
    return 1;
  if (!cmd.outputDir.empty() && llvm::sys::fs::exists(cmd.outputDir) &&
      !llvm::sys::fs::is_directory(cmd.outputDir))
    return reportError("--output-dir '" + cmd.outputDir + "' is not a folder");
  FailureOr<OwningOpRef<ModuleOp>> module =
      importAndClean(&context, cmd.model, options);
  if (failed(module))
    return 1;
  if (!checkInputs(**module, inputs, inputFiles))
    return 1;
  SmallVector<std::string> names = resultNames(**module);
  for (const auto &entry : expects)
    if (!llvm::is_contained(names, entry.getKey()))
      return reportError("--expect " + entry.getKey() +
                         ": the model has no output '" + entry.getKey() + "'");
  FailureOr<SmallVector<Tensor>> results = runMain(**module, inputs);
  if (failed(results))
    return 1;
  llvm::StringMap<const Tensor *> byName;
  for (auto [name, tensor] : llvm::zip(names, *results))
    byName[name] = &tensor;

  if (!cmd.outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(cmd.outputDir))
      return reportError("cannot create '" + cmd.outputDir +
                         "': " + ec.message());
    for (auto [name, tensor] : llvm::zip(names, *results)) {
      SmallString<256> path(cmd.outputDir);
      llvm::sys::path::append(path, outputFileName(name));
      std::string error;
      if (!writeNpy(tensor, path, error))
        return reportError(error);
    }
  }

  bool ok = true;
  for (auto &entry : expects) {
    StringRef name = entry.getKey();
    const Tensor &got = *byName.lookup(name), &want = entry.getValue();
    if (got.shape != want.shape) {
      llvm::outs() << name << ": shape " << got.getType() << " differs from "
                   << want.getType() << " in '" << expectFiles.lookup(name)
                   << "' MISMATCH\n";
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
