//===- HandlersShapeIndexing.cpp - ONNX gathers and scatters -> dtg ------===//
//
// Gather, GatherElements, GatherND, ScatterElements, ScatterND, OneHot,
// Compress and ReverseSequence. The ND forms flatten the indexed dimensions
// and turn each index tuple into one linear index, so they become a
// dtg.gather / dtg.scatter_elements on axis 0; an index tuple out of range
// becomes an index out of range, which the consuming op reports.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersShape.h"

#include "llvm/ADT/StringExtras.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using namespace mlir::dtc::onnx_import::shape;
using dtg::interp::Tensor;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

/// Checks that `indices` (input `what`) holds int32 or int64, and, when it
/// is a constant, that every value lies in [-size, size) of axis `axis`.
LogicalResult checkIndices(NodeImporter &n, Value indices, int64_t size,
                           int64_t axis, StringRef what) {
  Type element = typeOf(indices).getElementType();
  if (!element.isInteger(32) && !element.isInteger(64))
    return n.fail("input '" + what + "' must hold int32 or int64 values");
  auto constant = indices.getDefiningOp<dtg::ConstantOp>();
  if (!constant)
    return success();
  FailureOr<Tensor> value = dtg::interp::tensorFromAttr(constant.getValue());
  if (failed(value))
    return success();
  for (int64_t k = 0, e = value->numElements(); k < e; ++k) {
    int64_t index = value->getInt(k);
    if (index < -size || index >= size)
      return n.fail("input '" + what + "' holds " + Twine(index) +
                    ", out of range for axis " + Twine(axis) + " of size " +
                    Twine(size));
  }
  return success();
}

