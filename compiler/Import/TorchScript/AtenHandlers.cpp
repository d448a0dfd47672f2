//===- AtenHandlers.cpp - aten ops -> dtg ---------------------------------===//
//
// One handler per aten op (by its qualified name, whatever the overload:
// each handler tells tensor from scalar operands itself), and the prim ops
// that build and take apart lists. Shapes are static, so aten::size and the
// integer arithmetic on sizes are evaluated here.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TorchScript/AtenHandlers.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::torchscript;
using namespace mlir::dtc::torchscript::lowering;
using dtg::interp::Tensor;

RankedTensorType lowering::typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

LogicalResult lowering::setTensor(GraphMapper &m, torch::jit::Node *node,
                                  FailureOr<Value> value, unsigned output) {
  if (failed(value))
    return failure();
  m.values[node->output(output)] = *value;
  return success();
}

/// A rank-0 constant of `element` holding `value`.
Value lowering::scalarConstant(GraphMapper &m, torch::jit::Node *node,
                               Type element, double value) {
  Tensor t = Tensor::zeros(element, {});
  if (t.isFloat())
    t.set(0, value);
  else
    t.setInt(0, static_cast<int64_t>(value));
  return m.constant(m.locationOf(node), t);
}

FailureOr<Value> lowering::reshape(GraphMapper &m, torch::jit::Node *node,
                                   Value value, ArrayRef<int64_t> shape) {
  auto type = typeOf(value);
  if (type.getShape() == shape)
    return value;
  if (dtg::numElements(shape) != type.getNumElements())
    return m.fail(node, "cannot view " + std::to_string(type.getNumElements()) +
                            " elements as " + std::to_string(shape.size()) +
                            "-D shape of " +
                            std::to_string(dtg::numElements(shape)));
  return m.builder
      .create<dtg::ReshapeOp>(
          m.locationOf(node),
          RankedTensorType::get(shape, type.getElementType()), value)
      .getResult();
}

FailureOr<int64_t> lowering::normalizeDim(GraphMapper &m,
                                          torch::jit::Node *node, int64_t dim,
                                          int64_t rank) {
  if (dim < -rank || dim >= std::max<int64_t>(rank, 1))
    return m.fail(node, "dimension " + std::to_string(dim) +
                            " is out of range for rank " +
                            std::to_string(rank));
  return dim < 0 ? dim + rank : dim;
}

FailureOr<Value> lowering::sliceAlong(GraphMapper &m, torch::jit::Node *node,
                                      Value x, int64_t axis, int64_t start,
                                      int64_t limit, int64_t step) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> starts(rank, 0), limits(shape), steps(rank, 1);
  starts[axis] = start;
  limits[axis] = limit;
  steps[axis] = step;
  return m.make<dtg::SliceOp>(node, x,
                              {i64Array(m, "starts", starts),
                               i64Array(m, "limits", limits),
                               i64Array(m, "steps", steps)});
}

NamedAttribute lowering::i64Array(GraphMapper &m, StringRef name,
                                  ArrayRef<int64_t> values) {
  return m.builder.getNamedAttr(name, m.builder.getDenseI64ArrayAttr(values));
}

SmallVector<NamedAttribute> lowering::reduceAttrs(GraphMapper &m, Value x,
                                                  ArrayRef<int64_t> axes,
                                                  bool keepdims) {
  SmallVector<int64_t> all(axes);
  if (all.empty())
    for (int64_t d = 0, rank = typeOf(x).getRank(); d < rank; ++d)
      all.push_back(d);
  return {i64Array(m, "axes", all),
          m.builder.getNamedAttr("keepdims", m.builder.getBoolAttr(keepdims))};
}

Value lowering::castTo(GraphMapper &m, torch::jit::Node *node, Value x,
                       Type element) {
  auto type = typeOf(x);
  if (type.getElementType() == element)
    return x;
  return m.builder.create<dtg::CastOp>(
      m.locationOf(node), RankedTensorType::get(type.getShape(), element), x);
}

namespace {

/// 0 for bool, 1 for integers, 2 for floats.
int kindOf(Type type) {
  return type.isInteger(1) ? 0 : isa<FloatType>(type) ? 2 : 1;
}

} // namespace

Type lowering::promotedType(ArrayRef<Type> types) {
  Type best;
  for (Type t : types)
    if (!best || kindOf(t) > kindOf(best) ||
        (kindOf(t) == kindOf(best) &&
         t.getIntOrFloatBitWidth() > best.getIntOrFloatBitWidth()))
      best = t;
  return best;
}

FailureOr<SmallVector<Value>>
lowering::promotedOperands(GraphMapper &m, torch::jit::Node *node,
                           ArrayRef<unsigned> inputs, bool floatResult) {
  // Each operand a tensor, or a number (a 0-d tensor known while importing
  // is one too).
  SmallVector<Value> tensors(inputs.size());
  SmallVector<double> numbers(inputs.size());
  SmallVector<Type> tiers[3]; // dimensioned, 0-d, numbers
  for (auto [k, i] : llvm::enumerate(inputs)) {
    const torch::jit::Value *input = node->input(i);
    if (m.isTensor(input)) {
      FailureOr<Value> t = m.tensor(node, input);
      if (failed(t))
        return failure();
      tensors[k] = *t;
      tiers[typeOf(*t).getRank() > 0 ? 0 : 1].push_back(
          typeOf(*t).getElementType());
      continue;
    }
    FailureOr<c10::IValue> v = m.scalar(node, input);
    if (failed(v))
      return failure();
    if (v->isDouble()) {
      numbers[k] = v->toDouble();
      tiers[2].push_back(m.builder.getF32Type());
    } else if (v->isInt()) {
      numbers[k] = static_cast<double>(v->toInt());
      tiers[2].push_back(m.builder.getI64Type());
    } else if (v->isBool()) {
      numbers[k] = v->toBool();
      tiers[2].push_back(m.builder.getI1Type());
    } else {
      return m.fail(node, "input '" + input->debugName() +
                              "' is neither a tensor nor a number");
    }
  }
  Type result;
  for (ArrayRef<Type> tier : tiers) {
    Type candidate = promotedType(tier);
    if (candidate && (!result || kindOf(candidate) > kindOf(result)))
      result = candidate;
  }
  if (floatResult && !isa<FloatType>(result))
    result = m.builder.getF32Type();
  SmallVector<Value> operands;
  for (auto [t, number] : llvm::zip(tensors, numbers))
    operands.push_back(t ? castTo(m, node, t, result)
                         : scalarConstant(m, node, result, number));
  return operands;
}

