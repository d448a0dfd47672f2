// RUN: dtc-opt %s --split-input-file --dtc-test-gradients -verify-diagnostics -o /dev/null

// The gradient rules of the NN family (contractions, convolution, pooling,
// normalizations, softmax, dropout) against central finite differences
// (f64, through the reference interpreter).

// Tests that matmul of two matrices differentiates into G B^T and A^T G.
// expected-remark @+1 {{gradients match}}
func.func @matmul_2d(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> tensor<3x2xf64> {
  %c = dtg.matmul %a, %b : tensor<3x4xf64>, tensor<4x2xf64> -> tensor<3x2xf64>
  return %c : tensor<3x2xf64>
}

// -----

// Tests that matmul sums each operand's gradient over the batch dimensions
// it was broadcast along (a size-1 batch dimension and a missing one).
// expected-remark @+1 {{gradients match}}
func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf64>, %b: tensor<3x4x2xf64>) -> tensor<2x3x3x2xf64> {
  %c = dtg.matmul %a, %b : tensor<2x1x3x4xf64>, tensor<3x4x2xf64> -> tensor<2x3x3x2xf64>
  return %c : tensor<2x3x3x2xf64>
}

// -----

// Tests that a matrix times a batch of matrices sums the matrix's gradient
// over the batch.
// expected-remark @+1 {{gradients match}}
func.func @matmul_matrix_times_batch(%a: tensor<3x4xf64>, %b: tensor<2x4x5xf64>) -> tensor<2x3x5xf64> {
  %c = dtg.matmul %a, %b : tensor<3x4xf64>, tensor<2x4x5xf64> -> tensor<2x3x5xf64>
  return %c : tensor<2x3x5xf64>
}

// -----

// Tests that a batch of matrices times one shared matrix (a Linear layer's
// weight) differentiates the weight as one product over the flattened rows.
// expected-remark @+1 {{gradients match}}
func.func @matmul_batch_times_matrix(%a: tensor<2x3x4xf64>, %b: tensor<4x5xf64>) -> tensor<2x3x5xf64> {
  %c = dtg.matmul %a, %b : tensor<2x3x4xf64>, tensor<4x5xf64> -> tensor<2x3x5xf64>
  return %c : tensor<2x3x5xf64>
}

// -----

// Tests gemm without transposes, with alpha, beta and a C broadcast along M.
// expected-remark @+1 {{gradients match}}
func.func @gemm_nn(%a: tensor<3x4xf64>, %b: tensor<4x2xf64>, %c: tensor<2xf64>) -> tensor<3x2xf64> {
  %y = dtg.gemm %a, %b, %c {alpha = 0.75 : f64, beta = -1.5 : f64, trans_a = false, trans_b = false} : tensor<3x4xf64>, tensor<4x2xf64>, tensor<2xf64> -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}

// -----

// Tests gemm with trans_a and a C broadcast along N.
// expected-remark @+1 {{gradients match}}
func.func @gemm_tn(%a: tensor<4x3xf64>, %b: tensor<4x2xf64>, %c: tensor<3x1xf64>) -> tensor<3x2xf64> {
  %y = dtg.gemm %a, %b, %c {alpha = 1.25 : f64, beta = 1.0 : f64, trans_a = true, trans_b = false} : tensor<4x3xf64>, tensor<4x2xf64>, tensor<3x1xf64> -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}

// -----

// Tests gemm with trans_b and a full C.
// expected-remark @+1 {{gradients match}}
func.func @gemm_nt(%a: tensor<3x4xf64>, %b: tensor<2x4xf64>, %c: tensor<3x2xf64>) -> tensor<3x2xf64> {
  %y = dtg.gemm %a, %b, %c {alpha = 1.0 : f64, beta = 0.5 : f64, trans_a = false, trans_b = true} : tensor<3x4xf64>, tensor<2x4xf64>, tensor<3x2xf64> -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}

// -----

// Tests gemm with both transposes, a scalar C, and without C.
// expected-remark @+1 {{gradients match}}
func.func @gemm_tt(%a: tensor<4x3xf64>, %b: tensor<2x4xf64>, %c: tensor<f64>) -> (tensor<3x2xf64>, tensor<3x2xf64>) {
  %y = dtg.gemm %a, %b, %c {alpha = -0.5 : f64, beta = 2.0 : f64, trans_a = true, trans_b = true} : tensor<4x3xf64>, tensor<2x4xf64>, tensor<f64> -> tensor<3x2xf64>
  %z = dtg.gemm %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = true, trans_b = true} : tensor<4x3xf64>, tensor<2x4xf64> -> tensor<3x2xf64>
  return %y, %z : tensor<3x2xf64>, tensor<3x2xf64>
}

