//===- NodeImporter.cpp - what an op handler sees of the importer --------===//

#include "compiler/Import/ONNX/NodeImporter.h"

#include "compiler/Import/ONNX/GraphImporter.h"
#include "dialects/DTG/Interp/Interpreter.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using dtg::interp::Tensor;

/// Largest result (elements) the importer folds while importing.
static constexpr int64_t kMaxFoldElements = int64_t(1) << 22;

NodeImporter::NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
                           Location loc, OpBuilder &builder, int64_t opset)
    : node(node), loc(loc), builder(builder), opset(opset), graph(graph) {}

bool NodeImporter::hasInput(unsigned i) const {
  return static_cast<int>(i) < node.input_size() && !node.input(i).empty();
}

FailureOr<Value> NodeImporter::input(unsigned i) {
  if (!hasInput(i))
    return fail("input #" + Twine(i) + " is missing");
  Value value = graph.lookup(node.input(i), loc);
  if (!value)
    return failure();
  return value;
}

Value NodeImporter::optionalInput(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  return graph.lookup(node.input(i), loc);
}

std::optional<Tensor> NodeImporter::maybeConstantInput(unsigned i) {
  if (!hasInput(i))
    return std::nullopt;
  return graph.lookupConstant(node.input(i));
}

FailureOr<Tensor> NodeImporter::constantInput(unsigned i) {
  if (!hasInput(i))
    return fail("input #" + Twine(i) + " is missing");
  std::optional<Tensor> value = graph.lookupConstant(node.input(i));
  if (!value) {
    // An initializer whose data does not read: say why.
    auto init = graph.initializers.find(node.input(i));
    if (init != graph.initializers.end() && !init->second.readError.empty() &&
        !init->second.missing)
      return emitError(loc, "initializer ") << init->second.readError;
    graph.failureKind = ImportFailure::Unsupported;
    return emitError(loc, node.op_type())
           << ": input #" << i << " ('" << node.input(i)
           << "') must be a compile-time constant (dtc needs static shapes)";
  }
  return std::move(*value);
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(unsigned i) {
  FailureOr<Tensor> value = constantInput(i);
  if (failed(value))
    return failure();
  if (value->isFloat())
    return fail("input #" + Twine(i) + " must hold integers");
  return SmallVector<int64_t>(value->i.begin(), value->i.end());
}

const onnx::AttributeProto *NodeImporter::findAttr(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeImporter::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr && attr->has_i() ? attr->i() : defaultValue;
}

double NodeImporter::getFloat(StringRef name, double defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr && attr->has_f() ? attr->f() : defaultValue;
}

std::string NodeImporter::getString(StringRef name,
                                    StringRef defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr && attr->has_s() ? attr->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>>
NodeImporter::getInts(StringRef name) const {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<double>>
NodeImporter::getFloats(StringRef name) const {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<double>(attr->floats().begin(), attr->floats().end());
}

FailureOr<Tensor> NodeImporter::getTensorAttr(StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !attr->has_t())
    return fail("attribute '" + name + "' (a tensor) is missing");
  TensorOrError read =
      readTensorProto(builder.getContext(), attr->t(), graph.source);
  if (!read.tensor) {
    LogicalResult result = fail("attribute '" + name + "': " + read.error);
    if (read.unsupportedType)
      graph.failureKind = ImportFailure::Unsupported;
    return result;
  }
  return std::move(*read.tensor);
}

FailureOr<Operation *> mlir::dtc::createInferred(
    OpBuilder &builder, Location loc, StringRef opName, ValueRange operands,
    ArrayRef<NamedAttribute> attributes, TypeRange resultTypes,
    unsigned numResults, std::string &internalError) {
  MLIRContext *context = builder.getContext();
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addAttributes(attributes);
  bool infer = resultTypes.empty();
  if (infer)
    state.addTypes(SmallVector<Type>(numResults, NoneType::get(context)));
  else
    state.addTypes(resultTypes);
  Operation *op = builder.create(state);
  if (!infer)
    return op;
  auto inferable = dyn_cast<InferTypeOpInterface>(op);
  if (!inferable) {
    op->erase();
    internalError =
        "internal: '" + opName.str() + "' needs explicit result types";
    return failure();
  }
  SmallVector<Type> types;
  if (failed(inferable.inferReturnTypes(
          context, loc, op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types))) {
    op->erase();
    return failure();
  }
  if (types.size() != op->getNumResults()) {
    op->erase();
    internalError =
        "internal: '" + opName.str() + "' inferred the wrong result count";
    return failure();
  }
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return op;
}

int64_t mlir::dtc::nextDropoutStream(Block *block) {
  return llvm::count_if(*block,
                        [](Operation &op) { return isa<dtg::DropoutOp>(op); });
}

FailureOr<SmallVector<Value>>
NodeImporter::create(StringRef opName, ValueRange operands,
                     ArrayRef<NamedAttribute> attributes, TypeRange resultTypes,
                     unsigned numResults) {
  std::string internalError;
  FailureOr<Operation *> created =
      createInferred(builder, loc, opName, operands, attributes, resultTypes,
                     numResults, internalError);
  if (failed(created))
    return internalError.empty() ? failure() : fail(internalError);
  Operation *op = *created;
  for (Type type : op->getResultTypes())
    if (auto tensorType = dyn_cast<RankedTensorType>(type))
      if (tensorType.hasStaticShape() &&
          exceedsElementLimit(tensorType.getShape(),
                              options().maxTensorElements())) {
        op->erase();
        return fail("result of shape " + shapeText(tensorType.getShape()) +
                    " has more than " +
                    elementLimitText(options().maxTensorElements()) +
                    " elements");
      }
  if (failed(verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> results(op->getResults());

  // Fold ops on constants now, so shape computations become constants. Ops
  // whose work grows faster than their operands and results (contractions,
  // windows whose size is an attribute) are left to the clean-up pipeline:
  // a hostile model could make them take hours here.
  if (isa<dtg::DropoutOp>(op) ||
      dtg::interp::estimateWork(op) > dtg::interp::kMaxFoldWork)
    return results;
  SmallVector<Tensor> values;
  int64_t elements = 0;
  for (Type type : op->getResultTypes())
    elements += llvm::cast<RankedTensorType>(type).getNumElements();
  if (elements > kMaxFoldElements)
    return results;
  for (Value operand : op->getOperands()) {
    auto constant = operand.getDefiningOp<dtg::ConstantOp>();
    if (!constant)
      return results;
    FailureOr<Tensor> value = dtg::interp::tensorFromAttr(constant.getValue());
    if (failed(value))
      return results;
    values.push_back(std::move(*value));
  }
  FailureOr<SmallVector<Tensor>> folded = dtg::interp::evaluateOp(op, values);
  if (failed(folded)) {
    op->erase();
    return failure();
  }
  SmallVector<Value> constants;
  for (const Tensor &t : *folded)
    constants.push_back(
        builder.create<dtg::ConstantOp>(loc, dtg::interp::tensorToAttr(t)));
  op->erase();
  return constants;
}

Value NodeImporter::constant(const Tensor &value) {
  return builder.create<dtg::ConstantOp>(loc, dtg::interp::tensorToAttr(value));
}

Value NodeImporter::scalar(Type elementType, double value) {
  Tensor t = Tensor::zeros(elementType, {});
  t.set(0, value);
  return constant(t);
}

FailureOr<Value> NodeImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = typeOf(value);
  if (type.getShape() == shape)
    return value;
  FailureOr<SmallVector<Value>> results =
      create(dtg::ReshapeOp::getOperationName(), value, {},
             RankedTensorType::get(shape, type.getElementType()));
  if (failed(results))
    return failure();
  return results->front();
}

FailureOr<Value> NodeImporter::castTo(Value value, Type elementType,
                                      ArrayRef<NamedAttribute> attrs) {
  auto type = typeOf(value);
  if (type.getElementType() == elementType)
    return value;
  FailureOr<SmallVector<Value>> results =
      create(dtg::CastOp::getOperationName(), value, attrs,
             RankedTensorType::get(type.getShape(), elementType));
  if (failed(results))
    return failure();
  return results->front();
}

NamedAttribute NodeImporter::i64Attr(StringRef name, int64_t value) {
  return builder.getNamedAttr(name, builder.getI64IntegerAttr(value));
}
NamedAttribute NodeImporter::f64Attr(StringRef name, double value) {
  return builder.getNamedAttr(name, builder.getF64FloatAttr(value));
}
NamedAttribute NodeImporter::boolAttr(StringRef name, bool value) {
  return builder.getNamedAttr(name, builder.getBoolAttr(value));
}
NamedAttribute NodeImporter::strAttr(StringRef name, StringRef value) {
  return builder.getNamedAttr(name, builder.getStringAttr(value));
}
NamedAttribute NodeImporter::i64ArrayAttr(StringRef name,
                                          ArrayRef<int64_t> values) {
  return builder.getNamedAttr(name, builder.getDenseI64ArrayAttr(values));
}

bool NodeImporter::hasOutput(unsigned i) const {
  return static_cast<int>(i) < node.output_size() && !node.output(i).empty();
}

FailureOr<SmallVector<Value>> NodeImporter::inputSequence(unsigned i) {
  if (!hasInput(i))
    return fail("input #" + Twine(i) + " is missing");
  auto it = graph.sequences.find(node.input(i));
  if (it == graph.sequences.end())
    return fail("input #" + Twine(i) + " ('" + node.input(i) +
                "') is not a sequence");
  return it->second;
}

LogicalResult NodeImporter::setOutputSequence(unsigned i,
                                              ArrayRef<Value> values) {
  if (!hasOutput(i))
    return success();
  graph.sequences[node.output(i)].assign(values.begin(), values.end());
  return success();
}

LogicalResult NodeImporter::setOutput(unsigned i, Value value) {
  if (!hasOutput(i))
    return success();
  graph.values[node.output(i)] = value;
  return success();
}

LogicalResult NodeImporter::fail(const Twine &message) {
  graph.failureKind = ImportFailure::Invalid;
  return emitError(loc, node.op_type()) << ": " << message;
}

LogicalResult NodeImporter::unsupported(const Twine &what) {
  graph.failureKind = ImportFailure::Unsupported;
  return emitError(loc, node.op_type()) << ": " << what << " is not supported";
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= rank)
    return fail(what + " " + Twine(axis) + " is out of range for rank " +
                Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

StringRef NodeImporter::producer() const { return graph.model.producer_name(); }

const ImportOptions &NodeImporter::options() const { return graph.options; }

std::optional<std::pair<int64_t, int64_t>>
NodeImporter::batchRebinding() const {
  return graph.rebinding;
}

void HandlerRegistry::add(StringRef opType, int64_t sinceVersion,
                          Handler handler) {
  handlers[opType].push_back({sinceVersion, handler});
}

Handler HandlerRegistry::lookup(StringRef opType, int64_t opset) const {
  auto it = handlers.find(opType);
  if (it == handlers.end())
    return nullptr;
  Handler best = nullptr;
  int64_t bestVersion = -1;
  for (auto [version, handler] : it->second)
    if (version <= opset && version > bestVersion) {
      best = handler;
      bestVersion = version;
    }
  return best;
}

const HandlerRegistry &mlir::dtc::onnx_import::getHandlerRegistry() {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    registerElementwiseHandlers(r);
    registerShapeHandlers(r);
    registerNNHandlers(r);
    registerReductionHandlers(r);
    registerSequenceHandlers(r);
    registerResizeHandlers(r);
    return r;
  }();
  return registry;
}
