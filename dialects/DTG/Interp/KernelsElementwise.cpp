//===- KernelsElementwise.cpp - interpreter kernels of elementwise ops ----===//

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtg;
using namespace mlir::dtg::interp;

namespace {

/// Registers a unary float kernel computing `fn` in double precision.
template <typename OpTy>
void addUnary(KernelRegistry &registry, double (*fn)(double)) {
  registry.add<OpTy>(
      [fn](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        for (int64_t k = 0, e = result.numElements(); k < e; ++k)
          result.set(k, fn(in[0].get(k)));
        out.push_back(std::move(result));
        return success();
      });
}

/// Registers a unary kernel whose function reads the op (its attributes).
template <typename OpTy>
void addUnaryWithOp(KernelRegistry &registry,
                    std::function<double(OpTy, double)> fn) {
  registry.add<OpTy>(
      [fn](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        auto typed = cast<OpTy>(op);
        for (int64_t k = 0, e = result.numElements(); k < e; ++k)
          result.set(k, fn(typed, in[0].get(k)));
        out.push_back(std::move(result));
        return success();
      });
}

/// Applies `fn` to broadcast pairs of the operands into a result of the op's
/// type; `fn` gets both values as doubles (integers are exact up to 2^53).
void broadcastApply(Operation *op, const Tensor &lhs, const Tensor &rhs,
                    Tensor &result,
                    const std::function<void(int64_t, int64_t, int64_t)> &fn) {
  BroadcastIndexer l(lhs.shape, result.shape), r(rhs.shape, result.shape);
  for (int64_t k = 0, e = result.numElements(); k < e; ++k)
    fn(k, l(k), r(k));
}

/// Registers a binary kernel: floats through `floatFn`, integers through
/// `intFn` (exact 64-bit arithmetic).
template <typename OpTy>
void addBinary(KernelRegistry &registry, double (*floatFn)(double, double),
               int64_t (*intFn)(int64_t, int64_t)) {
  registry.add<OpTy>([=](Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) -> LogicalResult {
    Tensor result = makeResult(op->getResult(0).getType());
    const Tensor &lhs = in[0], &rhs = in[1];
    bool bad = false;
    if (result.isFloat()) {
      broadcastApply(op, lhs, rhs, result,
                     [&](int64_t k, int64_t a, int64_t b) {
                       result.set(k, floatFn(lhs.f[a], rhs.f[b]));
                     });
    } else {
      broadcastApply(op, lhs, rhs, result,
                     [&](int64_t k, int64_t a, int64_t b) {
                       if (!intFn) {
                         bad = true;
                         return;
                       }
                       result.setInt(k, intFn(lhs.i[a], rhs.i[b]));
                     });
    }
    if (bad)
      return op->emitError("not defined on integers");
    out.push_back(std::move(result));
    return success();
  });
}

/// Registers a comparison kernel.
template <typename OpTy>
void addCompare(KernelRegistry &registry, bool (*floatFn)(double, double),
                bool (*intFn)(int64_t, int64_t)) {
  registry.add<OpTy>([=](Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) {
    Tensor result = makeResult(op->getResult(0).getType());
    const Tensor &lhs = in[0], &rhs = in[1];
    broadcastApply(op, lhs, rhs, result, [&](int64_t k, int64_t a, int64_t b) {
      result.i[k] = lhs.isFloat() ? floatFn(lhs.f[a], rhs.f[b])
                                  : intFn(lhs.i[a], rhs.i[b]);
    });
    out.push_back(std::move(result));
    return success();
  });
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double roundHalfEven(double x) { return std::nearbyint(x); }
double sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

/// Integer division truncating toward zero; x / 0 is 0 and INT64_MIN / -1
/// wraps to INT64_MIN (both undefined in C++).
int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  return a / b;
}
int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : (base == -1 ? (exp % 2 ? -1 : 1) : 0);
  // Squaring with two's-complement wrap-around (no signed overflow).
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e; e >>= 1, b *= b)
    if (e & 1)
      r *= b;
  return static_cast<int64_t>(r);
}

} // namespace

