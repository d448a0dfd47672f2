//===- GraphImporter.h - one ONNX graph -> one func.func ------------*- C++
//-*-===//

#ifndef DTC_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H
#define DTC_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H

#include "compiler/Import/ONNX/NodeImporter.h"
#include "compiler/Import/ONNX/TensorProto.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace mlir::dtc::onnx_import {

/// Imports the (validated, topologically sorted) graph of a model into @main.
class GraphImporter {
public:
  /// `owner`, when given, owns `model` and may outlive the import: the
  /// parameters' resource blobs then point into its raw data.
  GraphImporter(MLIRContext *context, const onnx::ModelProto &model,
                StringRef path, const ImportOptions &options,
                std::shared_ptr<const void> owner = nullptr);

  /// Builds the module; failure after emitting an error.
  FailureOr<OwningOpRef<ModuleOp>> run();

  ImportFailure failureKind = ImportFailure::Invalid;

private:
  friend class NodeImporter;

  /// An initializer: its type, and its value once read.
  struct Initializer {
    const onnx::TensorProto *proto;
    RankedTensorType type;
    std::optional<dtg::interp::Tensor> value;
    std::string readError;
    bool missing = false;
  };

  /// A graph input: its bound type.
  struct GraphInput {
    RankedTensorType type;
    /// Batch size in the export when axis 0 was static and got rebound.
    std::optional<int64_t> exportedBatch;
  };

  LogicalResult collectInitializers();
  LogicalResult collectInputs();
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index);
  /// Warns if the parameters carry the names PyTorch 2's exporter gives the
  /// initializers its optimizer folds.
  void warnIfOptimizedExport();
  Location nodeLocation(const onnx::NodeProto &node, unsigned index);

  /// The value of ONNX name `name`, materializing arguments and constants on
  /// first use; null (with an error) if the name is not defined.
  Value lookup(StringRef name, Location loc);
  /// The compile-time value of `name` if it has one (constants,
  /// initializers, bindable inputs); binding a bindable input turns it into a
  /// constant for good.
  std::optional<dtg::interp::Tensor> lookupConstant(StringRef name);
  BlockArgument addArgument(StringRef name, RankedTensorType type,
                            StringRef role, Attribute initial);
  const dtg::interp::Tensor *initializerValue(Initializer &init);
  /// ImportOptions::appendedLoss: the logits as an output (appended to
  /// `names` and `results`) and the labels as a data input, where the graph
  /// has neither.
  LogicalResult addAppendedLossValues(SmallVectorImpl<std::string> &names,
                                      SmallVectorImpl<Value> &results);

  MLIRContext *context;
  const onnx::ModelProto &model;
  std::string path;
  const ImportOptions &options;
  TensorSource source;
  int64_t opset = 0;
  Location fileLoc;

  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  Block *body = nullptr;

  llvm::StringMap<Value> values;
  /// Sequences (SplitToSequence, SequenceConstruct, ...): lists of tensors
  /// known while importing, which only sequence ops read.
  llvm::StringMap<SmallVector<Value>> sequences;
  std::map<std::string, Initializer> initializers;
  llvm::StringMap<GraphInput> inputs;
  /// Initializers that are BatchNormalization running statistics.
  llvm::StringSet<> stateNames;
  std::optional<std::pair<int64_t, int64_t>> rebinding;
};

} // namespace mlir::dtc::onnx_import

#endif // DTC_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H
