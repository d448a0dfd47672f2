//===- EmitNN.cpp - CPU emission rules of the NN family ------------------===//
//
// Contractions, convolution and its gradients, pooling and its gradients,
// normalizations, softmax and dropout: each op becomes one call into
// runtime/include/dtcrt/kernels/NN.h. The rules check what the kernels rely
// on (ranks, sizes, window attributes, the shapes the attributes imply), as
// the interpreter's kernels do, so that generated code never indexes out of
// bounds whatever the input.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/IR/DTGShapeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::dtc::cpu;

/// Most dimensions a kernel Shape holds (dtck::kMaxRank).
static constexpr int64_t kMaxRank = 8;

/// The static shape of tensor value `v`.
static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The element type of tensor value `v`.
static Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Checks that every operand and result of `op` fits a kernel Shape and has
/// a C++ element type.
static LogicalResult checkTensors(Operation *op, KernelEmitter &e) {
  auto check = [&](Value v) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      return op->emitError("the CPU target needs static shapes, got ")
             << v.getType();
    if (type.getRank() > kMaxRank)
      return op->emitError("the CPU target holds tensors of rank at most ")
             << kMaxRank << ", got " << type;
    if (e.cType(type.getElementType()).empty())
      return op->emitError("the CPU target has no element type for ") << type;
    return success();
  };
  for (Value v : op->getOperands())
    if (failed(check(v)))
      return failure();
  for (Value v : op->getResults())
    if (failed(check(v)))
      return failure();
  return success();
}

/// Checks that `values` share one element type.
static LogicalResult checkSameElementType(Operation *op, ValueRange values) {
  for (Value v : values)
    if (elementTypeOf(v) != elementTypeOf(values.front()))
      return op->emitError("operands and results need one element type");
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

static LogicalResult emitMatMul(Operation *op, KernelEmitter &e) {
  auto matmul = cast<dtg::MatMulOp>(op);
  Value lhs = matmul.getLhs(), rhs = matmul.getRhs(), y = matmul.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, {lhs, rhs, y})))
    return failure();
  ArrayRef<int64_t> a = shapeOf(lhs), b = shapeOf(rhs), r = shapeOf(y);
  if (a.size() < 2 || b.size() < 2 || r.size() < 2)
    return op->emitError("operands and result need rank at least 2");
  if (a.back() != b[b.size() - 2] || r[r.size() - 2] != a[a.size() - 2] ||
      r.back() != b.back())
    return op->emitError("operand shapes do not match the result");
  ArrayRef<int64_t> batch = r.drop_back(2);
  if (!dtg::isBroadcastableTo(a.drop_back(2), batch) ||
      !dtg::isBroadcastableTo(b.drop_back(2), batch))
    return op->emitError("batch dimensions do not broadcast to the result");
  e.call("matmul",
         {e.shape(lhs), e.shape(rhs), e.shape(y), e.buffer(lhs), e.buffer(rhs),
          e.buffer(y)},
         {e.cTypeOf(y)});
  return success();
}

