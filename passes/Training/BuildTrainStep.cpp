//===- BuildTrainStep.cpp - forward, backward and optimizer as one step --===//

#include "passes/Training/Passes.h"

#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/Dist/IR/DistOps.h"
#include "passes/Training/Autodiff.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/GlobPattern.h"

#define DEBUG_TYPE "dtc-build-train-step"

namespace mlir::dtc {
#define GEN_PASS_DEF_BUILDTRAINSTEPPASS
#include "passes/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {
constexpr StringLiteral kName = "dtg.name", kRole = "dtg.role",
                        kDefault = "dtg.default", kBackward = "dtg.backward";

StringRef argString(func::FuncOp func, unsigned i, StringRef attr) {
  auto value = func.getArgAttrOfType<StringAttr>(i, attr);
  return value ? value.getValue() : StringRef();
}
StringRef resultString(func::FuncOp func, unsigned i, StringRef attr) {
  auto value = func.getResultAttrOfType<StringAttr>(i, attr);
  return value ? value.getValue() : StringRef();
}

/// Pipelines: where a stage's activation argument or result was made
/// (dtc.source, set by dtc-split-stages), else `fallback`.
Location argSource(func::FuncOp func, unsigned i, Location fallback) {
  auto source = func.getArgAttrOfType<LocationAttr>(i, "dtc.source");
  return source ? Location(source) : fallback;
}
Location resultSource(func::FuncOp func, unsigned i, Location fallback) {
  auto source = func.getResultAttrOfType<LocationAttr>(i, "dtc.source");
  return source ? Location(source) : fallback;
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// True if `name` matches one of the glob `patterns`.
bool matchesAny(StringRef name, ArrayRef<std::string> patterns) {
  for (const std::string &pattern : patterns) {
    auto glob = llvm::GlobPattern::create(pattern);
    if (glob && glob->match(name))
      return true;
  }
  return false;
}

/// A hyperparameter argument of @train_step.
struct Hyper {
  std::string name;
  Type type;
  double value;
};

/// Signature entries of a function being built: types and attributes.
struct Signature {
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  void add(MLIRContext *ctx, Type type, StringRef name, StringRef role,
           Attribute defaultValue = {}) {
    types.push_back(type);
    NamedAttrList list;
    list.append(kName, StringAttr::get(ctx, name));
    list.append(kRole, StringAttr::get(ctx, role));
    if (defaultValue)
      list.append(kDefault, defaultValue);
    attrs.push_back(list.getDictionary(ctx));
  }
};

/// A parameter the program holds in another shape than the model's
/// (dtg.model_shape, from dtc-plan-tensor-parallel): the argument just
/// added for it (the parameter, or its optimizer state) keeps that shape.
static void keepModelShape(func::FuncOp main, unsigned i, Signature &in) {
  Attribute shape = main.getArgAttr(i, "dtg.model_shape");
  if (!shape)
    return;
  NamedAttrList list(in.attrs.back());
  list.append("dtg.model_shape", shape);
  in.attrs.back() = list.getDictionary(main.getContext());
}

struct BuildTrainStepPass
    : public dtc::impl::BuildTrainStepPassBase<BuildTrainStepPass> {
  using BuildTrainStepPassBase::BuildTrainStepPassBase;

  void runOnOperation() override {
    if (failed(build()))
      signalPassFailure();
  }

  LogicalResult build();
  FailureOr<Value> findLoss(func::FuncOp step, Location loc);
  std::pair<Value, Value> lossSumAndCount(GradientBuilder &b, Value loss);
  FailureOr<func::FuncOp> buildMicroStep(func::FuncOp main);
  void syncBatchNorm(func::FuncOp micro);
  /// The new running statistics of batch norms that syncBatchNorm wrote
  /// out, by the running statistic they replace.
  llvm::DenseMap<Value, Value> syncedState;
  LogicalResult buildTrainStep(func::FuncOp main, func::FuncOp micro);
  FailureOr<func::FuncOp> buildEvalMicroStep(func::FuncOp main);
  LogicalResult buildEvalStep(func::FuncOp main, func::FuncOp train);
  SmallVector<Hyper> hyperparameters();

  /// Indices (in @main's arguments) of trainable parameters and of state.
  SmallVector<unsigned> trainable, state;
  /// Indices (in @main's arguments) of initializers without a gradient path
  /// to the loss: role "constant" in the steps.
  llvm::DenseSet<unsigned> constants;
  /// For each argument of @main but the data inputs, the @train_step
  /// argument that holds it; for each data input, the one holding its
  /// global batch.
  llvm::DenseMap<unsigned, unsigned> trainArg;
  /// For each state argument, the @micro_step value that replaces it.
  SmallVector<unsigned> stateResults;

  /// Pipelines: whether this is a stage's step, and its last.
  bool isStage() const { return pipelineStage >= 0; }
  bool isLastStage() const { return pipelineStage == pipelineStages - 1; }
  /// @main's arguments of role activation (received), the @micro_step
  /// results sent to the next stage and the gradients sent back to the
  /// previous one (counts), and the @micro_step arguments of role cotangent
  /// (the next stage's gradients of this stage's results; indices).
  SmallVector<unsigned> activationArgs;
  unsigned numActivationResults = 0, numActivationGrads = 0;
  SmallVector<unsigned> cotangentArgs;
  /// The names of the results sent on, and of those with cotangents.
  SmallVector<std::string> activationOutNames, cotangentNames;
  /// Where those results were made (their transfers' locations).
  SmallVector<Location> activationOutSources, cotangentSources;
  /// For each activation argument with a gradient, its index in
  /// activationArgs.
  SmallVector<unsigned> gradActivation;
};
} // namespace

FailureOr<Value> BuildTrainStepPass::findLoss(func::FuncOp step, Location loc) {
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  auto isScalarFloat = [](Value v) {
    auto t = tensorType(v);
    return t.getRank() == 0 && isa<FloatType>(t.getElementType());
  };
  auto outputNamed = [&](StringRef name) -> Value {
    for (unsigned i = 0; i < step.getNumResults(); ++i)
      if (resultString(step, i, kName) == name)
        return ret.getOperand(i);
    return nullptr;
  };
  if (!loss.empty()) {
    if (!lossOutput.empty())
      return emitError(loc, "--loss and --loss-output contradict each other; "
                            "give one");
    if (loss != "cross_entropy" && loss != "mse")
      return emitError(loc, "--loss must be cross_entropy or mse, got '")
             << loss << "'";
    if (logits.empty() || labels.empty())
      return emitError(loc, "--loss ")
             << loss << " needs --logits and --labels";
    Value out = outputNamed(logits);
    if (!out)
      return emitError(loc, "--logits: the model has no output '")
             << logits << "'";
    Value target;
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      if (argString(step, i, kName) == labels)
        target = step.getArgument(i);
    if (!target)
      return emitError(loc, "--labels: the model has no input '")
             << labels << "'";
    OpBuilder builder(ret);
    GradientBuilder b(builder, loc);
    auto outType = tensorType(out), targetType = tensorType(target);
    if (!isa<FloatType>(outType.getElementType()) || outType.getRank() < 1)
      return emitError(loc, "--logits '")
             << logits << "' is not a float tensor";
    // Classes on the last axis; a classifier's trailing 1s (the [N, C, 1, 1]
    // of a global pooling) do not count.
    ArrayRef<int64_t> shape = outType.getShape();
    while (shape.size() > 2 && shape.back() == 1)
      shape = shape.drop_back();
    int64_t classes = shape.back();
    int64_t rows = outType.getNumElements() / std::max<int64_t>(classes, 1);
    if (loss == "cross_entropy") {
      if (!isa<IntegerType>(targetType.getElementType()) ||
          targetType.getNumElements() != rows)
        return emitError(loc, "--labels '")
               << labels << "' must hold one integer class per row of '"
               << logits << "' (" << rows << " values)";
      Value flat = b.reshape(out, {rows, classes});
      Value logp = b.create<dtg::LogSoftmaxOp>(flat, int64_t(1));
      Value t = b.castTo(b.reshape(target, {rows}), builder.getI64Type());
      return builder
          .create<dtg::NllLossOp>(loc, logp, t, Value(),
                                  builder.getStringAttr("mean"),
                                  builder.getI64IntegerAttr(-100))
          .getResult();
    }
    if (targetType != outType)
      return emitError(loc, "--labels '")
             << labels << "' must have the type of '" << logits << "' ("
             << outType << ") for mse";
    Value d = b.create<dtg::SubOp>(out, target);
    Value sq = b.create<dtg::MulOp>(d, d);
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(0, outType.getRank()));
    return b.create<dtg::ReduceMeanOp>(sq, axes, false);
  }
  if (!lossOutput.empty()) {
    Value out = outputNamed(lossOutput);
    if (!out)
      return emitError(loc, "--loss-output: the model has no output '")
             << lossOutput << "'";
    if (!isScalarFloat(out))
      return emitError(loc, "--loss-output '")
             << lossOutput << "' is " << out.getType()
             << ", not a scalar float";
    return out;
  }
  SmallVector<Value> candidates;
  std::string names;
  for (unsigned i = 0; i < step.getNumResults(); ++i) {
    names += (names.empty() ? "" : ", ") + resultString(step, i, kName).str();
    if (isScalarFloat(ret.getOperand(i)))
      candidates.push_back(ret.getOperand(i));
  }
  if (candidates.size() != 1)
    return emitError(loc, "the model has ")
           << (candidates.empty() ? "no" : "more than one")
           << " scalar float output (outputs: " << names
           << "); name the loss with --loss-output, or append one with "
              "--loss cross_entropy|mse --logits NAME --labels NAME";
  return candidates.front();
}

