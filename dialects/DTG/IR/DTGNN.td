//===- DTGNN.td - contractions, convolution, pooling, norms ---*- tablegen -*-===//

#ifndef DTC_DIALECTS_DTG_IR_DTGNN_TD
#define DTC_DIALECTS_DTG_IR_DTGNN_TD

include "dialects/DTG/IR/DTGBase.td"

def DTG_MatMulOp : DTG_Op<"matmul", [InferTypeOpAdaptor]> {
  let summary = "Batched matrix product with broadcast batch dimensions.";
  let description = [{
    NumPy `matmul` on operands of rank 2 or more: the last two dimensions
    multiply ([M, K] x [K, N]), the leading ones broadcast. (The importer turns
    1-D operands into matrices with reshapes.)

    ```mlir
    %c = dtg.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
    ```

    Constraints:
    - both operands have rank >= 2 and the same element type; K agrees;
    - the batch dimensions broadcast.
  }];
  let arguments = (ins DTG_Tensor:$lhs, DTG_Tensor:$rhs);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def DTG_GemmOp : DTG_Op<"gemm", [InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) op(B) + beta * C on matrices (ONNX Gemm).";
  let description = [{
    `op(X)` is X or its transpose per `trans_a` / `trans_b`; C, when present,
    broadcasts to [M, N].

    ```mlir
    %y = dtg.gemm %x, %w, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = true} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
    ```

    Constraints:
    - A and B are 2-D with agreeing K; C broadcasts to [M, N].
  }];
  let arguments = (ins DTG_FloatTensor:$a, DTG_FloatTensor:$b,
                       Optional<DTG_FloatTensor>:$c, F64Attr:$alpha,
                       F64Attr:$beta, BoolAttr:$trans_a, BoolAttr:$trans_b);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` type($a) `,` type($b) (`,` type($c)^)? `->` type($result)";
}

def DTG_EinsumOp : DTG_Op<"einsum", [InferTypeOpAdaptor]> {
  let summary = "Einstein summation over an explicit equation.";
  let description = [{
    The equation is normalized at import: explicit output (`->`) and no
    ellipsis, one lowercase letter per dimension.

    ```mlir
    %y = dtg.einsum %a, %b {equation = "bij,bjk->bik"} : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
    ```

    Constraints:
    - one term per operand, each letter's dimensions agree.
  }];
  let arguments = (ins Variadic<DTG_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs DTG_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
}

def DTG_ConvOp : DTG_Op<"conv", [InferTypeOpAdaptor]> {
  let summary = "N-D grouped, strided, dilated, padded convolution (NC... layout).";
  let description = [{
    Input [N, C, D1..Dk], weight [F, C/group, K1..Kk], optional bias [F].
    `pads` holds the k leading pads, then the k trailing pads (ONNX order).

    ```mlir
    %y = dtg.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
    ```

    Constraints:
    - input and weight have the same rank (>= 3), C is divisible by `group`,
      F by `group`; strides and dilations positive; pads non-negative.
  }];
  let arguments = (ins DTG_FloatTensor:$input, DTG_FloatTensor:$weight,
                       Optional<DTG_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)";
}

class DTG_PoolOp<string mnemonic, string summaryText, dag extraAttrs>
    : DTG_Op<mnemonic, [InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    Pools windows of `kernel` over the spatial dimensions of an [N, C, D1..Dk]
    input; `pads` as in `dtg.conv`; `ceil_mode` rounds the output size up.

    ```mlir
    %y = dtg.}] # mnemonic # [{ %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    ```

    Constraints:
    - rank >= 3; one kernel size, stride and dilation per spatial dimension.
  }];
  let arguments = !con((ins DTG_FloatTensor:$operand, DenseI64ArrayAttr:$kernel,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                            DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode),
                       extraAttrs);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def DTG_MaxPoolOp : DTG_PoolOp<"max_pool", "Maximum over each window.", (ins)>;
def DTG_AvgPoolOp : DTG_PoolOp<"avg_pool",
    "Average over each window; padding counts only with count_include_pad.",
    (ins BoolAttr:$count_include_pad)>;

