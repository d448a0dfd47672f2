//===- ModelLoader.cpp - read, validate and upgrade an ONNX model --------===//
//
// libonnx's checker and converters throw and were not written for hostile
// input, so the model is validated here first (sizes, references, cycles),
// and everything libonnx raises is caught.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ONNX/GraphImporter.h"
#include "compiler/Import/ONNX/ONNXImporter.h"
#include "compiler/Import/ONNX/OpsetUpgrade.h"
#include "compiler/Support/MappedWeights.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>

#include <deque>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::onnx_import;

/// Oldest and newest opset of the default domain that dtc imports directly.
static constexpr int64_t kMinOpset = 13;
static constexpr int64_t kMaxOpset = 21;

/// The part of a libonnx exception message that says what went wrong: its
/// first line, without the "FILE:LINE: FUNCTION: Assertion `...` failed: "
/// prefixes of ONNX_ASSERT.
static StringRef libonnxReason(StringRef message) {
  message = message.split('\n').first.trim();
  constexpr StringLiteral kFailed = "failed: ";
  size_t failed = message.rfind(kFailed);
  if (failed != StringRef::npos)
    message = message.drop_front(failed + kFailed.size());
  // "./onnx/common/ir.h:259: find: required undefined attribute 'value'"
  SmallVector<StringRef, 3> parts;
  message.split(parts, ": ", /*MaxSplit=*/2);
  if (parts.size() == 3) {
    auto [file, line] = parts[0].rsplit(':');
    unsigned lineNumber;
    if (!file.empty() && !line.getAsInteger(10, lineNumber))
      message = parts[2];
  }
  return message.empty() ? StringRef("unknown error") : message;
}

namespace {
/// Checks a parsed model and sorts its nodes topologically, in place.
class ModelValidator {
public:
  ModelValidator(onnx::ModelProto &model, Location loc,
                 ImportFailure &failureKind, int64_t maxElements)
      : model(model), loc(loc), failureKind(failureKind),
        maxElements(maxElements) {}

  LogicalResult checkHeader(int64_t &opset);
  LogicalResult checkGraph();
  /// Checks what ONNX's version converter assumes of a model at `opset`
  /// (and crashes on otherwise): nodes that match their schemas, and, below
  /// IR version 4, initializers listed among the graph inputs.
  LogicalResult checkForConverter(int64_t opset);

private:
  LogicalResult unsupported(const Twine &message) {
    failureKind = ImportFailure::Unsupported;
    return emitError(loc, message);
  }
  LogicalResult invalid(const Twine &message) {
    failureKind = ImportFailure::Invalid;
    return emitError(loc, message);
  }

  onnx::ModelProto &model;
  Location loc;
  ImportFailure &failureKind;
  int64_t maxElements;
};
} // namespace

LogicalResult ModelValidator::checkHeader(int64_t &opset) {
  if (!model.has_graph() || model.ir_version() <= 0)
    return invalid("not an ONNX model (no graph or IR version)");
  std::optional<int64_t> defaultOpset;
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      defaultOpset = entry.version();
  opset = defaultOpset.value_or(1);
  if (!defaultOpset) {
    if (model.opset_import_size() > 0)
      return unsupported("the model uses only the domain '" +
                         model.opset_import(0).domain() +
                         "', which is not supported");
    if (model.ir_version() >= 3)
      return invalid("the model imports no opset of the default ONNX domain");
    // IR < 3 had no opset_import; ONNX treats it as opset 1.
  }
  if (opset < 1)
    return invalid("the model imports opset " + Twine(opset) +
                   " of the default ONNX domain, which does not exist");
  if (opset > kMaxOpset)
    return unsupported("opset " + Twine(opset) +
                       " is not supported (dtc imports opsets up to " +
                       Twine(kMaxOpset) +
                       "; export with opset_version=" + Twine(kMaxOpset) + ")");
  return success();
}