// -----

// Tests einsum as a batched matrix product.
// expected-remark @+1 {{gradients match}}
func.func @einsum_bmm(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>) -> tensor<2x3x5xf64> {
  %y = dtg.einsum %a, %b {equation = "bij,bjk->bik"} : tensor<2x3x4xf64>, tensor<2x4x5xf64> -> tensor<2x3x5xf64>
  return %y : tensor<2x3x5xf64>
}

// -----

// Tests einsum of one operand: a transpose, a full sum and a row sum (the
// summed letters appear nowhere else, so their gradient is a broadcast).
// expected-remark @+1 {{gradients match}}
func.func @einsum_unary(%a: tensor<3x4xf64>) -> (tensor<4x3xf64>, tensor<f64>, tensor<3xf64>) {
  %t = dtg.einsum %a {equation = "ij->ji"} : tensor<3x4xf64> -> tensor<4x3xf64>
  %s = dtg.einsum %a {equation = "ij->"} : tensor<3x4xf64> -> tensor<f64>
  %r = dtg.einsum %a {equation = "ij->i"} : tensor<3x4xf64> -> tensor<3xf64>
  return %t, %s, %r : tensor<4x3xf64>, tensor<f64>, tensor<3xf64>
}

// -----

// Tests einsum of three operands where one letter (k) is summed inside the
// first operand only, and an outer product.
// expected-remark @+1 {{gradients match}}
func.func @einsum_three_operands(%a: tensor<2x3x4xf64>, %b: tensor<3x5xf64>, %c: tensor<5xf64>) -> (tensor<2x5xf64>, tensor<2x5xf64>) {
  %y = dtg.einsum %a, %b, %c {equation = "ijk,jl,l->il"} : tensor<2x3x4xf64>, tensor<3x5xf64>, tensor<5xf64> -> tensor<2x5xf64>
  %s = dtg.einsum %a {equation = "ijk->i"} : tensor<2x3x4xf64> -> tensor<2xf64>
  %o = dtg.einsum %s, %c {equation = "i,j->ij"} : tensor<2xf64>, tensor<5xf64> -> tensor<2x5xf64>
  return %y, %o : tensor<2x5xf64>, tensor<2x5xf64>
}

// -----

// Tests einsum with size-1 dimensions that broadcast against the other
// operand: the broadcast operand's gradient is summed along them, and a
// letter of size 1 everywhere but in one operand is broadcast back.
// expected-remark @+1 {{gradients match}}
func.func @einsum_size_one_broadcast(%a: tensor<1x3xf64>, %b: tensor<2x3xf64>, %c: tensor<2x1xf64>) -> (tensor<2x3xf64>, tensor<2xf64>) {
  %y = dtg.einsum %a, %b {equation = "ij,ij->ij"} : tensor<1x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  %z = dtg.einsum %b, %c {equation = "ij,ij->i"} : tensor<2x3xf64>, tensor<2x1xf64> -> tensor<2xf64>
  return %y, %z : tensor<2x3xf64>, tensor<2xf64>
}

// -----

// Tests einsum with a repeated letter in a term (a diagonal): the trace,
// the diagonal, a diagonal inside a contraction, and a repeated letter
// whose first occurrence has size 1 (no diagonal, a plain read); a letter
// thrice and two repeated letters in one term.
// expected-remark @+1 {{gradients match}}
func.func @einsum_diagonal(%a: tensor<3x3xf64>, %b: tensor<3x2x3xf64>, %c: tensor<3x2xf64>, %d: tensor<1x3xf64>, %e: tensor<2x2x2xf64>, %f: tensor<2x3x2x3xf64>) -> (tensor<f64>, tensor<3xf64>, tensor<2x2xf64>, tensor<3xf64>, tensor<2xf64>, tensor<3xf64>) {
  %t = dtg.einsum %a {equation = "ii->"} : tensor<3x3xf64> -> tensor<f64>
  %g = dtg.einsum %a {equation = "ii->i"} : tensor<3x3xf64> -> tensor<3xf64>
  %y = dtg.einsum %b, %c {equation = "iji,ik->jk"} : tensor<3x2x3xf64>, tensor<3x2xf64> -> tensor<2x2xf64>
  %z = dtg.einsum %d {equation = "ii->i"} : tensor<1x3xf64> -> tensor<3xf64>
  %u = dtg.einsum %e {equation = "iii->i"} : tensor<2x2x2xf64> -> tensor<2xf64>
  %v = dtg.einsum %f {equation = "ijij->j"} : tensor<2x3x2x3xf64> -> tensor<3xf64>
  return %t, %g, %y, %z, %u, %v : tensor<f64>, tensor<3xf64>, tensor<2x2xf64>, tensor<3xf64>, tensor<2xf64>, tensor<3xf64>
}

