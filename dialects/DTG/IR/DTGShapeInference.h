//===- DTGShapeInference.h - result shapes of dtg ops ---------------*- C++
//-*-===//
//
// Shape rules shared by the ops' type inference, their verifiers and the ONNX
// importer. Each returns failure (emitting at `loc` when given) on operands
// that do not fit the rule.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_IR_DTGSHAPEINFERENCE_H
#define DTC_DIALECTS_DTG_IR_DTGSHAPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::dtg {

/// Emits `message` at `loc` if a location is given; always returns failure.
LogicalResult emitOptionalError(std::optional<Location> loc,
                                const Twine &message);

/// NumPy broadcast of two shapes; failure if a pair of dimensions conflicts.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// True if `from` broadcasts to exactly `to` (NumPy rules, one direction).
bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// The result of an elementwise op over `operands` with broadcasting: the
/// broadcast shape, and `resultElementType` or else the first operand's.
/// Operands after the first that are not the condition of a `where` must share
/// an element type (for `where` pass the condition first; it is skipped).
LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   ValueRange operands, Type resultElementType,
                                   SmallVectorImpl<Type> &inferred);

/// The result of a reduction over `axes`, with or without kept dimensions.
LogicalResult inferReduceResult(std::optional<Location> loc, Value operand,
                                ArrayRef<int64_t> axes, bool keepdims,
                                SmallVectorImpl<Type> &inferred);

/// Output spatial size of a window of `kernel` with `stride`, `dilation` and
/// padding `padBegin`/`padEnd` over `size` input elements (PyTorch's rule for
/// `ceilMode`: the last window starts inside the input or leading padding);
/// 0 when no window fits or the sizes overflow int64_t.
int64_t windowOutputSize(int64_t size, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBegin, int64_t padEnd,
                         bool ceilMode);

/// Number of elements in a static shape.
int64_t numElements(ArrayRef<int64_t> shape);

} // namespace mlir::dtg

#endif // DTC_DIALECTS_DTG_IR_DTGSHAPEINFERENCE_H
