//===- MixedPrecision.cpp - 16-bit compute, fp32 master weights ----------===//
//
// Rewrites the training step for bf16/fp16 (see Passes.td): which ops run in
// 16 bits, the casts between, the reverse sweep rebuilt over the 16-bit
// forward, fp32 master weights as optimizer state, and fp16 loss scaling.
//
//===----------------------------------------------------------------------===//

#include "passes/MixedPrecision/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Tensor.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Training/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <cstring>

#define DEBUG_TYPE "dtc-mixed-precision"

namespace mlir::dtc {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "passes/MixedPrecision/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kName = "dtg.name", kRole = "dtg.role",
                        kDefault = "dtg.default", kBackward = "dtg.backward",
                        kInitial = "dtg.initial", kTrainable = "dtg.trainable";

/// Where an op computes under mixed precision.
enum class Policy {
  /// 16-bit operands and results (matrix products, elementwise).
  Low,
  /// fp32 operands and results (statistics, softmax, losses, reductions).
  Fp32,
  /// The operands' type, fp32 if they mix (shape ops, comparisons).
  Follow,
};

Policy policyOf(Operation *op) {
  if (isa<dtg::MatMulOp, dtg::GemmOp, dtg::EinsumOp, dtg::ConvOp,
          dtg::MaxPoolOp, dtg::AvgPoolOp, dtg::DropoutOp, dtg::GeluOp,
          dtg::ReluOp, dtg::LeakyReluOp, dtg::EluOp, dtg::CeluOp, dtg::SeluOp,
          dtg::HardSigmoidOp, dtg::ThresholdedReluOp, dtg::SigmoidOp,
          dtg::TanhOp, dtg::NegOp, dtg::AbsOp, dtg::SignOp, dtg::ClipOp,
          dtg::AddOp, dtg::SubOp, dtg::MulOp, dtg::DivOp, dtg::MaxOp,
          dtg::MinOp, dtg::ModOp, dtg::WhereOp, dtg::SinOp, dtg::CosOp,
          dtg::ErfOp, dtg::FloorOp, dtg::CeilOp, dtg::RoundOp, dtg::SoftsignOp>(
          op))
    return Policy::Low;
  if (isa<dtg::LayerNormOp, dtg::BatchNormTrainingOp, dtg::BatchNormInferenceOp,
          dtg::SoftmaxOp, dtg::LogSoftmaxOp, dtg::NllLossOp, dtg::ReduceSumOp,
          dtg::ReduceMeanOp, dtg::ReduceMaxOp, dtg::ReduceMinOp,
          dtg::ReduceProdOp, dtg::ReduceLogSumExpOp, dtg::CumSumOp, dtg::ExpOp,
          dtg::LogOp, dtg::PowOp, dtg::SqrtOp, dtg::RsqrtOp, dtg::ReciprocalOp,
          dtg::SoftplusOp, dtg::TanOp, dtg::AsinOp, dtg::AcosOp, dtg::AtanOp,
          dtg::SinhOp, dtg::CoshOp, dtg::AsinhOp, dtg::AcoshOp, dtg::AtanhOp>(
          op))
    return Policy::Fp32;
  return Policy::Follow;
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
Type elementTypeOf(Value v) { return tensorType(v).getElementType(); }
RankedTensorType withElement(Value v, Type element) {
  return RankedTensorType::get(tensorType(v).getShape(), element);
}

StringRef stringAttr(DictionaryAttr dict, StringRef name) {
  auto value = dict ? dict.getAs<StringAttr>(name) : StringAttr();
  return value ? value.getValue() : StringRef();
}
StringRef argString(func::FuncOp func, unsigned i, StringRef attr) {
  auto value = func.getArgAttrOfType<StringAttr>(i, attr);
  return value ? value.getValue() : StringRef();
}

DictionaryAttr makeAttrs(MLIRContext *ctx, StringRef name, StringRef role,
                         Attribute defaultValue = {}, Attribute initial = {}) {
  NamedAttrList list;
  list.append(kName, StringAttr::get(ctx, name));
  list.append(kRole, StringAttr::get(ctx, role));
  if (defaultValue)
    list.append(kDefault, defaultValue);
  if (initial)
    list.append(kInitial, initial);
  return list.getDictionary(ctx);
}

/// The bits of `f` rounded to `semantics` (nearest even).
uint16_t roundToHalfBits(float f, const llvm::fltSemantics &semantics) {
  APFloat v(f);
  bool losesInfo;
  v.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return uint16_t(v.bitcastToAPInt().getZExtValue());
}

/// The bfloat16 bits of `f` rounded to nearest even: the upper half of its
/// bits, plus a carry from the lower half (what APFloat computes, without
/// its per-element cost); NaNs and infinities go through APFloat.
uint16_t roundToBF16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u)
    return roundToHalfBits(f, APFloat::BFloat());
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// `initial` rounded to `element` (nearest even): a resource blob for a
/// resource of f32 (a model's weights from the importer, converted in one
/// pass without an attribute per element), else a dense attribute.
FailureOr<ElementsAttr> roundInitial(ElementsAttr initial, Type element) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(initial)) {
    auto type = cast<RankedTensorType>(resource.getType());
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    int64_t n = type.getNumElements();
    if (!blob || !type.getElementType().isF32() ||
        !(element.isBF16() || element.isF16()) ||
        static_cast<int64_t>(blob->getData().size()) != 4 * n)
      return failure();
    const char *in = blob->getData().data();
    AsmResourceBlob out =
        HeapAsmResourceBlob::allocate(2 * n, 2, /*dataIsMutable=*/true);
    char *o = out.getMutableData().data();
    for (int64_t k = 0; k < n; ++k) {
      float f;
      std::memcpy(&f, in + 4 * k, 4);
      uint16_t bits = element.isBF16()
                          ? roundToBF16Bits(f)
                          : roundToHalfBits(f, APFloat::IEEEhalf());
      std::memcpy(o + 2 * k, &bits, 2);
    }
    return ElementsAttr(DenseResourceElementsAttr::get(
        type.clone(element), "mixed_precision", std::move(out)));
  }
  FailureOr<dtg::interp::Tensor> t = dtg::interp::tensorFromAttr(initial);
  if (failed(t) || !t->isFloat())
    return failure();
  const llvm::fltSemantics &semantics =
      cast<FloatType>(element).getFloatSemantics();
  SmallVector<APFloat> values;
  values.reserve(t->numElements());
  for (double d : t->f) {
    APFloat v(d);
    bool losesInfo;
    v.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(v);
  }
  return ElementsAttr(
      DenseElementsAttr::get(RankedTensorType::get(t->shape, element), values));
}