void mlir::dtg::interp::registerElementwiseKernels(KernelRegistry &registry) {
  addUnary<NegOp>(registry, [](double x) { return -x; });
  addUnary<AbsOp>(registry, [](double x) { return std::fabs(x); });
  addUnary<SignOp>(registry, sign);
  addUnary<ExpOp>(registry, [](double x) { return std::exp(x); });
  addUnary<LogOp>(registry, [](double x) { return std::log(x); });
  addUnary<SqrtOp>(registry, [](double x) { return std::sqrt(x); });
  addUnary<RsqrtOp>(registry, [](double x) { return 1.0 / std::sqrt(x); });
  addUnary<ReciprocalOp>(registry, [](double x) { return 1.0 / x; });
  addUnary<FloorOp>(registry, [](double x) { return std::floor(x); });
  addUnary<CeilOp>(registry, [](double x) { return std::ceil(x); });
  addUnary<RoundOp>(registry, roundHalfEven);
  addUnary<SinOp>(registry, [](double x) { return std::sin(x); });
  addUnary<CosOp>(registry, [](double x) { return std::cos(x); });
  addUnary<TanOp>(registry, [](double x) { return std::tan(x); });
  addUnary<AsinOp>(registry, [](double x) { return std::asin(x); });
  addUnary<AcosOp>(registry, [](double x) { return std::acos(x); });
  addUnary<AtanOp>(registry, [](double x) { return std::atan(x); });
  addUnary<SinhOp>(registry, [](double x) { return std::sinh(x); });
  addUnary<CoshOp>(registry, [](double x) { return std::cosh(x); });
  addUnary<AsinhOp>(registry, [](double x) { return std::asinh(x); });
  addUnary<AcoshOp>(registry, [](double x) { return std::acosh(x); });
  addUnary<AtanhOp>(registry, [](double x) { return std::atanh(x); });
  addUnary<TanhOp>(registry, [](double x) { return std::tanh(x); });
  addUnary<ErfOp>(registry, [](double x) { return std::erf(x); });
  addUnary<SigmoidOp>(registry, sigmoid);
  addUnary<ReluOp>(registry, [](double x) { return x > 0 ? x : 0.0; });
  addUnary<SoftplusOp>(registry, softplus);
  addUnary<SoftsignOp>(registry,
                       [](double x) { return x / (1.0 + std::fabs(x)); });
  registry.add<NotOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        bool logical = result.elementType.isInteger(1);
        for (int64_t k = 0, e = result.numElements(); k < e; ++k)
          result.setInt(k, logical ? !in[0].i[k] : ~in[0].i[k]);
        out.push_back(std::move(result));
        return success();
      });

  addUnaryWithOp<GeluOp>(registry, [](GeluOp op, double x) {
    if (op.getApproximate())
      return 0.5 * x *
             (1.0 +
              std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  });
  addUnaryWithOp<LeakyReluOp>(registry, [](LeakyReluOp op, double x) {
    return x >= 0 ? x : op.getAlpha().convertToDouble() * x;
  });
  addUnaryWithOp<EluOp>(registry, [](EluOp op, double x) {
    return x > 0 ? x : op.getAlpha().convertToDouble() * (std::exp(x) - 1.0);
  });
  addUnaryWithOp<CeluOp>(registry, [](CeluOp op, double x) {
    double a = op.getAlpha().convertToDouble();
    return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1.0));
  });
  addUnaryWithOp<SeluOp>(registry, [](SeluOp op, double x) {
    double a = op.getAlpha().convertToDouble();
    double g = op.getGamma().convertToDouble();
    return x > 0 ? g * x : g * a * (std::exp(x) - 1.0);
  });
  addUnaryWithOp<HardSigmoidOp>(registry, [](HardSigmoidOp op, double x) {
    double a = op.getAlpha().convertToDouble();
    double b = op.getBeta().convertToDouble();
    return std::max(0.0, std::min(1.0, a * x + b));
  });
  addUnaryWithOp<ThresholdedReluOp>(
      registry, [](ThresholdedReluOp op, double x) {
        return x > op.getAlpha().convertToDouble() ? x : 0.0;
      });
  addUnaryWithOp<ClipOp>(registry, [](ClipOp op, double x) {
    if (std::isnan(x))
      return x;
    if (auto min = op.getMin())
      x = std::max(x, min->convertToDouble());
    if (auto max = op.getMax())
      x = std::min(x, max->convertToDouble());
    return x;
  });

  registry.add<IsNanOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        for (int64_t k = 0, e = result.numElements(); k < e; ++k)
          result.i[k] = std::isnan(in[0].f[k]);
        out.push_back(std::move(result));
        return success();
      });
  registry.add<IsInfOp>([](Operation *op, ArrayRef<Tensor> in,
                           SmallVectorImpl<Tensor> &out) {
    auto isInf = cast<IsInfOp>(op);
    Tensor result = makeResult(op->getResult(0).getType());
    for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
      double x = in[0].f[k];
      result.i[k] = std::isinf(x) && ((x > 0 && isInf.getDetectPositive()) ||
                                      (x < 0 && isInf.getDetectNegative()));
    }
    out.push_back(std::move(result));
    return success();
  });

  addBinary<AddOp>(
      registry, [](double a, double b) { return a + b; },
      [](int64_t a, int64_t b) {
        return static_cast<int64_t>(uint64_t(a) + uint64_t(b));
      });
  addBinary<SubOp>(
      registry, [](double a, double b) { return a - b; },
      [](int64_t a, int64_t b) {
        return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
      });
  addBinary<MulOp>(
      registry, [](double a, double b) { return a * b; },
      [](int64_t a, int64_t b) {
        return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
      });
  addBinary<DivOp>(
      registry, [](double a, double b) { return a / b; }, floorDiv);
  addBinary<PowOp>(
      registry, [](double a, double b) { return std::pow(a, b); }, intPow);
  addBinary<MaxOp>(
      registry,
      [](double a, double b) {
        return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      },
      [](int64_t a, int64_t b) { return std::max(a, b); });
  addBinary<MinOp>(
      registry,
      [](double a, double b) {
        return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      },
      [](int64_t a, int64_t b) { return std::min(a, b); });
  // Bitwise on the values as held (booleans are 0 or 1; the result wraps to
  // the element type).
  addBinary<AndOp>(registry, nullptr,
                   [](int64_t a, int64_t b) -> int64_t { return a & b; });
  addBinary<OrOp>(registry, nullptr,
                  [](int64_t a, int64_t b) -> int64_t { return a | b; });
  addBinary<XorOp>(registry, nullptr,
                   [](int64_t a, int64_t b) -> int64_t { return a ^ b; });

  registry.add<ModOp>([](Operation *op, ArrayRef<Tensor> in,
                         SmallVectorImpl<Tensor> &out) -> LogicalResult {
    bool fmod = cast<ModOp>(op).getFmod();
    Tensor result = makeResult(op->getResult(0).getType());
    const Tensor &lhs = in[0], &rhs = in[1];
    broadcastApply(op, lhs, rhs, result, [&](int64_t k, int64_t a, int64_t b) {
      if (result.isFloat()) {
        double x = lhs.f[a], y = rhs.f[b];
        double r = std::fmod(x, y);
        if (!fmod && r != 0 && ((r < 0) != (y < 0)))
          r += y;
        result.set(k, r);
        return;
      }
      int64_t x = lhs.i[a], y = rhs.i[b];
      if (y == 0) {
        result.setInt(k, 0);
        return;
      }
      int64_t r = y == -1 ? 0 : x % y; // INT64_MIN % -1 is undefined
      if (!fmod && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      result.setInt(k, r);
    });
    out.push_back(std::move(result));
    return success();
  });

  addCompare<EqualOp>(
      registry, [](double a, double b) { return a == b; },
      [](int64_t a, int64_t b) { return a == b; });
  addCompare<LessOp>(
      registry, [](double a, double b) { return a < b; },
      [](int64_t a, int64_t b) { return a < b; });
  addCompare<LessEqualOp>(
      registry, [](double a, double b) { return a <= b; },
      [](int64_t a, int64_t b) { return a <= b; });
  addCompare<GreaterOp>(
      registry, [](double a, double b) { return a > b; },
      [](int64_t a, int64_t b) { return a > b; });
  addCompare<GreaterEqualOp>(
      registry, [](double a, double b) { return a >= b; },
      [](int64_t a, int64_t b) { return a >= b; });

  registry.add<WhereOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        BroadcastIndexer c(in[0].shape, result.shape),
            t(in[1].shape, result.shape), f(in[2].shape, result.shape);
        for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
          const Tensor &src = in[0].i[c(k)] ? in[1] : in[2];
          int64_t idx = in[0].i[c(k)] ? t(k) : f(k);
          if (result.isFloat())
            result.f[k] = src.f[idx];
          else
            result.i[k] = src.i[idx];
        }
        out.push_back(std::move(result));
        return success();
      });

  registry.add<CastOp>(
      [](Operation *op, ArrayRef<Tensor> in, SmallVectorImpl<Tensor> &out) {
        Tensor result = makeResult(op->getResult(0).getType());
        const Tensor &src = in[0];
        Type to = result.elementType;
        bool saturate = cast<CastOp>(op).getSaturate().value_or(true);
        for (int64_t k = 0, e = result.numElements(); k < e; ++k) {
          if (isInt4(to))
            result.i[k] = castToInt4(to, src.get(k));
          else if (isFloat8(to))
            result.f[k] = castToFloatType(to, src.get(k), saturate);
          else if (src.isFloat())
            result.set(k, src.f[k]); // trunc toward zero for integers; NaN -> 0
          else
            result.setInt(k, src.i[k]);
        }
        out.push_back(std::move(result));
        return success();
      });
}
