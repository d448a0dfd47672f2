//===- NodeImporter.h - what an op handler sees of the importer -----*- C++
//-*-===//
//
// Handlers turn one ONNX node into dtg ops. They read inputs and attributes,
// build ops through `make`/`create` (which check types, fold ops whose
// operands are all constants, and never crash on bad shapes), and set outputs.
// Handlers are grouped by op family (Handlers*.cpp) and registered with the
// opset version they apply from.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_ONNX_NODEIMPORTER_H
#define DTC_COMPILER_IMPORT_ONNX_NODEIMPORTER_H

#include "compiler/Import/ONNX/ONNXImporter.h"
#include "compiler/Import/ONNX/TensorProto.h"
#include "dialects/DTG/IR/DTGOps.h"
#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

namespace mlir::dtc::onnx_import {

class GraphImporter;

/// The importer as one node's handler sees it.
class NodeImporter {
public:
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node, Location loc,
               OpBuilder &builder, int64_t opset);

  const onnx::NodeProto &node;
  Location loc;
  OpBuilder &builder;
  /// Version of the default ONNX domain in the model.
  int64_t opset;

  //===--- Inputs ---------------------------------------------------------===//

  /// True if input `i` is given (present and not the empty name).
  bool hasInput(unsigned i) const;
  /// Input `i`; an error naming the input if it is missing.
  FailureOr<Value> input(unsigned i);
  /// Input `i` or null if it is absent.
  Value optionalInput(unsigned i);
  /// The compile-time value of input `i`; an error saying the input must be a
  /// constant if it is not one.
  FailureOr<dtg::interp::Tensor> constantInput(unsigned i);
  /// Like constantInput, but returns nullopt (no error) if it is not constant.
  std::optional<dtg::interp::Tensor> maybeConstantInput(unsigned i);
  /// Element values of a constant integer input (axes, shapes, pads).
  FailureOr<SmallVector<int64_t>> constantInts(unsigned i);
  /// The tensors of sequence input `i`; an error if it is not a sequence.
  FailureOr<SmallVector<Value>> inputSequence(unsigned i);

  //===--- Attributes -----------------------------------------------------===//

  const onnx::AttributeProto *findAttr(StringRef name) const;
  bool hasAttr(StringRef name) const { return findAttr(name); }
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  double getFloat(StringRef name, double defaultValue) const;
  std::string getString(StringRef name, StringRef defaultValue) const;
  std::optional<SmallVector<int64_t>> getInts(StringRef name) const;
  std::optional<SmallVector<double>> getFloats(StringRef name) const;
  /// The tensor of a TENSOR attribute.
  FailureOr<dtg::interp::Tensor> getTensorAttr(StringRef name);

  //===--- Building -------------------------------------------------------===//

  /// Builds op `opName`. Result types are inferred if the op can infer them,
  /// else `resultTypes` are used. Fails (with an error at the node) if the op
  /// does not verify. An op whose operands are all constants is evaluated by
  /// the interpreter and replaced by constants.
  FailureOr<SmallVector<Value>> create(StringRef opName, ValueRange operands,
                                       ArrayRef<NamedAttribute> attributes = {},
                                       TypeRange resultTypes = {},
                                       unsigned numResults = 1);
  template <typename OpTy>
  FailureOr<Value> make(ValueRange operands,
                        ArrayRef<NamedAttribute> attributes = {},
                        TypeRange resultTypes = {}) {
    FailureOr<SmallVector<Value>> results =
        create(OpTy::getOperationName(), operands, attributes, resultTypes);
    if (failed(results))
      return failure();
    return results->front();
  }

  /// A dtg.constant of `value`.
  Value constant(const dtg::interp::Tensor &value);
  /// A rank-0 constant of `elementType` holding `value`.
  Value scalar(Type elementType, double value);
  /// dtg.reshape to `shape` (no-op if it has it already).
  FailureOr<Value> reshape(Value value, ArrayRef<int64_t> shape);
  /// dtg.cast to `elementType` (no-op if it has it already).
  FailureOr<Value> castTo(Value value, Type elementType,
                          ArrayRef<NamedAttribute> attrs = {});

  NamedAttribute i64Attr(StringRef name, int64_t value);
  NamedAttribute f64Attr(StringRef name, double value);
  NamedAttribute boolAttr(StringRef name, bool value);
  NamedAttribute strAttr(StringRef name, StringRef value);
  NamedAttribute i64ArrayAttr(StringRef name, ArrayRef<int64_t> values);

  //===--- Outputs --------------------------------------------------------===//

  unsigned numOutputs() const { return node.output_size(); }
  /// True if output `i` is named (some later node or the graph may read it).
  bool hasOutput(unsigned i) const;
  /// Defines output `i` (ignored if the output is absent).
  LogicalResult setOutput(unsigned i, Value value);
  /// Defines output `i` as a sequence of `values`.
  LogicalResult setOutputSequence(unsigned i, ArrayRef<Value> values);

  //===--- Errors ---------------------------------------------------------===//

  /// An error about this node: the model is wrong or a shape does not fit.
  LogicalResult fail(const Twine &message);
  /// An error saying dtc does not support `what` of this node.
  LogicalResult unsupported(const Twine &what);

  //===--- Helpers --------------------------------------------------------===//

  static RankedTensorType typeOf(Value value) {
    return llvm::cast<RankedTensorType>(value.getType());
  }
  /// Normalizes a possibly negative axis for `rank`; an error if out of range.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis");
  /// The model's producer_name ("pytorch" for torch.onnx.export).
  StringRef producer() const;
  /// The options the import runs under.
  const ImportOptions &options() const;
  /// Batch sizes when the importer rebinds the sample axis of a static
  /// export: (exported, bound); nullopt otherwise.
  std::optional<std::pair<int64_t, int64_t>> batchRebinding() const;

private:
  GraphImporter &graph;
};

/// Turns one node into dtg ops.
using Handler = LogicalResult (*)(NodeImporter &node);

/// Handlers by op type and the opset version they apply from.
class HandlerRegistry {
public:
  void add(StringRef opType, int64_t sinceVersion, Handler handler);
  /// The handler for `opType` at `opset`: the one with the highest
  /// since-version not above `opset`; null if none.
  Handler lookup(StringRef opType, int64_t opset) const;

private:
  llvm::StringMap<SmallVector<std::pair<int64_t, Handler>>> handlers;
};

const HandlerRegistry &getHandlerRegistry();

void registerElementwiseHandlers(HandlerRegistry &registry);
void registerShapeHandlers(HandlerRegistry &registry);
void registerNNHandlers(HandlerRegistry &registry);
void registerReductionHandlers(HandlerRegistry &registry);
void registerSequenceHandlers(HandlerRegistry &registry);
void registerResizeHandlers(HandlerRegistry &registry);

} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_NODEIMPORTER_H
