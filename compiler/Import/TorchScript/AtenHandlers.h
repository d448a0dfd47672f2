//===- AtenHandlers.h - what the aten op handlers see -----------*- C++ -*-===//
//
// The state of one TorchScript graph's import (GraphMapper) and the table of
// handlers, one per aten op, that map a node onto dtg ops. Only the
// TorchScript importer's files include this (it includes libtorch).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_TORCHSCRIPT_ATENHANDLERS_H
#define DTC_COMPILER_IMPORT_TORCHSCRIPT_ATENHANDLERS_H

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <torch/csrc/jit/ir/ir.h>

#include <map>

namespace mlir::dtc::torchscript {

/// dtg's element type for a torch scalar type; failure if dtc has none.
FailureOr<Type> elementTypeOf(MLIRContext *context, c10::ScalarType type);

class GraphMapper {
public:
  GraphMapper(MLIRContext *context, StringRef path,
              const ImportOptions &options)
      : context(context), path(path.str()), options(options),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)), builder(context) {}

  /// The node's location: its op kind inside its source file:line:col.
  Location locationOf(const torch::jit::Node *node);
  /// An error about this node (the model is wrong or a shape does not fit).
  LogicalResult fail(const torch::jit::Node *node, const Twine &message);
  /// An error saying dtc does not support `what` of this node.
  LogicalResult unsupported(const torch::jit::Node *node, const Twine &what);

  /// The dtg value of tensor `value` (a tensor constant is materialized).
  FailureOr<Value> tensor(const torch::jit::Node *node,
                          const torch::jit::Value *value);
  /// The compile-time value of non-tensor `value`.
  FailureOr<c10::IValue> scalar(const torch::jit::Node *node,
                                const torch::jit::Value *value);
  FailureOr<int64_t> scalarInt(const torch::jit::Node *node,
                               const torch::jit::Value *value);
  FailureOr<double> scalarDouble(const torch::jit::Node *node,
                                 const torch::jit::Value *value);
  /// An int list (or one int) known while importing.
  FailureOr<SmallVector<int64_t>> scalarInts(const torch::jit::Node *node,
                                             const torch::jit::Value *value);
  /// The input of `node` that its schema names `name`; null if the node
  /// has no schema or no such input.
  const torch::jit::Value *namedInput(const torch::jit::Node *node,
                                      StringRef name);
  /// Whether `value` is a tensor of the program: of tensor type, and not a
  /// number known while importing (traced shape arithmetic's 0-d tensors).
  bool isTensor(const torch::jit::Value *value) const {
    return value->type()->kind() == c10::TypeKind::TensorType &&
           !scalars.count(value);
  }
  /// Whether `value` is None (a constant, or an absent attribute such as a
  /// bias=False layer's).
  bool isNone(const torch::jit::Value *value);

  /// Builds op `opName` with inferred result types at the node's location.
  FailureOr<SmallVector<Value>> create(const torch::jit::Node *node,
                                       StringRef opName, ValueRange operands,
                                       ArrayRef<NamedAttribute> attributes = {},
                                       unsigned numResults = 1);
  template <typename OpTy>
  FailureOr<Value> make(const torch::jit::Node *node, ValueRange operands,
                        ArrayRef<NamedAttribute> attributes = {}) {
    FailureOr<SmallVector<Value>> results =
        create(node, OpTy::getOperationName(), operands, attributes);
    if (failed(results))
      return failure();
    return results->front();
  }
  Value constant(Location loc, const dtg::interp::Tensor &value);
  FailureOr<Value> tensorConstant(const torch::jit::Node *node,
                                  const at::Tensor &value);
  /// A new @main argument of `role` (parameter, state, constant) holding
  /// `value`'s bytes as its initial value; the same one for the same name.
  FailureOr<Value> argument(const torch::jit::Node *node,
                            const std::string &name, const at::Tensor &value,
                            StringRef role);
  /// Makes `to` hold what `from` holds (a tensor, list or scalar).
  LogicalResult forward(const torch::jit::Node *node,
                        const torch::jit::Value *from,
                        const torch::jit::Value *to);
  /// The name and value of a module buffer `value` holds: read through
  /// prim::GetAttr, or a tensor constant that freezing made of it.
  std::optional<std::pair<std::string, at::Tensor>>
  buffer(const torch::jit::Value *value);

  MLIRContext *context;
  std::string path;
  const ImportOptions &options;
  Location fileLoc;
  OpBuilder builder;
  func::FuncOp func;
  ImportFailure failureKind = ImportFailure::Invalid;

  llvm::DenseMap<const torch::jit::Value *, Value> values;
  llvm::DenseMap<const torch::jit::Value *, c10::IValue> scalars;
  /// Lists of tensors (aten::split, chunk, unbind; prim::ListConstruct).
  llvm::DenseMap<const torch::jit::Value *, SmallVector<Value>> tensorLists;
  /// Buffers by their data, as freezing turns them into constants.
  std::map<const void *, std::string> bufferNames;
  /// Buffers read through prim::GetAttr (not yet materialized).
  llvm::DenseMap<const torch::jit::Value *, std::pair<std::string, at::Tensor>>
      bufferValues;
  std::map<std::string, Value> arguments;
};