namespace {

template <typename OpTy>
LogicalResult unary(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, *x));
}

/// A float function (exp, tanh, ...): an integer operand becomes float32,
/// as PyTorch computes it.
template <typename OpTy>
LogicalResult floatUnary(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<SmallVector<Value>> x =
      promotedOperands(m, node, {0}, /*floatResult=*/true);
  if (failed(x))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, x->front()));
}

/// add/sub (with alpha), mul, div (true division) with a tensor or number
/// second operand, in PyTorch's promoted type.
template <typename OpTy, bool hasAlpha = false>
LogicalResult binary(GraphMapper &m, torch::jit::Node *node) {
  if (node->inputs().size() > 2 && !hasAlpha && !m.isNone(node->input(2)))
    return m.unsupported(node, "a rounding mode");
  FailureOr<SmallVector<Value>> operands = promotedOperands(
      m, node, {0, 1}, /*floatResult=*/std::is_same_v<OpTy, dtg::DivOp>);
  if (failed(operands))
    return failure();
  Value a = (*operands)[0], b = (*operands)[1];
  if (hasAlpha && node->inputs().size() > 2) {
    FailureOr<double> alpha = m.scalarDouble(node, node->input(2));
    if (failed(alpha))
      return failure();
    if (*alpha != 1) {
      FailureOr<Value> scaled = m.make<dtg::MulOp>(
          node,
          {b, scalarConstant(m, node, typeOf(b).getElementType(), *alpha)});
      if (failed(scaled))
        return failure();
      b = *scaled;
    }
  }
  return setTensor(m, node, m.make<OpTy>(node, {a, b}));
}

LogicalResult importGelu(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  std::string approximate = "none";
  if (node->inputs().size() > 1) {
    FailureOr<c10::IValue> v = m.scalar(node, node->input(1));
    if (failed(v))
      return failure();
    approximate = v->toStringRef();
  }
  if (approximate != "none" && approximate != "tanh")
    return m.fail(node, "approximate = '" + approximate +
                            "' is not one of none, tanh");
  return setTensor(
      m, node,
      m.make<dtg::GeluOp>(
          node, *x,
          m.builder.getNamedAttr(
              "approximate", m.builder.getBoolAttr(approximate == "tanh"))));
}

FailureOr<Value> transpose2D(GraphMapper &m, torch::jit::Node *node, Value w) {
  return m.make<dtg::TransposeOp>(
      node, w,
      m.builder.getNamedAttr("perm", m.builder.getDenseI64ArrayAttr({1, 0})));
}

/// linear(x, w, b): x w^T + b.
LogicalResult importLinear(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   w = m.tensor(node, node->input(1));
  if (failed(x) || failed(w))
    return failure();
  if (typeOf(*w).getRank() != 2)
    return m.fail(node, "weight must be 2-D");
  FailureOr<Value> wt = transpose2D(m, node, *w);
  if (failed(wt))
    return failure();
  FailureOr<Value> y = m.make<dtg::MatMulOp>(node, {*x, *wt});
  if (failed(y))
    return failure();
  if (node->inputs().size() > 2 && !m.isNone(node->input(2))) {
    FailureOr<Value> b = m.tensor(node, node->input(2));
    if (failed(b))
      return failure();
    y = m.make<dtg::AddOp>(node, {*y, *b});
  }
  return setTensor(m, node, y);
}

LogicalResult importMatmul(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> a = m.tensor(node, node->input(0)),
                   b = m.tensor(node, node->input(1));
  if (failed(a) || failed(b))
    return failure();
  return setTensor(m, node, m.make<dtg::MatMulOp>(node, {*a, *b}));
}

/// softmax / log_softmax(x, dim, dtype).
template <typename OpTy>
LogicalResult importSoftmax(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(dim))
    return failure();
  if (node->inputs().size() > 2 && !m.isNone(node->input(2)))
    return m.unsupported(node, "a dtype argument");
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return setTensor(
      m, node,
      m.make<OpTy>(
          node, *x,
          m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(*axis))));
}

/// cross_entropy_loss(input [N, C, d...], target [N, d...], weight, reduction,
/// ignore_index, label_smoothing).
LogicalResult importCrossEntropy(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   t = m.tensor(node, node->input(1));
  if (failed(x) || failed(t))
    return failure();
  if (typeOf(*x).getRank() < 2 ||
      typeOf(*t).getRank() != typeOf(*x).getRank() - 1)
    return m.unsupported(node, "input of rank " +
                                   std::to_string(typeOf(*x).getRank()) +
                                   " with targets of rank " +
                                   std::to_string(typeOf(*t).getRank()) +
                                   " (only [N, C, d...] with class indices "
                                   "[N, d...])");
  Value weight;
  if (!m.isNone(node->input(2))) {
    FailureOr<Value> w = m.tensor(node, node->input(2));
    if (failed(w))
      return failure();
    weight = *w;
  }
  FailureOr<int64_t> reduction = m.scalarInt(node, node->input(3));
  FailureOr<int64_t> ignore = m.scalarInt(node, node->input(4));
  FailureOr<double> smoothing = m.scalarDouble(node, node->input(5));
  if (failed(reduction) || failed(ignore) || failed(smoothing))
    return failure();
  if (*smoothing != 0)
    return m.unsupported(node, "label_smoothing");
  const char *reductions[] = {"none", "mean", "sum"};
  if (*reduction < 0 || *reduction > 2)
    return m.fail(node, "reduction " + std::to_string(*reduction) +
                            " is not 0, 1 or 2");
  FailureOr<Value> logp = m.make<dtg::LogSoftmaxOp>(
      node, *x, m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(1)));
  if (failed(logp))
    return failure();
  SmallVector<Value> operands{*logp, *t};
  if (weight)
    operands.push_back(weight);
  return setTensor(
      m, node,
      m.make<dtg::NllLossOp>(
          node, operands,
          {m.builder.getNamedAttr(
               "reduction", m.builder.getStringAttr(reductions[*reduction])),
           m.builder.getNamedAttr("ignore_index",
                                  m.builder.getI64IntegerAttr(*ignore))}));
}

