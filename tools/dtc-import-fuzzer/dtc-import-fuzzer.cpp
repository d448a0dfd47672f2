//===- dtc-import-fuzzer.cpp - libFuzzer target for the ONNX importer -----===//
//
// Feeds arbitrary bytes to the ONNX importer as a model, then runs the
// clean-up pipeline, verifies and prints what comes out. Errors are the
// expected outcome for most inputs; a crash, a sanitizer report, a leak or a
// timeout is a bug. Built only in a clang tree with DTC_ENABLE_FUZZER (see
// scripts/fuzz.sh).
//
// The model is given a path inside a scratch folder that holds one 4 KiB data
// file, `weights.bin`, so external-data references (valid, out of range,
// leaving the folder) are explored too. Each input picks, from its size,
// whether axis 0 is bound with a batch size and whether weights are required.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace mlir::dtc;

/// The path the model is imported as; its folder holds weights.bin.
static std::string modelPath;

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("dtc-import-fuzzer", dir)) {
    llvm::errs() << "dtc-import-fuzzer: cannot create a scratch folder\n";
    std::abort();
  }
  SmallString<128> weights(dir);
  llvm::sys::path::append(weights, "weights.bin");
  std::error_code ec;
  llvm::raw_fd_ostream os(weights, ec);
  if (ec) {
    llvm::errs() << "dtc-import-fuzzer: cannot write " << weights << "\n";
    std::abort();
  }
  // Small integers and floats, so that any slice of it decodes to finite
  // values of every element type.
  for (int k = 0; k < 4096; ++k)
    os << char(k % 61);
  os.close();
  SmallString<128> model(dir);
  llvm::sys::path::append(model, "model.onnx");
  modelPath = model.str().str();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  // Errors are expected; keep them off stderr.
  context.getDiagEngine().registerHandler([](Diagnostic &) {});

  ImportOptions options;
  if (size % 2)
    options.batch = 2;
  options.requireWeights = (size / 2) % 2 == 0;

  StringRef buffer(reinterpret_cast<const char *>(data), size);
  FailureOr<OwningOpRef<ModuleOp>> module =
      importONNXModelFromBuffer(&context, buffer, modelPath, options);
  if (failed(module))
    return 0;
  // What the importer returns verifies; the passes must keep it so.
  if (failed(verify(**module)))
    std::abort();
  PassManager pm(&context);
  buildCleanupPipeline(pm);
  if (failed(pm.run(**module)))
    return 0;
  if (failed(verify(**module)))
    std::abort();
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os);
  return 0;
}