/// The loss as a sum and a count over the micro-batch, so that micro-batches
/// combine into the global mean: an nll_loss 'mean' becomes its 'sum' and the
/// total weight of counted positions; a reduce_mean over everything becomes
/// its sum and its element count; any other loss counts as one.
std::pair<Value, Value> BuildTrainStepPass::lossSumAndCount(GradientBuilder &b,
                                                            Value loss) {
  Type f = tensorType(loss).getElementType();
  if (auto nll = loss.getDefiningOp<dtg::NllLossOp>()) {
    if (nll.getReduction() == "mean") {
      Value sum = b.builder
                      .create<dtg::NllLossOp>(nll.getLoc(), nll.getInput(),
                                              nll.getTarget(), nll.getWeight(),
                                              b.builder.getStringAttr("sum"),
                                              nll.getIgnoreIndexAttr())
                      .getResult();
      Value target = nll.getTarget();
      auto targetType = tensorType(target);
      Value counted = b.splat(
          RankedTensorType::get(targetType.getShape(), b.builder.getI1Type()),
          1.0);
      // (The getter returns the attribute's bits as uint64_t.)
      if (IntegerAttr ignore = nll.getIgnoreIndexAttr())
        counted = b.create<dtg::NotOp>(
            b.create<dtg::EqualOp>(target, b.scalar(targetType.getElementType(),
                                                    double(ignore.getInt()))));
      Value weights = b.castTo(counted, f);
      if (Value w = nll.getWeight()) {
        Value safe = b.create<dtg::WhereOp>(
            counted, target, b.scalar(targetType.getElementType(), 0));
        Value picked = b.create<dtg::GatherOp>(w, safe, int64_t(0));
        weights = b.create<dtg::MulOp>(weights, picked);
      }
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(0, targetType.getRank()));
      Value count = b.create<dtg::ReduceSumOp>(weights, axes, false);
      return {sum, count};
    }
  }
  if (auto mean = loss.getDefiningOp<dtg::ReduceMeanOp>()) {
    auto in = tensorType(mean.getOperand());
    if (static_cast<int64_t>(mean.getAxes().size()) == in.getRank()) {
      Value sum =
          b.create<dtg::ReduceSumOp>(mean.getOperand(), mean.getAxes(), false);
      return {sum, b.scalar(f, double(in.getNumElements()))};
    }
  }
  return {loss, b.scalar(f, 1.0)};
}

