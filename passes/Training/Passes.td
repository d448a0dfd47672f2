//===- Passes.td - training-step construction passes ------------*- tablegen -*-===//

#ifndef DTC_PASSES_TRAINING_PASSES_TD
#define DTC_PASSES_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestGradientsPass : Pass<"dtc-test-gradients", "ModuleOp"> {
  let summary = "Checks every gradient rule against central finite differences.";
  let description = [{
    For each function of the module, differentiates `L = sum(r * f(x))` (with a
    fixed pseudo-random cotangent `r`) with respect to every float argument,
    runs the gradient through the reference interpreter on pseudo-random
    inputs, and compares each element with the central difference
    `(L(x + h) - L(x - h)) / 2h`. It emits a remark `gradients match` per
    function, or an error naming the argument and element that differ.

    Float arguments are drawn uniformly from [-1, 1], or from the range given
    by the argument attribute `dtc.test_range = [lo, hi]` (for log, sqrt).
    Integer arguments (indices, labels) take their value from the argument
    attribute `dtc.test_value = dense<...>`. Write tests in f64 so the
    differences are accurate; the functions are left unchanged.

    ```mlir
    // expected-remark @+1 {{gradients match}}
    func.func @exp(%x: tensor<3xf64>) -> tensor<3xf64> {
      %y = dtg.exp %x : tensor<3xf64>
      return %y : tensor<3xf64>
    }
    ```
  }];
  let options = [
    Option<"step", "step", "double", /*default=*/"1e-6",
           "Finite-difference step h">,
    Option<"tolerance", "tolerance", "double", /*default=*/"1e-5",
           "Largest accepted |analytic - numeric| / max(1, |numeric|)">,
  ];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

def BuildTrainStepPass : Pass<"dtc-build-train-step", "ModuleOp"> {
  let summary = "Builds @train_step (forward, backward, optimizer) from @main.";
  let description = [{
    Takes the imported model function `@main` and adds:

    - `@micro_step(parameters, state, micro-batch inputs, key)` returning the
      micro-batch's loss sum and count (so the step's loss is weighted by
      counted tokens, as PyTorch's `reduction='mean'` over the global batch),
      the gradients of the loss sum with respect to every trainable
      parameter, and the new model state (BatchNorm running statistics);
    - `@train_step(parameters, state, optimizer state, global-batch inputs,
      hyperparameters, step)` that calls `@micro_step` once per micro-batch,
      accumulates, divides by the counted total, clips by global norm,
      schedules the learning rate and applies SGD or AdamW exactly as
      torch.optim does. It returns the new trainable parameters, state and
      optimizer state, then the loss, the learning rate and the gradient
      norm (before clipping);
    - `@eval_micro_step(parameters, constants, state, micro-batch inputs)`:
      the forward in eval mode, as PyTorch's `model.eval()` (dropout is the
      identity, BatchNorm normalizes with the running statistics and leaves
      them unchanged; a model exported in eval mode is evaluated as
      exported), returning the loss sum and count;
    - `@eval_step`, with the arguments of `@train_step`, which calls it once
      per micro-batch and returns the metrics `loss_sum` and `loss_count`
      over the global batch (the runtime's eval loss is their total sum
      over their total count: `reduction='mean'` over the eval set). It
      changes nothing.

    The loss is `loss-output` (an output of @main), or the single scalar
    float output, or one appended by `loss` (cross_entropy over the last axis
    of `logits` with integer `labels`, ignore index -100; or mse). Trainable
    parameters are the float `parameter` arguments of @main with a gradient
    path to the loss, minus `freeze` (frozen ones keep the role
    `parameter`); the others (a causal mask) get the role `constant` in the
    steps: loaded with the weights, never updated. Hyperparameters are arguments with `dtg.role = "hyper"` and
    their compiled-in default in `dtg.default`, so the runtime can override
    them without recompiling. Every argument and result carries `dtg.name`
    and `dtg.role`.

    With `sync-batch-norm-dp` above 1 (data parallelism without
    `--local-batchnorm`), each `dtg.batch_norm_training` of @micro_step is
    written out with its statistics summed over the dp ranks
    (`dist.all_reduce`, differentiated as an all-reduce of the gradient), so
    a micro-batch split across ranks normalizes as it would whole.

    ```mlir
    func.func @train_step(%w: tensor<4x2xf32> {dtg.name = "fc.weight", dtg.role = "parameter"}, ...,
                          %lr: tensor<f64> {dtg.default = 1.0e-03 : f64, dtg.name = "lr", dtg.role = "hyper"}, ...)
        -> (tensor<4x2xf32> {dtg.name = "fc.weight", dtg.role = "parameter"}, ..., tensor<f32> {dtg.name = "loss", dtg.role = "metric"}, ...)
    ```
  }];
  let options = [
    Option<"lossOutput", "loss-output", "std::string", /*default=*/"\"\"",
           "Output of @main that is the loss">,
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "Loss to append: cross_entropy or mse">,
    Option<"logits", "logits", "std::string", /*default=*/"\"\"",
           "Output the appended loss reads">,
    Option<"labels", "labels", "std::string", /*default=*/"\"\"",
           "Input holding the targets of the appended loss">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd or adamw">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per step (gradient accumulation)">,
    ListOption<"freeze", "freeze", "std::string",
               "Parameters not to train (glob patterns)">,
    ListOption<"noDecay", "no-decay", "std::string",
               "Parameters exempt from weight decay (glob patterns)">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Peak learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0", "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false", "SGD Nesterov">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1",
           "Weight decay (default: 0 for SGD, 0.01 for AdamW)">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0",
           "Global gradient-norm clip (0: off)">,
    Option<"lrSchedule", "lr-schedule", "std::string", /*default=*/"\"constant\"",
           "constant, linear or cosine">,
    Option<"warmup", "warmup", "int64_t", /*default=*/"0", "Warmup steps">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Steps of the schedule">,
    Option<"minLr", "min-lr", "double", /*default=*/"0", "Floor of the schedule">,
    Option<"seed", "seed", "int64_t", /*default=*/"0", "Dropout seed">,
    Option<"returnGradients", "return-gradients", "bool", /*default=*/"false",
           "Also return each trainable parameter's gradient as applied "
           "(averaged and clipped), role 'gradient' (for checking)">,
    Option<"syncBatchNormDp", "sync-batch-norm-dp", "int64_t",
           /*default=*/"1",
           "Data-parallel ranks that share batch statistics: above 1, "
           "@micro_step's batch_norm_training ops take their mean and "
           "variance over every rank's samples (dist.all_reduce over dp of "
           "mesh @mesh, which is declared if missing)">,
    Option<"pipelineStage", "pipeline-stage", "int64_t", /*default=*/"-1",
           "Build the step of this pipeline stage (-1: no pipeline): @main is "
           "the stage's forward (dtc-split-stages), its role 'activation' "
           "arguments arrive by dist.recv from the previous stage for each "
           "micro-batch and its results (on the last stage, the loss) go by "
           "dist.send to the next; the backward receives the gradients of "
           "its results and sends those of its activation arguments">,
    Option<"pipelineStages", "pipeline-stages", "int64_t", /*default=*/"1",
           "Pipeline stages (pp)">,
    Option<"meshDp", "mesh-dp", "int64_t", /*default=*/"1",
           "Data-parallel ranks of the pipeline's mesh (@mesh)">,
  ];
  let dependentDialects = ["::mlir::dtg::DTGDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::dist::DistDialect"];
}

#endif // DTC_PASSES_TRAINING_PASSES_TD
