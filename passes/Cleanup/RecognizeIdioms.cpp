//===- RecognizeIdioms.cpp - gelu and layer_norm from exported arithmetic -===//
//
// PyTorch 1.13's torch.onnx.export writes GELU and (below opset 17)
// LayerNorm as chains of elementwise ops. This pass matches those chains, as
// the ONNX importer turns them into dtg ops, and replaces each with one
// dtg.gelu or dtg.layer_norm:
//
//   GELU, exact:  y = x * (1 + erf(x / 1.4142135)) * 0.5
//                 (also x * 0.70710678 for the division);
//   GELU, tanh:   y = 0.5 * (x * (1 + tanh(0.7978846 * (x + 0.044715 * x^3))))
//                 with x^3 as x * (x * x), (x * x) * x or pow(x, 3);
//   LayerNorm:    d = x - reduce_mean(x, axes)
//                 v = reduce_mean(pow(d, 2), axes)
//                 y = d / sqrt(v + eps) * gamma + beta
//                 (axes the trailing dimensions from `axis` on, kept).
//
// The product of the last three GELU factors may be associated either way,
// and the operands of every commutative op (add, mul) may come in either
// order. Scalar constants are `dtg.constant`s holding a float splat (rank 0
// or any shape that leaves the result's shape alone); they match within 1e-6
// relative (for f16 and bf16, within the rounding of the element type).
//
// Limitations:
// - Only the op sequences above are recognized; an exporter that writes
//   the same function otherwise (rsqrt instead of sqrt and div, the variance
//   as d * d, sigmoid-based GELU) is left alone.
// - An idiom is replaced only when every intermediate value has no user
//   outside it (`x`, the constants, gamma and beta may have any). In a
//   LayerNorm `d` feeds exactly the pow and the div.
// - gamma and beta must be function arguments or `dtg.constant`s whose shape
//   broadcasts to the normalized shape (a scale of shape [1, 1, C] for a
//   normalized shape [C] is left alone). A LayerNorm without gamma and beta
//   (elementwise_affine=False) gets a splat constant 1 as its scale; one
//   without beta (bias=False) gets no bias.
//
//===----------------------------------------------------------------------===//

#include "passes/Cleanup/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Error.h"

#include <cmath>

#define DEBUG_TYPE "dtc-recognize-idioms"

