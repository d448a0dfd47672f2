//===- DTGOps.cpp - dtg op type inference and verifiers ------------------===//

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dtg;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

/// Checks that `axis` indexes a dimension of a rank-`rank` tensor.
static LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                               int64_t rank, StringRef what = "axis") {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, what + " " + Twine(axis) +
                                      " is out of range for rank " +
                                      Twine(rank));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  return inferBroadcastResult(loc, adaptor.getOperands(), Type(), inferred);
}

//===----------------------------------------------------------------------===//
// Constants and shape
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getValue().getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("value must be a statically shaped tensor");
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = getOperand().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ")
           << in.getElementType() << " to " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeText(in.getShape()) << " (" << in.getNumElements()
           << " elements) to " << shapeText(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(adaptor.getOperand());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitOptionalError(loc, "perm has " + Twine(perm.size()) +
                                      " entries for rank " +
                                      Twine(type.getRank()));
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= type.getRank() || seen[p])
      return emitOptionalError(loc, "perm is not a permutation of [0, rank)");
    seen[p] = true;
    shape.push_back(type.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "needs at least one operand");
  auto first = tensorType(adaptor.getInputs()[0]);
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : adaptor.getInputs()) {
    auto type = tensorType(input);
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitOptionalError(loc, "operands differ in rank or element type");
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && type.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(
            loc, "operand shapes " + shapeText(first.getShape()) + " and " +
                     shapeText(type.getShape()) + " differ outside axis " +
                     Twine(axis));
    shape[axis] += type.getDimSize(axis);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

/// Number of indices start, start+step, ... strictly before limit. Computed
/// unsigned, where the distances (below 2^64) are exact for any attributes.
static uint64_t sliceCount(int64_t start, int64_t limit, int64_t step) {
  if (step > 0) {
    if (limit <= start)
      return 0;
    return (uint64_t(limit) - uint64_t(start) - 1) / uint64_t(step) + 1;
  }
  if (start <= limit)
    return 0;
  return (uint64_t(start) - uint64_t(limit) - 1) / (0 - uint64_t(step)) + 1;
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(adaptor.getOperand());
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    steps = adaptor.getSteps();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank)
    return emitOptionalError(loc, "starts, limits and steps need one entry "
                                  "per dimension (" +
                                      Twine(rank) + ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (steps[d] == 0)
      return emitOptionalError(loc, "step of dimension " + Twine(d) + " is 0");
    uint64_t count = sliceCount(starts[d], limits[d], steps[d]);
    if (count > 0) {
      // Exact: the last index lies between start and limit.
      int64_t last = static_cast<int64_t>(uint64_t(starts[d]) +
                                          (count - 1) * uint64_t(steps[d]));
      if (starts[d] < 0 || starts[d] >= type.getDimSize(d) || last < 0 ||
          last >= type.getDimSize(d))
        return emitOptionalError(loc, "slice of dimension " + Twine(d) +
                                          " leaves the operand");
    }
    // In range: count <= the dimension's size.
    shape.push_back(static_cast<int64_t>(count));
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto data = tensorType(adaptor.getData());
  auto indices = tensorType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult
GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  auto data = tensorType(adaptor.getData());
  auto indices = tensorType(adaptor.getIndices());
  if (data.getRank() != indices.getRank())
    return emitOptionalError(loc, "data and indices differ in rank");
  if (failed(checkAxis(loc, adaptor.getAxis(), data.getRank())))
    return failure();
  inferred.push_back(
      RankedTensorType::get(indices.getShape(), data.getElementType()));
  return success();
}

LogicalResult
ScatterElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &inferred) {
  auto data = tensorType(adaptor.getData());
  auto indices = tensorType(adaptor.getIndices());
  auto updates = tensorType(adaptor.getUpdates());
  if (data.getRank() != indices.getRank() ||
      indices.getShape() != updates.getShape())
    return emitOptionalError(
        loc, "indices and updates must have one shape of data's rank");
  if (updates.getElementType() != data.getElementType())
    return emitOptionalError(loc, "updates and data differ in element type");
  if (failed(checkAxis(loc, adaptor.getAxis(), data.getRank())))
    return failure();
  inferred.push_back(data);
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  StringRef reduction = getReduction();
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return emitOpError("reduction must be one of none, add, mul, max, min, "
                       "not '")
           << reduction << "'";
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto in = getOperand().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes");
  if (!isBroadcastableTo(in.getShape(), out.getShape()))
    return emitOpError("cannot broadcast ")
           << shapeText(in.getShape()) << " to " << shapeText(out.getShape());
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(adaptor.getOperand());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  if (static_cast<int64_t>(repeats.size()) != type.getRank())
    return emitOptionalError(loc, "needs one repeat per dimension");
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(type.getShape(), repeats)) {
    if (r < 0)
      return emitOptionalError(loc, "repeats must be non-negative");
    int64_t size;
    if (llvm::MulOverflow(d, r, size))
      return emitOptionalError(loc, "repeats overflow the result's size");
    shape.push_back(size);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(adaptor.getOperand());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if (static_cast<int64_t>(low.size()) != type.getRank() ||
      static_cast<int64_t>(high.size()) != type.getRank())
    return emitOptionalError(loc,
                             "needs one low and one high pad per dimension");
  StringRef mode = adaptor.getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return emitOptionalError(loc, "unknown pad mode '" + mode + "'");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size;
    if (llvm::AddOverflow(type.getDimSize(d), low[d], size) ||
        llvm::AddOverflow(size, high[d], size))
      return emitOptionalError(loc, "padding of dimension " + Twine(d) +
                                        " overflows its size");
    if (size < 0)
      return emitOptionalError(loc, "padding makes dimension " + Twine(d) +
                                        " negative");
    if (mode != "constant" && (low[d] > 0 || high[d] > 0) &&
        type.getDimSize(d) == 0)
      return emitOptionalError(loc,
                               "cannot " + mode + "-pad an empty dimension");
    if (mode == "reflect" &&
        (low[d] >= type.getDimSize(d) || high[d] >= type.getDimSize(d)))
      return emitOptionalError(loc, "reflect padding of dimension " + Twine(d) +
                                        " must be smaller than its size");
    shape.push_back(size);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getOperand().getType().getRank() < 2)
    return emitOpError("needs rank at least 2");
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

