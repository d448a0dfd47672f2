//===- HandlersSequence.cpp - ONNX sequence ops -> dtg --------------------===//
//
// Sequences whose length and positions are known while importing: a
// sequence is a list of tensors the importer holds by name (never a value of
// the program), so SplitToSequence is a set of slices, SequenceAt picks one
// and ConcatFromSequence joins them. PyTorch 2's exporter writes
// SplitToSequence + SequenceAt for torch.split / chunk when its optimizer is
// off. Positions must be compile-time values; a graph output or a
// non-sequence op reading a sequence is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersShape.h"
#include "compiler/Import/ONNX/NodeImporter.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using namespace mlir::dtc::onnx_import::shape;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

/// A position into a sequence of `size` tensors, from constant input `i`
/// (negative counts from the end); `insert` allows `size` itself.
FailureOr<int64_t> readPosition(NodeImporter &n, unsigned i, int64_t size,
                                bool insert) {
  FailureOr<int64_t> position = constantScalarInt(n, i, "position");
  if (failed(position))
    return failure();
  int64_t limit = insert ? size : size - 1;
  if (*position < -size || *position > limit)
    return n.fail("input 'position' = " + Twine(*position) +
                  " is out of range for a sequence of " + Twine(size) +
                  " tensors");
  return *position < 0 ? *position + size : *position;
}

LogicalResult importSequenceConstruct(NodeImporter &n) {
  SmallVector<Value> values;
  for (unsigned i = 0, e = n.node.input_size(); i < e; ++i) {
    FailureOr<Value> value = n.input(i);
    if (failed(value))
      return failure();
    if (!values.empty() && typeOf(*value).getElementType() !=
                               typeOf(values.front()).getElementType())
      return n.fail("input #" + Twine(i) +
                    " has another element type than input #0");
    values.push_back(*value);
  }
  return n.setOutputSequence(0, values);
}

LogicalResult importSequenceEmpty(NodeImporter &n) {
  return n.setOutputSequence(0, {});
}

LogicalResult importSequenceAt(NodeImporter &n) {
  FailureOr<SmallVector<Value>> sequence = n.inputSequence(0);
  if (failed(sequence))
    return failure();
  FailureOr<int64_t> position = readPosition(
      n, 1, static_cast<int64_t>(sequence->size()), /*insert=*/false);
  if (failed(position))
    return failure();
  return n.setOutput(0, (*sequence)[*position]);
}

LogicalResult importSequenceInsert(NodeImporter &n) {
  FailureOr<SmallVector<Value>> sequence = n.inputSequence(0);
  FailureOr<Value> value = n.input(1);
  if (failed(sequence) || failed(value))
    return failure();
  auto size = static_cast<int64_t>(sequence->size());
  int64_t position = size;
  if (n.hasInput(2)) {
    FailureOr<int64_t> given = readPosition(n, 2, size, /*insert=*/true);
    if (failed(given))
      return failure();
    position = *given;
  }
  sequence->insert(sequence->begin() + position, *value);
  return n.setOutputSequence(0, *sequence);
}

LogicalResult importSequenceErase(NodeImporter &n) {
  FailureOr<SmallVector<Value>> sequence = n.inputSequence(0);
  if (failed(sequence))
    return failure();
  auto size = static_cast<int64_t>(sequence->size());
  if (size == 0)
    return n.fail("cannot erase from an empty sequence");
  int64_t position = size - 1;
  if (n.hasInput(1)) {
    FailureOr<int64_t> given = readPosition(n, 1, size, /*insert=*/false);
    if (failed(given))
      return failure();
    position = *given;
  }
  sequence->erase(sequence->begin() + position);
  return n.setOutputSequence(0, *sequence);
}

LogicalResult importSequenceLength(NodeImporter &n) {
  FailureOr<SmallVector<Value>> sequence = n.inputSequence(0);
  if (failed(sequence))
    return failure();
  return n.setOutput(
      0, intConstant(n, {static_cast<int64_t>(sequence->size())}, {}));
}