using AtenHandler = LogicalResult (*)(GraphMapper &m, torch::jit::Node *node);
using AtenHandlerTable = llvm::StringMap<AtenHandler>;

/// The handler of `kind` ("aten::linear"); null if there is none.
const AtenHandler *lookupAtenHandler(StringRef kind);

/// What the handler files share.
namespace lowering {
RankedTensorType typeOf(Value value);
/// Binds output `output` of `node` to `value` (fails if it failed).
LogicalResult setTensor(GraphMapper &m, torch::jit::Node *node,
                        FailureOr<Value> value, unsigned output = 0);
/// A rank-0 constant of `element` holding `value`.
Value scalarConstant(GraphMapper &m, torch::jit::Node *node, Type element,
                     double value);
FailureOr<Value> reshape(GraphMapper &m, torch::jit::Node *node, Value value,
                         ArrayRef<int64_t> shape);
/// `dim` in [0, rank) (Python's negative dimensions counted from the end).
FailureOr<int64_t> normalizeDim(GraphMapper &m, torch::jit::Node *node,
                                int64_t dim, int64_t rank);
/// `x`'s elements [start, limit) along `axis`, every `step`-th.
FailureOr<Value> sliceAlong(GraphMapper &m, torch::jit::Node *node, Value x,
                            int64_t axis, int64_t start, int64_t limit,
                            int64_t step = 1);
NamedAttribute i64Array(GraphMapper &m, StringRef name,
                        ArrayRef<int64_t> values);
/// The attributes of a dtg reduction of `x` over `axes` (all of them when
/// empty).
SmallVector<NamedAttribute> reduceAttrs(GraphMapper &m, Value x,
                                        ArrayRef<int64_t> axes, bool keepdims);
/// `x` with element type `element` (itself if it has it).
Value castTo(GraphMapper &m, torch::jit::Node *node, Value x, Type element);
/// PyTorch's result type of tensors (bool < integers < floats, the widest
/// of the highest kind).
Type promotedType(ArrayRef<Type> types);
/// Inputs `inputs` of `node` (tensors or numbers) as tensors of PyTorch's
/// promoted element type: dimensioned tensors decide it, unless a 0-d
/// tensor, then a number, is of a higher kind (a number then gives
/// float32 or int64); with `floatResult` (true division, float functions),
/// an integer result type becomes float32.
FailureOr<SmallVector<Value>> promotedOperands(GraphMapper &m,
                                               torch::jit::Node *node,
                                               ArrayRef<unsigned> inputs,
                                               bool floatResult = false);

/// The handlers of AtenHandlersNN.cpp (activations, pooling, losses) and
/// AtenHandlersTensor.cpp (constructors, joining, indexing, dtypes).
void addNNHandlers(AtenHandlerTable &table);
void addTensorHandlers(AtenHandlerTable &table);
} // namespace lowering

} // namespace mlir::dtc::torchscript

#endif // DTC_COMPILER_IMPORT_TORCHSCRIPT_ATENHANDLERS_H
