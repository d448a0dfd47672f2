//===- OpsetUpgrade.h - lift an old ONNX model to the imported opset ------===//
//
// libonnx's shape inference and version converter trust the shapes a model
// declares: a malformed old model can crash them (Gemm-6's inference reads
// a dimension of a rank-0 operand), where the importer must report it. They
// run in a child process, so that a crash there is an error message here.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_ONNX_OPSETUPGRADE_H
#define DTC_COMPILER_IMPORT_ONNX_OPSETUPGRADE_H

#include <cstdint>
#include <optional>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir::dtc::onnx_import {

/// Infers the shapes of `model` (old adapters need its ranks) and converts
/// it to `opset` with libonnx, replacing `model` by the result. Returns why
/// not otherwise: libonnx's message, or that libonnx crashed on the model.
std::optional<std::string> upgradeOpset(onnx::ModelProto &model, int64_t opset);

} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_OPSETUPGRADE_H
