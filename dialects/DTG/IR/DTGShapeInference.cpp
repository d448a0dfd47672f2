//===- DTGShapeInference.cpp - result shapes of dtg ops -------------------===//

#include "dialects/DTG/IR/DTGShapeInference.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

LogicalResult dtg::emitOptionalError(std::optional<Location> loc,
                                     const Twine &message) {
  if (loc)
    return mlir::emitError(*loc, message);
  return failure();
}

FailureOr<SmallVector<int64_t>> dtg::broadcastShapes(ArrayRef<int64_t> lhs,
                                                     ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    result[i] = l == 1 ? r : l;
  }
  return result;
}

bool dtg::isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i])
      return false;
  return true;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

LogicalResult dtg::inferBroadcastResult(std::optional<Location> loc,
                                        ValueRange operands,
                                        Type resultElementType,
                                        SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  Type elementType;
  for (Value operand : operands) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return emitOptionalError(loc, "expected ranked tensor operands");
    auto broadcast = broadcastShapes(shape, type.getShape());
    if (failed(broadcast))
      return emitOptionalError(loc, "shapes " + shapeString(shape) + " and " +
                                        shapeString(type.getShape()) +
                                        " do not broadcast");
    shape = *broadcast;
    // The condition of a where (i1 first of three) does not set the type.
    bool isCondition = operands.size() == 3 && operand == operands[0];
    if (isCondition)
      continue;
    if (elementType && elementType != type.getElementType())
      return emitOptionalError(loc, "operands have different element types");
    elementType = type.getElementType();
  }
  inferred.push_back(RankedTensorType::get(
      shape, resultElementType ? resultElementType : elementType));
  return success();
}

LogicalResult dtg::inferReduceResult(std::optional<Location> loc, Value operand,
                                     ArrayRef<int64_t> axes, bool keepdims,
                                     SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "reduction axis " + Twine(axis) +
                                        " is out of range for rank " +
                                        Twine(rank));
    if (i > 0 && axes[i - 1] >= axis)
      return emitOptionalError(loc,
                               "reduction axes must be strictly increasing");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

int64_t dtg::windowOutputSize(int64_t size, int64_t kernel, int64_t stride,
                              int64_t dilation, int64_t padBegin,
                              int64_t padEnd, bool ceilMode) {
  // Attributes come from the input: no step below may overflow.
  int64_t effective, leading, padded, span;
  if (llvm::MulOverflow(dilation, kernel - 1, effective) ||
      llvm::AddOverflow(effective, int64_t(1), effective) ||
      llvm::AddOverflow(size, padBegin, leading) ||
      llvm::AddOverflow(leading, padEnd, padded) ||
      llvm::SubOverflow(padded, effective, span) || span < 0 || stride <= 0)
    return 0;
  int64_t out = span / stride + (ceilMode && span % stride != 0 ? 1 : 0) + 1;
  // As PyTorch and ONNX do: the last window must start inside the input or
  // the leading padding.
  int64_t lastStart;
  if (ceilMode && out > 1 &&
      (llvm::MulOverflow(out - 1, stride, lastStart) || lastStart >= leading))
    --out;
  return out;
}

int64_t dtg::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}
