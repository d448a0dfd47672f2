//===- InterpretTrainCommand.cpp - `dtc interpret-train` ------------------===//
//
// Builds the training step of a model and runs it in the reference
// interpreter: the oracle that compiled training is held against, and a way
// to compare dtc's training semantics with PyTorch's before any code is
// generated.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/ModelRunner.h"
#include "compiler/Driver/Npy.h"

#include "dialects/DTG/Interp/Interpreter.h"
#include "passes/Training/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

/// Rows [start, start + count) of `t` along axis 0, wrapping around.
static Tensor takeRows(const Tensor &t, int64_t start, int64_t count) {
  SmallVector<int64_t> shape(t.shape);
  int64_t rows = shape[0], rowSize = rows ? t.numElements() / rows : 0;
  shape[0] = count;
  Tensor r = Tensor::zeros(t.elementType, shape);
  for (int64_t k = 0; k < count; ++k) {
    int64_t src = (start + k) % rows;
    for (int64_t e = 0; e < rowSize; ++e) {
      if (t.isFloat())
        r.f[k * rowSize + e] = t.f[src * rowSize + e];
      else
        r.i[k * rowSize + e] = t.i[src * rowSize + e];
    }
  }
  return r;
}

int mlir::dtc::runInterpretTrainCommand(
    const InterpretTrainCommandOptions &cmd) {
  if (cmd.globalBatch <= 0)
    return reportError("--global-batch must be a positive integer");
  int64_t micro = cmd.microBatch > 0 ? cmd.microBatch : cmd.globalBatch;
  if (cmd.globalBatch % micro != 0)
    return reportError("--micro-batch " + Twine(micro) +
                       " does not divide --global-batch " +
                       Twine(cmd.globalBatch));
  if (cmd.steps < 0)
    return reportError("--steps must not be negative");
  ShapeOptions shapes = cmd.shapes;
  shapes.batch = micro;
  ImportOptions options;
  if (!parseShapeOptions(shapes, options))
    return 1;
  options.forTraining = true;

  MLIRContext context;
  context.disableMultithreading();
  DriverDiagnostics diagnostics(&context);

  // Data.
  llvm::StringMap<Tensor> data;
  for (const std::string &list : cmd.data) {
    SmallVector<StringRef> entries;
    StringRef(list).split(entries, ',', -1, false);
    for (StringRef entry : entries) {
      std::string name, file, error;
      if (!splitAssignment(entry, name, file))
        return reportError("--data expects NAME=FILE.npy, got '" + entry + "'");
      std::optional<Tensor> t = readNpy(&context, file, error);
      if (!t)
        return reportError("--data " + name + ": " + error);
      if (t->shape.empty() || t->shape[0] == 0)
        return reportError("--data " + name + ": '" + file +
                           "' has no samples along axis 0");
      data[name] = std::move(*t);
    }
  }

  FailureOr<OwningOpRef<ModuleOp>> module =
      importAndClean(&context, cmd.model, options);
  if (failed(module))
    return 1;
  BuildTrainStepPassOptions training = cmd.training;
  training.microBatches = cmd.globalBatch / micro;
  training.returnGradients = !cmd.dumpGradients.empty();
  PassManager pm(&context);
  pm.addPass(createBuildTrainStepPass(training));
  if (failed(pm.run(**module)))
    return 1;
  auto step = (*module)->lookupSymbol<func::FuncOp>("train_step");

  // Arguments by role.
  SmallVector<Tensor> args;
  SmallVector<std::string> argNames, argRoles;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(i, attrs::kName).str();
    auto role = step.getArgAttrOfType<StringAttr>(i, attrs::kRole).str();
    auto type = cast<RankedTensorType>(step.getArgument(i).getType());
    argNames.push_back(name);
    argRoles.push_back(role);
    Tensor t = Tensor::zeros(type.getElementType(), type.getShape());
    if (role == "parameter" || role == "constant" || role == "state") {
      auto initial = step.getArgAttrOfType<ElementsAttr>(i, attrs::kInitial);
      if (!initial)
        return reportError("weights of '" + name + "' are absent");
      t = *dtg::interp::tensorFromAttr(initial);
    } else if (role == "hyper") {
      Attribute value = step.getArgAttr(i, "dtg.default");
      if (auto f = dyn_cast<FloatAttr>(value))
        t.f[0] = f.getValueAsDouble();
      else if (auto n = dyn_cast<IntegerAttr>(value))
        t.i[0] = n.getInt();
    } else if (role == "input") {
      auto it = data.find(name);
      if (it == data.end())
        return reportError("no --data for input '" + name + "'");
      SmallVector<int64_t> sample(type.getShape().drop_front());
      if (ArrayRef<int64_t>(it->second.shape).drop_front() !=
              ArrayRef<int64_t>(sample) ||
          it->second.elementType != type.getElementType()) {
        std::string want;
        llvm::raw_string_ostream os(want);
        os << RankedTensorType::get(sample, type.getElementType());
        return reportError("--data " + name + ": samples must be " + want);
      }
    }
    args.push_back(std::move(t));
  }

  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!cmd.logJsonl.empty()) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(cmd.logJsonl, ec);
    if (ec)
      return reportError("cannot write '" + cmd.logJsonl +
                         "': " + ec.message());
  }
  llvm::raw_ostream &os = log ? *log : llvm::outs();

  for (int64_t k = 0; k < cmd.steps; ++k) {
    for (unsigned i = 0; i < args.size(); ++i) {
      if (argRoles[i] == "input")
        args[i] =
            takeRows(data[argNames[i]], k * cmd.globalBatch, cmd.globalBatch);
      else if (argRoles[i] == "step")
        args[i].i[0] = k;
    }
    FailureOr<SmallVector<Tensor>> results =
        dtg::interp::interpretFunction(step, args);
    if (failed(results))
      return 1;
    // Results: state back into the arguments by name and role.
    double loss = 0, lr = 0, norm = 0;
    for (unsigned r = 0; r < step.getNumResults(); ++r) {
      auto name = step.getResultAttrOfType<StringAttr>(r, attrs::kName).str();
      auto role = step.getResultAttrOfType<StringAttr>(r, attrs::kRole).str();
      const Tensor &value = (*results)[r];
      if (role == "metric") {
        (name == "loss" ? loss : name == "lr" ? lr : norm) = value.get(0);
        continue;
      }
      if (role == "gradient") {
        if (k != 0)
          continue;
        if (std::error_code ec =
                llvm::sys::fs::create_directories(cmd.dumpGradients))
          return reportError("cannot create '" + cmd.dumpGradients + "'");
        SmallString<256> path(cmd.dumpGradients);
        llvm::sys::path::append(path, name + ".npy");
        std::string error;
        if (!writeNpy(value, path, error))
          return reportError(error);
        continue;
      }
      for (unsigned i = 0; i < args.size(); ++i)
        if (argNames[i] == name && argRoles[i] == role)
          args[i] = value;
    }
    os << "{\"step\": " << k + 1 << ", \"loss\": " << llvm::format("%.9g", loss)
       << ", \"lr\": " << llvm::format("%.9g", lr)
       << ", \"grad_norm\": " << llvm::format("%.9g", norm) << "}\n";
    os.flush();
  }
  return 0;
}