static LogicalResult emitGemm(Operation *op, KernelEmitter &e) {
  auto gemm = cast<dtg::GemmOp>(op);
  Value a = gemm.getA(), b = gemm.getB(), c = gemm.getC(), y = gemm.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, op->getOperands())) ||
      failed(checkSameElementType(op, {a, y})))
    return failure();
  ArrayRef<int64_t> sa = shapeOf(a), sb = shapeOf(b), sy = shapeOf(y);
  if (sa.size() != 2 || sb.size() != 2 || sy.size() != 2)
    return op->emitError("A, B and the result must be matrices");
  bool transA = gemm.getTransA(), transB = gemm.getTransB();
  int64_t m = sa[transA ? 1 : 0], k = sa[transA ? 0 : 1];
  int64_t n = sb[transB ? 0 : 1];
  if (sb[transB ? 1 : 0] != k || sy[0] != m || sy[1] != n)
    return op->emitError("operand shapes do not match the result");
  if (c && !dtg::isBroadcastableTo(shapeOf(c), sy))
    return op->emitError("C does not broadcast to the result");
  SmallVector<std::string> args = {
      e.shape(a),
      e.shape(b),
      c ? e.shape(c) : e.shapeOf({}),
      e.buffer(a),
      e.buffer(b),
      c ? e.buffer(c) : "nullptr",
      KernelEmitter::literal(gemm.getAlpha().convertToDouble()),
      KernelEmitter::literal(gemm.getBeta().convertToDouble()),
      KernelEmitter::literal(transA),
      KernelEmitter::literal(transB),
      e.buffer(y)};
  // CUDA: the bias gradient this product computes too (BiasGradFolds.h).
  if (const BiasGradFold *fold = e.biasGradFold(op))
    args.push_back(biasGradEpilogue(*fold, e.cTypeOf(y),
                                    e.buffer(fold->reduce->getResult(0))));
  e.call("gemm", args, {e.cTypeOf(y)});
  return success();
}

/// Einsum: the letters (the output's first, then the summed ones in order
/// of appearance), their sizes (a 1 broadcasts) and each input's stride per
/// letter, exactly as the interpreter reads the equation.
static LogicalResult emitEinsum(Operation *op, KernelEmitter &e) {
  auto einsum = cast<dtg::EinsumOp>(op);
  Value y = einsum.getResult();
  ValueRange inputs = einsum.getInputs();
  if (inputs.empty())
    return op->emitError("einsum needs at least one operand");
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, op->getOperands())))
    return failure();
  if (elementTypeOf(inputs.front()) != elementTypeOf(y))
    return op->emitError("operands and result need one element type");
  StringRef equation = einsum.getEquation();
  size_t arrow = equation.find("->");
  if (arrow == StringRef::npos)
    return op->emitError("equation '") << equation << "' has no '->'";
  StringRef outputTerm = equation.drop_front(arrow + 2);
  SmallVector<StringRef> terms;
  equation.take_front(arrow).split(terms, ',');
  if (terms.size() != inputs.size())
    return op->emitError("equation has ")
           << terms.size() << " terms for " << inputs.size() << " operands";

  SmallVector<char> letters;
  int slot[256];
  std::fill(std::begin(slot), std::end(slot), -1);
  auto isLetter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  auto addLetter = [&](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (slot[u] < 0) {
      slot[u] = static_cast<int>(letters.size());
      letters.push_back(c);
    }
    return slot[u];
  };
  for (char c : outputTerm) {
    if (!isLetter(c))
      return op->emitError("equation '") << equation << "' has a non-letter";
    if (slot[static_cast<unsigned char>(c)] >= 0)
      return op->emitError("output letter '") << c << "' appears twice";
    addLetter(c);
  }
  size_t numOutput = letters.size();
  ArrayRef<int64_t> resultShape = shapeOf(y);
  if (numOutput != resultShape.size())
    return op->emitError("output term '")
           << outputTerm << "' does not match the result rank";
  SmallVector<int64_t> sizes(numOutput, 1);
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (term.size() != shape.size())
      return op->emitError("term '")
             << term << "' does not match rank " << shape.size();
    for (auto [d, c] : llvm::enumerate(term)) {
      if (!isLetter(c))
        return op->emitError("equation '") << equation << "' has a non-letter";
      int s = addLetter(c);
      if (static_cast<size_t>(s) >= sizes.size())
        sizes.push_back(1);
      if (sizes[s] == 1)
        sizes[s] = shape[d];
      else if (shape[d] != 1 && shape[d] != sizes[s])
        return op->emitError("sizes of '") << c << "' disagree";
    }
  }
  for (size_t s = 0; s < numOutput; ++s)
    if (resultShape[s] != sizes[s])
      return op->emitError("result dimension ")
             << s << " is " << resultShape[s] << ", expected " << sizes[s];

  SmallVector<std::string> buffers, strides;
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    ArrayRef<int64_t> shape = shapeOf(input);
    SmallVector<int64_t> letterStrides(letters.size(), 0);
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] != 1)
        letterStrides[slot[static_cast<unsigned char>(term[d])]] += stride;
      stride *= shape[d];
    }
    buffers.push_back(e.buffer(input));
    strides.push_back(e.i64Array(letterStrides));
  }
  e.call("einsum",
         {KernelEmitter::literal(static_cast<int64_t>(letters.size())),
          KernelEmitter::literal(static_cast<int64_t>(numOutput)),
          e.i64Array(sizes), "{" + llvm::join(buffers, ", ") + "}",
          "{" + llvm::join(strides, ", ") + "}", e.buffer(y)},
         {e.cTypeOf(y), std::to_string(inputs.size())});
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Checks a window of `kernel` over the spatial dimensions of `input`
/// ([N, C, D...]) against the spatial dimensions of `output` ([N, F, O...]),
/// as the interpreter's checkWindow does.
static LogicalResult checkWindow(Operation *op, ArrayRef<int64_t> input,
                                 ArrayRef<int64_t> output,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> pads,
                                 ArrayRef<int64_t> dilations, bool ceilMode) {
  int64_t k = static_cast<int64_t>(kernel.size());
  if (input.size() < 3 || static_cast<int64_t>(input.size()) != k + 2 ||
      output.size() != input.size())
    return op->emitError("operands need rank ")
           << k + 2 << " ([N, C] and one dimension per kernel entry)";
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k ||
      static_cast<int64_t>(pads.size()) != 2 * k)
    return op->emitError("window attributes need ")
           << k << " entries (pads " << 2 * k << ")";
  for (int64_t d = 0; d < k; ++d) {
    if (strides[d] <= 0 || dilations[d] <= 0 || kernel[d] <= 0 || pads[d] < 0 ||
        pads[k + d] < 0)
      return op->emitError("bad window attributes in spatial dimension ") << d;
    int64_t expected =
        dtg::windowOutputSize(input[2 + d], kernel[d], strides[d], dilations[d],
                              pads[d], pads[k + d], ceilMode);
    if (output[2 + d] != expected)
      return op->emitError("result has ")
             << output[2 + d] << " positions in spatial dimension " << d
             << ", expected " << expected;
  }
  return success();
}