def DTG_BatchNormInferenceOp : DTG_Op<"batch_norm_inference",
    [InferTypeOpAdaptor]> {
  let summary = "Normalizes channels (axis 1) with given mean and variance.";
  let description = [{
    `y = scale * (x - mean) / sqrt(var + epsilon) + bias`, per channel.

    ```mlir
    %y = dtg.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>
    ```

    Constraints:
    - x has rank >= 2; the other four operands are 1-D of size C = x.shape[1].
  }];
  let arguments = (ins DTG_FloatTensor:$input, DTG_FloatTensor:$scale,
                       DTG_FloatTensor:$bias, DTG_FloatTensor:$mean,
                       DTG_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` type($input) `,` type($scale) `,` type($bias) `,` type($mean) `,` type($variance) `->` type($result)";
}

def DTG_BatchNormTrainingOp : DTG_Op<"batch_norm_training",
    [InferTypeOpAdaptor]> {
  let summary = "Normalizes channels with batch statistics and updates running ones.";
  let description = [{
    Statistics are taken over every axis but 1. The running statistics are
    updated as `new = momentum * running + (1 - momentum) * batch` (ONNX's
    `momentum`; PyTorch's is 1 minus it). The batch variance in that update is
    unbiased (Bessel's correction, as PyTorch computes it) when
    `unbiased_running_var` is set (the default, and what the importer sets for
    models PyTorch exported), else biased (the ONNX specification's reference).

    ```mlir
    %y, %rm, %rv = dtg.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
    ```

    Constraints:
    - as `dtg.batch_norm_inference`.
  }];
  let arguments = (ins DTG_FloatTensor:$input, DTG_FloatTensor:$scale,
                       DTG_FloatTensor:$bias, DTG_FloatTensor:$running_mean,
                       DTG_FloatTensor:$running_var, F64Attr:$epsilon,
                       F64Attr:$momentum,
                       DefaultValuedAttr<BoolAttr, "true">:$unbiased_running_var);
  let results = (outs DTG_FloatTensor:$result, DTG_FloatTensor:$new_running_mean,
                      DTG_FloatTensor:$new_running_var);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $running_mean `,` $running_var attr-dict `:` type($input) `,` type($scale) `,` type($bias) `,` type($running_mean) `,` type($running_var) `->` type($result) `,` type($new_running_mean) `,` type($new_running_var)";
}

def DTG_LayerNormOp : DTG_Op<"layer_norm",
    [InferTypeOpAdaptor]> {
  let summary = "Normalizes over the trailing dimensions from `axis` on.";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and
    (biased) variance over dimensions [axis, rank). `scale` and `bias` have the
    normalized shape (or broadcast to it).

    ```mlir
    %y = dtg.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    ```

    Constraints:
    - `axis` in [0, rank); scale (and bias) broadcast to the normalized shape.
  }];
  let arguments = (ins DTG_FloatTensor:$input, DTG_FloatTensor:$scale,
                       Optional<DTG_FloatTensor>:$bias, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` type($input) `,` type($scale) (`,` type($bias)^)? `->` type($result)";
}

def DTG_SoftmaxOp : DTG_Op<"softmax", [SameOperandsAndResultType]> {
  let summary = "exp(x - max) / sum(exp(x - max)) along one axis.";
  let description = [{
    ```mlir
    %y = dtg.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
    ```

    Constraints:
    - `axis` is in [0, rank).
  }];
  let arguments = (ins DTG_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DTG_LogSoftmaxOp : DTG_Op<"log_softmax", [SameOperandsAndResultType]> {
  let summary = "x - max - log(sum(exp(x - max))) along one axis.";
  let description = [{
    ```mlir
    %y = dtg.log_softmax %x {axis = 1 : i64} : tensor<4x8xf32>
    ```

    Constraints:
    - `axis` is in [0, rank).
  }];
  let arguments = (ins DTG_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs DTG_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DTG_DropoutOp : DTG_Op<"dropout", [InferTypeOpAdaptor]> {
  let summary = "Zeroes elements with probability `ratio`, scaling the rest by 1/(1-ratio).";
  let description = [{
    The mask comes from a counter-based generator (Philox-4x32-10) keyed by
    `key` = (seed, step), the op's `stream` number and each element's index, so
    it does not depend on how the tensor is sharded and replays exactly when
    recomputed (the exact construction is in dialects/DTG/Interp/Philox.h;
    generated code reproduces it bit for bit). A third key element is an
    offset added to every element's index: the index, in the whole batch's
    tensor, of this tensor's first element, so that a micro-batch or a
    data-parallel rank's rows draw the bits the whole batch's rows would.
    With `block_of` (a shape), the operand is the block of a tensor of that
    shape that starts at the coordinates the key holds after its third
    element (tensor parallelism's block of a tensor split along later
    dimensions): each element draws the bits of its index in the whole
    tensor (plus the offset), so the mask is the whole tensor's, cut.
    Inference-mode dropout is not this op (the importer drops it).

    ```mlir
    %y, %mask = dtg.dropout %x, %key {ratio = 0.1 : f64, stream = 0 : i64} : tensor<4x8xf32>, tensor<2xi64> -> tensor<4x8xf32>, tensor<4x8xi1>
    ```

    Constraints:
    - `ratio` is in [0, 1); `key` is a tensor<2xi64> or tensor<3xi64>, or
      with `block_of` a tensor<(3 + rank)xi64>;
    - `block_of` has the operand's rank and no dimension smaller than the
      operand's.
  }];
  let arguments = (ins DTG_FloatTensor:$operand, StaticShapeTensorOf<[I64]>:$key,
                       F64Attr:$ratio, I64Attr:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$block_of);
  let results = (outs DTG_FloatTensor:$result, DTG_BoolTensor:$mask);
  let assemblyFormat = "$operand `,` $key attr-dict `:` type($operand) `,` type($key) `->` type($result) `,` type($mask)";
}

#endif // DTC_DIALECTS_DTG_IR_DTGNN_TD