/// Gives argument `i` of `func` the element type `element`, its initial
/// value (if any) rounded to it.
LogicalResult retypeArgument(func::FuncOp func, unsigned i, Type element) {
  BlockArgument arg = func.getArgument(i);
  arg.setType(withElement(arg, element));
  auto initial = func.getArgAttrOfType<ElementsAttr>(i, kInitial);
  if (!initial)
    return success();
  FailureOr<ElementsAttr> rounded = roundInitial(initial, element);
  if (failed(rounded))
    return func.emitError("cannot round the initial value of '")
           << argString(func, i, kName) << "' to " << element;
  func.setArgAttr(i, kInitial, *rounded);
  return success();
}

/// One `dtg.cast` per (value, element type), placed right after the value's
/// definition so that it dominates every use.
class CastCache {
public:
  Value get(Value value, Type element) {
    if (elementTypeOf(value) == element)
      return value;
    Value &cached = casts[{value, element}];
    if (cached)
      return cached;
    OpBuilder builder(value.getContext());
    if (auto arg = dyn_cast<BlockArgument>(value))
      builder.setInsertionPointToStart(arg.getOwner());
    else
      builder.setInsertionPointAfter(value.getDefiningOp());
    cached = builder.create<dtg::CastOp>(value.getLoc(),
                                         withElement(value, element), value);
    return cached;
  }

private:
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

/// Applies the precision policy to the ops of `func`'s body (all of them:
/// call it on a forward without its reverse sweep). Block arguments keep the
/// types they have; results of 16-bit ops become 16-bit.
void lowerForward(func::FuncOp func, Type low) {
  Block &body = func.getBody().front();
  MLIRContext *ctx = func.getContext();
  Type f32 = Float32Type::get(ctx);
  CastCache casts;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (isa<dtg::CastOp, dtg::ConstantOp>(op) || op->getNumRegions() != 0)
      continue;
    SmallVector<unsigned> floats;
    bool other = false;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      Type e = type.getElementType();
      if (e == f32 || e == low)
        floats.push_back(operand.getOperandNumber());
      else
        other = true;
    }
    // Ops on other float types (f64 bookkeeping) are left as they are.
    if (floats.empty() || other)
      continue;
    Type target;
    switch (policyOf(op)) {
    case Policy::Low:
      target = low;
      break;
    case Policy::Fp32:
      target = f32;
      break;
    case Policy::Follow:
      target = elementTypeOf(op->getOperand(floats.front()));
      for (unsigned i : floats)
        if (elementTypeOf(op->getOperand(i)) != target)
          target = f32;
      break;
    }
    for (unsigned i : floats)
      op->setOperand(i, casts.get(op->getOperand(i), target));
    if (target == f32)
      continue;
    for (Value result : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType());
          type && type.getElementType() == f32)
        result.setType(withElement(result, target));
  }
}