/// SplitToSequence: `split` a scalar (parts of that size, the last one
/// smaller), a list of sizes, or absent (parts of size 1, the axis dropped
/// unless keepdims).
LogicalResult importSplitToSequence(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.getInt("axis", 0), rank, "attribute 'axis'");
  if (failed(axis))
    return failure();
  int64_t size = shape[*axis];
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (n.hasInput(1)) {
    FailureOr<dtg::interp::Tensor> split = n.constantInput(1);
    if (failed(split))
      return failure();
    if (split->shape.empty()) {
      auto chunk = static_cast<int64_t>(split->get(0));
      if (chunk <= 0)
        return n.fail("input 'split' = " + Twine(chunk) +
                      " is not a positive size");
      for (int64_t offset = 0; offset < size; offset += chunk)
        sizes.push_back(std::min(chunk, size - offset));
    } else {
      int64_t total = 0;
      for (int64_t i = 0, e = split->numElements(); i < e; ++i) {
        auto s = static_cast<int64_t>(split->get(i));
        if (s < 0)
          return n.fail("input 'split' has the negative size " + Twine(s));
        sizes.push_back(s);
        total += s;
      }
      if (total != size)
        return n.fail("input 'split' " + listText(sizes) + " sums to " +
                      Twine(total) + ", not to the size " + Twine(size) +
                      " of axis " + Twine(*axis));
    }
  } else {
    sizes.assign(size, 1);
    squeeze = n.getInt("keepdims", 1) == 0;
  }
  FailureOr<SmallVector<Value>> parts = sliceParts(n, *x, *axis, sizes);
  if (failed(parts))
    return failure();
  if (squeeze) {
    SmallVector<int64_t> squeezed(shape);
    squeezed.erase(squeezed.begin() + *axis);
    for (Value &part : *parts) {
      FailureOr<Value> reshaped = n.reshape(part, squeezed);
      if (failed(reshaped))
        return failure();
      part = *reshaped;
    }
  }
  return n.setOutputSequence(0, *parts);
}

/// ConcatFromSequence: Concat of the tensors, or with new_axis a stack.
LogicalResult importConcatFromSequence(NodeImporter &n) {
  FailureOr<SmallVector<Value>> sequence = n.inputSequence(0);
  if (failed(sequence))
    return failure();
  if (sequence->empty())
    return n.fail("cannot concatenate an empty sequence");
  bool newAxis = n.getInt("new_axis", 0) != 0;
  int64_t rank = typeOf(sequence->front()).getRank();
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", 0), newAxis ? rank + 1 : rank, "attribute 'axis'");
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (Value value : *sequence) {
    if (newAxis) {
      SmallVector<int64_t> shape(typeOf(value).getShape());
      shape.insert(shape.begin() + *axis, 1);
      FailureOr<Value> expanded = n.reshape(value, shape);
      if (failed(expanded))
        return failure();
      value = *expanded;
    }
    parts.push_back(value);
  }
  if (parts.size() == 1)
    return n.setOutput(0, parts.front());
  FailureOr<Value> y = n.make<dtg::ConcatOp>(parts, n.i64Attr("axis", *axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

} // namespace

void mlir::dtc::onnx_import::registerSequenceHandlers(
    HandlerRegistry &registry) {
  registry.add("SequenceConstruct", 11, importSequenceConstruct);
  registry.add("SequenceEmpty", 11, importSequenceEmpty);
  registry.add("SequenceAt", 11, importSequenceAt);
  registry.add("SequenceInsert", 11, importSequenceInsert);
  registry.add("SequenceErase", 11, importSequenceErase);
  registry.add("SequenceLength", 11, importSequenceLength);
  registry.add("SplitToSequence", 11, importSplitToSequence);
  registry.add("ConcatFromSequence", 11, importConcatFromSequence);
}