/// layer_norm(x, normalized_shape, weight, bias, eps, cudnn_enable).
LogicalResult importLayerNorm(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<SmallVector<int64_t>> normalized =
      m.scalarInts(node, node->input(1));
  FailureOr<double> eps = m.scalarDouble(node, node->input(4));
  if (failed(x) || failed(normalized) || failed(eps))
    return failure();
  auto type = typeOf(*x);
  int64_t axis = type.getRank() - static_cast<int64_t>(normalized->size());
  if (axis < 0 || type.getShape().drop_front(axis) != ArrayRef(*normalized))
    return m.fail(node, "normalized_shape does not match the input's "
                        "trailing dimensions");
  Value scale = scalarConstant(m, node, type.getElementType(), 1.0);
  if (!m.isNone(node->input(2))) {
    FailureOr<Value> w = m.tensor(node, node->input(2));
    if (failed(w))
      return failure();
    scale = *w;
  }
  SmallVector<Value> operands{*x, scale};
  if (!m.isNone(node->input(3))) {
    FailureOr<Value> b = m.tensor(node, node->input(3));
    if (failed(b))
      return failure();
    operands.push_back(*b);
  }
  return setTensor(
      m, node,
      m.make<dtg::LayerNormOp>(
          node, operands,
          {m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(axis)),
           m.builder.getNamedAttr("epsilon",
                                  m.builder.getF64FloatAttr(*eps))}));
}

/// dropout(x, p, train): the identity when not training or p = 0, else
/// dtg.dropout (its own random stream, not PyTorch's).
LogicalResult importDropout(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<double> p = m.scalarDouble(node, node->input(1));
  FailureOr<int64_t> train = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(p) || failed(train))
    return failure();
  if (!*train || *p == 0) {
    m.values[node->output()] = *x;
    return success();
  }
  if (!(*p > 0 && *p < 1))
    return m.fail(node, "p = " + std::to_string(*p) + " is outside [0, 1)");
  if (!isa<FloatType>(typeOf(*x).getElementType()))
    return m.fail(node, "the input does not hold floats");
  // Keyed as the ONNX importer keys Dropout: (seed 0, step) and a stream
  // number unique to the op within the graph.
  Tensor key = Tensor::zeros(m.builder.getI64Type(), {2});
  int64_t stream = nextDropoutStream(m.builder.getInsertionBlock());
  FailureOr<SmallVector<Value>> results = m.create(
      node, dtg::DropoutOp::getOperationName(),
      {*x, m.constant(m.locationOf(node), key)},
      {m.builder.getNamedAttr("ratio", m.builder.getF64FloatAttr(*p)),
       m.builder.getNamedAttr("stream", m.builder.getI64IntegerAttr(stream))},
      /*numResults=*/2);
  if (failed(results))
    return failure();
  return setTensor(m, node, results->front());
}

LogicalResult importIdentity(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  m.values[node->output()] = *x;
  return success();
}

/// view / reshape(x, shape) with one -1.
LogicalResult importView(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<SmallVector<int64_t>> shape = m.scalarInts(node, node->input(1));
  if (failed(x) || failed(shape))
    return failure();
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (d == -1) {
      if (inferred >= 0)
        return m.fail(node, "the shape has more than one -1");
      inferred = static_cast<int64_t>(i);
    } else if (d < 0) {
      return m.fail(node, "the shape has the dimension " + std::to_string(d));
    } else {
      known *= d;
    }
  }
  int64_t total = typeOf(*x).getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return m.fail(node, "cannot infer the -1 of the shape");
    (*shape)[inferred] = total / known;
  }
  return setTensor(m, node, reshape(m, node, *x, *shape));
}

LogicalResult importFlatten(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<int64_t> start = m.scalarInt(node, node->input(1)),
                     end = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(start) || failed(end))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  FailureOr<int64_t> s = normalizeDim(m, node, *start, rank),
                     e = normalizeDim(m, node, *end, rank);
  if (failed(s) || failed(e))
    return failure();
  SmallVector<int64_t> result(shape.take_front(*s));
  int64_t merged = 1;
  for (int64_t d = *s; d <= *e && d < rank; ++d)
    merged *= shape[d];
  result.push_back(merged);
  for (int64_t d = *e + 1; d < rank; ++d)
    result.push_back(shape[d]);
  return setTensor(m, node, reshape(m, node, *x, result));
}

LogicalResult importPermute(GraphMapper &m, torch::jit::Node *node,
                            SmallVector<int64_t> perm, Value x) {
  auto rank = typeOf(x).getRank();
  for (int64_t &d : perm) {
    FailureOr<int64_t> n = normalizeDim(m, node, d, rank);
    if (failed(n))
      return failure();
    d = *n;
  }
  return setTensor(m, node,
                   m.make<dtg::TransposeOp>(
                       node, x,
                       m.builder.getNamedAttr(
                           "perm", m.builder.getDenseI64ArrayAttr(perm))));
}

LogicalResult importTranspose(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  if (node->inputs().size() == 1) { // aten::t
    if (rank < 2)
      return importIdentity(m, node);
    std::swap(perm[0], perm[1]);
    return importPermute(m, node, perm, *x);
  }
  FailureOr<int64_t> a = m.scalarInt(node, node->input(1)),
                     b = m.scalarInt(node, node->input(2));
  if (failed(a) || failed(b))
    return failure();
  FailureOr<int64_t> da = normalizeDim(m, node, *a, rank),
                     db = normalizeDim(m, node, *b, rank);
  if (failed(da) || failed(db))
    return failure();
  std::swap(perm[*da], perm[*db]);
  return importPermute(m, node, perm, *x);
}

LogicalResult importPermuteNode(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<SmallVector<int64_t>> dims = m.scalarInts(node, node->input(1));
  if (failed(x) || failed(dims))
    return failure();
  return importPermute(m, node, *dims, *x);
}

/// size(x) or size(x, dim): static.
LogicalResult importSize(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  if (node->inputs().size() == 1) {
    m.scalars[node->output()] =
        c10::IValue(std::vector<int64_t>(shape.begin(), shape.end()));
    return success();
  }
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(dim))
    return failure();
  FailureOr<int64_t> d =
      normalizeDim(m, node, *dim, static_cast<int64_t>(shape.size()));
  if (failed(d))
    return failure();
  m.scalars[node->output()] = c10::IValue(shape[*d]);
  return success();
}

