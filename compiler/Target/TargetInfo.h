//===- TargetInfo.h - what code generation needs of a target --------*- C++
//-*-===//
//
// The narrow interface between the target-neutral compiler and a device
// target (CPU now, CUDA later): print the module's step as source and build
// it into OUTDIR/train.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_TARGETINFO_H
#define DTC_COMPILER_TARGET_TARGETINFO_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::dtc {

/// What the emitted program is for.
enum class ProgramKind {
  /// OUTDIR/train: @train_step under the runtime's training loop.
  Training,
  /// A forward-only program that reads .npy inputs and writes .npy outputs
  /// (`dtc test-onnx --target cpu`).
  Forward,
};

/// A generated translation unit: its file name (in the output folder) and
/// its text.
struct SourceFile {
  std::string name;
  std::string text;
};

class TargetInfo {
public:
  virtual ~TargetInfo() = default;
  virtual StringRef name() const = 0;
  /// Prints the whole program (kernels, step, descriptors, main) of a module
  /// whose memory is planned into `sources`: first `mainFile` (the step,
  /// descriptors and main), then whatever other translation units the
  /// target splits off (the CPU target's fused kernels, built in parallel).
  /// Deterministic: same module, same files and bytes.
  virtual LogicalResult emitProgram(ModuleOp module, ProgramKind kind,
                                    StringRef mainFile,
                                    std::vector<SourceFile> &sources) = 0;
  /// Prints one program holding a training step per pipeline stage (each
  /// module a stage's, memory planned; `weightsFiles[s]` the file beside
  /// the executable with stage s's initial values), whose ranks each run
  /// their stage's; `sources` as for emitProgram.
  virtual LogicalResult
  emitPipelinedProgram(ArrayRef<ModuleOp> stages,
                       ArrayRef<std::string> weightsFiles, StringRef mainFile,
                       std::vector<SourceFile> &sources) = 0;
  /// Compiles the files at `sources` (paths, the first holding main) into
  /// the executable `output`; false with `log` set on failure.
  virtual bool buildExecutable(ArrayRef<std::string> sources, StringRef output,
                               std::string &log) = 0;
};

/// Options of the CPU target.
struct CPUTargetOptions {
  /// The host compiler's -march: "native" (the building machine's CPU, the
  /// fastest code) or a baseline every rank's CPU has, such as x86-64-v3.
  std::string arch = "native";
};

/// The C++/OpenMP/OpenBLAS target.
std::unique_ptr<TargetInfo>
createCPUTargetInfo(const CPUTargetOptions &options = {});

struct HostBuild;
/// How the CPU target builds a program for `arch` (its -march): the host
/// compiler, its flags, the runtime's headers and libraries. `dtc
/// calibrate` builds its microbenchmarks the same way, so that they time
/// the code the generated programs run.
HostBuild cpuHostBuild(StringRef arch);

/// Options of the CUDA target.
struct CUDATargetOptions {
  /// Build with the host compiler under the emulation header (no GPU, no
  /// nvcc needed) instead of nvcc.
  bool emulation = false;
  /// nvcc (a path, or a name on PATH).
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  /// The compute capabilities nvcc builds machine code for.
  std::vector<std::string> archs = {"80", "90"};
};

/// The CUDA C++/cuBLASLt target (one rank per program).
std::unique_ptr<TargetInfo>
createCUDATargetInfo(const CUDATargetOptions &options = {});

} // namespace mlir::dtc

#endif // DTC_COMPILER_TARGET_TARGETINFO_H
