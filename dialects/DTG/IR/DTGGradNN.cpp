//===- DTGGradNN.cpp - type inference and verifiers of gradient ops -------===//
//
// The gradient primitives of convolution and pooling check their shapes
// against the forward op's shape rule (dtg::windowOutputSize), so that a
// verified op never lets its interpreter kernel index out of bounds.
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dtg;

static RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

/// Checks the window attributes of a conv or pooling op over an input of
/// shape `input` ([N, C, D1..Dk]) and that the windows produce the spatial
/// sizes of `output` ([N', C', O1..Ok]). The callers have checked that both
/// shapes have one rank of at least 3.
static LogicalResult
checkWindowShapes(std::optional<Location> loc, ArrayRef<int64_t> input,
                  ArrayRef<int64_t> output, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                  ArrayRef<int64_t> dilations, bool ceilMode) {
  int64_t k = static_cast<int64_t>(input.size()) - 2;
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
  }
  for (int64_t i = 0; i < k; ++i) {
    int64_t expected =
        windowOutputSize(input[2 + i], kernel[i], strides[i], dilations[i],
                         pads[i], pads[k + i], ceilMode);
    if (expected <= 0)
      return emitOptionalError(loc, "window is larger than the padded input "
                                    "in spatial dimension " +
                                        Twine(i));
    if (output[2 + i] != expected)
      return emitOptionalError(
          loc, "gradient has " + Twine(output[2 + i]) +
                   " positions in spatial dimension " + Twine(i) +
                   ", but the forward op of input " + shapeString(input) +
                   " produces " + Twine(expected));
  }
  return success();
}

/// Checks the channel and batch sizes of a convolution of `input` with
/// `weight` into `output` (all of one rank >= 3).
static LogicalResult checkConvChannels(Operation *op, ArrayRef<int64_t> input,
                                       ArrayRef<int64_t> weight,
                                       ArrayRef<int64_t> output,
                                       int64_t group) {
  if (input.size() < 3 || weight.size() != input.size() ||
      output.size() != input.size())
    return op->emitOpError("input, weight and gradient need one rank of at "
                           "least 3, got ")
           << shapeString(input) << ", " << shapeString(weight) << " and "
           << shapeString(output);
  int64_t channels;
  if (group <= 0 || weight[0] % group != 0 ||
      llvm::MulOverflow(weight[1], group, channels) || channels != input[1])
    return op->emitOpError("channels do not fit: input ")
           << shapeString(input) << ", weight " << shapeString(weight)
           << ", group " << group;
  if (output[0] != input[0] || output[1] != weight[0])
    return op->emitOpError("gradient ")
           << shapeString(output) << " does not match input "
           << shapeString(input) << " and weight " << shapeString(weight);
  return success();
}

/// Checks that every value of `values` has `values[0]`'s element type.
static LogicalResult checkElementTypes(Operation *op, ValueRange values) {
  Type first = tensorTypeOf(values[0]).getElementType();
  for (Value v : values.drop_front())
    if (tensorTypeOf(v).getElementType() != first)
      return op->emitOpError("operands and result differ in element type");
  return success();
}

LogicalResult ConvInputGradOp::verify() {
  if (failed(checkElementTypes(*this, {getGrad(), getWeight(), getResult()})))
    return failure();
  ArrayRef<int64_t> input = getResult().getType().getShape();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  ArrayRef<int64_t> grad = getGrad().getType().getShape();
  if (failed(checkConvChannels(*this, input, weight, grad, getGroup())))
    return failure();
  return checkWindowShapes(getLoc(), input, grad, weight.drop_front(2),
                           getStrides(), getPads(), getDilations(),
                           /*ceilMode=*/false);
}

LogicalResult ConvWeightGradOp::verify() {
  if (failed(checkElementTypes(*this, {getGrad(), getInput(), getResult()})))
    return failure();
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> weight = getResult().getType().getShape();
  ArrayRef<int64_t> grad = getGrad().getType().getShape();
  if (failed(checkConvChannels(*this, input, weight, grad, getGroup())))
    return failure();
  return checkWindowShapes(getLoc(), input, grad, weight.drop_front(2),
                           getStrides(), getPads(), getDilations(),
                           /*ceilMode=*/false);
}

/// Checks a pooling gradient `grad` against the pooled input's shape.
static LogicalResult
checkPoolShapes(std::optional<Location> loc, RankedTensorType grad,
                RankedTensorType input, ArrayRef<int64_t> kernel,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                ArrayRef<int64_t> dilations, bool ceilMode) {
  if (grad.getElementType() != input.getElementType())
    return emitOptionalError(loc, "gradient and input differ in element type");
  if (grad.getRank() < 3 || grad.getRank() != input.getRank())
    return emitOptionalError(loc, "gradient and input need one rank of at "
                                  "least 3 ([N, C, ...])");
  if (grad.getShape().take_front(2) != input.getShape().take_front(2))
    return emitOptionalError(
        loc, "gradient " + shapeString(grad.getShape()) + " and input " +
                 shapeString(input.getShape()) + " differ in N or C");
  return checkWindowShapes(loc, input.getShape(), grad.getShape(), kernel,
                           strides, pads, dilations, ceilMode);
}

LogicalResult MaxPoolGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  auto input = tensorTypeOf(adaptor.getOperand());
  if (failed(checkPoolShapes(loc, tensorTypeOf(adaptor.getGrad()), input,
                             adaptor.getKernel(), adaptor.getStrides(),
                             adaptor.getPads(), adaptor.getDilations(),
                             adaptor.getCeilMode())))
    return failure();
  inferred.push_back(input);
  return success();
}

LogicalResult AvgPoolGradOp::verify() {
  return checkPoolShapes(getLoc(), getGrad().getType(), getResult().getType(),
                         getKernel(), getStrides(), getPads(), getDilations(),
                         getCeilMode());
}
