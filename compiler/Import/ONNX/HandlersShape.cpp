//===- HandlersShape.cpp - ONNX shape and data-movement ops -> dtg -------===//
//
// Reshaping (Reshape, Flatten, Squeeze, Unsqueeze, DepthToSpace,
// SpaceToDepth), Transpose, joining and splitting (Concat, Split), Slice,
// Expand, Tile, Pad and Trilu. Everything that decides a shape (a target
// shape, axes, starts and ends, repeats, pads) must be a compile-time
// constant; the data may be anything.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersShape.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using namespace mlir::dtc::onnx_import::shape;
using dtg::interp::Tensor;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

std::string shape::listText(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? "," : "") + std::to_string(v);
  return s + "]";
}

Value shape::intConstant(NodeImporter &n, ArrayRef<int64_t> values,
                         ArrayRef<int64_t> shape) {
  Tensor t = Tensor::zeros(n.builder.getI64Type(), shape);
  for (auto [k, v] : llvm::enumerate(values))
    t.setInt(k, v);
  return n.constant(t);
}

FailureOr<Value> shape::iota(NodeImporter &n, ArrayRef<int64_t> shape) {
  FailureOr<Value> ones =
      broadcastTo(n, intConstant(n, {1}, {}), {dtg::numElements(shape)});
  if (failed(ones))
    return failure();
  FailureOr<Value> counts = n.make<dtg::CumSumOp>(
      *ones, {n.i64Attr("axis", 0), n.boolAttr("exclusive", true),
              n.boolAttr("reverse", false)});
  if (failed(counts))
    return failure();
  return n.reshape(*counts, shape);
}

FailureOr<int64_t> shape::constantScalarInt(NodeImporter &n, unsigned i,
                                            StringRef what) {
  FailureOr<Tensor> value = n.constantInput(i);
  if (failed(value))
    return failure();
  if (value->numElements() != 1)
    return n.fail("input '" + what + "' must hold one value, not " +
                  Twine(value->numElements()));
  return value->getInt(0);
}

FailureOr<Value> shape::slice(NodeImporter &n, Value value,
                              ArrayRef<int64_t> starts,
                              ArrayRef<int64_t> limits,
                              ArrayRef<int64_t> steps) {
  return n.make<dtg::SliceOp>(value, {n.i64ArrayAttr("starts", starts),
                                      n.i64ArrayAttr("limits", limits),
                                      n.i64ArrayAttr("steps", steps)});
}

FailureOr<Value> shape::broadcastTo(NodeImporter &n, Value value,
                                    ArrayRef<int64_t> shape) {
  auto type = NodeImporter::typeOf(value);
  if (type.getShape() == shape)
    return value;
  FailureOr<SmallVector<Value>> results =
      n.create(dtg::BroadcastOp::getOperationName(), value, {},
               RankedTensorType::get(shape, type.getElementType()));
  if (failed(results))
    return failure();
  return results->front();
}

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

/// The shape `target` (non-negative, with at most one -1 to infer) takes if
/// it holds `count` elements; nullopt if it cannot.
std::optional<SmallVector<int64_t>> fitShape(ArrayRef<int64_t> target,
                                             int64_t count) {
  SmallVector<int64_t> shape(target);
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == -1) {
      inferred = i;
      continue;
    }
    if (llvm::MulOverflow(known, d, known))
      return std::nullopt;
  }
  if (inferred) {
    if (known == 0 || count % known != 0)
      return std::nullopt;
    shape[*inferred] = count / known;
  } else if (known != count) {
    return std::nullopt;
  }
  return shape;
}

/// `target` with dimension `i` (a multiple of the exported batch) scaled to
/// the bound batch, if that makes it hold `count` elements.
std::optional<SmallVector<int64_t>> scaleBatch(ArrayRef<int64_t> target,
                                               size_t i, int64_t count,
                                               int64_t exported,
                                               int64_t bound) {
  int64_t d = target[i], scaled;
  if (d <= 0 || d % exported != 0 ||
      llvm::MulOverflow(d / exported, bound, scaled))
    return std::nullopt;
  SmallVector<int64_t> fixed(target);
  fixed[i] = scaled;
  return fitShape(fixed, count);
}