/// Writes out each dtg.batch_norm_training of `micro` with batch
/// statistics over every data-parallel rank: per channel, the sum of the
/// samples and of their squared deviations are all-reduced over dp and
/// divided by the global count (the op's own formulas, ONNX momentum and
/// Bessel's correction for the running variance included), so that the
/// reverse sweep differentiates through the all-reduces.
void BuildTrainStepPass::syncBatchNorm(func::FuncOp micro) {
  SmallVector<dtg::BatchNormTrainingOp> ops;
  micro.walk([&](dtg::BatchNormTrainingOp op) { ops.push_back(op); });
  if (ops.empty())
    return;
  MLIRContext *ctx = &getContext();
  ModuleOp module = getOperation();
  if (!module.lookupSymbol("mesh")) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    top.create<dist::MeshOp>(
        module.getLoc(), "mesh",
        dist::MeshAttr::get(
            ctx, {dist::MeshAxis{StringAttr::get(ctx, "pp"), 1},
                  dist::MeshAxis{StringAttr::get(ctx, "dp"), syncBatchNormDp},
                  dist::MeshAxis{StringAttr::get(ctx, "tp"), 1}}));
  }
  auto meshRef = FlatSymbolRefAttr::get(ctx, "mesh");
  auto axes = ArrayAttr::get(ctx, {StringAttr::get(ctx, "dp")});
  for (dtg::BatchNormTrainingOp bn : ops) {
    OpBuilder builder(bn);
    GradientBuilder b(builder, bn.getLoc());
    Value x = bn.getInput();
    auto type = tensorType(x);
    Type f = type.getElementType();
    int64_t channels = type.getDimSize(1);
    SmallVector<int64_t> axesOf, perChannel(type.getRank(), 1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != 1)
        axesOf.push_back(d);
    perChannel[1] = channels;
    double n = double(type.getNumElements() / std::max<int64_t>(channels, 1)) *
               double(syncBatchNormDp);
    auto allReduce = [&](Value v, StringRef what) -> Value {
      auto op = builder.create<dist::AllReduceOp>(
          bn.getLoc(), v.getType(), v,
          dist::ReduceKindAttr::get(ctx, dist::ReduceKind::Sum), meshRef, axes);
      op->setAttr("dtc.explain", StringAttr::get(ctx, what));
      return op;
    };
    Value mean = b.create<dtg::DivOp>(
        allReduce(b.create<dtg::ReduceSumOp>(x, axesOf, true),
                  "batch norm: per-channel sums"),
        b.scalar(f, n));
    Value centered = b.create<dtg::SubOp>(x, mean);
    Value variance = b.create<dtg::DivOp>(
        allReduce(b.create<dtg::ReduceSumOp>(
                      b.create<dtg::MulOp>(centered, centered), axesOf, true),
                  "batch norm: per-channel sums of squared deviations"),
        b.scalar(f, n));
    Value invStd = b.create<dtg::RsqrtOp>(b.create<dtg::AddOp>(
        variance, b.scalar(f, bn.getEpsilon().convertToDouble())));
    Value y = b.create<dtg::AddOp>(
        b.create<dtg::MulOp>(b.create<dtg::MulOp>(centered, invStd),
                             b.reshape(bn.getScale(), perChannel)),
        b.reshape(bn.getBias(), perChannel));
    double momentum = bn.getMomentum().convertToDouble();
    Value batchVar = b.reshape(variance, {channels});
    if (bn.getUnbiasedRunningVar() && n > 1)
      batchVar = b.create<dtg::MulOp>(batchVar, b.scalar(f, n / (n - 1)));
    auto running = [&](Value old, Value batch) -> Value {
      Type t = tensorType(old).getElementType();
      return b.create<dtg::AddOp>(
          b.create<dtg::MulOp>(old, b.scalar(t, momentum)),
          b.create<dtg::MulOp>(b.castTo(batch, t), b.scalar(t, 1 - momentum)));
    };
    Value newMean = running(bn.getRunningMean(), b.reshape(mean, {channels}));
    Value newVar = running(bn.getRunningVar(), batchVar);
    syncedState[bn.getRunningMean()] = newMean;
    syncedState[bn.getRunningVar()] = newVar;
    bn.getResult().replaceAllUsesWith(y);
    bn.getNewRunningMean().replaceAllUsesWith(newMean);
    bn.getNewRunningVar().replaceAllUsesWith(newVar);
    bn.erase();
  }
}

