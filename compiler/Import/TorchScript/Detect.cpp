//===- Detect.cpp - tell TorchScript archives from ONNX models ------------===//

#include "compiler/Import/TorchScript/TorchScriptImporter.h"

#include <fstream>

using namespace mlir;

bool mlir::dtc::isTorchScriptFile(StringRef path) {
  // torch.jit.save writes a zip archive: local file header "PK\3\4". An
  // ONNX model's first byte is a protobuf tag, never 'P'.
  std::ifstream file(path.str(), std::ios::binary);
  char magic[4] = {};
  if (!file.read(magic, sizeof(magic)))
    return false;
  return magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}
