//===- TorchScriptImporter.cpp - TorchScript modules to dtg --------------===//
//
// Loads a module with torch::jit::load, freezes it with its parameters kept
// as attributes (so module attributes such as `training` and the
// if-statements on them fold away), inlines, lowers tuples and propagates
// constants, then maps the aten graph onto dtg. Tensors become dtg values;
// everything else (ints, floats, bools, strings, lists of them, None) is
// known while importing and held as c10::IValues. A tensor attribute read
// through prim::GetAttr is a parameter named by its path ("fc1.weight"); a
// tensor constant that freezing made of a buffer is state if a
// BatchNormalization updates it, else a constant.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TorchScript/TorchScriptImporter.h"
#include "compiler/Import/TorchScript/AtenHandlers.h"

#include "dialects/DTG/IR/DTGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/peephole.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/script.h>

#include <cstring>
#include <functional>

using namespace mlir;
using namespace mlir::dtc;
using namespace mlir::dtc::torchscript;

bool mlir::dtc::hasTorchScriptSupport() { return true; }

namespace {

/// The first line of a c10::Error's message (its backtrace follows).
std::string errorReason(const std::exception &e) {
  std::string what = e.what();
  size_t newline = what.find('\n');
  return newline == std::string::npos ? what : what.substr(0, newline);
}

} // namespace

FailureOr<Type> mlir::dtc::torchscript::elementTypeOf(MLIRContext *context,
                                                      c10::ScalarType type) {
  Builder b(context);
  switch (type) {
  case c10::ScalarType::Float:
    return b.getF32Type();
  case c10::ScalarType::Double:
    return b.getF64Type();
  case c10::ScalarType::Half:
    return b.getF16Type();
  case c10::ScalarType::BFloat16:
    return b.getBF16Type();
  case c10::ScalarType::Long:
    return b.getI64Type();
  case c10::ScalarType::Int:
    return b.getI32Type();
  case c10::ScalarType::Bool:
    return b.getI1Type();
  default:
    return failure();
  }
}

Location GraphMapper::locationOf(const torch::jit::Node *node) {
  std::string name = node->kind().toQualString();
  Location file = fileLoc;
  // The line in the user's forward that the node came from: the outermost
  // frame of the call stack inlining left (the node's own range is inside
  // torch.nn's functions), else its own.
  torch::jit::SourceRange range = node->sourceRange();
  if (c10::optional<torch::jit::InlinedCallStackPtr> stack = node->callstack())
    if (!(*stack)->vec().empty())
      range = std::get<1>((*stack)->vec().front());
  if (auto original = range.findSourceRangeThatGenerated())
    range = *original;
  if (auto where = range.file_line_col())
    file = FileLineColLoc::get(context, std::get<0>(*where),
                               static_cast<unsigned>(std::get<1>(*where)),
                               static_cast<unsigned>(std::get<2>(*where)));
  return NameLoc::get(StringAttr::get(context, name), file);
}

LogicalResult GraphMapper::fail(const torch::jit::Node *node,
                                const Twine &message) {
  return emitError(locationOf(node))
         << node->kind().toQualString() << ": " << message;
}

LogicalResult GraphMapper::unsupported(const torch::jit::Node *node,
                                       const Twine &what) {
  failureKind = ImportFailure::Unsupported;
  return emitError(locationOf(node))
         << node->kind().toQualString() << ": " << what << " is not supported";
}

FailureOr<Value> GraphMapper::tensor(const torch::jit::Node *node,
                                     const torch::jit::Value *value) {
  auto it = values.find(value);
  if (it != values.end()) {
    if (!it->second)
      return fail(node, "input '" + value->debugName() + "' is None");
    return it->second;
  }
  if (auto buffer = bufferValues.find(value); buffer != bufferValues.end())
    return tensorConstant(node, buffer->second.second);
  // A tensor constant: a frozen buffer (state or constant) or a literal.
  if (c10::optional<c10::IValue> constant = torch::jit::toIValue(value))
    if (constant->isTensor())
      return tensorConstant(node, constant->toTensor());
  return fail(node, "input '" + value->debugName() +
                        "' is not a tensor known while importing");
}

