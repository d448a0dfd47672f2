//===- GraphImporter.cpp - one ONNX graph -> one func.func ---------------===//

#include "compiler/Import/ONNX/GraphImporter.h"

#include "dialects/DTG/Interp/Interpreter.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;
using dtg::interp::Tensor;

GraphImporter::GraphImporter(MLIRContext *context,
                             const onnx::ModelProto &model, StringRef path,
                             const ImportOptions &options,
                             std::shared_ptr<const void> owner)
    : context(context), model(model), path(path.str()), options(options),
      fileLoc(FileLineColLoc::get(context, path, 0, 0)), builder(context) {
  source.owner = std::move(owner);
  source.modelDir = llvm::sys::path::parent_path(path).str();
  if (source.modelDir.empty())
    source.modelDir = ".";
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
}

Location GraphImporter::nodeLocation(const onnx::NodeProto &node,
                                     unsigned index) {
  std::string name = node.name();
  if (name.empty())
    name = node.op_type() + "#" + std::to_string(index);
  return NameLoc::get(StringAttr::get(context, name), fileLoc);
}

LogicalResult GraphImporter::collectInitializers() {
  for (const onnx::TensorProto &proto : model.graph().initializer()) {
    // ModelValidator has checked names, types and dims.
    SmallVector<int64_t> shape;
    Type type;
    TensorOrError check = readTensorProtoType(context, proto, shape, type,
                                              options.maxTensorElements());
    if (!check.error.empty())
      return emitError(fileLoc, "initializer ") << check.error;
    initializers.try_emplace(
        proto.name(),
        Initializer{&proto, RankedTensorType::get(shape, type), {}, "", false});
  }
  // Running statistics of BatchNormalization are model state.
  for (const onnx::NodeProto &node : model.graph().node())
    if (node.op_type() == "BatchNormalization")
      for (int i = 3; i < 5 && i < node.input_size(); ++i)
        stateNames.insert(node.input(i));
  return success();
}

LogicalResult GraphImporter::collectInputs() {
  // A shape for an input the model does not have is a typo, not a no-op (and
  // likely why another input has no shape).
  llvm::StringSet<> dataInputs;
  std::string names;
  for (const onnx::ValueInfoProto &info : model.graph().input())
    if (!initializers.count(info.name()) &&
        dataInputs.insert(info.name()).second)
      names += (names.empty() ? "'" : ", '") + info.name() + "'";
  for (const auto &entry : options.inputShapes)
    if (!dataInputs.contains(entry.getKey()))
      return emitError(fileLoc, "--input-shape names '")
             << entry.getKey() << "', which is not a data input of the model "
             << "(its data inputs: " << (names.empty() ? "none" : names) << ")";
  for (const onnx::ValueInfoProto &info : model.graph().input()) {
    const std::string &name = info.name();
    if (initializers.count(name))
      continue; // IR < 4 lists initializers among the inputs.
    if (name.empty())
      return emitError(fileLoc, "a graph input has no name");
    if (!info.type().has_tensor_type()) {
      failureKind = ImportFailure::Unsupported;
      return emitError(fileLoc, "input '")
             << name
             << "' is not a tensor (sequences and maps are not "
                "supported)";
    }
    const auto &tensorType = info.type().tensor_type();
    Type elementType = convertDataType(context, tensorType.elem_type());
    if (!elementType) {
      failureKind = ImportFailure::Unsupported;
      return emitError(fileLoc, "input '")
             << name << "' has " << dataTypeName(tensorType.elem_type())
             << " elements, which dtc does not support";
    }
    if (auto dtype = options.inputTypes.find(name);
        dtype != options.inputTypes.end() &&
        elementTypeNamed(context, dtype->second) != elementType)
      return emitError(fileLoc, "--input-shape gives input '")
             << name << "' the dtype " << dtype->second
             << ", but the model's holds " << elementType;
    GraphInput input;
    SmallVector<int64_t> shape;
    auto given = options.inputShapes.find(name);
    auto bindable = options.bindableInputs.find(name);
    if (given != options.inputShapes.end()) {
      shape.assign(given->second.begin(), given->second.end());
      if (tensorType.has_shape() &&
          tensorType.shape().dim_size() != static_cast<int>(shape.size()))
        return emitError(fileLoc, "--input-shape gives input '")
               << name << "' rank " << shape.size() << ", but the model says "
               << tensorType.shape().dim_size();
    } else if (bindable != options.bindableInputs.end()) {
      // Data given for the input (a conformance test) fixes its shape.
      shape.assign(bindable->second.shape.begin(),
                   bindable->second.shape.end());
    } else if (!tensorType.has_shape()) {
      if (bindable == options.bindableInputs.end())
        return emitError(fileLoc, "input '")
               << name << "' has no shape: give one with --input-shape " << name
               << "=DIMxDIM";
      shape.assign(bindable->second.shape.begin(),
                   bindable->second.shape.end());
    } else {
      for (auto [axis, dim] : llvm::enumerate(tensorType.shape().dim())) {
        bool known = dim.has_dim_value() && dim.dim_value() >= 0;
        if (axis == 0 && options.batch) {
          if (known && dim.dim_value() != *options.batch)
            input.exportedBatch = dim.dim_value();
          shape.push_back(*options.batch);
        } else if (known) {
          shape.push_back(dim.dim_value());
        } else if (bindable != options.bindableInputs.end() &&
                   bindable->second.rank() == tensorType.shape().dim_size()) {
          shape.push_back(bindable->second.shape[axis]);
        } else {
          std::string what =
              dim.has_dim_param() && !dim.dim_param().empty()
                  ? "symbolic dimension '" + dim.dim_param() + "'"
                  : "an unknown dimension";
          auto diag = emitError(fileLoc, "input '")
                      << name << "' has " << what << " at axis " << axis
                      << ": bind it with ";
          if (axis == 0)
            diag << "--batch N or ";
          diag << "--input-shape " << name << "=DIMxDIM";
          return diag;
        }
      }
    }
    for (int64_t d : shape)
      if (d < 0)
        return emitError(fileLoc, "input '") << name << "' has a negative size";
    if (exceedsElementLimit(shape, options.maxTensorElements()))
      return emitError(fileLoc, "input '")
             << name << "' of shape " << shapeText(shape) << " has more than "
             << elementLimitText(options.maxTensorElements()) << " elements";
    input.type = RankedTensorType::get(shape, elementType);
    if (input.exportedBatch)
      rebinding = std::make_pair(*input.exportedBatch, *options.batch);
    inputs[name] = input;
  }
  return success();
}

