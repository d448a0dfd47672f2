//===- StepLoops.h - repeated ops of a step printed as loops -----*- C++
//-*-===//
//
// A step function is a sequence of kernel calls, one per op. Every layer of
// a transformer makes the same calls on other buffers, so printed straight
// the source grows with depth (and the host compiler's time with it). Each
// op is first printed with holes where its buffers, its label and its
// position go; a run of ops whose code repeats with some period is then
// printed once, as a loop over the repetitions, and what fills the holes
// comes from an arithmetic progression or a table. The calls, and their
// order, are the ones the straight form makes.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_CPU_STEPLOOPS_H
#define DTC_COMPILER_TARGET_CPU_STEPLOOPS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::dtc::cpu {

/// Where a buffer is, as a step function reaches it.
struct BufferSlot {
  enum Kind : int64_t { Arena = 0, Arg = 1, Result = 2 };
  Kind kind;
  /// The byte offset into the function's arena (`arena`), or the index into
  /// `args` / `results`.
  int64_t index;

  /// A `void *`-convertible expression for the buffer's address.
  std::string expression() const;
};

/// One op of a step function as printed.
struct OpCode {
  /// The op's name and ONNX node, for the comment above its code.
  std::string comment;
  /// The op's name alone (the comment inside a loop, where the node varies).
  std::string opName;
  /// Its statements (each "  ...;\n"), with holes: slotHole(k) for the
  /// address of slots[k], labelHole() for `label`, positionHole() for
  /// `position`.
  std::string text;
  SmallVector<BufferSlot> slots;
  /// The text naming the op (its ONNX node).
  std::string label;
  /// The op's position in its function (guard mode's live ranges).
  int64_t position = 0;
};

std::string slotHole(unsigned k);
std::string labelHole();
std::string positionHole();

/// Prints `ops` in order: where `roll`, runs that repeat as loops; the rest
/// straight.
void printSteps(ArrayRef<OpCode> ops, bool roll, llvm::raw_ostream &os);

} // namespace mlir::dtc::cpu

#endif // DTC_COMPILER_TARGET_CPU_STEPLOOPS_H