FailureOr<func::FuncOp> BuildTrainStepPass::buildMicroStep(func::FuncOp main) {
  MLIRContext *ctx = &getContext();
  Location loc = main.getLoc();
  func::FuncOp micro = main.clone();
  micro.setSymName("micro_step");
  getOperation().push_back(micro);
  Block &body = micro.getBody().front();
  // A stage before the last has no loss: its backward starts from the
  // gradients of its results, which the next stage sends (cotangents).
  FailureOr<Value> lossValue = isStage() && !isLastStage()
                                   ? FailureOr<Value>(Value())
                                   : findLoss(micro, loc);
  if (failed(lossValue))
    return failure();

  // Dropout keys come from the step: new trailing arguments, the index of
  // the micro-batch's first sample in the global batch and the key (seed,
  // step). Each dropout's key gets a third element, the index of its
  // tensor's first element in the global batch's tensor (its samples lead,
  // so that is the first sample times the elements per sample): every
  // element draws the bits of its place in the global batch, whatever the
  // micro-batches and the data-parallel ranks.
  auto i64 = IntegerType::get(ctx, 64);
  auto keyType = RankedTensorType::get({2}, i64);
  auto namedArg = [&](StringRef name) {
    return DictionaryAttr::get(ctx,
                               {NamedAttribute(StringAttr::get(ctx, kName),
                                               StringAttr::get(ctx, name)),
                                NamedAttribute(StringAttr::get(ctx, kRole),
                                               StringAttr::get(ctx, name))});
  };
  unsigned firstIndex = body.getNumArguments();
  micro.insertArgument(firstIndex, RankedTensorType::get({}, i64),
                       namedArg("first_sample"), loc);
  micro.insertArgument(firstIndex + 1, keyType, namedArg("key"), loc);
  BlockArgument firstSample = body.getArgument(firstIndex),
                key = body.getArgument(firstIndex + 1);
  int64_t microRows = 0;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (argString(main, i, kRole) == "input" ||
        (microRows == 0 && argString(main, i, kRole) == "activation"))
      microRows = tensorType(main.getArgument(i)).getDimSize(0);
  micro.walk([&](dtg::DropoutOp op) {
    OpBuilder builder(op);
    GradientBuilder b(builder, op.getLoc());
    int64_t elements = tensorType(op.getOperand()).getNumElements();
    int64_t perSample =
        microRows > 0 && elements % microRows == 0 ? elements / microRows : 0;
    Value offset =
        b.create<dtg::MulOp>(firstSample, b.scalar(i64, double(perSample)));
    Value fullKey = b.create<dtg::ConcatOp>(
        ValueRange{key, b.reshape(offset, {1})}, int64_t(0));
    op.getKeyMutable().assign(fullKey);
  });
  if (syncBatchNormDp > 1)
    syncBatchNorm(micro);

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  GradientBuilder b(builder, loc);
  Value sum, count, seedLoss = *lossValue;
  if (seedLoss) {
    std::tie(sum, count) = lossSumAndCount(b, seedLoss);
    seedLoss = sum;
  }
  // A stage's results sent on (role activation): the backward starts from
  // their gradients too, sum_k <out_k, cotangent_k>, whose gradient with
  // respect to out_k is the cotangent, so that the reverse sweep is the
  // stage's vector-Jacobian product. Those products are dropped after.
  SmallVector<Value> activationOut;
  SmallVector<Operation *> seedOps;
  {
    Operation *before = builder.getInsertionPoint() == body.begin()
                            ? nullptr
                            : &*std::prev(builder.getInsertionPoint());
    Type f32 = builder.getF32Type();
    Value dots;
    for (auto [i, out] : llvm::enumerate(ret.getOperands())) {
      if (resultString(micro, unsigned(i), kRole) != "activation")
        continue;
      activationOut.push_back(out);
      activationOutNames.push_back(
          resultString(micro, unsigned(i), kName).str());
      activationOutSources.push_back(resultSource(micro, unsigned(i), loc));
      auto type = tensorType(out);
      if (!isDifferentiable(type))
        continue;
      unsigned index = body.getNumArguments();
      NamedAttrList argAttrs;
      argAttrs.set(kRole, StringAttr::get(ctx, "cotangent"));
      // (Under the interleaved schedule, the chunk of the result.)
      if (Attribute chunk = micro.getResultAttr(unsigned(i), "dtc.chunk"))
        argAttrs.set("dtc.chunk", chunk);
      micro.insertArgument(index, type, argAttrs.getDictionary(ctx), loc);
      cotangentArgs.push_back(index);
      cotangentNames.push_back(resultString(micro, unsigned(i), kName).str());
      cotangentSources.push_back(resultSource(micro, unsigned(i), loc));
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      Value dot = b.castTo(
          b.create<dtg::ReduceSumOp>(
              b.create<dtg::MulOp>(out, body.getArgument(index)), axes, false),
          f32);
      dots = dots ? b.create<dtg::AddOp>(dots, dot) : dot;
    }
    if (dots)
      seedLoss =
          seedLoss ? b.create<dtg::AddOp>(b.castTo(seedLoss, f32), dots) : dots;
    // (The sum with the loss too: a stage of the interleaved schedule can
    // both compute the loss and send an activation on.)
    for (Operation *op = before ? before->getNextNode() : &body.front();
         op != ret.getOperation(); op = op->getNextNode())
      seedOps.push_back(op);
  }
  if (!seedLoss)
    return emitError(loc, "pipeline stage ")
           << pipelineStage << " sends the next stage no float value, so "
           << "no gradient can flow back through it";
  if (!sum) {
    sum = b.scalar(builder.getF32Type(), 0.0);
    count = b.scalar(builder.getF32Type(), 0.0);
  }

  // Candidates: every float initializer, frozen or not (a frozen one is
  // still a parameter if the loss depends on it; one without a gradient path
  // is a constant, frozen or not).
  SmallVector<unsigned> candidates;
  SmallVector<Value> wrt;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    StringRef role = argString(main, i, kRole);
    if (role == "state")
      state.push_back(i);
    if (role != "parameter")
      continue;
    if (!isDifferentiable(main.getArgument(i).getType())) {
      constants.insert(i);
      continue;
    }
    candidates.push_back(i);
    wrt.push_back(body.getArgument(i));
  }
  // A stage's received activations: the gradients sent back.
  activationArgs.clear();
  gradActivation.clear();
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (argString(main, i, kRole) == "activation") {
      if (isDifferentiable(main.getArgument(i).getType())) {
        gradActivation.push_back(activationArgs.size());
        wrt.push_back(body.getArgument(i));
      }
      activationArgs.push_back(i);
    }
  llvm::DenseSet<Operation *> forward;
  for (Operation &op : body)
    forward.insert(&op);
  for (Operation *op : seedOps)
    forward.erase(op);
  FailureOr<SmallVector<Value>> grads =
      buildGradients(micro, seedLoss, {}, wrt);
  if (failed(grads))
    return failure();
  SmallVector<Value> activationGrads(grads->begin() + candidates.size(),
                                     grads->end());
  grads->resize(candidates.size());
  // Mark the reverse sweep, so later phases (recompute, the plan's saved
  // activations) know what the backward reads.
  for (Operation &op : body)
    if (!forward.contains(&op))
      op.setAttr(kBackward, UnitAttr::get(ctx));
  // Parameters the loss does not depend on (their gradient is a zero
  // constant) are constants; of the others, the frozen ones stay parameters
  // but are not trained.
  SmallVector<Value> keptGrads;
  for (auto [index, g] : llvm::zip(candidates, *grads)) {
    auto constant = g.getDefiningOp<dtg::ConstantOp>();
    auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                          : SplatElementsAttr();
    if (splat && splat.getSplatValue<APFloat>().isZero()) {
      constants.insert(index);
      continue;
    }
    if (matchesAny(argString(main, index, kName), freeze))
      continue;
    trainable.push_back(index);
    keptGrads.push_back(g);
  }
  if (trainable.empty() && !isStage())
    return emitError(loc, "no parameter is trainable: the loss depends on none "
                          "(or all are frozen)");
  for (unsigned i : constants)
    micro.setArgAttr(i, kRole, StringAttr::get(ctx, "constant"));

  // New state: the running statistics a batch_norm_training computes.
  SmallVector<Value> newState;
  for (unsigned i : state) {
    Value arg = body.getArgument(i), next = syncedState.lookup(arg);
    if (!next)
      next = arg;
    for (OpOperand &use : arg.getUses())
      if (auto bn = dyn_cast<dtg::BatchNormTrainingOp>(use.getOwner())) {
        if (use.get() == bn.getRunningMean())
          next = bn.getNewRunningMean();
        else if (use.get() == bn.getRunningVar())
          next = bn.getNewRunningVar();
      }
    newState.push_back(next);
  }

  SmallVector<Value> results{sum, count};
  llvm::append_range(results, keptGrads);
  llvm::append_range(results, newState);
  llvm::append_range(results, activationOut);
  llvm::append_range(results, activationGrads);
  numActivationResults = activationOut.size();
  numActivationGrads = activationGrads.size();
  builder.create<func::ReturnOp>(loc, results);
  ret.erase();
  // The seed's forward ops (the products with the cotangents) are read by
  // nothing now.
  for (Operation *op : llvm::reverse(seedOps))
    if (op->use_empty())
      op->erase();
  // The gradients of frozen parameters were built only to find their
  // gradient path: drop the reverse sweep nothing reads.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (op.hasAttr(kBackward) && op.use_empty())
      op.erase();
  micro.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(),
                                          ValueRange(results).getTypes()));
  // Result roles: what the loss sum, its count and the gradients are
  // (sums over the micro-batch, which partitioning relies on), then state.
  SmallVector<DictionaryAttr> resultAttrs;
  auto roleAttr = [&](StringRef role) {
    return DictionaryAttr::get(ctx,
                               {NamedAttribute(StringAttr::get(ctx, kRole),
                                               StringAttr::get(ctx, role))});
  };
  resultAttrs.push_back(roleAttr("loss_sum"));
  resultAttrs.push_back(roleAttr("loss_count"));
  resultAttrs.append(keptGrads.size(), roleAttr("gradient"));
  resultAttrs.append(newState.size(), roleAttr("state"));
  resultAttrs.append(activationOut.size(), roleAttr("activation"));
  resultAttrs.append(activationGrads.size(), roleAttr("activation_grad"));
  micro.setAllResultAttrs(resultAttrs);
  micro.setPrivate();
  return micro;
}