BlockArgument GraphImporter::addArgument(StringRef name, RankedTensorType type,
                                         StringRef role, Attribute initial) {
  NamedAttrList attributes;
  attributes.append(attrs::kName, StringAttr::get(context, name));
  attributes.append(attrs::kRole, StringAttr::get(context, role));
  if (initial)
    attributes.append(attrs::kInitial, initial);
  unsigned index = body->getNumArguments();
  func.insertArgument(index, type, attributes.getDictionary(context), fileLoc);
  BlockArgument arg = body->getArgument(index);
  values[name] = arg;
  return arg;
}

const Tensor *GraphImporter::initializerValue(Initializer &init) {
  if (!init.value && init.readError.empty()) {
    TensorOrError read = readTensorProto(context, *init.proto, source);
    if (read.tensor)
      init.value = std::move(read.tensor);
    else {
      init.readError = read.error;
      init.missing = read.externalDataMissing;
      if (read.unsupportedType)
        failureKind = ImportFailure::Unsupported;
    }
  }
  return init.value ? &*init.value : nullptr;
}

Value GraphImporter::lookup(StringRef name, Location loc) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  if (sequences.count(name)) {
    failureKind = ImportFailure::Unsupported;
    emitError(loc, "'") << name
                        << "' is a sequence, which only the sequence ops "
                           "(SequenceAt, ConcatFromSequence, ...) may read";
    return nullptr;
  }
  auto init = initializers.find(name.str());
  if (init != initializers.end()) {
    Initializer &initializer = init->second;
    bool isFloat = isa<FloatType>(initializer.type.getElementType());
    if (isFloat) {
      // A parameter (or state): its bytes go to a resource blob as they
      // are, never through an interpreter tensor.
      AttrOrError read = readTensorProtoResource(
          context, *initializer.proto, source, options.maxTensorElements());
      if (read.unsupportedType)
        failureKind = ImportFailure::Unsupported;
      if (!read.attr &&
          !(read.externalDataMissing && !options.requireWeights)) {
        emitError(loc, "initializer ") << read.error;
        return nullptr;
      }
      return addArgument(name, initializer.type,
                         stateNames.contains(name) ? "state" : "parameter",
                         read.attr);
    }
    // Integers are constants (shapes, indices, masks).
    const Tensor *value = initializerValue(initializer);
    if (!value) {
      emitError(loc, "initializer ") << initializer.readError;
      return nullptr;
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    Value constant = builder.create<dtg::ConstantOp>(
        fileLoc, dtg::interp::tensorToAttr(*value));
    values[name] = constant;
    return constant;
  }
  auto input = inputs.find(name);
  if (input != inputs.end())
    return addArgument(name, input->second.type, "input", Attribute());
  emitError(loc, "value '") << name << "' is not defined";
  return nullptr;
}

