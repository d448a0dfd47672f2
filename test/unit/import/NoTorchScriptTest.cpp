//===- NoTorchScriptTest.cpp - a build without libtorch -------------------===//
//
// What `dtc import model.pt` answers when dtc was configured without
// libtorch-dev: the TorchScript entry points exist, say so by name, and the
// archive detection still tells a zip file from an ONNX model.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TorchScript/TorchScriptImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dtc;

namespace {

std::string writeFile(StringRef name, StringRef bytes) {
  SmallString<128> path;
  llvm::sys::fs::createTemporaryFile(name, "pt", path);
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  out << bytes;
  return std::string(path);
}

TEST(NoTorchScript, SaysThisBuildHasNoSupport) {
  EXPECT_FALSE(hasTorchScriptSupport());
  std::string path = writeFile("archive", StringRef("PK\x03\x04rest", 8));
  EXPECT_TRUE(isTorchScriptFile(path));
  MLIRContext context;
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  ImportFailure kind = ImportFailure::Invalid;
  EXPECT_TRUE(failed(importTorchScriptModel(&context, path, {}, &kind)));
  EXPECT_EQ(kind, ImportFailure::Unsupported);
  EXPECT_NE(message.find("this build of dtc has no TorchScript support"),
            std::string::npos)
      << message;
  llvm::sys::fs::remove(path);
}

TEST(NoTorchScript, TellsOnnxFromArchives) {
  // An ONNX model starts with a protobuf tag (ir_version: 0x08).
  std::string onnx = writeFile("model", StringRef("\x08\x07\x12\x04", 4));
  EXPECT_FALSE(isTorchScriptFile(onnx));
  EXPECT_FALSE(isTorchScriptFile("/nonexistent/model.pt"));
  llvm::sys::fs::remove(onnx);
}

} // namespace