/// Checks the shapes of a convolution of `input` [N, C, D...] with `weight`
/// [F, C/group, K...] into `output` [N, F, O...].
static LogicalResult checkConvShapes(Operation *op, ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> weight,
                                     ArrayRef<int64_t> output, int64_t group) {
  if (input.size() < 3 || weight.size() != input.size() ||
      output.size() != input.size())
    return op->emitError("input, weight and output need the same rank >= 3");
  if (group <= 0 || weight[0] % group != 0 || input[1] % group != 0 ||
      weight[1] != input[1] / group || output[0] != input[0] ||
      output[1] != weight[0])
    return op->emitError("operand shapes do not match the result");
  return success();
}

/// The arguments shared by the convolution kernels after the buffers.
template <typename OpTy>
static SmallVector<std::string> convAttributes(OpTy op, KernelEmitter &e) {
  return {e.i64Array(op.getStrides()), e.i64Array(op.getPads()),
          e.i64Array(op.getDilations()),
          KernelEmitter::literal(static_cast<int64_t>(op.getGroup()))};
}

static LogicalResult emitConv(Operation *op, KernelEmitter &e) {
  auto conv = cast<dtg::ConvOp>(op);
  Value x = conv.getInput(), w = conv.getWeight(), bias = conv.getBias();
  Value y = conv.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, op->getOperands())) ||
      failed(checkSameElementType(op, {x, y})))
    return failure();
  int64_t group = static_cast<int64_t>(conv.getGroup());
  if (failed(checkConvShapes(op, shapeOf(x), shapeOf(w), shapeOf(y), group)) ||
      failed(checkWindow(op, shapeOf(x), shapeOf(y), shapeOf(w).drop_front(2),
                         conv.getStrides(), conv.getPads(), conv.getDilations(),
                         /*ceilMode=*/false)))
    return failure();
  if (bias && dtg::numElements(shapeOf(bias)) != shapeOf(w)[0])
    return op->emitError("bias needs one entry per filter");
  SmallVector<std::string> args{e.shape(x),  e.shape(w),
                                e.shape(y),  e.buffer(x),
                                e.buffer(w), bias ? e.buffer(bias) : "nullptr"};
  llvm::append_range(args, convAttributes(conv, e));
  args.push_back(e.buffer(y));
  e.call("conv", args, {e.cTypeOf(y)});
  return success();
}