// -----

// Tests einsum with a rank-0 operand (a scale) and a letter of size 1 in
// the output.
// expected-remark @+1 {{gradients match}}
func.func @einsum_scalar_operand(%s: tensor<f64>, %a: tensor<2x3xf64>, %b: tensor<3x1xf64>) -> tensor<2x1xf64> {
  %y = dtg.einsum %s, %a, %b {equation = ",ij,jk->ik"} : tensor<f64>, tensor<2x3xf64>, tensor<3x1xf64> -> tensor<2x1xf64>
  return %y : tensor<2x1xf64>
}

// -----

// Tests a 2-D convolution with bias, unit strides and symmetric padding.
// expected-remark @+1 {{gradients match}}
func.func @conv_2d(%x: tensor<2x3x5x5xf64>, %w: tensor<4x3x3x3xf64>, %b: tensor<4xf64>) -> tensor<2x4x5x5xf64> {
  %y = dtg.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<2x3x5x5xf64>, tensor<4x3x3x3xf64>, tensor<4xf64> -> tensor<2x4x5x5xf64>
  return %y : tensor<2x4x5x5xf64>
}

// -----

// Tests a grouped 2-D convolution with strides, dilations and asymmetric
// pads, without bias.
// expected-remark @+1 {{gradients match}}
func.func @conv_2d_groups_strides(%x: tensor<2x4x7x6xf64>, %w: tensor<6x2x3x2xf64>) -> tensor<2x6x3x6xf64> {
  %y = dtg.conv %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, 2>, dilations = array<i64: 1, 2>, group = 2 : i64} : tensor<2x4x7x6xf64>, tensor<6x2x3x2xf64> -> tensor<2x6x3x6xf64>
  return %y : tensor<2x6x3x6xf64>
}

// -----

// Tests a 1-D dilated, strided convolution that leaves the last input
// element unread (its gradient is zero).
// expected-remark @+1 {{gradients match}}
func.func @conv_1d(%x: tensor<1x2x9xf64>, %w: tensor<3x2x3xf64>, %b: tensor<3xf64>) -> tensor<1x3x2xf64> {
  %y = dtg.conv %x, %w, %b {strides = array<i64: 3>, pads = array<i64: 0, 0>, dilations = array<i64: 2>, group = 1 : i64} : tensor<1x2x9xf64>, tensor<3x2x3xf64>, tensor<3xf64> -> tensor<1x3x2xf64>
  return %y : tensor<1x3x2xf64>
}

// -----

// Tests a depthwise-style grouped 3-D convolution with asymmetric pads.
// expected-remark @+1 {{gradients match}}
func.func @conv_3d(%x: tensor<1x2x4x3x5xf64>, %w: tensor<2x1x2x2x3xf64>, %b: tensor<2xf64>) -> tensor<1x2x4x2x2xf64> {
  %y = dtg.conv %x, %w, %b {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 0, 1, 0, 1, 0>, dilations = array<i64: 1, 1, 1>, group = 2 : i64} : tensor<1x2x4x3x5xf64>, tensor<2x1x2x2x3xf64>, tensor<2xf64> -> tensor<1x2x4x2x2xf64>
  return %y : tensor<1x2x4x2x2xf64>
}

// -----

// Tests max_pool with non-overlapping windows.
// expected-remark @+1 {{gradients match}}
func.func @max_pool_2d(%x: tensor<2x2x4x4xf64>) -> tensor<2x2x2x2xf64> {
  %y = dtg.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<2x2x4x4xf64> -> tensor<2x2x2x2xf64>
  return %y : tensor<2x2x2x2xf64>
}

// -----

// Tests max_pool with overlapping windows, padding, dilation and ceil_mode
// (windows that overlap send the gradient of each to its own maximum).
// expected-remark @+1 {{gradients match}}
func.func @max_pool_padded_ceil(%x: tensor<1x2x7x6xf64>) -> tensor<1x2x4x3xf64> {
  %y = dtg.max_pool %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 2>, ceil_mode = true} : tensor<1x2x7x6xf64> -> tensor<1x2x4x3xf64>
  return %y : tensor<1x2x4x3xf64>
}

// -----