std::optional<Tensor> GraphImporter::lookupConstant(StringRef name) {
  auto it = values.find(name);
  if (it != values.end()) {
    Value value = it->second;
    if (auto constant = value.getDefiningOp<dtg::ConstantOp>()) {
      FailureOr<Tensor> t = dtg::interp::tensorFromAttr(constant.getValue());
      if (succeeded(t))
        return std::move(*t);
      return std::nullopt;
    }
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      return std::nullopt;
    auto init = initializers.find(name.str());
    if (init != initializers.end()) {
      const Tensor *t = initializerValue(init->second);
      return t ? std::optional<Tensor>(*t) : std::nullopt;
    }
    auto bindable = options.bindableInputs.find(name);
    if (bindable == options.bindableInputs.end() ||
        bindable->second.getType() != arg.getType())
      return std::nullopt;
    // A bindable input already used as data becomes a constant everywhere.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    Value constant = builder.create<dtg::ConstantOp>(
        fileLoc, dtg::interp::tensorToAttr(bindable->second));
    arg.replaceAllUsesWith(constant);
    unsigned index = arg.getArgNumber();
    func.eraseArgument(index);
    values[name] = constant;
    return bindable->second;
  }
  auto init = initializers.find(name.str());
  if (init != initializers.end()) {
    const Tensor *t = initializerValue(init->second);
    return t ? std::optional<Tensor>(*t) : std::nullopt;
  }
  auto bindable = options.bindableInputs.find(name);
  auto input = inputs.find(name);
  if (bindable != options.bindableInputs.end() && input != inputs.end() &&
      bindable->second.getType() == input->second.type) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    values[name] = builder.create<dtg::ConstantOp>(
        fileLoc, dtg::interp::tensorToAttr(bindable->second));
    return bindable->second;
  }
  return std::nullopt;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index) {
  Location loc = nodeLocation(node, index);
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    failureKind = ImportFailure::Unsupported;
    return emitError(loc, "op '") << node.op_type() << "' of domain '"
                                  << node.domain() << "' is not supported";
  }
  Handler handler = getHandlerRegistry().lookup(node.op_type(), opset);
  if (!handler) {
    failureKind = ImportFailure::Unsupported;
    return emitError(loc, "op '")
           << node.op_type() << "' (opset " << opset << ") is not supported";
  }
  // ONNX defines 8-bit floats and 4-bit integers for the ops that convert
  // and move data only (Cast's table of opset 19, int4.md for opset 21):
  // arithmetic on them has no meaning to match.
  static const llvm::StringSet<> kNarrowTypeOps = {
      "Cast",    "CastLike",  "Constant", "ConstantOfShape", "Identity",
      "Reshape", "Shape",     "Size",     "Flatten",         "Pad",
      "Squeeze", "Unsqueeze", "Transpose"};
  if (!kNarrowTypeOps.contains(node.op_type()))
    for (const std::string &name : node.input()) {
      auto it = values.find(name);
      if (name.empty() || it == values.end())
        continue;
      Type element = cast<ShapedType>(it->second.getType()).getElementType();
      if (!dtg::interp::isFloat8(element) && !dtg::interp::isInt4(element))
        continue;
      failureKind = ImportFailure::Unsupported;
      return emitError(loc, "op '")
             << node.op_type() << "' does not take " << element
             << " elements (input '" << name
             << "'): ONNX has 8-bit floats and 4-bit integers only in casts "
                "and ops that move data";
    }
  NodeImporter importer(*this, node, loc, builder, opset);
  if (failed(handler(importer)))
    return failure();
  for (auto [i, name] : llvm::enumerate(node.output()))
    if (!name.empty() && !values.count(name) && !sequences.count(name)) {
      failureKind = ImportFailure::Unsupported;
      return emitError(loc, "output #")
             << i << " ('" << name << "') of " << node.op_type()
             << " is not supported";
    }
  return success();
}

