//===- TensorProto.h - ONNX TensorProto <-> interpreter tensors -----*- C++
//-*-===//

#ifndef DTC_COMPILER_IMPORT_ONNX_TENSORPROTO_H
#define DTC_COMPILER_IMPORT_ONNX_TENSORPROTO_H

#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <onnx/onnx_pb.h>
#include <string>

namespace mlir::dtc::onnx_import {

/// Most elements one tensor of a model may have (2^31; caps allocations on
/// hostile input).
constexpr int64_t kMaxTensorElements = int64_t(1) << 31;

/// Most elements one tensor may have in an import that only plans (weights
/// may be absent, nothing is allocated per element): 2^40, so that the
/// planner holds models of a trillion parameters (a 25600 x 102400 MLP
/// weight has 2.6 x 2^30 elements).
constexpr int64_t kMaxPlannedElements = int64_t(1) << 40;

/// True if a tensor of `shape` has more than `limit` elements (or a negative
/// dimension); never overflows.
bool exceedsElementLimit(ArrayRef<int64_t> shape,
                         int64_t limit = kMaxTensorElements);

/// The limit as the messages name it ("2^31").
std::string elementLimitText(int64_t limit = kMaxTensorElements);

/// Formats a shape as DIMxDIM ("scalar" for rank 0).
std::string shapeText(ArrayRef<int64_t> shape);

/// ONNX data types newer than Debian's onnx 1.12 (TensorProto.DataType).
enum NewerDataType : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
};

/// The MLIR element type of an ONNX data type; null for types dtc does not
/// hold (string, complex).
Type convertDataType(MLIRContext *context, int32_t dataType);

/// The ONNX name of a data type ("FLOAT", "STRING", ...).
std::string dataTypeName(int32_t dataType);

/// Where a TensorProto's data is, and whether it may be absent.
struct TensorSource {
  /// Folder of the model file; external data paths are resolved inside it.
  std::string modelDir;
  /// Owner of the parsed model, when it may outlive the import: resource
  /// blobs then point into its raw data instead of copying it.
  std::shared_ptr<const void> owner;
};

/// How reading a tensor went: an error message (empty on success).
struct ReadStatus {
  std::string error;
  /// True if the error is that external data is absent (allowed when
  /// weights are not required).
  bool externalDataMissing = false;
  /// True if the tensor is valid but of a type dtc does not hold.
  bool unsupportedType = false;
};

/// Result of reading a tensor: a value, or an error message.
struct TensorOrError : ReadStatus {
  std::optional<dtg::interp::Tensor> tensor;
};

/// Reads `proto` (checking that its data matches its dims and type).
TensorOrError readTensorProto(MLIRContext *context,
                              const onnx::TensorProto &proto,
                              const TensorSource &source);

/// Result of reading a tensor as an attribute: the attribute, or an error.
struct AttrOrError : ReadStatus {
  DenseResourceElementsAttr attr;
};

/// Reads a floating-point `proto` (a parameter's initial value) into an MLIR
/// resource blob, its bytes copied once as they are (raw data, external
/// data or the typed field), never element by element: the way weights
/// enter the IR, so import costs a copy of the weights and no more. The same
/// checks as readTensorProto, but for at most `limit` elements (mapped
/// bytes are not copied; the typed fields are counted before a copy).
AttrOrError readTensorProtoResource(MLIRContext *context,
                                    const onnx::TensorProto &proto,
                                    const TensorSource &source,
                                    int64_t limit = kMaxTensorElements);

/// The shape and element type of `proto` without reading its data; an error
/// message on bad dims or type, or on more than `limit` elements.
TensorOrError readTensorProtoType(MLIRContext *context,
                                  const onnx::TensorProto &proto,
                                  SmallVectorImpl<int64_t> &shape, Type &type,
                                  int64_t limit = kMaxTensorElements);

} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_TENSORPROTO_H
