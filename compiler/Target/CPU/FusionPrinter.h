//===- FusionPrinter.h - the printer of one dtg.fusion's kernel -*- C++ -*-===//
//
// Each dtg.fusion becomes one file-scope function `fused_<n>(inputs...,
// outputs...)` called once where the op stands (see EmitFusion.cpp). This
// header holds what its parts share: the printer, index and load/store
// expressions, and the blocking constants. EmitFusion.cpp prints loops and
// gemm kernels, EmitFusionReduction.cpp reductions (CPU and CUDA), and
// EmitFusionScalar.cpp the scalar expression of each op and the tables of
// chains of one 16-bit value.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_CPU_FUSIONPRINTER_H
#define DTC_COMPILER_TARGET_CPU_FUSIONPRINTER_H

#include "compiler/Target/CPU/KernelEmitter.h"

#include "dialects/DTG/IR/DTGFusion.h"
#include "dialects/DTG/IR/DTGOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::dtc::cpu::fusion {

inline ArrayRef<int64_t> dimsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

inline int64_t numel(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `target = name;` for a value of `v`'s element type. A 16-bit float is
/// stored by its bits: GCC keeps a dtck::bf16 that is only stored as an
/// object in memory inside a loop nest, and such a copy ("more than one
/// data ref") keeps the loop scalar.
inline std::string storeStatement(StringRef target, StringRef name, Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  if (element.isBF16() || element.isF16())
    return (target + ".bits = " + name + ".bits;").str();
  return (target + " = " + name + ";").str();
}

/// `pointer[index]`, an element of `v`'s type. A bool is read through its
/// byte (dtck::loadBool): GCC does not vectorize a loop that loads bools
/// beside wider elements.
inline std::string loadExpression(StringRef pointer, StringRef index, Value v) {
  if (cast<RankedTensorType>(v.getType()).getElementType().isInteger(1))
    return ("dtck::loadBool(" + pointer + " + (" + index + "))").str();
  return (pointer + "[" + index + "]").str();
}

/// The combining op of a reduction in the CUDA library's numbering (0 sum,
/// 1 max, 2 min).
inline int reduceOpOf(Operation *r) {
  return isa<dtg::ReduceMaxOp>(r) ? 1 : isa<dtg::ReduceMinOp>(r) ? 2 : 0;
}

/// Elements above which a loop runs across OpenMP threads
/// (dtck::kParallelThreshold).
constexpr int64_t kParallelThreshold = 1 << 14;

/// Elements a CUDA elementwise kernel's thread moves as one access
/// (dtcg::Vec): 16 bytes of 32-bit elements.
constexpr int64_t kVector = 4;

/// Results of a column reduction (last dimension kept) one task accumulates
/// at once.
constexpr int64_t kColumnBlock = 64;

/// Results of a row reduction (last dimension reduced) one task accumulates
/// at once, and the elements of a row it buffers at a time.
constexpr int64_t kRowWays = 8;
constexpr int64_t kRowBlock = 1024;

/// Partial sums a result of fewer than kRowWays takes (one SIMD register of
/// doubles, or two), and the elements a result needs to take them.
constexpr int64_t kRowLanes = 8;
constexpr int64_t kRowLanesFrom = 4096;
/// The elements kRowWays results need to take kRowLanes partial sums each.
constexpr int64_t kRowLanesFromMany = 256;

/// Elements of one part of such a result: a result of two parts or more
/// sums its parts across threads (each in lanes), then the parts in order.
constexpr int64_t kRowPart = 64 * kRowBlock;

/// A strided read of an input (a block argument, possibly through views).
struct Source {
  std::string pointer;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};

/// The call of the scalar function computing `op` from `args`
/// (EmitFusionScalar.cpp).
FailureOr<std::string> scalarCall(Operation *op, ArrayRef<std::string> args,
                                  KernelEmitter &e);

/// Strides of a value of shape `dims` (read with `strides`) broadcast to
/// `space` (NumPy rules: 0 along broadcast and missing dimensions).
inline SmallVector<int64_t> broadcastTo(ArrayRef<int64_t> dims,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> space) {
  SmallVector<int64_t> result(space.size(), 0);
  size_t lead = space.size() - dims.size();
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1)
      result[lead + d] = strides[d];
  return result;
}

/// The index expression `offset + sum(index[d] * strides[d])`.
inline std::string indexExpr(int64_t offset, ArrayRef<int64_t> strides,
                             ArrayRef<std::string> index) {
  std::string s;
  if (offset != 0)
    s = std::to_string(offset);
  for (auto [d, stride] : llvm::enumerate(strides)) {
    if (stride == 0)
      continue;
    if (!s.empty())
      s += " + ";
    s += stride == 1 ? index[d] : index[d] + " * " + std::to_string(stride);
  }
  return s.empty() ? "0" : s;
}
/// Prints one fused kernel.
class FusionPrinter {
public:
  FusionPrinter(dtg::FusionOp op, KernelEmitter &e) : op(op), e(e) {}