/// Integer arithmetic on sizes (aten::add.int, mul.int, floordiv, ...).
template <char opChar>
LogicalResult intArithmetic(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<c10::IValue> va = m.scalar(node, node->input(0)),
                         vb = m.scalar(node, node->input(1));
  if (failed(va) || failed(vb))
    return failure();
  if (opChar == 'd' || va->isDouble() || vb->isDouble()) {
    FailureOr<double> x = m.scalarDouble(node, node->input(0)),
                      y = m.scalarDouble(node, node->input(1));
    if (failed(x) || failed(y))
      return failure();
    double r = opChar == '+'   ? *x + *y
               : opChar == '-' ? *x - *y
               : opChar == '*' ? *x * *y
               : opChar == '/' ? std::floor(*x / *y)
                               : *x / *y;
    m.scalars[node->output()] = c10::IValue(r);
    return success();
  }
  FailureOr<int64_t> a = m.scalarInt(node, node->input(0)),
                     b = m.scalarInt(node, node->input(1));
  if (failed(a) || failed(b))
    return failure();
  int64_t r = 0;
  switch (opChar) {
  case '+':
    r = *a + *b;
    break;
  case '-':
    r = *a - *b;
    break;
  case '*':
    r = *a * *b;
    break;
  case '/':
    if (*b == 0)
      return m.fail(node, "division by zero");
    r = *a / *b - ((*a % *b != 0) && ((*a < 0) != (*b < 0)));
    break;
  }
  m.scalars[node->output()] = c10::IValue(r);
  return success();
}

/// Dispatches on the operand kinds: scalars here, tensors to `tensorForm`.
template <char opChar,
          LogicalResult (*tensorForm)(GraphMapper &, torch::jit::Node *)>
LogicalResult arithmetic(GraphMapper &m, torch::jit::Node *node) {
  if (m.isTensor(node->input(0)))
    return tensorForm(m, node);
  return intArithmetic<opChar>(m, node);
}

LogicalResult importInt(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<c10::IValue> v = m.scalar(node, node->input(0));
  if (failed(v))
    return failure();
  if (v->isInt()) {
    m.scalars[node->output()] = *v;
    return success();
  }
  if (v->isDouble()) {
    m.scalars[node->output()] = c10::IValue(int64_t(v->toDouble()));
    return success();
  }
  return m.fail(node, "the operand is not known while importing");
}

/// prim::ListConstruct: a list of scalars, or of tensors.
LogicalResult importListConstruct(GraphMapper &m, torch::jit::Node *node) {
  bool tensors = false;
  for (const torch::jit::Value *input : node->inputs())
    tensors |= input->type()->kind() == c10::TypeKind::TensorType;
  if (tensors) {
    // A Tensor?[] (aten::index's indices) holds None as a null value.
    SmallVector<Value> list;
    for (const torch::jit::Value *input : node->inputs()) {
      if (m.isNone(input)) {
        list.push_back(Value());
        continue;
      }
      FailureOr<Value> t = m.tensor(node, input);
      if (failed(t))
        return failure();
      list.push_back(*t);
    }
    m.tensorLists[node->output()] = std::move(list);
    return success();
  }
  c10::impl::GenericList list(c10::AnyType::get());
  bool allInts = true;
  std::vector<int64_t> ints;
  for (const torch::jit::Value *input : node->inputs()) {
    FailureOr<c10::IValue> v = m.scalar(node, input);
    if (failed(v))
      return failure();
    allInts &= v->isInt();
    if (v->isInt())
      ints.push_back(v->toInt());
    list.push_back(*v);
  }
  m.scalars[node->output()] =
      allInts ? c10::IValue(ints) : c10::IValue(std::move(list));
  return success();
}

/// prim::ListUnpack of a list of tensors or of scalars.
LogicalResult importListUnpack(GraphMapper &m, torch::jit::Node *node) {
  auto tensors = m.tensorLists.find(node->input(0));
  if (tensors != m.tensorLists.end()) {
    if (tensors->second.size() != node->outputs().size())
      return m.fail(node, "unpacks " + std::to_string(node->outputs().size()) +
                              " values from a list of " +
                              std::to_string(tensors->second.size()));
    for (auto [i, value] : llvm::enumerate(tensors->second))
      m.values[node->output(i)] = value;
    return success();
  }
  FailureOr<c10::IValue> list = m.scalar(node, node->input(0));
  if (failed(list))
    return failure();
  if (!list->isList())
    return m.fail(node, "the operand is not a list");
  c10::ArrayRef<c10::IValue> elements = list->toListRef();
  if (elements.size() != node->outputs().size())
    return m.fail(node, "unpacks the wrong number of values");
  for (size_t i = 0; i < elements.size(); ++i)
    m.scalars[node->output(i)] = elements[i];
  return success();
}

/// sum / mean(x, dim = all, keepdim = false, dtype = None), and amax /
/// amin(x, dim, keepdim).
template <typename OpTy>
LogicalResult importReduce(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> axes;
  bool keepdim = false;
  size_t dtypeIndex = 1;
  if (node->inputs().size() >= 3 &&
      node->input(1)->type()->kind() != c10::TypeKind::NoneType &&
      !m.isNone(node->input(1))) {
    FailureOr<SmallVector<int64_t>> dims = m.scalarInts(node, node->input(1));
    if (failed(dims))
      return failure();
    for (int64_t d : *dims) {
      FailureOr<int64_t> a = normalizeDim(m, node, d, rank);
      if (failed(a))
        return failure();
      axes.push_back(*a);
    }
  }
  if (node->inputs().size() >= 3) {
    FailureOr<int64_t> keep = m.scalarInt(node, node->input(2));
    if (failed(keep))
      return failure();
    keepdim = *keep;
    dtypeIndex = 3;
  }
  if (node->inputs().size() > dtypeIndex && !m.isNone(node->input(dtypeIndex)))
    return m.unsupported(node, "a dtype argument");
  return setTensor(m, node,
                   m.make<OpTy>(node, *x, reduceAttrs(m, *x, axes, keepdim)));
}

