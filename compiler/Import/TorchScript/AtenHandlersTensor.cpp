//===- AtenHandlersTensor.cpp - aten constructors, joins, indexing -> dtg -===//
//
// Tensors made from sizes and numbers (ones, zeros, full and their _like
// forms: a broadcast number), tril/triu, cat/stack, select/index/
// index_select, where, unsqueeze/squeeze/expand, dtype conversions, the
// max/min family and the remaining elementwise functions. Indexing whose
// result's shape would depend on the data (a boolean mask, nonzero) is
// refused by name.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TorchScript/AtenHandlers.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::torchscript;
using namespace mlir::dtc::torchscript::lowering;
using dtg::interp::Tensor;

namespace {

/// The element type the `dtype` input names, `fallback` when it is None.
FailureOr<Type> dtypeOf(GraphMapper &m, torch::jit::Node *node, Type fallback) {
  const torch::jit::Value *dtype = m.namedInput(node, "dtype");
  if (!dtype || m.isNone(dtype))
    return fallback;
  FailureOr<int64_t> code = m.scalarInt(node, dtype);
  if (failed(code))
    return failure();
  auto scalarType = static_cast<c10::ScalarType>(*code);
  FailureOr<Type> type = elementTypeOf(m.context, scalarType);
  if (failed(type))
    return m.unsupported(node,
                         "dtype " + std::string(c10::toString(scalarType)));
  return type;
}

/// `value` of `element` broadcast to `shape`.
Value filled(GraphMapper &m, torch::jit::Node *node, ArrayRef<int64_t> shape,
             Type element, double value) {
  Value scalar = scalarConstant(m, node, element, value);
  if (shape.empty())
    return scalar;
  return m.builder.create<dtg::BroadcastOp>(
      m.locationOf(node), RankedTensorType::get(shape, element), scalar);
}

/// ones/zeros(size, dtype, ...), full(size, fill_value, dtype, ...),
/// new_ones/new_zeros/new_full(self, size, ...), and ones_like/zeros_like/
/// full_like(self, [fill_value,] dtype, ...).
LogicalResult importFilled(GraphMapper &m, torch::jit::Node *node) {
  if (!node->maybeSchema())
    return m.unsupported(node, "an overload without a schema");
  StringRef kind = node->kind().toQualString();
  kind.consume_front("aten::");
  bool like = kind.ends_with("_like"), fresh = kind.starts_with("new_");
  bool full = kind.contains("full");
  double value = kind.contains("ones") ? 1 : 0;
  Type element = m.builder.getF32Type();
  SmallVector<int64_t> shape;
  if (like || fresh) {
    FailureOr<Value> self = m.tensor(node, node->input(0));
    if (failed(self))
      return failure();
    element = typeOf(*self).getElementType();
    shape.assign(typeOf(*self).getShape().begin(),
                 typeOf(*self).getShape().end());
  }
  if (!like) {
    FailureOr<SmallVector<int64_t>> size =
        m.scalarInts(node, m.namedInput(node, "size"));
    if (failed(size))
      return failure();
    shape = *size;
    for (int64_t d : shape)
      if (d < 0)
        return m.fail(node, "size " + std::to_string(d) + " is negative");
  }
  if (full) {
    const torch::jit::Value *fill = m.namedInput(node, "fill_value");
    FailureOr<c10::IValue> v = m.scalar(node, fill);
    if (failed(v))
      return failure();
    if (!v->isInt() && !v->isDouble() && !v->isBool())
      return m.fail(node, "fill_value is not a number");
    value = v->isDouble() ? v->toDouble()
            : v->isInt()  ? static_cast<double>(v->toInt())
                          : static_cast<double>(v->toBool());
    // torch.full infers its dtype from the fill value.
    if (!like && !fresh)
      element = v->isDouble() ? Type(m.builder.getF32Type())
                : v->isInt()  ? Type(m.builder.getI64Type())
                              : Type(m.builder.getI1Type());
  }
  FailureOr<Type> given = dtypeOf(m, node, element);
  if (failed(given))
    return failure();
  return setTensor(m, node, filled(m, node, shape, *given, value));
}

/// tril / triu(x, diagonal).
template <bool upper>
LogicalResult importTrilu(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  int64_t diagonal = 0;
  if (node->inputs().size() > 1) {
    FailureOr<int64_t> k = m.scalarInt(node, node->input(1));
    if (failed(k))
      return failure();
    diagonal = *k;
  }
  if (failed(x))
    return failure();
  if (typeOf(*x).getRank() < 2)
    return m.fail(node, "input of rank " +
                            std::to_string(typeOf(*x).getRank()) +
                            " (at least 2)");
  return setTensor(
      m, node,
      m.make<dtg::TriluOp>(
          node, *x,
          {m.builder.getNamedAttr("upper", m.builder.getBoolAttr(upper)),
           m.builder.getNamedAttr("k",
                                  m.builder.getI64IntegerAttr(diagonal))}));
}

/// The tensors of list input `i` (no None among them).
FailureOr<SmallVector<Value>> tensorList(GraphMapper &m, torch::jit::Node *node,
                                         unsigned i) {
  auto list = m.tensorLists.find(node->input(i));
  if (list == m.tensorLists.end())
    return m.fail(node, "input '" + node->input(i)->debugName() +
                            "' is not a list of tensors known while "
                            "importing");
  for (Value v : list->second)
    if (!v)
      return m.fail(node, "the list holds None");
  return list->second;
}

/// cat(tensors, dim) and stack(tensors, dim), the operands promoted to one
/// element type as PyTorch does.
template <bool stack>
LogicalResult importCat(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<SmallVector<Value>> parts = tensorList(m, node, 0);
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(parts) || failed(dim))
    return failure();
  if (parts->empty())
    return m.fail(node, "the list of tensors is empty");
  int64_t rank = typeOf(parts->front()).getRank() + (stack ? 1 : 0);
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  SmallVector<Type> types;
  for (Value part : *parts)
    types.push_back(typeOf(part).getElementType());
  Type element = promotedType(types);
  for (Value &part : *parts) {
    part = castTo(m, node, part, element);
    if (!stack)
      continue;
    SmallVector<int64_t> shape(typeOf(part).getShape());
    shape.insert(shape.begin() + *axis, 1);
    FailureOr<Value> r = reshape(m, node, part, shape);
    if (failed(r))
      return failure();
    part = *r;
  }
  if (parts->size() == 1)
    return setTensor(m, node, parts->front());
  return setTensor(
      m, node,
      m.make<dtg::ConcatOp>(
          node, *parts,
          m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(*axis))));
}