FailureOr<c10::IValue> GraphMapper::scalar(const torch::jit::Node *node,
                                           const torch::jit::Value *value) {
  auto it = scalars.find(value);
  if (it != scalars.end())
    return it->second;
  if (c10::optional<c10::IValue> constant = torch::jit::toIValue(value)) {
    // A one-element tensor constant (traced shape arithmetic) is a number.
    if (constant->isTensor() && constant->toTensor().numel() == 1) {
      at::Tensor t = constant->toTensor();
      if (t.is_floating_point())
        return c10::IValue(t.item<double>());
      return c10::IValue(t.item<int64_t>());
    }
    return *constant;
  }
  return fail(node, "input '" + value->debugName() +
                        "' must be known while importing (a data-dependent "
                        "value is not supported)");
}

FailureOr<int64_t> GraphMapper::scalarInt(const torch::jit::Node *node,
                                          const torch::jit::Value *value) {
  FailureOr<c10::IValue> v = scalar(node, value);
  if (failed(v))
    return failure();
  if (v->isInt())
    return v->toInt();
  if (v->isBool())
    return int64_t(v->toBool());
  return fail(node, "input '" + value->debugName() + "' is not an int");
}

FailureOr<double> GraphMapper::scalarDouble(const torch::jit::Node *node,
                                            const torch::jit::Value *value) {
  FailureOr<c10::IValue> v = scalar(node, value);
  if (failed(v))
    return failure();
  if (v->isDouble())
    return v->toDouble();
  if (v->isInt())
    return double(v->toInt());
  if (v->isBool())
    return double(v->toBool());
  return fail(node, "input '" + value->debugName() + "' is not a number");
}

FailureOr<SmallVector<int64_t>>
GraphMapper::scalarInts(const torch::jit::Node *node,
                        const torch::jit::Value *value) {
  FailureOr<c10::IValue> v = scalar(node, value);
  if (failed(v))
    return failure();
  SmallVector<int64_t> ints;
  if (v->isInt()) {
    ints.push_back(v->toInt());
    return ints;
  }
  if (v->isIntList()) {
    for (int64_t i : v->toIntVector())
      ints.push_back(i);
    return ints;
  }
  if (v->isList()) {
    for (const c10::IValue &e : v->toListRef()) {
      if (!e.isInt())
        return fail(node,
                    "input '" + value->debugName() + "' is not a list of ints");
      ints.push_back(e.toInt());
    }
    return ints;
  }
  return fail(node, "input '" + value->debugName() + "' is not a list of ints");
}

const torch::jit::Value *GraphMapper::namedInput(const torch::jit::Node *node,
                                                 StringRef name) {
  const c10::FunctionSchema *schema = node->maybeSchema();
  if (!schema)
    return nullptr;
  for (auto [i, argument] : llvm::enumerate(schema->arguments()))
    if (argument.name() == name && i < node->inputs().size())
      return node->input(i);
  return nullptr;
}

bool GraphMapper::isNone(const torch::jit::Value *value) {
  if (value->type()->kind() == c10::TypeKind::NoneType)
    return true;
  if (auto it = scalars.find(value); it != scalars.end())
    return it->second.isNone();
  c10::optional<c10::IValue> constant = torch::jit::toIValue(value);
  return constant && constant->isNone();
}

FailureOr<SmallVector<Value>>
GraphMapper::create(const torch::jit::Node *node, StringRef opName,
                    ValueRange operands, ArrayRef<NamedAttribute> attributes,
                    unsigned numResults) {
  std::string internalError;
  FailureOr<Operation *> op =
      createInferred(builder, locationOf(node), opName, operands, attributes,
                     /*resultTypes=*/{}, numResults, internalError);
  if (failed(op))
    return internalError.empty() ? failure() : fail(node, internalError);
  if (failed(verify(*op, /*verifyRecursively=*/false))) {
    (*op)->erase();
    return failure();
  }
  return SmallVector<Value>((*op)->getResults());
}

Value GraphMapper::constant(Location loc, const dtg::interp::Tensor &value) {
  return builder.create<dtg::ConstantOp>(loc, dtg::interp::tensorToAttr(value));
}

