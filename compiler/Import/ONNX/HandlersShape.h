//===- HandlersShape.h - helpers of the shape handlers ----------*- C++ -*-===//
//
// The shape / data-movement family is split by meaning: HandlersShape.cpp
// (reshaping, transposing, joining, splitting, slicing, padding),
// HandlersShapeIndexing.cpp (gathers, scatters, one-hot, compress, reverse
// sequence) and HandlersShapeConstants.cpp (ops whose result is known from
// shapes alone: Shape, Size, ConstantOfShape, Range, EyeLike, NonZero).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_ONNX_HANDLERSSHAPE_H
#define DTC_COMPILER_IMPORT_ONNX_HANDLERSSHAPE_H

#include "compiler/Import/ONNX/NodeImporter.h"

#include <string>

namespace mlir::dtc::onnx_import {

/// Registers the gather / scatter family (HandlersShapeIndexing.cpp).
void registerShapeIndexingHandlers(HandlerRegistry &registry);
/// Registers the ops folded from shapes (HandlersShapeConstants.cpp).
void registerShapeConstantHandlers(HandlerRegistry &registry);

namespace shape {

/// Formats a shape or a list of integers as [a,b,...].
std::string listText(ArrayRef<int64_t> values);

/// A constant i64 tensor of `shape` holding `values` (row-major).
Value intConstant(NodeImporter &n, ArrayRef<int64_t> values,
                  ArrayRef<int64_t> shape);

/// An i64 tensor of `shape` counting 0, 1, ... in row-major order: an
/// exclusive running sum of ones, which folds to a constant when small and
/// is never materialized while importing when large.
FailureOr<Value> iota(NodeImporter &n, ArrayRef<int64_t> shape);

/// The single integer of constant input `i` (a scalar or one-element
/// tensor) named `what` in errors.
FailureOr<int64_t> constantScalarInt(NodeImporter &n, unsigned i,
                                     StringRef what);

/// dtg.slice of `value` taking [starts, limits) with `steps`.
FailureOr<Value> slice(NodeImporter &n, Value value, ArrayRef<int64_t> starts,
                       ArrayRef<int64_t> limits, ArrayRef<int64_t> steps);

/// Consecutive slices of `value` along `axis` of the given sizes (Split,
/// SplitToSequence).
FailureOr<SmallVector<Value>> sliceParts(NodeImporter &n, Value value,
                                         int64_t axis, ArrayRef<int64_t> sizes);

/// dtg.broadcast of `value` to `shape` (no-op if it has it already).
FailureOr<Value> broadcastTo(NodeImporter &n, Value value,
                             ArrayRef<int64_t> shape);

} // namespace shape
} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_HANDLERSSHAPE_H
