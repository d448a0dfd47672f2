//===- CompiledRunner.cpp - run a model's forward through generated code -===//

#include "compiler/Driver/CompiledRunner.h"

#include "compiler/Driver/ModelRunner.h"
#include "compiler/Driver/Npy.h"
#include "compiler/Target/HostBuild.h"
#include "compiler/Target/TargetInfo.h"
#include "compiler/Target/WeightsLayout.h"
#include "passes/Fusion/Passes.h"
#include "passes/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::dtc;
using dtg::interp::Tensor;

static std::string pathIn(StringRef folder, StringRef name) {
  SmallString<256> p(folder);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

LogicalResult CompiledForward::build(ModuleOp module, StringRef dir,
                                     std::string &error) {
  folder = dir.str();
  context = module.getContext();
  // As `dtc compile` runs them: kernels fused, then memory planned.
  PassManager pm(context);
  pm.addNestedPass<func::FuncOp>(createFusePass());
  pm.addPass(createPlanMemoryPass());
  if (failed(pm.run(module))) {
    error = "memory planning failed";
    return failure();
  }
  auto main = module.lookupSymbol<func::FuncOp>("main");
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto role = main.getArgAttrOfType<StringAttr>(i, attrs::kRole);
    auto name = main.getArgAttrOfType<StringAttr>(i, attrs::kName);
    inputNames.push_back(role && role.getValue() == "input" && name
                             ? name.str()
                             : std::string());
  }
  resultNames = dtc::resultNames(module);
  std::unique_ptr<TargetInfo> target = createCPUTargetInfo();
  std::vector<SourceFile> sources;
  if (failed(target->emitProgram(module, ProgramKind::Forward, "forward.cpp",
                                 sources))) {
    error = "code generation failed";
    return failure();
  }
  std::vector<std::string> sourcePaths;
  if (!writeProgramSources(folder, sources, sourcePaths, error))
    return failure();
  if (failed(WeightsLayout(main).write(pathIn(folder, "weights.bin")))) {
    error = "cannot write weights.bin";
    return failure();
  }
  if (!target->buildExecutable(sourcePaths, pathIn(folder, "forward"), error))
    return failure();
  return success();
}

FailureOr<SmallVector<Tensor>>
CompiledForward::run(const llvm::StringMap<Tensor> &inputs,
                     std::string &error) {
  SmallVector<std::string> argv{pathIn(folder, "forward")};
  for (const std::string &name : inputNames) {
    if (name.empty())
      continue;
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      error = "no data for input '" + name + "'";
      return failure();
    }
    std::string file =
        pathIn(folder, "in-" + std::to_string(argv.size()) + ".npy");
    if (!writeNpy(it->second, file, error))
      return failure();
    argv.push_back("--input");
    argv.push_back(name + "=" + file);
  }
  std::string outDir = pathIn(folder, "out");
  argv.push_back("--output-dir");
  argv.push_back(outDir);
  SmallVector<StringRef> args(argv.begin(), argv.end());
  std::string log = pathIn(folder, "run.log");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  int rc = llvm::sys::ExecuteAndWait(argv.front(), args, std::nullopt,
                                     redirects, 0, 0, &error);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    error = "the compiled program failed (exit " + std::to_string(rc) + ")" +
            (text ? ": " + (*text)->getBuffer().trim().str() : "");
    return failure();
  }
  SmallVector<Tensor> results;
  for (const std::string &name : resultNames) {
    std::optional<Tensor> t =
        readNpy(context, pathIn(outDir, name + ".npy"), error);
    if (!t)
      return failure();
    results.push_back(std::move(*t));
  }
  return results;
}