void GraphImporter::warnIfOptimizedExport() {
  if (model.producer_name() != "pytorch")
    return;
  // torch.onnx.export(..., dynamo=True) with optimize=True (its default)
  // names the constants it folds val_N: transposed weights become new
  // parameters, a tied weight two, and eval-mode BatchNormalization
  // disappears into the convolution before it.
  SmallVector<StringRef> folded;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto role = func.getArgAttrOfType<StringAttr>(i, attrs::kRole);
    auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kName);
    if (!role || role.getValue() != "parameter" || !name)
      continue;
    StringRef number = name.getValue();
    unsigned n;
    if (number.consume_front("val_") && !number.getAsInteger(10, n))
      folded.push_back(name.getValue());
  }
  if (folded.empty())
    return;
  emitWarning(fileLoc) << folded.size()
                       << " parameters have the names PyTorch 2's exporter "
                          "gives the constants its optimizer folds ('"
                       << folded.front()
                       << "', ...): the export was optimized for inference, "
                          "which unties tied weights and folds eval-mode "
                          "BatchNormalization into convolutions; to train as "
                          "PyTorch does, export with "
                          "torch.onnx.export(..., dynamo=True, "
                          "optimize=False)";
}

LogicalResult
GraphImporter::addAppendedLossValues(SmallVectorImpl<std::string> &names,
                                     SmallVectorImpl<Value> &results) {
  const AppendedLoss &loss = *options.appendedLoss;
  // The training step checks the names and kinds; here only what the graph
  // must provide for them.
  Value logits;
  for (auto [name, value] : llvm::zip(names, results))
    if (name == loss.logits)
      logits = value;
  if (!logits && !loss.logits.empty()) {
    if (!values.count(loss.logits) && !initializers.count(loss.logits) &&
        !inputs.count(loss.logits)) {
      failureKind = ImportFailure::Invalid;
      return emitError(fileLoc, "--logits: the model has no value '")
             << loss.logits << "'";
    }
    logits = lookup(loss.logits, fileLoc);
    if (!logits)
      return failure();
    names.push_back(loss.logits);
    results.push_back(logits);
  }
  if (!logits || loss.labels.empty() || inputs.count(loss.labels))
    return success();
  if (values.count(loss.labels) || initializers.count(loss.labels)) {
    failureKind = ImportFailure::Invalid;
    return emitError(fileLoc, "--labels '")
           << loss.labels << "' is a value of the model, not an input";
  }
  addAppendedLossLabels(func, logits, loss);
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> GraphImporter::run() {
  module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  func = builder.create<func::FuncOp>(fileLoc, "main",
                                      FunctionType::get(context, {}, {}));
  body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  if (failed(collectInitializers()) || failed(collectInputs()))
    return failure();
  // Data inputs come first, in graph order; bindable ones are added when
  // first used as data (or not at all if they end up constants).
  for (const onnx::ValueInfoProto &info : model.graph().input())
    if (inputs.count(info.name()) && !options.bindableInputs.count(info.name()))
      addArgument(info.name(), inputs[info.name()].type, "input", Attribute());

  for (auto [index, node] : llvm::enumerate(model.graph().node()))
    if (failed(importNode(node, index)))
      return failure();

  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    if (sequences.count(output.name())) {
      failureKind = ImportFailure::Unsupported;
      return emitError(fileLoc, "graph output '")
             << output.name() << "' is a sequence, which dtc does not "
             << "support as an output";
    }
    Value value = lookup(output.name(), fileLoc);
    if (!value)
      return failure();
    results.push_back(value);
    names.push_back(output.name());
  }
  if (options.appendedLoss && failed(addAppendedLossValues(names, results)))
    return failure();
  // Bindable inputs never used stay in the signature, so callers can feed
  // every input the model declares.
  for (const onnx::ValueInfoProto &info : model.graph().input())
    if (inputs.count(info.name()) && !values.count(info.name()))
      addArgument(info.name(), inputs[info.name()].type, "input", Attribute());
  builder.setInsertionPointToEnd(body);
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(FunctionType::get(context, body->getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, attrs::kName, StringAttr::get(context, name));
  if (options.forTraining)
    warnIfOptimizedExport();
  if (failed(verify(*module)))
    return failure();
  return std::move(module);
}
