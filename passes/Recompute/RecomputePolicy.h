//===- RecomputePolicy.h - what the backward recomputes -------------*- C++
//-*-===//
//
// The analyses behind dtc-recompute: a function's forward ops, its layers,
// the recomputed set of each mode, the bytes it leaves saved, and the
// rewrite that clones the recomputed producers into the backward.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_RECOMPUTE_RECOMPUTEPOLICY_H
#define DTC_PASSES_RECOMPUTE_RECOMPUTEPOLICY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <string>

namespace mlir::dtc::recompute {

/// The unit attribute BuildTrainStep puts on the reverse sweep.
constexpr StringLiteral kBackward = "dtg.backward";

/// A set of forward ops whose results the backward recomputes, in program
/// order of insertion.
using OpSet = llvm::SetVector<Operation *>;

/// The forward side of a function with a reverse sweep.
struct ForwardInfo {
  /// Forward ops (not in backwardOps, not constants, not the terminator) in
  /// program order.
  SmallVector<Operation *> ops;
  /// The ops of `ops` that may be cloned: pure, without regions, with
  /// statically shaped tensor results none of which the function returns.
  llvm::DenseSet<Operation *> recomputable;
  /// Layer of each op of `ops` (index into `layerNames`), -1 outside any
  /// layer.
  llvm::DenseMap<Operation *, int> layer;
  SmallVector<std::string> layerNames;
};

/// Collects the forward ops of `func` and their layers: the path of the ONNX
/// node name up to its first numbered segment ("/h.3/attn/MatMul" is in
/// "/h.3"), or, when no op has one, ceil(sqrt(N)) consecutive segments.
ForwardInfo analyzeForward(func::FuncOp func);

/// The ops of the reverse sweep in program order: the ops marked
/// `dtg.backward` and the unmarked ones after the first of them (folds of
/// backward ops, such as a transpose of a transpose, lose the mark).
SmallVector<Operation *> backwardOps(func::FuncOp func);

/// True if `func` holds a reverse sweep.
bool hasBackward(func::FuncOp func);

/// Full recompute: every recomputable op of a layer except the layer's
/// outputs (values read by a forward op of another layer or of none).
OpSet fullSet(const ForwardInfo &info);

/// Selective recompute (Korthikanti et al. 2022): the cheap, memory-heavy ops
/// (elementwise, softmax, dropout, shape ops, products of two activations)
/// whose inputs the backward saves anyway.
OpSet selectiveSet(func::FuncOp func, const ForwardInfo &info);

/// The ops of `recomputed` the rewrite would clone: those whose results a
/// backward op reads, and, transitively, the recomputed producers of their
/// operands.
OpSet neededOps(func::FuncOp func, const OpSet &recomputed);

/// Bytes of the distinct buffers (through reshape aliases) that stay saved
/// for the backward when `recomputed` is recomputed; arguments and
/// constants excluded.
int64_t savedBytes(func::FuncOp func, const OpSet &recomputed);

/// Clones the needed ops of `recomputed` into the backward, each just
/// before the first backward op that reads it (directly or through another
/// clone), marked `dtg.backward` and `dtg.recompute`, and rewires the
/// backward to the clones; erases forward ops of `recomputed` left without
/// users. Returns the clones.
SmallVector<Operation *> applyRecompute(func::FuncOp func,
                                        const OpSet &recomputed);

} // namespace mlir::dtc::recompute

#endif // DTC_PASSES_RECOMPUTE_RECOMPUTEPOLICY_H