FailureOr<Value> GraphMapper::tensorConstant(const torch::jit::Node *node,
                                             const at::Tensor &value) {
  auto named = bufferNames.find(value.data_ptr());
  if (named != bufferNames.end()) {
    auto existing = arguments.find(named->second);
    if (existing != arguments.end())
      return existing->second;
  }
  FailureOr<Type> element = elementTypeOf(context, value.scalar_type());
  if (failed(element))
    return unsupported(node,
                       "a tensor constant of type " +
                           std::string(c10::toString(value.scalar_type())));
  at::Tensor contiguous = value.contiguous().to(at::kDouble);
  dtg::interp::Tensor t = dtg::interp::Tensor::zeros(
      *element,
      SmallVector<int64_t>(value.sizes().begin(), value.sizes().end()));
  const double *data = contiguous.data_ptr<double>();
  for (int64_t k = 0, e = t.numElements(); k < e; ++k) {
    if (t.isFloat())
      t.set(k, data[k]);
    else
      t.setInt(k, static_cast<int64_t>(data[k]));
  }
  return constant(locationOf(node), t);
}

FailureOr<Value> GraphMapper::argument(const torch::jit::Node *node,
                                       const std::string &name,
                                       const at::Tensor &value,
                                       StringRef role) {
  auto existing = arguments.find(name);
  if (existing != arguments.end())
    return existing->second;
  FailureOr<Type> element = elementTypeOf(context, value.scalar_type());
  if (failed(element) || !isa<FloatType>(*element))
    return unsupported(node,
                       Twine(role) + " '" + name + "' of type " +
                           std::string(c10::toString(value.scalar_type())));
  SmallVector<int64_t> shape(value.sizes().begin(), value.sizes().end());
  auto type = RankedTensorType::get(shape, *element);
  // The bytes as they are, copied into a blob the module owns.
  at::Tensor contiguous = value.detach().contiguous();
  size_t bytes = contiguous.numel() * contiguous.element_size();
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      bytes, contiguous.element_size(), /*dataIsMutable=*/true);
  if (bytes)
    std::memcpy(blob.getMutableData().data(), contiguous.data_ptr(), bytes);
  std::string key = "torch_";
  for (char c : name)
    key += llvm::isAlnum(c) ? c : '_';
  auto initial = DenseResourceElementsAttr::get(type, key, std::move(blob));
  NamedAttrList attributes;
  attributes.append(attrs::kName, builder.getStringAttr(name));
  attributes.append(attrs::kRole, builder.getStringAttr(role));
  attributes.append(attrs::kInitial, initial);
  unsigned index = func.getNumArguments();
  func.insertArgument(index, type, attributes.getDictionary(context), fileLoc);
  Value arg = func.getArgument(index);
  arguments[name] = arg;
  return arg;
}

std::optional<std::pair<std::string, at::Tensor>>
GraphMapper::buffer(const torch::jit::Value *value) {
  if (auto read = bufferValues.find(value); read != bufferValues.end())
    return read->second;
  c10::optional<c10::IValue> constant = torch::jit::toIValue(value);
  if (!constant || !constant->isTensor())
    return std::nullopt;
  auto it = bufferNames.find(constant->toTensor().data_ptr());
  if (it == bufferNames.end())
    return std::nullopt;
  return std::make_pair(it->second, constant->toTensor());
}

namespace {

/// Maps one frozen, inlined forward graph onto @main.
class ModuleImporter : public GraphMapper {
public:
  ModuleImporter(MLIRContext *context, StringRef path,
                 const ImportOptions &options)
      : GraphMapper(context, path, options) {}

  FailureOr<OwningOpRef<ModuleOp>> run();

private:
  LogicalResult load();
  LogicalResult addInputs(const std::shared_ptr<torch::jit::Graph> &graph);
  LogicalResult importNode(torch::jit::Node *node);
  LogicalResult importLoop(torch::jit::Node *node);
  LogicalResult importInPlace(torch::jit::Node *node);
  bool readsBufferAfter(const torch::jit::Node *node, const std::string &name);

  torch::jit::Module module;
  std::map<std::string, at::Tensor> parameterTensors;
  std::map<std::string, c10::IValue> attributeValues;
  std::map<const void *, std::string> parameterByData;
  /// Module paths of the values prim::GetAttr reads submodules into.
  llvm::DenseMap<const torch::jit::Value *, std::string> modulePaths;
  OwningOpRef<ModuleOp> result;
};

} // namespace