LogicalResult ModelValidator::checkGraph() {
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringSet<> defined;
  for (const auto &init : graph.initializer()) {
    if (init.name().empty())
      return invalid("an initializer has no name");
    SmallVector<int64_t> shape;
    Type type;
    TensorOrError check =
        readTensorProtoType(loc.getContext(), init, shape, type, maxElements);
    if (!check.error.empty()) {
      if (check.unsupportedType)
        return unsupported("initializer " + check.error);
      return invalid("initializer " + check.error);
    }
    if (!defined.insert(init.name()).second)
      return invalid("initializer '" + init.name() + "' is defined twice");
  }
  for (const auto &init : graph.sparse_initializer())
    return unsupported("sparse initializer '" + init.values().name() +
                       "' is not supported");
  llvm::StringSet<> inputNames;
  for (const auto &input : graph.input()) {
    if (!inputNames.insert(input.name()).second)
      return invalid("graph input '" + input.name() + "' is listed twice");
    defined.insert(input.name());
  }

  // Producers of each name; reject names produced twice.
  llvm::StringMap<int> producer;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.type() == onnx::AttributeProto::GRAPH ||
          attr.type() == onnx::AttributeProto::GRAPHS || attr.has_g() ||
          attr.graphs_size() > 0)
        return unsupported("node '" + node.name() + "' (" + node.op_type() +
                           ") has a subgraph; control flow is not supported");
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (defined.contains(output) ||
          !producer.try_emplace(output, index).second)
        return invalid("value '" + output + "' is defined more than once " +
                       "(again by node '" + node.name() + "', " +
                       node.op_type() + ")");
    }
  }
  // Kahn's algorithm over node indices.
  int n = graph.node_size();
  std::vector<int> pending(n, 0);
  std::vector<SmallVector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto &node = graph.node(i);
    for (const std::string &input : node.input()) {
      if (input.empty() || defined.contains(input))
        continue;
      auto it = producer.find(input);
      if (it == producer.end())
        return invalid("node '" + node.name() + "' (" + node.op_type() +
                       ") reads '" + input + "', which nothing defines");
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::deque<int> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0)
        ready.push_back(c);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i] > 0)
        return invalid("the graph has a cycle through node '" +
                       graph.node(i).name() + "' (" + graph.node(i).op_type() +
                       ")");
  }
  for (const auto &output : graph.output())
    if (!defined.contains(output.name()) && !producer.count(output.name()))
      return invalid("graph output '" + output.name() + "' is not defined");
  bool sorted = true;
  for (int i = 0; i < n; ++i)
    sorted &= order[i] == i;
  if (!sorted) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order)
      *nodes.Add() = graph.node(i);
    graph.mutable_node()->Swap(&nodes);
  }
  return success();
}

LogicalResult ModelValidator::checkForConverter(int64_t opset) {
  const onnx::GraphProto &graph = model.graph();
  if (model.ir_version() < 4) {
    llvm::StringSet<> inputs;
    for (const auto &input : graph.input())
      inputs.insert(input.name());
    for (const auto &init : graph.initializer())
      if (!inputs.contains(init.name()))
        return invalid("initializer '" + init.name() +
                       "' is not a graph input, which IR version " +
                       Twine(model.ir_version()) + " requires");
  }
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    std::string name = node.name().empty()
                           ? node.op_type() + "#" + std::to_string(index)
                           : node.name();
    Location nodeLoc =
        NameLoc::get(StringAttr::get(loc.getContext(), name), loc);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      failureKind = ImportFailure::Unsupported;
      return emitError(nodeLoc, "op '")
             << node.op_type() << "' of domain '" << node.domain()
             << "' is not supported";
    }
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
    if (!schema) {
      failureKind = ImportFailure::Unsupported;
      return emitError(nodeLoc, "op '")
             << node.op_type() << "' is not in ONNX opset " << opset;
    }
    std::optional<std::string> error;
    try {
      schema->Verify(node);
    } catch (const std::exception &e) {
      error = e.what();
    } catch (...) {
      error = "unknown error";
    }
    if (error) {
      failureKind = ImportFailure::Invalid;
      return emitError(nodeLoc, node.op_type())
             << " does not match its opset-" << opset
             << " schema: " << libonnxReason(*error);
    }
  }
  return success();
}

int64_t ImportOptions::maxTensorElements() const {
  return requireWeights ? kMaxTensorElements : kMaxPlannedElements;
}

bool mlir::dtc::isElementTypeName(StringRef name) {
  return llvm::is_contained({"float32", "float", "float64", "double", "float16",
                             "half", "bfloat16", "int64", "long", "int32",
                             "int", "bool"},
                            name);
}

Type mlir::dtc::elementTypeNamed(MLIRContext *context, StringRef name) {
  Builder b(context);
  if (name == "float64" || name == "double")
    return b.getF64Type();
  if (name == "float16" || name == "half")
    return b.getF16Type();
  if (name == "bfloat16")
    return b.getBF16Type();
  if (name == "int64" || name == "long")
    return b.getI64Type();
  if (name == "int32" || name == "int")
    return b.getI32Type();
  if (name == "bool")
    return b.getI1Type();
  return b.getF32Type();
}