static LogicalResult emitConvInputGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<dtg::ConvInputGradOp>(op);
  Value g = grad.getGrad(), w = grad.getWeight(), dx = grad.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, {g, w, dx})))
    return failure();
  if (failed(checkConvShapes(op, shapeOf(dx), shapeOf(w), shapeOf(g),
                             static_cast<int64_t>(grad.getGroup()))) ||
      failed(checkWindow(op, shapeOf(dx), shapeOf(g), shapeOf(w).drop_front(2),
                         grad.getStrides(), grad.getPads(), grad.getDilations(),
                         /*ceilMode=*/false)))
    return failure();
  SmallVector<std::string> args{e.shape(g), e.shape(w), e.shape(dx),
                                e.buffer(g), e.buffer(w)};
  llvm::append_range(args, convAttributes(grad, e));
  args.push_back(e.buffer(dx));
  e.call("convInputGrad", args, {e.cTypeOf(dx)});
  return success();
}

static LogicalResult emitConvWeightGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<dtg::ConvWeightGradOp>(op);
  Value g = grad.getGrad(), x = grad.getInput(), dw = grad.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, {g, x, dw})))
    return failure();
  if (failed(checkConvShapes(op, shapeOf(x), shapeOf(dw), shapeOf(g),
                             static_cast<int64_t>(grad.getGroup()))) ||
      failed(checkWindow(op, shapeOf(x), shapeOf(g), shapeOf(dw).drop_front(2),
                         grad.getStrides(), grad.getPads(), grad.getDilations(),
                         /*ceilMode=*/false)))
    return failure();
  SmallVector<std::string> args{e.shape(g), e.shape(x), e.shape(dw),
                                e.buffer(g), e.buffer(x)};
  llvm::append_range(args, convAttributes(grad, e));
  args.push_back(e.buffer(dw));
  e.call("convWeightGrad", args, {e.cTypeOf(dw)});
  return success();
}

/// Checks a pooling from `input` to `output`: the same [N, C], the window.
template <typename OpTy>
static LogicalResult checkPool(OpTy pool, ArrayRef<int64_t> input,
                               ArrayRef<int64_t> output) {
  Operation *op = pool.getOperation();
  if (input.size() < 3 || output.size() != input.size() ||
      input[0] != output[0] || input[1] != output[1])
    return op->emitError("pooled shapes do not match: ")
           << input.size() << "-D input, " << output.size() << "-D output";
  return checkWindow(op, input, output, pool.getKernel(), pool.getStrides(),
                     pool.getPads(), pool.getDilations(), pool.getCeilMode());
}

/// The window arguments of the pooling kernels.
template <typename OpTy>
static SmallVector<std::string> poolAttributes(OpTy pool, KernelEmitter &e) {
  return {e.i64Array(pool.getKernel()), e.i64Array(pool.getStrides()),
          e.i64Array(pool.getPads()), e.i64Array(pool.getDilations())};
}

