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

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::torchscript;
using dtg::interp::Tensor;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

LogicalResult setTensor(GraphMapper &m, torch::jit::Node *node,
                        FailureOr<Value> value, unsigned output = 0) {
  if (failed(value))
    return failure();
  m.values[node->output(output)] = *value;
  return success();
}

/// A rank-0 constant of `element` holding `value`.
Value scalarConstant(GraphMapper &m, torch::jit::Node *node, Type element,
                     double value) {
  Tensor t = Tensor::zeros(element, {});
  if (t.isFloat())
    t.set(0, value);
  else
    t.setInt(0, static_cast<int64_t>(value));
  return m.constant(m.locationOf(node), t);
}

FailureOr<Value> reshape(GraphMapper &m, torch::jit::Node *node, Value value,
                         ArrayRef<int64_t> shape) {
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

FailureOr<int64_t> normalizeDim(GraphMapper &m, torch::jit::Node *node,
                                int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= std::max<int64_t>(rank, 1))
    return m.fail(node, "dimension " + std::to_string(dim) +
                            " is out of range for rank " +
                            std::to_string(rank));
  return dim < 0 ? dim + rank : dim;
}

/// Operand `i` as a tensor, or a scalar operand as a rank-0 constant of
/// `like`'s element type (aten's Scalar overloads).
FailureOr<Value> tensorOrScalar(GraphMapper &m, torch::jit::Node *node,
                                unsigned i, Value like) {
  const torch::jit::Value *input = node->input(i);
  if (input->type()->kind() == c10::TypeKind::TensorType)
    return m.tensor(node, input);
  FailureOr<double> v = m.scalarDouble(node, input);
  if (failed(v))
    return failure();
  return scalarConstant(m, node, typeOf(like).getElementType(), *v);
}

template <typename OpTy>
LogicalResult unary(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, *x));
}

