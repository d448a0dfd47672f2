//===- Tensor.h - tensors of the reference interpreter --------------*- C++
//-*-===//
//
// The reference interpreter keeps every value as plain vectors: floats in
// doubles (rounded to their element type after each op, so f32/f16/bf16 hold
// exactly the values the element type can), integers and booleans in int64_t
// (wrapped to their width). Obviously correct first; fast never.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_INTERP_TENSOR_H
#define DTC_DIALECTS_DTG_INTERP_TENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::dtg::interp {

/// A dense row-major tensor of the interpreter.
struct Tensor {
  Type elementType;
  SmallVector<int64_t> shape;
  /// Element values when the element type is a float.
  std::vector<double> f;
  /// Element values when the element type is an integer (i1 included).
  std::vector<int64_t> i;

  /// A zero-filled tensor.
  static Tensor zeros(Type elementType, ArrayRef<int64_t> shape);

  bool isFloat() const { return isa<FloatType>(elementType); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  RankedTensorType getType() const {
    return RankedTensorType::get(shape, elementType);
  }

  /// Element `k` (linear index) as a double, whatever the element type.
  double get(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
  /// Element `k` as an integer (floats truncate toward zero).
  int64_t getInt(int64_t k) const {
    return isFloat() ? static_cast<int64_t>(f[k]) : i[k];
  }
  /// Stores `value` at `k`, rounded or wrapped to the element type.
  void set(int64_t k, double value);
  void setInt(int64_t k, int64_t value);

  /// Rounds (floats) or wraps (integers) every element to the element type.
  void normalize();
};

/// Rounds `value` to the nearest value of float type `type` (ties to even).
double roundToFloatType(Type type, double value);
/// Wraps `value` to integer type `type` (two's complement; i1 is value != 0).
int64_t wrapToIntegerType(Type type, int64_t value);

/// True for the 8-bit floats (ONNX's FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ).
bool isFloat8(Type type);
/// True for the 4-bit integers (ONNX's INT4, UINT4).
bool isInt4(Type type);
/// The value of a float of type `type` (not f32 or f64) given its bits.
double floatFromBits(Type type, uint64_t bits);
/// `value` converted as ONNX's Cast converts to `type`: an 8-bit float
/// rounds to nearest even and, with `saturate`, takes out-of-range values
/// and infinities to the type's largest finite value of their sign
/// (without, they become infinity or NaN as the type has them); a 4-bit
/// integer rounds to nearest even and saturates; other types as `set`.
double castToFloatType(Type type, double value, bool saturate);
int64_t castToInt4(Type type, double value);

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Maps linear indices of a broadcast result to linear indices of an operand
/// whose shape broadcasts to it (NumPy rules).
class BroadcastIndexer {
public:
  BroadcastIndexer(ArrayRef<int64_t> operandShape,
                   ArrayRef<int64_t> resultShape);
  int64_t operator()(int64_t resultIndex) const;

private:
  SmallVector<int64_t> resultStrides;
  SmallVector<int64_t> operandStrides; // 0 where broadcast
};

/// Converts a constant's value (dense or dense_resource) to a tensor; failure
/// for element types the interpreter does not hold.
FailureOr<Tensor> tensorFromAttr(ElementsAttr attr);

/// Converts a tensor to a DenseElementsAttr of its type.
DenseElementsAttr tensorToAttr(const Tensor &tensor);

/// True for element types the interpreter holds: floats of 8 (the four
/// ONNX kinds), 16, 32 and 64 bits, and signless or unsigned integers up to
/// 64 bits.
bool isSupportedElementType(Type type);

} // namespace mlir::dtg::interp

#endif // DTC_DIALECTS_DTG_INTERP_TENSOR_H
