//===- HandlersNN.cpp - ONNX NN ops -> dtg -------------------------------===//
//
// Contractions (MatMul, Gemm, Einsum), the softmax family (Softmax,
// LogSoftmax, Hardmax), Dropout and the normalizations (BatchNormalization,
// InstanceNormalization, GroupNormalization, LpNormalization,
// MeanVarianceNormalization, LRN, LayerNormalization). Convolution and pooling
// are in HandlersConv.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/HandlersNN.h"
#include "compiler/Import/ONNX/HandlersShape.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using dtg::interp::Tensor;

namespace {

RankedTensorType typeOf(Value value) { return NodeImporter::typeOf(value); }

/// `value` in the shortest form printf's %g gives.
std::string formatDouble(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Dimensions [from, rank) as a reduction axis list.
SmallVector<int64_t> trailingAxes(int64_t from, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = from; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// MatMul with NumPy semantics: a 1-D left operand is a row vector, a 1-D
/// right operand a column vector, and the added dimension is dropped again.
LogicalResult importMatMul(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  auto aType = typeOf(*a), bType = typeOf(*b);
  if (aType.getRank() == 0 || bType.getRank() == 0)
    return n.fail("operands must have rank at least 1, got ranks " +
                  Twine(aType.getRank()) + " and " + Twine(bType.getRank()));
  bool aVector = aType.getRank() == 1, bVector = bType.getRank() == 1;
  Value lhs = *a, rhs = *b;
  if (aVector) {
    FailureOr<Value> row = n.reshape(lhs, {1, aType.getDimSize(0)});
    if (failed(row))
      return failure();
    lhs = *row;
  }
  if (bVector) {
    FailureOr<Value> column = n.reshape(rhs, {bType.getDimSize(0), 1});
    if (failed(column))
      return failure();
    rhs = *column;
  }
  FailureOr<Value> y = n.make<dtg::MatMulOp>({lhs, rhs});
  if (failed(y))
    return failure();
  if (aVector || bVector) {
    SmallVector<int64_t> shape(typeOf(*y).getShape());
    if (bVector)
      shape.pop_back();
    if (aVector)
      shape.erase(shape.end() - (bVector ? 1 : 2));
    y = n.reshape(*y, shape);
    if (failed(y))
      return failure();
  }
  return n.setOutput(0, *y);
}

LogicalResult importGemm(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (!isa<FloatType>(typeOf(*a).getElementType()))
    return n.unsupported("an integer Gemm");
  if (typeOf(*a).getRank() != 2 || typeOf(*b).getRank() != 2)
    return n.fail("A and B must be matrices, got ranks " +
                  Twine(typeOf(*a).getRank()) + " and " +
                  Twine(typeOf(*b).getRank()));
  SmallVector<Value> operands{*a, *b};
  if (Value c = n.optionalInput(2))
    operands.push_back(c);
  else if (n.hasInput(2))
    return failure();
  FailureOr<Value> y = n.make<dtg::GemmOp>(
      operands, {n.f64Attr("alpha", n.getFloat("alpha", 1.0)),
                 n.f64Attr("beta", n.getFloat("beta", 1.0)),
                 n.boolAttr("trans_a", n.getInt("transA", 0) != 0),
                 n.boolAttr("trans_b", n.getInt("transB", 0) != 0)});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// One einsum term: its subscripts in order, 0 standing for the ellipsis.
using EinsumTerm = SmallVector<char>;

/// Parses one term ("ab...c"); an error naming the term on anything else.
FailureOr<EinsumTerm> parseEinsumTerm(NodeImporter &n, StringRef text) {
  EinsumTerm term;
  bool sawEllipsis = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      term.push_back(c);
      continue;
    }
    if (text.substr(i).starts_with("...")) {
      if (sawEllipsis)
        return n.fail("equation term '" + text + "' has two ellipses");
      sawEllipsis = true;
      term.push_back(0);
      i += 2;
      continue;
    }
    return n.fail("equation term '" + text + "' has an invalid character '" +
                  Twine(c) + "'");
  }
  return term;
}

/// Rewrites an ONNX einsum equation into dtg's form: an explicit output, no
/// ellipsis and one lowercase letter per subscript. The implicit output is the
/// ellipsis dimensions, then the subscripts appearing once in sorted order.
FailureOr<std::string> normalizeEinsum(NodeImporter &n, StringRef equation,
                                       ArrayRef<int64_t> ranks) {
  std::string compact;
  for (char c : equation)
    if (c != ' ')
      compact.push_back(c);
  StringRef text(compact);
  size_t arrow = text.find("->");
  bool explicitOutput = arrow != StringRef::npos;
  StringRef lhs = explicitOutput ? text.take_front(arrow) : text;
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  if (parts.size() != ranks.size())
    return n.fail("equation '" + equation + "' has " + Twine(parts.size()) +
                  " input terms for " + Twine(ranks.size()) + " inputs");

  SmallVector<EinsumTerm> terms;
  int64_t ellipsisRank = 0;
  SmallVector<int64_t> termEllipsis;
  for (auto [part, rank] : llvm::zip(parts, ranks)) {
    FailureOr<EinsumTerm> term = parseEinsumTerm(n, part);
    if (failed(term))
      return failure();
    int64_t letters = llvm::count_if(*term, [](char c) { return c != 0; });
    bool hasEllipsis = llvm::is_contained(*term, 0);
    if (hasEllipsis ? letters > rank : letters != rank)
      return n.fail("equation term '" + part +
                    "' does not fit an input of "
                    "rank " +
                    Twine(rank));
    int64_t covered = hasEllipsis ? rank - letters : 0;
    ellipsisRank = std::max(ellipsisRank, covered);
    termEllipsis.push_back(covered);
    terms.push_back(std::move(*term));
  }
  std::optional<EinsumTerm> output;
  if (explicitOutput) {
    FailureOr<EinsumTerm> term = parseEinsumTerm(n, text.drop_front(arrow + 2));
    if (failed(term))
      return failure();
    output = std::move(*term);
  }

  // New names: the used letters in sorted order, then the ellipsis ones.
  int count[128] = {0};
  for (const EinsumTerm &term : terms)
    for (char c : term)
      if (c)
        ++count[static_cast<unsigned char>(c)];
  char rename[128] = {0};
  char next = 'a';
  int64_t distinct = llvm::count_if(count, [](int c) { return c > 0; });
  if (distinct + ellipsisRank > 26)
    return n.unsupported("an equation with more than 26 distinct subscripts "
                         "(ellipsis dimensions included)");
  for (int c = 0; c < 128; ++c)
    if (count[c] > 0)
      rename[c] = next++;
  std::string ellipsisLetters;
  for (int64_t i = 0; i < ellipsisRank; ++i)
    ellipsisLetters.push_back(next++);

  auto spell = [&](const EinsumTerm &term, int64_t covered) {
    std::string s;
    for (char c : term) {
      if (c)
        s.push_back(rename[static_cast<unsigned char>(c)]);
      else
        s += ellipsisLetters.substr(ellipsisRank - covered);
    }
    return s;
  };
  std::string result;
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (i)
      result.push_back(',');
    result += spell(term, termEllipsis[i]);
  }
  result += "->";
  if (output) {
    int seen[128] = {0};
    for (char c : *output) {
      if (!c)
        continue;
      if (!count[static_cast<unsigned char>(c)])
        return n.fail("output subscript '" + Twine(c) +
                      "' appears in no input term");
      if (seen[static_cast<unsigned char>(c)]++)
        return n.fail("output subscript '" + Twine(c) + "' appears twice");
    }
    result += spell(*output, ellipsisRank);
  } else {
    result += ellipsisLetters;
    for (int c = 0; c < 128; ++c)
      if (count[c] == 1)
        result.push_back(rename[c]);
  }
  return result;
}

LogicalResult importEinsum(NodeImporter &n) {
  if (!n.hasAttr("equation"))
    return n.fail("attribute 'equation' is missing");
  SmallVector<Value> inputs;
  SmallVector<int64_t> ranks;
  for (int i = 0; i < n.node.input_size(); ++i) {
    FailureOr<Value> x = n.input(i);
    if (failed(x))
      return failure();
    inputs.push_back(*x);
    ranks.push_back(typeOf(*x).getRank());
  }
  if (inputs.empty())
    return n.fail("needs at least one input");
  FailureOr<std::string> equation =
      normalizeEinsum(n, n.getString("equation", ""), ranks);
  if (failed(equation))
    return failure();
  FailureOr<Value> y =
      n.make<dtg::EinsumOp>(inputs, n.strAttr("equation", *equation));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

/// Softmax and LogSoftmax (opset 13: one axis, default -1).
template <typename OpTy> LogicalResult importSoftmax(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", -1), typeOf(*x).getRank(), "attribute 'axis' =");
  if (failed(axis))
    return failure();
  FailureOr<Value> y = n.make<OpTy>(*x, n.i64Attr("axis", *axis));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere; built as
/// argmax compared with the positions along the axis.
LogicalResult importHardmax(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", -1), type.getRank(), "attribute 'axis' =");
  if (failed(axis))
    return failure();
  FailureOr<Value> index = n.make<dtg::ArgMaxOp>(
      *x, {n.i64Attr("axis", *axis), n.boolAttr("keepdims", true),
           n.boolAttr("select_last_index", false)});
  if (failed(index))
    return failure();
  SmallVector<int64_t> iotaShape(type.getRank(), 1);
  iotaShape[*axis] = type.getDimSize(*axis);
  Tensor iota = Tensor::zeros(n.builder.getI64Type(), iotaShape);
  for (int64_t k = 0; k < iotaShape[*axis]; ++k)
    iota.setInt(k, k);
  FailureOr<Value> hot = n.make<dtg::EqualOp>({*index, n.constant(iota)});
  if (failed(hot))
    return failure();
  FailureOr<Value> y = n.castTo(*hot, type.getElementType());
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// Dropout (opset 13). Ratio and training mode must be compile-time values.
/// In inference mode it is the identity with an all-true mask; in training
/// mode dtg.dropout, keyed by (seed, 0) for now and a stream number unique to
/// the node within the graph.
LogicalResult importDropout(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  double ratio = 0.5;
  if (n.hasInput(1)) {
    FailureOr<Tensor> value = n.constantInput(1);
    if (failed(value))
      return failure();
    if (value->numElements() != 1)
      return n.fail("input 'ratio' must be a scalar");
    ratio = value->get(0);
  }
  if (!(ratio >= 0.0 && ratio < 1.0))
    return n.fail("ratio " + formatDouble(ratio) + " is outside [0, 1)");
  bool training = false;
  if (n.hasInput(2)) {
    FailureOr<Tensor> value = n.constantInput(2);
    if (failed(value))
      return failure();
    if (value->numElements() != 1)
      return n.fail("input 'training_mode' must be a scalar");
    training = value->get(0) != 0.0;
  }
  auto type = typeOf(*x);
  if (!training || ratio == 0.0) {
    if (failed(n.setOutput(0, *x)))
      return failure();
    if (!n.hasOutput(1))
      return success();
    Tensor keep = Tensor::zeros(n.builder.getI1Type(), {});
    keep.setInt(0, 1);
    FailureOr<SmallVector<Value>> mask =
        n.create(dtg::BroadcastOp::getOperationName(), n.constant(keep), {},
                 RankedTensorType::get(type.getShape(), n.builder.getI1Type()));
    if (failed(mask))
      return failure();
    return n.setOutput(1, mask->front());
  }
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("data must hold floats");
  Tensor key = Tensor::zeros(n.builder.getI64Type(), {2});
  key.setInt(0, n.getInt("seed", 0));
  int64_t stream = nextDropoutStream(n.builder.getInsertionBlock());
  FailureOr<SmallVector<Value>> results =
      n.create(dtg::DropoutOp::getOperationName(), {*x, n.constant(key)},
               {n.f64Attr("ratio", ratio), n.i64Attr("stream", stream)}, {},
               /*numResults=*/2);
  if (failed(results))
    return failure();
  if (failed(n.setOutput(0, (*results)[0])))
    return failure();
  return n.setOutput(1, (*results)[1]);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// BatchNormalization. From opset 14, `training_mode` selects batch
/// statistics and the running-statistics outputs; at opset 13 (version 9)
/// asking for any of the outputs after Y is training mode. --train-batchnorm
/// makes every one training mode.
LogicalResult importBatchNorm(NodeImporter &n) {
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  double epsilon = n.getFloat("epsilon", 1e-5);
  double momentum = n.getFloat("momentum", 0.9);
  bool wantsStatistics = n.hasOutput(1) || n.hasOutput(2);
  bool training;
  if (n.opset >= 14) {
    int64_t mode = n.getInt("training_mode", 0);
    if (mode != 0 && mode != 1)
      return n.fail("attribute 'training_mode' must be 0 or 1, got " +
                    Twine(mode));
    training = mode == 1;
    if (!training && wantsStatistics)
      return n.fail("outputs 'running_mean' and 'running_var' need "
                    "training_mode = 1");
  } else {
    training = wantsStatistics || n.hasOutput(3) || n.hasOutput(4);
  }
  training |= n.options().trainBatchNorm;
  if (!training) {
    FailureOr<Value> y = n.make<dtg::BatchNormInferenceOp>(
        operands, n.f64Attr("epsilon", epsilon));
    if (failed(y))
      return failure();
    return n.setOutput(0, *y);
  }
  FailureOr<SmallVector<Value>> results = n.create(
      dtg::BatchNormTrainingOp::getOperationName(), operands,
      {n.f64Attr("epsilon", epsilon), n.f64Attr("momentum", momentum),
       // PyTorch updates the running variance with the unbiased batch
       // variance; the ONNX specification's reference with the biased one.
       n.boolAttr("unbiased_running_var", n.producer() == "pytorch")},
      {}, /*numResults=*/3);
  if (failed(results))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(n.setOutput(i, (*results)[i])))
      return failure();
  if (!n.hasOutput(3) && !n.hasOutput(4))
    return success();

  // Version 9's saved_mean and saved_var: the batch statistics per channel
  // (the biased variance, the one that normalizes).
  int64_t rank = typeOf(operands[0]).getRank();
  SmallVector<int64_t> axes{0};
  llvm::append_range(axes, trailingAxes(2, rank));
  SmallVector<NamedAttribute> attrs{n.i64ArrayAttr("axes", axes),
                                    n.boolAttr("keepdims", true)};
  FailureOr<Value> mean = n.make<dtg::ReduceMeanOp>(operands[0], attrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = n.make<dtg::SubOp>({operands[0], *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squares = n.make<dtg::MulOp>({*centered, *centered});
  if (failed(squares))
    return failure();
  attrs[1] = n.boolAttr("keepdims", false);
  FailureOr<Value> var = n.make<dtg::ReduceMeanOp>(*squares, attrs);
  if (failed(var))
    return failure();
  FailureOr<Value> flatMean = n.reshape(*mean, typeOf(*var).getShape());
  if (failed(flatMean) || failed(n.setOutput(3, *flatMean)))
    return failure();
  return n.setOutput(4, *var);
}

/// Reshapes a per-channel [C] parameter to [C, 1, ...] so that it broadcasts
/// against [N, C, D...] of rank `rank`.
FailureOr<Value> channelParameter(NodeImporter &n, Value param,
                                  int64_t channels, int64_t rank,
                                  StringRef name) {
  auto type = typeOf(param);
  if (type.getRank() != 1 || type.getDimSize(0) != channels)
    return n.fail("input '" + name +
                  "' must be 1-D of size C = " + Twine(channels));
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return n.reshape(param, shape);
}

/// Output 0 = normalized * scale + bias (the per-channel tail of the
/// instance and group normalizations).
LogicalResult setScaledAndShifted(NodeImporter &n, Value normalized,
                                  Value scale, Value bias) {
  FailureOr<Value> scaled = n.make<dtg::MulOp>({normalized, scale});
  if (failed(scaled))
    return failure();
  FailureOr<Value> y = n.make<dtg::AddOp>({*scaled, bias});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// InstanceNormalization: layer normalization over the spatial dimensions
/// of each (sample, channel), then the per-channel scale and bias.
LogicalResult importInstanceNorm(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), scale = n.input(1), bias = n.input(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  auto type = typeOf(*x);
  if (type.getRank() < 3)
    return n.fail("input must have rank at least 3 ([N, C, D...]), got " +
                  Twine(type.getRank()));
  int64_t channels = type.getDimSize(1);
  FailureOr<Value> s =
      channelParameter(n, *scale, channels, type.getRank(), "scale");
  if (failed(s))
    return failure();
  FailureOr<Value> b =
      channelParameter(n, *bias, channels, type.getRank(), "B");
  if (failed(b))
    return failure();
  FailureOr<Value> normalized = n.make<dtg::LayerNormOp>(
      {*x, n.scalar(type.getElementType(), 1.0)},
      {n.i64Attr("axis", 2),
       n.f64Attr("epsilon", n.getFloat("epsilon", 1e-5))});
  if (failed(normalized))
    return failure();
  return setScaledAndShifted(n, *normalized, *s, *b);
}

/// GroupNormalization: x [N, C, D...] normalized over each of `num_groups`
/// groups of C / num_groups channels (all their positions), then scaled and
/// shifted per channel (opset 21: scale and bias [C]) or per group (opset
/// 18: [num_groups], each value shared by its group's channels).
LogicalResult importGroupNorm(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), scale = n.input(1), bias = n.input(2);
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  auto type = typeOf(*x);
  if (type.getRank() < 3)
    return n.fail("input must have rank at least 3 ([N, C, D...]), got " +
                  Twine(type.getRank()));
  int64_t groups = n.getInt("num_groups", 0);
  int64_t channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return n.fail("attribute 'num_groups' = " + Twine(groups) +
                  " does not divide the " + Twine(channels) + " channels");
  if (n.getInt("stash_type", 1) != 1)
    return n.unsupported("attribute 'stash_type' other than 1 (float)");
  ArrayRef<int64_t> shape = type.getShape();
  int64_t perGroup = channels / groups;
  for (int64_t d : shape.drop_front(2))
    perGroup *= d;
  FailureOr<Value> grouped = n.reshape(*x, {shape[0], groups, perGroup});
  if (failed(grouped))
    return failure();
  FailureOr<Value> normalized = n.make<dtg::LayerNormOp>(
      {*grouped, n.scalar(type.getElementType(), 1.0)},
      {n.i64Attr("axis", 2),
       n.f64Attr("epsilon", n.getFloat("epsilon", 1e-5))});
  if (failed(normalized))
    return failure();
  normalized = n.reshape(*normalized, shape);
  if (failed(normalized))
    return failure();
  // Per-group parameters repeat over their group's channels.
  auto perChannel = [&](Value param, StringRef name) -> FailureOr<Value> {
    if (n.opset >= 21)
      return channelParameter(n, param, channels, type.getRank(), name);
    auto paramType = typeOf(param);
    if (paramType.getRank() != 1 || paramType.getDimSize(0) != groups)
      return n.fail("input '" + name +
                    "' must be 1-D of size num_groups = " + Twine(groups));
    FailureOr<Value> column = n.reshape(param, {groups, 1});
    if (failed(column))
      return failure();
    FailureOr<Value> repeated =
        shape::broadcastTo(n, *column, {groups, channels / groups});
    if (failed(repeated))
      return failure();
    SmallVector<int64_t> target(type.getRank() - 1, 1);
    target[0] = channels;
    return n.reshape(*repeated, target);
  };
  FailureOr<Value> s = perChannel(*scale, "scale");
  if (failed(s))
    return failure();
  FailureOr<Value> b = perChannel(*bias, "bias");
  if (failed(b))
    return failure();
  return setScaledAndShifted(n, *normalized, *s, *b);
}

/// LpNormalization: x divided by its L1 or L2 norm along the axis.
LogicalResult importLpNorm(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("input must hold floats");
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", -1), type.getRank(), "attribute 'axis' =");
  if (failed(axis))
    return failure();
  int64_t p = n.getInt("p", 2);
  if (p != 1 && p != 2)
    return n.fail("attribute 'p' must be 1 or 2, got " + Twine(p));
  FailureOr<Value> terms =
      p == 1 ? n.make<dtg::AbsOp>(*x) : n.make<dtg::MulOp>({*x, *x});
  if (failed(terms))
    return failure();
  FailureOr<Value> norm = n.make<dtg::ReduceSumOp>(
      *terms, {n.i64ArrayAttr("axes", {*axis}), n.boolAttr("keepdims", true)});
  if (failed(norm))
    return failure();
  if (p == 2) {
    norm = n.make<dtg::SqrtOp>(*norm);
    if (failed(norm))
      return failure();
  }
  FailureOr<Value> y = n.make<dtg::DivOp>({*x, *norm});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes`
/// (default [0, 2, 3]), the statistics kept broadcastable.
LogicalResult importMeanVarianceNorm(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("input must hold floats");
  SmallVector<int64_t> given =
      n.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  SmallVector<int64_t> axes;
  for (int64_t axis : given) {
    FailureOr<int64_t> a =
        n.normalizeAxis(axis, type.getRank(), "attribute 'axes' entry");
    if (failed(a))
      return failure();
    if (llvm::is_contained(axes, *a))
      return n.fail("attribute 'axes' lists axis " + Twine(*a) + " twice");
    axes.push_back(*a);
  }
  llvm::sort(axes);
  SmallVector<NamedAttribute> attrs{n.i64ArrayAttr("axes", axes),
                                    n.boolAttr("keepdims", true)};
  FailureOr<Value> mean = n.make<dtg::ReduceMeanOp>(*x, attrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = n.make<dtg::SubOp>({*x, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squares = n.make<dtg::MulOp>({*centered, *centered});
  if (failed(squares))
    return failure();
  FailureOr<Value> var = n.make<dtg::ReduceMeanOp>(*squares, attrs);
  if (failed(var))
    return failure();
  FailureOr<Value> std = n.make<dtg::SqrtOp>(*var);
  if (failed(std))
    return failure();
  FailureOr<Value> shifted =
      n.make<dtg::AddOp>({*std, n.scalar(type.getElementType(), 1e-9)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> y = n.make<dtg::DivOp>({*centered, *shifted});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// LRN: x / (bias + alpha / size * square_sum)^beta, the square sum taken
/// over `size` neighbouring channels. The sum is an average pooling of x^2
/// over [N, 1, C, D1*...*Dk] with a window of `size` channels whose padding
/// counts (as zeros), times `size`.
LogicalResult importLRN(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  if (type.getRank() < 3)
    return n.fail("input must have rank at least 3 ([N, C, D...]), got " +
                  Twine(type.getRank()));
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("input must hold floats");
  if (!n.hasAttr("size"))
    return n.fail("attribute 'size' is missing");
  int64_t size = n.getInt("size", 0);
  if (size <= 0 || size > kMaxTensorElements)
    return n.fail("attribute 'size' = " + Twine(size) +
                  " must be in [1, 2^31]");
  Type elementType = type.getElementType();
  FailureOr<Value> squares = n.make<dtg::MulOp>({*x, *x});
  if (failed(squares))
    return failure();
  int64_t spatial = 1;
  for (int64_t d : type.getShape().drop_front(2))
    spatial *= d;
  FailureOr<Value> planes =
      n.reshape(*squares, {type.getDimSize(0), 1, type.getDimSize(1), spatial});
  if (failed(planes))
    return failure();
  FailureOr<Value> mean = n.make<dtg::AvgPoolOp>(
      *planes,
      {n.i64ArrayAttr("kernel", {size, 1}), n.i64ArrayAttr("strides", {1, 1}),
       n.i64ArrayAttr("pads", {(size - 1) / 2, 0, size / 2, 0}),
       n.i64ArrayAttr("dilations", {1, 1}), n.boolAttr("ceil_mode", false),
       n.boolAttr("count_include_pad", true)});
  if (failed(mean))
    return failure();
  mean = n.reshape(*mean, type.getShape());
  if (failed(mean))
    return failure();
  // alpha / size * square_sum is alpha times the window mean.
  FailureOr<Value> scaled = n.make<dtg::MulOp>(
      {*mean, n.scalar(elementType, n.getFloat("alpha", 1e-4))});
  if (failed(scaled))
    return failure();
  FailureOr<Value> base = n.make<dtg::AddOp>(
      {*scaled, n.scalar(elementType, n.getFloat("bias", 1.0))});
  if (failed(base))
    return failure();
  FailureOr<Value> denominator = n.make<dtg::PowOp>(
      {*base, n.scalar(elementType, n.getFloat("beta", 0.75))});
  if (failed(denominator))
    return failure();
  FailureOr<Value> y = n.make<dtg::DivOp>({*x, *denominator});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// LayerNormalization (opset 17). The optional Mean and InvStdDev outputs
/// are computed with reductions in the stash type.
LogicalResult importLayerNorm(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), scale = n.input(1);
  if (failed(x) || failed(scale))
    return failure();
  auto type = typeOf(*x);
  if (type.getRank() == 0)
    return n.fail("input must have rank at least 1");
  FailureOr<int64_t> axis = n.normalizeAxis(
      n.getInt("axis", -1), type.getRank(), "attribute 'axis' =");
  if (failed(axis))
    return failure();
  double epsilon = n.getFloat("epsilon", 1e-5);
  int64_t stash = n.getInt("stash_type", 1);
  Type stashType = convertDataType(n.builder.getContext(), stash);
  // The statistics are computed at least in f32 whatever the input type.
  if (!stashType || !isa<FloatType>(stashType) ||
      (!stashType.isF32() && stashType != type.getElementType()))
    return n.unsupported("attribute 'stash_type' = " + Twine(stash));
  SmallVector<Value> operands{*x, *scale};
  if (Value bias = n.optionalInput(2))
    operands.push_back(bias);
  else if (n.hasInput(2))
    return failure();
  FailureOr<Value> y = n.make<dtg::LayerNormOp>(
      operands, {n.i64Attr("axis", *axis), n.f64Attr("epsilon", epsilon)});
  if (failed(y))
    return failure();
  if (failed(n.setOutput(0, *y)))
    return failure();
  if (!n.hasOutput(1) && !n.hasOutput(2))
    return success();

  NamedAttribute axes =
      n.i64ArrayAttr("axes", trailingAxes(*axis, type.getRank()));
  NamedAttribute keep = n.boolAttr("keepdims", true);
  FailureOr<Value> xs = n.castTo(*x, stashType);
  if (failed(xs))
    return failure();
  FailureOr<Value> mean = n.make<dtg::ReduceMeanOp>(*xs, {axes, keep});
  if (failed(mean) || failed(n.setOutput(1, *mean)))
    return failure();
  if (!n.hasOutput(2))
    return success();
  FailureOr<Value> centered = n.make<dtg::SubOp>({*xs, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squares = n.make<dtg::MulOp>({*centered, *centered});
  if (failed(squares))
    return failure();
  FailureOr<Value> var = n.make<dtg::ReduceMeanOp>(*squares, {axes, keep});
  if (failed(var))
    return failure();
  FailureOr<Value> shifted =
      n.make<dtg::AddOp>({*var, n.scalar(stashType, epsilon)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> invStd = n.make<dtg::RsqrtOp>(*shifted);
  if (failed(invStd))
    return failure();
  return n.setOutput(2, *invStd);
}

} // namespace

void mlir::dtc::onnx_import::registerNNHandlers(HandlerRegistry &registry) {
  registry.add("MatMul", 13, importMatMul);
  registry.add("Gemm", 13, importGemm);
  registry.add("Einsum", 12, importEinsum);

  registry.add("Softmax", 13, importSoftmax<dtg::SoftmaxOp>);
  registry.add("LogSoftmax", 13, importSoftmax<dtg::LogSoftmaxOp>);
  registry.add("Hardmax", 13, importHardmax);
  registry.add("Dropout", 13, importDropout);

  registry.add("BatchNormalization", 9, importBatchNorm);
  registry.add("BatchNormalization", 14, importBatchNorm);
  registry.add("BatchNormalization", 15, importBatchNorm);
  registry.add("InstanceNormalization", 6, importInstanceNorm);
  registry.add("GroupNormalization", 18, importGroupNorm);
  registry.add("LpNormalization", 1, importLpNorm);
  registry.add("MeanVarianceNormalization", 13, importMeanVarianceNorm);
  registry.add("LRN", 13, importLRN);
  registry.add("LayerNormalization", 17, importLayerNorm);

  registerConvHandlers(registry);
}
