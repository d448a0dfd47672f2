//===- HandlersShapeConstants.cpp - ONNX ops known from shapes -> dtg ----===//
//
// Shapes are static in dtc, so Shape and Size fold to constants, and the
// generators ConstantOfShape, Range and EyeLike become constants (or, when
// large, a broadcast of a scalar). NonZero folds when its input is a
// compile-time constant; Unique, whose result shape depends on the values,
// is not supported.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersShape.h"

#include "dialects/DTG/IR/DTGOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using namespace mlir::dtc::onnx_import::shape;
using dtg::interp::Tensor;

/// Most elements of a constant that Range builds while importing.
static constexpr int64_t kMaxRangeElements = int64_t(1) << 24;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

LogicalResult importShape(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  // start and end (opset 15) count from the back when negative and are
  // clamped to [0, rank].
  auto clampToRank = [rank](int64_t v) {
    if (v < 0)
      v += rank;
    return std::min(std::max(v, int64_t(0)), rank);
  };
  int64_t start = clampToRank(n.getInt("start", 0));
  int64_t end = clampToRank(n.getInt("end", rank));
  ArrayRef<int64_t> dims =
      start < end ? shape.slice(start, end - start) : ArrayRef<int64_t>();
  return n.setOutput(0,
                     intConstant(n, dims, {static_cast<int64_t>(dims.size())}));
}

LogicalResult importSize(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  return n.setOutput(0, intConstant(n, {typeOf(*x).getNumElements()}, {}));
}

LogicalResult importConstantOfShape(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> shape = n.constantInts(0);
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return n.fail("input 'input' " + listText(*shape) +
                    " has a negative dimension");
  if (exceedsElementLimit(*shape))
    return n.fail("the result of shape " + listText(*shape) +
                  " is larger than dtc supports (2^31 elements)");
  Tensor fill = Tensor::zeros(n.builder.getF32Type(), {});
  if (n.hasAttr("value")) {
    FailureOr<Tensor> value = n.getTensorAttr("value");
    if (failed(value))
      return failure();
    if (value->numElements() != 1)
      return n.fail("attribute 'value' must hold one element, not " +
                    Twine(value->numElements()));
    fill = Tensor::zeros(value->elementType, {});
    if (value->isFloat())
      fill.set(0, value->f[0]);
    else
      fill.setInt(0, value->i[0]);
  }
  // A broadcast of the scalar: folded to a constant unless it is large.
  FailureOr<Value> y = broadcastTo(n, n.constant(fill), *shape);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// The one value of constant input `i` (named `what`).
FailureOr<Tensor> scalarInput(NodeImporter &n, unsigned i, StringRef what) {
  FailureOr<Tensor> value = n.constantInput(i);
  if (failed(value))
    return failure();
  if (value->numElements() != 1)
    return n.fail("input '" + what + "' must hold one value, not " +
                  Twine(value->numElements()));
  return value;
}

LogicalResult importRange(NodeImporter &n) {
  FailureOr<Tensor> start = scalarInput(n, 0, "start");
  if (failed(start))
    return failure();
  FailureOr<Tensor> limit = scalarInput(n, 1, "limit");
  if (failed(limit))
    return failure();
  FailureOr<Tensor> delta = scalarInput(n, 2, "delta");
  if (failed(delta))
    return failure();
  Type type = start->elementType;
  if (limit->elementType != type || delta->elementType != type)
    return n.fail("inputs 'start', 'limit' and 'delta' differ in type");
  // count = max(ceil((limit - start) / delta), 0)
  int64_t count;
  if (start->isFloat()) {
    double s = start->f[0], l = limit->f[0], d = delta->f[0];
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return n.fail("inputs 'start', 'limit' and 'delta' must be finite, "
                    "with a non-zero delta");
    double c = std::ceil((l - s) / d);
    if (c > static_cast<double>(kMaxRangeElements))
      return n.unsupported("a Range of more than 2^24 elements");
    count = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    int64_t d = delta->i[0];
    if (d == 0)
      return n.fail("input 'delta' is 0");
    __int128 diff = static_cast<__int128>(limit->i[0]) - start->i[0];
    __int128 q = diff / d;
    if (diff % d != 0 && ((diff % d > 0) == (d > 0)))
      ++q;
    if (q > kMaxRangeElements)
      return n.unsupported("a Range of more than 2^24 elements");
    count = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  Tensor result = Tensor::zeros(type, {count});
  for (int64_t k = 0; k < count; ++k) {
    if (result.isFloat())
      result.set(k, start->f[0] + static_cast<double>(k) * delta->f[0]);
    else
      result.setInt(k, start->i[0] + k * delta->i[0]);
  }
  return n.setOutput(0, n.constant(result));
}

LogicalResult importEyeLike(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  if (type.getRank() != 2)
    return n.fail("input must have rank 2, not " + Twine(type.getRank()));
  Type elementType = type.getElementType();
  if (n.hasAttr("dtype")) {
    int64_t dtype = n.getInt("dtype", 0);
    elementType = convertDataType(n.builder.getContext(), dtype);
    if (!elementType)
      return n.unsupported("attribute 'dtype' = " + dataTypeName(dtype));
  }
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t k = n.getInt("k", 0);
  // result[i, j] = (i + k == j), built from two iotas.
  FailureOr<Value> row = iota(n, {rows, 1}), col = iota(n, {1, cols});
  if (failed(row) || failed(col))
    return failure();
  FailureOr<Value> shifted =
      n.make<dtg::AddOp>({*row, intConstant(n, {k}, {})});
  if (failed(shifted))
    return failure();
  FailureOr<Value> diagonal = n.make<dtg::EqualOp>({*shifted, *col});
  if (failed(diagonal))
    return failure();
  FailureOr<Value> y = n.castTo(*diagonal, elementType);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importNonZero(NodeImporter &n) {
  // The result's shape depends on the values, so they must be known.
  FailureOr<Tensor> x = n.constantInput(0);
  if (failed(x))
    return failure();
  SmallVector<int64_t> strides = dtg::interp::stridesOf(x->shape);
  SmallVector<int64_t> positions;
  for (int64_t k = 0, e = x->numElements(); k < e; ++k)
    if (x->get(k) != 0)
      positions.push_back(k);
  auto count = static_cast<int64_t>(positions.size());
  // Row d holds coordinate d of each non-zero element, in row-major order.
  Tensor result = Tensor::zeros(n.builder.getI64Type(), {x->rank(), count});
  for (int64_t d = 0; d < x->rank(); ++d)
    for (auto [j, k] : llvm::enumerate(positions))
      result.setInt(d * count + j, (k / strides[d]) % x->shape[d]);
  return n.setOutput(0, n.constant(result));
}

LogicalResult importUnique(NodeImporter &n) {
  return n.unsupported("a result shape that depends on the input's values");
}

} // namespace

void mlir::dtc::onnx_import::registerShapeConstantHandlers(
    HandlerRegistry &registry) {
  registry.add("Shape", 15, importShape);
  registry.add("Shape", 13, importShape);
  registry.add("Size", 13, importSize);
  registry.add("ConstantOfShape", 9, importConstantOfShape);
  registry.add("Range", 11, importRange);
  registry.add("EyeLike", 9, importEyeLike);
  registry.add("NonZero", 13, importNonZero);
  registry.add("Unique", 11, importUnique);
}