/// select(x, dim, index): the slice at `index`, the dimension dropped.
LogicalResult importSelect(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1)),
                     index = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(dim) || failed(index))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    return m.fail(node, "select() cannot be applied to a 0-d tensor");
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  int64_t size = shape[*axis], i = *index < 0 ? *index + size : *index;
  if (i < 0 || i >= size)
    return m.fail(node, "index " + std::to_string(*index) +
                            " is out of range for a dimension of size " +
                            std::to_string(size));
  FailureOr<Value> part = sliceAlong(m, node, *x, *axis, i, i + 1);
  if (failed(part))
    return failure();
  SmallVector<int64_t> result(shape);
  result.erase(result.begin() + *axis);
  return setTensor(m, node, reshape(m, node, *part, result));
}

FailureOr<Value> gather(GraphMapper &m, torch::jit::Node *node, Value x,
                        Value indices, int64_t axis) {
  Type element = typeOf(indices).getElementType();
  if (element.isInteger(1))
    return m.unsupported(node, "indexing with a boolean mask (a result whose "
                               "shape depends on the data)");
  if (!element.isInteger(64) && !element.isInteger(32))
    return m.fail(node, "indices must be integers");
  return m.make<dtg::GatherOp>(
      node, {x, indices},
      m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(axis)));
}