/// Re-derives a target shape baked in by a static export for the batch size
/// the importer bound instead (DESIGN.md, "Parameters, state and data").
/// `copied[i]` marks dimensions copied from the input (a 0 in the target),
/// which already have the bound size. Nullopt if the shapes do not say which
/// dimension carries the batch.
std::optional<SmallVector<int64_t>>
rebindTarget(ArrayRef<int64_t> target, ArrayRef<bool> copied,
             ArrayRef<int64_t> input, int64_t count, int64_t exported,
             int64_t bound) {
  if (exported <= 0)
    return fitShape(target, count);
  // An input whose leading axis is the sample axis keeps each sample in one
  // contiguous block, so the first target dimension that is not 1 carries
  // the batch: [B, S, D] -> [B, S, H, D/H], [B*S, V], or the [B, -1] of
  // `x.view(x.size(0), -1)`, where the -1 would otherwise absorb the change.
  // An export at batch 1 has the batch as a leading 1 ([1, 2048] of a
  // classifier's flatten), which the first dimension that is not 1 is not.
  auto leading = exported == 1
                     ? target.begin()
                     : llvm::find_if(target, [](int64_t d) { return d != 1; });
  if (!input.empty() && input[0] == bound && leading != target.end()) {
    auto i = static_cast<size_t>(leading - target.begin());
    if (!copied[i])
      if (std::optional<SmallVector<int64_t>> shape =
              scaleBatch(target, i, count, exported, bound))
        return shape;
  }
  if (std::optional<SmallVector<int64_t>> shape = fitShape(target, count))
    return shape;
  // Otherwise exactly one dimension that is a multiple of the exported batch
  // and, scaled to the bound batch, makes the element count match.
  std::optional<SmallVector<int64_t>> found;
  for (size_t i = 0; i < target.size(); ++i) {
    if (copied[i])
      continue;
    std::optional<SmallVector<int64_t>> shape =
        scaleBatch(target, i, count, exported, bound);
    if (!shape)
      continue;
    if (found)
      return std::nullopt; // two candidates: ambiguous
    found = shape;
  }
  return found;
}

