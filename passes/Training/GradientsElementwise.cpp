//===- GradientsElementwise.cpp - gradient rules of elementwise ops ------===//
//
// Each rule builds the derivative from dtg ops (the same formulas PyTorch's
// autograd uses). Binary ops sum their gradients back over broadcast
// dimensions.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/Autodiff.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtg;

namespace {

/// Terse arithmetic on values for writing derivative formulas.
struct Math {
  GradientBuilder &b;
  Type elementType;
  Value c(double v) { return b.scalar(elementType, v); }
  Value add(Value x, Value y) { return b.create<AddOp>(x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(x, y); }
  Value neg(Value x) { return b.create<NegOp>(x); }
  Value exp(Value x) { return b.create<ExpOp>(x); }
  Value sqrt(Value x) { return b.create<SqrtOp>(x); }
  Value tanh(Value x) { return b.create<TanhOp>(x); }
  Value sigmoid(Value x) { return b.create<SigmoidOp>(x); }
  /// 1.0 where `cond`, else 0.0, in the element type.
  Value mask(Value cond) { return b.castTo(cond, elementType); }
  Value where(Value cond, Value x, Value y) {
    return b.create<WhereOp>(cond, x, y);
  }
};

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Registers a unary rule: dx = g * derivative(x, y). For 16-bit floats
/// the derivative and its product with g are computed in float and rounded
/// once, as PyTorch's kernels compute them (GELU's derivative, a dozen ops
/// each rounded to bf16, cost more time and lost more bits).
template <typename OpTy>
void addUnary(GradientRegistry &registry,
              std::function<Value(Math &, OpTy, Value x, Value y)> derivative) {
  registry.add<OpTy>([derivative](Operation *op, ArrayRef<Value> grads,
                                  GradientBuilder &b,
                                  SmallVectorImpl<Value> &out) {
    Value x = op->getOperand(0), y = op->getResult(0), g = grads[0];
    Type element = elementTypeOf(x);
    if (!element.isBF16() && !element.isF16()) {
      Math m{b, element};
      out.push_back(m.mul(g, derivative(m, cast<OpTy>(op), x, y)));
      return success();
    }
    Type f32 = b.builder.getF32Type();
    Math m{b, f32};
    Value dx =
        m.mul(b.castTo(g, f32), derivative(m, cast<OpTy>(op), b.castTo(x, f32),
                                           b.castTo(y, f32)));
    out.push_back(b.castTo(dx, elementTypeOf(g)));
    return success();
  });
}

/// Registers a rule for ops whose derivative is zero almost everywhere.
template <typename OpTy> void addZero(GradientRegistry &registry) {
  registry.add<OpTy>([](Operation *op, ArrayRef<Value>, GradientBuilder &b,
                        SmallVectorImpl<Value> &out) {
    out.push_back(b.zerosLike(op->getOperand(0)));
    return success();
  });
}

/// Registers a binary rule: (dlhs, drhs) before unbroadcasting.
template <typename OpTy>
void addBinary(GradientRegistry &registry,
               std::function<std::pair<Value, Value>(Math &, Value g, Value x,
                                                     Value y, Value z)>
                   rule) {
  registry.add<OpTy>([rule](Operation *op, ArrayRef<Value> grads,
                            GradientBuilder &b, SmallVectorImpl<Value> &out) {
    Value x = op->getOperand(0), y = op->getOperand(1), z = op->getResult(0);
    Math m{b, elementTypeOf(x)};
    auto [gx, gy] = rule(m, grads[0], x, y, z);
    auto shapeOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    out.push_back(gx ? b.unbroadcast(b.broadcastTo(gx, shapeOf(z)), shapeOf(x))
                     : Value());
    out.push_back(gy ? b.unbroadcast(b.broadcastTo(gy, shapeOf(z)), shapeOf(y))
                     : Value());
    return success();
  });
}

} // namespace

void mlir::dtc::registerElementwiseGradients(GradientRegistry &registry) {
  addUnary<NegOp>(registry,
                  [](Math &m, NegOp, Value, Value) { return m.c(-1); });
  addUnary<AbsOp>(registry, [](Math &m, AbsOp, Value x, Value) {
    return m.b.create<SignOp>(x);
  });
  addUnary<ExpOp>(registry, [](Math &, ExpOp, Value, Value y) { return y; });
  addUnary<LogOp>(registry, [](Math &m, LogOp, Value x, Value) {
    return m.b.create<ReciprocalOp>(x);
  });
  addUnary<SqrtOp>(registry, [](Math &m, SqrtOp, Value, Value y) {
    return m.div(m.c(0.5), y);
  });
  addUnary<RsqrtOp>(registry, [](Math &m, RsqrtOp, Value x, Value y) {
    return m.mul(m.c(-0.5), m.div(y, x));
  });
  addUnary<ReciprocalOp>(registry, [](Math &m, ReciprocalOp, Value, Value y) {
    return m.neg(m.mul(y, y));
  });
  addUnary<SinOp>(registry, [](Math &m, SinOp, Value x, Value) {
    return m.b.create<CosOp>(x);
  });
  addUnary<CosOp>(registry, [](Math &m, CosOp, Value x, Value) {
    return m.neg(m.b.create<SinOp>(x));
  });
  addUnary<TanOp>(registry, [](Math &m, TanOp, Value, Value y) {
    return m.add(m.c(1), m.mul(y, y));
  });
  addUnary<AsinOp>(registry, [](Math &m, AsinOp, Value x, Value) {
    return m.b.create<RsqrtOp>(m.sub(m.c(1), m.mul(x, x)));
  });
  addUnary<AcosOp>(registry, [](Math &m, AcosOp, Value x, Value) {
    return m.neg(m.b.create<RsqrtOp>(m.sub(m.c(1), m.mul(x, x))));
  });
  addUnary<AtanOp>(registry, [](Math &m, AtanOp, Value x, Value) {
    return m.b.create<ReciprocalOp>(m.add(m.c(1), m.mul(x, x)));
  });
  addUnary<SinhOp>(registry, [](Math &m, SinhOp, Value x, Value) {
    return m.b.create<CoshOp>(x);
  });
  addUnary<CoshOp>(registry, [](Math &m, CoshOp, Value x, Value) {
    return m.b.create<SinhOp>(x);
  });
  addUnary<AsinhOp>(registry, [](Math &m, AsinhOp, Value x, Value) {
    return m.b.create<RsqrtOp>(m.add(m.mul(x, x), m.c(1)));
  });
  addUnary<AcoshOp>(registry, [](Math &m, AcoshOp, Value x, Value) {
    return m.b.create<RsqrtOp>(m.sub(m.mul(x, x), m.c(1)));
  });
  addUnary<AtanhOp>(registry, [](Math &m, AtanhOp, Value x, Value) {
    return m.b.create<ReciprocalOp>(m.sub(m.c(1), m.mul(x, x)));
  });
  addUnary<TanhOp>(registry, [](Math &m, TanhOp, Value, Value y) {
    return m.sub(m.c(1), m.mul(y, y));
  });
  addUnary<ErfOp>(registry, [](Math &m, ErfOp, Value x, Value) {
    return m.mul(m.c(2 / std::sqrt(M_PI)), m.exp(m.neg(m.mul(x, x))));
  });
  addUnary<SigmoidOp>(registry, [](Math &m, SigmoidOp, Value, Value y) {
    return m.mul(y, m.sub(m.c(1), y));
  });
  addUnary<ReluOp>(registry, [](Math &m, ReluOp, Value x, Value) {
    return m.mask(m.b.create<GreaterOp>(x, m.c(0)));
  });
  addUnary<SoftplusOp>(registry, [](Math &m, SoftplusOp, Value x, Value) {
    return m.sigmoid(x);
  });
  addUnary<SoftsignOp>(registry, [](Math &m, SoftsignOp, Value x, Value) {
    Value d = m.add(m.c(1), m.b.create<AbsOp>(x));
    return m.b.create<ReciprocalOp>(m.mul(d, d));
  });
  addUnary<GeluOp>(registry, [](Math &m, GeluOp op, Value x, Value) {
    if (op.getApproximate()) {
      // d/dx 0.5x(1 + tanh(u)), u = k(x + 0.044715x^3).
      double k = std::sqrt(2 / M_PI);
      Value x2 = m.mul(x, x);
      Value u = m.mul(m.c(k), m.add(x, m.mul(m.c(0.044715), m.mul(x2, x))));
      Value t = m.tanh(u);
      Value du = m.mul(m.c(k), m.add(m.c(1), m.mul(m.c(3 * 0.044715), x2)));
      Value sech2 = m.sub(m.c(1), m.mul(t, t));
      return m.add(m.mul(m.c(0.5), m.add(m.c(1), t)),
                   m.mul(m.mul(m.c(0.5), x), m.mul(sech2, du)));
    }
    // Phi(x) + x phi(x).
    Value cdf = m.mul(
        m.c(0.5),
        m.add(m.c(1), m.b.create<ErfOp>(m.mul(x, m.c(1 / std::sqrt(2.0))))));
    Value pdf = m.mul(m.c(1 / std::sqrt(2 * M_PI)),
                      m.exp(m.mul(m.c(-0.5), m.mul(x, x))));
    return m.add(cdf, m.mul(x, pdf));
  });
  addUnary<LeakyReluOp>(registry, [](Math &m, LeakyReluOp op, Value x, Value) {
    return m.where(m.b.create<GreaterOp>(x, m.c(0)), m.c(1),
                   m.c(op.getAlpha().convertToDouble()));
  });
  addUnary<EluOp>(registry, [](Math &m, EluOp op, Value x, Value y) {
    // x > 0: 1; else alpha * exp(x) = y + alpha.
    return m.where(m.b.create<GreaterOp>(x, m.c(0)), m.c(1),
                   m.add(y, m.c(op.getAlpha().convertToDouble())));
  });
  addUnary<CeluOp>(registry, [](Math &m, CeluOp op, Value x, Value) {
    double a = op.getAlpha().convertToDouble();
    return m.where(m.b.create<GreaterOp>(x, m.c(0)), m.c(1),
                   m.exp(m.div(x, m.c(a))));
  });
  addUnary<SeluOp>(registry, [](Math &m, SeluOp op, Value x, Value) {
    double a = op.getAlpha().convertToDouble();
    double g = op.getGamma().convertToDouble();
    return m.where(m.b.create<GreaterOp>(x, m.c(0)), m.c(g),
                   m.mul(m.c(g * a), m.exp(x)));
  });
  addUnary<HardSigmoidOp>(
      registry, [](Math &m, HardSigmoidOp op, Value x, Value) {
        double a = op.getAlpha().convertToDouble();
        double b = op.getBeta().convertToDouble();
        Value v = m.add(m.mul(m.c(a), x), m.c(b));
        Value inside = m.b.create<AndOp>(m.b.create<GreaterOp>(v, m.c(0)),
                                         m.b.create<LessOp>(v, m.c(1)));
        return m.mul(m.c(a), m.mask(inside));
      });
  addUnary<ThresholdedReluOp>(
      registry, [](Math &m, ThresholdedReluOp op, Value x, Value) {
        return m.mask(
            m.b.create<GreaterOp>(x, m.c(op.getAlpha().convertToDouble())));
      });
  addUnary<ClipOp>(registry, [](Math &m, ClipOp op, Value x, Value) {
    // As torch.clamp: the gradient passes where min <= x <= max.
    auto type = cast<RankedTensorType>(x.getType());
    Value inside = m.b.splat(
        RankedTensorType::get(type.getShape(), m.b.builder.getI1Type()), 1.0);
    if (auto min = op.getMin())
      inside = m.b.create<AndOp>(
          inside, m.b.create<GreaterEqualOp>(x, m.c(min->convertToDouble())));
    if (auto max = op.getMax())
      inside = m.b.create<AndOp>(
          inside, m.b.create<LessEqualOp>(x, m.c(max->convertToDouble())));
    return m.mask(inside);
  });
  addZero<SignOp>(registry);
  addZero<FloorOp>(registry);
  addZero<CeilOp>(registry);
  addZero<RoundOp>(registry);

  addBinary<AddOp>(registry, [](Math &, Value g, Value, Value, Value) {
    return std::make_pair(g, g);
  });
  addBinary<SubOp>(registry, [](Math &m, Value g, Value, Value, Value) {
    return std::make_pair(g, m.neg(g));
  });
  addBinary<MulOp>(registry, [](Math &m, Value g, Value x, Value y, Value) {
    return std::make_pair(m.mul(g, y), m.mul(g, x));
  });
  addBinary<DivOp>(registry, [](Math &m, Value g, Value, Value y, Value z) {
    Value gx = m.div(g, y);
    return std::make_pair(gx, m.neg(m.mul(gx, z)));
  });
  addBinary<PowOp>(registry, [](Math &m, Value g, Value x, Value y, Value z) {
    // d/dx = y x^(y-1); d/dy = z log x (PyTorch masks x == 0 to 0 there).
    Value gx = m.mul(g, m.mul(y, m.b.create<PowOp>(x, m.sub(y, m.c(1)))));
    Value positive = m.b.create<GreaterOp>(x, m.c(0));
    Value logX = m.b.create<LogOp>(m.where(positive, x, m.c(1)));
    Value gy = m.mul(g, m.mul(z, logX));
    return std::make_pair(gx, gy);
  });
  addBinary<MaxOp>(registry, [](Math &m, Value g, Value x, Value y, Value) {
    // Ties split the gradient evenly, as torch.maximum does.
    Value gt = m.mask(m.b.create<GreaterOp>(x, y));
    Value eq = m.mul(m.c(0.5), m.mask(m.b.create<EqualOp>(x, y)));
    Value wx = m.add(gt, eq);
    Value wy = m.sub(m.c(1), wx);
    return std::make_pair(m.mul(g, wx), m.mul(g, wy));
  });
  addBinary<MinOp>(registry, [](Math &m, Value g, Value x, Value y, Value) {
    Value lt = m.mask(m.b.create<LessOp>(x, y));
    Value eq = m.mul(m.c(0.5), m.mask(m.b.create<EqualOp>(x, y)));
    Value wx = m.add(lt, eq);
    Value wy = m.sub(m.c(1), wx);
    return std::make_pair(m.mul(g, wx), m.mul(g, wy));
  });

  registry.add<WhereOp>([](Operation *op, ArrayRef<Value> grads,
                           GradientBuilder &b, SmallVectorImpl<Value> &out) {
    auto where = cast<WhereOp>(op);
    auto type = cast<RankedTensorType>(where.getType());
    Value zeros = b.splat(type, 0.0);
    Value c = where.getCondition();
    auto shape = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    out.push_back(Value());
    out.push_back(b.unbroadcast(b.create<WhereOp>(c, grads[0], zeros),
                                shape(where.getOnTrue())));
    out.push_back(b.unbroadcast(b.create<WhereOp>(c, zeros, grads[0]),
                                shape(where.getOnFalse())));
    return success();
  });
  registry.add<CastOp>([](Operation *op, ArrayRef<Value> grads,
                          GradientBuilder &b, SmallVectorImpl<Value> &out) {
    Value x = op->getOperand(0);
    out.push_back(isDifferentiable(grads[0].getType())
                      ? b.castTo(grads[0], elementTypeOf(x))
                      : Value());
    return success();
  });
}
