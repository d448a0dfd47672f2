//===- LayerCut.h - a model's repeated layers, and the model cut to few
//----===//
//
// `dtc autotune` prices a model per distinct layer configuration rather than
// planning it whole per candidate: it finds the model's repeated layers (the
// longest run of blocks of ops that are the same ops on the same types, each
// block reading only the one before it), plans proxies of the model that keep
// one and two of those blocks, and scales the difference by the layer count.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_COMPILER_PLAN_LAYERCUT_H
#define DTC_COMPILER_PLAN_LAYERCUT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>

namespace mlir::dtc {

/// A run of `count` blocks of `period` ops each, from the `begin`-th op of a
/// function's body: block j + 1 is block j's ops on the same types, reading
/// block j's values (and values from before the run) where block j reads
/// block j - 1's.
struct RepeatedLayers {
  size_t begin = 0, period = 0;
  int64_t count = 0;
  /// Bytes of block 0's values that block 1 reads (what a pipeline stage
  /// boundary between layers sends).
  int64_t carriedBytes = 0;
};

/// The longest run of repeated blocks of `func`'s body (at least two); the
/// smallest block among runs that cover as many ops. None if the body repeats
/// no block.
std::optional<RepeatedLayers> findRepeatedLayers(func::FuncOp func);

/// Keeps the first `keep` (at least 1) blocks of `layers` in `func`: the ops
/// after the run read the last kept block where they read the last block,
/// and arguments no op reads any more (the dropped layers' parameters) are
/// removed. Fails, changing nothing, if the ops after the run read a block
/// other than the last.
LogicalResult keepLayers(func::FuncOp func, const RepeatedLayers &layers,
                         int64_t keep);

} // namespace mlir::dtc

#endif // DTC_COMPILER_PLAN_LAYERCUT_H