/// index(x, indices): one integer index tensor, at any dimension (the
/// others None), is a gather.
LogicalResult importIndex(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  auto list = m.tensorLists.find(node->input(1));
  if (list == m.tensorLists.end())
    return m.fail(node, "the indices are not a list known while importing");
  Value indices;
  int64_t axis = -1;
  for (auto [d, index] : llvm::enumerate(list->second)) {
    if (!index)
      continue;
    if (typeOf(index).getElementType().isInteger(1))
      return m.unsupported(node, "indexing with a boolean mask (a result "
                                 "whose shape depends on the data)");
    if (indices)
      return m.unsupported(node, "indexing with more than one index tensor");
    indices = index;
    axis = static_cast<int64_t>(d);
  }
  if (!indices)
    return m.fail(node, "no index tensor");
  if (axis >= typeOf(*x).getRank())
    return m.fail(node, "more indices than dimensions");
  return setTensor(m, node, gather(m, node, *x, indices, axis));
}

/// index_select(x, dim, index).
LogicalResult importIndexSelect(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0)),
                   indices = m.tensor(node, node->input(2));
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(x) || failed(indices) || failed(dim))
    return failure();
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  if (typeOf(*indices).getRank() != 1)
    return m.fail(node, "index must be 1-D");
  return setTensor(m, node, gather(m, node, *x, *indices, *axis));
}

/// Results whose shape depends on the data.
LogicalResult importDataDependentShape(GraphMapper &m, torch::jit::Node *node) {
  return m.unsupported(node, "a result whose shape depends on the data");
}

/// where(condition, x, y) with tensors or numbers as x and y; where(c)
/// alone is nonzero.
LogicalResult importWhere(GraphMapper &m, torch::jit::Node *node) {
  if (node->inputs().size() == 1)
    return importDataDependentShape(m, node);
  FailureOr<Value> condition = m.tensor(node, node->input(0));
  FailureOr<SmallVector<Value>> operands = promotedOperands(m, node, {1, 2});
  if (failed(condition) || failed(operands))
    return failure();
  Value c = castTo(m, node, *condition, m.builder.getI1Type());
  return setTensor(
      m, node, m.make<dtg::WhereOp>(node, {c, (*operands)[0], (*operands)[1]}));
}

/// unsqueeze(x, dim).
LogicalResult importUnsqueeze(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(x) || failed(dim))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape());
  FailureOr<int64_t> axis =
      normalizeDim(m, node, *dim, static_cast<int64_t>(shape.size()) + 1);
  if (failed(axis))
    return failure();
  shape.insert(shape.begin() + *axis, 1);
  return setTensor(m, node, reshape(m, node, *x, shape));
}

/// squeeze(x) and squeeze(x, dim): size-1 dimensions dropped.
LogicalResult importSqueeze(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
  auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    return setTensor(m, node, *x);
  SmallVector<bool> drop(rank, node->inputs().size() == 1);
  if (node->inputs().size() > 1) {
    FailureOr<SmallVector<int64_t>> dims = m.scalarInts(node, node->input(1));
    if (failed(dims))
      return failure();
    for (int64_t d : *dims) {
      FailureOr<int64_t> axis = normalizeDim(m, node, d, rank);
      if (failed(axis))
        return failure();
      drop[*axis] = true;
    }
  }
  SmallVector<int64_t> result;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d] || shape[d] != 1)
      result.push_back(shape[d]);
  return setTensor(m, node, reshape(m, node, *x, result));
}

