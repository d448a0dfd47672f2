//===- AtenHandlersNN.cpp - aten activations, pooling and losses -> dtg ---===//
//
// The activations beyond relu/tanh/sigmoid/gelu (as dtg's clip, leaky_relu,
// elu, softplus, hard_sigmoid, or x * sigmoid(x)), adaptive pooling (a
// window when the sizes divide, else an averaging matrix along each axis),
// addmm, and the nll_loss and mse_loss losses.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TorchScript/AtenHandlers.h"

#include "dialects/DTG/IR/DTGOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::torchscript;
using namespace mlir::dtc::torchscript::lowering;
using dtg::interp::Tensor;

namespace {

NamedAttribute f64Attr(GraphMapper &m, StringRef name, double value) {
  return m.builder.getNamedAttr(name, m.builder.getF64FloatAttr(value));
}

/// An optional number argument: `fallback` when absent or None.
FailureOr<std::optional<double>>
optionalDouble(GraphMapper &m, torch::jit::Node *node, unsigned i) {
  if (i >= node->inputs().size() || m.isNone(node->input(i)))
    return std::optional<double>();
  FailureOr<double> v = m.scalarDouble(node, node->input(i));
  if (failed(v))
    return failure();
  return std::optional<double>(*v);
}

FailureOr<Value> clip(GraphMapper &m, torch::jit::Node *node, Value x,
                      std::optional<double> low, std::optional<double> high) {
  SmallVector<NamedAttribute> attrs;
  if (low)
    attrs.push_back(f64Attr(m, "min", *low));
  if (high)
    attrs.push_back(f64Attr(m, "max", *high));
  return m.make<dtg::ClipOp>(node, x, attrs);
}

/// relu6(x), hardtanh(x, min_val, max_val) and clamp(x, min, max) with
/// numbers as bounds.
LogicalResult importClip(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  std::string kind = node->kind().toQualString();
  if (kind == "aten::relu6")
    return setTensor(m, node, clip(m, node, *x, 0.0, 6.0));
  for (unsigned i = 1; i < node->inputs().size(); ++i)
    if (node->input(i)->type()->kind() == c10::TypeKind::TensorType &&
        !m.isNone(node->input(i)))
      return m.unsupported(node, "bounds given as tensors");
  FailureOr<std::optional<double>> low = optionalDouble(m, node, 1),
                                   high = optionalDouble(m, node, 2);
  if (failed(low) || failed(high))
    return failure();
  if (kind == "aten::hardtanh" && (!*low || !*high))
    return m.fail(node, "min_val and max_val must be numbers");
  if (!*low && !*high)
    return m.fail(node, "at least one of min and max must be given");
  return setTensor(m, node, clip(m, node, *x, *low, *high));
}

/// silu(x) = x * sigmoid(x); hardswish(x) = x * hardsigmoid(x).
template <bool hard>
LogicalResult importSwish(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  FailureOr<Value> gate =
      hard ? m.make<dtg::HardSigmoidOp>(
                 node, *x,
                 {f64Attr(m, "alpha", 1.0 / 6.0), f64Attr(m, "beta", 0.5)})
           : m.make<dtg::SigmoidOp>(node, *x);
  if (failed(gate))
    return failure();
  return setTensor(m, node, m.make<dtg::MulOp>(node, {*x, *gate}));
}

LogicalResult importHardSigmoid(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  return setTensor(
      m, node,
      m.make<dtg::HardSigmoidOp>(
          node, *x, {f64Attr(m, "alpha", 1.0 / 6.0), f64Attr(m, "beta", 0.5)}));
}

/// leaky_relu(x, negative_slope).
LogicalResult importLeakyRelu(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<std::optional<double>> slope = optionalDouble(m, node, 1);
  if (failed(x) || failed(slope))
    return failure();
  return setTensor(m, node,
                   m.make<dtg::LeakyReluOp>(
                       node, *x, f64Attr(m, "alpha", slope->value_or(0.01))));
}

/// elu(x, alpha, scale, input_scale) with unit scales.
LogicalResult importElu(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<std::optional<double>> alpha = optionalDouble(m, node, 1),
                                   scale = optionalDouble(m, node, 2),
                                   inputScale = optionalDouble(m, node, 3);
  if (failed(x) || failed(alpha) || failed(scale) || failed(inputScale))
    return failure();
  if (scale->value_or(1) != 1 || inputScale->value_or(1) != 1)
    return m.unsupported(node, "scale or input_scale other than 1");
  return setTensor(
      m, node,
      m.make<dtg::EluOp>(node, *x, f64Attr(m, "alpha", alpha->value_or(1.0))));
}

/// softplus(x, beta, threshold) with beta 1: log(1 + e^x), and x where x
/// is above the threshold (from 20, PyTorch's default, the two agree to
/// float precision).
LogicalResult importSoftplus(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<std::optional<double>> beta = optionalDouble(m, node, 1),
                                   threshold = optionalDouble(m, node, 2);
  if (failed(x) || failed(beta) || failed(threshold))
    return failure();
  if (beta->value_or(1) != 1)
    return m.unsupported(node, "beta other than 1");
  FailureOr<Value> y = m.make<dtg::SoftplusOp>(node, *x);
  if (failed(y) || threshold->value_or(20) >= 20)
    return setTensor(m, node, y);
  FailureOr<Value> above = m.make<dtg::GreaterOp>(
      node,
      {*x, scalarConstant(m, node, typeOf(*x).getElementType(), **threshold)});
  if (failed(above))
    return failure();
  return setTensor(m, node, m.make<dtg::WhereOp>(node, {*above, *x, *y}));
}

/// pow(x, exponent) of tensors or numbers, in PyTorch's promoted type; of
/// two numbers known while importing, a number.
LogicalResult importPow(GraphMapper &m, torch::jit::Node *node) {
  if (!m.isTensor(node->input(0)) && !m.isTensor(node->input(1))) {
    FailureOr<c10::IValue> base = m.scalar(node, node->input(0)),
                           exponent = m.scalar(node, node->input(1));
    FailureOr<double> b = m.scalarDouble(node, node->input(0)),
                      e = m.scalarDouble(node, node->input(1));
    if (failed(base) || failed(exponent) || failed(b) || failed(e))
      return failure();
    double r = std::pow(*b, *e);
    // pow.int_to_int keeps ints; every other form gives a float.
    bool ints = base->isInt() && exponent->isInt() &&
                node->output()->type()->kind() == c10::TypeKind::IntType;
    m.scalars[node->output()] =
        ints ? c10::IValue(static_cast<int64_t>(r)) : c10::IValue(r);
    return success();
  }
  FailureOr<SmallVector<Value>> operands = promotedOperands(m, node, {0, 1});
  if (failed(operands))
    return failure();
  return setTensor(m, node, m.make<dtg::PowOp>(node, *operands));
}

/// addmm(bias, a, b, beta, alpha) = beta * bias + alpha * (a @ b).
LogicalResult importAddmm(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> bias = m.tensor(node, node->input(0)),
                   a = m.tensor(node, node->input(1)),
                   b = m.tensor(node, node->input(2));
  FailureOr<std::optional<double>> beta = optionalDouble(m, node, 3),
                                   alpha = optionalDouble(m, node, 4);
  if (failed(bias) || failed(a) || failed(b) || failed(beta) || failed(alpha))
    return failure();
  Type element = typeOf(*a).getElementType();
  auto scaled = [&](FailureOr<Value> v, double s) -> FailureOr<Value> {
    if (failed(v) || s == 1)
      return v;
    return m.make<dtg::MulOp>(node, {*v, scalarConstant(m, node, element, s)});
  };
  FailureOr<Value> product =
      scaled(m.make<dtg::MatMulOp>(node, {*a, *b}), alpha->value_or(1));
  FailureOr<Value> shift = scaled(*bias, beta->value_or(1));
  if (failed(product) || failed(shift))
    return failure();
  if (beta->value_or(1) == 0)
    return setTensor(m, node, product);
  return setTensor(m, node, m.make<dtg::AddOp>(node, {*product, *shift}));
}

/// The output sizes of adaptive pooling: output_size (None keeps a size).
FailureOr<SmallVector<int64_t>> adaptiveSizes(GraphMapper &m,
                                              torch::jit::Node *node,
                                              RankedTensorType type,
                                              int64_t k) {
  FailureOr<c10::IValue> given = m.scalar(node, node->input(1));
  if (failed(given))
    return failure();
  SmallVector<int64_t> sizes;
  if (given->isInt()) {
    sizes.assign(k, given->toInt());
  } else if (given->isList()) {
    for (const c10::IValue &v : given->toListRef())
      sizes.push_back(v.isNone() ? -1 : v.toInt());
  } else {
    return m.fail(node, "output_size is not an int or a list of ints");
  }
  if (static_cast<int64_t>(sizes.size()) != k)
    return m.fail(node, "output_size has " + std::to_string(sizes.size()) +
                            " sizes for " + std::to_string(k) +
                            " spatial dimensions");
  for (int64_t d = 0; d < k; ++d) {
    int64_t in = type.getDimSize(type.getRank() - k + d);
    if (sizes[d] == -1)
      sizes[d] = in;
    if (sizes[d] <= 0)
      return m.fail(node, "output size " + std::to_string(sizes[d]) +
                              " is not positive");
  }
  return sizes;
}

/// y = x averaged over PyTorch's adaptive bins along `axis`: the input
/// range [floor(o * in / out), ceil((o + 1) * in / out)) for output o, as
/// a matmul with the averaging matrix (the axis moved last and back).
FailureOr<Value> averageAlong(GraphMapper &m, torch::jit::Node *node, Value x,
                              int64_t axis, int64_t out) {
  auto type = typeOf(x);
  int64_t rank = type.getRank(), in = type.getDimSize(axis);
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  Value moved = x;
  if (axis != rank - 1) {
    FailureOr<Value> t =
        m.make<dtg::TransposeOp>(node, x, i64Array(m, "perm", perm));
    if (failed(t))
      return failure();
    moved = *t;
  }
  Tensor weights = Tensor::zeros(type.getElementType(), {in, out});
  for (int64_t o = 0; o < out; ++o) {
    int64_t begin = o * in / out, end = ((o + 1) * in + out - 1) / out;
    for (int64_t i = begin; i < end; ++i)
      weights.set(i * out + o, 1.0 / static_cast<double>(end - begin));
  }
  FailureOr<Value> y = m.make<dtg::MatMulOp>(
      node, {moved, m.constant(m.locationOf(node), weights)});
  if (failed(y) || axis == rank - 1)
    return y;
  return m.make<dtg::TransposeOp>(node, *y, i64Array(m, "perm", inverse));
}

/// adaptive_avg_pool{1,2}d and adaptive_max_pool{1,2}d(x, output_size): a
/// global mean or max when the output is 1, a window when every size
/// divides, else (average only) bins as PyTorch cuts them.
template <bool isMax>
LogicalResult importAdaptivePool(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  std::string kind = node->kind().toQualString();
  int64_t k = StringRef(kind).ends_with("1d") ? 1 : 2;
  if (type.getRank() != k + 2 && type.getRank() != k + 1)
    return m.fail(node, "input of rank " + std::to_string(type.getRank()) +
                            " (expected " + std::to_string(k + 1) + " or " +
                            std::to_string(k + 2) + ")");
  if (isMax && node->outputs().size() > 1 && node->output(1)->hasUses())
    return m.unsupported(node, "the indices output");
  FailureOr<SmallVector<int64_t>> sizes = adaptiveSizes(m, node, type, k);
  if (failed(sizes))
    return failure();
  int64_t first = type.getRank() - k;
  bool global = true, divides = true;
  SmallVector<int64_t> window;
  for (int64_t d = 0; d < k; ++d) {
    int64_t in = type.getDimSize(first + d), out = (*sizes)[d];
    global &= out == 1;
    divides &= in % out == 0;
    window.push_back(in / std::max<int64_t>(out, 1));
  }
  if (global) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < k; ++d)
      axes.push_back(first + d);
    SmallVector<NamedAttribute> attrs =
        reduceAttrs(m, *x, axes, /*keepdims=*/true);
    return setTensor(m, node,
                     isMax ? m.make<dtg::ReduceMaxOp>(node, *x, attrs)
                           : m.make<dtg::ReduceMeanOp>(node, *x, attrs));
  }
  if (divides) {
    // A window; an unbatched input gets a batch of 1 for it.
    Value input = *x;
    if (type.getRank() == k + 1) {
      SmallVector<int64_t> batched{1};
      batched.append(type.getShape().begin(), type.getShape().end());
      FailureOr<Value> r = reshape(m, node, input, batched);
      if (failed(r))
        return failure();
      input = *r;
    }
    SmallVector<NamedAttribute> attrs{
        i64Array(m, "kernel", window), i64Array(m, "strides", window),
        i64Array(m, "pads", SmallVector<int64_t>(2 * k, 0)),
        i64Array(m, "dilations", SmallVector<int64_t>(k, 1)),
        m.builder.getNamedAttr("ceil_mode", m.builder.getBoolAttr(false))};
    if (!isMax)
      attrs.push_back(m.builder.getNamedAttr("count_include_pad",
                                             m.builder.getBoolAttr(false)));
    FailureOr<Value> y = isMax ? m.make<dtg::MaxPoolOp>(node, input, attrs)
                               : m.make<dtg::AvgPoolOp>(node, input, attrs);
    if (failed(y) || type.getRank() == k + 2)
      return setTensor(m, node, y);
    return setTensor(m, node,
                     reshape(m, node, *y, typeOf(*y).getShape().drop_front()));
  }
  if (isMax)
    return m.unsupported(node, "adaptive max pooling to sizes that do not "
                               "divide the input's");
  Value y = *x;
  for (int64_t d = 0; d < k; ++d) {
    FailureOr<Value> next = averageAlong(m, node, y, first + d, (*sizes)[d]);
    if (failed(next))
      return failure();
    y = *next;
  }
  return setTensor(m, node, y);
}