/// Softmax outputs are kept for the backward in 16 bits where the forward
/// casts them so anyway (for their product with the values): the backward
/// reads the 16-bit copy, widened, instead of the fp32 output, which then
/// dies within the forward. Megatron-LM's fused softmax keeps its 16-bit
/// output alone (Korthikanti et al.'s 2as^2b bytes a layer); keeping both
/// would triple them, the largest activation of long sequences. The
/// gradient differs from the fp32 output's by the 16-bit rounding of
/// probabilities in [0, 1].
void saveSoftmaxIn16Bits(Block &body, Type low) {
  MLIRContext *ctx = low.getContext();
  for (Operation &op : body.without_terminator()) {
    auto softmax = dyn_cast<dtg::SoftmaxOp>(op);
    if (!softmax || op.hasAttr(kBackward) ||
        !elementTypeOf(softmax.getResult()).isF32())
      continue;
    Value y = softmax.getResult();
    dtg::CastOp narrow;
    for (Operation *user : y.getUsers())
      if (auto cast = dyn_cast<dtg::CastOp>(user);
          cast && !cast->hasAttr(kBackward) &&
          elementTypeOf(cast.getResult()) == low) {
        narrow = cast;
        break;
      }
    if (!narrow)
      continue;
    SmallVector<OpOperand *> uses;
    Operation *first = nullptr;
    for (OpOperand &use : y.getUses()) {
      Operation *user = use.getOwner();
      if (!user->hasAttr(kBackward))
        continue;
      uses.push_back(&use);
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
    if (uses.empty())
      continue;
    OpBuilder builder(first);
    Value widened = builder.create<dtg::CastOp>(softmax.getLoc(), y.getType(),
                                                narrow.getResult());
    widened.getDefiningOp()->setAttr(kBackward, UnitAttr::get(ctx));
    for (OpOperand *use : uses)
      use->set(widened);
  }
}

struct MixedPrecisionPass
    : public dtc::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using MixedPrecisionPassBase::MixedPrecisionPassBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
  LogicalResult rewriteMicroStep(func::FuncOp micro, ArrayRef<unsigned> low);
  LogicalResult rewriteEvalMicroStep(func::FuncOp eval, ArrayRef<unsigned> low);
  LogicalResult rewriteTrainStep(func::FuncOp train, func::FuncOp evalStep);
  LogicalResult addCountTransfers(func::FuncOp train, func::FuncOp micro);

  Type lowType;
  bool fp16 = false;
  /// fp16 in a pipeline stage: the @micro_step arguments that receive a
  /// micro-batch's loss count from the next stage, and the results that
  /// send it on to the previous one, each with the model chunk whose
  /// cotangents (or gradients of activations) it travels with.
  struct CountTransfer {
    unsigned index;
    int64_t chunk;
    /// The cotangent arguments, or gradient results, of that chunk.
    SmallVector<unsigned> with;
  };
  SmallVector<CountTransfer> countArgs, countResults;
};
} // namespace

/// The arguments of `callee` fed by trainable parameters of the caller
/// (arguments of `caller` with dtg.trainable), from its first call there.
static SmallVector<unsigned> trainableOperands(func::FuncOp caller,
                                               func::FuncOp callee) {
  SmallVector<unsigned> result;
  func::CallOp call;
  caller.walk([&](func::CallOp c) {
    if (!call && c.getCallee() == callee.getSymName())
      call = c;
  });
  if (!call)
    return result;
  for (auto [i, operand] : llvm::enumerate(call.getOperands()))
    if (auto arg = dyn_cast<BlockArgument>(operand);
        arg && arg.getOwner()->getParentOp() == caller &&
        caller.getArgAttr(arg.getArgNumber(), kTrainable))
      result.push_back(i);
  return result;
}

/// The model chunk (dtc.chunk, under the interleaved schedule) that `v` of
/// `func`'s body is computed in: that of the nearest op or argument marked
/// with one, walking back from it (ops with no operands, constants that any
/// chunk may share, do not count); 0 where none is.
static int64_t chunkOf(func::FuncOp func, Value v) {
  SmallVector<Value> queue = {v};
  llvm::DenseSet<Value> seen = {v};
  for (size_t next = 0; next < queue.size(); ++next) {
    Value x = queue[next];
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner()->getParentOp() == func)
        if (auto c = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                        "dtc.chunk"))
          return c.getInt();
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (auto c = def->getAttrOfType<IntegerAttr>("dtc.chunk");
        c && def->getNumOperands() != 0)
      return c.getInt();
    for (Value operand : def->getOperands())
      if (seen.insert(operand).second)
        queue.push_back(operand);
  }
  return 0;
}

