//===- DTGFolds.cpp - dtg folders and canonicalization patterns ----------===//
//
// Only structural folds live here (identities, compositions). Folding ops whose
// operands are all constants is `dtc-fold-constants`, which evaluates them with
// the reference interpreter, so every op folds with the semantics it runs with.
//
//===----------------------------------------------------------------------===//

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::dtg;

/// True if `attr` is a splat constant equal to `value`.
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type type = splat.getElementType();
  if (isa<FloatType>(type))
    return splat.getSplatValue<APFloat>().convertToDouble() == value;
  if (type.isInteger(1))
    return false;
  if (isa<IntegerType>(type))
    return splat.getSplatValue<APInt>().getSExtValue() ==
           static_cast<int64_t>(value);
  return false;
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x when the zero does not broadcast x to a larger shape.
  if (isSplatOf(adaptor.getRhs(), 0.0) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 0.0) && getRhs().getType() == getType())
    return getRhs();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 1.0) && getRhs().getType() == getType())
    return getRhs();
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x).
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(),
                                           inner.getOperand());
    return success();
  }
};

/// transpose(transpose(x, p), q) -> transpose(x, p o q).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t p : op.getPerm())
      perm.push_back(inner.getPerm()[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, inner.getOperand(), perm);
    return success();
  }
};

/// transpose(matmul(a, b)) over the last two dimensions, the product's only
/// use -> matmul(transpose(b), transpose(a)), as (A B)^T = B^T A^T. Gemm
/// kernels read the new transposes through strides: the gradient of a
/// weight the model transposes (x W^T) is computed in the weight's own
/// layout instead of being computed transposed and then copied.
struct TransposeOfMatMul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getOperand().getDefiningOp<MatMulOp>();
    if (!matmul || !matmul->hasOneUse())
      return failure();
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t rank = perm.size();
    for (int64_t d = 0; d < rank - 2; ++d)
      if (perm[d] != d)
        return failure();
    if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
      return failure();
    // The new ops do the product's work: they keep its dtg markers (a
    // backward op's operand transposes are backward too).
    auto mark = [&](Operation *created) {
      for (NamedAttribute attr : matmul->getDiscardableAttrs())
        if (attr.getName().strref().starts_with("dtg."))
          created->setAttr(attr.getName(), attr.getValue());
    };
    auto swapLast2 = [&](Value v) -> Value {
      int64_t r = cast<RankedTensorType>(v.getType()).getRank();
      SmallVector<int64_t> p = llvm::to_vector(llvm::seq<int64_t>(0, r));
      std::swap(p[r - 2], p[r - 1]);
      auto transpose = rewriter.create<TransposeOp>(op.getLoc(), v, p);
      mark(transpose);
      return transpose;
    };
    // At the product, not at the transpose: the transpose may come much
    // later (where gradients are returned), and the operands would live
    // until then.
    rewriter.setInsertionPoint(matmul);
    Value lhs = swapLast2(matmul.getRhs()), rhs = swapLast2(matmul.getLhs());
    auto product = rewriter.create<MatMulOp>(matmul.getLoc(), lhs, rhs);
    mark(product);
    rewriter.replaceOp(op, product.getResult());
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshapes>(context);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return {};
  return getOperand();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes, TransposeOfMatMul>(context);
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getOperand().getType() != getType())
    return {};
  for (int64_t step : getSteps())
    if (step != 1)
      return {};
  return getOperand();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
}