static LogicalResult emitMaxPool(Operation *op, KernelEmitter &e) {
  auto pool = cast<dtg::MaxPoolOp>(op);
  Value x = pool.getOperand(), y = pool.getResult();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})) ||
      failed(checkPool(pool, shapeOf(x), shapeOf(y))))
    return failure();
  SmallVector<std::string> args{e.shape(x), e.shape(y), e.buffer(x)};
  llvm::append_range(args, poolAttributes(pool, e));
  args.push_back(e.buffer(y));
  e.call("maxPool", args, {e.cTypeOf(y)});
  return success();
}

static LogicalResult emitAvgPool(Operation *op, KernelEmitter &e) {
  auto pool = cast<dtg::AvgPoolOp>(op);
  Value x = pool.getOperand(), y = pool.getResult();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})) ||
      failed(checkPool(pool, shapeOf(x), shapeOf(y))))
    return failure();
  SmallVector<std::string> args{e.shape(x), e.shape(y), e.buffer(x)};
  llvm::append_range(args, poolAttributes(pool, e));
  args.push_back(KernelEmitter::literal(pool.getCountIncludePad()));
  args.push_back(e.buffer(y));
  e.call("avgPool", args, {e.cTypeOf(y)});
  return success();
}

static LogicalResult emitMaxPoolGrad(Operation *op, KernelEmitter &e) {
  auto pool = cast<dtg::MaxPoolGradOp>(op);
  Value g = pool.getGrad(), x = pool.getOperand(), dx = pool.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, {g, x, dx})))
    return failure();
  if (shapeOf(x) != shapeOf(dx))
    return op->emitError("result shape differs from the pooled operand's");
  if (failed(checkPool(pool, shapeOf(x), shapeOf(g))))
    return failure();
  SmallVector<std::string> args{e.shape(g), e.shape(x), e.buffer(g),
                                e.buffer(x)};
  llvm::append_range(args, poolAttributes(pool, e));
  args.push_back(e.buffer(dx));
  e.call("maxPoolGrad", args, {e.cTypeOf(dx)});
  return success();
}

static LogicalResult emitAvgPoolGrad(Operation *op, KernelEmitter &e) {
  auto pool = cast<dtg::AvgPoolGradOp>(op);
  Value g = pool.getGrad(), dx = pool.getResult();
  if (failed(checkTensors(op, e)) ||
      failed(checkSameElementType(op, {g, dx})) ||
      failed(checkPool(pool, shapeOf(dx), shapeOf(g))))
    return failure();
  SmallVector<std::string> args{e.shape(g), e.shape(dx), e.buffer(g)};
  llvm::append_range(args, poolAttributes(pool, e));
  args.push_back(KernelEmitter::literal(pool.getCountIncludePad()));
  args.push_back(e.buffer(dx));
  e.call("avgPoolGrad", args, {e.cTypeOf(dx)});
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, dropout
//===----------------------------------------------------------------------===//

/// Checks that `x` is [N, C, ...] and each of `params` has C elements.
static LogicalResult checkChannels(Operation *op, Value x, ValueRange params) {
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() < 2)
    return op->emitError("input needs rank at least 2 ([N, C, ...])");
  for (Value p : params)
    if (dtg::numElements(shapeOf(p)) != shape[1])
      return op->emitError("per-channel operands need ")
             << shape[1] << " elements";
  return success();
}

/// The template arguments of the batch-norm kernels: x's element type, then
/// the four per-channel operands' types.
static SmallVector<std::string> batchNormTypes(Operation *op,
                                               KernelEmitter &e) {
  SmallVector<std::string> types;
  for (Value v : op->getOperands())
    types.push_back(e.cTypeOf(v));
  return types;
}