FailureOr<Value> broadcastTo(GraphMapper &m, torch::jit::Node *node, Value x,
                             SmallVector<int64_t> shape) {
  ArrayRef<int64_t> from = typeOf(x).getShape();
  auto lead =
      static_cast<int64_t>(shape.size()) - static_cast<int64_t>(from.size());
  if (lead < 0)
    return m.fail(node, "the size has fewer dimensions than the tensor");
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    int64_t have = d < lead ? 1 : from[d - lead];
    if (shape[d] == -1 && d >= lead)
      shape[d] = have;
    if (shape[d] < 0 || (have != 1 && have != shape[d]))
      return m.fail(node, "cannot expand a dimension of size " +
                              std::to_string(have) + " to " +
                              std::to_string(shape[d]));
  }
  if (ArrayRef(shape) == from)
    return x;
  return m.builder
      .create<dtg::BroadcastOp>(
          m.locationOf(node),
          RankedTensorType::get(shape, typeOf(x).getElementType()), x)
      .getResult();
}

/// broadcast_tensors(tensors): each broadcast to the shape they share.
LogicalResult importBroadcastTensors(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<SmallVector<Value>> parts = tensorList(m, node, 0);
  if (failed(parts))
    return failure();
  SmallVector<int64_t> shape;
  for (Value part : *parts) {
    ArrayRef<int64_t> s = typeOf(part).getShape();
    if (s.size() > shape.size())
      shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t &d = shape[shape.size() - s.size() + k];
      if (d == 1)
        d = s[k];
      else if (s[k] != 1 && s[k] != d)
        return m.fail(node, "shapes that do not broadcast");
    }
  }
  SmallVector<Value> results;
  for (Value part : *parts) {
    FailureOr<Value> b = broadcastTo(m, node, part, shape);
    if (failed(b))
      return failure();
    results.push_back(*b);
  }
  m.tensorLists[node->output()] = std::move(results);
  return success();
}

/// expand(x, size, implicit) and expand_as(x, other).
LogicalResult importExpand(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  SmallVector<int64_t> shape;
  if (node->input(1)->type()->kind() == c10::TypeKind::TensorType) {
    FailureOr<Value> other = m.tensor(node, node->input(1));
    if (failed(other))
      return failure();
    shape.assign(typeOf(*other).getShape().begin(),
                 typeOf(*other).getShape().end());
  } else {
    FailureOr<SmallVector<int64_t>> size = m.scalarInts(node, node->input(1));
    if (failed(size))
      return failure();
    shape = *size;
  }
  return setTensor(m, node, broadcastTo(m, node, *x, shape));
}

/// to(x, dtype | device[, dtype] | other, ...) and type_as(x, other): a
/// cast (a device move is the identity on the host).
LogicalResult importTo(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  Type element = typeOf(*x).getElementType();
  if (const torch::jit::Value *other = m.namedInput(node, "other")) {
    FailureOr<Value> o = m.tensor(node, other);
    if (failed(o))
      return failure();
    element = typeOf(*o).getElementType();
  } else {
    FailureOr<Type> given = dtypeOf(m, node, element);
    if (failed(given))
      return failure();
    element = *given;
  }
  return setTensor(m, node, castTo(m, node, *x, element));
}

SmallVector<NamedAttribute> argAttrs(GraphMapper &m, int64_t axis,
                                     bool keepdims) {
  return {m.builder.getNamedAttr("axis", m.builder.getI64IntegerAttr(axis)),
          m.builder.getNamedAttr("keepdims", m.builder.getBoolAttr(keepdims)),
          m.builder.getNamedAttr("select_last_index",
                                 m.builder.getBoolAttr(false))};
}

