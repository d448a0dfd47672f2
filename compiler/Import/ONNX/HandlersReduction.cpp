//===- HandlersReduction.cpp - ONNX reductions, scans and losses -> dtg ---===//
//
// The Reduce* family (ReduceL1/L2/LogSum/SumSquare composed from dtg.reduce_sum
// and elementwise ops), ArgMax/ArgMin, CumSum, and the losses
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (dtg.log_softmax on
// axis 1 followed by dtg.nll_loss).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/NodeImporter.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

/// Reads an INT attribute that must be 0 or 1.
FailureOr<bool> readFlag(NodeImporter &n, StringRef name,
                         int64_t defaultValue) {
  int64_t value = n.getInt(name, defaultValue);
  if (value != 0 && value != 1)
    return n.fail("attribute '" + name + "' must be 0 or 1, got " +
                  Twine(value));
  return value == 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduction {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// Normalizes reduction axes for `rank`: in range, no repeats, sorted.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n,
                                              ArrayRef<int64_t> axes,
                                              int64_t rank, StringRef what) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = n.normalizeAxis(axis, rank, (what + " entry").str());
    if (failed(a))
      return failure();
    if (llvm::is_contained(result, *a))
      return n.fail(what + " lists axis " + Twine(*a) + " twice");
    result.push_back(*a);
  }
  llvm::sort(result);
  return result;
}

/// A dtg reduction of `kind` (one of the kinds with a dtg op of its own).
FailureOr<Value> reduce(NodeImporter &n, Reduction kind, Value x,
                        ArrayRef<NamedAttribute> attrs) {
  switch (kind) {
  case Reduction::Mean:
    return n.make<dtg::ReduceMeanOp>(x, attrs);
  case Reduction::Max:
    return n.make<dtg::ReduceMaxOp>(x, attrs);
  case Reduction::Min:
    return n.make<dtg::ReduceMinOp>(x, attrs);
  case Reduction::Prod:
    return n.make<dtg::ReduceProdOp>(x, attrs);
  case Reduction::LogSumExp:
    return n.make<dtg::ReduceLogSumExpOp>(x, attrs);
  default:
    return n.make<dtg::ReduceSumOp>(x, attrs);
  }
}

/// A float function (sqrt, log) of an integer or float tensor; integers are
/// computed in f64 and truncated back, as NumPy's astype does.
template <typename OpTy>
FailureOr<Value> applyFloatFunction(NodeImporter &n, Value x) {
  Type type = typeOf(x).getElementType();
  if (isa<FloatType>(type))
    return n.make<OpTy>(x);
  FailureOr<Value> wide = n.castTo(x, n.builder.getF64Type());
  if (failed(wide))
    return failure();
  FailureOr<Value> y = n.make<OpTy>(*wide);
  if (failed(y))
    return failure();
  return n.castTo(*y, type);
}

