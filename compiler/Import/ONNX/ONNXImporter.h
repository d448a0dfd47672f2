//===- ONNXImporter.h - ONNX model -> dtg ---------------------------*- C++
//-*-===//
//
// The public entry of the ONNX importer. This header does not expose protobuf
// or ONNX types, so the rest of the compiler builds without them.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define DTC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "dialects/DTG/Interp/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::dtc {

/// How the importer binds shapes and data.
/// What --loss, --logits and --labels name.
struct AppendedLoss {
  std::string kind, logits, labels;
};

struct ImportOptions {
  /// Binds axis 0 of every data input (the sample axis) to this size.
  std::optional<int64_t> batch;
  /// Whole shapes of data inputs (`--input-shape NAME=DIMxDIM`).
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Element types of data inputs (`--input-shape NAME=DIMxDIM:DTYPE`), by
  /// name (isElementTypeName).
  llvm::StringMap<std::string> inputTypes;
  /// When false, initializers whose external data is absent become parameters
  /// without initial values (planning a model too large to materialize).
  bool requireWeights = true;
  /// Most elements a tensor of the model may have: 2^31, or 2^40 when
  /// weights may be absent (an import that only plans allocates nothing per
  /// element; a trillion-parameter GPT has 2.6 x 2^30-element weights).
  int64_t maxTensorElements() const;
  /// Values of data inputs that may become constants where an op needs a
  /// compile-time value (the shape input of a Reshape in a conformance test).
  llvm::StringMap<dtg::interp::Tensor> bindableInputs;
  /// BatchNormalization exported in inference mode (PyTorch 2's exporter
  /// traces eval mode only) normalizes with the batch's statistics and
  /// updates its running statistics, as under PyTorch's model.train().
  bool trainBatchNorm = false;
  /// The import is for a training step (compile, interpret-train, plan,
  /// autotune): warn where the model looks optimized for inference.
  bool forTraining = false;
  /// A loss the training step appends (--loss KIND --logits NAME --labels
  /// NAME): the import makes `logits` an output if it is an inner value of
  /// the graph (a classifier whose output is its softmax), and adds `labels`
  /// as a data input if the model has none of that name (one int64 class
  /// per row of the logits for cross_entropy, the logits' type for mse).
  std::optional<AppendedLoss> appendedLoss;
};

/// Whether `name` is a dtype --input-shape takes: float32 (float), float64
/// (double), float16 (half), bfloat16, int64 (long), int32 (int), bool.
bool isElementTypeName(StringRef name);
/// The element type of such a name.
Type elementTypeNamed(MLIRContext *context, StringRef name);

/// Builds op `opName` at the builder's insertion point with `operands` and
/// `attributes`, its `numResults` result types inferred (InferTypeOpInterface)
/// unless `resultTypes` gives them. Where inference fails the op is erased
/// and the result is failure: the op reported why, or (an op that cannot
/// infer, a wrong result count) `internalError` says it. Shared by the
/// importers; the caller verifies.
FailureOr<Operation *> createInferred(OpBuilder &builder, Location loc,
                                      StringRef opName, ValueRange operands,
                                      ArrayRef<NamedAttribute> attributes,
                                      TypeRange resultTypes,
                                      unsigned numResults,
                                      std::string &internalError);

/// The `stream` of a new dtg.dropout in `block`: one more than the dropouts
/// already there, so that each draws its own mask (both importers).
int64_t nextDropoutStream(Block *block);

/// Adds `loss.labels` as a data input of @main `func`, after the other data
/// inputs, unless it has an input of that name: one int64 class per row of
/// `logits` for cross_entropy (the logits' shape without its class axis, the
/// last but trailing 1s, as the training step counts them), `logits`' type
/// for mse. Shared by the importers; the training step checks the names and
/// kinds.
void addAppendedLossLabels(func::FuncOp func, Value logits,
                           const AppendedLoss &loss);

/// Why an import failed.
enum class ImportFailure {
  /// The model is valid but uses something dtc does not support (an op, an
  /// attribute value, an opset, a data type).
  Unsupported,
  /// The model or the file is broken, or a shape does not fit.
  Invalid,
};

/// Imports the ONNX model at `path` into a module with one function, @main.
/// Errors go to the context's diagnostic engine, located at the ONNX node
/// (a NameLoc of the node name inside a FileLineColLoc of the file); on
/// failure `failureKind` says which kind of error stopped the import.
FailureOr<OwningOpRef<ModuleOp>>
importONNXModel(MLIRContext *context, StringRef path,
                const ImportOptions &options,
                ImportFailure *failureKind = nullptr);

/// Imports a serialized ONNX model held in memory, as importONNXModel does
/// for a file. `path` names the model in locations, and its folder is where
/// external data is looked up (it need not exist).
FailureOr<OwningOpRef<ModuleOp>>
importONNXModelFromBuffer(MLIRContext *context, StringRef buffer,
                          StringRef path, const ImportOptions &options,
                          ImportFailure *failureKind = nullptr);

/// Reads a serialized TensorProto file (a backend test's input_0.pb) into
/// its name and value; nullopt with `error` set on failure, and
/// `unsupported` set if the element type is one dtc does not hold.
std::optional<std::pair<std::string, dtg::interp::Tensor>>
readTensorFile(MLIRContext *context, StringRef path, std::string &error,
               bool &unsupported);

/// The names of a model's data inputs (graph inputs that are not
/// initializers), in order; nullopt with `error` set on failure.
std::optional<std::vector<std::string>> readGraphInputNames(StringRef path,
                                                            std::string &error);

/// The ONNX node name the importer stamped on `loc` (a NameLoc, possibly
/// inside a FusedLoc), or "" if there is none.
inline std::string onnxNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = onnxNodeName(inner); !s.empty())
        return s;
  return "";
}

/// The dialects an imported module uses; load them before importing.
void loadImportedDialects(MLIRContext *context);

/// Names of the function-argument and -result attributes the importer sets.
namespace attrs {
/// The ONNX name of an argument or result (StringAttr).
constexpr StringLiteral kName = "dtg.name";
/// What an argument is: "parameter", "state" or "input" (StringAttr).
constexpr StringLiteral kRole = "dtg.role";
/// The initial value of a parameter or state (ElementsAttr); absent for a
/// weightless import.
constexpr StringLiteral kInitial = "dtg.initial";
} // namespace attrs

} // namespace mlir::dtc

#endif // DTC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