/// @eval_micro_step(parameters, constants, state, micro-batch inputs): the
/// forward in eval mode (as PyTorch's model.eval()) and the loss as a sum and
/// a count, as @micro_step computes them. Training-mode ops take their eval
/// form: dtg.dropout is the identity (an all-true mask), and
/// dtg.batch_norm_training normalizes with the running statistics and
/// leaves them unchanged (dtg.batch_norm_inference). A model exported in
/// eval mode has neither, and is evaluated as exported.
FailureOr<func::FuncOp>
BuildTrainStepPass::buildEvalMicroStep(func::FuncOp main) {
  MLIRContext *ctx = &getContext();
  Location loc = main.getLoc();
  func::FuncOp eval = main.clone();
  eval.setSymName("eval_micro_step");
  getOperation().push_back(eval);
  Block &body = eval.getBody().front();
  FailureOr<Value> lossValue = findLoss(eval, loc);
  if (failed(lossValue))
    return failure();

  SmallVector<Operation *> training;
  eval.walk([&](Operation *op) {
    if (isa<dtg::DropoutOp, dtg::BatchNormTrainingOp>(op))
      training.push_back(op);
  });
  for (Operation *op : training) {
    OpBuilder builder(op);
    GradientBuilder b(builder, op->getLoc());
    if (auto dropout = dyn_cast<dtg::DropoutOp>(op)) {
      dropout.getResult().replaceAllUsesWith(dropout.getOperand());
      if (!dropout.getMask().use_empty())
        dropout.getMask().replaceAllUsesWith(
            b.splat(tensorType(dropout.getMask()), 1.0));
    } else {
      auto bn = cast<dtg::BatchNormTrainingOp>(op);
      Value y = builder.create<dtg::BatchNormInferenceOp>(
          bn.getLoc(), bn.getInput(), bn.getScale(), bn.getBias(),
          bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr());
      bn.getResult().replaceAllUsesWith(y);
      bn.getNewRunningMean().replaceAllUsesWith(bn.getRunningMean());
      bn.getNewRunningVar().replaceAllUsesWith(bn.getRunningVar());
    }
    op->erase();
  }

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder builder(ret);
  GradientBuilder b(builder, loc);
  auto [sum, count] = lossSumAndCount(b, *lossValue);
  builder.create<func::ReturnOp>(loc, ValueRange{sum, count});
  ret.erase();
  eval.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(),
                                         {sum.getType(), count.getType()}));
  auto roleAttr = [&](StringRef role) {
    return DictionaryAttr::get(ctx,
                               {NamedAttribute(StringAttr::get(ctx, kRole),
                                               StringAttr::get(ctx, role))});
  };
  eval.setAllResultAttrs(
      ArrayRef<DictionaryAttr>{roleAttr("loss_sum"), roleAttr("loss_count")});
  for (unsigned i : constants)
    eval.setArgAttr(i, kRole, StringAttr::get(ctx, "constant"));
  eval.setPrivate();
  return eval;
}

/// @eval_step: the arguments of @train_step; calls @eval_micro_step once per
/// micro-batch and returns the loss sum and count over the global batch
/// (metrics loss_sum and loss_count), so that the runtime's eval loss over
/// many batches is their total sum over their total count: PyTorch's
/// reduction='mean' over the eval set.
LogicalResult BuildTrainStepPass::buildEvalStep(func::FuncOp main,
                                                func::FuncOp train) {
  MLIRContext *ctx = &getContext();
  Location loc = main.getLoc();
  FailureOr<func::FuncOp> micro = buildEvalMicroStep(main);
  if (failed(micro))
    return failure();
  auto func = func::FuncOp::create(
      loc, "eval_step", FunctionType::get(ctx, train.getArgumentTypes(), {}));
  getOperation().push_back(func);
  Block *body = func.addEntryBlock();
  OpBuilder builder = OpBuilder::atBlockBegin(body);
  GradientBuilder b(builder, loc);
  Value sum, count;
  for (int64_t k = 0; k < microBatches; ++k) {
    SmallVector<Value> operands;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      Value arg = body->getArgument(trainArg.lookup(i));
      if (argString(main, i, kRole) != "input") {
        operands.push_back(arg);
        continue;
      }
      auto microType = tensorType(main.getArgument(i));
      int64_t rows = microType.getDimSize(0);
      SmallVector<int64_t> starts(microType.getRank(), 0),
          limits(microType.getShape()), steps(microType.getRank(), 1);
      starts[0] = k * rows;
      limits[0] = (k + 1) * rows;
      operands.push_back(b.create<dtg::SliceOp>(arg, starts, limits, steps));
    }
    auto call = builder.create<func::CallOp>(loc, *micro, operands);
    sum =
        sum ? b.create<dtg::AddOp>(sum, call.getResult(0)) : call.getResult(0);
    count = count ? b.create<dtg::AddOp>(count, call.getResult(1))
                  : call.getResult(1);
  }
  builder.create<func::ReturnOp>(loc, ValueRange{sum, count});
  Signature out;
  out.add(ctx, sum.getType(), "loss_sum", "metric");
  out.add(ctx, count.getType(), "loss_count", "metric");
  func.setFunctionType(
      FunctionType::get(ctx, train.getArgumentTypes(), out.types));
  SmallVector<DictionaryAttr> argAttrs;
  train.getAllArgAttrs(argAttrs);
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(out.attrs);
  return success();
}

