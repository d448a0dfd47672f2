//===- Passes.td - communication scheduling ----------------*- tablegen -*-===//

#ifndef DTC_PASSES_COMMSCHEDULING_PASSES_TD
#define DTC_PASSES_COMMSCHEDULING_PASSES_TD

include "mlir/Pass/PassBase.td"

def ScheduleCommunicationPass
    : Pass<"dtc-schedule-communication", "ModuleOp"> {
  let summary = "Turns collectives into start/wait pairs that overlap "
                "compute: gradient buckets, issue early, wait late, "
                "ZeRO-3 prefetch.";
  let description = [{
    Runs on the per-rank program (after partitioning, recompute and
    fusion, before memory planning). In each function:

    1. A step that reduces what its last micro-step call computed gets that
       call inlined (the last one only; pipeline forwards and backwards
       stay calls), so that reductions can start inside its backward.
    2. A sum all-reduce or reduce-scatter of a quotient by a replicated
       scalar (a gradient divided by the global loss count) becomes the
       quotient of the reduction: the reduction no longer waits for the
       count.
    3. Sum and mean all-reduces that have ops to hide behind are grouped,
       in the order their operands become ready, into buckets of at most
       `bucket-mb` MiB of the same mesh axes, kind and element type (a
       bucket never holds an all-reduce whose result another member's
       operand needs): one flat `dist.all_reduce_start` of their
       concatenation, issued right after the last member's operand is
       computed, and one `dist.wait` right before the first member's result
       is used, then slices.
    4. Every other collective with ops between its operand and its first
       use becomes `*_start` after the operand and `dist.wait` before the
       use. A collective of a function argument (a ZeRO-3 parameter
       all-gather) starts one collective ahead: right before the first use
       of the previous such collective's result, so one layer's parameters
       are gathered while the layer before computes.

    Collectives with nothing to overlap stay synchronous, and so do those
    over the pipeline axis (its ranks run different stages' programs, which
    need not schedule them alike). The ranks of any other group run the
    same program, so they issue their collectives in the same order.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25",
           "Largest gradient bucket in MiB (PyTorch DDP's bucket_cap_mb); "
           "0 puts every all-reduce in a bucket of its own">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

#endif // DTC_PASSES_COMMSCHEDULING_PASSES_TD
