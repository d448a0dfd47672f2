//===- DTGGradShape.td - gradient primitives without a forward twin -*- tablegen -*-===//
//
// Adjoints of data-movement ops that no composition of forward ops expresses
// well: each one adds (scatters) a gradient back into zeros of the forward
// operand's shape. The result type is written out, since the gradient alone
// does not determine it.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_IR_DTGGRADSHAPE_TD
#define DTC_DIALECTS_DTG_IR_DTGGRADSHAPE_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_GatherGradOp : DTG_Op<"gather_grad"> {
  let summary = "Adds slices of `grad` into zeros at `indices` along `axis` (the adjoint of gather).";
  let description = [{
    The gradient of `dtg.gather` with respect to its data: the result (shaped
    like the gathered data) starts at zero, then for every index position `j`
    the slice `grad[.., j, ..]` is added to `result[.., indices[j], ..]` along
    `axis`. Negative indices count from the end, as in gather; an index that
    appears several times receives the sum of its slices; an index out of
    range is an error at run time. An embedding's weight gradient is a
    `gather_grad` on axis 0.

    ```mlir
    %dt = dtg.gather_grad %dy, %ids {axis = 0 : i64} : tensor<4x5x8xf32>, tensor<4x5xi64> -> tensor<100x8xf32>
    ```

    Constraints:
    - `axis` is in [0, rank of the result);
    - `grad` has the shape `result.shape[:axis] + indices.shape +
      result.shape[axis+1:]` and the result's element type.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DTG_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def DTG_SliceGradOp : DTG_Op<"slice_grad"> {
  let summary = "Writes `grad` into zeros at a strided box (the adjoint of slice).";
  let description = [{
    The gradient of `dtg.slice` with respect to its operand: the result (shaped
    like the sliced operand) is zero except at the indices the slice took,
    which receive the elements of `grad`. `starts`, `limits` and `steps` are
    those of the slice (steps may be negative or larger than 1; the indices
    taken never repeat). Slices with unit steps differentiate to `dtg.pad`;
    this op covers the other steps.

    ```mlir
    %dx = dtg.slice_grad %dy {starts = array<i64: 0, 4>, limits = array<i64: 2, -1>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x5xf32>
    ```

    Constraints:
    - `starts`, `limits` and `steps` have one entry per result dimension; no
      step is 0;
    - slicing the result's shape with them takes indices inside it and gives
      `grad`'s shape; same element type.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def DTG_PadGradOp : DTG_Op<"pad_grad"> {
  let summary = "Folds a padded gradient back onto the elements it was copied from (the adjoint of pad).";
  let description = [{
    The gradient of `dtg.pad` with respect to its operand: every element of
    `grad` is added to the operand element that `dtg.pad` with the same
    `low`, `high` and `mode` copied to its position; positions filled with
    the constant (mode `constant`) contribute nothing, and cropped elements
    (negative amounts) receive zero. With `reflect` or `edge` an element may
    receive several contributions (the edge collects the whole `edge`
    padding). Constant-mode pads differentiate to `dtg.pad` with negated
    amounts; this op covers `reflect` and `edge`.

    ```mlir
    %dx = dtg.pad_grad %dy {low = array<i64: 0, 2>, high = array<i64: 0, 1>, mode = "reflect"} : tensor<2x6xf32> -> tensor<2x3xf32>
    ```

    Constraints:
    - one `low` and one `high` amount per result dimension, and
      `result.shape[d] + low[d] + high[d] == grad.shape[d]`; same element
      type;
    - `mode` is one of constant, reflect, edge; `reflect` amounts are smaller
      than the dimension, and neither `reflect` nor `edge` pads an empty
      dimension.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, StrAttr:$mode);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

#endif // DTC_DIALECTS_DTG_IR_DTGGRADSHAPE_TD