static LogicalResult emitBatchNormInference(Operation *op, KernelEmitter &e) {
  auto bn = cast<dtg::BatchNormInferenceOp>(op);
  Value x = bn.getInput(), y = bn.getResult();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})) ||
      failed(checkChannels(op, x, op->getOperands().drop_front())))
    return failure();
  if (shapeOf(x) != shapeOf(y))
    return op->emitError("operand shapes do not match the result");
  e.call(
      "batchNormInference",
      {e.shape(x), e.buffer(x), e.buffer(bn.getScale()), e.buffer(bn.getBias()),
       e.buffer(bn.getMean()), e.buffer(bn.getVariance()),
       KernelEmitter::literal(bn.getEpsilon().convertToDouble()), e.buffer(y)},
      batchNormTypes(op, e));
  return success();
}

static LogicalResult emitBatchNormTraining(Operation *op, KernelEmitter &e) {
  auto bn = cast<dtg::BatchNormTrainingOp>(op);
  Value x = bn.getInput(), y = bn.getResult();
  Value runningMean = bn.getRunningMean(), runningVar = bn.getRunningVar();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})) ||
      failed(checkSameElementType(op, {runningMean, bn.getNewRunningMean()})) ||
      failed(checkSameElementType(op, {runningVar, bn.getNewRunningVar()})) ||
      failed(checkChannels(op, x, op->getOperands().drop_front())))
    return failure();
  if (shapeOf(x) != shapeOf(y) ||
      dtg::numElements(shapeOf(bn.getNewRunningMean())) != shapeOf(x)[1] ||
      dtg::numElements(shapeOf(bn.getNewRunningVar())) != shapeOf(x)[1])
    return op->emitError("operand shapes do not match the results");
  bool unbiased = bn.getUnbiasedRunningVar();
  int64_t count = shapeOf(x)[0] * dtg::numElements(shapeOf(x).drop_front(2));
  if (count < (unbiased ? 2 : 1))
    return op->emitError("batch statistics need more than one value per "
                         "channel, got ")
           << count;
  e.call("batchNormTraining",
         {e.shape(x), e.buffer(x), e.buffer(bn.getScale()),
          e.buffer(bn.getBias()), e.buffer(runningMean), e.buffer(runningVar),
          KernelEmitter::literal(bn.getEpsilon().convertToDouble()),
          KernelEmitter::literal(bn.getMomentum().convertToDouble()),
          KernelEmitter::literal(unbiased), e.buffer(y),
          e.buffer(bn.getNewRunningMean()), e.buffer(bn.getNewRunningVar())},
         batchNormTypes(op, e));
  return success();
}

static LogicalResult emitLayerNorm(Operation *op, KernelEmitter &e) {
  auto ln = cast<dtg::LayerNormOp>(op);
  Value x = ln.getInput(), scale = ln.getScale(), bias = ln.getBias();
  Value y = ln.getResult();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})))
    return failure();
  int64_t axis = ln.getAxis();
  ArrayRef<int64_t> shape = shapeOf(x);
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return op->emitError("axis ") << axis << " is out of range";
  ArrayRef<int64_t> normalized = shape.drop_front(axis);
  if (shapeOf(y) != shape ||
      !dtg::isBroadcastableTo(shapeOf(scale), normalized) ||
      (bias && !dtg::isBroadcastableTo(shapeOf(bias), normalized)))
    return op->emitError("scale or bias does not broadcast to the normalized "
                         "shape");
  e.call("layerNorm",
         {e.shape(x), e.shape(scale), bias ? e.shape(bias) : e.shape(scale),
          e.buffer(x), e.buffer(scale), bias ? e.buffer(bias) : "nullptr",
          KernelEmitter::literal(axis),
          KernelEmitter::literal(ln.getEpsilon().convertToDouble()),
          e.buffer(y)},
         {e.cTypeOf(x), e.cTypeOf(scale), e.cTypeOf(bias ? bias : scale)});
  return success();
}