/// Comparisons of a tensor with a tensor or a scalar, or of two numbers
/// known while importing.
template <typename OpTy>
LogicalResult compare(GraphMapper &m, torch::jit::Node *node) {
  if (!m.isTensor(node->input(0))) {
    // Lists and strings (mse_loss's size check, a mode argument): equal
    // or not.
    if (std::is_same_v<OpTy, dtg::EqualOp>) {
      FailureOr<c10::IValue> x = m.scalar(node, node->input(0)),
                             y = m.scalar(node, node->input(1));
      if (failed(x) || failed(y))
        return failure();
      if (!x->isScalar() && !x->isBool()) {
        m.scalars[node->output()] = c10::IValue(*x == *y);
        return success();
      }
    }
    FailureOr<double> a = m.scalarDouble(node, node->input(0)),
                      b = m.scalarDouble(node, node->input(1));
    if (failed(a) || failed(b))
      return failure();
    bool r = std::is_same_v<OpTy, dtg::GreaterOp>        ? *a > *b
             : std::is_same_v<OpTy, dtg::GreaterEqualOp> ? *a >= *b
             : std::is_same_v<OpTy, dtg::LessOp>         ? *a < *b
             : std::is_same_v<OpTy, dtg::LessEqualOp>    ? *a <= *b
             : std::is_same_v<OpTy, dtg::EqualOp>        ? *a == *b
                                                         : false;
    m.scalars[node->output()] = c10::IValue(r);
    return success();
  }
  FailureOr<SmallVector<Value>> operands = promotedOperands(m, node, {0, 1});
  if (failed(operands))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, *operands));
}

/// aten::Bool / item / Float / Int of a tensor: a value of the data read
/// into Python, which decides something (an if, a size) while the
/// compiled step cannot.
LogicalResult dataDependent(GraphMapper &m, torch::jit::Node *node) {
  if (!m.isTensor(node->input(0)))
    return importInt(m, node);
  return m.unsupported(node, "reading a tensor's value into the program "
                             "(a data-dependent value or branch)");
}

/// An int list argument of a k-D window (one value repeats).
FailureOr<SmallVector<int64_t>> windowInts(GraphMapper &m,
                                           torch::jit::Node *node, unsigned i,
                                           int64_t k, int64_t fallback) {
  SmallVector<int64_t> values;
  if (i < node->inputs().size() && !m.isNone(node->input(i))) {
    FailureOr<SmallVector<int64_t>> given = m.scalarInts(node, node->input(i));
    if (failed(given))
      return failure();
    values = *given;
  }
  if (values.empty())
    values.assign(k, fallback);
  if (values.size() == 1)
    values.assign(k, values.front());
  if (static_cast<int64_t>(values.size()) != k)
    return m.fail(node, "a window argument has " +
                            std::to_string(values.size()) + " values for " +
                            std::to_string(k) + " spatial dimensions");
  return values;
}

SmallVector<int64_t> symmetricPads(ArrayRef<int64_t> padding) {
  SmallVector<int64_t> pads(padding);
  pads.append(padding.begin(), padding.end());
  return pads;
}

/// conv2d(x, w, b, stride, padding, dilation, groups) and the traced
/// _convolution(x, w, b, stride, padding, dilation, transposed,
/// output_padding, groups, ...).
LogicalResult importConvolution(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   w = m.tensor(node, node->input(1));
  if (failed(x) || failed(w))
    return failure();
  int64_t k = typeOf(*x).getRank() - 2;
  bool traced =
      node->kind().toQualString() == std::string("aten::_convolution");
  if (traced) {
    FailureOr<int64_t> transposed = m.scalarInt(node, node->input(6));
    if (failed(transposed))
      return failure();
    if (*transposed)
      return m.unsupported(node, "a transposed convolution");
  }
  if (!traced && node->input(4)->type()->kind() == c10::TypeKind::StringType)
    return m.unsupported(node, "padding given as a string");
  FailureOr<SmallVector<int64_t>> strides = windowInts(m, node, 3, k, 1),
                                  padding = windowInts(m, node, 4, k, 0),
                                  dilations = windowInts(m, node, 5, k, 1);
  FailureOr<int64_t> groups = m.scalarInt(node, node->input(traced ? 8 : 6));
  if (failed(strides) || failed(padding) || failed(dilations) || failed(groups))
    return failure();
  SmallVector<Value> operands{*x, *w};
  if (!m.isNone(node->input(2))) {
    FailureOr<Value> b = m.tensor(node, node->input(2));
    if (failed(b))
      return failure();
    operands.push_back(*b);
  }
  return setTensor(m, node,
                   m.make<dtg::ConvOp>(
                       node, operands,
                       {i64Array(m, "strides", *strides),
                        i64Array(m, "pads", symmetricPads(*padding)),
                        i64Array(m, "dilations", *dilations),
                        m.builder.getNamedAttr(
                            "group", m.builder.getI64IntegerAttr(*groups))}));
}

/// max_pool2d(x, kernel, stride, padding, dilation, ceil_mode) and
/// avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad,
/// divisor_override).
template <bool isMax>
LogicalResult importPool(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  int64_t k = typeOf(*x).getRank() - 2;
  FailureOr<SmallVector<int64_t>> kernel = windowInts(m, node, 1, k, 1);
  if (failed(kernel))
    return failure();
  FailureOr<SmallVector<int64_t>> strides = windowInts(m, node, 2, k, 0),
                                  padding = windowInts(m, node, 3, k, 0);
  if (failed(strides) || failed(padding))
    return failure();
  // An empty stride means the kernel's.
  for (int64_t d = 0; d < k; ++d)
    if ((*strides)[d] == 0)
      (*strides)[d] = (*kernel)[d];
  SmallVector<int64_t> dilations(k, 1);
  unsigned ceilIndex = 4;
  if (isMax) {
    FailureOr<SmallVector<int64_t>> given = windowInts(m, node, 4, k, 1);
    if (failed(given))
      return failure();
    dilations = *given;
    ceilIndex = 5;
  }
  FailureOr<int64_t> ceil = m.scalarInt(node, node->input(ceilIndex));
  if (failed(ceil))
    return failure();
  SmallVector<NamedAttribute> attrs{
      i64Array(m, "kernel", *kernel), i64Array(m, "strides", *strides),
      i64Array(m, "pads", symmetricPads(*padding)),
      i64Array(m, "dilations", dilations),
      m.builder.getNamedAttr("ceil_mode", m.builder.getBoolAttr(*ceil))};
  if (isMax)
    return setTensor(m, node, m.make<dtg::MaxPoolOp>(node, *x, attrs));
  FailureOr<int64_t> include = m.scalarInt(node, node->input(5));
  if (failed(include))
    return failure();
  if (node->inputs().size() > 6 && !m.isNone(node->input(6)))
    return m.unsupported(node, "divisor_override");
  attrs.push_back(m.builder.getNamedAttr("count_include_pad",
                                         m.builder.getBoolAttr(*include)));
  return setTensor(m, node, m.make<dtg::AvgPoolOp>(node, *x, attrs));
}