SmallVector<Hyper> BuildTrainStepPass::hyperparameters() {
  Builder b(&getContext());
  Type f64 = b.getF64Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
  double wd =
      weightDecay >= 0 ? weightDecay : (optimizer == "sgd" ? 0.0 : 0.01);
  int64_t kind = lrSchedule == "linear" ? 1 : lrSchedule == "cosine" ? 2 : 0;
  SmallVector<Hyper> h{{"lr", f64, lr},
                       {"weight_decay", f64, wd},
                       {"clip_norm", f64, clipNorm},
                       {"lr_schedule", i64, double(kind)},
                       {"warmup", i64, double(warmup)},
                       {"total_steps", i64, double(totalSteps)},
                       {"min_lr", f64, minLr},
                       {"seed", i64, double(seed)}};
  if (optimizer == "sgd") {
    h.push_back({"momentum", f64, momentum});
    h.push_back({"dampening", f64, dampening});
    h.push_back({"nesterov", i1, nesterov ? 1.0 : 0.0});
  } else {
    h.push_back({"beta1", f64, beta1});
    h.push_back({"beta2", f64, beta2});
    h.push_back({"eps", f64, eps});
  }
  return h;
}

LogicalResult BuildTrainStepPass::buildTrainStep(func::FuncOp main,
                                                 func::FuncOp micro) {
  MLIRContext *ctx = &getContext();
  Location loc = main.getLoc();
  OpBuilder top(ctx);
  bool sgd = optimizer == "sgd";
  int64_t m = microBatches;

  // Signature.
  Signature in, out;
  SmallVector<unsigned> params, inputs;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    StringRef role = argString(main, i, kRole);
    Type type = main.getArgument(i).getType();
    if (role == "input") {
      inputs.push_back(i);
      continue;
    }
    if (role == "activation")
      continue; // received from the previous stage
    params.push_back(i);
    in.add(ctx, type, argString(main, i, kName),
           constants.contains(i) ? StringRef("constant") : role);
    // A weightless model's parameters (`dtc plan`) have no initial value
    // but are trained all the same.
    Attribute initial = main.getArgAttr(i, "dtg.initial");
    bool trained = llvm::is_contained(trainable, i);
    if (initial || trained)
      in.attrs.back() = [&] {
        NamedAttrList list(in.attrs.back());
        if (initial)
          list.append("dtg.initial", initial);
        if (trained)
          list.append("dtg.trainable", UnitAttr::get(ctx));
        return list.getDictionary(ctx);
      }();
    keepModelShape(main, i, in);
  }
  SmallVector<std::string> stateSuffixes =
      sgd ? SmallVector<std::string>{"momentum_buffer"}
          : SmallVector<std::string>{"exp_avg", "exp_avg_sq"};
  for (unsigned i : trainable)
    for (const std::string &suffix : stateSuffixes) {
      in.add(ctx, main.getArgument(i).getType(),
             (argString(main, i, kName) + "." + suffix).str(),
             "optimizer_state");
      keepModelShape(main, i, in);
    }
  for (unsigned i : inputs) {
    auto type = tensorType(main.getArgument(i));
    SmallVector<int64_t> shape(type.getShape());
    if (shape.empty())
      return emitError(loc, "data input '")
             << argString(main, i, kName) << "' has no sample axis";
    shape[0] *= m;
    in.add(ctx, RankedTensorType::get(shape, type.getElementType()),
           argString(main, i, kName), "input");
  }
  SmallVector<Hyper> hypers = hyperparameters();
  for (const Hyper &h : hypers) {
    Attribute value =
        isa<FloatType>(h.type)
            ? Attribute(FloatAttr::get(h.type, h.value))
            : Attribute(IntegerAttr::get(h.type, int64_t(h.value)));
    in.add(ctx, RankedTensorType::get({}, h.type), h.name, "hyper", value);
  }
  // The index of this rank's first sample in the global batch (0 on one
  // rank; set by the runtime), for dropout's keys.
  in.add(ctx, RankedTensorType::get({}, top.getI64Type()), "data_offset",
         "data_offset");
  in.add(ctx, RankedTensorType::get({}, top.getI64Type()), "step", "step");

  auto func = func::FuncOp::create(loc, "train_step",
                                   FunctionType::get(ctx, in.types, {}));
  getOperation().push_back(func);
  Block *body = func.addEntryBlock();
  OpBuilder builder = OpBuilder::atBlockBegin(body);
  GradientBuilder b(builder, loc);

  // Named views of the arguments.
  unsigned cursor = 0;
  llvm::DenseMap<unsigned, Value> paramArg;
  for (unsigned i : params) {
    trainArg[i] = cursor;
    paramArg[i] = body->getArgument(cursor++);
  }
  llvm::DenseMap<unsigned, SmallVector<Value>> optState;
  for (unsigned i : trainable)
    for (size_t k = 0; k < stateSuffixes.size(); ++k)
      optState[i].push_back(body->getArgument(cursor++));
  SmallVector<Value> batch;
  for (unsigned i : inputs) {
    trainArg[i] = cursor;
    batch.push_back(body->getArgument(cursor++));
  }
  llvm::StringMap<Value> hyper;
  for (const Hyper &h : hypers)
    hyper[h.name] = body->getArgument(cursor++);
  Value dataOffset = body->getArgument(cursor++);
  Value step = body->getArgument(cursor++);

  // Pipelines: point-to-point transfers to the stage `shift` away.
  MLIRContext *meshCtx = ctx;
  auto meshRef = FlatSymbolRefAttr::get(meshCtx, "mesh");
  // Each transfer names its message (dtc.message: the activation and the
  // micro-batch, say), the same on the sending and the receiving stage, so
  // that dtc compile can check that every stage's sends meet the peer's
  // receives in order.
  // The transfers of a micro-batch's activations and their gradients are
  // marked dtc.micro_batch_transfer: the schedule moves them with their
  // micro-batch.
  // An activation's transfers take the location of the op that made it.
  auto recvFrom = [&](Type type, int64_t shift, const Twine &message,
                      Location at, bool perMicroBatch = true) -> Value {
    auto op = builder.create<dist::RecvOp>(at, type, meshRef,
                                           builder.getStringAttr("pp"),
                                           builder.getI64IntegerAttr(shift));
    op->setAttr("dtc.message", builder.getStringAttr(message));
    if (perMicroBatch)
      op->setAttr("dtc.micro_batch_transfer", builder.getUnitAttr());
    return op.getResult();
  };
  auto sendTo = [&](Value v, int64_t shift, const Twine &message, Location at,
                    bool perMicroBatch = true) {
    auto op = builder.create<dist::SendOp>(at, v, meshRef,
                                           builder.getStringAttr("pp"),
                                           builder.getI64IntegerAttr(shift));
    op->setAttr("dtc.message", builder.getStringAttr(message));
    if (perMicroBatch)
      op->setAttr("dtc.micro_batch_transfer", builder.getUnitAttr());
  };
  // (`what` it carries names it in --explain and traces.)
  auto sumOverStages = [&](Value v, StringRef what) -> Value {
    if (!isStage() || pipelineStages == 1)
      return v;
    auto op = builder.create<dist::AllReduceOp>(
        loc, v.getType(), v,
        dist::ReduceKindAttr::get(ctx, dist::ReduceKind::Sum), meshRef,
        builder.getStrArrayAttr({"pp"}));
    op->setAttr("dtc.explain", builder.getStringAttr(what));
    return op.getResult();
  };

  // Micro-batches.
  Type i64 = builder.getI64Type();
  Value lossSum, count;
  SmallVector<Value> gradSums;
  SmallVector<Value> currentState;
  for (unsigned i : state)
    currentState.push_back(paramArg[i]);
  for (int64_t k = 0; k < m; ++k) {
    SmallVector<Value> operands;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      if (auto it = llvm::find(state, i); it != state.end()) {
        operands.push_back(currentState[it - state.begin()]);
        continue;
      }
      if (paramArg.count(i)) {
        operands.push_back(paramArg[i]);
        continue;
      }
      if (argString(main, i, kRole) == "activation") {
        operands.push_back(recvFrom(main.getArgument(i).getType(), -1,
                                    argString(main, i, kName) + "@" + Twine(k),
                                    argSource(main, i, loc)));
        continue;
      }
      Value full = batch[llvm::find(inputs, i) - inputs.begin()];
      auto microType = tensorType(main.getArgument(i));
      int64_t rows = microType.getDimSize(0);
      SmallVector<int64_t> starts(microType.getRank(), 0),
          limits(microType.getShape()), steps(microType.getRank(), 1);
      starts[0] = k * rows;
      limits[0] = (k + 1) * rows;
      operands.push_back(b.create<dtg::SliceOp>(full, starts, limits, steps));
    }
    // Dropout: the micro-batch's first sample in the global batch (this
    // rank's offset, data_offset, plus the micro-batches before it), and
    // the key (seed, step).
    int64_t microRows = 0;
    for (unsigned i : inputs)
      microRows = tensorType(main.getArgument(i)).getDimSize(0);
    for (unsigned i : activationArgs)
      if (microRows == 0)
        microRows = tensorType(main.getArgument(i)).getDimSize(0);
    operands.push_back(
        b.create<dtg::AddOp>(dataOffset, b.scalar(i64, double(k * microRows))));
    operands.push_back(b.create<dtg::ConcatOp>(
        ValueRange{b.reshape(hyper["seed"], {1}), b.reshape(step, {1})},
        int64_t(0)));
    // The next stage's gradients of this stage's results.
    for (auto [c, i] : llvm::enumerate(cotangentArgs))
      operands.push_back(recvFrom(micro.getArgument(i).getType(), 1,
                                  "d" + cotangentNames[c] + "@" + Twine(k),
                                  cotangentSources[c]));
    auto call = builder.create<func::CallOp>(loc, micro, operands);
    ValueRange r = call.getResults();
    {
      unsigned base = 2 + trainable.size() + state.size();
      for (unsigned a = 0; a < numActivationResults; ++a)
        sendTo(r[base + a], 1, activationOutNames[a] + "@" + Twine(k),
               activationOutSources[a]);
      for (unsigned a = 0; a < numActivationGrads; ++a)
        sendTo(r[base + numActivationResults + a], -1,
               "d" + argString(main, activationArgs[gradActivation[a]], kName) +
                   "@" + Twine(k),
               argSource(main, activationArgs[gradActivation[a]], loc));
    }
    lossSum = lossSum ? b.create<dtg::AddOp>(lossSum, r[0]) : r[0];
    count = count ? b.create<dtg::AddOp>(count, r[1]) : r[1];
    for (size_t g = 0; g < trainable.size(); ++g) {
      Value grad = r[2 + g];
      if (gradSums.size() <= g)
        gradSums.push_back(grad);
      else
        gradSums[g] = b.create<dtg::AddOp>(gradSums[g], grad);
    }
    for (size_t s = 0; s < state.size(); ++s)
      currentState[s] = r[2 + trainable.size() + s];
  }

  // Pipelines: the loss is the last stage's, the gradient of a parameter
  // that several stages read (tied embeddings) is the sum of theirs, added
  // in stage order on each so that every copy stays the same, and the
  // norm counts it once.
  lossSum = sumOverStages(lossSum, "the loss sum over stages");
  count = sumOverStages(count, "the loss count over stages");
  SmallVector<bool> countInNorm(gradSums.size(), true);
  if (isStage())
    for (auto [g, index] : llvm::enumerate(trainable)) {
      auto users = main.getArgAttrOfType<DenseI64ArrayAttr>(
          index, "dtc.pipeline_stages_using");
      if (!users || users.size() < 2)
        continue;
      for (int64_t t : users.asArrayRef())
        if (t != pipelineStage)
          sendTo(gradSums[g], t - pipelineStage,
                 "d" + argString(main, index, kName), loc, false);
      Value total;
      for (int64_t t : users.asArrayRef()) {
        Value part =
            t == pipelineStage
                ? gradSums[g]
                : recvFrom(gradSums[g].getType(), t - pipelineStage,
                           "d" + argString(main, index, kName), loc, false);
        total = total ? b.create<dtg::AddOp>(total, part) : part;
      }
      gradSums[g] = total;
      countInNorm[g] = users.asArrayRef().front() == pipelineStage;
    }

  // Mean over counted positions, global norm, clipping.
  Type f64 = builder.getF64Type();
  Value loss = b.create<dtg::DivOp>(lossSum, count);
  Value sumSquares;
  // (llvm::zip binds references: copy before rebinding.)
  for (auto [gi, sum] : llvm::enumerate(gradSums)) {
    if (!countInNorm[gi])
      continue;
    Type t = tensorType(sum).getElementType();
    Value g = b.create<dtg::DivOp>(sum, b.castTo(count, t));
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(0, tensorType(g).getRank()));
    Value sq = b.castTo(
        b.create<dtg::ReduceSumOp>(b.create<dtg::MulOp>(g, g), axes, false),
        f64);
    sumSquares = sumSquares ? b.create<dtg::AddOp>(sumSquares, sq) : sq;
  }
  if (!sumSquares)
    sumSquares = b.scalar(f64, 0.0);
  Value norm = b.create<dtg::SqrtOp>(
      sumOverStages(sumSquares, "the gradients' sum of squares over stages"));
  Value clip = hyper["clip_norm"];
  Value coef = b.create<dtg::DivOp>(
      clip, b.create<dtg::AddOp>(norm, b.scalar(f64, 1e-6)));
  coef = b.create<dtg::MinOp>(coef, b.scalar(f64, 1.0));
  coef =
      b.create<dtg::WhereOp>(b.create<dtg::GreaterOp>(clip, b.scalar(f64, 0.0)),
                             coef, b.scalar(f64, 1.0));

  // Learning rate and updates.
  Value k1 = b.create<dtg::AddOp>(step, b.scalar(i64, 1.0));
  Value lrK = builder.create<dtg::LrScheduleOp>(
      loc, hyper["lr"], k1, hyper["warmup"], hyper["total_steps"],
      hyper["min_lr"], hyper["lr_schedule"]);
  Value first = b.create<dtg::EqualOp>(step, b.scalar(i64, 0.0));
  Value zero = b.scalar(f64, 0.0);
  SmallVector<Value> results;
  SmallVector<Value> newParams, newOpt, applied;
  for (auto [sum, index] : llvm::zip(gradSums, trainable)) {
    Type t = tensorType(sum).getElementType();
    Value g = b.create<dtg::DivOp>(sum, b.castTo(count, t));
    g = b.create<dtg::MulOp>(g, b.castTo(coef, t));
    applied.push_back(g);
    StringRef name = argString(main, index, kName);
    Value wd = matchesAny(name, noDecay) ? zero : hyper["weight_decay"];
    Value p = paramArg[index];
    if (sgd) {
      auto update = builder.create<dtg::SgdUpdateOp>(
          loc, p, g, optState[index][0], lrK, hyper["momentum"],
          hyper["dampening"], wd, hyper["nesterov"], first);
      newParams.push_back(update.getNewParam());
      newOpt.push_back(update.getNewMomentumBuffer());
    } else {
      auto update = builder.create<dtg::AdamWUpdateOp>(
          loc, p, g, optState[index][0], optState[index][1], lrK,
          hyper["beta1"], hyper["beta2"], hyper["eps"], wd, k1);
      newParams.push_back(update.getNewParam());
      newOpt.push_back(update.getNewExpAvg());
      newOpt.push_back(update.getNewExpAvgSq());
    }
  }
  for (auto [v, index] : llvm::zip(newParams, trainable))
    out.add(ctx, v.getType(), argString(main, index, kName), "parameter");
  for (auto [v, index] : llvm::zip(currentState, state))
    out.add(ctx, v.getType(), argString(main, index, kName), "state");
  unsigned o = 0;
  for (unsigned index : trainable)
    for (const std::string &suffix : stateSuffixes) {
      out.add(ctx, newOpt[o++].getType(),
              (argString(main, index, kName) + "." + suffix).str(),
              "optimizer_state");
    }
  out.add(ctx, loss.getType(), "loss", "metric");
  out.add(ctx, lrK.getType(), "lr", "metric");
  out.add(ctx, norm.getType(), "grad_norm", "metric");
  if (returnGradients)
    for (auto [g, index] : llvm::zip(applied, trainable))
      out.add(ctx, g.getType(), argString(main, index, kName), "gradient");
  llvm::append_range(results, newParams);
  llvm::append_range(results, currentState);
  llvm::append_range(results, newOpt);
  results.push_back(loss);
  results.push_back(lrK);
  results.push_back(norm);
  if (returnGradients)
    llvm::append_range(results, applied);
  builder.create<func::ReturnOp>(loc, results);
  func.setFunctionType(FunctionType::get(ctx, in.types, out.types));
  func.setAllArgAttrs(in.attrs);
  func.setAllResultAttrs(out.attrs);
  return success();
}