LogicalResult MixedPrecisionPass::rewriteMicroStep(func::FuncOp micro,
                                                   ArrayRef<unsigned> low) {
  MLIRContext *ctx = &getContext();
  Block &body = micro.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> resultTypes(micro.getResultTypes());
  size_t numGrads = low.size();
  if (results.size() < 2 + numGrads)
    return micro.emitError("@micro_step returns ")
           << results.size() << " values, expected the loss sum, the count "
           << "and " << numGrads << " gradients";
  for (auto [k, i] : llvm::enumerate(low))
    if (results[2 + k].getType() != body.getArgument(i).getType())
      return micro.emitError("@micro_step result #")
             << 2 + k << " is not the gradient of argument #" << i;

  // Drop the reverse sweep (rebuilt below over the 16-bit forward).
  OpBuilder builder(ret);
  builder.create<func::ReturnOp>(ret.getLoc());
  ret.erase();
  SmallVector<Operation *> backward;
  for (Operation &op : body.without_terminator())
    if (op.hasAttr(kBackward))
      backward.push_back(&op);
  for (Operation *op : llvm::reverse(backward)) {
    if (!op->use_empty())
      return op->emitError("a forward value of @micro_step is computed in "
                           "the reverse sweep");
    op->erase();
  }

  for (unsigned i : low)
    if (failed(retypeArgument(micro, i, lowType)))
      return failure();
  lowerForward(micro, lowType);

  llvm::DenseSet<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.insert(&op);
  Value sum = results[0];
  Location loc = micro.getLoc();
  builder.setInsertionPoint(body.getTerminator());
  GradientBuilder b(builder, loc);
  // fp16: the backward is seeded with scale / count, the scale applying to
  // the micro-batch's mean loss as PyTorch's GradScaler's does (the loss is
  // a sum here), and the gradients are multiplied back by count / scale.
  Type f32 = b.builder.getF32Type();
  auto scalarF32 = RankedTensorType::get({}, f32);
  Value seed, inverse, scale, denominator;
  // (A count of none counts as one, as on one rank.)
  auto atLeastOne = [&](Value count) -> Value {
    return b.create<dtg::WhereOp>(
        b.create<dtg::GreaterOp>(count, b.scalar(f32, 0.0)), count,
        b.scalar(f32, 1.0));
  };
  if (fp16) {
    micro.insertArgument(body.getNumArguments(), scalarF32,
                         makeAttrs(ctx, "loss_scale", "loss_scale"), loc);
    scale = body.getArguments().back();
    denominator = atLeastOne(b.castTo(results[1], f32));
    seed =
        b.castTo(b.create<dtg::DivOp>(scale, denominator), elementTypeOf(sum));
    inverse = b.create<dtg::DivOp>(denominator, scale);
  }
  // fp16 in a pipeline stage: each model chunk's gradients are unscaled by
  // count / scale with the count of the micro-batch's loss, which the last
  // stage computes and the others receive with their cotangents.
  llvm::DenseMap<int64_t, Value> chunkCount;
  SmallVector<Value> wrt;
  for (unsigned i : low)
    wrt.push_back(body.getArgument(i));
  // A pipeline stage's step (dtc-build-train-step's pipeline-stage): its
  // backward also starts from the next stage's gradients of its results
  // (role activation, cotangent arguments in their order), and returns the
  // gradients of its received activations (role activation_grad).
  auto roleOfResult = [&](unsigned i) {
    auto role = micro.getResultAttrOfType<StringAttr>(i, kRole);
    return role ? role.getValue() : StringRef();
  };
  auto roleOfArg = [&](unsigned i) {
    auto role = micro.getArgAttrOfType<StringAttr>(i, kRole);
    return role ? role.getValue() : StringRef();
  };
  SmallVector<unsigned> activationGradResults;
  for (unsigned i = 0; i < results.size(); ++i)
    if (roleOfResult(i) == "activation_grad")
      activationGradResults.push_back(i);
  if (!activationGradResults.empty() ||
      llvm::any_of(llvm::seq<unsigned>(0, body.getNumArguments()),
                   [&](unsigned i) { return roleOfArg(i) == "cotangent"; })) {
    for (unsigned i = 0; i < body.getNumArguments(); ++i)
      if (roleOfArg(i) == "activation" &&
          isDifferentiable(body.getArgument(i).getType()))
        wrt.push_back(body.getArgument(i));
    SmallVector<Value> cotangents;
    for (unsigned i = 0; i < body.getNumArguments(); ++i)
      if (roleOfArg(i) == "cotangent")
        cotangents.push_back(body.getArgument(i));
    unsigned next = 0;
    Value total = b.castTo(sum, f32);
    // fp16: only the loss is seeded with scale / count (the cotangents come
    // scaled already), so d total / d sum is the one-rank seed in sum's
    // type. Each chunk's count: the loss's own where the chunk computes
    // it, else one received with the chunk's cotangents (an argument of
    // role cotangent, one per chunk).
    if (seed) {
      if (!isa_and_nonnull<dtg::ConstantOp>(sum.getDefiningOp())) {
        total = b.create<dtg::MulOp>(total,
                                     b.create<dtg::DivOp>(scale, denominator));
        chunkCount[chunkOf(micro, sum)] = denominator;
      }
      llvm::MapVector<int64_t, SmallVector<unsigned>> cotangentsOf;
      for (unsigned i = 0; i < body.getNumArguments(); ++i)
        if (roleOfArg(i) == "cotangent") {
          auto c = micro.getArgAttrOfType<IntegerAttr>(i, "dtc.chunk");
          cotangentsOf[c ? c.getInt() : 0].push_back(i);
        }
      for (auto &[c, with] : cotangentsOf) {
        if (chunkCount.count(c))
          continue;
        NamedAttrList attrs(makeAttrs(ctx, "loss_count", "cotangent"));
        attrs.set("dtc.chunk", b.builder.getI64IntegerAttr(c));
        unsigned index = body.getNumArguments();
        micro.insertArgument(index, scalarF32, attrs.getDictionary(ctx), loc);
        countArgs.push_back({index, c, with});
        chunkCount[c] = atLeastOne(body.getArgument(index));
      }
      seed = Value();
    }
    for (unsigned i = 0; i < results.size(); ++i) {
      if (roleOfResult(i) != "activation" ||
          !isDifferentiable(results[i].getType()))
        continue;
      if (next >= cotangents.size())
        return micro.emitError("@micro_step has fewer cotangent arguments "
                               "than float results of role activation");
      Value out = b.castTo(results[i], f32);
      Value ct = b.castTo(cotangents[next++], f32);
      auto type = cast<RankedTensorType>(out.getType());
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      total = b.create<dtg::AddOp>(
          total, b.create<dtg::ReduceSumOp>(b.create<dtg::MulOp>(out, ct), axes,
                                            false));
    }
    sum = total;
  }
  FailureOr<SmallVector<Value>> grads = buildGradients(micro, sum, seed, wrt);
  if (failed(grads))
    return failure();
  if (wrt.size() - low.size() != activationGradResults.size())
    return micro.emitError("@micro_step returns ")
           << activationGradResults.size()
           << " gradients of activations, expected " << wrt.size() - low.size();
  for (auto [k, i] : llvm::enumerate(activationGradResults))
    results[i] = (*grads)[low.size() + k];
  builder.setInsertionPoint(body.getTerminator());
  // The loss count of chunk `c` (fp16 in a pipeline stage), for a value it
  // `does` ("computes gradients").
  auto countOf = [&](int64_t c, StringRef does) -> FailureOr<Value> {
    auto it = chunkCount.find(c);
    if (it == chunkCount.end())
      return micro.emitError("fp16: model chunk ")
             << c << " of this pipeline stage " << does
             << ", but neither computes the loss nor receives cotangents";
    return it->second;
  };
  // count / scale for a gradient (fp16; in a pipeline stage, its chunk's).
  llvm::DenseMap<int64_t, Value> chunkInverse;
  auto inverseOf = [&](Value grad) -> FailureOr<Value> {
    if (chunkCount.empty())
      return inverse;
    int64_t c = chunkOf(micro, grad);
    FailureOr<Value> count = countOf(c, "computes gradients");
    if (failed(count))
      return failure();
    Value &inv = chunkInverse[c];
    if (!inv)
      inv = b.create<dtg::DivOp>(*count, scale);
    return inv;
  };
  SmallVector<Value> newResults;
  for (auto [k, v] : llvm::enumerate(results)) {
    // (The old gradients went with the old reverse sweep: `v` is stale.)
    Value r = v;
    if (k >= 2 && k < 2 + numGrads) {
      // Unscaled in fp32, where the small gradients do not underflow.
      r = b.castTo((*grads)[k - 2], f32);
      if (inverse) {
        FailureOr<Value> unscale = inverseOf((*grads)[k - 2]);
        if (failed(unscale))
          return failure();
        r = b.create<dtg::MulOp>(r, b.castTo(*unscale, elementTypeOf(r)));
      }
    }
    Value typed =
        b.castTo(r, cast<RankedTensorType>(resultTypes[k]).getElementType());
    // A forward result's cast (a stage's activation sent on, the new
    // running statistics) is forward work, and sits with the forward, right
    // after its operand: left before the return, after the backward, later
    // passes would take it for backward (recompute would replay the forward
    // it reads after the backward, and a stage would send its activation
    // late).
    bool isGradient = (k >= 2 && k < 2 + numGrads) ||
                      llvm::is_contained(activationGradResults, unsigned(k));
    if (!isGradient && typed != r)
      if (Operation *def = typed.getDefiningOp();
          def && !llvm::any_of(def->getOperands(), [&](Value o) {
            Operation *d = o.getDefiningOp();
            return d && d->getBlock() == &body && !forward.contains(d);
          })) {
        forward.insert(def);
        if (Operation *source = r.getDefiningOp();
            source && source->getBlock() == &body)
          def->moveAfter(source);
        else
          def->moveBefore(&body.front());
      }
    newResults.push_back(typed);
  }
  // fp16 in a pipeline stage: each chunk that sends gradients of its
  // received activations back sends its count with them.
  if (!chunkCount.empty()) {
    llvm::MapVector<int64_t, SmallVector<unsigned>> gradientsOf;
    for (unsigned i : activationGradResults)
      gradientsOf[chunkOf(micro, results[i])].push_back(i);
    for (auto &[c, with] : gradientsOf) {
      FailureOr<Value> count = countOf(c, "sends gradients back");
      if (failed(count))
        return failure();
      countResults.push_back({unsigned(newResults.size()), c, with});
      newResults.push_back(*count);
    }
  }
  Operation *temporary = body.getTerminator();
  builder.create<func::ReturnOp>(loc, newResults);
  temporary->erase();
  // (What only seeded the sweep, a stage's products with its cotangents,
  // is read by nothing now.)
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!forward.contains(&op) && op.use_empty() &&
        !op.hasTrait<OpTrait::IsTerminator>() && isMemoryEffectFree(&op))
      op.erase();
  for (Operation &op : body.without_terminator())
    if (!forward.contains(&op))
      op.setAttr(kBackward, UnitAttr::get(ctx));
  saveSoftmaxIn16Bits(body, lowType);
  micro.setFunctionType(
      FunctionType::get(ctx, body.getArgumentTypes(), resultTypes));
  for (const CountTransfer &t : countResults) {
    NamedAttrList attrs(makeAttrs(ctx, "loss_count", "activation_grad"));
    attrs.set("dtc.chunk", b.builder.getI64IntegerAttr(t.chunk));
    micro.insertResult(t.index, scalarF32, attrs.getDictionary(ctx));
  }
  return success();
}