/// batch_norm(x, weight, bias, running_mean, running_var, training,
/// momentum, eps, cudnn_enabled): the running statistics are the module's
/// buffers, state the training step updates.
LogicalResult importBatchNorm(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  int64_t channels = type.getDimSize(1);
  SmallVector<Value> operands{*x};
  for (unsigned i = 1; i <= 2; ++i) {
    if (m.isNone(node->input(i))) {
      Tensor fill = Tensor::zeros(type.getElementType(), {channels});
      for (int64_t c = 0; c < channels; ++c)
        fill.set(c, i == 1 ? 1.0 : 0.0);
      operands.push_back(m.constant(m.locationOf(node), fill));
      continue;
    }
    FailureOr<Value> v = m.tensor(node, node->input(i));
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<int64_t> training = m.scalarInt(node, node->input(5));
  FailureOr<double> momentum = m.scalarDouble(node, node->input(6));
  FailureOr<double> eps = m.scalarDouble(node, node->input(7));
  if (failed(training) || failed(momentum) || failed(eps))
    return failure();
  for (unsigned i = 3; i <= 4; ++i) {
    if (m.isNone(node->input(i)))
      return m.unsupported(node, "BatchNorm without running statistics");
    std::optional<std::pair<std::string, at::Tensor>> buffer =
        m.buffer(node->input(i));
    FailureOr<Value> v =
        buffer ? m.argument(node, buffer->first, buffer->second, "state")
               : m.tensor(node, node->input(i));
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  NamedAttribute epsilon =
      m.builder.getNamedAttr("epsilon", m.builder.getF64FloatAttr(*eps));
  if (!*training)
    return setTensor(
        m, node, m.make<dtg::BatchNormInferenceOp>(node, operands, epsilon));
  // ONNX's (and dtg's) momentum weighs the running value: 1 - PyTorch's.
  FailureOr<SmallVector<Value>> results =
      m.create(node, dtg::BatchNormTrainingOp::getOperationName(), operands,
               {epsilon,
                m.builder.getNamedAttr(
                    "momentum", m.builder.getF64FloatAttr(1 - *momentum)),
                m.builder.getNamedAttr("unbiased_running_var",
                                       m.builder.getBoolAttr(true))},
               /*numResults=*/3);
  if (failed(results))
    return failure();
  return setTensor(m, node, (*results)[0]);
}

/// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse).
LogicalResult importEmbedding(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> w = m.tensor(node, node->input(0)),
                   ids = m.tensor(node, node->input(1));
  if (failed(w) || failed(ids))
    return failure();
  return setTensor(
      m, node,
      m.make<dtg::GatherOp>(
          node, {*w, *ids},
          m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(0))));
}

/// arange(end | start, end[, step], dtype, ...): a constant.
LogicalResult importArange(GraphMapper &m, torch::jit::Node *node) {
  if (!node->maybeSchema())
    return m.unsupported(node, "an overload without a schema");
  auto named = [&](StringRef name) { return m.namedInput(node, name); };
  bool floats = false;
  auto number = [&](StringRef name, double fallback) -> FailureOr<double> {
    const torch::jit::Value *v = named(name);
    if (!v || m.isNone(v))
      return fallback;
    FailureOr<c10::IValue> value = m.scalar(node, v);
    if (failed(value))
      return failure();
    floats |= value->isDouble();
    if (value->isInt())
      return double(value->toInt());
    if (value->isDouble())
      return value->toDouble();
    return m.fail(node, "'" + name.str() + "' is not a number");
  };
  FailureOr<double> start = number("start", 0), end = number("end", 0),
                    step = number("step", 1);
  if (failed(start) || failed(end) || failed(step))
    return failure();
  if (*step == 0)
    return m.fail(node, "step is 0");
  Type element =
      floats ? Type(m.builder.getF32Type()) : Type(m.builder.getI64Type());
  if (const torch::jit::Value *dtype = named("dtype");
      dtype && !m.isNone(dtype)) {
    FailureOr<int64_t> code = m.scalarInt(node, dtype);
    if (failed(code))
      return failure();
    FailureOr<Type> given =
        elementTypeOf(m.context, static_cast<c10::ScalarType>(*code));
    if (failed(given))
      return m.unsupported(node, "its dtype");
    element = *given;
  }
  auto count = static_cast<int64_t>(std::ceil((*end - *start) / *step));
  Tensor t = Tensor::zeros(element, {std::max<int64_t>(count, 0)});
  for (int64_t k = 0; k < count; ++k) {
    if (t.isFloat())
      t.set(k, *start + k * *step);
    else
      t.setInt(k, static_cast<int64_t>(*start + k * *step));
  }
  return setTensor(m, node, m.constant(m.locationOf(node), t));
}

/// slice(x, dim, start, end, step), with None and out-of-range bounds as
/// Python's.
LogicalResult importSlice(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(x) || failed(dim))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  int64_t size = shape[*axis];
  auto bound = [&](unsigned i, int64_t fallback) -> FailureOr<int64_t> {
    if (m.isNone(node->input(i)))
      return fallback;
    FailureOr<int64_t> v = m.scalarInt(node, node->input(i));
    if (failed(v))
      return failure();
    int64_t b = *v < 0 ? *v + size : *v;
    return std::clamp<int64_t>(b, 0, size);
  };
  FailureOr<int64_t> start = bound(2, 0), end = bound(3, size);
  FailureOr<int64_t> step = m.scalarInt(node, node->input(4));
  if (failed(start) || failed(end) || failed(step))
    return failure();
  if (*step <= 0)
    return m.unsupported(node, "a step that is not positive");
  int64_t limit = std::max(*start, *end);
  if (*start == 0 && limit == size && *step == 1)
    return importIdentity(m, node);
  return setTensor(m, node,
                   sliceAlong(m, node, *x, *axis, *start, limit, *step));
}

/// split(x, size or sizes, dim) and chunk(x, chunks, dim): a list.
LogicalResult importSplit(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<SmallVector<int64_t>> given = m.scalarInts(node, node->input(1));
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(given) || failed(dim))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  int64_t size = shape[*axis];
  SmallVector<int64_t> sizes;
  bool chunk = node->kind().toQualString() == std::string("aten::chunk");
  bool list = node->input(1)->type()->kind() == c10::TypeKind::ListType;
  if (list) {
    sizes = *given;
  } else {
    int64_t each = given->front();
    if (chunk)
      each = (size + each - 1) / each;
    if (each <= 0)
      return m.fail(node, "a split size that is not positive");
    for (int64_t o = 0; o < size; o += each)
      sizes.push_back(std::min(each, size - o));
  }
  SmallVector<Value> parts;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    FailureOr<Value> part = sliceAlong(m, node, *x, *axis, offset, offset + s);
    if (failed(part))
      return failure();
    parts.push_back(*part);
    offset += s;
  }
  if (offset != size)
    return m.fail(node, "the split sizes do not add up to the dimension");
  m.tensorLists[node->output()] = std::move(parts);
  return success();
}