LogicalResult importGather(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), indices = n.input(1);
  if (failed(data) || failed(indices))
    return failure();
  auto type = typeOf(*data);
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.getInt("axis", 0), type.getRank(), "attribute 'axis'");
  if (failed(axis) || failed(checkIndices(n, *indices, type.getDimSize(*axis),
                                          *axis, "indices")))
    return failure();
  FailureOr<Value> y =
      n.make<dtg::GatherOp>({*data, *indices}, n.i64Attr("axis", *axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// The axis of GatherElements / ScatterElements after checking that
/// `indices` has data's rank and no dimension (but the axis) larger.
FailureOr<int64_t> elementsAxis(NodeImporter &n, Value data, Value indices) {
  auto dataType = typeOf(data), indicesType = typeOf(indices);
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", 0), dataType.getRank(), "attribute 'axis'");
  if (failed(axis))
    return failure();
  if (indicesType.getRank() != dataType.getRank())
    return n.fail("input 'indices' has rank " + Twine(indicesType.getRank()) +
                  ", but data has rank " + Twine(dataType.getRank()));
  for (int64_t d = 0; d < dataType.getRank(); ++d)
    if (d != *axis && indicesType.getDimSize(d) > dataType.getDimSize(d))
      return n.fail("input 'indices' of shape " +
                    listText(indicesType.getShape()) + " is larger than data " +
                    listText(dataType.getShape()) + " in dimension " +
                    Twine(d));
  if (failed(checkIndices(n, indices, dataType.getDimSize(*axis), *axis,
                          "indices")))
    return failure();
  return axis;
}

LogicalResult importGatherElements(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), indices = n.input(1);
  if (failed(data) || failed(indices))
    return failure();
  FailureOr<int64_t> axis = elementsAxis(n, *data, *indices);
  if (failed(axis))
    return failure();
  FailureOr<Value> y = n.make<dtg::GatherElementsOp>({*data, *indices},
                                                     n.i64Attr("axis", *axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// A scatter's `reduction`: none and add (opset 13), mul (ScatterND 16,
/// ScatterElements 16), max and min (18).
FailureOr<std::string> scatterReduction(NodeImporter &n) {
  std::string reduction = n.getString("reduction", "none");
  SmallVector<StringRef, 5> known{"none", "add"};
  if (n.opset >= 16)
    known.push_back("mul");
  if (n.opset >= 18)
    llvm::append_range(known, SmallVector<StringRef>{"max", "min"});
  if (!llvm::is_contained(known, reduction))
    return n.fail("attribute 'reduction' = '" + reduction + "' is not one of " +
                  llvm::join(known, ", ") + " at opset " + Twine(n.opset));
  return reduction;
}

/// Checks that updates have the element type of data.
LogicalResult checkUpdates(NodeImporter &n, Value data, Value updates) {
  if (typeOf(updates).getElementType() != typeOf(data).getElementType())
    return n.fail("input 'updates' has element type different from data's");
  return success();
}

LogicalResult importScatterElements(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), indices = n.input(1),
                   updates = n.input(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  FailureOr<std::string> reduction = scatterReduction(n);
  if (failed(reduction))
    return failure();
  FailureOr<int64_t> axis = elementsAxis(n, *data, *indices);
  if (failed(axis) || failed(checkUpdates(n, *data, *updates)))
    return failure();
  if (typeOf(*updates).getShape() != typeOf(*indices).getShape())
    return n.fail("input 'updates' of shape " +
                  listText(typeOf(*updates).getShape()) +
                  " differs from input 'indices' " +
                  listText(typeOf(*indices).getShape()));
  FailureOr<Value> y = n.make<dtg::ScatterElementsOp>(
      {*data, *indices, *updates},
      {n.i64Attr("axis", *axis), n.strAttr("reduction", *reduction)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Index tuples along the last axis of `indices` (coordinates into `dims`,
/// negative ones counted from the end) as row-major linear indices plus
/// `offset` (null for none); a tuple with a coordinate out of range becomes
/// `outOfRange`.
FailureOr<Value> linearIndices(NodeImporter &n, Value indices,
                               ArrayRef<int64_t> dims, Value offset,
                               int64_t outOfRange) {
  FailureOr<Value> idx = n.castTo(indices, n.builder.getI64Type());
  if (failed(idx))
    return failure();
  int64_t last = typeOf(*idx).getRank() - 1;
  auto k = static_cast<int64_t>(dims.size());
  SmallVector<int64_t> strides(k, 1);
  for (int64_t j = k - 2; j >= 0; --j)
    strides[j] = strides[j + 1] * dims[j + 1];
  Value sizes = intConstant(n, dims, {k});
  Value zero = intConstant(n, {0}, {});
  FailureOr<Value> negative = n.make<dtg::LessOp>({*idx, zero});
  FailureOr<Value> shifted = n.make<dtg::AddOp>({*idx, sizes});
  if (failed(negative) || failed(shifted))
    return failure();
  FailureOr<Value> coords = n.make<dtg::WhereOp>({*negative, *shifted, *idx});
  if (failed(coords))
    return failure();
  FailureOr<Value> above = n.make<dtg::GreaterEqualOp>({*coords, zero});
  FailureOr<Value> below = n.make<dtg::LessOp>({*coords, sizes});
  if (failed(above) || failed(below))
    return failure();
  FailureOr<Value> inside = n.make<dtg::AndOp>({*above, *below});
  if (failed(inside))
    return failure();
  FailureOr<Value> insideInt = n.castTo(*inside, n.builder.getI64Type());
  if (failed(insideInt))
    return failure();
  SmallVector<NamedAttribute> reduceLast = {n.i64ArrayAttr("axes", {last}),
                                            n.boolAttr("keepdims", false)};
  FailureOr<Value> valid = n.make<dtg::ReduceMinOp>(*insideInt, reduceLast);
  if (failed(valid))
    return failure();
  valid = n.make<dtg::EqualOp>({*valid, intConstant(n, {1}, {})});
  if (failed(valid))
    return failure();
  FailureOr<Value> scaled =
      n.make<dtg::MulOp>({*coords, intConstant(n, strides, {k})});
  if (failed(scaled))
    return failure();
  FailureOr<Value> linear = n.make<dtg::ReduceSumOp>(*scaled, reduceLast);
  if (failed(linear))
    return failure();
  if (offset) {
    linear = n.make<dtg::AddOp>({*linear, offset});
    if (failed(linear))
      return failure();
  }
  return n.make<dtg::WhereOp>(
      {*valid, *linear, intConstant(n, {outOfRange}, {})});
}

/// When `indices` is a constant, checks every index tuple (its last axis)
/// against the dimensions `dims` it indexes, the first being dimension
/// `first` of data.
LogicalResult checkConstantTuples(NodeImporter &n, Value indices,
                                  ArrayRef<int64_t> dims, int64_t first) {
  auto constant = indices.getDefiningOp<dtg::ConstantOp>();
  if (!constant)
    return success();
  FailureOr<Tensor> value = dtg::interp::tensorFromAttr(constant.getValue());
  if (failed(value))
    return success();
  auto k = static_cast<int64_t>(dims.size());
  for (int64_t t = 0, e = value->numElements(); t < e; ++t) {
    int64_t index = value->getInt(t), size = dims[t % k];
    if (index < -size || index >= size)
      return n.fail("input 'indices' holds " + Twine(index) +
                    ", out of range for dimension " + Twine(first + t % k) +
                    " of size " + Twine(size));
  }
  return success();
}

/// Checks that input `indices` of an ND op holds integers and has rank >= 1
/// and returns its last dimension, the length of each index tuple.
FailureOr<int64_t> tupleLength(NodeImporter &n, Value indices) {
  auto type = typeOf(indices);
  if (!type.getElementType().isInteger(32) &&
      !type.getElementType().isInteger(64))
    return n.fail("input 'indices' must hold int32 or int64 values");
  if (type.getRank() < 1)
    return n.fail("input 'indices' must have rank 1 or more");
  return type.getShape().back();
}

LogicalResult importGatherND(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), indices = n.input(1);
  if (failed(data) || failed(indices))
    return failure();
  FailureOr<int64_t> k = tupleLength(n, *indices);
  if (failed(k))
    return failure();
  ArrayRef<int64_t> dataShape = typeOf(*data).getShape();
  ArrayRef<int64_t> indicesShape = typeOf(*indices).getShape();
  auto rank = static_cast<int64_t>(dataShape.size());
  auto indicesRank = static_cast<int64_t>(indicesShape.size());
  int64_t batchDims = n.getInt("batch_dims", 0);
  if (batchDims < 0 || batchDims >= std::min(rank, indicesRank))
    return n.fail("attribute 'batch_dims' = " + Twine(batchDims) +
                  " must be in [0, min(rank of data, rank of indices))");
  if (dataShape.take_front(batchDims) != indicesShape.take_front(batchDims))
    return n.fail("the first " + Twine(batchDims) +
                  " dimensions (batch_dims) of data " + listText(dataShape) +
                  " and indices " + listText(indicesShape) + " differ");
  if (*k < 1 || *k > rank - batchDims)
    return n.fail("index tuples of length " + Twine(*k) +
                  " (the last dimension of input 'indices') must have 1 to " +
                  Twine(rank - batchDims) + " entries");
  ArrayRef<int64_t> batch = dataShape.take_front(batchDims);
  ArrayRef<int64_t> inner = dataShape.slice(batchDims, *k);
  ArrayRef<int64_t> rest = dataShape.drop_front(batchDims + *k);
  int64_t batchCount = dtg::numElements(batch);
  int64_t innerCount = dtg::numElements(inner);

  SmallVector<int64_t> flatShape = {batchCount * innerCount};
  llvm::append_range(flatShape, rest);
  FailureOr<Value> flat = n.reshape(*data, flatShape);
  if (failed(flat))
    return failure();
  // Batch b starts at row b * innerCount of the flattened data.
  Value offset;
  if (batchDims > 0) {
    SmallVector<int64_t> offsetShape(batch);
    offsetShape.append(indicesRank - 1 - batchDims, 1);
    FailureOr<Value> batchIndex = iota(n, offsetShape);
    if (failed(batchIndex))
      return failure();
    FailureOr<Value> starts =
        n.make<dtg::MulOp>({*batchIndex, intConstant(n, {innerCount}, {})});
    if (failed(starts))
      return failure();
    offset = *starts;
  }
  if (failed(checkConstantTuples(n, *indices, inner, batchDims)))
    return failure();
  FailureOr<Value> linear =
      linearIndices(n, *indices, inner, offset, batchCount * innerCount);
  if (failed(linear))
    return failure();
  FailureOr<Value> y =
      n.make<dtg::GatherOp>({*flat, *linear}, n.i64Attr("axis", 0));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importScatterND(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), indices = n.input(1),
                   updates = n.input(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  FailureOr<std::string> reduction = scatterReduction(n);
  if (failed(reduction))
    return failure();
  FailureOr<int64_t> k = tupleLength(n, *indices);
  if (failed(k) || failed(checkUpdates(n, *data, *updates)))
    return failure();
  ArrayRef<int64_t> dataShape = typeOf(*data).getShape();
  ArrayRef<int64_t> indicesShape = typeOf(*indices).getShape();
  auto rank = static_cast<int64_t>(dataShape.size());
  if (*k < 1 || *k > rank)
    return n.fail("index tuples of length " + Twine(*k) +
                  " (the last dimension of input 'indices') must have 1 to " +
                  Twine(rank) + " entries");
  ArrayRef<int64_t> inner = dataShape.take_front(*k);
  ArrayRef<int64_t> rest = dataShape.drop_front(*k);
  SmallVector<int64_t> expected(indicesShape.drop_back());
  llvm::append_range(expected, rest);
  if (typeOf(*updates).getShape() != ArrayRef<int64_t>(expected))
    return n.fail("input 'updates' of shape " +
                  listText(typeOf(*updates).getShape()) + " should be " +
                  listText(expected) + " (indices.shape[:-1] + data.shape[" +
                  Twine(*k) + ":])");
  int64_t innerCount = dtg::numElements(inner);
  int64_t tuples = dtg::numElements(indicesShape.drop_back());

  SmallVector<int64_t> flatShape = {innerCount};
  llvm::append_range(flatShape, rest);
  SmallVector<int64_t> updatesShape = {tuples};
  llvm::append_range(updatesShape, rest);
  SmallVector<int64_t> columnShape(updatesShape.size(), 1);
  columnShape[0] = tuples;
  FailureOr<Value> flat = n.reshape(*data, flatShape);
  if (failed(flat))
    return failure();
  FailureOr<Value> rows = n.reshape(*updates, updatesShape);
  if (failed(rows))
    return failure();
  if (failed(checkConstantTuples(n, *indices, inner, 0)))
    return failure();
  FailureOr<Value> linear =
      linearIndices(n, *indices, inner, Value(), innerCount);
  if (failed(linear))
    return failure();
  // Every element of update row t goes to the same row of the flat data.
  linear = n.reshape(*linear, columnShape);
  if (failed(linear))
    return failure();
  linear = broadcastTo(n, *linear, updatesShape);
  if (failed(linear))
    return failure();
  FailureOr<Value> y = n.make<dtg::ScatterElementsOp>(
      {*flat, *linear, *rows},
      {n.i64Attr("axis", 0), n.strAttr("reduction", *reduction)});
  if (failed(y))
    return failure();
  y = n.reshape(*y, dataShape);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importOneHot(NodeImporter &n) {
  FailureOr<Value> indices = n.input(0), values = n.input(2);
  if (failed(indices) || failed(values))
    return failure();
  FailureOr<Tensor> depthValue = n.constantInput(1);
  if (failed(depthValue))
    return failure();
  if (depthValue->numElements() != 1)
    return n.fail("input 'depth' must hold one value, not " +
                  Twine(depthValue->numElements()));
  int64_t depth = depthValue->getInt(0);
  if (depth <= 0 || depth > kMaxTensorElements)
    return n.fail("input 'depth' = " + Twine(depth) + " must be positive");
  auto valuesType = typeOf(*values);
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return n.fail("input 'values' must be [off_value, on_value], not of "
                  "shape " +
                  listText(valuesType.getShape()));
  ArrayRef<int64_t> shape = typeOf(*indices).getShape();
  auto rank = static_cast<int64_t>(shape.size()) + 1;
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.getInt("axis", -1), rank, "attribute 'axis'");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> result(shape);
  result.insert(result.begin() + *axis, depth);
  if (exceedsElementLimit(result))
    return n.fail("the result of shape " + listText(result) +
                  " is larger than dtc supports (2^31 elements)");

  // Negative indices count from the end; indices out of [-depth, depth)
  // match no position and give all off_value.
  FailureOr<Value> idx = n.castTo(*indices, n.builder.getI64Type());
  if (failed(idx))
    return failure();
  Value zero = intConstant(n, {0}, {});
  FailureOr<Value> negative = n.make<dtg::LessOp>({*idx, zero});
  FailureOr<Value> shifted =
      n.make<dtg::AddOp>({*idx, intConstant(n, {depth}, {})});
  if (failed(negative) || failed(shifted))
    return failure();
  idx = n.make<dtg::WhereOp>({*negative, *shifted, *idx});
  if (failed(idx))
    return failure();
  SmallVector<int64_t> column(shape);
  column.insert(column.begin() + *axis, 1);
  idx = n.reshape(*idx, column);
  if (failed(idx))
    return failure();
  SmallVector<int64_t> iotaShape(rank, 1);
  iotaShape[*axis] = depth;
  FailureOr<Value> positions = iota(n, iotaShape);
  if (failed(positions))
    return failure();
  FailureOr<Value> hot = n.make<dtg::EqualOp>({*idx, *positions});
  if (failed(hot))
    return failure();
  FailureOr<Value> off = slice(n, *values, {0}, {1}, {1});
  FailureOr<Value> on = slice(n, *values, {1}, {2}, {1});
  if (failed(off) || failed(on))
    return failure();
  off = n.reshape(*off, {});
  on = n.reshape(*on, {});
  if (failed(off) || failed(on))
    return failure();
  FailureOr<Value> y = n.make<dtg::WhereOp>({*hot, *on, *off});
  if (failed(y))
    return failure();
  y = broadcastTo(n, *y, result);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importCompress(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  // The condition decides the result's shape, so it must be known.
  FailureOr<Tensor> condition = n.constantInput(1);
  if (failed(condition))
    return failure();
  if (condition->rank() != 1)
    return n.fail("input 'condition' must have rank 1, not " +
                  Twine(condition->rank()));
  Value data = *x;
  int64_t axis = 0;
  if (n.hasAttr("axis")) {
    FailureOr<int64_t> a = n.normalizeAxis(
        n.getInt("axis", 0), typeOf(data).getRank(), "attribute 'axis'");
    if (failed(a))
      return failure();
    axis = *a;
  } else {
    FailureOr<Value> flat = n.reshape(data, {typeOf(data).getNumElements()});
    if (failed(flat))
      return failure();
    data = *flat;
  }
  int64_t size = typeOf(data).getDimSize(axis);
  SmallVector<int64_t> selected;
  for (int64_t k = 0, e = condition->numElements(); k < e; ++k) {
    if (condition->get(k) == 0)
      continue;
    if (k >= size)
      return n.fail("input 'condition' selects index " + Twine(k) +
                    " of an axis of size " + Twine(size));
    selected.push_back(k);
  }
  Value indices =
      intConstant(n, selected, {static_cast<int64_t>(selected.size())});
  FailureOr<Value> y =
      n.make<dtg::GatherOp>({data, indices}, n.i64Attr("axis", axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importReverseSequence(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), lengths = n.input(1);
  if (failed(x) || failed(lengths))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  if (shape.size() < 2)
    return n.fail("input must have rank 2 or more, not " + Twine(shape.size()));
  int64_t batchAxis = n.getInt("batch_axis", 1);
  int64_t timeAxis = n.getInt("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return n.fail("attributes 'batch_axis' = " + Twine(batchAxis) +
                  " and 'time_axis' = " + Twine(timeAxis) +
                  " must be 0 and 1 in some order");
  int64_t steps = shape[timeAxis], batch = shape[batchAxis];
  auto lengthsType = typeOf(*lengths);
  if (lengthsType.getShape() != ArrayRef<int64_t>{batch} ||
      !lengthsType.getElementType().isInteger(64))
    return n.fail("input 'sequence_lens' must be int64 of shape [" +
                  Twine(batch) + "]");
  // In each sequence b, position t < len[b] takes position len[b] - 1 - t.
  SmallVector<int64_t> timeShape = {1, 1}, batchShape = {1, 1};
  timeShape[timeAxis] = steps;
  batchShape[batchAxis] = batch;
  FailureOr<Value> time = iota(n, timeShape);
  FailureOr<Value> len = n.reshape(*lengths, batchShape);
  if (failed(time) || failed(len))
    return failure();
  Value t = *time;
  FailureOr<Value> reversed =
      n.make<dtg::SubOp>({*len, intConstant(n, {1}, {})});
  if (failed(reversed))
    return failure();
  reversed = n.make<dtg::SubOp>({*reversed, t});
  FailureOr<Value> inside = n.make<dtg::LessOp>({t, *len});
  if (failed(reversed) || failed(inside))
    return failure();
  FailureOr<Value> index = n.make<dtg::WhereOp>({*inside, *reversed, t});
  if (failed(index))
    return failure();
  SmallVector<int64_t> indexShape(shape.size(), 1);
  indexShape[timeAxis] = steps;
  indexShape[batchAxis] = batch;
  index = n.reshape(*index, indexShape);
  if (failed(index))
    return failure();
  index = broadcastTo(n, *index, shape);
  if (failed(index))
    return failure();
  FailureOr<Value> y =
      n.make<dtg::GatherElementsOp>({*x, *index}, n.i64Attr("axis", timeAxis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

} // namespace

void mlir::dtc::onnx_import::registerShapeIndexingHandlers(
    HandlerRegistry &registry) {
  registry.add("Gather", 13, importGather);
  registry.add("GatherElements", 13, importGatherElements);
  registry.add("GatherND", 13, importGatherND);
  registry.add("ScatterElements", 16, importScatterElements);
  registry.add("ScatterElements", 13, importScatterElements);
  registry.add("ScatterND", 16, importScatterND);
  registry.add("ScatterND", 13, importScatterND);
  registry.add("OneHot", 11, importOneHot);
  registry.add("Compress", 11, importCompress);
  registry.add("ReverseSequence", 10, importReverseSequence);
}