namespace mlir::dtc {
#define GEN_PASS_DEF_RECOGNIZEIDIOMSPASS
#include "passes/Cleanup/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

/// The constants PyTorch writes into its GELU and LayerNorm exports.
static constexpr double kSqrt2 = 1.4142135623730951;
static constexpr double kInvSqrt2 = 0.7071067811865476;
static constexpr double kSqrt2OverPi = 0.7978845608028654;
static constexpr double kGeluCubic = 0.044715;

/// The float splat held by a `dtg.constant` that defines `value`, if any.
static std::optional<APFloat> getSplatFloat(Value value) {
  auto constant = value.getDefiningOp<dtg::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>();
}

/// True if `value` is a float splat constant within the matching tolerance of
/// `expected`: 1e-6 relative, or the rounding error of a coarser type.
static bool isConstantNear(Value value, double expected) {
  std::optional<APFloat> splat = getSplatFloat(value);
  if (!splat)
    return false;
  double tolerance = std::max(
      1e-6, std::ldexp(1.0, -static_cast<int>(APFloat::semanticsPrecision(
                                splat->getSemantics()))));
  return std::fabs(splat->convertToDouble() - expected) <=
         tolerance * std::fabs(expected);
}

/// The op of type `OpTy` defining `value` when `value` has no other user (an
/// intermediate of an idiom).
template <typename OpTy> static OpTy getSingleUseOp(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  return value.getDefiningOp<OpTy>();
}

/// For a commutative binary op, calls `fn(a, b)` with its operands in both
/// orders and returns true as soon as one call does.
template <typename OpTy, typename Fn>
static bool matchEitherOrder(OpTy op, Fn fn) {
  return fn(op.getLhs(), op.getRhs()) || fn(op.getRhs(), op.getLhs());
}

/// True if `value` is x^3 (x * (x * x), (x * x) * x or pow(x, 3)) with
/// single-use intermediates.
static bool isCube(Value value, Value x) {
  if (auto pow = getSingleUseOp<dtg::PowOp>(value))
    return pow.getLhs() == x && isConstantNear(pow.getRhs(), 3.0);
  auto mul = getSingleUseOp<dtg::MulOp>(value);
  if (!mul)
    return false;
  return matchEitherOrder(mul, [&](Value a, Value b) {
    auto square = getSingleUseOp<dtg::MulOp>(b);
    return a == x && square && square.getLhs() == x && square.getRhs() == x;
  });
}

/// True if `value` is erf(x / sqrt(2)) (or erf(x * 1/sqrt(2))).
static bool isErfArgument(Value value, Value x) {
  if (auto div = getSingleUseOp<dtg::DivOp>(value))
    return div.getLhs() == x && isConstantNear(div.getRhs(), kSqrt2);
  if (auto mul = getSingleUseOp<dtg::MulOp>(value))
    return matchEitherOrder(mul, [&](Value a, Value b) {
      return a == x && isConstantNear(b, kInvSqrt2);
    });
  return false;
}

/// True if `value` is sqrt(2/pi) * (x + 0.044715 * x^3).
static bool isTanhArgument(Value value, Value x) {
  auto scaled = getSingleUseOp<dtg::MulOp>(value);
  if (!scaled)
    return false;
  return matchEitherOrder(scaled, [&](Value c, Value inner) {
    if (!isConstantNear(c, kSqrt2OverPi))
      return false;
    auto sum = getSingleUseOp<dtg::AddOp>(inner);
    if (!sum)
      return false;
    return matchEitherOrder(sum, [&](Value a, Value b) {
      auto cubic = getSingleUseOp<dtg::MulOp>(b);
      return a == x && cubic &&
             matchEitherOrder(cubic, [&](Value k, Value cube) {
               return isConstantNear(k, kGeluCubic) && isCube(cube, x);
             });
    });
  });
}

/// If `value` is 1 + erf(...) or 1 + tanh(...) of a GELU of `x`, returns
/// whether it is the tanh form.
static std::optional<bool> matchGeluSum(Value value, Value x) {
  auto sum = getSingleUseOp<dtg::AddOp>(value);
  if (!sum)
    return std::nullopt;
  std::optional<bool> approximate;
  matchEitherOrder(sum, [&](Value one, Value t) {
    if (!isConstantNear(one, 1.0))
      return false;
    if (auto erf = getSingleUseOp<dtg::ErfOp>(t);
        erf && isErfArgument(erf.getOperand(), x))
      approximate = false;
    else if (auto tanh = getSingleUseOp<dtg::TanhOp>(t);
             tanh && isTanhArgument(tanh.getOperand(), x))
      approximate = true;
    return approximate.has_value();
  });
  return approximate;
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

namespace {
/// Replaces the product x * 0.5 * (1 + erf|tanh(...)), in any association and
/// operand order, with dtg.gelu.
struct RecognizeGelu : OpRewritePattern<dtg::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(dtg::MulOp root,
                                PatternRewriter &rewriter) const override {
    // Flatten the root and one single-use mul operand into three factors.
    for (auto [innerValue, other] : {std::pair(root.getLhs(), root.getRhs()),
                                     std::pair(root.getRhs(), root.getLhs())}) {
      auto inner = getSingleUseOp<dtg::MulOp>(innerValue);
      if (!inner)
        continue;
      Value factors[3] = {inner.getLhs(), inner.getRhs(), other};
      // Try each factor as the half and each remaining one as x.
      for (int half = 0; half < 3; ++half) {
        if (!isConstantNear(factors[half], 0.5))
          continue;
        for (int xIndex = 0; xIndex < 3; ++xIndex) {
          if (xIndex == half)
            continue;
          Value x = factors[xIndex];
          Value sum = factors[3 - half - xIndex];
          auto type = dyn_cast<RankedTensorType>(x.getType());
          if (!type || !isa<FloatType>(type.getElementType()) ||
              type != root.getType())
            continue;
          std::optional<bool> approximate = matchGeluSum(sum, x);
          if (!approximate)
            continue;
          LLVM_DEBUG(llvm::dbgs() << "gelu (approximate=" << *approximate
                                  << ") at " << root.getLoc() << "\n");
          rewriter.replaceOpWithNewOp<dtg::GeluOp>(
              root, x, rewriter.getBoolAttr(*approximate));
          return success();
        }
      }
    }
    return failure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

namespace {
/// A decomposed LayerNorm ending at some op.
struct LayerNormMatch {
  Value input;
  /// Null when the chain ends at the division (no affine part).
  Value scale;
  /// Null when the chain ends at the division or the scale.
  Value bias;
  int64_t axis = 0;
  APFloat epsilon = APFloat(0.0);
};
} // namespace

/// The first of `axes` if they are the trailing dimensions of a rank-`rank`
/// tensor, in order.
static std::optional<int64_t> getTrailingAxis(ArrayRef<int64_t> axes,
                                              int64_t rank) {
  if (axes.empty())
    return std::nullopt;
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis != rank - static_cast<int64_t>(axes.size() - i))
      return std::nullopt;
  return axes.front();
}

/// Matches d / sqrt(reduce_mean(pow(d, 2)) + eps) with d = x - reduce_mean(x)
/// and fills the input, axis and epsilon of `match`.
static bool matchNormalization(dtg::DivOp div, LayerNormMatch &match) {
  Value d = div.getLhs();
  auto sub = d.getDefiningOp<dtg::SubOp>();
  if (!sub)
    return false;
  Value x = sub.getLhs();
  auto xType = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(xType.getElementType()))
    return false;
  auto mean = getSingleUseOp<dtg::ReduceMeanOp>(sub.getRhs());
  if (!mean || mean.getOperand() != x || !mean.getKeepdims())
    return false;
  std::optional<int64_t> axis =
      getTrailingAxis(mean.getAxes(), xType.getRank());
  if (!axis)
    return false;
  // sqrt(reduce_mean(pow(d, 2)) + eps)
  auto sqrt = getSingleUseOp<dtg::SqrtOp>(div.getRhs());
  if (!sqrt)
    return false;
  auto sum = getSingleUseOp<dtg::AddOp>(sqrt.getOperand());
  if (!sum)
    return false;
  std::optional<APFloat> epsilon;
  bool matched = matchEitherOrder(sum, [&](Value v, Value eps) {
    epsilon = getSplatFloat(eps);
    auto variance = getSingleUseOp<dtg::ReduceMeanOp>(v);
    if (!epsilon || !variance || variance.getAxes() != mean.getAxes() ||
        !variance.getKeepdims())
      return false;
    auto square = getSingleUseOp<dtg::PowOp>(variance.getOperand());
    return square && square.getLhs() == d &&
           isConstantNear(square.getRhs(), 2.0);
  });
  // d feeds exactly the pow and the div.
  if (!matched || !llvm::hasNItems(d.getUses(), 2))
    return false;
  match.input = x;
  match.axis = *axis;
  match.epsilon = *epsilon;
  return true;
}

/// True if `value` may be a LayerNorm's scale or bias: a function argument or
/// a constant whose shape broadcasts to `normalized`.
static bool isAffineParameter(Value value, ArrayRef<int64_t> normalized) {
  if (!isa<BlockArgument>(value) && !value.getDefiningOp<dtg::ConstantOp>())
    return false;
  return dtg::isBroadcastableTo(
      cast<RankedTensorType>(value.getType()).getShape(), normalized);
}

/// Matches a decomposed LayerNorm ending at `root` (the div, the mul by gamma
/// or the add of beta).
static FailureOr<LayerNormMatch> matchLayerNorm(Operation *root) {
  LayerNormMatch match;
  dtg::DivOp div;
  Value scale, bias;
  auto matchScaled = [&](dtg::MulOp mul) {
    return matchEitherOrder(mul, [&](Value a, Value gamma) {
      div = getSingleUseOp<dtg::DivOp>(a);
      scale = gamma;
      return static_cast<bool>(div);
    });
  };
  if (auto add = dyn_cast<dtg::AddOp>(root)) {
    if (!matchEitherOrder(add, [&](Value a, Value beta) {
          auto mul = getSingleUseOp<dtg::MulOp>(a);
          bias = beta;
          return mul && matchScaled(mul);
        }))
      return failure();
  } else if (auto mul = dyn_cast<dtg::MulOp>(root)) {
    if (!matchScaled(mul))
      return failure();
  } else {
    div = dyn_cast<dtg::DivOp>(root);
  }
  if (!div || !matchNormalization(div, match))
    return failure();
  auto inputType = cast<RankedTensorType>(match.input.getType());
  if (root->getResult(0).getType() != inputType)
    return failure();
  ArrayRef<int64_t> normalized = inputType.getShape().drop_front(match.axis);
  if ((scale && !isAffineParameter(scale, normalized)) ||
      (bias && !isAffineParameter(bias, normalized)))
    return failure();
  match.scale = scale;
  match.bias = bias;
  return match;
}

/// The shortest decimal that rounds to `value` in its own type, as a double:
/// PyTorch's eps=1e-5 exported as f32 comes back as 1e-5, not 9.99999974e-6.
static double toShortestDouble(const APFloat &value) {
  for (unsigned digits = 1; digits < 40; ++digits) {
    SmallString<32> text;
    value.toString(text, digits, /*FormatMaxPadding=*/0);
    APFloat parsed(value.getSemantics());
    auto status = parsed.convertFromString(text, APFloat::rmNearestTiesToEven);
    if (!status) {
      llvm::consumeError(status.takeError());
      continue;
    }
    if (parsed.bitwiseIsEqual(value)) {
      APFloat wide(APFloat::IEEEdouble());
      auto wideStatus =
          wide.convertFromString(text, APFloat::rmNearestTiesToEven);
      if (wideStatus)
        return wide.convertToDouble();
      llvm::consumeError(wideStatus.takeError());
    }
  }
  bool losesInfo = false;
  APFloat wide = value;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return wide.convertToDouble();
}

namespace {
/// Replaces a decomposed LayerNorm ending at an op of type `OpTy` with
/// dtg.layer_norm, unless the chain goes on into a mul by gamma or an add of
/// beta, which then replaces the longer chain.
template <typename OpTy> struct RecognizeLayerNorm : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy root,
                                PatternRewriter &rewriter) const override {
    FailureOr<LayerNormMatch> match = matchLayerNorm(root);
    if (failed(match))
      return failure();
    if (root->hasOneUse() &&
        isa<dtg::MulOp, dtg::AddOp>(*root->getUsers().begin()) &&
        succeeded(matchLayerNorm(*root->getUsers().begin())))
      return rewriter.notifyMatchFailure(root, "a longer chain follows");
    Value scale = match->scale;
    auto inputType = cast<RankedTensorType>(match->input.getType());
    if (!scale) {
      auto onesType =
          RankedTensorType::get(inputType.getShape().drop_front(match->axis),
                                inputType.getElementType());
      scale = rewriter.create<dtg::ConstantOp>(
          root.getLoc(), DenseElementsAttr::get(
                             onesType, rewriter.getFloatAttr(
                                           inputType.getElementType(), 1.0)));
    }
    LLVM_DEBUG(llvm::dbgs() << "layer_norm (axis " << match->axis << ") at "
                            << root.getLoc() << "\n");
    rewriter.replaceOpWithNewOp<dtg::LayerNormOp>(
        root, inputType, match->input, scale, match->bias,
        rewriter.getI64IntegerAttr(match->axis),
        rewriter.getF64FloatAttr(toShortestDouble(match->epsilon)));
    return success();
  }
};

struct RecognizeIdiomsPass
    : public dtc::impl::RecognizeIdiomsPassBase<RecognizeIdiomsPass> {
  using RecognizeIdiomsPassBase::RecognizeIdiomsPassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns
        .add<RecognizeGelu, RecognizeLayerNorm<dtg::AddOp>,
             RecognizeLayerNorm<dtg::MulOp>, RecognizeLayerNorm<dtg::DivOp>>(
            context);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