/// masked_fill(x, mask, value): where(mask, value, x).
LogicalResult importMaskedFill(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   mask = m.tensor(node, node->input(1));
  if (failed(x) || failed(mask))
    return failure();
  // The value takes x's element type (the result is x's).
  Type element = typeOf(*x).getElementType();
  Value fill;
  if (node->input(2)->type()->kind() == c10::TypeKind::TensorType) {
    FailureOr<Value> t = m.tensor(node, node->input(2));
    if (failed(t))
      return failure();
    fill = castTo(m, node, *t, element);
  } else {
    FailureOr<double> v = m.scalarDouble(node, node->input(2));
    if (failed(v))
      return failure();
    fill = scalarConstant(m, node, element, *v);
  }
  return setTensor(m, node, m.make<dtg::WhereOp>(node, {*mask, fill, *x}));
}

/// sqrt of a tensor, or of a number known while importing.
LogicalResult importSqrt(GraphMapper &m, torch::jit::Node *node) {
  if (node->input(0)->type()->kind() == c10::TypeKind::TensorType)
    return floatUnary<dtg::SqrtOp>(m, node);
  FailureOr<double> v = m.scalarDouble(node, node->input(0));
  if (failed(v))
    return failure();
  m.scalars[node->output()] = c10::IValue(std::sqrt(*v));
  return success();
}

/// prim::NumToTensor of a size (traced shape arithmetic): stays a number.
LogicalResult importNumToTensor(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<c10::IValue> v = m.scalar(node, node->input(0));
  if (failed(v))
    return failure();
  m.scalars[node->output()] = *v;
  return success();
}

/// prim::device / prim::dtype of a tensor: known while importing.
LogicalResult importDevice(GraphMapper &m, torch::jit::Node *node) {
  m.scalars[node->output()] = c10::IValue(c10::Device(c10::kCPU));
  return success();
}

/// ne: not(eq), for tensors or numbers.
LogicalResult importNe(GraphMapper &m, torch::jit::Node *node) {
  if (failed(compare<dtg::EqualOp>(m, node)))
    return failure();
  if (auto known = m.scalars.find(node->output()); known != m.scalars.end()) {
    known->second = c10::IValue(!known->second.toBool());
    return success();
  }
  return setTensor(m, node, m.make<dtg::NotOp>(node, m.values[node->output()]));
}

/// aten::__getitem__ of a list (scalars or tensors) at a known index.
LogicalResult importGetItem(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<int64_t> index = m.scalarInt(node, node->input(1));
  if (failed(index))
    return failure();
  if (auto list = m.tensorLists.find(node->input(0));
      list != m.tensorLists.end()) {
    auto size = static_cast<int64_t>(list->second.size());
    int64_t i = *index < 0 ? *index + size : *index;
    if (i < 0 || i >= size)
      return m.fail(node, "index out of range");
    m.values[node->output()] = list->second[i];
    return success();
  }
  FailureOr<c10::IValue> list = m.scalar(node, node->input(0));
  if (failed(list))
    return failure();
  if (!list->isList())
    return m.unsupported(node, "indexing something other than a list");
  c10::ArrayRef<c10::IValue> elements = list->toListRef();
  auto size = static_cast<int64_t>(elements.size());
  int64_t i = *index < 0 ? *index + size : *index;
  if (i < 0 || i >= size)
    return m.fail(node, "index out of range");
  m.scalars[node->output()] = elements[i];
  return success();
}

/// aten::len of a list.
LogicalResult importLen(GraphMapper &m, torch::jit::Node *node) {
  if (auto list = m.tensorLists.find(node->input(0));
      list != m.tensorLists.end()) {
    m.scalars[node->output()] =
        c10::IValue(static_cast<int64_t>(list->second.size()));
    return success();
  }
  FailureOr<c10::IValue> list = m.scalar(node, node->input(0));
  if (failed(list))
    return failure();
  if (!list->isList())
    return m.unsupported(node, "the length of something other than a list");
  m.scalars[node->output()] =
      c10::IValue(static_cast<int64_t>(list->toListRef().size()));
  return success();
}

/// aten::__is__ / __isnot__ against None.
template <bool isNot>
LogicalResult importIs(GraphMapper &m, torch::jit::Node *node) {
  bool a = m.isNone(node->input(0)), b = m.isNone(node->input(1));
  if (!a && !b)
    return m.unsupported(node, "comparing identities other than with None");
  m.scalars[node->output()] = c10::IValue(bool((a && b) != isNot));
  return success();
}

/// not / and / or / xor: of numbers known while importing (bitwise on
/// ints, logical on bools), of bool tensors, and (the logical_* forms) of
/// any tensors, nonzero counting as true.
template <char opChar>
LogicalResult importLogical(GraphMapper &m, torch::jit::Node *node) {
  if (llvm::none_of(node->inputs(), [&](const torch::jit::Value *input) {
        return m.isTensor(input);
      })) {
    SmallVector<c10::IValue> v;
    bool ints = false;
    for (const torch::jit::Value *input : node->inputs()) {
      FailureOr<c10::IValue> x = m.scalar(node, input);
      if (failed(x))
        return failure();
      if (!x->isInt() && !x->isBool())
        return m.fail(node, "input '" + input->debugName() +
                                "' is neither an int nor a bool");
      ints |= x->isInt();
      v.push_back(*x);
    }
    auto asInt = [](const c10::IValue &x) {
      return x.isInt() ? x.toInt() : int64_t(x.toBool());
    };
    int64_t a = asInt(v[0]), b = v.size() > 1 ? asInt(v[1]) : 0;
    int64_t r = opChar == '!'   ? (ints ? ~a : !a)
                : opChar == '&' ? a & b
                : opChar == '|' ? a | b
                                : a ^ b;
    m.scalars[node->output()] = ints ? c10::IValue(r) : c10::IValue(bool(r));
    return success();
  }
  bool logical = StringRef(node->kind().toQualString()).contains("logical");
  SmallVector<unsigned> inputs{0};
  if (opChar != '!')
    inputs.push_back(1);
  FailureOr<SmallVector<Value>> operands = promotedOperands(m, node, inputs);
  if (failed(operands))
    return failure();
  for (Value &v : *operands) {
    if (typeOf(v).getElementType().isInteger(1))
      continue;
    if (!logical)
      return m.unsupported(node, "bitwise operations on tensors that do not "
                                 "hold bools");
    v = castTo(m, node, v, m.builder.getI1Type());
  }
  Value a = (*operands)[0];
  if (opChar == '!')
    return setTensor(m, node, m.make<dtg::NotOp>(node, a));
  Value b = (*operands)[1];
  return setTensor(m, node,
                   opChar == '&'   ? m.make<dtg::AndOp>(node, {a, b})
                   : opChar == '|' ? m.make<dtg::OrOp>(node, {a, b})
                                   : m.make<dtg::XorOp>(node, {a, b}));
}

