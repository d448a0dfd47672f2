//===- Passes.td - memory planning ------------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_MEMORY_PASSES_TD
#define DTC_PASSES_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"dtc-plan-memory", "ModuleOp"> {
  let summary = "Assigns every buffer a static offset in the rank's arena.";
  let description = [{
    For each function, computes the live range of every value an op writes
    (from its definition to its last use, extended through `dtg.reshape`,
    which aliases its operand) and packs the ranges into one arena with
    offsets aligned to 64 bytes, largest buffers first, each at the lowest
    offset that overlaps no buffer live at the same time. Function arguments
    live outside the arena; a value the function returns once and defines
    itself is written straight into the caller's result buffer; constants are
    static data. A `func.call` gets the callee's arena above every buffer of
    the caller (the callee runs between the caller's ops).

    Results are attributes the emitter reads: `dtc.offsets` (one offset per
    result, -1 for none) on each op, `dtc.alias` on aliasing ops,
    `dtc.arena_bytes` (the function's peak, callees included) on each
    function and `dtc.callee_base` on each call.

    ```mlir
    %0 = dtg.exp %arg0 {dtc.offsets = array<i64: 0>} : tensor<16xf32>
    %1 = dtg.exp %0 {dtc.offsets = array<i64: 64>} : tensor<16xf32>
    %2 = dtg.exp %1 {dtc.offsets = array<i64: 0>} : tensor<16xf32>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer">,
  ];
}

#endif // DTC_PASSES_MEMORY_PASSES_TD