// Tests 1-D and 3-D max_pool.
// expected-remark @+1 {{gradients match}}
func.func @max_pool_1d_3d(%x: tensor<1x3x8xf64>, %z: tensor<1x2x4x4x3xf64>) -> (tensor<1x3x4xf64>, tensor<1x2x2x4x2xf64>) {
  %y = dtg.max_pool %x {kernel = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 0>, dilations = array<i64: 1>, ceil_mode = true} : tensor<1x3x8xf64> -> tensor<1x3x4xf64>
  %w = dtg.max_pool %z {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 1, 2>, pads = array<i64: 0, 1, 0, 0, 0, 1>, dilations = array<i64: 1, 1, 1>, ceil_mode = false} : tensor<1x2x4x4x3xf64> -> tensor<1x2x2x4x2xf64>
  return %y, %w : tensor<1x3x4xf64>, tensor<1x2x2x4x2xf64>
}

// -----

// Tests avg_pool with padding, counting the padding or not.
// expected-remark @+1 {{gradients match}}
func.func @avg_pool_pads(%x: tensor<2x2x5x5xf64>) -> (tensor<2x2x3x3xf64>, tensor<2x2x3x3xf64>) {
  %y = dtg.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<2x2x5x5xf64> -> tensor<2x2x3x3xf64>
  %z = dtg.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<2x2x5x5xf64> -> tensor<2x2x3x3xf64>
  return %y, %z : tensor<2x2x3x3xf64>, tensor<2x2x3x3xf64>
}

// -----

// Tests avg_pool with ceil_mode, whose last windows run past the padded
// input (those taps count nowhere), with and without count_include_pad.
// expected-remark @+1 {{gradients match}}
func.func @avg_pool_ceil(%x: tensor<2x2x6x6xf64>, %v: tensor<1x1x6x5xf64>) -> (tensor<2x2x3x3xf64>, tensor<2x2x3x3xf64>, tensor<1x1x3x3xf64>) {
  %y = dtg.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<2x2x6x6xf64> -> tensor<2x2x3x3xf64>
  %z = dtg.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : tensor<2x2x6x6xf64> -> tensor<2x2x3x3xf64>
  %w = dtg.avg_pool %v {kernel = array<i64: 2, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<1x1x6x5xf64> -> tensor<1x1x3x3xf64>
  return %y, %z, %w : tensor<2x2x3x3xf64>, tensor<2x2x3x3xf64>, tensor<1x1x3x3xf64>
}

// -----

// Tests batch_norm_inference with respect to all five operands.
// expected-remark @+1 {{gradients match}}
func.func @batch_norm_inference(%x: tensor<2x3x2x2xf64>, %s: tensor<3xf64>, %b: tensor<3xf64>, %m: tensor<3xf64>, %v: tensor<3xf64> {dtc.test_range = [0.5, 2.0]}) -> tensor<2x3x2x2xf64> {
  %y = dtg.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64} : tensor<2x3x2x2xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<2x3x2x2xf64>
  return %y : tensor<2x3x2x2xf64>
}

// -----

// Tests batch_norm_training through the batch statistics (input, scale,
// bias); the running statistics receive no gradient, and the normalized
// result does not depend on them.
// expected-remark @+1 {{gradients match}}
func.func @batch_norm_training(%x: tensor<3x2x2x3xf64>, %s: tensor<2xf64>, %b: tensor<2xf64>, %rm: tensor<2xf64>, %rv: tensor<2xf64> {dtc.test_range = [0.5, 2.0]}) -> tensor<3x2x2x3xf64> {
  %y, %nm, %nv = dtg.batch_norm_training %x, %s, %b, %rm, %rv {epsilon = 1.0e-3 : f64, momentum = 0.9 : f64} : tensor<3x2x2x3xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64> -> tensor<3x2x2x3xf64>, tensor<2xf64>, tensor<2xf64>
  return %y : tensor<3x2x2x3xf64>
}

// -----

// Tests batch_norm_training of a [N, C] input (BatchNorm1d).
// expected-remark @+1 {{gradients match}}
func.func @batch_norm_training_2d(%x: tensor<4x3xf64>, %s: tensor<3xf64>, %b: tensor<3xf64>, %rm: tensor<3xf64>, %rv: tensor<3xf64> {dtc.test_range = [0.5, 2.0]}) -> tensor<4x3xf64> {
  %y, %nm, %nv = dtg.batch_norm_training %x, %s, %b, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<4x3xf64>, tensor<3xf64>, tensor<3xf64>
  return %y : tensor<4x3xf64>
}

// -----