LogicalResult ModuleImporter::load() {
  try {
    torch::jit::Module loaded = torch::jit::load(path);
    for (const torch::jit::NameTensor &p : loaded.named_parameters()) {
      parameterTensors[p.name] = p.value;
      parameterByData.try_emplace(p.value.data_ptr(), p.name);
    }
    for (const torch::jit::NameTensor &b : loaded.named_buffers())
      bufferNames[b.value.data_ptr()] = b.name;
    for (const torch::jit::NameValue &a : loaded.named_attributes())
      attributeValues[a.name] = a.value;
    // Parameters stay attributes; everything else (the `training` flag,
    // submodules' constants, buffers) folds.
    module = torch::jit::freeze_module(loaded, {}, /*freezeInterfaces=*/true,
                                       /*preserveParameters=*/true);
  } catch (const std::exception &e) {
    failureKind = ImportFailure::Invalid;
    return emitError(fileLoc, "cannot load the TorchScript module: ")
           << errorReason(e);
  }
  return success();
}

LogicalResult
ModuleImporter::addInputs(const std::shared_ptr<torch::jit::Graph> &graph) {
  // Input 0 is `self`.
  for (size_t i = 1; i < graph->inputs().size(); ++i) {
    const torch::jit::Value *input = graph->inputs()[i];
    std::string name = input->debugName();
    // Scripted modules suffix names (`x.1`); the Python name is the stem.
    if (size_t dot = name.find('.'); dot != std::string::npos)
      name = name.substr(0, dot);
    auto tensorType = input->type()->cast<c10::TensorType>();
    if (!tensorType)
      return emitError(fileLoc, "forward's argument '")
             << name << "' is not a tensor (" << input->type()->str()
             << "); only tensor arguments are supported";
    SmallVector<int64_t> shape;
    Type element = builder.getF32Type();
    auto given = options.inputShapes.find(name);
    if (given != options.inputShapes.end()) {
      shape.assign(given->second.begin(), given->second.end());
    } else if (auto sizes = tensorType->sizes().concrete_sizes()) {
      shape.assign(sizes->begin(), sizes->end());
    } else {
      return emitError(fileLoc, "forward's argument '")
             << name
             << "' has no shape in the module: give it with "
                "--input-shape "
             << name << "=DIMxDIM[:DTYPE]";
    }
    auto givenType = options.inputTypes.find(name);
    if (givenType != options.inputTypes.end()) {
      element = elementTypeNamed(context, givenType->second);
    } else if (auto scalarType = tensorType->scalarType()) {
      FailureOr<Type> known = elementTypeOf(context, *scalarType);
      if (failed(known))
        return emitError(fileLoc, "forward's argument '")
               << name << "' has the unsupported type "
               << c10::toString(*scalarType);
      element = *known;
    }
    if (options.batch && !shape.empty())
      shape[0] = *options.batch;
    NamedAttrList attributes;
    attributes.append(attrs::kName, builder.getStringAttr(name));
    attributes.append(attrs::kRole, builder.getStringAttr("input"));
    unsigned index = func.getNumArguments();
    func.insertArgument(index, RankedTensorType::get(shape, element),
                        attributes.getDictionary(context), fileLoc);
    values[input] = func.getArgument(index);
  }
  return success();
}