/// The Reduce* ops. ReduceSum takes its axes as input #1 since opset 13, the
/// others since opset 18 (the `axes` attribute before). No axes means all
/// axes, unless noop_with_empty_axes makes it the identity.
template <Reduction kind, bool axesInput = false>
LogicalResult importReduce(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> given;
  bool noop = false;
  if (axesInput) {
    if (n.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> axes = n.constantInts(1);
      if (failed(axes))
        return failure();
      given = std::move(*axes);
    }
    FailureOr<bool> flag = readFlag(n, "noop_with_empty_axes", 0);
    if (failed(flag))
      return failure();
    noop = *flag;
  } else if (std::optional<SmallVector<int64_t>> axes = n.getInts("axes")) {
    given = std::move(*axes);
  }
  FailureOr<bool> keepdims = readFlag(n, "keepdims", 1);
  if (failed(keepdims))
    return failure();
  if (given.empty()) {
    if (noop)
      return n.setOutput(0, *x);
    for (int64_t d = 0; d < rank; ++d)
      given.push_back(d);
  }
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(
      n, given, rank, axesInput ? "input 'axes'" : "attribute 'axes'");
  if (failed(axes))
    return failure();
  SmallVector<NamedAttribute> attrs{n.i64ArrayAttr("axes", *axes),
                                    n.boolAttr("keepdims", *keepdims)};

  Value operand = *x;
  if (kind == Reduction::L1 || kind == Reduction::L2 ||
      kind == Reduction::SumSquare) {
    FailureOr<Value> terms = kind == Reduction::L1
                                 ? n.make<dtg::AbsOp>(operand)
                                 : n.make<dtg::MulOp>({operand, operand});
    if (failed(terms))
      return failure();
    operand = *terms;
  }
  FailureOr<Value> y = reduce(n, kind, operand, attrs);
  if (failed(y))
    return failure();
  if (kind == Reduction::L2)
    y = applyFloatFunction<dtg::SqrtOp>(n, *y);
  else if (kind == Reduction::LogSum)
    y = applyFloatFunction<dtg::LogOp>(n, *y);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// ArgMax and ArgMin (opset 13).
template <typename OpTy> LogicalResult importArgReduce(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", 0), typeOf(*x).getRank(), "attribute 'axis' =");
  FailureOr<bool> keepdims = readFlag(n, "keepdims", 1);
  FailureOr<bool> last = readFlag(n, "select_last_index", 0);
  if (failed(axis) || failed(keepdims) || failed(last))
    return failure();
  FailureOr<Value> y = n.make<OpTy>(
      *x, {n.i64Attr("axis", *axis), n.boolAttr("keepdims", *keepdims),
           n.boolAttr("select_last_index", *last)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// CumSum: the axis is input #1 and must be a compile-time scalar.
LogicalResult importCumSum(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> axisValue = n.constantInts(1);
  if (failed(axisValue))
    return failure();
  if (axisValue->size() != 1)
    return n.fail("input 'axis' must be a scalar, got " +
                  Twine(axisValue->size()) + " values");
  FailureOr<int64_t> axis = n.normalizeAxis(
      axisValue->front(), typeOf(*x).getRank(), "input 'axis' =");
  FailureOr<bool> exclusive = readFlag(n, "exclusive", 0);
  FailureOr<bool> reverse = readFlag(n, "reverse", 0);
  if (failed(axis) || failed(exclusive) || failed(reverse))
    return failure();
  FailureOr<Value> y = n.make<dtg::CumSumOp>(
      *x, {n.i64Attr("axis", *axis), n.boolAttr("exclusive", *exclusive),
           n.boolAttr("reverse", *reverse)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// dtg.nll_loss of log-probabilities `input` [N, C, d...] against input #1
/// (the targets), weighted by the optional input #2, with the node's
/// `reduction` and `ignore_index`.
FailureOr<Value> nllLoss(NodeImporter &n, Value input) {
  FailureOr<Value> target = n.input(1);
  if (failed(target))
    return failure();
  SmallVector<Value> operands{input, *target};
  if (n.hasInput(2)) {
    FailureOr<Value> weight = n.input(2);
    if (failed(weight))
      return failure();
    operands.push_back(*weight);
  }
  std::string reduction = n.getString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return n.fail("attribute 'reduction' must be none, sum or mean, got '" +
                  reduction + "'");
  SmallVector<NamedAttribute> attrs{n.strAttr("reduction", reduction)};
  if (n.hasAttr("ignore_index"))
    attrs.push_back(n.i64Attr("ignore_index", n.getInt("ignore_index", 0)));
  return n.make<dtg::NllLossOp>(operands, attrs);
}

/// Checks that the class scores are [N, C, d...].
LogicalResult checkScores(NodeImporter &n, Value input) {
  auto type = typeOf(input);
  if (type.getRank() < 2)
    return n.fail("input #0 must have rank at least 2 ([N, C, d...]), got " +
                  Twine(type.getRank()));
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("input #0 must hold floats");
  return success();
}

LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  if (failed(input) || failed(checkScores(n, *input)))
    return failure();
  FailureOr<Value> loss = nllLoss(n, *input);
  if (failed(loss))
    return failure();
  return n.setOutput(0, *loss);
}

LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &n) {
  FailureOr<Value> scores = n.input(0);
  if (failed(scores) || failed(checkScores(n, *scores)))
    return failure();
  FailureOr<Value> logProb =
      n.make<dtg::LogSoftmaxOp>(*scores, n.i64Attr("axis", 1));
  if (failed(logProb))
    return failure();
  FailureOr<Value> loss = nllLoss(n, *logProb);
  if (failed(loss))
    return failure();
  if (failed(n.setOutput(0, *loss)))
    return failure();
  return n.setOutput(1, *logProb);
}

} // namespace

void mlir::dtc::onnx_import::registerReductionHandlers(
    HandlerRegistry &registry) {
  registry.add("ReduceSum", 13, importReduce<Reduction::Sum, true>);
  registry.add("ReduceMean", 13, importReduce<Reduction::Mean>);
  registry.add("ReduceMax", 13, importReduce<Reduction::Max>);
  registry.add("ReduceMin", 13, importReduce<Reduction::Min>);
  registry.add("ReduceProd", 13, importReduce<Reduction::Prod>);
  registry.add("ReduceL1", 13, importReduce<Reduction::L1>);
  registry.add("ReduceL2", 13, importReduce<Reduction::L2>);
  registry.add("ReduceLogSum", 13, importReduce<Reduction::LogSum>);
  registry.add("ReduceLogSumExp", 13, importReduce<Reduction::LogSumExp>);
  registry.add("ReduceSumSquare", 13, importReduce<Reduction::SumSquare>);
  registry.add("ReduceMean", 18, importReduce<Reduction::Mean, true>);
  registry.add("ReduceMax", 18, importReduce<Reduction::Max, true>);
  registry.add("ReduceMin", 18, importReduce<Reduction::Min, true>);
  registry.add("ReduceProd", 18, importReduce<Reduction::Prod, true>);
  registry.add("ReduceL1", 18, importReduce<Reduction::L1, true>);
  registry.add("ReduceL2", 18, importReduce<Reduction::L2, true>);
  registry.add("ReduceLogSum", 18, importReduce<Reduction::LogSum, true>);
  registry.add("ReduceLogSumExp", 18, importReduce<Reduction::LogSumExp, true>);
  registry.add("ReduceSumSquare", 18, importReduce<Reduction::SumSquare, true>);

  registry.add("ArgMax", 13, importArgReduce<dtg::ArgMaxOp>);
  registry.add("ArgMin", 13, importArgReduce<dtg::ArgMinOp>);
  registry.add("CumSum", 11, importCumSum);
  registry.add("CumSum", 14, importCumSum);

  registry.add("NegativeLogLikelihoodLoss", 13,
               importNegativeLogLikelihoodLoss);
  registry.add("SoftmaxCrossEntropyLoss", 13, importSoftmaxCrossEntropyLoss);
}
