//===- DTGGradShape.cpp - verifiers of the shape family's gradient ops ---===//
//
// The gradient primitives of the shape family name their result type; their
// verifiers check that it is the forward operand's type for the gradient and
// attributes given.
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/Support/MathExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::dtg;

/// "[2,3]" for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

LogicalResult GatherGradOp::verify() {
  auto grad = getGrad().getType(), result = getResult().getType();
  auto indices = getIndices().getType();
  if (grad.getElementType() != result.getElementType())
    return emitOpError("gradient element type ")
           << grad.getElementType() << " differs from the result's "
           << result.getElementType();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= result.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for result rank " << result.getRank();
  SmallVector<int64_t> expected(result.getShape().take_front(axis));
  llvm::append_range(expected, indices.getShape());
  llvm::append_range(expected, result.getShape().drop_front(axis + 1));
  if (grad.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("gradient shape ")
           << shapeString(grad.getShape()) << " does not match result "
           << shapeString(result.getShape()) << " gathered on axis " << axis
           << " at indices " << shapeString(indices.getShape()) << " (expected "
           << shapeString(expected) << ")";
  return success();
}

/// Number of indices start, start+step, ... strictly before limit (computed
/// unsigned, where the distances are exact for any attribute values).
static uint64_t stridedCount(int64_t start, int64_t limit, int64_t step) {
  if (step > 0) {
    if (limit <= start)
      return 0;
    return (uint64_t(limit) - uint64_t(start) - 1) / uint64_t(step) + 1;
  }
  if (start <= limit)
    return 0;
  return (uint64_t(start) - uint64_t(limit) - 1) / (0 - uint64_t(step)) + 1;
}

LogicalResult SliceGradOp::verify() {
  auto grad = getGrad().getType(), result = getResult().getType();
  if (grad.getElementType() != result.getElementType())
    return emitOpError("gradient element type ")
           << grad.getElementType() << " differs from the result's "
           << result.getElementType();
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    steps = getSteps();
  int64_t rank = result.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank)
    return emitOpError("starts, limits and steps need one entry per result "
                       "dimension (")
           << rank << ")";
  if (grad.getRank() != rank)
    return emitOpError("gradient rank ")
           << grad.getRank() << " differs from the result's " << rank;
  for (int64_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      return emitOpError("step of dimension ") << d << " is 0";
    uint64_t count = stridedCount(starts[d], limits[d], steps[d]);
    int64_t size = result.getDimSize(d);
    if (count > 0) {
      // The last index lies between start and limit, so this is exact.
      auto last = static_cast<int64_t>(uint64_t(starts[d]) +
                                       (count - 1) * uint64_t(steps[d]));
      if (starts[d] < 0 || starts[d] >= size || last < 0 || last >= size)
        return emitOpError("slice of dimension ")
               << d << " leaves the result (size " << size << ")";
    }
    if (count != static_cast<uint64_t>(grad.getDimSize(d)))
      return emitOpError("slice of dimension ")
             << d << " takes " << count << " indices, but the gradient has "
             << grad.getDimSize(d);
  }
  return success();
}

LogicalResult PadGradOp::verify() {
  auto grad = getGrad().getType(), result = getResult().getType();
  if (grad.getElementType() != result.getElementType())
    return emitOpError("gradient element type ")
           << grad.getElementType() << " differs from the result's "
           << result.getElementType();
  ArrayRef<int64_t> low = getLow(), high = getHigh();
  int64_t rank = result.getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank)
    return emitOpError("needs one low and one high amount per result "
                       "dimension (")
           << rank << ")";
  if (grad.getRank() != rank)
    return emitOpError("gradient rank ")
           << grad.getRank() << " differs from the result's " << rank;
  StringRef mode = getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return emitOpError("unknown pad mode '") << mode << "'";
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = result.getDimSize(d), padded;
    if (llvm::AddOverflow(size, low[d], padded) ||
        llvm::AddOverflow(padded, high[d], padded) ||
        padded != grad.getDimSize(d))
      return emitOpError("padding dimension ")
             << d << " of size " << size << " by " << low[d] << " and "
             << high[d] << " does not give the gradient's size "
             << grad.getDimSize(d);
    if (mode != "constant" && (low[d] > 0 || high[d] > 0) && size == 0)
      return emitOpError("cannot ") << mode << "-pad empty dimension " << d;
    if (mode == "reflect" && (low[d] >= size || high[d] >= size))
      return emitOpError("reflect padding of dimension ")
             << d << " must be smaller than its size " << size;
  }
  return success();
}