  LogicalResult emit();

private:
  /// Sets up sources (inputs and views) and constants.
  LogicalResult prepare(llvm::raw_ostream &os);
  /// CPU: finds the chains of elementwise ops that are functions of one
  /// 16-bit float and hold a costly op, and declares a table of each
  /// (dtck::Table16) on `os`; fills `lookups` and `tabulatedOnly`.
  LogicalResult planTables(llvm::raw_ostream &os);
  /// The operands `op` is computed from: its own, or a table's argument.
  SmallVector<Value> operandsOf(Operation *op);
  /// The expression of `op`'s result from `args` (operandsOf's names).
  FailureOr<std::string> callOf(Operation *op, ArrayRef<std::string> args);
  /// The expression of `v` at the current element of iteration space
  /// `space` with index variables `index`; loads are declared in `os`.
  FailureOr<std::string> valueAt(Value v, ArrayRef<int64_t> space,
                                 ArrayRef<std::string> index,
                                 llvm::raw_ostream &os,
                                 llvm::DenseMap<Value, std::string> &names);
  /// Emits the elementwise `ops` at one element.
  LogicalResult computeOps(ArrayRef<Operation *> ops, ArrayRef<int64_t> space,
                           ArrayRef<std::string> index, llvm::raw_ostream &os,
                           llvm::DenseMap<Value, std::string> &names);
  LogicalResult emitLoop(llvm::raw_ostream &os, ArrayRef<Operation *> ops,
                         ArrayRef<int64_t> space, Value preloaded);
  LogicalResult emitReduction(llvm::raw_ostream &hostOs);
  /// CUDA: the reduction kernel (emitReduction's parts, printed into
  /// `kernels`) and its launch on `hostOs`.
  /// CUDA: the kernel combining the parts of each of `outCount` results
  /// left in `partial` by a reduction split over blocks.
  LogicalResult
  emitCombineParts(llvm::raw_ostream &hostOs, ArrayRef<Operation *> reductions,
                   int64_t outCount, int64_t parts,
                   function_ref<LogicalResult(StringRef)> emitResults);
  /// CUDA: a scratch buffer `partial` of `slots` doubles, of the
  /// launcher's, which the kernels opened next take as one more parameter.
  void addPartials(llvm::raw_ostream &hostOs, int64_t slots);
  LogicalResult emitDeviceReduction(
      llvm::raw_ostream &hostOs, ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
      ArrayRef<int64_t> keptDims, ArrayRef<Operation *> reductions,
      ArrayRef<std::string> acc,
      function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<std::string> &,
                        StringRef)>
          emitKept,
      function_ref<LogicalResult(ArrayRef<std::string>, StringRef)> emitUpdates,
      function_ref<LogicalResult(StringRef)> emitResults);
  LogicalResult emitGemm(llvm::raw_ostream &os);
  /// CUDA: how many leading ops of a gemm kernel's `epilogue` cuBLASLt
  /// applies (0, or a bias add, possibly followed by a ReLU or the tanh
  /// GELU), with the matmulView argument that asks for them and the output
  /// its GELU input goes to.
  size_t matchLtEpilogue(Value product, ArrayRef<Operation *> epilogue,
                         std::string &arg, std::optional<unsigned> &auxOutput);

  std::string fresh() { return "t" + std::to_string(counter++); }

  /// CUDA: starts a __global__ kernel (the next "@NAME@_<k>") taking the
  /// function's parameters, with the constants; returns its name.
  std::string openKernel();
  /// CUDA: a launch of `kernel` over `grid` blocks of `block` threads.
  std::string launch(StringRef kernel, StringRef grid, StringRef block);

  dtg::FusionOp op;
  KernelEmitter &e;
  Block *body = nullptr;
  llvm::DenseMap<Value, Source> sources;
  llvm::DenseMap<Value, std::string> constants;
  /// CPU: an op whose value is read from a table of a function of one
  /// 16-bit float (`leaf`), and the table's name.
  struct Lookup {
    Value leaf;
    std::string table;
  };
  llvm::DenseMap<Operation *, Lookup> lookups;
  /// CPU: ops whose values only tables need: not computed in the loops.
  llvm::DenseSet<Operation *> tabulatedOnly;
  /// CPU: a reduction's input space with adjacent reduced dimensions that
  /// every access walks as one merged, and the strides of the inputs it
  /// reads over it.
  SmallVector<int64_t> mergedSpace;
  llvm::DenseMap<Value, SmallVector<int64_t>> mergedStrides;
  /// Output number of each yielded value (the first, if yielded twice).
  llvm::DenseMap<Value, unsigned> outputOf;
  /// A value whose element is read from an output (the gemm's product).
  Value preloadedValue;
  std::string preloadedPointer;
  unsigned counter = 0;
  /// CUDA: the kernels (printed before the host function), the parameter
  /// list and arguments they share, and the constants' declarations.
  std::string kernelsText;
  llvm::raw_string_ostream kernels{kernelsText};
  std::string params, args, constantsText;
  unsigned numKernels = 0;
  /// The C type of the kernels' index arithmetic: CUDA kernels whose every
  /// tensor and iteration space has fewer than 2^31 elements use `int` (a
  /// GPU divides 64-bit integers in software).
  std::string idx = "int64_t";
  /// CUDA: the bias gradient the product computes too (into the
  /// launcher's parameter `bgrad`), or null.
  const BiasGradFold *biasGrad = nullptr;
};

} // namespace mlir::dtc::cpu::fusion

#endif // DTC_COMPILER_TARGET_CPU_FUSIONPRINTER_H
