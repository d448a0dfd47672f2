//===- DTGReduction.td - reductions, scans and losses ----------*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGREDUCTION_TD
#define DTC_DIALECTS_DTG_IR_DTGREDUCTION_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_ReduceSumOp : DTG_ReduceOp<"reduce_sum", "Sum over the axes.">;
def DTG_ReduceMeanOp : DTG_ReduceOp<"reduce_mean", "Mean over the axes.">;
def DTG_ReduceMaxOp : DTG_ReduceOp<"reduce_max", "Maximum over the axes.">;
def DTG_ReduceMinOp : DTG_ReduceOp<"reduce_min", "Minimum over the axes.">;
def DTG_ReduceProdOp : DTG_ReduceOp<"reduce_prod", "Product over the axes.">;
def DTG_ReduceLogSumExpOp : DTG_ReduceOp<"reduce_logsumexp",
    "log(sum(exp(x))) over the axes, computed stably.">;

class DTG_ArgReduceOp<string mnemonic, string summaryText>
    : DTG_Op<mnemonic, [InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    The index (i64) along `axis`; ties go to the first index, or to the last
    with `select_last_index`.

    ```mlir
    %i = dtg.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<4x8xf32> -> tensor<4xi64>
    ```

    Constraints:
    - `axis` is in [0, rank).
  }];
  let arguments = (ins DTG_Tensor:$operand, I64Attr:$axis, BoolAttr:$keepdims,
                       BoolAttr:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def DTG_ArgMaxOp : DTG_ArgReduceOp<"argmax", "Index of the maximum along an axis.">;
def DTG_ArgMinOp : DTG_ArgReduceOp<"argmin", "Index of the minimum along an axis.">;

def DTG_CumSumOp : DTG_Op<"cumsum", [SameOperandsAndResultType]> {
  let summary = "Running sum along an axis.";
  let description = [{
    With `exclusive` the element itself is left out; with `reverse` the sum
    runs from the end.

    ```mlir
    %y = dtg.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : tensor<5xf32>
    ```

    Constraints:
    - `axis` is in [0, rank).
  }];
  let arguments = (ins DTG_Tensor:$operand, I64Attr:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DTG_NllLossOp : DTG_Op<"nll_loss", [InferTypeOpAdaptor]> {
  let summary = "Negative log-likelihood loss over class log-probabilities.";
  let description = [{
    `input` is [N, C, d1, ...] log-probabilities, `target` [N, d1, ...] class
    indices; each counted position contributes `-weight[t] * input[n, t, ...]`.
    Positions whose target equals `ignore_index` (when present) count zero.
    `reduction` is `none` (result shaped like `target`), `sum`, or `mean` (sum
    divided by the total weight of counted positions, as PyTorch does).
    ONNX SoftmaxCrossEntropyLoss is `dtg.log_softmax` on axis 1 followed by
    this op.

    ```mlir
    %l = dtg.nll_loss %logp, %t {reduction = "mean"} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
    ```

    Constraints:
    - `input` has rank at least 2, `target` rank one less, same N and d's;
    - `weight`, when present, is 1-D of size C;
    - `reduction` is one of none, sum, mean.
  }];
  let arguments = (ins DTG_FloatTensor:$input, DTG_IndexTensor:$target,
                       Optional<DTG_FloatTensor>:$weight, StrAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$input `,` $target (`,` $weight^)? attr-dict `:` type($input) `,` type($target) (`,` type($weight)^)? `->` type($result)";
}

#endif // DTC_DIALECTS_DTG_IR_DTGREDUCTION_TD
