//===- DTGTraining.td - optimizer updates and schedules -*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGTRAINING_TD
#define DTC_DIALECTS_DTG_IR_DTGTRAINING_TD

include "dialects/DTG/IR/DTGBase.td"

/// A rank-0 tensor of `elementType` (a run-time hyperparameter).
class DTG_Scalar<string elementType, string builderType>
    : Type<CPred<"::llvm::isa<::mlir::RankedTensorType>($_self) && "
                 "::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0 && "
                 "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()."
                 # elementType>,
           "rank-0 tensor", "::mlir::RankedTensorType">,
      BuildableType<"::mlir::RankedTensorType::get({}, $_builder." # builderType # ")">;

def DTG_ScalarF64 : DTG_Scalar<"isF64()", "getF64Type()">;
def DTG_ScalarI64 : DTG_Scalar<"isInteger(64)", "getI64Type()">;
def DTG_ScalarI1 : DTG_Scalar<"isInteger(1)", "getI1Type()">;

def DTG_SgdUpdateOp : DTG_Op<"sgd_update", [AllTypesMatch<["param", "grad",
    "momentum_buffer", "new_param", "new_momentum_buffer"]>]> {
  let summary = "One torch.optim.SGD step of one parameter.";
  let description = [{
    With `g = grad + weight_decay * param`: if `momentum` is not 0, the buffer
    becomes `g` on the first step and `momentum * buf + (1 - dampening) * g`
    after, and the update direction is `g + momentum * buf` with `nesterov`,
    else `buf`; with momentum 0 the direction is `g` (and the buffer is kept).
    `new_param = param - lr * direction`. The scalars are rank-0 run-time
    values, so a hyperparameter sweep never recompiles. Arithmetic is in the
    parameter's type, as PyTorch's.

    ```mlir
    %p2, %b2 = dtg.sgd_update %p, %g, %b, %lr, %mom, %damp, %wd, %nesterov, %first : tensor<4xf32>
    ```

    Constraints:
    - param, grad and the buffer have one float type; the hyperparameters
      are tensor<f64>, `nesterov` and `first_step` tensor<i1>.
  }];
  let arguments = (ins DTG_FloatTensor:$param, DTG_FloatTensor:$grad,
                       DTG_FloatTensor:$momentum_buffer, DTG_ScalarF64:$lr,
                       DTG_ScalarF64:$momentum, DTG_ScalarF64:$dampening,
                       DTG_ScalarF64:$weight_decay, DTG_ScalarI1:$nesterov,
                       DTG_ScalarI1:$first_step);
  let results = (outs DTG_FloatTensor:$new_param,
                      DTG_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = "$param `,` $grad `,` $momentum_buffer `,` $lr `,` "
      "$momentum `,` $dampening `,` $weight_decay `,` $nesterov `,` "
      "$first_step attr-dict `:` type($param)";
}

def DTG_AdamWUpdateOp : DTG_Op<"adamw_update", [AllTypesMatch<["param", "grad",
    "exp_avg", "exp_avg_sq", "new_param", "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "One torch.optim.AdamW step of one parameter.";
  let description = [{
    As torch.optim.AdamW (decoupled weight decay, bias correction, no
    amsgrad), at optimizer step `step` (1 for the first update):
    `param *= 1 - lr * weight_decay`; `exp_avg = beta1 * exp_avg + (1 - beta1)
    * grad`; `exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad^2`;
    `param -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) /
    sqrt(1 - beta2^step) + eps)`.

    ```mlir
    %p2, %m2, %v2 = dtg.adamw_update %p, %g, %m, %v, %lr, %b1, %b2, %eps, %wd, %step : tensor<4xf32>
    ```

    Constraints:
    - param, grad and both moments have one float type; the hyperparameters
      are tensor<f64>; `step` is tensor<i64>.
  }];
  let arguments = (ins DTG_FloatTensor:$param, DTG_FloatTensor:$grad,
                       DTG_FloatTensor:$exp_avg, DTG_FloatTensor:$exp_avg_sq,
                       DTG_ScalarF64:$lr, DTG_ScalarF64:$beta1,
                       DTG_ScalarF64:$beta2, DTG_ScalarF64:$eps,
                       DTG_ScalarF64:$weight_decay, DTG_ScalarI64:$step);
  let results = (outs DTG_FloatTensor:$new_param, DTG_FloatTensor:$new_exp_avg,
                      DTG_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = "$param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr "
      "`,` $beta1 `,` $beta2 `,` $eps `,` $weight_decay `,` $step attr-dict "
      "`:` type($param)";
}

def DTG_LrScheduleOp : DTG_Op<"lr_schedule"> {
  let summary = "The learning rate at an optimizer step (REFERENCE.md formulas).";
  let description = [{
    At step k (1 for the first update), peak `lr`, `warmup` W, `total` T and
    floor `min_lr`: k <= W gives lr * k / W; past T gives min_lr; otherwise
    `kind` 0 (constant) gives lr, 1 (linear) min_lr + (lr - min_lr) * (T - k)
    / (T - W), 2 (cosine) min_lr + (lr - min_lr) * (1 + cos(pi * (k - W) /
    (T - W))) / 2. With W = 0 and constant it is torch.optim's fixed lr.

    ```mlir
    %lr_k = dtg.lr_schedule %lr, %k, %warmup, %total, %min_lr, %kind
    ```

    Constraints:
    - lr and min_lr are tensor<f64>; k, warmup, total and kind tensor<i64>.
  }];
  let arguments = (ins DTG_ScalarF64:$lr, DTG_ScalarI64:$step,
                       DTG_ScalarI64:$warmup, DTG_ScalarI64:$total,
                       DTG_ScalarF64:$min_lr, DTG_ScalarI64:$kind);
  let results = (outs DTG_ScalarF64:$result);
  let assemblyFormat = "$lr `,` $step `,` $warmup `,` $total `,` $min_lr `,` "
      "$kind attr-dict";
}

#endif // DTC_DIALECTS_DTG_IR_DTGTRAINING_TD