LogicalResult MixedPrecisionPass::rewriteEvalMicroStep(func::FuncOp eval,
                                                       ArrayRef<unsigned> low) {
  Block &body = eval.getBody().front();
  for (unsigned i : low)
    if (failed(retypeArgument(eval, i, lowType)))
      return failure();
  lowerForward(eval, lowType);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  GradientBuilder b(builder, eval.getLoc());
  for (auto [k, type] : llvm::enumerate(eval.getResultTypes()))
    ret.setOperand(k, b.castTo(ret.getOperand(k),
                               cast<RankedTensorType>(type).getElementType()));
  eval.setFunctionType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                                         eval.getResultTypes()));
  return success();
}

/// The result of one train-step output, with its attributes.
struct Output {
  Value value;
  DictionaryAttr attrs;
};

LogicalResult MixedPrecisionPass::rewriteTrainStep(func::FuncOp train,
                                                   func::FuncOp evalStep) {
  MLIRContext *ctx = &getContext();
  Location loc = train.getLoc();
  Block &body = train.getBody().front();
  Type f32 = Float32Type::get(ctx), f64 = Float64Type::get(ctx),
       i64 = IntegerType::get(ctx, 64);

  // Trainable parameters and their optimizer updates.
  struct Param {
    unsigned index;
    Operation *update;
  };
  SmallVector<Param> params;
  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    if (!train.getArgAttr(i, kTrainable))
      continue;
    BlockArgument arg = body.getArgument(i);
    if (elementTypeOf(arg) != f32)
      return train.emitError("mixed precision needs fp32 parameters; '")
             << argString(train, i, kName) << "' is " << arg.getType();
    Operation *update = nullptr;
    for (Operation *user : arg.getUsers())
      if ((isa<dtg::SgdUpdateOp>(user) &&
           cast<dtg::SgdUpdateOp>(user).getParam() == arg) ||
          (isa<dtg::AdamWUpdateOp>(user) &&
           cast<dtg::AdamWUpdateOp>(user).getParam() == arg))
        update = user;
    if (!update)
      return train.emitError("trainable parameter '")
             << argString(train, i, kName) << "' has no optimizer update";
    params.push_back({i, update});
  }

  // Outputs, to be rebuilt.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Output> outputs;
  for (unsigned k = 0; k < ret.getNumOperands(); ++k)
    outputs.push_back({ret.getOperand(k), train.getResultAttrDict(k)});
  auto findOutput = [&](StringRef name, StringRef role) -> Output * {
    for (Output &o : outputs)
      if (stringAttr(o.attrs, kName) == name &&
          stringAttr(o.attrs, kRole) == role)
        return &o;
    return nullptr;
  };

  // New arguments go to both steps (they share the arguments).
  auto insertArg = [&](unsigned index, Type type, DictionaryAttr attrs) {
    train.insertArgument(index, type, attrs, loc);
    if (evalStep)
      evalStep.insertArgument(index, type, attrs, loc);
    return body.getArgument(index);
  };
  unsigned optEnd = 0, stepIndex = train.getNumArguments();
  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    StringRef role = argString(train, i, kRole);
    if (role == "parameter" || role == "constant" || role == "state" ||
        role == "optimizer_state")
      optEnd = i + 1;
    if (role == "step")
      stepIndex = i;
  }
  if (stepIndex == train.getNumArguments())
    return train.emitError("@train_step has no step argument");

  // Masters: the fp32 parameters become optimizer state; the parameters
  // become 16-bit.
  SmallVector<Value> masters;
  for (Param &p : params) {
    StringRef name = argString(train, p.index, kName);
    Attribute initial = train.getArgAttr(p.index, kInitial);
    Value master =
        insertArg(optEnd, withElement(body.getArgument(p.index), f32),
                  makeAttrs(ctx, (name + ".master").str(), "optimizer_state",
                            {}, initial));
    ++optEnd;
    ++stepIndex;
    masters.push_back(master);
    for (func::FuncOp f : {train, evalStep})
      if (f && failed(retypeArgument(f, p.index, lowType)))
        return failure();
    if (auto sgd = dyn_cast<dtg::SgdUpdateOp>(p.update))
      sgd.getParamMutable().assign(master);
    else
      cast<dtg::AdamWUpdateOp>(p.update).getParamMutable().assign(master);
  }

  // fp16: the loss scale, its good-step count and the optimizer's own step
  // count (updates skipped on overflow do not count).
  Value bad, scale, good, optCount, optK1, window, largest;
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  GradientBuilder b(builder, loc);
  if (fp16) {
    Value scaleState =
        insertArg(optEnd++, RankedTensorType::get({}, f32),
                  makeAttrs(ctx, "loss_scale", "optimizer_state"));
    Value goodState =
        insertArg(optEnd++, RankedTensorType::get({}, i64),
                  makeAttrs(ctx, "loss_scale_good_steps", "optimizer_state"));
    Value optState =
        insertArg(optEnd++, RankedTensorType::get({}, i64),
                  makeAttrs(ctx, "optimizer_steps", "optimizer_state"));
    stepIndex += 3;
    Value init =
        insertArg(stepIndex++, RankedTensorType::get({}, f64),
                  makeAttrs(ctx, "loss_scale_init", "hyper",
                            FloatAttr::get(f64, double(lossScaleInit))));
    window =
        insertArg(stepIndex++, RankedTensorType::get({}, i64),
                  makeAttrs(ctx, "loss_scale_window", "hyper",
                            IntegerAttr::get(i64, int64_t(lossScaleWindow))));
    Value step = body.getArgument(stepIndex);
    Value first = b.create<dtg::EqualOp>(step, b.scalar(i64, 0));
    // Scales stay finite in f32 (at most 2^127), so that halving recovers.
    largest = b.scalar(f32, std::ldexp(1.0, 127));
    scale = b.create<dtg::WhereOp>(
        first, b.create<dtg::MinOp>(b.castTo(init, f32), largest), scaleState);
    good = b.create<dtg::WhereOp>(first, b.scalar(i64, 0), goodState);
    optCount = b.create<dtg::WhereOp>(first, b.scalar(i64, 0), optState);
    optK1 = b.create<dtg::AddOp>(optCount, b.scalar(i64, 1));
    Value firstUpdate = b.create<dtg::EqualOp>(optCount, b.scalar(i64, 0));
    for (Param &p : params) {
      if (auto sgd = dyn_cast<dtg::SgdUpdateOp>(p.update))
        sgd.getFirstStepMutable().assign(firstUpdate);
      else
        cast<dtg::AdamWUpdateOp>(p.update).getStepMutable().assign(optK1);
    }
    // The micro-steps are seeded with the scale.
    train.walk([&](func::CallOp call) {
      if (call.getCallee() == "micro_step")
        call->insertOperands(call->getNumOperands(), scale);
    });
    if (failed(addCountTransfers(
            train,
            train->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>(
                "micro_step"))))
      return failure();

    builder.setInsertionPoint(ret);
    Output *norm = findOutput("grad_norm", "metric");
    if (!norm)
      return train.emitError("@train_step has no grad_norm metric");
    auto boolType = RankedTensorType::get({}, builder.getI1Type());
    Value nan = builder.create<dtg::IsNanOp>(loc, boolType, norm->value);
    Value inf = builder.create<dtg::IsInfOp>(loc, boolType, norm->value,
                                             builder.getBoolAttr(true),
                                             builder.getBoolAttr(true));
    bad = b.create<dtg::OrOp>(nan, inf);
  }

  // Updates: the masters (kept on a skipped step, as the moments), and the
  // 16-bit parameters cast from them.
  builder.setInsertionPoint(ret);
  auto keep = [&](Value old, Value updated) {
    return bad ? b.create<dtg::WhereOp>(bad, old, updated) : updated;
  };
  SmallVector<Output> masterOutputs;
  for (auto [p, master] : llvm::zip(params, masters)) {
    StringRef name = argString(train, p.index, kName);
    Output *param = findOutput(name, "parameter");
    if (!param)
      return train.emitError("@train_step does not return parameter '")
             << name << "'";
    SmallVector<std::pair<Value, Value>> pairs; // (input, result)
    if (auto sgd = dyn_cast<dtg::SgdUpdateOp>(p.update)) {
      pairs = {{master, sgd.getNewParam()},
               {sgd.getMomentumBuffer(), sgd.getNewMomentumBuffer()}};
    } else {
      auto adam = cast<dtg::AdamWUpdateOp>(p.update);
      pairs = {{master, adam.getNewParam()},
               {adam.getExpAvg(), adam.getNewExpAvg()},
               {adam.getExpAvgSq(), adam.getNewExpAvgSq()}};
    }
    Value newMaster = keep(pairs[0].first, pairs[0].second);
    param->value = b.castTo(newMaster, lowType);
    masterOutputs.push_back({newMaster, makeAttrs(ctx, (name + ".master").str(),
                                                  "optimizer_state")});
    for (auto [input, result] :
         ArrayRef<std::pair<Value, Value>>(pairs).drop_front())
      for (Output &o : outputs)
        if (o.value == result)
          o.value = keep(input, result);
  }
  // The master results go where their arguments are, after the other
  // optimizer state.
  auto insertAt = outputs.end();
  for (auto it = outputs.begin(); it != outputs.end(); ++it)
    if (stringAttr(it->attrs, kRole) == "optimizer_state")
      insertAt = it + 1;
  if (insertAt == outputs.end())
    for (auto it = outputs.begin(); it != outputs.end(); ++it)
      if (stringAttr(it->attrs, kRole) == "parameter" ||
          stringAttr(it->attrs, kRole) == "state")
        insertAt = it + 1;
  size_t insertPos = insertAt - outputs.begin();
  outputs.insert(outputs.begin() + insertPos, masterOutputs.begin(),
                 masterOutputs.end());
  insertPos += masterOutputs.size();

  if (fp16) {
    Value good1 = b.create<dtg::AddOp>(good, b.scalar(i64, 1));
    Value grow =
        b.create<dtg::AndOp>(b.create<dtg::NotOp>(bad),
                             b.create<dtg::GreaterEqualOp>(good1, window));
    Value half = b.create<dtg::MulOp>(scale, b.scalar(f32, 0.5));
    Value twice = b.create<dtg::MinOp>(
        b.create<dtg::MulOp>(scale, b.scalar(f32, 2.0)), largest);
    Value newScale = b.create<dtg::WhereOp>(
        bad, half, b.create<dtg::WhereOp>(grow, twice, scale));
    Value newGood = b.create<dtg::WhereOp>(b.create<dtg::OrOp>(bad, grow),
                                           b.scalar(i64, 0), good1);
    Value newCount = b.create<dtg::WhereOp>(bad, optCount, optK1);
    SmallVector<Output> state = {
        {newScale, makeAttrs(ctx, "loss_scale", "optimizer_state")},
        {newGood, makeAttrs(ctx, "loss_scale_good_steps", "optimizer_state")},
        {newCount, makeAttrs(ctx, "optimizer_steps", "optimizer_state")}};
    outputs.insert(outputs.begin() + insertPos, state.begin(), state.end());
    outputs.push_back({scale, makeAttrs(ctx, "loss_scale", "metric")});
    outputs.push_back(
        {b.castTo(bad, i64), makeAttrs(ctx, "skipped", "metric")});
  }

  SmallVector<Value> values;
  SmallVector<DictionaryAttr> attrs;
  for (Output &o : outputs) {
    values.push_back(o.value);
    attrs.push_back(o.attrs);
  }
  builder.create<func::ReturnOp>(loc, values);
  ret.erase();
  train.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(),
                                          ValueRange(values).getTypes()));
  train.setAllResultAttrs(attrs);
  if (evalStep)
    evalStep.setFunctionType(
        FunctionType::get(ctx, evalStep.getBody().front().getArgumentTypes(),
                          evalStep.getResultTypes()));
  return success();
}

