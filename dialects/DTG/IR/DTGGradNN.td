//===- DTGGradNN.td - gradient primitives without a forward twin -*- tablegen -*-===//
//
// The adjoints of convolution and pooling: scatter-like ops that a
// composition of forward ops would express only absurdly (zero-interleaved,
// flipped, cropped convolutions; data-dependent window selections). The
// gradient rules of passes/Training/GradientsNN.cpp build them.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECTS_DTG_IR_DTGGRADNN_TD
#define DTC_DIALECTS_DTG_IR_DTGGRADNN_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_ConvInputGradOp : DTG_Op<"conv_input_grad"> {
  let summary = "Gradient of dtg.conv with respect to its input (a transposed convolution).";
  let description = [{
    Given the gradient `grad` [N, F, O1..Ok] of a `dtg.conv` result and the
    convolution's weight [F, C/group, K1..Kk], computes the gradient of the
    input [N, C, D1..Dk]: each output position's gradient flows back, through
    the weight, to every input element its window read. Input elements that
    no window reads (trailing ones left over by the stride) get zero. The
    attributes are the forward convolution's; the result type (the input's)
    is explicit because strides make it ambiguous.

    ```mlir
    %dx = dtg.conv_input_grad %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
    ```

    Constraints:
    - `grad`, `weight` and the result have one element type and one rank
      (>= 3);
    - the result's channels are `group` times the weight's second dimension,
      `grad`'s channels are the weight's first dimension, divisible by `group`,
      and the batch sizes agree;
    - a `dtg.conv` of a result-shaped input with this weight and attributes
      has `grad`'s shape.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DTG_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $weight attr-dict `:` type($grad) `,` type($weight) `->` type($result)";
  let hasVerifier = 1;
}

def DTG_ConvWeightGradOp : DTG_Op<"conv_weight_grad"> {
  let summary = "Gradient of dtg.conv with respect to its weight.";
  let description = [{
    Given the gradient `grad` [N, F, O1..Ok] of a `dtg.conv` result and the
    convolution's input [N, C, D1..Dk], computes the gradient of the weight
    [F, C/group, K1..Kk]: the correlation, summed over the batch, of each
    filter's output gradient with the input elements each kernel tap read
    (padding reads zeros). The attributes are the forward convolution's; the
    result type (the weight's) is explicit because strides make the kernel
    size ambiguous.

    ```mlir
    %dw = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x3xf32>
    ```

    Constraints:
    - `grad`, `input` and the result have one element type and one rank
      (>= 3);
    - `input`'s channels are `group` times the result's second dimension,
      `grad`'s channels are the result's first dimension, divisible by `group`,
      and the batch sizes agree;
    - a `dtg.conv` of `input` with a result-shaped weight and these attributes
      has `grad`'s shape.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DTG_FloatTensor:$input,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad) `,` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def DTG_MaxPoolGradOp : DTG_Op<"max_pool_grad", [InferTypeOpAdaptor]> {
  let summary = "Gradient of dtg.max_pool: each window's gradient goes to its first maximum.";
  let description = [{
    Given the gradient `grad` of a `dtg.max_pool` result and the pooled
    `operand`, adds each output position's gradient to the input element
    that is the window's maximum; on ties, to the first in the window's
    row-major tap order, and a NaN wins over any number (the last NaN over
    earlier ones), as PyTorch's CPU kernel selects. Padding never receives
    gradient. The attributes are the forward pooling's; the result has the
    operand's type.

    ```mlir
    %dx = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
    ```

    Constraints:
    - `grad` and `operand` have one element type and rank (>= 3), the same
      first two dimensions, and `grad`'s spatial sizes are those a
      `dtg.max_pool` of `operand` with these attributes produces.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DTG_FloatTensor:$operand,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                       BoolAttr:$ceil_mode);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $operand attr-dict `:` type($grad) `,` type($operand) `->` type($result)";
}

def DTG_AvgPoolGradOp : DTG_Op<"avg_pool_grad"> {
  let summary = "Gradient of dtg.avg_pool: each window's gradient spread over its inputs.";
  let description = [{
    Given the gradient `grad` of a `dtg.avg_pool` result, adds to every input
    element a window read the window's gradient divided by the window's
    divisor: the number of input elements it covers, or with
    `count_include_pad` its taps inside the padded input (taps that a
    `ceil_mode` window has past the padded end count nowhere), exactly as
    the forward op divides. Padding receives nothing. The attributes are the
    forward pooling's; the result type (the pooled input's) is explicit
    because strides make it ambiguous.

    ```mlir
    %dx = dtg.avg_pool_grad %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : tensor<1x3x5x5xf32> -> tensor<1x3x8x8xf32>
    ```

    Constraints:
    - `grad` and the result have one element type and rank (>= 3), the same
      first two dimensions, and `grad`'s spatial sizes are those a
      `dtg.avg_pool` of a result-shaped input with these attributes produces.
  }];
  let arguments = (ins DTG_FloatTensor:$grad, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

#endif // DTC_DIALECTS_DTG_IR_DTGGRADNN_TD
