//===- Passes.td - pipeline parallelism --------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_PIPELINE_PASSES_TD
#define DTC_PASSES_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SplitStagesPass : Pass<"dtc-split-stages", "ModuleOp"> {
  let summary = "Cuts the forward model @main into pipeline stages balanced "
                "by the cost model.";
  let description = [{
    Replaces `@main` with `@main_stage0` ... `@main_stage{N-1}`, each the
    forward of one stage. The ops that depend on the data are cut, in their
    order, into N contiguous runs of about equal time on the `cpu` device
    profile (the cost model's roofline, not a count of layers); near each
    balanced point the cut that sends the fewest bytes wins (a residual
    stream between two blocks rather than the middle of one). Ops computed
    from parameters and constants alone (a transposed weight, a tied
    embedding's view) are not cut: each stage that reads one computes its
    own copy, so that a parameter shared by two stages (an embedding and an
    LM head) is an argument of both, never an activation.

    Stage s takes the model arguments it reads (with their attributes) and
    the values the stages before it computed that it or a later stage
    reads (role `activation`, in their order of definition; a stage passes
    on what it receives for later stages), and returns the same for the next
    stage; the last stage returns `@main`'s results. Each function has
    `dtc.stage` and `dtc.stage_seconds` (the cost model's forward time); the
    module gets `dtc.pipeline_stages`.

    Fails, naming the counts, when the model has fewer ops that do work
    than stages, so that some stage would be empty.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "Pipeline stages (pp)">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Model chunks per stage (the interleaved schedule): the model is "
           "cut into stages x virtual-stages chunks and stage r runs chunks "
           "r, r + stages, ...; ops and activations carry dtc.chunk">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def SchedulePipelinePass : Pass<"dtc-schedule-pipeline", "ModuleOp"> {
  let summary = "Splits each micro-batch into its forward and backward and "
                "orders them by the pipeline schedule.";
  let description = [{
    Works on a stage's `@train_step`, whose `@micro_step` calls (forward and
    backward of one micro-batch, in micro-batch order, each between the
    `dist.recv`s of its inputs and the `dist.send`s of its outputs) are
    written one after the other. `@micro_step` becomes `@micro_forward`
    (the ops not marked `dtg.backward`; it returns its results of the
    forward, then the values the backward reads) and `@micro_backward`
    (the rest, from those saved values). In `@train_step`, each call is
    replaced by a forward call and a backward call, and the ops are ordered
    by `schedule`:
    - `gpipe`: every forward, then every backward (Huang et al. 2019);
    - `1f1b`: stage s runs min(p - s - 1, m) forwards, then alternates one
      forward and one backward, then the remaining backwards (Narayanan et
      al. 2021, PipeDream-Flush);
    - `interleaved`: with V model chunks per stage (dtc.chunk, from
      dtc-split-stages), each chunk's forward and backward are functions
      of their own (`@micro_forward_chunk<v>`, ...), run in Megatron-LM's
      interleaved 1F1B order; m must be a multiple of p.
    Each forward and backward call gets `dtc.pipeline_op` ("F" or "B"),
    `dtc.micro_batch` and `dtc.chunk`, which code generation turns into timeline records.
    The gradient accumulation and everything after it keep their order.
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b or interleaved">,
    Option<"stage", "stage", "int64_t", /*default=*/"0", "This stage">,
    Option<"stages", "stages", "int64_t", /*default=*/"1", "Stages (pp)">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Model chunks per stage (interleaved)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def ScatterTransfersPass : Pass<"dtc-scatter-pipeline-transfers", "ModuleOp"> {
  let summary = "Sends a pipeline transfer that every tensor-parallel rank "
                "holds whole as one block per tp rank.";
  let description = [{
    On a stage partitioned over `tp` (after `dtc-partition`), the values a
    stage sends to another (`dist.send` along `pp`) are whole and the same
    on every tp rank, so each tp rank sent all of them. Instead, each sends
    its block (`dist.local_block` over `tp`, no communication) and the
    receiving stage's tp ranks put the blocks together (`dist.all_gather`
    over `tp`): the bytes between stages fall by the tp size, for an
    all-gather inside the tp group, which is the faster link (Narayanan et
    al. 2021, section 4.1's scatter/gather). The values are the same bits.

    The block is cut along the first dimension the tp size divides, which
    the sending and the receiving stage find alike from the transfer's type;
    a transfer no dimension of which it divides stays whole. Nothing
    changes where the mesh has no `tp` axis of size > 1.
  }];
  let dependentDialects = ["::mlir::dist::DistDialect"];
}

#endif // DTC_PASSES_PIPELINE_PASSES_TD
