//===- Passes.td - memory planning ------------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_MEMORY_PASSES_TD
#define DTC_PASSES_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"dtc-plan-memory", "ModuleOp"> {
  let summary = "Assigns every buffer a static offset in the rank's arena.";
  let description = [{
    For each function, computes the live range of every value an op of the
    function's body writes (from its definition to its last use, extended
    through `dtg.reshape`, which aliases its operand; a use inside an op's
    regions counts as a use by the op, and values defined inside regions get
    no buffer: such an op, `dtg.fusion` say, is one kernel) and packs the
    ranges into one arena with offsets aligned to 64 bytes, largest buffers
    first, each at the lowest offset that overlaps no buffer live at the same
    time. Function arguments live outside the arena; a value the function
    returns once and defines itself is written straight into the caller's
    result buffer; constants are static data. A `func.call` gets the callee's
    arena above every buffer of the caller (the callee runs between the
    caller's ops).

    In place: a result takes the buffer of one of its op's operands when that
    buffer dies at the op (no later use, through reshapes included; not a
    function argument, a constant or a result buffer), has the result's size,
    and the op may write that result over that operand (memory::mayWriteOver
    in InPlace.h: each result element depends, of that operand, only on the
    element at the same position, with the same shape and element width).

    Donation: a carried result (`dtg.role` parameter, state or
    optimizer_state: the new value of the argument of the same `dtg.name`
    and role) is written over that argument's buffer, so the step holds its
    state once (XLA's input/output aliasing, JAX's `donate_argnums`), when
    the result is written directly by an op of the body and nothing reads
    the argument after that op (at it, only through an operand that
    memory::mayWriteOver allows). The result gets `dtc.donated_arg` (the
    argument's index); the function gets `dtc.undonated_results`, the count
    of carried results that keep a buffer of their own.

    Results are attributes the emitter reads: `dtc.offsets` (one offset per
    result, -1 for none) on each op, `dtc.alias` on aliasing ops,
    `dtc.arena_bytes` (the function's peak, callees included) on each
    function and `dtc.callee_base` on each call.

    ```mlir
    // Before: %b may overwrite %a (its last use); %c may not overwrite %b
    // (read again by the add, whose result goes straight to the caller).
    %a = dtg.exp %x : tensor<16xf32>
    %b = dtg.neg %a : tensor<16xf32>
    %c = dtg.exp %b : tensor<16xf32>
    %d = dtg.add %c, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    return %d : tensor<16xf32>
    // After
    %a = dtg.exp %x {dtc.offsets = array<i64: 0>} : tensor<16xf32>
    %b = dtg.neg %a {dtc.offsets = array<i64: 0>} : tensor<16xf32>
    %c = dtg.exp %b {dtc.offsets = array<i64: 64>} : tensor<16xf32>
    %d = dtg.add %c, %b {dtc.offsets = array<i64: -1>} : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer">,
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let results take the buffers of operands that die at their op">,
    Option<"donate", "donate", "bool", /*default=*/"true",
           "Write carried state results over the arguments they update">,
  ];
}

#endif // DTC_PASSES_MEMORY_PASSES_TD