LogicalResult importReshape(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> target = n.constantInts(1);
  if (failed(target))
    return failure();
  bool allowZero = n.getInt("allowzero", 0) != 0;
  auto type = typeOf(*x);
  ArrayRef<int64_t> input = type.getShape();
  int64_t count = type.getNumElements();
  SmallVector<int64_t> dims(*target);
  SmallVector<bool> copied(dims.size(), false);
  int64_t minusOnes = 0;
  bool zeros = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t &d = dims[i];
    if (d < -1)
      return n.fail("input 'shape' has dimension " + Twine(d) + " at index " +
                    Twine(i) + " (only -1 may be negative)");
    if (d == -1)
      ++minusOnes;
    if (d != 0)
      continue;
    zeros = true;
    if (allowZero)
      continue;
    if (i >= input.size())
      return n.fail("input 'shape' copies dimension " + Twine(i) +
                    " (a 0) of an input of rank " + Twine(input.size()));
    d = input[i];
    copied[i] = true;
  }
  if (minusOnes > 1)
    return n.fail("input 'shape' has more than one -1");
  if (allowZero && zeros && minusOnes)
    return n.fail("input 'shape' has both 0 and -1 with allowzero = 1");

  std::optional<SmallVector<int64_t>> shape;
  std::optional<std::pair<int64_t, int64_t>> rebinding = n.batchRebinding();
  if (rebinding)
    shape = rebindTarget(dims, copied, input, count, rebinding->first,
                         rebinding->second);
  else
    shape = fitShape(dims, count);
  if (!shape) {
    std::string message = "input 'shape' " + listText(*target) +
                          " does not fit the input of shape " +
                          listText(input) + " (" + std::to_string(count) +
                          " elements)";
    if (rebinding)
      return n.fail(message +
                    ", and which of its dimensions carries the exported batch "
                    "size " +
                    Twine(rebinding->first) +
                    " cannot be told: the export pins the batch size (import "
                    "with --batch " +
                    Twine(rebinding->first) +
                    " or re-export with a dynamic batch axis)");
    return n.fail(message);
  }
  FailureOr<Value> y = n.reshape(*x, *shape);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importFlatten(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return n.fail("attribute 'axis' = " + Twine(axis) +
                  " is out of range for rank " + Twine(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = dtg::numElements(shape.take_front(axis));
  int64_t inner = dtg::numElements(shape.drop_front(axis));
  FailureOr<Value> y = n.reshape(*x, {outer, inner});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Normalizes `axes` (input `what`) for `rank`; an error on a value out of
/// range or repeated.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank, StringRef what) {
  SmallVector<int64_t> result;
  SmallVector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = n.normalizeAxis(axis, rank, what);
    if (failed(a))
      return failure();
    if (seen[*a])
      return n.fail(what + " repeats axis " + Twine(axis));
    seen[*a] = true;
    result.push_back(*a);
  }
  return result;
}

LogicalResult importSqueeze(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  SmallVector<bool> drop(rank, false);
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> axes = n.constantInts(1);
    if (failed(axes))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(n, *axes, rank, "input 'axes'");
    if (failed(normalized))
      return failure();
    for (int64_t axis : *normalized) {
      if (shape[axis] != 1)
        return n.fail("cannot squeeze axis " + Twine(axis) + " of size " +
                      Twine(shape[axis]) + " (input shape " + listText(shape) +
                      ")");
      drop[axis] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = shape[d] == 1;
  }
  SmallVector<int64_t> result;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      result.push_back(shape[d]);
  FailureOr<Value> y = n.reshape(*x, result);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = n.constantInts(1);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size() + axes->size());
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(n, *axes, rank, "input 'axes'");
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> result(rank, 1);
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *normalized)
    inserted[axis] = true;
  const int64_t *next = shape.begin();
  for (int64_t d = 0; d < rank; ++d)
    if (!inserted[d])
      result[d] = *next++;
  FailureOr<Value> y = n.reshape(*x, result);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Transpose, DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

LogicalResult importTranspose(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> given = n.getInts("perm")) {
    perm = *given;
    if (static_cast<int64_t>(perm.size()) != rank)
      return n.fail("attribute 'perm' has " + Twine(perm.size()) +
                    " entries for an input of rank " + Twine(rank));
    SmallVector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p])
        return n.fail("attribute 'perm' " + listText(perm) +
                      " is not a permutation of [0, " + Twine(rank) + ")");
      seen[p] = true;
    }
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  FailureOr<Value> y =
      n.make<dtg::TransposeOp>(*x, n.i64ArrayAttr("perm", perm));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Reshape to `expanded`, transpose by `perm`, reshape to `result`.
FailureOr<Value> shuffle(NodeImporter &n, Value x, ArrayRef<int64_t> expanded,
                         ArrayRef<int64_t> perm, ArrayRef<int64_t> result) {
  FailureOr<Value> v = n.reshape(x, expanded);
  if (failed(v))
    return failure();
  v = n.make<dtg::TransposeOp>(*v, n.i64ArrayAttr("perm", perm));
  if (failed(v))
    return failure();
  return n.reshape(*v, result);
}

/// The input of DepthToSpace / SpaceToDepth as N, C, H, W and the block size.
FailureOr<std::pair<SmallVector<int64_t>, int64_t>>
blockOperands(NodeImporter &n, Value x) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  if (shape.size() != 4)
    return n.fail("input must have rank 4 (N, C, H, W), not " +
                  Twine(shape.size()));
  if (!n.hasAttr("blocksize"))
    return n.fail("attribute 'blocksize' is missing");
  int64_t block = n.getInt("blocksize", 0);
  if (block <= 0 || block > kMaxTensorElements)
    return n.fail("attribute 'blocksize' = " + Twine(block) +
                  " must be positive");
  return std::make_pair(SmallVector<int64_t>(shape), block);
}

