//===- CppTarget.h - a program printed as C++ (the CPU and CUDA targets) -===//
//
// What the CPU and CUDA targets share: the step's functions
// (CppEmitter.h), the tensor descriptors, `kModel` and `main`. A target
// says which headers the program includes, how `step` wraps the step
// function, and how the source is built.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_CPU_CPPTARGET_H
#define DTC_COMPILER_TARGET_CPU_CPPTARGET_H

#include "compiler/Target/CPU/CppEmitter.h"
#include "compiler/Target/TargetInfo.h"

namespace mlir::dtc {

class CppProgramTarget : public TargetInfo {
public:
  LogicalResult emitProgram(ModuleOp module, ProgramKind kind,
                            StringRef mainFile,
                            std::vector<SourceFile> &sources) override;
  LogicalResult emitPipelinedProgram(ArrayRef<ModuleOp> stages,
                                     ArrayRef<std::string> weightsFiles,
                                     StringRef mainFile,
                                     std::vector<SourceFile> &sources) override;

protected:
  /// The includes every program starts with.
  virtual void emitHeader(llvm::raw_ostream &os);
  /// How functions are printed.
  virtual cpu::EmitOptions emitOptions() const { return {}; }
  /// Whether fused kernels may go to translation units of their own
  /// (`<stem>-kernels-<k>.cpp`), compiled in parallel with the step's.
  virtual bool splitsKernels() const { return true; }
  /// `step` (and `evalStep` when `eval`) of the dtcrt_model_desc, calling
  /// fn_<entry> (fn_eval_step); `arenaBytes` is the plan's arena.
  virtual void emitWrappers(llvm::raw_ostream &os, StringRef entry, bool eval,
                            int64_t arenaBytes);
  /// Fields of dtcrt_model_desc after `weights_file`, each with a leading
  /// ", " (none: zero).
  virtual std::string extraModelFields() const { return ""; }

  /// The functions, descriptors and `kModel` of one program (a pipeline
  /// stage's, `weightsFile` naming its initial values). With `kernels`, the
  /// fused kernels' definitions go there and `os` declares them; with
  /// `sharedKernels` too, a kernel an earlier stage defined is called there
  /// (cpu::EmitOptions::sharedKernels).
  LogicalResult
  emitModel(ModuleOp module, ProgramKind kind, int64_t stage,
            StringRef weightsFile, llvm::raw_ostream &os,
            std::vector<std::string> *kernels,
            llvm::StringMap<std::string> *sharedKernels = nullptr);
};

} // namespace mlir::dtc

#endif // DTC_COMPILER_TARGET_CPU_CPPTARGET_H