const AtenHandlerTable &handlers() {
  static const AtenHandlerTable table = [] {
    AtenHandlerTable t;
    t["aten::linear"] = importLinear;
    t["aten::matmul"] = importMatmul;
    t["aten::mm"] = importMatmul;
    t["aten::bmm"] = importMatmul;
    t["aten::relu"] = unary<dtg::ReluOp>;
    t["aten::tanh"] = floatUnary<dtg::TanhOp>;
    t["aten::sigmoid"] = floatUnary<dtg::SigmoidOp>;
    t["aten::exp"] = floatUnary<dtg::ExpOp>;
    t["aten::log"] = floatUnary<dtg::LogOp>;
    t["aten::abs"] = unary<dtg::AbsOp>;
    t["aten::rsqrt"] = floatUnary<dtg::RsqrtOp>;
    t["aten::erf"] = floatUnary<dtg::ErfOp>;
    t["aten::reciprocal"] = floatUnary<dtg::ReciprocalOp>;
    t["aten::sin"] = floatUnary<dtg::SinOp>;
    t["aten::cos"] = floatUnary<dtg::CosOp>;
    t["aten::sqrt"] = importSqrt;
    t["aten::neg"] = unary<dtg::NegOp>;
    t["aten::gelu"] = importGelu;
    t["aten::add"] = arithmetic<'+', binary<dtg::AddOp, true>>;
    t["aten::sub"] = arithmetic<'-', binary<dtg::SubOp, true>>;
    t["aten::mul"] = arithmetic<'*', binary<dtg::MulOp>>;
    t["aten::div"] = arithmetic<'d', binary<dtg::DivOp>>;
    t["aten::floordiv"] = intArithmetic<'/'>;
    t["aten::floor_divide"] = intArithmetic<'/'>;
    t["prim::NumToTensor"] = importNumToTensor;
    t["prim::device"] = importDevice;
    t["aten::conv2d"] = importConvolution;
    t["aten::conv1d"] = importConvolution;
    t["aten::_convolution"] = importConvolution;
    t["aten::max_pool2d"] = importPool<true>;
    t["aten::avg_pool2d"] = importPool<false>;
    t["aten::batch_norm"] = importBatchNorm;
    t["aten::embedding"] = importEmbedding;
    t["aten::arange"] = importArange;
    t["aten::slice"] = importSlice;
    t["aten::split"] = importSplit;
    t["aten::chunk"] = importSplit;
    t["aten::masked_fill"] = importMaskedFill;
    t["aten::__is__"] = importIs<false>;
    t["aten::__isnot__"] = importIs<true>;
    t["aten::__not__"] = importLogical<'!'>;
    t["aten::logical_not"] = importLogical<'!'>;
    t["aten::bitwise_not"] = importLogical<'!'>;
    t["aten::__and__"] = importLogical<'&'>;
    t["aten::logical_and"] = importLogical<'&'>;
    t["aten::bitwise_and"] = importLogical<'&'>;
    t["aten::__or__"] = importLogical<'|'>;
    t["aten::logical_or"] = importLogical<'|'>;
    t["aten::bitwise_or"] = importLogical<'|'>;
    t["aten::__xor__"] = importLogical<'^'>;
    t["aten::logical_xor"] = importLogical<'^'>;
    t["aten::Int"] = dataDependent;
    t["aten::Bool"] = dataDependent;
    t["aten::Float"] = dataDependent;
    t["aten::item"] = dataDependent;
    t["aten::ScalarImplicit"] = dataDependent;
    t["aten::sum"] = importReduce<dtg::ReduceSumOp>;
    t["aten::mean"] = importReduce<dtg::ReduceMeanOp>;
    t["aten::amax"] = importReduce<dtg::ReduceMaxOp>;
    t["aten::amin"] = importReduce<dtg::ReduceMinOp>;
    t["aten::gt"] = compare<dtg::GreaterOp>;
    t["aten::ge"] = compare<dtg::GreaterEqualOp>;
    t["aten::lt"] = compare<dtg::LessOp>;
    t["aten::le"] = compare<dtg::LessEqualOp>;
    t["aten::eq"] = compare<dtg::EqualOp>;
    t["aten::ne"] = importNe;
    t["aten::__getitem__"] = importGetItem;
    t["aten::len"] = importLen;
    t["aten::softmax"] = importSoftmax<dtg::SoftmaxOp>;
    t["aten::log_softmax"] = importSoftmax<dtg::LogSoftmaxOp>;
    t["aten::cross_entropy_loss"] = importCrossEntropy;
    t["aten::layer_norm"] = importLayerNorm;
    t["aten::dropout"] = importDropout;
    t["aten::contiguous"] = importIdentity;
    t["aten::detach"] = importIdentity;
    t["aten::view"] = importView;
    t["aten::reshape"] = importView;
    t["aten::flatten"] = importFlatten;
    t["aten::transpose"] = importTranspose;
    t["aten::t"] = importTranspose;
    t["aten::permute"] = importPermuteNode;
    t["aten::size"] = importSize;
    t["prim::ListConstruct"] = importListConstruct;
    t["prim::ListUnpack"] = importListUnpack;
    addNNHandlers(t);
    addTensorHandlers(t);
    return t;
  }();
  return table;
}

} // namespace

const AtenHandler *mlir::dtc::torchscript::lookupAtenHandler(StringRef kind) {
  auto it = handlers().find(kind);
  return it == handlers().end() ? nullptr : &it->second;
}
