//===- Passes.h - memory planning -----------------------------------*- C++
//-*-===//

#ifndef DTC_PASSES_MEMORY_PASSES_H
#define DTC_PASSES_MEMORY_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "passes/Memory/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Memory/Passes.h.inc"

/// Attribute names the planner sets.
namespace memory {
constexpr StringLiteral kOffsets = "dtc.offsets";
constexpr StringLiteral kAlias = "dtc.alias";
constexpr StringLiteral kArenaBytes = "dtc.arena_bytes";
constexpr StringLiteral kCalleeBase = "dtc.callee_base";
/// The function's own buffers, callees excluded (they sit above).
constexpr StringLiteral kOwnArenaBytes = "dtc.own_arena_bytes";
/// Result attribute (i64): the argument whose buffer the result is written
/// into, the state the step carries updated in place (donated, as XLA's
/// input/output aliasing): a carried result (dtg.role parameter, state or
/// optimizer_state) gets it when the argument of its name and role is read
/// by nothing after the op that writes the result (at that op only where
/// memory::mayWriteOver allows).
constexpr StringLiteral kDonatedArg = "dtc.donated_arg";
/// Function attribute (i64): carried results that could not be donated; each
/// keeps a buffer of its own (a copy of the state the step holds).
constexpr StringLiteral kUndonated = "dtc.undonated_results";
/// Bytes of a statically shaped tensor type (i1 takes a byte).
int64_t byteSize(Type type);

/// Bytes of the results of `func` that take buffers of their own: all but
/// those written over a donated argument (kDonatedArg). What plan.json's
/// "outputs" and the recompute pass's peak count.
int64_t ownResultBytes(func::FuncOp func);

/// The value that owns the buffer holding `value`: `value` itself, or the
/// source of the chain of `dtg.reshape` ops (aliases) that defines it.
Value bufferOf(Value value);

/// The live range of a value that owns an arena buffer: from the position of
/// its defining op to that of its last use (through aliases), positions
/// counting the ops of the block from 0.
struct LiveRange {
  Value value;
  int64_t begin, end;
};
/// Live ranges of the values of `block` that need a buffer of their own:
/// results of the block's ops (not of ops nested in their regions) that are
/// neither constants nor aliases, except those for which `skip` returns
/// true. A use inside an op's regions counts as a use by the op.
SmallVector<LiveRange> computeLiveRanges(Block &block,
                                         function_ref<bool(Value)> skip);
} // namespace memory

} // namespace mlir::dtc

#endif // DTC_PASSES_MEMORY_PASSES_H
