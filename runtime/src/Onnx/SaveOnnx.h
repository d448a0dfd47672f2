//===- SaveOnnx.h - the trained model as ONNX (--save-onnx) ---------------===//
//
// Rewrites the model.onnx that compile left in OUTDIR with trained values:
// every initializer named like a parameter or state tensor gets its current
// value (converted between float types if the model stores another one);
// initializers kept in external files are inlined, so the result stands
// alone. The only part of the runtime that links protobuf.
//
//===----------------------------------------------------------------------===//

#ifndef DTCRT_ONNX_SAVEONNX_H
#define DTCRT_ONNX_SAVEONNX_H

#include "runtime/src/Core/DType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dtcrt {

/// A trained tensor to write into the model.
struct TrainedTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// False, with `why` set, when this runtime was built without ONNX
/// (DTCRT_WITH_ONNX=OFF: a generated program built on its own).
bool saveOnnxAvailable(std::string &why);

/// Reads `modelPath`, replaces the initializers named in `trained` and
/// writes the result to `outPath` (through a temporary file). Every trained
/// tensor must match an initializer of the same shape.
bool saveOnnxWithWeights(const std::string &modelPath,
                         const std::string &outPath,
                         const std::vector<TrainedTensor> &trained,
                         std::string &error);

} // namespace dtcrt

#endif // DTCRT_ONNX_SAVEONNX_H