FailureOr<StringRef> reductionName(GraphMapper &m, torch::jit::Node *node,
                                   unsigned i) {
  FailureOr<int64_t> reduction = m.scalarInt(node, node->input(i));
  if (failed(reduction))
    return failure();
  static const char *names[] = {"none", "mean", "sum"};
  if (*reduction < 0 || *reduction > 2)
    return m.fail(node, "reduction " + std::to_string(*reduction) +
                            " is not 0 (none), 1 (mean) or 2 (sum)");
  return StringRef(names[*reduction]);
}

/// nll_loss / nll_loss_nd / nll_loss2d(input, target, weight, reduction,
/// ignore_index).
LogicalResult importNllLoss(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   t = m.tensor(node, node->input(1));
  FailureOr<StringRef> reduction = reductionName(m, node, 3);
  FailureOr<int64_t> ignore = m.scalarInt(node, node->input(4));
  if (failed(x) || failed(t) || failed(reduction) || failed(ignore))
    return failure();
  SmallVector<Value> operands{*x, *t};
  if (!m.isNone(node->input(2))) {
    FailureOr<Value> w = m.tensor(node, node->input(2));
    if (failed(w))
      return failure();
    operands.push_back(*w);
  }
  return setTensor(
      m, node,
      m.make<dtg::NllLossOp>(
          node, operands,
          {m.builder.getNamedAttr("reduction",
                                  m.builder.getStringAttr(*reduction)),
           m.builder.getNamedAttr("ignore_index",
                                  m.builder.getI64IntegerAttr(*ignore))}));
}