void mlir::dtc::loadImportedDialects(MLIRContext *context) {
  context->loadDialect<dtg::DTGDialect, func::FuncDialect>();
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::importONNXModel(MLIRContext *context, StringRef path,
                           const ImportOptions &options,
                           ImportFailure *failureKind) {
  if (failureKind)
    *failureKind = ImportFailure::Invalid;
  // Mapped, not read: once parsed, its pages go back (releaseMappedPages).
  std::string error;
  std::shared_ptr<MappedFile> file = mapWeightsFile(path, error);
  if (!file) {
    loadImportedDialects(context);
    emitError(FileLineColLoc::get(context, path, 0, 0), "cannot read file: ")
        << error;
    return failure();
  }
  ArrayRef<char> data = file->data();
  return importONNXModelFromBuffer(context, StringRef(data.data(), data.size()),
                                   path, options, failureKind);
}

FailureOr<OwningOpRef<ModuleOp>> mlir::dtc::importONNXModelFromBuffer(
    MLIRContext *context, StringRef buffer, StringRef path,
    const ImportOptions &options, ImportFailure *failureKind) {
  loadImportedDialects(context);
  ImportFailure kind = ImportFailure::Invalid;
  auto report = [&](ImportFailure k) {
    if (failureKind)
      *failureKind = k;
    return failure();
  };
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  if (buffer.size() >= (size_t(1) << 31)) {
    emitError(fileLoc, "file is larger than 2 GiB; store the weights as "
                       "external data");
    return report(ImportFailure::Invalid);
  }
  // Shared: the parameters' resource blobs point into its raw data and
  // keep it alive as long as they live.
  auto owner = std::make_shared<onnx::ModelProto>();
  onnx::ModelProto &model = *owner;
  {
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(buffer.data()),
        static_cast<int>(buffer.size()));
    stream.SetTotalBytesLimit(INT_MAX);
    stream.SetRecursionLimit(64);
    bool parsed =
        model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
    // The model now holds what it needs of the file.
    releaseMappedPages(ArrayRef<char>(buffer.data(), buffer.size()));
    if (!parsed) {
      emitError(fileLoc, "not an ONNX model (the file does not parse as a "
                         "ModelProto; truncated or another format?)");
      return report(ImportFailure::Invalid);
    }
  }
  ModelValidator validator(model, fileLoc, kind, options.maxTensorElements());
  int64_t opset;
  if (failed(validator.checkHeader(opset)) || failed(validator.checkGraph()))
    return report(kind);
  if (opset < kMinOpset) {
    if (failed(validator.checkForConverter(opset)))
      return report(kind);
    std::optional<std::string> error = upgradeOpset(model, kMinOpset);
    if (error) {
      emitError(fileLoc, "cannot upgrade the model from opset ")
          << opset << " to " << kMinOpset << ": " << libonnxReason(*error);
      return report(ImportFailure::Unsupported);
    }
    ModelValidator upgraded(model, fileLoc, kind, options.maxTensorElements());
    if (failed(upgraded.checkHeader(opset)) || failed(upgraded.checkGraph()))
      return report(kind);
  }
  GraphImporter importer(context, model, path, options, owner);
  FailureOr<OwningOpRef<ModuleOp>> module = importer.run();
  if (failed(module))
    return report(importer.failureKind);
  return module;
}

void mlir::dtc::addAppendedLossLabels(func::FuncOp func, Value logits,
                                      const AppendedLoss &loss) {
  if (!logits || loss.labels.empty())
    return;
  unsigned index = 0;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kName);
        name && name.getValue() == loss.labels)
      return;
    // After the data inputs, which come first.
    if (auto role = func.getArgAttrOfType<StringAttr>(i, attrs::kRole);
        role && role.getValue() == "input")
      index = i + 1;
  }
  auto logitsType = cast<RankedTensorType>(logits.getType());
  RankedTensorType labelsType = logitsType;
  Builder builder(func.getContext());
  if (loss.kind == "cross_entropy") {
    if (logitsType.getRank() < 1)
      return; // the training step names the problem
    ArrayRef<int64_t> shape = logitsType.getShape();
    while (shape.size() > 2 && shape.back() == 1)
      shape = shape.drop_back();
    labelsType = RankedTensorType::get(shape.drop_back(), builder.getI64Type());
  }
  NamedAttrList attributes;
  attributes.append(attrs::kName, builder.getStringAttr(loss.labels));
  attributes.append(attrs::kRole, builder.getStringAttr("input"));
  func.insertArgument(index, labelsType,
                      attributes.getDictionary(func.getContext()),
                      func.getLoc());
}
