//===- Passes.td - mixed precision ------------------------------*- tablegen -*-===//

#ifndef DTC_PASSES_MIXEDPRECISION_PASSES_TD
#define DTC_PASSES_MIXEDPRECISION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MixedPrecisionPass : Pass<"dtc-mixed-precision", "ModuleOp"> {
  let summary = "Runs the step's matrix products and elementwise ops in "
                "bf16/fp16, with fp32 master weights (and loss scaling "
                "under fp16).";
  let description = [{
    Rewrites the functions dtc-build-train-step made (@micro_step,
    @train_step, @eval_micro_step, @eval_step) for `precision` bf16 or fp16,
    as PyTorch's autocast plus master weights (Micikevicius et al. 2018):

    - Forward of @micro_step and @eval_micro_step: matmul, gemm, einsum,
      conv, pooling, dropout and the elementwise ops take 16-bit operands
      (a `dtg.cast` inserted once per value) and give 16-bit results; norm
      statistics (layer_norm, batch_norm), softmax, log_softmax, losses,
      reductions, cumsum and the ops autocast keeps in fp32 (exp, log, pow,
      sqrt, rsqrt, reciprocal, softplus, tan and the inverse and hyperbolic
      functions) take fp32 operands; shape ops keep their operand's type
      (fp32 if their operands mix). The function results keep their types.
    - The reverse sweep of @micro_step is rebuilt over that forward, so the
      gradient of each op is computed in the precision of the op, and the
      gradients are returned in fp32.
    - Trainable parameters become 16-bit arguments of the steps (their
      initial values rounded); each gets an fp32 master copy, an argument
      and result `NAME.master` of role optimizer_state initialized from the
      fp32 initial value. The optimizer updates the master, and the new
      parameter is the master cast to 16 bits. Gradient accumulation,
      the global norm, clipping and the optimizer stay in fp32.
    - fp16 only, dynamic loss scaling: optimizer_state scalars `loss_scale`
      (f32), `loss_scale_good_steps` and `optimizer_steps` (i64), and the
      hyperparameters `loss_scale_init` (default `loss-scale-init`) and
      `loss_scale_window` (default `loss-scale-window`), which the state
      takes at step 0. The backward of each micro-batch is seeded with
      scale / count (count: the micro-batch's loss count, so that the scale
      applies to its mean loss, as GradScaler's to PyTorch's mean loss) and
      the gradients are unscaled in fp32 (times count / scale) before the
      norm and clipping. If the
      global norm is not finite the update is skipped (parameters, masters,
      moments and the optimizer step count, which AdamW's bias correction
      and SGD's first step use, stay as they were; the LR schedule still
      follows the global step) and the scale halves; after `window` good
      steps in a row it doubles (never above 2^127, so that it stays a
      finite f32). Metrics `loss_scale` (the scale this step
      used) and `skipped` (1 if the update was skipped).

    The module gets `dtc.precision`. precision=fp32 changes nothing else.

    ```mlir
    // Before (@micro_step)
    %y = dtg.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
    %l = dtg.log_softmax %y {axis = 1 : i64} : tensor<4x2xf32>
    // After (precision=bf16; %w is now a bf16 argument)
    %xb = dtg.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    %y = dtg.matmul %xb, %w : tensor<4x8xbf16>, tensor<8x2xbf16> -> tensor<4x2xbf16>
    %yf = dtg.cast %y : tensor<4x2xbf16> -> tensor<4x2xf32>
    %l = dtg.log_softmax %yf {axis = 1 : i64} : tensor<4x2xf32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "fp32, bf16 or fp16">,
    Option<"lossScaleInit", "loss-scale-init", "double", /*default=*/"65536",
           "Initial fp16 loss scale (the default of loss_scale_init)">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t",
           /*default=*/"2000",
           "Good fp16 steps before the scale doubles (the default of "
           "loss_scale_window)">,
  ];
  let dependentDialects = ["::mlir::dtg::DTGDialect"];
}

#endif // DTC_PASSES_MIXEDPRECISION_PASSES_TD