/// add/sub (with alpha), mul, div with a tensor or scalar second operand.
template <typename OpTy, bool hasAlpha = false>
LogicalResult binary(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> a = m.tensor(node, node->input(0));
  if (failed(a))
    return failure();
  FailureOr<Value> b = tensorOrScalar(m, node, 1, *a);
  if (failed(b))
    return failure();
  if (hasAlpha && node->inputs().size() > 2) {
    FailureOr<double> alpha = m.scalarDouble(node, node->input(2));
    if (failed(alpha))
      return failure();
    if (*alpha != 1) {
      b = m.make<dtg::MulOp>(
          node,
          {*b, scalarConstant(m, node, typeOf(*b).getElementType(), *alpha)});
      if (failed(b))
        return failure();
    }
  }
  if (node->inputs().size() > 2 && !hasAlpha &&
      !GraphMapper::isNone(node->input(2)))
    return m.unsupported(node, "a rounding mode");
  return setTensor(m, node, m.make<OpTy>(node, {*a, *b}));
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
  if (node->inputs().size() > 2 && !GraphMapper::isNone(node->input(2))) {
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
  if (node->inputs().size() > 2 && !GraphMapper::isNone(node->input(2)))
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

/// cross_entropy_loss(input [N, C], target [N], weight, reduction,
/// ignore_index, label_smoothing).
LogicalResult importCrossEntropy(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   t = m.tensor(node, node->input(1));
  if (failed(x) || failed(t))
    return failure();
  if (typeOf(*x).getRank() != 2 || typeOf(*t).getRank() != 1)
    return m.unsupported(node, "input of rank " +
                                   std::to_string(typeOf(*x).getRank()) +
                                   " (only [N, C] with targets [N])");
  Value weight;
  if (!GraphMapper::isNone(node->input(2))) {
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
  if (!GraphMapper::isNone(node->input(2))) {
    FailureOr<Value> w = m.tensor(node, node->input(2));
    if (failed(w))
      return failure();
    scale = *w;
  }
  SmallVector<Value> operands{*x, scale};
  if (!GraphMapper::isNone(node->input(3))) {
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

/// dropout(x, p, train): the identity when not training or p = 0.
LogicalResult importDropout(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<double> p = m.scalarDouble(node, node->input(1));
  FailureOr<int64_t> train = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(p) || failed(train))
    return failure();
  if (*train && *p != 0)
    return m.unsupported(node, "dropout in training mode with p > 0 (export "
                               "to ONNX with training=TRAINING instead)");
  m.values[node->output()] = *x;
  return success();
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
  if (node->input(0)->type()->kind() == c10::TypeKind::TensorType)
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
    SmallVector<Value> list;
    for (const torch::jit::Value *input : node->inputs()) {
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

/// sum / mean(x, dim = all, keepdim = false, dtype = None).
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
      !GraphMapper::isNone(node->input(1))) {
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
  if (node->inputs().size() > dtypeIndex &&
      !GraphMapper::isNone(node->input(dtypeIndex)))
    return m.unsupported(node, "a dtype argument");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  return setTensor(
      m, node,
      m.make<OpTy>(
          node, *x,
          {m.builder.getNamedAttr("axes", m.builder.getDenseI64ArrayAttr(axes)),
           m.builder.getNamedAttr("keepdims",
                                  m.builder.getBoolAttr(keepdim))}));
}

/// Comparisons of a tensor with a tensor or a scalar.
template <typename OpTy>
LogicalResult compare(GraphMapper &m, torch::jit::Node *node) {
  if (node->input(0)->type()->kind() != c10::TypeKind::TensorType)
    return m.unsupported(node, "comparing scalars");
  FailureOr<Value> a = m.tensor(node, node->input(0));
  if (failed(a))
    return failure();
  FailureOr<Value> b = tensorOrScalar(m, node, 1, *a);
  if (failed(b))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, {*a, *b}));
}

/// aten::Bool / item / Float / Int of a tensor: a value of the data read
/// into Python, which decides something (an if, a size) while the
/// compiled step cannot.
LogicalResult dataDependent(GraphMapper &m, torch::jit::Node *node) {
  if (node->input(0)->type()->kind() != c10::TypeKind::TensorType)
    return importInt(m, node);
  return m.unsupported(node, "reading a tensor's value into the program "
                             "(a data-dependent value or branch)");
}

const llvm::StringMap<AtenHandler> &handlers() {
  static const llvm::StringMap<AtenHandler> table = [] {
    llvm::StringMap<AtenHandler> t;
    t["aten::linear"] = importLinear;
    t["aten::matmul"] = importMatmul;
    t["aten::mm"] = importMatmul;
    t["aten::bmm"] = importMatmul;
    t["aten::relu"] = unary<dtg::ReluOp>;
    t["aten::tanh"] = unary<dtg::TanhOp>;
    t["aten::sigmoid"] = unary<dtg::SigmoidOp>;
    t["aten::exp"] = unary<dtg::ExpOp>;
    t["aten::log"] = unary<dtg::LogOp>;
    t["aten::sqrt"] = unary<dtg::SqrtOp>;
    t["aten::neg"] = unary<dtg::NegOp>;
    t["aten::gelu"] = importGelu;
    t["aten::add"] = arithmetic<'+', binary<dtg::AddOp, true>>;
    t["aten::sub"] = arithmetic<'-', binary<dtg::SubOp, true>>;
    t["aten::mul"] = arithmetic<'*', binary<dtg::MulOp>>;
    t["aten::div"] = binary<dtg::DivOp>;
    t["aten::floordiv"] = intArithmetic<'/'>;
    t["aten::Int"] = dataDependent;
    t["aten::Bool"] = dataDependent;
    t["aten::Float"] = dataDependent;
    t["aten::item"] = dataDependent;
    t["aten::ScalarImplicit"] = dataDependent;
    t["aten::sum"] = importReduce<dtg::ReduceSumOp>;
    t["aten::mean"] = importReduce<dtg::ReduceMeanOp>;
    t["aten::gt"] = compare<dtg::GreaterOp>;
    t["aten::ge"] = compare<dtg::GreaterEqualOp>;
    t["aten::lt"] = compare<dtg::LessOp>;
    t["aten::le"] = compare<dtg::LessEqualOp>;
    t["aten::eq"] = compare<dtg::EqualOp>;
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
    return t;
  }();
  return table;
}

} // namespace

const AtenHandler *mlir::dtc::torchscript::lookupAtenHandler(StringRef kind) {
  auto it = handlers().find(kind);
  return it == handlers().end() ? nullptr : &it->second;
}