LogicalResult ModuleImporter::importNode(torch::jit::Node *node) {
  using torch::jit::prim::GetAttr;
  c10::Symbol kind = node->kind();
  if (kind == c10::prim::Constant) {
    if (node->output()->type()->kind() != c10::TypeKind::TensorType)
      if (c10::optional<c10::IValue> v = torch::jit::toIValue(node->output()))
        scalars[node->output()] = *v;
    return success(); // tensors are materialized where they are used
  }
  if (kind == GetAttr) {
    std::string base;
    auto parent = modulePaths.find(node->input(0));
    if (parent != modulePaths.end())
      base = parent->second;
    std::string name = node->s(c10::attr::name);
    std::string full = base.empty() ? name : base + "." + name;
    if (node->output()->type()->cast<c10::ClassType>()) {
      modulePaths[node->output()] = full;
      return success();
    }
    auto param = parameterTensors.find(full);
    // A tied parameter (the GPT's head and embedding) is listed once, under
    // its first name: the same tensor is the same argument.
    if (param == parameterTensors.end())
      if (auto attribute = attributeValues.find(full);
          attribute != attributeValues.end() && attribute->second.isTensor())
        if (auto tied =
                parameterByData.find(attribute->second.toTensor().data_ptr());
            tied != parameterByData.end())
          param = parameterTensors.find(tied->second);
    if (param != parameterTensors.end())
      param =
          parameterTensors.find(parameterByData.at(param->second.data_ptr()));
    if (param == parameterTensors.end()) {
      // A buffer (state or constant, as its consumer decides), None (an
      // absent bias), or a number.
      auto attribute = attributeValues.find(full);
      if (attribute == attributeValues.end())
        return unsupported(node, "attribute '" + full + "'");
      if (attribute->second.isTensor())
        bufferValues[node->output()] = {full, attribute->second.toTensor()};
      else
        scalars[node->output()] = attribute->second;
      return success();
    }
    FailureOr<Value> arg =
        argument(node, param->first, param->second,
                 param->second.requires_grad() ? "parameter" : "constant");
    if (failed(arg))
      return failure();
    values[node->output()] = *arg;
    return success();
  }
  if (kind == c10::prim::If) {
    // A condition known while importing (an attribute freezing kept, such
    // as BatchNorm's num_batches_tracked being there): the taken branch.
    auto known = scalars.find(node->input(0));
    c10::optional<c10::IValue> constant = torch::jit::toIValue(node->input(0));
    c10::IValue condition = known != scalars.end() ? known->second
                            : constant             ? *constant
                                                   : c10::IValue();
    if (!condition.isBool())
      return unsupported(node, "control flow on a value of the data");
    torch::jit::Block *taken = node->blocks()[condition.toBool() ? 0 : 1];
    for (torch::jit::Node *inner : taken->nodes())
      if (failed(importNode(inner)))
        return failure();
    for (auto [i, output] : llvm::enumerate(taken->outputs()))
      if (failed(forward(node, output, node->output(i))))
        return failure();
    return success();
  }
  if (kind == c10::prim::Loop)
    return importLoop(node);
  if (kind == c10::prim::RaiseException)
    return fail(node, "the module raises an exception here for these "
                      "shapes");
  const AtenHandler *handler = lookupAtenHandler(kind.toQualString());
  if (!handler)
    return importInPlace(node);
  return (*handler)(*this, node);
}