/// max / min: of all elements (one operand), elementwise (two tensors), or
/// along a dimension (values and indices).
template <bool isMax>
LogicalResult importMaxMin(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (node->inputs().size() == 1) {
    SmallVector<NamedAttribute> attrs =
        reduceAttrs(m, *x, {}, /*keepdims=*/false);
    return setTensor(m, node,
                     isMax ? m.make<dtg::ReduceMaxOp>(node, *x, attrs)
                           : m.make<dtg::ReduceMinOp>(node, *x, attrs));
  }
  if (node->input(1)->type()->kind() == c10::TypeKind::TensorType) {
    FailureOr<Value> y = m.tensor(node, node->input(1));
    if (failed(y))
      return failure();
    return setTensor(m, node,
                     isMax ? m.make<dtg::MaxOp>(node, {*x, *y})
                           : m.make<dtg::MinOp>(node, {*x, *y}));
  }
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  FailureOr<int64_t> keep = m.scalarInt(node, node->input(2));
  if (failed(dim) || failed(keep))
    return failure();
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  SmallVector<NamedAttribute> attrs = reduceAttrs(m, *x, {*axis}, *keep);
  if (failed(setTensor(m, node,
                       isMax ? m.make<dtg::ReduceMaxOp>(node, *x, attrs)
                             : m.make<dtg::ReduceMinOp>(node, *x, attrs))))
    return failure();
  if (!node->output(1)->hasUses())
    return success();
  return setTensor(
      m, node,
      isMax ? m.make<dtg::ArgMaxOp>(node, *x, argAttrs(m, *axis, *keep))
            : m.make<dtg::ArgMinOp>(node, *x, argAttrs(m, *axis, *keep)),
      1);
}

/// argmax / argmin(x, dim, keepdim); without dim, of the flattened tensor
/// (keepdim then gives it the input's rank of 1s).
template <typename OpTy>
LogicalResult importArgMax(GraphMapper &m, torch::jit::Node *node) {
  FailureOr<Value> x = m.tensor(node, node->input(0));
  FailureOr<int64_t> keep = m.scalarInt(node, node->input(2));
  if (failed(x) || failed(keep))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  if (m.isNone(node->input(1))) {
    FailureOr<Value> flat = reshape(m, node, *x, {typeOf(*x).getNumElements()});
    if (failed(flat))
      return failure();
    FailureOr<Value> index = m.make<OpTy>(node, *flat, argAttrs(m, 0, false));
    if (failed(index) || !*keep)
      return setTensor(m, node, index);
    return setTensor(m, node,
                     reshape(m, node, *index, SmallVector<int64_t>(rank, 1)));
  }
  FailureOr<int64_t> dim = m.scalarInt(node, node->input(1));
  if (failed(dim))
    return failure();
  FailureOr<int64_t> axis = normalizeDim(m, node, *dim, rank);
  if (failed(axis))
    return failure();
  return setTensor(m, node, m.make<OpTy>(node, *x, argAttrs(m, *axis, *keep)));
}

} // namespace

void lowering::addTensorHandlers(AtenHandlerTable &t) {
  for (const char *name :
       {"aten::ones", "aten::zeros", "aten::full", "aten::empty",
        "aten::ones_like", "aten::zeros_like", "aten::full_like",
        "aten::empty_like", "aten::new_ones", "aten::new_zeros",
        "aten::new_full", "aten::new_empty"})
    t[name] = importFilled;
  t["aten::tril"] = importTrilu<false>;
  t["aten::triu"] = importTrilu<true>;
  t["aten::cat"] = importCat<false>;
  t["aten::concat"] = importCat<false>;
  t["aten::stack"] = importCat<true>;
  t["aten::select"] = importSelect;
  t["aten::index"] = importIndex;
  t["aten::index_select"] = importIndexSelect;
  t["aten::nonzero"] = importDataDependentShape;
  t["aten::masked_select"] = importDataDependentShape;
  t["aten::unique"] = importDataDependentShape;
  t["aten::where"] = importWhere;
  t["aten::unsqueeze"] = importUnsqueeze;
  t["aten::squeeze"] = importSqueeze;
  t["aten::expand"] = importExpand;
  t["aten::expand_as"] = importExpand;
  t["aten::broadcast_tensors"] = importBroadcastTensors;
  t["aten::to"] = importTo;
  t["aten::type_as"] = importTo;
  t["aten::max"] = importMaxMin<true>;
  t["aten::min"] = importMaxMin<false>;
  t["aten::maximum"] = importMaxMin<true>;
  t["aten::minimum"] = importMaxMin<false>;
  t["aten::argmax"] = importArgMax<dtg::ArgMaxOp>;
  t["aten::argmin"] = importArgMax<dtg::ArgMinOp>;
}
