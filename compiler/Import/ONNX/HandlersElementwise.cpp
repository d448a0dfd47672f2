//===- HandlersElementwise.cpp - ONNX elementwise ops -> dtg -------------===//
//
// Unary math and activations, binary arithmetic and logic with broadcasting,
// comparisons, Where, Cast, Clip, the variadic Sum/Mean/Min/Max, and the
// value-producing leaves Constant and Identity.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/NodeImporter.h"

#include "dialects/DTG/IR/DTGOps.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using dtg::interp::Tensor;

namespace {

template <typename OpTy> LogicalResult importUnary(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> y = n.make<OpTy>(*x);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

template <typename OpTy> LogicalResult importBinary(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> y = n.make<OpTy>({*a, *b});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// An activation whose ONNX float attributes map to dtg attributes of the
/// same (snake_case) names, with ONNX's defaults.
template <typename OpTy>
LogicalResult importActivation(NodeImporter &n,
                               ArrayRef<std::pair<StringRef, double>> attrs) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> named;
  for (auto [name, defaultValue] : attrs)
    named.push_back(n.f64Attr(name, n.getFloat(name, defaultValue)));
  FailureOr<Value> y = n.make<OpTy>(*x, named);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importPow(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  // ONNX allows a different exponent type; compute in the base's type.
  FailureOr<Value> exponent =
      n.castTo(*b, NodeImporter::typeOf(*a).getElementType());
  if (failed(exponent))
    return failure();
  FailureOr<Value> y = n.make<dtg::PowOp>({*a, *exponent});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importMod(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  bool fmod = n.getInt("fmod", 0) != 0;
  if (!fmod && isa<FloatType>(NodeImporter::typeOf(*a).getElementType()))
    return n.fail("fmod must be 1 for floating-point inputs");
  FailureOr<Value> y = n.make<dtg::ModOp>({*a, *b}, n.boolAttr("fmod", fmod));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importWhere(NodeImporter &n) {
  FailureOr<Value> c = n.input(0), a = n.input(1), b = n.input(2);
  if (failed(c) || failed(a) || failed(b))
    return failure();
  FailureOr<Value> y = n.make<dtg::WhereOp>({*c, *a, *b});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// dtg.cast of `x` to `type` with Cast's `saturate` (opset 19), which
/// ONNX defines for 8-bit float results only.
static LogicalResult castWithSaturate(NodeImporter &n, Value x, Type type) {
  SmallVector<NamedAttribute> attrs;
  if (n.getInt("saturate", 1) == 0 && dtg::interp::isFloat8(type))
    attrs.push_back(n.boolAttr("saturate", false));
  FailureOr<Value> y = n.castTo(x, type, attrs);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importCast(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (!n.hasAttr("to"))
    return n.fail("attribute 'to' is missing");
  int64_t to = n.getInt("to", 0);
  Type type = convertDataType(n.builder.getContext(), to);
  if (!type)
    return n.unsupported("casting to " + dataTypeName(to));
  return castWithSaturate(n, *x, type);
}

LogicalResult importCastLike(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), like = n.input(1);
  if (failed(x) || failed(like))
    return failure();
  return castWithSaturate(n, *x, NodeImporter::typeOf(*like).getElementType());
}

LogicalResult importClip(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> attrs;
  for (auto [index, name] :
       {std::make_pair(1u, "min"), std::make_pair(2u, "max")}) {
    if (!n.hasInput(index))
      continue;
    FailureOr<Tensor> bound = n.constantInput(index);
    if (failed(bound))
      return failure();
    if (bound->numElements() != 1)
      return n.fail(Twine(name) + " must be a scalar");
    attrs.push_back(n.f64Attr(name, bound->get(0)));
  }
  FailureOr<Value> y = n.make<dtg::ClipOp>(*x, attrs);
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Sum, Min, Max: a chain of binary ops; Mean divides the sum by the count.
template <typename OpTy>
LogicalResult importVariadic(NodeImporter &n, bool mean = false) {
  if (n.node.input_size() == 0)
    return n.fail("needs at least one input");
  FailureOr<Value> acc = n.input(0);
  if (failed(acc))
    return failure();
  for (int i = 1; i < n.node.input_size(); ++i) {
    FailureOr<Value> next = n.input(i);
    if (failed(next))
      return failure();
    acc = n.make<OpTy>({*acc, *next});
    if (failed(acc))
      return failure();
  }
  if (mean) {
    Type type = NodeImporter::typeOf(*acc).getElementType();
    acc = n.make<dtg::DivOp>({*acc, n.scalar(type, n.node.input_size())});
    if (failed(acc))
      return failure();
  }
  return n.setOutput(0, *acc);
}

LogicalResult importPRelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), slope = n.input(1);
  if (failed(x) || failed(slope))
    return failure();
  auto xType = NodeImporter::typeOf(*x);
  auto slopeType = NodeImporter::typeOf(*slope);
  // Models upgraded from opset 6 keep a per-channel slope [C] for an
  // [N, C, ...] input (the old broadcast); make it [C, 1, ...].
  if (slopeType.getRank() == 1 && xType.getRank() > 2 &&
      slopeType.getDimSize(0) == xType.getDimSize(1) &&
      slopeType.getDimSize(0) != xType.getShape().back()) {
    SmallVector<int64_t> shape(xType.getRank() - 1, 1);
    shape[0] = slopeType.getDimSize(0);
    slope = n.reshape(*slope, shape);
    if (failed(slope))
      return failure();
  }
  Type type = xType.getElementType();
  FailureOr<Value> negative = n.make<dtg::LessOp>({*x, n.scalar(type, 0.0)});
  if (failed(negative))
    return failure();
  FailureOr<Value> scaled = n.make<dtg::MulOp>({*x, *slope});
  if (failed(scaled))
    return failure();
  FailureOr<Value> y = n.make<dtg::WhereOp>({*negative, *scaled, *x});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

/// Gelu (opset 20): exact (`approximate` = "none") or tanh-approximated.
LogicalResult importGelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  std::string approximate = n.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.fail("attribute 'approximate' = '" + approximate +
                  "' is not one of none, tanh");
  FailureOr<Value> y =
      n.make<dtg::GeluOp>(*x, n.boolAttr("approximate", approximate == "tanh"));
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importHardSwish(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> gate = n.make<dtg::HardSigmoidOp>(
      *x, {n.f64Attr("alpha", 1.0 / 6.0), n.f64Attr("beta", 0.5)});
  if (failed(gate))
    return failure();
  FailureOr<Value> y = n.make<dtg::MulOp>({*x, *gate});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importMish(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> sp = n.make<dtg::SoftplusOp>(*x);
  if (failed(sp))
    return failure();
  FailureOr<Value> t = n.make<dtg::TanhOp>(*sp);
  if (failed(t))
    return failure();
  FailureOr<Value> y = n.make<dtg::MulOp>({*x, *t});
  if (failed(y))
    return failure();
  return n.setOutput(0, *y);
}

LogicalResult importIsInf(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = NodeImporter::typeOf(*x);
  FailureOr<SmallVector<Value>> y = n.create(
      dtg::IsInfOp::getOperationName(), *x,
      {n.boolAttr("detect_negative", n.getInt("detect_negative", 1) != 0),
       n.boolAttr("detect_positive", n.getInt("detect_positive", 1) != 0)},
      RankedTensorType::get(type.getShape(), n.builder.getI1Type()));
  if (failed(y))
    return failure();
  return n.setOutput(0, y->front());
}

LogicalResult importIsNaN(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = NodeImporter::typeOf(*x);
  FailureOr<SmallVector<Value>> y =
      n.create(dtg::IsNanOp::getOperationName(), *x, {},
               RankedTensorType::get(type.getShape(), n.builder.getI1Type()));
  if (failed(y))
    return failure();
  return n.setOutput(0, y->front());
}

LogicalResult importConstant(NodeImporter &n) {
  MLIRContext *context = n.builder.getContext();
  Tensor value;
  if (n.hasAttr("value")) {
    FailureOr<Tensor> t = n.getTensorAttr("value");
    if (failed(t))
      return failure();
    value = std::move(*t);
  } else if (n.hasAttr("value_float")) {
    value = Tensor::zeros(Float32Type::get(context), {});
    value.set(0, n.getFloat("value_float", 0));
  } else if (n.hasAttr("value_int")) {
    value = Tensor::zeros(IntegerType::get(context, 64), {});
    value.setInt(0, n.getInt("value_int", 0));
  } else if (auto floats = n.getFloats("value_floats")) {
    value = Tensor::zeros(Float32Type::get(context),
                          {static_cast<int64_t>(floats->size())});
    for (auto [k, v] : llvm::enumerate(*floats))
      value.set(k, v);
  } else if (auto ints = n.getInts("value_ints")) {
    value = Tensor::zeros(IntegerType::get(context, 64),
                          {static_cast<int64_t>(ints->size())});
    for (auto [k, v] : llvm::enumerate(*ints))
      value.setInt(k, v);
  } else if (n.hasAttr("sparse_value")) {
    return n.unsupported("a sparse value");
  } else if (n.hasAttr("value_string") || n.hasAttr("value_strings")) {
    return n.unsupported("a string value");
  } else {
    return n.fail("has no value attribute");
  }
  return n.setOutput(0, n.constant(value));
}

LogicalResult importIdentity(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  return n.setOutput(0, *x);
}

} // namespace

void mlir::dtc::onnx_import::registerElementwiseHandlers(
    HandlerRegistry &registry) {
  registry.add("Neg", 13, importUnary<dtg::NegOp>);
  registry.add("Abs", 13, importUnary<dtg::AbsOp>);
  registry.add("Sign", 13, importUnary<dtg::SignOp>);
  registry.add("Exp", 13, importUnary<dtg::ExpOp>);
  registry.add("Log", 13, importUnary<dtg::LogOp>);
  registry.add("Sqrt", 13, importUnary<dtg::SqrtOp>);
  registry.add("Reciprocal", 13, importUnary<dtg::ReciprocalOp>);
  registry.add("Floor", 13, importUnary<dtg::FloorOp>);
  registry.add("Ceil", 13, importUnary<dtg::CeilOp>);
  registry.add("Round", 11, importUnary<dtg::RoundOp>);
  registry.add("Sin", 7, importUnary<dtg::SinOp>);
  registry.add("Cos", 7, importUnary<dtg::CosOp>);
  registry.add("Tan", 7, importUnary<dtg::TanOp>);
  registry.add("Asin", 7, importUnary<dtg::AsinOp>);
  registry.add("Acos", 7, importUnary<dtg::AcosOp>);
  registry.add("Atan", 7, importUnary<dtg::AtanOp>);
  registry.add("Sinh", 9, importUnary<dtg::SinhOp>);
  registry.add("Cosh", 9, importUnary<dtg::CoshOp>);
  registry.add("Asinh", 9, importUnary<dtg::AsinhOp>);
  registry.add("Acosh", 9, importUnary<dtg::AcoshOp>);
  registry.add("Atanh", 9, importUnary<dtg::AtanhOp>);
  registry.add("Tanh", 13, importUnary<dtg::TanhOp>);
  registry.add("Erf", 13, importUnary<dtg::ErfOp>);
  registry.add("Sigmoid", 13, importUnary<dtg::SigmoidOp>);
  registry.add("Relu", 14, importUnary<dtg::ReluOp>);
  registry.add("Relu", 13, importUnary<dtg::ReluOp>);
  registry.add("Softplus", 1, importUnary<dtg::SoftplusOp>);
  registry.add("Softsign", 1, importUnary<dtg::SoftsignOp>);
  registry.add("Not", 1, importUnary<dtg::NotOp>);
  registry.add("IsNaN", 13, importIsNaN);
  registry.add("IsInf", 10, importIsInf);

  registry.add("LeakyRelu", 6, [](NodeImporter &n) {
    return importActivation<dtg::LeakyReluOp>(n, {{"alpha", 0.01}});
  });
  registry.add("Elu", 6, [](NodeImporter &n) {
    return importActivation<dtg::EluOp>(n, {{"alpha", 1.0}});
  });
  registry.add("Celu", 12, [](NodeImporter &n) {
    return importActivation<dtg::CeluOp>(n, {{"alpha", 1.0}});
  });
  registry.add("Selu", 6, [](NodeImporter &n) {
    return importActivation<dtg::SeluOp>(
        n, {{"alpha", 1.67326319217681884765625},
            {"gamma", 1.05070102214813232421875}});
  });
  registry.add("HardSigmoid", 6, [](NodeImporter &n) {
    return importActivation<dtg::HardSigmoidOp>(
        n, {{"alpha", 0.2}, {"beta", 0.5}});
  });
  registry.add("ThresholdedRelu", 10, [](NodeImporter &n) {
    return importActivation<dtg::ThresholdedReluOp>(n, {{"alpha", 1.0}});
  });
  registry.add("HardSwish", 14, importHardSwish);
  registry.add("Gelu", 20, importGelu);
  registry.add("Mish", 1, importMish);
  registry.add("PRelu", 9, importPRelu);
  registry.add("Clip", 13, importClip);

  registry.add("Add", 14, importBinary<dtg::AddOp>);
  registry.add("Sub", 14, importBinary<dtg::SubOp>);
  registry.add("Mul", 14, importBinary<dtg::MulOp>);
  registry.add("Div", 14, importBinary<dtg::DivOp>);
  for (StringRef op : {"Add", "Sub", "Mul", "Div"})
    registry.add(op, 13,
                 op == "Add"   ? importBinary<dtg::AddOp>
                 : op == "Sub" ? importBinary<dtg::SubOp>
                 : op == "Mul" ? importBinary<dtg::MulOp>
                               : importBinary<dtg::DivOp>);
  registry.add("Pow", 15, importPow);
  registry.add("Pow", 13, importPow);
  registry.add("Mod", 13, importMod);
  registry.add("And", 7, importBinary<dtg::AndOp>);
  registry.add("Or", 7, importBinary<dtg::OrOp>);
  registry.add("Xor", 7, importBinary<dtg::XorOp>);
  // The dtg ops are bitwise on integers other than booleans.
  registry.add("BitwiseAnd", 18, importBinary<dtg::AndOp>);
  registry.add("BitwiseOr", 18, importBinary<dtg::OrOp>);
  registry.add("BitwiseXor", 18, importBinary<dtg::XorOp>);
  registry.add("BitwiseNot", 18, importUnary<dtg::NotOp>);
  registry.add("Equal", 13, importBinary<dtg::EqualOp>);
  registry.add("Less", 13, importBinary<dtg::LessOp>);
  registry.add("LessOrEqual", 16, importBinary<dtg::LessEqualOp>);
  registry.add("LessOrEqual", 12, importBinary<dtg::LessEqualOp>);
  registry.add("Greater", 13, importBinary<dtg::GreaterOp>);
  registry.add("GreaterOrEqual", 16, importBinary<dtg::GreaterEqualOp>);
  registry.add("GreaterOrEqual", 12, importBinary<dtg::GreaterEqualOp>);
  registry.add("Where", 16, importWhere);
  registry.add("Where", 9, importWhere);
  registry.add("Cast", 13, importCast);
  registry.add("CastLike", 15, importCastLike);

  registry.add("Sum", 13,
               [](NodeImporter &n) { return importVariadic<dtg::AddOp>(n); });
  registry.add("Mean", 13, [](NodeImporter &n) {
    return importVariadic<dtg::AddOp>(n, /*mean=*/true);
  });
  registry.add("Max", 13,
               [](NodeImporter &n) { return importVariadic<dtg::MaxOp>(n); });
  registry.add("Min", 13,
               [](NodeImporter &n) { return importVariadic<dtg::MinOp>(n); });

  registry.add("Constant", 13, importConstant);
  registry.add("Identity", 16, importIdentity);
  registry.add("Identity", 13, importIdentity);
}