// Tests layer_norm over the last axis with scale and bias.
// expected-remark @+1 {{gradients match}}
func.func @layer_norm_last(%x: tensor<2x3x5xf64>, %g: tensor<5xf64>, %b: tensor<5xf64>) -> tensor<2x3x5xf64> {
  %y = dtg.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x3x5xf64>, tensor<5xf64>, tensor<5xf64> -> tensor<2x3x5xf64>
  return %y : tensor<2x3x5xf64>
}

// -----

// Tests layer_norm over two axes with a scale broadcast along one of them
// and no bias.
// expected-remark @+1 {{gradients match}}
func.func @layer_norm_axis1(%x: tensor<2x3x4xf64>, %g: tensor<1x4xf64>) -> tensor<2x3x4xf64> {
  %y = dtg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-3 : f64} : tensor<2x3x4xf64>, tensor<1x4xf64> -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// -----

// Tests softmax along the first and the last axis.
// expected-remark @+1 {{gradients match}}
func.func @softmax(%x: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<3x4xf64>) {
  %y = dtg.softmax %x {axis = 0 : i64} : tensor<3x4xf64>
  %z = dtg.softmax %x {axis = 1 : i64} : tensor<3x4xf64>
  return %y, %z : tensor<3x4xf64>, tensor<3x4xf64>
}

// -----

// Tests log_softmax along a middle axis.
// expected-remark @+1 {{gradients match}}
func.func @log_softmax(%x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %y = dtg.log_softmax %x {axis = 1 : i64} : tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// -----

// Tests dropout with ratio 0.5: the mask is fixed by the key, so the kept
// elements' gradient is 2 g and the dropped ones' 0.
// expected-remark @+1 {{gradients match}}
func.func @dropout_half(%x: tensor<4x8xf64>, %key: tensor<2xi64> {dtc.test_value = dense<[1234, 7]> : tensor<2xi64>}) -> tensor<4x8xf64> {
  %y, %mask = dtg.dropout %x, %key {ratio = 0.5 : f64, stream = 3 : i64} : tensor<4x8xf64>, tensor<2xi64> -> tensor<4x8xf64>, tensor<4x8xi1>
  return %y : tensor<4x8xf64>
}

// -----

// Tests dropout with ratio 0 (the identity) and with ratio 0.2.
// expected-remark @+1 {{gradients match}}
func.func @dropout_ratios(%x: tensor<16xf64>, %key: tensor<2xi64> {dtc.test_value = dense<[5, 1]> : tensor<2xi64>}) -> (tensor<16xf64>, tensor<16xf64>) {
  %y, %m0 = dtg.dropout %x, %key {ratio = 0.0 : f64, stream = 0 : i64} : tensor<16xf64>, tensor<2xi64> -> tensor<16xf64>, tensor<16xi1>
  %z, %m1 = dtg.dropout %y, %key {ratio = 0.2 : f64, stream = 1 : i64} : tensor<16xf64>, tensor<2xi64> -> tensor<16xf64>, tensor<16xi1>
  return %y, %z : tensor<16xf64>, tensor<16xf64>
}

// -----

// Tests a small network: convolution, batch normalization, relu, max
// pooling, a linear layer and log_softmax.
// expected-remark @+1 {{gradients match}}
func.func @conv_net(%x: tensor<2x1x6x6xf64>, %w: tensor<2x1x3x3xf64>, %s: tensor<2xf64>, %b: tensor<2xf64>, %rm: tensor<2xf64>, %rv: tensor<2xf64> {dtc.test_range = [0.5, 2.0]}, %fc: tensor<3x8xf64>, %fb: tensor<3xf64>) -> tensor<2x3xf64> {
  %c = dtg.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<2x1x6x6xf64>, tensor<2x1x3x3xf64> -> tensor<2x2x4x4xf64>
  %n, %nm, %nv = dtg.batch_norm_training %c, %s, %b, %rm, %rv {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x2x4x4xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64> -> tensor<2x2x4x4xf64>, tensor<2xf64>, tensor<2xf64>
  %r = dtg.relu %n : tensor<2x2x4x4xf64>
  %p = dtg.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<2x2x4x4xf64> -> tensor<2x2x2x2xf64>
  %f = dtg.reshape %p : tensor<2x2x2x2xf64> -> tensor<2x8xf64>
  %l = dtg.gemm %f, %fc, %fb {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = true} : tensor<2x8xf64>, tensor<3x8xf64>, tensor<3xf64> -> tensor<2x3xf64>
  %y = dtg.log_softmax %l {axis = 1 : i64} : tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}
