//===- CppEmitter.h - the step as C++ over the kernel library -------*- C++
//-*-===//

#ifndef DTC_COMPILER_TARGET_CPU_CPPEMITTER_H
#define DTC_COMPILER_TARGET_CPU_CPPEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::dtc::cpu {

/// The C++ type of an element type ("" if the CPU target has none).
std::string cTypeName(Type type);
/// The runtime's dtype name of an element type ("f32", "i64", "bool", ...).
std::string dtypeName(Type type);

/// The runtime's mask of mesh axes (DTCRT_AXIS_*: pp 1, dp 2, tp 4), or -1
/// if an axis is none of those.
int meshAxesMask(ArrayRef<StringAttr> axes);

/// The runtime's slot of an asynchronous collective (a dist.*_start op):
/// distinct for every start op of the program.
int asyncSlot(Operation *start);

/// How the functions are printed: for the CPU target (dtck kernels, C++
/// loops) or the CUDA target (dtcg kernels, fused kernels as __global__
/// functions and their launches).
struct EmitOptions {
  bool cuda = false;
  /// For the CUDA target: whether its library has `kernel` (dtcg::kernel).
  std::function<bool(StringRef kernel)> hasKernel;
  /// For the CPU target: where fused kernels' definitions go (each with
  /// external linkage, in emission order) when they are built apart from
  /// the step; the functions' text then only declares them.
  std::vector<std::string> *kernelDefinitions = nullptr;
  /// With kernelDefinitions, for the stages of a pipelined program: fused
  /// kernels by their text, each the qualified name of its first
  /// definition, shared by the stages (a transformer's stages have the
  /// same kernels), and this stage's qualifier ("stage1::").
  llvm::StringMap<std::string> *sharedKernels = nullptr;
  std::string kernelScope;
};

/// Prints every function of a planned module as
/// `static void fn_<name>(void *const *args, void *const *results,
/// dtcrt_step_ctx *ctx, int64_t base)`, callees first, after the shared
/// declarations (shapes, arrays, constants) and `initConstants()`.
LogicalResult emitFunctions(ModuleOp module, llvm::raw_ostream &os,
                            const EmitOptions &options = {});

} // namespace mlir::dtc::cpu

#endif // DTC_COMPILER_TARGET_CPU_CPPEMITTER_H