/// `message` ("dstage0.out1@3": an activation's gradient for micro-batch 3)
/// with ".loss_count" before its micro-batch.
static std::string countMessage(StringRef message) {
  auto [name, micro] = message.rsplit('@');
  return (name + ".loss_count" + (micro.empty() ? "" : "@" + micro)).str();
}

/// The message of the pipeline transfer `op` (a dist.send or dist.recv with
/// dtc.message), or empty.
static StringRef transferMessage(Operation *op) {
  auto message = op && isa<dist::SendOp, dist::RecvOp>(op)
                     ? op->getAttrOfType<StringAttr>("dtc.message")
                     : StringAttr();
  return message ? message.getValue() : StringRef();
}

LogicalResult MixedPrecisionPass::addCountTransfers(func::FuncOp train,
                                                    func::FuncOp micro) {
  if (countArgs.empty() && countResults.empty())
    return success();
  auto scalarF32 = RankedTensorType::get({}, Float32Type::get(&getContext()));
  SmallVector<func::CallOp> calls;
  train.walk([&](func::CallOp call) {
    if (call.getCallee() == micro.getSymName())
      calls.push_back(call);
  });
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    // A count is received after the cotangents of its chunk, from the same
    // stage, as the same kind of transfer.
    SmallVector<Value> operands(call.getOperands());
    for (const CountTransfer &t : countArgs) {
      Operation *like = call.getOperand(t.with.front()).getDefiningOp();
      auto recv = dyn_cast_or_null<dist::RecvOp>(like);
      if (!recv || transferMessage(recv).empty())
        return call.emitError("fp16: the cotangents of model chunk ")
               << t.chunk << " are not received from the next stage";
      auto count =
          b.create<dist::RecvOp>(recv.getLoc(), scalarF32, recv.getMeshAttr(),
                                 recv.getMeshAxisAttr(), recv.getShiftAttr());
      count->setAttrs(recv->getDiscardableAttrDictionary());
      count->setAttr("dtc.message",
                     b.getStringAttr(countMessage(transferMessage(recv))));
      operands.push_back(count.getResult());
    }
    auto rebuilt = b.create<func::CallOp>(call.getLoc(), micro, operands);
    rebuilt->setAttrs(call->getAttrs());
    for (auto [old, now] : llvm::zip(call.getResults(), rebuilt.getResults()))
      old.replaceAllUsesWith(now);
    call.erase();
    // A count is sent after the gradients of its chunk's activations.
    for (const CountTransfer &t : countResults) {
      dist::SendOp last;
      for (unsigned i : t.with)
        for (Operation *user : rebuilt.getResult(i).getUsers())
          if (auto send = dyn_cast<dist::SendOp>(user);
              send && !transferMessage(send).empty() &&
              (!last || last->isBeforeInBlock(send)))
            last = send;
      if (!last)
        return rebuilt.emitError("fp16: the gradients of model chunk ")
               << t.chunk << "'s activations are not sent to the previous "
               << "stage";
      b.setInsertionPointAfter(last);
      auto count = b.create<dist::SendOp>(
          last.getLoc(), rebuilt.getResult(t.index), last.getMeshAttr(),
          last.getMeshAxisAttr(), last.getShiftAttr());
      count->setAttrs(last->getDiscardableAttrDictionary());
      count->setAttr("dtc.message",
                     b.getStringAttr(countMessage(transferMessage(last))));
    }
  }
  return success();
}