/// An in-place op that RemoveMutation left (aten::relu_, add_ on a value it
/// could not prove unaliased): its functional form, after which the mutated
/// operand holds the result. A parameter or buffer is never updated so.
LogicalResult ModuleImporter::importInPlace(torch::jit::Node *node) {
  c10::Symbol kind = node->kind();
  StringRef name = kind.toQualString();
  const AtenHandler *handler = nullptr;
  if (name.ends_with("_") && !name.ends_with("__") && !node->inputs().empty() &&
      node->input(0)->type()->kind() == c10::TypeKind::TensorType)
    handler = lookupAtenHandler(name.drop_back());
  if (!handler) {
    failureKind = ImportFailure::Unsupported;
    return emitError(locationOf(node), "op '")
           << kind.toQualString() << "' is not supported";
  }
  // An update of a buffer that nothing reads afterwards (BatchNorm's
  // num_batches_tracked += 1) changes nothing the step computes.
  if (std::optional<std::pair<std::string, at::Tensor>> updated =
          buffer(node->input(0))) {
    if (!node->output()->hasUses() && !readsBufferAfter(node, updated->first))
      return success();
    return unsupported(node, "an in-place update of buffer '" + updated->first +
                                 "' that is read again");
  }
  auto isInPlace = [](const torch::jit::Node *n) {
    StringRef k = n->kind().toQualString();
    return k.ends_with("_") && !k.ends_with("__") && !n->inputs().empty();
  };
  // The tensor updated: through the results of earlier in-place ops (each
  // the same tensor) to the value that made it.
  SmallVector<const torch::jit::Value *> names{node->input(0)};
  while (isInPlace(names.back()->node()))
    names.push_back(names.back()->node()->input(0));
  auto mutated = values.find(names.back());
  if (mutated == values.end() || isa<BlockArgument>(mutated->second))
    return unsupported(node, "an in-place update of a parameter, buffer or "
                             "input");
  // Rebinding those names is right only if no other tensor shares the
  // memory: the tensor is no view, and nothing took a view of it or
  // holds it in a list.
  auto mayAlias = [](const torch::jit::Node *n) {
    const c10::FunctionSchema *schema = n->maybeSchema();
    if (!schema)
      return true;
    return llvm::any_of(schema->returns(), [](const c10::Argument &r) {
      return r.alias_info() != nullptr;
    });
  };
  bool aliased = mayAlias(names.back()->node());
  for (const torch::jit::Value *v : names)
    for (const torch::jit::Use &use : v->uses())
      aliased |= use.user != node && !isInPlace(use.user) &&
                 use.user->kind() != c10::prim::Return && mayAlias(use.user);
  if (aliased)
    return unsupported(node, "an in-place update of a tensor that may share "
                             "its memory with another (a view, or a list "
                             "holding it)");
  auto type = cast<RankedTensorType>(mutated->second.getType());
  if (failed((*handler)(*this, node)))
    return failure();
  // In place, the tensor keeps its shape and element type.
  Value result = values[node->output()];
  auto resultType = cast<RankedTensorType>(result.getType());
  if (resultType.getShape() != type.getShape())
    return fail(node, "the result's shape differs from the updated "
                      "tensor's (an in-place op cannot broadcast it)");
  if (resultType.getElementType() != type.getElementType())
    result = builder.create<dtg::CastOp>(locationOf(node), type, result);
  values[node->output()] = result;
  for (const torch::jit::Value *v : names)
    values[v] = result;
  return success();
}

/// Whether a node after `node` (in its block, then after the nodes that
/// hold that block) reads buffer `name`.
bool ModuleImporter::readsBufferAfter(const torch::jit::Node *node,
                                      const std::string &name) {
  std::function<bool(const torch::jit::Node *)> reads =
      [&](const torch::jit::Node *n) {
        if (n->kind() == c10::prim::GetAttr) {
          // Its path: the names of the GetAttr chain from `self`.
          std::string path = n->s(c10::attr::name);
          for (const torch::jit::Node *p = n->input(0)->node();
               p->kind() == c10::prim::GetAttr; p = p->input(0)->node())
            path = p->s(c10::attr::name) + "." + path;
          if (path == name)
            return true;
        }
        for (const torch::jit::Value *input : n->inputs())
          if (auto b = buffer(input); b && b->first == name)
            return true;
        for (const torch::jit::Block *block : n->blocks())
          for (const torch::jit::Node *inner : block->nodes())
            if (reads(inner))
              return true;
        return false;
      };
  for (const torch::jit::Node *at = node; at;
       at = at->owningBlock()->owningNode())
    for (const torch::jit::Node *n = at->next(); n; n = n->next()) {
      if (reads(n))
        return true;
      if (n == n->owningBlock()->return_node())
        break;
    }
  return false;
}

/// Copies what `from` holds to `to` (values, buffers, lists or scalars).
LogicalResult GraphMapper::forward(const torch::jit::Node *node,
                                   const torch::jit::Value *from,
                                   const torch::jit::Value *to) {
  if (auto v = values.find(from); v != values.end())
    values[to] = v->second;
  else if (auto b = bufferValues.find(from); b != bufferValues.end())
    bufferValues[to] = b->second;
  else if (auto l = tensorLists.find(from); l != tensorLists.end())
    tensorLists[to] = l->second;
  else if (FailureOr<c10::IValue> sv = scalar(node, from); succeeded(sv))
    scalars[to] = *sv;
  else
    return failure();
  return success();
}

