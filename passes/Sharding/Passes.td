//===- Passes.td - sharding and partitioning --------------------*- tablegen -*-===//

#ifndef DTC_PASSES_SHARDING_PASSES_TD
#define DTC_PASSES_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartitionDataParallelPass
    : Pass<"dtc-partition-data-parallel", "ModuleOp"> {
  let summary = "Partitions the training step over the data-parallel axis, "
                "with ZeRO stages 0 to 3.";
  let description = [{
    Turns the one-rank training step into the program of one rank of a
    mesh with `dp` data-parallel ranks (tp and pp of size 1), declared as
    `dist.mesh @mesh = <["pp" = 1, "dp" = N, "tp" = 1]>`.

    The step's data inputs are split along their sample axis over dp: the
    module comes from an import with one rank's micro-batch, so
    `@micro_step` is already the rank's program, and its results that sum
    over the micro-batch (the loss sum and count, the parameter gradients,
    roles `loss_sum`, `loss_count` and `gradient`) are partial sums over dp.
    Propagation then walks `@train_step` (and `@eval_step`) in order, giving
    each value a layout: replicated, a partial sum over dp, or split along
    one dimension over dp. Rules, by op:
    - `dtg.add`/`dtg.sub` of partial sums, `dtg.mul`/`dtg.div` of a partial
      sum by a replicated value, `dtg.cast` and `dtg.reduce_sum` of a
      partial sum stay partial (they are linear);
    - elementwise ops of split values and rank-0 replicated values stay
      split; `dtg.reduce_sum` over a split dimension gives a partial sum;
    - under ZeRO 1 and 2, `dtg.adamw_update`/`dtg.sgd_update` of a parameter
      with a dimension divisible by dp run on that dimension's dp-th block:
      its optimizer state arguments and results hold only the block
      (`dtc.sharding` on the argument: the sharding of the whole tensor), the replicated parameter enters
      through `dist.local_block`, and the new parameter leaves through
      `dist.all_gather`;
    - every other op needs replicated operands.
    A partial sum an op cannot take is resolved where it is first needed:
    by `dist.reduce_scatter` when the gradient it holds is optimized in
    blocks (ZeRO 1 and 2, so that the global norm and the update run on
    blocks), by `dist.all_reduce` otherwise. ZeRO 2 reduce-scatters each
    micro-batch's gradients as they come out of `@micro_step`, so
    accumulation holds blocks; ZeRO 1 accumulates whole gradients. ZeRO 3
    also holds the trainable parameters that have such a dimension in
    blocks (step arguments and results): `@micro_step` and
    `@eval_micro_step` take the blocks and all-gather each parameter just
    before its first use in the forward, and again before its first use in
    the reverse sweep, so the whole parameter lives only while each needs
    it. The step's results are replicated, but for the blocks.

    The module's `dtc.global_batch` becomes the whole mesh's; it gets
    `dtc.zero`.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Data-parallel ranks">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage: 0, 1, 2 or 3">,
    Option<"localBatchNorm", "local-batchnorm", "bool", /*default=*/"false",
           "BatchNormalization takes statistics of each rank's samples "
           "(running statistics are averaged over dp after each "
           "micro-batch); without it, @micro_step must hold no "
           "batch_norm_training (dtc-build-train-step's sync-batch-norm-dp "
           "writes them out with synchronized statistics)">,
  ];
}

#endif // DTC_PASSES_SHARDING_PASSES_TD