LogicalResult MixedPrecisionPass::run() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (precision != "fp32" && precision != "bf16" && precision != "fp16")
    return module.emitError("--precision must be fp32, bf16 or fp16, got '")
           << precision << "'";
  if (!(lossScaleInit > 0) || !std::isfinite(lossScaleInit))
    return module.emitError("--loss-scale-init must be a positive number, "
                            "got ")
           << double(lossScaleInit);
  if (lossScaleWindow < 1)
    return module.emitError("--loss-scale-window must be at least 1, got ")
           << int64_t(lossScaleWindow);
  if (module->hasAttr(kPrecisionAttr))
    return module.emitError("the step is already in ")
           << module->getAttr(kPrecisionAttr) << " precision";
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto micro = module.lookupSymbol<func::FuncOp>("micro_step");
  if (!train || !micro)
    return module.emitError("mixed precision needs @train_step and "
                            "@micro_step (run dtc-build-train-step first)");
  module->setAttr(kPrecisionAttr, StringAttr::get(ctx, precision));
  if (precision == "fp32")
    return success();
  fp16 = precision == "fp16";
  lowType = fp16 ? Type(Float16Type::get(ctx)) : Type(BFloat16Type::get(ctx));

  for (unsigned i = 0; i < train.getNumArguments(); ++i)
    if (train.getArgAttr(i, kTrainable) &&
        !elementTypeOf(train.getArgument(i)).isF32())
      return train.emitError("mixed precision needs fp32 parameters; '")
             << argString(train, i, kName) << "' is "
             << train.getArgument(i).getType();
  auto evalStep = module.lookupSymbol<func::FuncOp>("eval_step");
  auto evalMicro = module.lookupSymbol<func::FuncOp>("eval_micro_step");
  SmallVector<unsigned> microLow = trainableOperands(train, micro);
  SmallVector<unsigned> evalLow;
  if (evalStep && evalMicro)
    evalLow = trainableOperands(evalStep, evalMicro);
  if (failed(rewriteMicroStep(micro, microLow)))
    return failure();
  if (evalMicro && failed(rewriteEvalMicroStep(evalMicro, evalLow)))
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "mixed precision: " << microLow.size()
                          << " parameters in " << lowType << "\n");
  return rewriteTrainStep(train, evalStep);
}