/// mse_loss(input, target, reduction): (input - target)^2, reduced.
LogicalResult importMseLoss(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   t = m.tensor(node, node->input(1));
  FailureOr<StringRef> reduction = reductionName(m, node, 2);
  if (failed(x) || failed(t) || failed(reduction))
    return failure();
  if (typeOf(*x).getShape() != typeOf(*t).getShape())
    return m.unsupported(node, "input and target of different shapes");
  FailureOr<Value> d = m.make<dtg::SubOp>(node, {*x, *t});
  if (failed(d))
    return failure();
  FailureOr<Value> squared = m.make<dtg::MulOp>(node, {*d, *d});
  if (failed(squared) || *reduction == "none")
    return setTensor(m, node, squared);
  SmallVector<NamedAttribute> attrs =
      reduceAttrs(m, *squared, {}, /*keepdims=*/false);
  return setTensor(m, node,
                   *reduction == "sum"
                       ? m.make<dtg::ReduceSumOp>(node, *squared, attrs)
                       : m.make<dtg::ReduceMeanOp>(node, *squared, attrs));
}

} // namespace

void lowering::addNNHandlers(AtenHandlerTable &t) {
  t["aten::relu6"] = importClip;
  t["aten::hardtanh"] = importClip;
  t["aten::clamp"] = importClip;
  t["aten::clip"] = importClip;
  t["aten::silu"] = importSwish<false>;
  t["aten::hardswish"] = importSwish<true>;
  t["aten::hardsigmoid"] = importHardSigmoid;
  t["aten::leaky_relu"] = importLeakyRelu;
  t["aten::elu"] = importElu;
  t["aten::softplus"] = importSoftplus;
  t["aten::pow"] = importPow;
  t["aten::addmm"] = importAddmm;
  t["aten::adaptive_avg_pool1d"] = importAdaptivePool<false>;
  t["aten::adaptive_avg_pool2d"] = importAdaptivePool<false>;
  t["aten::adaptive_max_pool1d"] = importAdaptivePool<true>;
  t["aten::adaptive_max_pool2d"] = importAdaptivePool<true>;
  t["aten::nll_loss"] = importNllLoss;
  t["aten::nll_loss_nd"] = importNllLoss;
  t["aten::nll_loss2d"] = importNllLoss;
  t["aten::mse_loss"] = importMseLoss;
}