/// prim::Loop with a trip count and condition known while importing
/// (a loop over a shape's dimensions): unrolled.
LogicalResult ModuleImporter::importLoop(torch::jit::Node *node) {
  FailureOr<int64_t> trips = scalarInt(node, node->input(0));
  FailureOr<int64_t> condition = scalarInt(node, node->input(1));
  if (failed(trips) || failed(condition))
    return unsupported(node, "a loop whose trip count depends on the data");
  if (*trips > 4096)
    return unsupported(node, "a loop of more than 4096 iterations");
  torch::jit::Block *body = node->blocks()[0];
  size_t carried = node->inputs().size() - 2;
  for (size_t i = 0; i < carried; ++i)
    if (failed(forward(node, node->input(2 + i), body->inputs()[1 + i])))
      return failure();
  for (int64_t trip = 0; trip < *trips && *condition; ++trip) {
    scalars[body->inputs()[0]] = c10::IValue(trip);
    for (torch::jit::Node *inner : body->nodes())
      if (failed(importNode(inner)))
        return failure();
    FailureOr<int64_t> next = scalarInt(node, body->outputs()[0]);
    if (failed(next))
      return unsupported(node, "a loop whose condition depends on the data");
    *condition = *next;
    for (size_t i = 0; i < carried; ++i)
      if (failed(forward(node, body->outputs()[1 + i], body->inputs()[1 + i])))
        return failure();
  }
  for (size_t i = 0; i < carried; ++i)
    if (failed(forward(node, body->inputs()[1 + i], node->output(i))))
      return failure();
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> ModuleImporter::run() {
  loadImportedDialects(context);
  if (failed(load()))
    return failure();
  std::shared_ptr<torch::jit::Graph> graph;
  try {
    graph = module.get_method("forward").graph()->copy();
    torch::jit::Inline(*graph);
    torch::jit::RemoveListMutation(graph);
    torch::jit::RemoveTensorMutation(graph);
    torch::jit::LowerAllTuples(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::PeepholeOptimize(graph);
    torch::jit::EliminateDeadCode(graph);
  } catch (const std::exception &e) {
    failureKind = ImportFailure::Unsupported;
    return emitError(fileLoc, "cannot prepare the module's forward: ")
           << errorReason(e);
  }
  result = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(result->getBody());
  func = builder.create<func::FuncOp>(fileLoc, "main",
                                      FunctionType::get(context, {}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  if (failed(addInputs(graph)))
    return failure();
  for (torch::jit::Node *node : graph->nodes())
    if (failed(importNode(node)))
      return failure();

  SmallVector<Value> results;
  for (const torch::jit::Value *output : graph->outputs()) {
    auto it = values.find(output);
    if (it == values.end()) {
      failureKind = ImportFailure::Unsupported;
      return emitError(fileLoc, "forward returns '")
             << output->debugName() << "' of type " << output->type()->str()
             << "; only tensors (or tuples of them) are supported";
    }
    results.push_back(it->second);
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(FunctionType::get(context, body->getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  for (unsigned i = 0; i < results.size(); ++i)
    func.setResultAttr(i, attrs::kName,
                       builder.getStringAttr("output" + std::to_string(i)));
  if (const std::optional<AppendedLoss> &loss = options.appendedLoss;
      loss && !loss->logits.empty()) {
    // The logits are an output (output0, output1, ...); the labels an input
    // of forward's, else added.
    Value logits;
    for (unsigned i = 0; i < results.size(); ++i)
      if (loss->logits == "output" + std::to_string(i))
        logits = results[i];
    if (!logits) {
      failureKind = ImportFailure::Invalid;
      if (results.empty())
        return emitError(fileLoc, "--logits: forward has no outputs");
      InFlightDiagnostic error =
          emitError(fileLoc, "--logits: forward has no output '")
          << loss->logits << "'";
      if (results.size() == 1)
        error << " (its one output is output0)";
      else
        error << " (its outputs are output0 to output" << results.size() - 1
              << ")";
      return error;
    }
    addAppendedLossLabels(func, logits, *loss);
  }
  if (failed(verify(*result)))
    return failure();
  return std::move(result);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::importTorchScriptModel(MLIRContext *context, StringRef path,
                                  const ImportOptions &options,
                                  ImportFailure *failureKind) {
  ModuleImporter importer(context, path, options);
  FailureOr<OwningOpRef<ModuleOp>> module = importer.run();
  if (failureKind)
    *failureKind = importer.failureKind;
  return module;
}