LogicalResult importDepthToSpace(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto operands = blockOperands(n, *x);
  if (failed(operands))
    return failure();
  auto &[s, b] = *operands;
  int64_t nn = s[0], c = s[1], h = s[2], w = s[3];
  if (c % (b * b) != 0)
    return n.fail("channels (" + Twine(c) + ") are not divisible by " +
                  "blocksize^2 (" + Twine(b * b) + ")");
  std::string mode = n.getString("mode", "DCR");
  FailureOr<Value> y;
  SmallVector<int64_t> result = {nn, c / (b * b), h * b, w * b};
  if (mode == "DCR")
    y = shuffle(n, *x, {nn, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2},
                result);
  else if (mode == "CRD")
    y = shuffle(n, *x, {nn, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3},
                result);
  else
    return n.fail("attribute 'mode' = '" + mode +
                  "' is neither 'DCR' nor 'CRD'");
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importSpaceToDepth(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto operands = blockOperands(n, *x);
  if (failed(operands))
    return failure();
  auto &[s, b] = *operands;
  int64_t nn = s[0], c = s[1], h = s[2], w = s[3];
  if (h % b != 0 || w % b != 0)
    return n.fail("height and width (" + Twine(h) + ", " + Twine(w) +
                  ") are not divisible by blocksize " + Twine(b));
  FailureOr<Value> y =
      shuffle(n, *x, {nn, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
              {nn, c * b * b, h / b, w / b});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice
//===----------------------------------------------------------------------===//

LogicalResult importConcat(NodeImporter &n) {
  if (n.node.input_size() == 0)
    return n.fail("needs at least one input");
  if (!n.hasAttr("axis"))
    return n.fail("attribute 'axis' is missing");
  SmallVector<Value> inputs;
  for (int i = 0; i < n.node.input_size(); ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  auto first = typeOf(inputs[0]);
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.getInt("axis", 0), first.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto type = typeOf(v);
    if (type.getElementType() != first.getElementType())
      return n.fail("input #" + Twine(i) + " has element type different " +
                    "from input #0's");
    bool fits = type.getRank() == first.getRank();
    for (int64_t d = 0; fits && d < type.getRank(); ++d)
      fits = d == *axis || type.getDimSize(d) == first.getDimSize(d);
    if (!fits)
      return n.fail("input #" + Twine(i) + " of shape " +
                    listText(type.getShape()) + " does not match input #0 " +
                    listText(first.getShape()) + " outside axis " +
                    Twine(*axis));
  }
  if (inputs.size() == 1)
    return n.setOutput(0, inputs[0]);
  FailureOr<Value> y = n.make<dtg::ConcatOp>(inputs, n.i64Attr("axis", *axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importSplit(NodeImporter &n) {
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
  int64_t parts = n.numOutputs();
  if (parts == 0)
    return n.fail("has no outputs");
  SmallVector<int64_t> sizes;
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
    if (static_cast<int64_t>(sizes.size()) != parts)
      return n.fail("input 'split' has " + Twine(sizes.size()) + " sizes for " +
                    Twine(parts) + " outputs");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > size)
        return n.fail("input 'split' has size " + Twine(s) + " for axis " +
                      Twine(*axis) + " of size " + Twine(size));
      total += s;
    }
    if (total != size)
      return n.fail("input 'split' " + listText(sizes) + " sums to " +
                    Twine(total) + ", not to the size " + Twine(size) +
                    " of axis " + Twine(*axis));
  } else if (n.hasAttr("num_outputs")) {
    // Opset 18: parts of ceil(size / num_outputs), the last one smaller.
    int64_t count = n.getInt("num_outputs", 0);
    if (count != parts)
      return n.fail("attribute 'num_outputs' = " + Twine(count) +
                    " differs from the node's " + Twine(parts) + " outputs");
    int64_t chunk = llvm::divideCeil(size, parts);
    if (chunk * (parts - 1) >= size && size > 0)
      return n.fail("axis " + Twine(*axis) + " of size " + Twine(size) +
                    " leaves the last of " + Twine(parts) + " parts of size " +
                    Twine(chunk) + " empty");
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::min(chunk, size - i * chunk));
  } else {
    if (size % parts != 0)
      return n.fail("axis " + Twine(*axis) + " of size " + Twine(size) +
                    " does not split into " + Twine(parts) + " equal parts");
    sizes.assign(parts, size / parts);
  }
  FailureOr<SmallVector<Value>> values = sliceParts(n, *x, *axis, sizes);
  if (failed(values))
    return failure();
  for (auto [i, part] : llvm::enumerate(*values))
    if (failed(n.setOutput(i, part)))
      return failure();
  return success();
}

} // namespace

FailureOr<SmallVector<Value>> mlir::dtc::onnx_import::shape::sliceParts(
    NodeImporter &n, Value value, int64_t axis, ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> shape(typeOf(value).getShape());
  auto rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> starts(rank, 0), limits(shape), steps(rank, 1);
  SmallVector<Value> parts;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    starts[axis] = offset;
    limits[axis] = offset + s;
    offset += s;
    FailureOr<Value> part = slice(n, value, starts, limits, steps);
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  return parts;
}

namespace {

LogicalResult importSlice(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  FailureOr<SmallVector<int64_t>> starts = n.constantInts(1);
  if (failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = n.constantInts(2);
  if (failed(ends))
    return failure();
  size_t count = starts->size();
  if (ends->size() != count)
    return n.fail("inputs 'starts' and 'ends' differ in length (" +
                  Twine(count) + " and " + Twine(ends->size()) + ")");
  SmallVector<int64_t> axes, steps(count, 1);
  if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(3);
    if (failed(given))
      return failure();
    axes = *given;
    if (axes.size() != count)
      return n.fail("input 'axes' has " + Twine(axes.size()) + " entries for " +
                    Twine(count) + " starts");
  } else {
    if (static_cast<int64_t>(count) > rank)
      return n.fail("input 'starts' has " + Twine(count) +
                    " entries for an input of rank " + Twine(rank));
    for (size_t j = 0; j < count; ++j)
      axes.push_back(j);
  }
  if (n.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(4);
    if (failed(given))
      return failure();
    steps = *given;
    if (steps.size() != count)
      return n.fail("input 'steps' has " + Twine(steps.size()) +
                    " entries for " + Twine(count) + " starts");
  }
  FailureOr<SmallVector<int64_t>> normalized =
      normalizeAxes(n, axes, rank, "input 'axes'");
  if (failed(normalized))
    return failure();

  SmallVector<int64_t> first(rank, 0), limits(shape), strides(rank, 1);
  for (size_t j = 0; j < count; ++j) {
    int64_t axis = (*normalized)[j], step = steps[j];
    int64_t size = shape[axis];
    if (step == 0)
      return n.fail("input 'steps' has a 0 for axis " + Twine(axis));
    // Negative bounds count from the end; then both are clamped: to [0, size]
    // going forward, to [-1, size - 1] going backward (the start to
    // [0, size - 1]), which is what ONNX and NumPy do.
    int64_t start = (*starts)[j], end = (*ends)[j];
    if (start < 0)
      start += size;
    if (end < 0)
      end += size;
    if (step > 0) {
      start = std::min(std::max(start, int64_t(0)), size);
      end = std::min(std::max(end, int64_t(0)), size);
    } else {
      start = std::min(std::max(start, int64_t(0)), size - 1);
      end = std::min(std::max(end, int64_t(-1)), size - 1);
    }
    first[axis] = start;
    limits[axis] = end;
    strides[axis] = step;
  }
  FailureOr<Value> y = slice(n, *x, first, limits, strides);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad, Trilu
//===----------------------------------------------------------------------===//

LogicalResult importExpand(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> target = n.constantInts(1);
  if (failed(target))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  // NumPy broadcasting of the input's shape with the target, from the right.
  size_t rank = std::max(shape.size(), target->size());
  SmallVector<int64_t> result(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t a = k < shape.size() ? shape[shape.size() - 1 - k] : 1;
    int64_t b = k < target->size() ? (*target)[target->size() - 1 - k] : 1;
    if (b < 0)
      return n.fail("input 'shape' " + listText(*target) +
                    " has a negative dimension");
    if (a != b && a != 1 && b != 1)
      return n.fail("input of shape " + listText(shape) +
                    " does not broadcast with input 'shape' " +
                    listText(*target));
    result[rank - 1 - k] = a == 1 ? b : a;
  }
  if (exceedsElementLimit(result))
    return n.fail("the result of shape " + listText(result) +
                  " is larger than dtc supports (2^31 elements)");
  FailureOr<Value> y = broadcastTo(n, *x, result);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importTile(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = n.constantInts(1);
  if (failed(repeats))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  if (repeats->size() != shape.size())
    return n.fail("input 'repeats' has " + Twine(repeats->size()) +
                  " entries for an input of rank " + Twine(shape.size()));
  SmallVector<int64_t> result;
  for (auto [d, r] : llvm::zip(shape, *repeats)) {
    if (r < 0)
      return n.fail("input 'repeats' " + listText(*repeats) +
                    " has a negative entry");
    int64_t size;
    if (llvm::MulOverflow(d, r, size))
      size = -1;
    result.push_back(size);
  }
  if (exceedsElementLimit(result))
    return n.fail("tiling " + listText(shape) + " by " + listText(*repeats) +
                  " is larger than dtc supports (2^31 elements)");
  FailureOr<Value> y =
      n.make<dtg::TileOp>(*x, n.i64ArrayAttr("repeats", *repeats));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Pad with mode 'wrap' (opset 19): each padded dimension of `x` becomes
/// [the last `low` rows, the rows kept, the first `high` rows], with negative
/// pads cropping first.
LogicalResult importWrapPad(NodeImporter &n, Value x, ArrayRef<int64_t> pads) {
  auto rank = static_cast<int64_t>(pads.size() / 2);
  Value y = x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t low = pads[d], high = pads[rank + d];
    SmallVector<int64_t> shape(typeOf(y).getShape());
    SmallVector<int64_t> starts(rank, 0), limits(shape), steps(rank, 1);
    // Crop first.
    starts[d] = std::max<int64_t>(0, -low);
    limits[d] = shape[d] - std::max<int64_t>(0, -high);
    if (starts[d] > limits[d])
      return n.fail("input 'pads' crops dimension " + Twine(d) + " of size " +
                    Twine(shape[d]) + " below 0");
    if (starts[d] != 0 || limits[d] != shape[d]) {
      FailureOr<Value> cropped = slice(n, y, starts, limits, steps);
      if (failed(cropped))
        return failure();
      y = *cropped;
      shape[d] = limits[d] - starts[d];
    }
    low = std::max<int64_t>(0, low);
    high = std::max<int64_t>(0, high);
    if (low == 0 && high == 0)
      continue;
    if (low > shape[d] || high > shape[d])
      return n.unsupported("wrap padding by " + Twine(std::max(low, high)) +
                           " of dimension " + Twine(d) + " of size " +
                           Twine(shape[d]) + " (more than its size)");
    SmallVector<Value> parts;
    starts.assign(rank, 0);
    limits.assign(shape.begin(), shape.end());
    if (low > 0) {
      starts[d] = shape[d] - low;
      FailureOr<Value> part = slice(n, y, starts, limits, steps);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    parts.push_back(y);
    if (high > 0) {
      starts[d] = 0;
      limits[d] = high;
      FailureOr<Value> part = slice(n, y, starts, limits, steps);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    FailureOr<Value> joined =
        n.make<dtg::ConcatOp>(parts, n.i64Attr("axis", d));
    if (failed(joined))
      return failure();
    y = *joined;
  }
  return n.setOutput(0, y);
}

LogicalResult importPad(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  std::string mode = n.getString("mode", "constant");
  bool wrap = mode == "wrap" && n.opset >= 19;
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !wrap)
    return n.fail("attribute 'mode' = '" + mode + "' is not one of constant, " +
                  "reflect, edge" + (n.opset >= 19 ? ", wrap" : ""));
  FailureOr<SmallVector<int64_t>> given = n.constantInts(1);
  if (failed(given))
    return failure();
  // Opset 18: input #3 names the axes that `pads` pads (all by default).
  SmallVector<int64_t> axes;
  if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> listed = n.constantInts(3);
    if (failed(listed))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(n, *listed, rank, "input 'axes'");
    if (failed(normalized))
      return failure();
    axes = std::move(*normalized);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  auto count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(given->size()) != 2 * count)
    return n.fail("input 'pads' has " + Twine(given->size()) + " entries for " +
                  (n.hasInput(3) ? Twine(count) + " axes"
                                 : "an input of rank " + Twine(rank)) +
                  " (needs " + Twine(2 * count) + ")");
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    pads[axis] = (*given)[i];
    pads[rank + axis] = (*given)[count + i];
  }
  if (wrap)
    return importWrapPad(n, *x, pads);
  ArrayRef<int64_t> low = ArrayRef<int64_t>(pads).take_front(rank);
  ArrayRef<int64_t> high = ArrayRef<int64_t>(pads).drop_front(rank);
  SmallVector<int64_t> result;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = shape[d];
    if (llvm::AddOverflow(size, low[d], size) ||
        llvm::AddOverflow(size, high[d], size) || size < 0 ||
        size > kMaxTensorElements)
      return n.fail("input 'pads' " + listText(*given) + " gives dimension " +
                    Twine(d) + " of size " + Twine(shape[d]) +
                    " an invalid size");
    if (mode != "constant" && (low[d] > 0 || high[d] > 0) && shape[d] == 0)
      return n.fail("cannot " + mode + "-pad dimension " + Twine(d) +
                    ", which is empty");
    if (mode == "reflect" && (low[d] >= shape[d] || high[d] >= shape[d]))
      return n.unsupported("reflect padding by " +
                           Twine(std::max(low[d], high[d])) + " of dimension " +
                           Twine(d) + " of size " + Twine(shape[d]) +
                           " (more than size - 1)");
    result.push_back(size);
  }
  if (exceedsElementLimit(result))
    return n.fail("the padded result " + listText(result) +
                  " is larger than dtc supports (2^31 elements)");
  double value = 0;
  if (mode == "constant" && n.hasInput(2)) {
    FailureOr<Tensor> fill = n.constantInput(2);
    if (failed(fill))
      return failure();
    if (fill->numElements() != 1)
      return n.fail("input 'constant_value' must hold one value, not " +
                    Twine(fill->numElements()));
    value = fill->get(0);
  }
  FailureOr<Value> y = n.make<dtg::PadOp>(
      *x, {n.i64ArrayAttr("low", low), n.i64ArrayAttr("high", high),
           n.strAttr("mode", mode), n.f64Attr("value", value)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importTrilu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (typeOf(*x).getRank() < 2)
    return n.fail("input must have rank 2 or more, not " +
                  Twine(typeOf(*x).getRank()));
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<int64_t> given = constantScalarInt(n, 1, "k");
    if (failed(given))
      return failure();
    k = *given;
  }
  FailureOr<Value> y = n.make<dtg::TriluOp>(
      *x, {n.boolAttr("upper", n.getInt("upper", 1) != 0), n.i64Attr("k", k)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

} // namespace

void mlir::dtc::onnx_import::registerShapeHandlers(HandlerRegistry &registry) {
  registry.add("Reshape", 14, importReshape);
  registry.add("Reshape", 13, importReshape);
  registry.add("Flatten", 13, importFlatten);
  registry.add("Squeeze", 13, importSqueeze);
  registry.add("Unsqueeze", 13, importUnsqueeze);
  registry.add("Transpose", 13, importTranspose);
  registry.add("DepthToSpace", 13, importDepthToSpace);
  registry.add("SpaceToDepth", 13, importSpaceToDepth);
  registry.add("Concat", 13, importConcat);
  registry.add("Split", 13, importSplit);
  registry.add("Slice", 13, importSlice);
  registry.add("Expand", 13, importExpand);
  registry.add("Tile", 13, importTile);
  registry.add("Pad", 13, importPad);
  registry.add("Trilu", 14, importTrilu);
  registerShapeIndexingHandlers(registry);
  registerShapeConstantHandlers(registry);
}