LogicalResult BuildTrainStepPass::build() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no @main to train");
  for (StringRef name :
       {"train_step", "micro_step", "eval_step", "eval_micro_step"})
    if (module.lookupSymbol(name))
      return module.emitError("the module already has a training step (@")
             << name << ")";
  if (optimizer != "sgd" && optimizer != "adamw")
    return main.emitError("--optimizer must be sgd or adamw, got '")
           << optimizer << "'";
  if (lrSchedule != "constant" && lrSchedule != "linear" &&
      lrSchedule != "cosine")
    return main.emitError("--lr-schedule must be constant, linear or cosine, "
                          "got '")
           << lrSchedule << "'";
  if (microBatches < 1)
    return main.emitError("--micro-batches must be at least 1");
  if (lrSchedule != "constant" && totalSteps <= warmup)
    return main.emitError("--lr-schedule ")
           << lrSchedule << " needs --total-steps greater than --warmup";
  for (const std::string &pattern : llvm::concat<std::string>(freeze, noDecay))
    if (!llvm::GlobPattern::create(pattern))
      return main.emitError("bad parameter pattern '") << pattern << "'";
  if (isStage()) {
    if (pipelineStage >= pipelineStages)
      return main.emitError("pipeline stage ")
             << pipelineStage << " of " << pipelineStages << " does not exist";
    // The mesh the stages' transfers and sums run on.
    // (A tensor-parallel plan declared it already, with its tp.)
    MLIRContext *ctx = &getContext();
    int64_t tp = 1;
    auto existing = module.lookupSymbol<dist::MeshOp>("mesh");
    if (existing) {
      tp = existing.getMesh().getAxisSize("tp").value_or(1);
      existing.erase();
    }
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    top.create<dist::MeshOp>(
        module.getLoc(), "mesh",
        dist::MeshAttr::get(
            ctx, {dist::MeshAxis{StringAttr::get(ctx, "pp"), pipelineStages},
                  dist::MeshAxis{StringAttr::get(ctx, "dp"), meshDp},
                  dist::MeshAxis{StringAttr::get(ctx, "tp"), tp}}));
  }
  FailureOr<func::FuncOp> micro = buildMicroStep(main);
  if (failed(micro))
    return failure();
  if (failed(buildTrainStep(main, *micro)))
    return failure();
  // (A pipeline's eval step would be pipelined too: not built yet.)
  if (!isStage() && failed(buildEvalStep(
                        main, module.lookupSymbol<func::FuncOp>("train_step"))))
    return failure();
  // Batch sizes, for the runtime's descriptors and the plan.
  Builder b(&getContext());
  int64_t microRows = 0;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (argString(main, i, kRole) == "input" ||
        (microRows == 0 && argString(main, i, kRole) == "activation"))
      microRows = tensorType(main.getArgument(i)).getDimSize(0);
  module->setAttr("dtc.micro_batch", b.getI64IntegerAttr(microRows));
  module->setAttr("dtc.global_batch",
                  b.getI64IntegerAttr(microRows * microBatches));
  return success();
}