/// Softmax and log-softmax: the same kernel shape, `kernel` named.
template <typename OpTy>
static LogicalResult emitSoftmax(Operation *op, KernelEmitter &e,
                                 StringRef kernel) {
  auto softmax = cast<OpTy>(op);
  Value x = softmax.getOperand(), y = softmax.getResult();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})))
    return failure();
  int64_t axis = softmax.getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(shapeOf(x).size()))
    return op->emitError("axis ") << axis << " is out of range";
  if (shapeOf(x) != shapeOf(y))
    return op->emitError("result shape differs from the operand's");
  e.call(kernel,
         {e.shape(x), e.buffer(x), KernelEmitter::literal(axis), e.buffer(y)},
         {e.cTypeOf(y)});
  return success();
}

static LogicalResult emitDropout(Operation *op, KernelEmitter &e) {
  auto dropout = cast<dtg::DropoutOp>(op);
  Value x = dropout.getOperand(), key = dropout.getKey();
  Value y = dropout.getResult(), mask = dropout.getMask();
  if (failed(checkTensors(op, e)) || failed(checkSameElementType(op, {x, y})))
    return failure();
  double ratio = dropout.getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return op->emitError("ratio ") << ratio << " is outside [0, 1)";
  int64_t keyLength = dtg::numElements(shapeOf(key));
  std::optional<ArrayRef<int64_t>> whole = dropout.getBlockOf();
  int64_t rank = int64_t(shapeOf(x).size());
  if ((whole ? keyLength != 3 + rank : (keyLength != 2 && keyLength != 3)) ||
      !elementTypeOf(key).isInteger(64))
    return op->emitError("key must hold two or three i64 (seed, step[, "
                         "element offset]), and the block's start with "
                         "block_of");
  if (shapeOf(x) != shapeOf(y) || shapeOf(x) != shapeOf(mask) ||
      !elementTypeOf(mask).isInteger(1))
    return op->emitError("result and mask need the operand's shape");
  if (whole) {
    e.call("dropoutBlock",
           {e.shape(x), e.buffer(x), e.buffer(key), e.shapeOf(*whole),
            KernelEmitter::literal(ratio),
            KernelEmitter::literal(static_cast<int64_t>(dropout.getStream())),
            e.buffer(y), e.buffer(mask)},
           {e.cTypeOf(y)});
    return success();
  }
  e.call("dropout",
         {e.shape(x), e.buffer(x), e.buffer(key),
          KernelEmitter::literal(keyLength), KernelEmitter::literal(ratio),
          KernelEmitter::literal(static_cast<int64_t>(dropout.getStream())),
          e.buffer(y), e.buffer(mask)},
         {e.cTypeOf(y)});
  return success();
}

void mlir::dtc::cpu::registerNNEmitters(EmitRegistry &registry) {
  registry.add<dtg::MatMulOp>(emitMatMul);
  registry.add<dtg::GemmOp>(emitGemm);
  registry.add<dtg::EinsumOp>(emitEinsum);
  registry.add<dtg::ConvOp>(emitConv);
  registry.add<dtg::ConvInputGradOp>(emitConvInputGrad);
  registry.add<dtg::ConvWeightGradOp>(emitConvWeightGrad);
  registry.add<dtg::MaxPoolOp>(emitMaxPool);
  registry.add<dtg::AvgPoolOp>(emitAvgPool);
  registry.add<dtg::MaxPoolGradOp>(emitMaxPoolGrad);
  registry.add<dtg::AvgPoolGradOp>(emitAvgPoolGrad);
  registry.add<dtg::BatchNormInferenceOp>(emitBatchNormInference);
  registry.add<dtg::BatchNormTrainingOp>(emitBatchNormTraining);
  registry.add<dtg::LayerNormOp>(emitLayerNorm);
  registry.add<dtg::SoftmaxOp>([](Operation *op, KernelEmitter &e) {
    return emitSoftmax<dtg::SoftmaxOp>(op, e, "softmax");
  });
  registry.add<dtg::LogSoftmaxOp>([](Operation *op, KernelEmitter &e) {
    return emitSoftmax<dtg::LogSoftmaxOp>(op, e, "logSoftmax");
  });
  registry.add<dtg::DropoutOp>(emitDropout);
}