static LogicalResult inferArgReduce(std::optional<Location> loc, Value operand,
                                    int64_t axis, bool keepdims,
                                    SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(operand);
  if (failed(checkAxis(loc, axis, type.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d != axis)
      shape.push_back(type.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(
      RankedTensorType::get(shape, IntegerType::get(type.getContext(), 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferArgReduce(loc, adaptor.getOperand(), adaptor.getAxis(),
                        adaptor.getKeepdims(), inferred);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferArgReduce(loc, adaptor.getOperand(), adaptor.getAxis(),
                        adaptor.getKeepdims(), inferred);
}

LogicalResult CumSumOp::verify() {
  return checkAxis(getLoc(), getAxis(), getOperand().getType().getRank());
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(adaptor.getInput());
  auto target = tensorType(adaptor.getTarget());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "input needs rank at least 2 ([N, C, ...])");
  SmallVector<int64_t> expected{input.getDimSize(0)};
  llvm::append_range(expected, input.getShape().drop_front(2));
  if (target.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(
        loc, "target shape " + shapeText(target.getShape()) +
                 " does not match input " + shapeText(input.getShape()) +
                 " (expected " + shapeText(expected) + ")");
  if (Value weight = adaptor.getWeight()) {
    auto w = tensorType(weight);
    if (w.getRank() != 1 || w.getDimSize(0) != input.getDimSize(1))
      return emitOptionalError(loc,
                               "weight must be 1-D with one entry per class");
  }
  StringRef reduction = adaptor.getReduction();
  if (reduction == "none")
    inferred.push_back(RankedTensorType::get(expected, input.getElementType()));
  else if (reduction == "sum" || reduction == "mean")
    inferred.push_back(RankedTensorType::get({}, input.getElementType()));
  else
    return emitOptionalError(loc, "unknown reduction '" + reduction + "'");
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = tensorType(adaptor.getLhs()), rhs = tensorType(adaptor.getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "operands need rank at least 2");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "operands differ in element type");
  int64_t k = lhs.getShape().back();
  if (rhs.getDimSize(rhs.getRank() - 2) != k)
    return emitOptionalError(
        loc, "contracting dimensions differ: " + shapeText(lhs.getShape()) +
                 " x " + shapeText(rhs.getShape()));
  auto batch =
      broadcastShapes(lhs.getShape().drop_back(2), rhs.getShape().drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions do not broadcast");
  SmallVector<int64_t> shape(*batch);
  shape.push_back(lhs.getDimSize(lhs.getRank() - 2));
  shape.push_back(rhs.getShape().back());
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto a = tensorType(adaptor.getA()), b = tensorType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "A and B must be matrices");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t ka = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (ka != kb)
    return emitOptionalError(loc, "contracting dimensions differ (" +
                                      Twine(ka) + " vs " + Twine(kb) + ")");
  if (Value c = adaptor.getC())
    if (!isBroadcastableTo(tensorType(c).getShape(), {m, n}))
      return emitOptionalError(loc, "C does not broadcast to [" + Twine(m) +
                                        "," + Twine(n) + "]");
  inferred.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

/// Parses "ab,bc->ac" into terms; failure on anything else.
static FailureOr<std::pair<SmallVector<std::string>, std::string>>
parseEinsum(StringRef equation) {
  auto [lhs, rhs] = equation.split("->");
  if (rhs.data() == nullptr || !equation.contains("->"))
    return failure();
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  SmallVector<std::string> terms;
  for (StringRef part : parts) {
    for (char c : part)
      if (c < 'a' || c > 'z')
        if (c < 'A' || c > 'Z')
          return failure();
    terms.push_back(part.str());
  }
  for (char c : rhs)
    if ((c < 'a' || c > 'z') && (c < 'A' || c > 'Z'))
      return failure();
  return std::make_pair(terms, rhs.str());
}

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto parsed = parseEinsum(adaptor.getEquation());
  if (failed(parsed))
    return emitOptionalError(loc, "equation '" + adaptor.getEquation() +
                                      "' is not of the form 'ab,bc->ac'");
  auto &[terms, output] = *parsed;
  if (terms.size() != adaptor.getInputs().size())
    return emitOptionalError(
        loc, "equation has " + Twine(terms.size()) + " terms for " +
                 Twine(adaptor.getInputs().size()) + " operands");
  llvm::DenseMap<char, int64_t> sizes;
  Type elementType;
  for (auto [term, input] : llvm::zip(terms, adaptor.getInputs())) {
    auto type = tensorType(input);
    elementType = type.getElementType();
    if (static_cast<int64_t>(term.size()) != type.getRank())
      return emitOptionalError(loc, "term '" + term + "' does not match rank " +
                                        Twine(type.getRank()));
    for (auto [i, c] : llvm::enumerate(term)) {
      int64_t size = type.getDimSize(i);
      auto [it, inserted] = sizes.try_emplace(c, size);
      if (!inserted && it->second != size) {
        if (it->second == 1)
          it->second = size;
        else if (size != 1)
          return emitOptionalError(loc, "sizes of '" + Twine(c) + "' disagree");
      }
    }
  }
  SmallVector<int64_t> shape;
  for (auto [i, c] : llvm::enumerate(output)) {
    if (output.find(c) != i)
      return emitOptionalError(loc, "output letter '" + Twine(c) +
                                        "' appears twice");
    auto it = sizes.find(c);
    if (it == sizes.end())
      return emitOptionalError(loc, "output letter '" + Twine(c) +
                                        "' is in no input");
    shape.push_back(it->second);
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

/// Checks window attributes of conv and pooling and computes spatial sizes.
static LogicalResult
inferWindow(std::optional<Location> loc, RankedTensorType input,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
            ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations, bool ceilMode,
            SmallVectorImpl<int64_t> &spatial) {
  int64_t k = input.getRank() - 2;
  if (k < 1)
    return emitOptionalError(loc, "input needs rank at least 3 ([N, C, ...])");
  if (static_cast<int64_t>(kernel.size()) != k ||
      static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k ||
      static_cast<int64_t>(pads.size()) != 2 * k)
    return emitOptionalError(loc, "window attributes need " + Twine(k) +
                                      " entries (pads " + Twine(2 * k) + ")");
  for (int64_t i = 0; i < k; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0)
      return emitOptionalError(loc, "kernel, strides and dilations must be "
                                    "positive");
    if (pads[i] < 0 || pads[k + i] < 0)
      return emitOptionalError(loc, "pads must be non-negative");
    int64_t out =
        windowOutputSize(input.getDimSize(2 + i), kernel[i], strides[i],
                         dilations[i], pads[i], pads[k + i], ceilMode);
    if (out <= 0)
      return emitOptionalError(loc, "window is larger than the padded input "
                                    "in spatial dimension " +
                                        Twine(i));
    spatial.push_back(out);
  }
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(adaptor.getInput());
  auto weight = tensorType(adaptor.getWeight());
  int64_t group = adaptor.getGroup();
  if (weight.getRank() != input.getRank())
    return emitOptionalError(loc, "input and weight differ in rank");
  // Checked before the channel dimensions below are read.
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input needs rank at least 3 ([N, C, ...])");
  if (group <= 0 || input.getDimSize(1) % group != 0 ||
      weight.getDimSize(0) % group != 0 ||
      weight.getDimSize(1) * group != input.getDimSize(1))
    return emitOptionalError(
        loc, "channels do not fit: input " + shapeText(input.getShape()) +
                 ", weight " + shapeText(weight.getShape()) + ", group " +
                 Twine(group));
  if (Value bias = adaptor.getBias()) {
    auto b = tensorType(bias);
    if (b.getRank() != 1 || b.getDimSize(0) != weight.getDimSize(0))
      return emitOptionalError(loc,
                               "bias must be 1-D with one entry per filter");
  }
  SmallVector<int64_t> shape{input.getDimSize(0), weight.getDimSize(0)};
  if (failed(inferWindow(loc, input, weight.getShape().drop_front(2),
                         adaptor.getStrides(), adaptor.getPads(),
                         adaptor.getDilations(), /*ceilMode=*/false, shape)))
    return failure();
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename Adaptor>
static LogicalResult inferPool(std::optional<Location> loc, Adaptor adaptor,
                               SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(adaptor.getOperand());
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input needs rank at least 3 ([N, C, ...])");
  if (failed(inferWindow(loc, input, adaptor.getKernel(), adaptor.getStrides(),
                         adaptor.getPads(), adaptor.getDilations(),
                         adaptor.getCeilMode(), shape)))
    return failure();
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor, inferred);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor, inferred);
}

/// Checks that each of `params` is 1-D of size C = input.shape[1].
static LogicalResult checkChannelParams(std::optional<Location> loc,
                                        Value input, ValueRange params) {
  auto type = tensorType(input);
  if (type.getRank() < 2)
    return emitOptionalError(loc, "input needs rank at least 2 ([N, C, ...])");
  for (Value param : params) {
    auto p = tensorType(param);
    if (p.getRank() != 1 || p.getDimSize(0) != type.getDimSize(1))
      return emitOptionalError(loc, "scale, bias, mean and variance must be "
                                    "1-D of size C = " +
                                        Twine(type.getDimSize(1)));
  }
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(checkChannelParams(loc, adaptor.getInput(),
                                adaptor.getOperands().drop_front())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormTrainingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(checkChannelParams(loc, adaptor.getInput(),
                                adaptor.getOperands().drop_front())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  inferred.push_back(adaptor.getRunningMean().getType());
  inferred.push_back(adaptor.getRunningVar().getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, input.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  if (!isBroadcastableTo(tensorType(adaptor.getScale()).getShape(), normalized))
    return emitOptionalError(loc, "scale does not broadcast to the normalized "
                                  "shape " +
                                      shapeText(normalized));
  if (Value bias = adaptor.getBias())
    if (!isBroadcastableTo(tensorType(bias).getShape(), normalized))
      return emitOptionalError(loc, "bias does not broadcast to the normalized "
                                    "shape " +
                                        shapeText(normalized));
  inferred.push_back(input);
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return checkAxis(getLoc(), getAxis(), getOperand().getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(getLoc(), getAxis(), getOperand().getType().getRank());
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  double ratio = adaptor.getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return emitOptionalError(loc, "ratio " + std::to_string(ratio) +
                                      " is outside [0, 1)");
  auto key = tensorType(adaptor.getKey());
  auto input = tensorType(adaptor.getOperand());
  if (std::optional<ArrayRef<int64_t>> whole = adaptor.getBlockOf()) {
    if (int64_t(whole->size()) != input.getRank())
      return emitOptionalError(loc, "block_of needs the operand's rank");
    for (auto [w, b] : llvm::zip(*whole, input.getShape()))
      if (w < b)
        return emitOptionalError(loc, "block_of is smaller than the operand");
    if (key.getShape() != ArrayRef<int64_t>{3 + input.getRank()})
      return emitOptionalError(loc, "key must be a tensor<" +
                                        std::to_string(3 + input.getRank()) +
                                        "xi64> with block_of (seed, step, "
                                        "offset, the block's start)");
  } else if (key.getShape() != ArrayRef<int64_t>{2} &&
             key.getShape() != ArrayRef<int64_t>{3}) {
    return emitOptionalError(loc, "key must be a tensor<2xi64> or "
                                  "tensor<3xi64>");
  }
  inferred.push_back(input);
  inferred.push_back(
      RankedTensorType::get(input.getShape(), IntegerType::get(context, 1)));
  return success();
}

#define GET_OP_CLASSES
#include "dialects/DTG/IR/DTGOps.cpp.inc"
