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

def PropagateShardingPass : Pass<"dtc-propagate-sharding", "ModuleOp"> {
  let summary = "Gives every tensor of every function a sharding, from user "
                "constraints, through each op's sharding rule.";
  let description = [{
    Seeds are `dist.sharding_constraint` ops (the user's `--shard`, or a
    test's) and function arguments' `dist.sharding` attributes, all on the
    module's single `dist.mesh`. Propagation then sweeps each function
    forward and backward until nothing changes; at each op, its sharding
    rule (ShardingRules.h) says which operand and result dimensions are one
    factor: a factor split on one of them is split alike on the others that
    are still whole, unless the factor is blocked (it must stay whole) or a
    dimension does not divide. A split reduction factor makes the results
    partial sums over its axes (a row-parallel matmul), and partial sums
    pass through ops linear in them (a sum of partial sums, a transpose or
    reshape of one, its product with a whole value); any other op needs
    whole operands, where partitioning will reduce. Where a partial value
    fans out to users that need it whole, it is made whole where it came
    from instead, if the ops it passed through did not shrink it: one
    reduction in place of one per user (a layer norm's backward).

    Conflicts (one factor split two ways) are resolved by priority: a
    user's constraint first, then the split that reached the op first
    (closest to a seed: propagation goes outward one op per sweep), then
    operands before results in order; the op keeps that split, the value
    that loses needs a reshard there, and a warning names the op's ONNX node
    and the node each split came from.

    Every op gets `dtc.shardings` (one `#dist.sharding` per result, global
    shapes), an op whose factors were split `dtc.factor_axes` (per factor
    of its rule, the axes it runs split over), and every function argument
    `dist.sharding`. Nothing is partitioned: shapes stay global
    (dtc-partition does that).

    With `sequence-parallel` (Megatron's sequence parallelism), once the
    splits above have settled, the input of each layer norm is split over
    tp along its token dimension (the one before the normalized axes,
    where it divides), and that spreads through what is still whole: the
    residual stream, norms and elementwise ops between the tensor-parallel
    blocks. A block's input is then all-gathered and its row-parallel
    output reduce-scattered (dtc-partition), in place of one all-reduce.
  }];
  let options = [
    Option<"sequenceParallel", "sequence-parallel", "bool",
           /*default=*/"false",
           "Split the inputs of layer norms (and what they reach) along "
           "their tokens over tp">,
  ];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def PartitionPass : Pass<"dtc-partition", "ModuleOp"> {
  let summary = "Turns functions with propagated shardings into per-rank "
                "programs: local shapes and explicit collectives.";
  let description = [{
    After dtc-propagate-sharding. Each argument takes its block's type.
    Each op runs on the splits its `dtc.factor_axes` name: an operand whose
    sharding differs is resharded just before it (a partial sum the op
    cannot take is all-reduced over its axes, or reduce-scattered where
    the op runs the value split over those axes along one dimension that
    is otherwise whole; a dimension split otherwise
    than the op runs it is all-gathered over its axes, then cut by
    `dist.local_block` to the op's split), and its results take the types
    of their blocks (`dtc.shardings`). A constant that is split becomes
    each rank's block of it; a slice's limits on a split (whole) dimension
    become the block's; a mean over a split axis is scaled by the rank's
    share (its partial sums add up to the mean); a dropout of a block
    draws its block of the whole tensor's mask (`block_of`, the block's
    start in its key); a gather from a table split along the gathered axis,
    a gather_grad into one, a softmax or log_softmax over a split axis and
    an nll_loss over split classes run on their blocks with the collectives
    that combine them (SplitLowering.h). `dist.sharding_constraint` ops become the reshards
    they ask for. Partial sums pass only through ops linear in them
    (dtc-propagate-sharding's rule). Function results keep the shardings of
    the values returned (`dist.sharding` on each result).

    A function whose shardings were left as propagation found them gets
    the fewest collectives propagation allows: none between a
    column-parallel and a row-parallel matmul, an all-reduce where the
    row-parallel one's partial sum meets a nonlinear op.

    Callees are partitioned before their callers; a `func.call` hands its
    operands split as the callee's arguments are (`dtc.sharding`) and its
    results are split as the callee's results. `@eval_step`'s arguments it
    does not read take `@train_step`'s types.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

def PlanTensorParallelPass
    : Pass<"dtc-plan-tensor-parallel", "ModuleOp"> {
  let summary = "Splits @main's linear layers over tp in Megatron's pairs: "
                "column-parallel, then row-parallel.";
  let description = [{
    Declares `dist.mesh @mesh = <["pp" = 1, "dp" = DP, "tp" = TP]>` and
    gives the parameter matrices that matmuls and gemms multiply by (in
    program order; a parameter a gather also reads, a tied embedding, is
    left whole) a `dist.sharding` in turn: the first split by its output
    features (column-parallel), the next by its input features
    (row-parallel), and so on, skipping a matrix tp does not divide. A
    user's `shard` (`--shard NAME=SPEC`) replaces the plan's split of that
    parameter (any parameter, by its ONNX name); a name, an axis or a
    split that does not fit is an error naming it. The
    shardings of everything else follow by propagation (a column-parallel
    layer's bias, the activations between the two, the partial sum after
    the second).

    A parameter table that a gather reads by rows at data-dependent
    indices (a token embedding) is split by rows: vocabulary parallelism
    (each rank reads the tokens in its rows, the ranks' partial sums add
    up; a tied output projection gives logits split by vocabulary).

    A fused projection, one matrix W [N, K] whose output is only sliced
    into equal parts along its features (attention's query, key and value
    from one c_attn), would split into blocks that each hold whole parts;
    Megatron splits every part by heads. So W (and its bias) is held by
    its parts, [parts, N/parts, K] (the same elements in the same order;
    `dtg.model_shape` keeps the model's shape, which checkpoints and
    `--save-onnx` write), the projection becomes one batched matmul whose
    parts are slices, and W is split along dimension 1: each rank computes
    its heads of every part, and attention runs split by heads.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1", "Data-parallel ranks">,
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel ranks">,
    ListOption<"shard", "shard", "std::string",
               "User splits NAME=SPEC (SPEC: per dimension 'tp' or '-'), "
               "which replace the plan's for those parameters">,
  ];
}

def TestShardingRulesPass : Pass<"dtc-test-sharding-rules", "ModuleOp"> {
  let summary = "Fails for every registered dtg op without a sharding rule; "
                "prints each op's rule in the module.";
  let description = [{
    For tests: first, every op the dtg dialect registers must have a
    sharding rule (an op added without one fails here, naming it); then
    each dtg op in the module gets `dtc.sharding_rule`, its rule as text:
    the factors (`p` parallel, `r` reduction, `b` blocked, with sizes) and,
    per operand and result, the factor of each dimension (`-`: none), as
    `(i, j) -> (i)` over factor letters.
  }];
}

#endif // DTC_PASSES_SHARDING_PASSES_TD
