//===- InPlace.h - which results may be written over an operand -*- C++ -*-===//
//
// The one rule the memory planner asks before giving a result the buffer of
// an operand that dies at the op. It is a property of the op, not of a
// target: every kernel of every target is required to honour it.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_PASSES_MEMORY_INPLACE_H
#define DTC_PASSES_MEMORY_INPLACE_H

#include "mlir/IR/Operation.h"

namespace mlir::dtc::memory {

/// True if result `result` of `op` may be written over operand `operand`'s
/// buffer, that is if each element of the result depends, of that operand,
/// only on the element at the same position, and both have the same shape and
/// the same element byte width (so the element at a position occupies the
/// same bytes in both). A kernel then reads that element before writing the
/// result element at the same position, which every target's kernels of these
/// ops do (the CPU ones were checked in runtime/include/dtcrt/kernels/). A
/// target whose kernel of some op cannot (say one that stages a tile of the
/// output before it has read the whole input tile) narrows the rule here.
///
/// The ops, and why each is safe:
/// - ops with MLIR's `Elementwise` trait (unary math, activations, clip,
///   is_nan, is_inf, not, cast): `y[i] = f(x[i])`;
/// - binary arithmetic, logic and comparisons and `where`, for an operand
///   that is not broadcast (its shape is the result's): `r[i] = f(a[i],
///   b[j])` with `b[j]` a broadcast element of another operand;
/// - `dropout` (its result over its operand; the mask is another buffer) and
///   `trilu`: `y[i]` is `x[i]` scaled or zeroed;
/// - `scatter_elements`, its result over `data` only: `y[i]` is `data[i]` or
///   an element of `updates` (which must not share the buffer);
/// - `sgd_update` and `adamw_update`, each new tensor over any of the old
///   tensors (param, grad, momentum or moments): step `k` of the update reads
///   element `k` of every input before writing element `k` of every output.
/// - a `loop` `dtg.fusion`, each result over an operand of its shape that no
///   view inside the kernel reads (so the kernel reads it at the position it
///   writes: every loop kernel reads all its inputs at an iteration's
///   position before it writes that position's outputs; the CPU kernel
///   drops `__restrict` from such pairs).
/// Everything else (contractions, reductions, data movement, norms, softmax,
/// calls, every other op with regions, and `reduction` and `gemm` fusions)
/// is refused.
///
/// The caller checks the rest: the operand's buffer dies at `op`, no other
/// result takes it, and every other operand of `op` that reads the same
/// buffer is itself one that this rule allows.
bool mayWriteOver(Operation *op, unsigned result, unsigned operand);

} // namespace mlir::dtc::memory

#endif // DTC_PASSES_MEMORY_INPLACE_H
