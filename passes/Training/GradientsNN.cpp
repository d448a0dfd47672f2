//===- GradientsNN.cpp - gradient rules of the NN family -----------===//
//
// Contractions (matmul, gemm, einsum) differentiate into contractions of the
// result gradient with the other operands; normalizations, softmax and
// dropout into the formulas PyTorch's autograd uses, composed of dtg ops.
// Convolution and pooling have adjoints of their own (DTGGradNN.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Training/Autodiff.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

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
  Value rsqrt(Value x) { return b.create<RsqrtOp>(x); }
  Value sum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return b.create<ReduceSumOp>(x, b.builder.getDenseI64ArrayAttr(axes),
                                 b.builder.getBoolAttr(keepdims));
  }
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return b.create<ReduceMeanOp>(x, b.builder.getDenseI64ArrayAttr(axes),
                                  b.builder.getBoolAttr(keepdims));
  }
};

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }
Type elementTypeOf(Value v) { return typeOf(v).getElementType(); }

/// Swaps the last two dimensions of `v` (rank >= 2).
Value transposeLast2(GradientBuilder &b, Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  return b.create<TransposeOp>(v, b.builder.getDenseI64ArrayAttr(perm));
}

/// Every axis of a rank-`rank` tensor but axis 1 (the channels).
SmallVector<int64_t> allButChannels(int64_t rank) {
  SmallVector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// The shape [1, C, 1, ...] of rank `rank` that a per-channel [C] vector
/// broadcasts through.
SmallVector<int64_t> channelShape(int64_t rank, int64_t channels) {
  SmallVector<int64_t> shape(rank, 1);
  shape[1] = channels;
  return shape;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// d(A B)/dA = G B^T, d/dB = A^T G, summed over the batch dimensions each
/// operand was broadcast along.
LogicalResult matmulGradient(Operation *op, ArrayRef<Value> grads,
                             GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto matmul = cast<MatMulOp>(op);
  Value lhs = matmul.getLhs(), rhs = matmul.getRhs(), g = grads[0];
  if (!g || !isDifferentiable(matmul.getType())) {
    out.append({Value(), Value()});
    return success();
  }
  Value dlhs = b.create<MatMulOp>(g, transposeLast2(b, rhs));
  out.push_back(b.unbroadcast(dlhs, shapeOf(lhs)));
  ArrayRef<int64_t> lhsShape = shapeOf(lhs);
  if (shapeOf(rhs).size() == 2 && lhsShape.size() > 2) {
    // A weight shared by every batch element (x[..., M, K] W[K, N]): one
    // product over the flattened rows, X^T G with X [P*M, K] and G [P*M, N],
    // instead of P products summed afterwards.
    int64_t k = lhsShape.back(), n = shapeOf(g).back();
    int64_t rows = typeOf(lhs).getNumElements() / std::max<int64_t>(k, 1);
    Value flatLhs = b.reshape(lhs, {rows, k});
    Value flatG = b.reshape(g, {rows, n});
    out.push_back(b.create<MatMulOp>(transposeLast2(b, flatLhs), flatG));
    return success();
  }
  Value drhs = b.create<MatMulOp>(transposeLast2(b, lhs), g);
  out.push_back(b.unbroadcast(drhs, shapeOf(rhs)));
  return success();
}

/// Y = alpha op(A) op(B) + beta C: each product gradient is again one gemm
/// whose transposition flags absorb the forward ones; C's is beta G summed
/// over its broadcast dimensions.
LogicalResult gemmGradient(Operation *op, ArrayRef<Value> grads,
                           GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto gemm = cast<GemmOp>(op);
  Value a = gemm.getA(), bv = gemm.getB(), g = grads[0];
  if (!g) {
    out.resize(op->getNumOperands());
    return success();
  }
  bool transA = gemm.getTransA(), transB = gemm.getTransB();
  FloatAttr alpha = gemm.getAlphaAttr();
  FloatAttr zero = b.builder.getF64FloatAttr(0.0);
  auto product = [&](Value x, Value y, bool tx, bool ty) {
    return b.create<GemmOp>(x, y, Value(), alpha, zero,
                            b.builder.getBoolAttr(tx),
                            b.builder.getBoolAttr(ty));
  };
  // dop(A) = alpha G op(B)^T, dop(B) = alpha op(A)^T G; A (B) is op(A) or its
  // transpose.
  Value da =
      transA ? product(bv, g, transB, true) : product(g, bv, false, !transB);
  Value db =
      transB ? product(g, a, true, transA) : product(a, g, !transA, false);
  out.push_back(da);
  out.push_back(db);
  if (Value c = gemm.getC()) {
    Math m{b, elementTypeOf(g)};
    double beta = gemm.getBeta().convertToDouble();
    Value dc = beta == 1.0 ? g : m.mul(g, m.c(beta));
    out.push_back(b.unbroadcast(dc, shapeOf(c)));
  }
  return success();
}

/// The parsed terms of an einsum equation ("ab,bc->ac").
struct EinsumTerms {
  SmallVector<std::string> inputs;
  std::string output;
};

FailureOr<EinsumTerms> parseTerms(StringRef equation) {
  size_t arrow = equation.find("->");
  if (arrow == StringRef::npos)
    return failure();
  EinsumTerms terms;
  terms.output = equation.drop_front(arrow + 2).str();
  SmallVector<StringRef> parts;
  equation.take_front(arrow).split(parts, ',');
  for (StringRef part : parts)
    terms.inputs.push_back(part.str());
  return terms;
}

/// The gradient of einsum operand `i`: (1) an einsum of the result gradient
/// with the other operands onto the letters of operand i's term that occur
/// elsewhere, (2) summed over letters along which the operand has size 1 but
/// the others do not, (3) broadcast along letters that only the operand has
/// (they were summed away) or that it has where the others had size 1, and
/// (4) for a letter repeated in the term (a diagonal), kept on the diagonal
/// only.
Value einsumOperandGradient(GradientBuilder &b, Value g, ValueRange operands,
                            const EinsumTerms &terms, size_t i) {
  Value x = operands[i];
  ArrayRef<int64_t> shape = shapeOf(x);
  StringRef term = terms.inputs[i];
  int64_t rank = static_cast<int64_t>(term.size());

  // Letters that occur outside operand i's term.
  llvm::SmallDenseSet<char> elsewhere(terms.output.begin(), terms.output.end());
  for (auto [j, other] : llvm::enumerate(terms.inputs))
    if (j != i)
      elsewhere.insert(other.begin(), other.end());

  // Per letter of the term: the positions where the operand is not a
  // broadcast 1 ("big"), in term order.
  llvm::SmallDenseMap<char, SmallVector<int64_t>> big;
  SmallVector<char> letters; // deduplicated, in order of first occurrence
  for (int64_t p = 0; p < rank; ++p) {
    char c = term[p];
    auto [it, inserted] = big.try_emplace(c);
    if (inserted)
      letters.push_back(c);
    if (shape[p] != 1)
      it->second.push_back(p);
  }
  auto firstPosition = [&](char c) {
    const SmallVector<int64_t> &positions = big.lookup(c);
    return positions.empty() ? static_cast<int64_t>(term.find(c))
                             : positions.front();
  };

  // (1) The contraction onto the shared letters, ordered by their first
  // big position so that a reshape lays them out like the operand.
  std::string shared;
  for (char c : letters)
    if (elsewhere.contains(c))
      shared.push_back(c);
  llvm::stable_sort(shared, [&](char l, char r) {
    return firstPosition(l) < firstPosition(r);
  });
  SmallVector<Value> inputs{g};
  std::string equation = terms.output;
  for (auto [j, other] : llvm::enumerate(terms.inputs)) {
    if (j == i)
      continue;
    inputs.push_back(operands[j]);
    equation += "," + other;
  }
  Value h = g;
  if (inputs.size() > 1 || shared != terms.output)
    h = b.create<EinsumOp>(inputs, equation + "->" + shared);
  ArrayRef<int64_t> hShape = shapeOf(h);

  // (2) Sum letters along which the operand is 1 everywhere.
  SmallVector<int64_t> summed;
  for (auto [k, c] : llvm::enumerate(shared))
    if (big.lookup(c).empty() && hShape[k] != 1)
      summed.push_back(static_cast<int64_t>(k));
  h = b.sumKeep(h, summed);
  hShape = shapeOf(h);

  // (3) Lay the letters out at their first big positions, then broadcast
  // to the operand's sizes there.
  llvm::SmallDenseMap<char, int64_t> hSize;
  for (auto [k, c] : llvm::enumerate(shared))
    hSize[c] = hShape[k];
  SmallVector<int64_t> layout(rank, 1), full(rank, 1);
  for (int64_t p = 0; p < rank; ++p) {
    char c = term[p];
    if (big.lookup(c).empty() || big.lookup(c).front() != p)
      continue;
    full[p] = shape[p];
    if (elsewhere.contains(c))
      layout[p] = hSize.lookup(c);
  }
  h = b.broadcastTo(b.reshape(h, layout), full);

  // (4) Diagonals: where a letter has several big positions, only elements
  // whose indices agree there receive gradient. The mask compares position
  // vectors (0, 1, ..., n-1) laid along each pair of those dimensions.
  auto positionsAlong = [&](int64_t p) {
    SmallVector<int64_t> values =
        llvm::to_vector(llvm::seq<int64_t>(0, shape[p]));
    SmallVector<int64_t> along(rank, 1);
    along[p] = shape[p];
    auto type = RankedTensorType::get(along, b.builder.getI64Type());
    return b.builder.create<ConstantOp>(
        b.loc, DenseElementsAttr::get(type, ArrayRef<int64_t>(values)));
  };
  Value mask;
  for (char c : letters) {
    SmallVector<int64_t> positions = big.lookup(c);
    if (positions.size() < 2)
      continue;
    Value first = positionsAlong(positions.front());
    for (int64_t p : ArrayRef<int64_t>(positions).drop_front()) {
      Value equal = b.create<EqualOp>(first, positionsAlong(p));
      mask = mask ? b.create<AndOp>(mask, equal) : equal;
    }
  }
  if (!mask)
    return h;
  return b.create<WhereOp>(mask, h, b.scalar(elementTypeOf(x), 0.0));
}

LogicalResult einsumGradient(Operation *op, ArrayRef<Value> grads,
                             GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto einsum = cast<EinsumOp>(op);
  Value g = grads[0];
  if (!g || !isDifferentiable(einsum.getType())) {
    out.resize(op->getNumOperands());
    return success();
  }
  FailureOr<EinsumTerms> terms = parseTerms(einsum.getEquation());
  if (failed(terms) || terms->inputs.size() != op->getNumOperands())
    return op->emitError("cannot differentiate einsum '")
           << einsum.getEquation() << "': malformed equation";
  for (size_t i = 0; i < terms->inputs.size(); ++i)
    out.push_back(einsumOperandGradient(b, g, einsum.getInputs(), *terms, i));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult convGradient(Operation *op, ArrayRef<Value> grads,
                           GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto conv = cast<ConvOp>(op);
  Value g = grads[0];
  if (!g) {
    out.resize(op->getNumOperands());
    return success();
  }
  Value input = conv.getInput(), weight = conv.getWeight();
  out.push_back(b.builder.create<ConvInputGradOp>(
      b.loc, input.getType(), g, weight, conv.getStridesAttr(),
      conv.getPadsAttr(), conv.getDilationsAttr(), conv.getGroupAttr()));
  out.push_back(b.builder.create<ConvWeightGradOp>(
      b.loc, weight.getType(), g, input, conv.getStridesAttr(),
      conv.getPadsAttr(), conv.getDilationsAttr(), conv.getGroupAttr()));
  if (conv.getBias()) {
    Math m{b, elementTypeOf(g)};
    out.push_back(m.sum(g, allButChannels(typeOf(g).getRank()),
                        /*keepdims=*/false));
  }
  return success();
}

LogicalResult maxPoolGradient(Operation *op, ArrayRef<Value> grads,
                              GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto pool = cast<MaxPoolOp>(op);
  out.push_back(b.create<MaxPoolGradOp>(
      grads[0], pool.getOperand(), pool.getKernelAttr(), pool.getStridesAttr(),
      pool.getPadsAttr(), pool.getDilationsAttr(), pool.getCeilModeAttr()));
  return success();
}

LogicalResult avgPoolGradient(Operation *op, ArrayRef<Value> grads,
                              GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto pool = cast<AvgPoolOp>(op);
  out.push_back(b.builder.create<AvgPoolGradOp>(
      b.loc, pool.getOperand().getType(), grads[0], pool.getKernelAttr(),
      pool.getStridesAttr(), pool.getPadsAttr(), pool.getDilationsAttr(),
      pool.getCeilModeAttr(), pool.getCountIncludePadAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// y = scale (x - mean) / sqrt(var + eps) + bias with given statistics: every
/// operand has a gradient (the statistics are ordinary inputs here).
LogicalResult batchNormInferenceGradient(Operation *op, ArrayRef<Value> grads,
                                         GradientBuilder &b,
                                         SmallVectorImpl<Value> &out) {
  auto bn = cast<BatchNormInferenceOp>(op);
  Value g = grads[0], x = bn.getInput();
  Math m{b, elementTypeOf(x)};
  int64_t rank = typeOf(x).getRank(), channels = shapeOf(x)[1];
  SmallVector<int64_t> axes = allButChannels(rank);
  SmallVector<int64_t> perChannel = channelShape(rank, channels);
  Value scale = bn.getScale();
  Value invStd =
      m.rsqrt(m.add(bn.getVariance(), m.c(bn.getEpsilon().convertToDouble())));
  Value centered = m.sub(x, b.reshape(bn.getMean(), perChannel));
  Value gain = m.mul(scale, invStd); // [C]
  Value sumG = m.sum(g, axes, /*keepdims=*/false);
  Value sumGCentered = m.sum(m.mul(g, centered), axes, /*keepdims=*/false);
  out.push_back(m.mul(g, b.reshape(gain, perChannel)));
  out.push_back(m.mul(sumGCentered, invStd));
  out.push_back(sumG);
  out.push_back(m.neg(m.mul(sumG, gain)));
  // d/dvar (var + eps)^(-1/2) = -1/2 invStd^3.
  out.push_back(m.mul(m.mul(sumGCentered, gain),
                      m.mul(m.c(-0.5), m.mul(invStd, invStd))));
  return success();
}

/// Batch statistics: dx = scale invStd (g - mean(g) - xhat mean(g xhat)),
/// dscale = sum(g xhat), dbias = sum(g). The running statistics are updated
/// outside autograd in PyTorch (buffers under no_grad): the new running mean
/// and variance pass no gradient back, and the old ones receive none.
///
/// Written for one pass over the tensors after the mean: the variance,
/// sum(g) and sum(g centered) are sums over the same elements, created
/// together before anything reads them (dtc-fuse makes them one kernel),
/// each sum computed once (the means are sum / M), and dx reads only g, x
/// and per-channel values.
LogicalResult batchNormTrainingGradient(Operation *op, ArrayRef<Value> grads,
                                        GradientBuilder &b,
                                        SmallVectorImpl<Value> &out) {
  auto bn = cast<BatchNormTrainingOp>(op);
  Value g = grads[0], x = bn.getInput();
  if (!g) {
    out.resize(op->getNumOperands());
    return success();
  }
  Math m{b, elementTypeOf(x)};
  int64_t rank = typeOf(x).getRank(), channels = shapeOf(x)[1];
  SmallVector<int64_t> axes = allButChannels(rank);
  SmallVector<int64_t> perChannel = channelShape(rank, channels);
  double count = static_cast<double>(typeOf(x).getNumElements()) /
                 static_cast<double>(std::max<int64_t>(channels, 1));
  Value centered = m.sub(x, m.mean(x, axes, /*keepdims=*/true));
  Value variance = m.mean(m.mul(centered, centered), axes, /*keepdims=*/true);
  Value sumGCentered = m.sum(m.mul(g, centered), axes, /*keepdims=*/true);
  Value sumG = m.sum(g, axes, /*keepdims=*/true);
  Value invStd =
      m.rsqrt(m.add(variance, m.c(bn.getEpsilon().convertToDouble())));
  // mean(g xhat) xhat = centered invStd^2 sum(g centered) / M.
  Value dscale = m.mul(sumGCentered, invStd);
  Value perElement = m.c(1.0 / count);
  Value meanG = m.mul(sumG, perElement);
  Value projection =
      m.mul(m.mul(invStd, invStd), m.mul(sumGCentered, perElement));
  Value gain = m.mul(b.reshape(bn.getScale(), perChannel), invStd);
  Value dx = m.sub(m.sub(g, meanG), m.mul(centered, projection));
  out.push_back(m.mul(gain, dx));
  out.push_back(b.reshape(dscale, {channels}));
  out.push_back(b.reshape(sumG, {channels}));
  out.append({Value(), Value()});
  return success();
}

/// Normalization over [axis, rank): dx = invStd (dxhat - mean(dxhat) -
/// xhat mean(dxhat xhat)) with dxhat = g scale; scale and bias sum their
/// gradients over the dimensions they were broadcast along.
LogicalResult layerNormGradient(Operation *op, ArrayRef<Value> grads,
                                GradientBuilder &b,
                                SmallVectorImpl<Value> &out) {
  auto ln = cast<LayerNormOp>(op);
  Value g = grads[0], x = ln.getInput(), scale = ln.getScale();
  Math m{b, elementTypeOf(x)};
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(ln.getAxis(), typeOf(x).getRank()));
  Value centered = m.sub(x, m.mean(x, axes, /*keepdims=*/true));
  Value variance = m.mean(m.mul(centered, centered), axes, /*keepdims=*/true);
  Value invStd =
      m.rsqrt(m.add(variance, m.c(ln.getEpsilon().convertToDouble())));
  Value xhat = m.mul(centered, invStd);
  Value dxhat = m.mul(g, scale);
  Value dx = m.sub(m.sub(dxhat, m.mean(dxhat, axes, /*keepdims=*/true)),
                   m.mul(xhat, m.mean(m.mul(dxhat, xhat), axes,
                                      /*keepdims=*/true)));
  out.push_back(m.mul(invStd, dx));
  out.push_back(b.unbroadcast(m.mul(g, xhat), shapeOf(scale)));
  if (Value bias = ln.getBias())
    out.push_back(b.unbroadcast(g, shapeOf(bias)));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and dropout
//===----------------------------------------------------------------------===//

/// dx = y (g - sum(g y)) along the axis.
LogicalResult softmaxGradient(Operation *op, ArrayRef<Value> grads,
                              GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto softmax = cast<SoftmaxOp>(op);
  Value g = grads[0], y = softmax.getResult();
  Math m{b, elementTypeOf(y)};
  int64_t axis = softmax.getAxis();
  out.push_back(
      m.mul(y, m.sub(g, m.sum(m.mul(g, y), {axis}, /*keepdims=*/true))));
  return success();
}

/// dx = g - exp(y) sum(g) along the axis.
LogicalResult logSoftmaxGradient(Operation *op, ArrayRef<Value> grads,
                                 GradientBuilder &b,
                                 SmallVectorImpl<Value> &out) {
  auto logSoftmax = cast<LogSoftmaxOp>(op);
  Value g = grads[0], y = logSoftmax.getResult();
  Math m{b, elementTypeOf(y)};
  int64_t axis = logSoftmax.getAxis();
  out.push_back(m.sub(g, m.mul(m.exp(y), m.sum(g, {axis}, /*keepdims=*/true))));
  return success();
}

/// dx = g mask / (1 - ratio); the mask result and the key have none.
LogicalResult dropoutGradient(Operation *op, ArrayRef<Value> grads,
                              GradientBuilder &b, SmallVectorImpl<Value> &out) {
  auto dropout = cast<DropoutOp>(op);
  Value g = grads[0];
  if (!g) {
    out.append({Value(), Value()});
    return success();
  }
  Math m{b, elementTypeOf(g)};
  double keptScale = 1.0 / (1.0 - dropout.getRatio().convertToDouble());
  Value kept = b.castTo(dropout.getMask(), m.elementType);
  out.push_back(m.mul(m.mul(g, kept), m.c(keptScale)));
  out.push_back(Value());
  return success();
}

} // namespace

void mlir::dtc::registerNNGradients(GradientRegistry &registry) {
  registry.add<MatMulOp>(matmulGradient);
  registry.add<GemmOp>(gemmGradient);
  registry.add<EinsumOp>(einsumGradient);
  registry.add<ConvOp>(convGradient);
  registry.add<MaxPoolOp>(maxPoolGradient);
  registry.add<AvgPoolOp>(avgPoolGradient);
  registry.add<BatchNormInferenceOp>(batchNormInferenceGradient);
  registry.add<BatchNormTrainingOp>(batchNormTrainingGradient);
  registry.add<LayerNormOp>(layerNormGradient);
  registry.add<SoftmaxOp>(softmaxGradient);
  registry.add<LogSoftmaxOp>(logSoftmaxGradient);
  registry.add<DropoutOp>(dropoutGradient);
}
