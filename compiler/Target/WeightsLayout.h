//===- WeightsLayout.h - the initial values of a step, as one file --*- C++
//-*-===//
//
// OUTDIR/weights.bin holds the initial value of every step argument that has
// one (parameters, constants and state), raw little-endian, each at a 64-byte
// aligned offset, in argument order. The generated descriptors name the
// offsets.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_TARGET_WEIGHTSLAYOUT_H
#define DTC_COMPILER_TARGET_WEIGHTSLAYOUT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {

class WeightsLayout {
public:
  explicit WeightsLayout(func::FuncOp func);
  /// Byte offset of argument `i`'s initial value, or -1 if it has none.
  int64_t offsetOf(unsigned i) const { return offsets[i]; }
  int64_t totalBytes() const { return total; }
  /// Writes the file; failure (with an error at the function) if it cannot.
  LogicalResult write(StringRef path) const;

private:
  /// (Op handles are values; `mutable` lets the const writer call them.)
  mutable func::FuncOp func;
  SmallVector<int64_t> offsets;
  int64_t total = 0;
};

} // namespace mlir::dtc

#endif // DTC_COMPILER_TARGET_WEIGHTSLAYOUT_H
