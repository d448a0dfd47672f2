// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter kernels of the NN family, run through constant folding:
// each function computes one op on constants, which folds to the result.
// The expected values are PyTorch's (float64, rounded to the element type).

// Tests that dtg.matmul multiplies matrices.
// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-2.640625, -5.625000e-01], [-1.875000e+00, -2.343750e+00]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.matmul
// CHECK: return %[[R]]
func.func @matmul_2d() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[-0.125, -1.5, 1.125], [0.75, -1.625, 0.375]]> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[0.875, -1.125], [1.5, 1.125], [-0.25, 0.875]]> : tensor<3x2xf32>
  %r = dtg.matmul %a0, %a1 : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that dtg.matmul broadcasts batch dimensions of different ranks.
// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-5.156250e-01, 3.296875], [-1.656250e+00, 3.843750e+00]], {{\[\[}}-5.937500e-01, 3.593750e-01], [4.687500e-01, 2.187500e-01]], {{\[\[}}-6.406250e-01, -1.281250e+00], [-1.343750e+00, -2.281250e+00]]], {{\[\[\[}}-5.312500e-01, 3.031250e+00], [-2.578125, 3.046875]], {{\[\[}}2.265625, -5.531250e+00], [6.093750e-01, 2.390625]], {{\[\[}}-3.968750e+00, -3.421875], [-3.750000e-01, -1.828125]]]]> : tensor<2x3x2x2xf32>
// CHECK-NOT: dtg.matmul
// CHECK: return %[[R]]
func.func @matmul_batch_broadcast() -> tensor<2x3x2x2xf32> {
  %a0 = dtg.constant dense<[[[[-1.0, 1.125, -0.25], [-0.75, 1.25, -1.0]]], [[[-1.125, -1.25, -1.5], [0.0, 1.875, -1.125]]]]> : tensor<2x1x2x3xf32>
  %a1 = dtg.constant dense<[[[-0.5, -2.0], [-0.625, 0.875], [1.25, -1.25]], [[0.375, 1.5], [-0.5, 1.875], [-1.375, 1.0]], [[1.0, 0.875], [0.625, 0.0], [1.375, 1.625]]]> : tensor<3x3x2xf32>
  %r = dtg.matmul %a0, %a1 : tensor<2x1x2x3xf32>, tensor<3x3x2xf32> -> tensor<2x3x2x2xf32>
  return %r : tensor<2x3x2x2xf32>
}

// -----

// Tests that dtg.matmul multiplies integer matrices exactly.
// CHECK-LABEL: func.func @matmul_i64
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-11, 11, -14], [11, -11, 4]]> : tensor<2x3xi64>
// CHECK-NOT: dtg.matmul
// CHECK: return %[[R]]
func.func @matmul_i64() -> tensor<2x3xi64> {
  %a0 = dtg.constant dense<[[-5, -3], [3, 4]]> : tensor<2x2xi64>
  %a1 = dtg.constant dense<[[1, -1, 4], [2, -2, -2]]> : tensor<2x3xi64>
  %r = dtg.matmul %a0, %a1 : tensor<2x2xi64>, tensor<2x3xi64> -> tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// -----

// Tests that dtg.matmul rounds its result to f16.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-5.070310e+00, -2.922360e-01], [2.933590e+00, 7.523430e+00]], {{\[\[}}-1.340820e+00, -5.200200e-01], [5.898440e-01, -1.701170e+00]]]> : tensor<2x2x2xf16>
// CHECK-NOT: dtg.matmul
// CHECK: return %[[R]]
func.func @matmul_f16() -> tensor<2x2x2xf16> {
  %a0 = dtg.constant dense<[[[-2.2, -1.1, 1.8], [-2.9, -3.0, -1.4]], [[2.4, 0.1, -0.1], [1.4, -0.2, -2.3]]]> : tensor<2x2x3xf16>
  %a1 = dtg.constant dense<[[[-0.7, -2.0], [1.1, 0.5], [-3.0, -2.3]], [[-0.7, -0.2], [2.5, 0.2], [-0.9, 0.6]]]> : tensor<2x3x2xf16>
  %r = dtg.matmul %a0, %a1 : tensor<2x2x3xf16>, tensor<2x3x2xf16> -> tensor<2x2x2xf16>
  return %r : tensor<2x2x2xf16>
}

// -----

// Tests that dtg.gemm transposes both operands, scales by alpha and adds beta
// times a broadcast row C.
// CHECK-LABEL: func.func @gemm_trans_both
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.296875, 5.9140625, -6.781250e+00, 0.2265625], [5.750000e+00, 0.8203125, -3.078125, 2.5703125]]> : tensor<2x4xf32>
// CHECK-NOT: dtg.gemm
// CHECK: return %[[R]]
func.func @gemm_trans_both() -> tensor<2x4xf32> {
  %a0 = dtg.constant dense<[[-1.625, -1.875], [-1.625, 1.375], [1.375, -1.875]]> : tensor<3x2xf32>
  %a1 = dtg.constant dense<[[0.375, 1.375, -1.5], [0.375, -1.875, 1.375], [1.75, 1.125, -1.375], [-0.875, 1.625, 0.125]]> : tensor<4x3xf32>
  %a2 = dtg.constant dense<[1.875, 1.875, -1.75, 0.375]> : tensor<4xf32>
  %r = dtg.gemm %a0, %a1, %a2 {alpha = 5.000000e-01 : f64, beta = 2.000000e+00 : f64, trans_a = true, trans_b = true} : tensor<3x2xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Tests that dtg.gemm without C computes alpha * A * B^T.
// CHECK-LABEL: func.func @gemm_no_c
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}2.812500e-01, -1.093750e-01], [1.296875, -2.687500e+00]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.gemm
// CHECK: return %[[R]]
func.func @gemm_no_c() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[0.25, 0.25, 0.625], [0.875, -1.625, -0.625]]> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[1.25, -0.125, 0.0], [-0.5, 1.625, -0.625]]> : tensor<2x3xf32>
  %r = dtg.gemm %a0, %a1 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, trans_a = false, trans_b = true} : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that dtg.gemm with trans_a only broadcasts a column C.
// CHECK-LABEL: func.func @gemm_trans_a_column_c
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-1.968750e+00, -3.250000e+00], [-5.125000e+00, -3.062500e+00]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.gemm
// CHECK: return %[[R]]
func.func @gemm_trans_a_column_c() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[-0.875, -1.625], [-0.875, -0.25], [-0.5, -0.25]]> : tensor<3x2xf32>
  %a1 = dtg.constant dense<[[1.5, 0.5], [0.625, 1.5], [-0.125, 1.375]]> : tensor<3x2xf32>
  %a2 = dtg.constant dense<[[-1.625], [0.0]]> : tensor<2x1xf32>
  %r = dtg.gemm %a0, %a1, %a2 {alpha = 2.000000e+00 : f64, beta = -1.000000e+00 : f64, trans_a = true, trans_b = false} : tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that dtg.einsum contracts a chain of three operands.
// CHECK-LABEL: func.func @einsum_three_operands
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-1.00195313, -0.544921875], [-7.812500e-02, 1.546875]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_three_operands() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[-1.5, -0.625, -1.0], [1.25, 1.25, 0.75]]> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[-0.625, -0.125], [0.875, -0.375], [0.25, -1.125]]> : tensor<3x2xf32>
  %a2 = dtg.constant dense<[[-1.625, 1.625], [-0.5, -0.5]]> : tensor<2x2xf32>
  %r = dtg.einsum %a0, %a1, %a2 {equation = "ij,jk,kl->il"} : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that dtg.einsum multiplies batched matrices.
// CHECK-LABEL: func.func @einsum_batch_matmul
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-2.640625, -1.546875], [1.468750e+00, 1.234375]], {{\[\[}}1.125000e+00, -4.156250e+00], [-2.421875, 4.703125]]]> : tensor<2x2x2xf32>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_batch_matmul() -> tensor<2x2x2xf32> {
  %a0 = dtg.constant dense<[[[-0.125, 1.625, -1.0], [0.75, -1.25, 0.625]], [[-1.25, 0.625, -0.5], [1.375, -1.125, 0.125]]]> : tensor<2x2x3xf32>
  %a1 = dtg.constant dense<[[[-0.75, -0.125], [-1.375, -1.5], [0.5, -0.875]], [[-0.875, 1.625], [1.25, -2.0], [1.5, 1.75]]]> : tensor<2x3x2xf32>
  %r = dtg.einsum %a0, %a1 {equation = "bij,bjk->bik"} : tensor<2x2x3xf32>, tensor<2x3x2xf32> -> tensor<2x2x2xf32>
  return %r : tensor<2x2x2xf32>
}

// -----

// Tests that dtg.einsum takes a diagonal when a term repeats a letter.
// CHECK-LABEL: func.func @einsum_diagonal
// CHECK: %[[R:.+]] = dtg.constant dense<[7.500000e-01, -1.000000e+00, -2.500000e-01]> : tensor<3xf32>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_diagonal() -> tensor<3xf32> {
  %a0 = dtg.constant dense<[[0.75, -1.75, -0.5], [-1.25, -1.0, -1.75], [1.375, -0.75, -0.25]]> : tensor<3x3xf32>
  %r = dtg.einsum %a0 {equation = "ii->i"} : tensor<3x3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Tests that dtg.einsum sums letters missing from the output and permutes the
// rest.
// CHECK-LABEL: func.func @einsum_transpose_sum
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-1.125000e+00, 1.375000e+00], [-1.125000e+00, -2.125000e+00], [-2.250000e+00, -1.500000e+00], [1.375000e+00, 7.500000e-01]]> : tensor<4x2xf32>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_transpose_sum() -> tensor<4x2xf32> {
  %a0 = dtg.constant dense<[[[-1.375, -0.125, 0.125, 0.75], [-0.5, -0.875, -1.0, 1.5], [0.75, -0.125, -1.375, -0.875]], [[0.875, 0.625, -1.5, 1.375], [-0.5, -0.875, -0.625, -1.25], [1.0, -1.875, 0.625, 0.625]]]> : tensor<2x3x4xf32>
  %r = dtg.einsum %a0 {equation = "abc->ca"} : tensor<2x3x4xf32> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Tests that dtg.einsum broadcasts a letter of size 1 against the other
// operands.
// CHECK-LABEL: func.func @einsum_broadcast_one
// CHECK: %[[R:.+]] = dtg.constant dense<[7.812500e-02, 8.593750e-01]> : tensor<2xf32>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_broadcast_one() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[1.75, -0.625, 1.5], [1.0, 0.375, 0.875]]> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[0.875, 1.125, -0.5]]> : tensor<1x3xf32>
  %r = dtg.einsum %a0, %a1 {equation = "ij,ij->i"} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that dtg.einsum computes an integer dot product to a scalar.
// CHECK-LABEL: func.func @einsum_i64_dot
// CHECK: %[[R:.+]] = dtg.constant dense<-27> : tensor<i64>
// CHECK-NOT: dtg.einsum
// CHECK: return %[[R]]
func.func @einsum_i64_dot() -> tensor<i64> {
  %a0 = dtg.constant dense<[-1, 2, 0, 5]> : tensor<4xi64>
  %a1 = dtg.constant dense<[4, 1, -3, -5]> : tensor<4xi64>
  %r = dtg.einsum %a0, %a1 {equation = "i,i->"} : tensor<4xi64>, tensor<4xi64> -> tensor<i64>
  return %r : tensor<i64>
}

// -----

// Tests that dtg.conv pads a 2-D input and adds the bias.
// CHECK-LABEL: func.func @conv_2d_pad_bias
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-3.593750e-01, -3.078125, 2.515625, 4.843750e-01], [1.406250e-01, 3.781250e+00, 2.375000e+00, 1.656250e+00], [2.140625, 3.906250e-01, -8.375000e+00, 1.296875], [-8.437500e-01, 4.328125, 4.000000e+00, -3.937500e+00]], {{\[\[}}-1.437500e+00, 1.484375, 4.843750e-01, -3.296875], [-2.656250e-01, 4.687500e-02, 5.265625, -8.390625], [-1.281250e+00, -3.390625, 3.390625, -4.843750e-01], [-2.343750e-01, -1.062500e+00, -1.171875, 6.562500e-01]]]]> : tensor<1x2x4x4xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_2d_pad_bias() -> tensor<1x2x4x4xf32> {
  %a0 = dtg.constant dense<[[[[-1.375, -1.625, -0.375, -2.0], [0.625, 0.875, 1.875, -1.875], [-0.375, -1.0, 0.5, 1.375], [-0.25, -0.375, -0.875, -0.75]]]]> : tensor<1x1x4x4xf32>
  %a1 = dtg.constant dense<[[[[-2.0, -1.75, 1.875], [0.0, 0.875, -1.25], [0.25, -0.875, -0.875]]], [[[-0.375, 0.625, -0.625], [-1.875, 1.875, -0.25], [0.0, 0.0, 1.125]]]]> : tensor<2x1x3x3xf32>
  %a2 = dtg.constant dense<[0.125, -0.25]> : tensor<2xf32>
  %r = dtg.conv %a0, %a1, %a2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Tests that dtg.conv applies strides, dilations and asymmetric pads (begins
// first, then ends).
// CHECK-LABEL: func.func @conv_2d_stride_dilation_asym_pads
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}3.906250e+00, -7.656250e-01, 1.468750e+00, 4.062500e-01], [2.500000e-01, 7.812500e-02, 3.906250e+00, -1.546875], [-2.531250e+00, -3.046875, -1.640625, 2.312500e+00], [-5.625000e-01, -4.890625, 1.125000e+00, 9.375000e-02]], {{\[\[}}-9.218750e-01, -1.093750e+00, 4.375000e+00, 2.187500e-01], [1.000000e+00, -3.906250e-01, -3.375000e+00, 4.562500e+00], [-2.187500e+00, -4.609375, 5.937500e-01, -2.375000e+00], [1.562500e-01, -6.718750e-01, 2.812500e-01, 7.812500e-01]]]]> : tensor<1x2x4x4xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_2d_stride_dilation_asym_pads() -> tensor<1x2x4x4xf32> {
  %a0 = dtg.constant dense<[[[[-1.875, 0.625, 0.375, 1.875, 0.25], [-2.0, -0.375, 1.25, -0.75, 1.75], [0.5, 1.25, 1.375, 1.5, -1.0], [0.875, -1.875, -1.5, 1.125, -0.5], [1.75, 0.375, 0.75, -0.75, 1.5], [-1.125, 0.125, -0.125, -2.0, 0.25]], [[-1.125, -0.5, 0.0, -2.0, -0.5], [-0.875, -0.25, 1.0, -1.75, 0.0], [1.875, -0.625, -1.375, 0.625, 0.0], [-0.875, -0.625, -0.75, -2.0, -1.0], [-1.5, -1.375, 1.5, -0.625, 1.625], [0.125, 1.625, -0.25, -0.75, 0.5]]]]> : tensor<1x2x6x5xf32>
  %a1 = dtg.constant dense<[[[[0.0, 1.875], [-1.125, 1.5]], [[-0.125, 1.25], [0.25, 0.0]]], [[[-0.25, -0.125], [1.75, 1.75]], [[-0.375, 0.375], [-0.875, -0.375]]]]> : tensor<2x2x2x2xf32>
  %r = dtg.conv %a0, %a1 {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 1>} : tensor<1x2x6x5xf32>, tensor<2x2x2x2xf32> -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Tests that dtg.conv with two groups convolves each half of the channels with
// its half of the filters.
// CHECK-LABEL: func.func @conv_2d_groups
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}2.656250e-01, -5.046875], [-3.765625, -1.875000e-01]], {{\[\[}}-7.281250e+00, -4.125000e+00], [-3.984375, -3.578125]], {{\[\[}}-1.953125, 2.703125], [-4.296875, 9.375000e-01]], {{\[\[}}-3.500000e+00, 5.000000e-01], [-4.375000e+00, 2.234375]]], {{\[\[\[}}-4.812500e+00, -2.453125], [-5.000000e-01, -5.625000e-01]], {{\[\[}}-6.156250e+00, -1.984375], [-7.031250e-01, 2.421875]], {{\[\[}}9.734375, 2.312500e+00], [-6.250000e+00, 7.656250e-01]], {{\[\[}}-1.250000e+00, -5.968750e+00], [-1.500000e+00, -5.625000e-01]]]]> : tensor<2x4x2x2xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_2d_groups() -> tensor<2x4x2x2xf32> {
  %a0 = dtg.constant dense<[[[[1.0, -1.625, -1.125], [0.125, -0.75, -2.0], [-1.875, -0.625, 1.375]], [[-1.5, -1.25, 1.875], [1.625, 1.375, 0.125], [1.625, 1.75, -0.25]], [[-0.5, -0.625, -0.5], [0.0, 0.125, 1.25], [1.25, -2.0, 1.5]], [[-0.625, -1.875, -1.0], [0.5, 1.75, -1.875], [-0.125, 0.75, 1.0]]], [[[0.625, -1.75, -0.5], [-1.5, -0.5, 0.875], [0.5, -0.625, 0.125]], [[0.25, 1.0, 0.625], [0.25, 1.125, 0.75], [0.25, -1.375, -1.125]], [[0.875, -1.375, -1.375], [-1.25, 1.875, 1.625], [0.0, -0.75, 0.75]], [[-0.25, -1.5, -0.25], [-1.25, -0.375, -1.75], [-0.5, 0.75, 1.0]]]]> : tensor<2x4x3x3xf32>
  %a1 = dtg.constant dense<[[[[1.625, 1.375], [1.375, 0.875]], [[0.0, -0.25], [1.5, -1.375]]], [[[-1.0, 1.625], [-0.875, -0.5]], [[0.875, -1.125], [-0.25, -1.25]]], [[[1.75, -1.75], [-1.375, 0.75]], [[0.125, -0.25], [-0.875, -1.625]]], [[[-0.125, 0.5], [-2.0, -1.625]], [[0.625, -1.25], [0.5, -2.0]]]]> : tensor<4x2x2x2xf32>
  %a2 = dtg.constant dense<[0.5, -1.875, 0.625, -1.75]> : tensor<4xf32>
  %r = dtg.conv %a0, %a1, %a2 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<2x4x3x3xf32>, tensor<4x2x2x2xf32>, tensor<4xf32> -> tensor<2x4x2x2xf32>
  return %r : tensor<2x4x2x2xf32>
}

// -----

// Tests that dtg.conv with group = channels is depthwise.
// CHECK-LABEL: func.func @conv_2d_depthwise
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-2.734375, -2.468750e+00, -1.625000e+00], [-2.843750e+00, -1.484375, -3.093750e+00], [-8.593750e-01, 1.375000e+00, 6.875000e-01]], {{\[\[}}-1.906250e+00, -3.437500e-01, 6.250000e-02], [-3.781250e+00, -3.328125, 2.109375], [-1.500000e+00, -9.375000e-02, -7.812500e-02]], {{\[\[}}4.093750e+00, -9.843750e-01, 6.875000e-01], [1.156250e+00, -7.812500e-02, -1.781250e+00], [6.250000e-02, 2.500000e-01, -8.750000e-01]]]]> : tensor<1x3x3x3xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_2d_depthwise() -> tensor<1x3x3x3xf32> {
  %a0 = dtg.constant dense<[[[[-0.625, -0.125, -0.625], [-1.5, -1.0, -0.375], [-0.625, 1.625, -1.125]], [[0.625, -1.125, 0.625], [1.75, 0.375, -1.125], [0.75, -0.375, 0.25]], [[-1.625, 1.75, 0.125], [-1.875, -1.0, 0.5], [-0.125, -0.75, 0.25]]]]> : tensor<1x3x3x3xf32>
  %a1 = dtg.constant dense<[[[[1.375, 1.375], [0.125, 1.25]]], [[[-1.125, -2.0], [-1.0, -0.375]]], [[[1.0, -0.5], [0.125, -1.75]]]]> : tensor<3x1x2x2xf32>
  %r = dtg.conv %a0, %a1 {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 0, 1, 1, 0>, strides = array<i64: 1, 1>} : tensor<1x3x3x3xf32>, tensor<3x1x2x2xf32> -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}

// -----

// Tests that dtg.conv works on 1-D inputs with strides and bias.
// CHECK-LABEL: func.func @conv_1d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-2.375000e+00, -3.000000e+00, 1.531250e+00], [5.484375, 4.406250e+00, 1.421875], [-3.484375, -3.250000e+00, 2.796875]]]> : tensor<1x3x3xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_1d() -> tensor<1x3x3xf32> {
  %a0 = dtg.constant dense<[[[-1.625, 1.5, -2.0, 1.25, 0.125], [-0.625, -1.875, -1.375, -1.375, 0.75]]]> : tensor<1x2x5xf32>
  %a1 = dtg.constant dense<[[[0.0, -0.875], [1.375, 0.375]], [[-0.625, 0.25], [0.5, -1.75]], [[-0.125, -1.0], [1.25, 1.75]]]> : tensor<3x2x2xf32>
  %a2 = dtg.constant dense<[0.5, 1.125, 1.875]> : tensor<3xf32>
  %r = dtg.conv %a0, %a1, %a2 {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 1>, strides = array<i64: 2>} : tensor<1x2x5xf32>, tensor<3x2x2xf32>, tensor<3xf32> -> tensor<1x3x3xf32>
  return %r : tensor<1x3x3xf32>
}

// -----

// Tests that dtg.conv works on 3-D inputs.
// CHECK-LABEL: func.func @conv_3d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[\[}}-5.656250e+00, -1.484375, -1.890625], [4.531250e+00, -6.406250e-01, -2.609375]], {{\[\[}}-3.468750e+00, -2.656250e+00, 1.312500e+00], [2.765625, 1.718750e+00, 2.015625]]]]]> : tensor<1x1x2x2x3xf32>
// CHECK-NOT: dtg.conv
// CHECK: return %[[R]]
func.func @conv_3d() -> tensor<1x1x2x2x3xf32> {
  %a0 = dtg.constant dense<[[[[[0.0, -0.75, -2.0], [1.75, 1.25, -0.375], [-1.75, 0.75, 1.5]], [[-1.625, -0.875, 1.5], [0.625, -0.125, 0.5], [-0.375, -1.25, -0.875]], [[-0.875, -0.875, -1.5], [-1.0, -0.5, -1.75], [-1.5, 0.75, -1.375]]]]]> : tensor<1x1x3x3x3xf32>
  %a1 = dtg.constant dense<[[[[[1.375, -0.125], [-1.625, -1.375]], [[0.25, 0.75], [-0.25, -0.25]]]]]> : tensor<1x1x2x2x2xf32>
  %r = dtg.conv %a0, %a1 {dilations = array<i64: 1, 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0, 0, 1>, strides = array<i64: 1, 1, 1>} : tensor<1x1x3x3x3xf32>, tensor<1x1x2x2x2xf32> -> tensor<1x1x2x2x3xf32>
  return %r : tensor<1x1x2x2x3xf32>
}

// -----

// Tests that dtg.max_pool ignores padding.
// CHECK-LABEL: func.func @max_pool_pads_strides
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-1.500000e+00, 3.750000e-01, -5.000000e-01], [-1.375000e+00, 1.125000e+00, 1.250000e+00], [6.250000e-01, 0.000000e+00, -8.750000e-01]], {{\[\[}}3.750000e-01, 1.875000e+00, 2.500000e-01], [-7.500000e-01, -7.500000e-01, 1.250000e+00], [0.000000e+00, -1.125000e+00, 1.000000e+00]]]]> : tensor<1x2x3x3xf32>
// CHECK-NOT: dtg.max_pool
// CHECK: return %[[R]]
func.func @max_pool_pads_strides() -> tensor<1x2x3x3xf32> {
  %a0 = dtg.constant dense<[[[[-1.5, 0.375, 0.25, -0.5], [-1.375, 1.125, -0.25, 0.875], [-1.375, 1.0, -0.625, 1.25], [0.625, -1.75, 0.0, -0.875]], [[0.375, -1.75, 1.875, 0.25], [-0.75, -1.5, -1.625, -1.5], [-1.0, -1.125, -0.75, 1.25], [0.0, -1.75, -1.125, 1.0]]]]> : tensor<1x2x4x4xf32>
  %r = dtg.max_pool %a0 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}

// -----

// Tests that dtg.max_pool applies dilations.
// CHECK-LABEL: func.func @max_pool_dilations
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}1.875000e+00, 1.125000e+00, 1.875000e+00], [8.750000e-01, 1.750000e+00, 1.500000e+00], [1.875000e+00, 1.125000e+00, 1.875000e+00]]]]> : tensor<1x1x3x3xf32>
// CHECK-NOT: dtg.max_pool
// CHECK: return %[[R]]
func.func @max_pool_dilations() -> tensor<1x1x3x3xf32> {
  %a0 = dtg.constant dense<[[[[-0.75, -1.0, 1.625, -1.5, -2.0], [0.5, 0.125, 0.875, 0.5, 1.5], [1.625, 1.125, 1.875, 0.0, 0.125], [0.0, -0.75, 0.75, 1.75, 0.25], [-2.0, -1.75, 0.5, -0.125, 0.5]]]]> : tensor<1x1x5x5xf32>
  %r = dtg.max_pool %a0 {ceil_mode = false, dilations = array<i64: 2, 2>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  return %r : tensor<1x1x3x3xf32>
}

// -----

// Tests that dtg.max_pool in ceil_mode adds a clipped last window.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}8.750000e-01, 1.500000e+00, -8.750000e-01], [1.500000e+00, 1.500000e+00, 1.000000e+00], [1.000000e+00, 6.250000e-01, 7.500000e-01]]]]> : tensor<1x1x3x3xf32>
// CHECK-NOT: dtg.max_pool
// CHECK: return %[[R]]
func.func @max_pool_ceil() -> tensor<1x1x3x3xf32> {
  %a0 = dtg.constant dense<[[[[0.125, -0.75, -2.0, -2.0, -1.75], [-1.625, 0.875, 0.75, 1.5, -0.875], [-1.625, 0.625, -1.25, -0.375, 1.0], [1.5, 0.75, 0.875, 1.5, 0.375], [-0.625, 1.0, -0.625, 0.625, 0.75]]]]> : tensor<1x1x5x5xf32>
  %r = dtg.max_pool %a0 {ceil_mode = true, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  return %r : tensor<1x1x3x3xf32>
}

// -----

// Tests that dtg.max_pool in ceil_mode with pads drops a window that would
// start in the trailing padding (3-D).
// CHECK-LABEL: func.func @max_pool_ceil_pads_3d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[\[}}1.500000e+00, -1.500000e+00], [1.625000e+00, 1.250000e+00], [-1.000000e+00, 1.250000e+00]], {{\[\[}}1.250000e-01, 1.500000e+00], [7.500000e-01, 1.875000e+00], [1.375000e+00, 1.875000e+00]], {{\[\[}}1.500000e+00, -6.250000e-01], [1.250000e+00, 1.125000e+00], [5.000000e-01, 1.125000e+00]]]]]> : tensor<1x1x3x3x2xf32>
// CHECK-NOT: dtg.max_pool
// CHECK: return %[[R]]
func.func @max_pool_ceil_pads_3d() -> tensor<1x1x3x3x2xf32> {
  %a0 = dtg.constant dense<[[[[[1.5, -1.5, -1.75], [1.625, -1.125, -0.875], [0.75, -0.75, 1.25], [-1.0, -1.25, 1.25]], [[0.125, 0.0, -1.125], [0.75, 1.0, 0.625], [-1.5, 1.75, -0.25], [-1.625, 0.0, 0.875]], [[-0.25, 1.5, -0.5], [-1.5, 1.875, 0.0], [-1.0, 1.25, 0.625], [1.375, 1.875, -2.0]], [[1.5, -1.125, -0.625], [1.25, -1.375, -0.5], [-1.875, 0.625, 1.125], [0.5, 0.125, 1.125]]]]]> : tensor<1x1x4x4x3xf32>
  %r = dtg.max_pool %a0 {ceil_mode = true, dilations = array<i64: 1, 1, 1>, kernel = array<i64: 2, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : tensor<1x1x4x4x3xf32> -> tensor<1x1x3x3x2xf32>
  return %r : tensor<1x1x3x3x2xf32>
}

// -----

// Tests that dtg.avg_pool without count_include_pad divides by the input
// elements of each window.
// CHECK-LABEL: func.func @avg_pool_exclude_pad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}3.125000e-02, 0.291666657, 5.625000e-01], [-0.020833334, 0.361111104, 0.854166686], [-5.312500e-01, 0.104166664, 8.125000e-01]]]]> : tensor<1x1x3x3xf32>
// CHECK-NOT: dtg.avg_pool
// CHECK: return %[[R]]
func.func @avg_pool_exclude_pad() -> tensor<1x1x3x3xf32> {
  %a0 = dtg.constant dense<[[[[0.75, 1.25, 0.625], [-1.25, -0.625, 1.0], [-1.375, 1.125, 1.75]]]]> : tensor<1x1x3x3xf32>
  %r = dtg.avg_pool %a0 {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x1x3x3xf32> -> tensor<1x1x3x3xf32>
  return %r : tensor<1x1x3x3xf32>
}

// -----

// Tests that dtg.avg_pool with count_include_pad divides by the window size.
// CHECK-LABEL: func.func @avg_pool_include_pad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}0.000000e+00, 0.166666672, 0.555555582], [-0.277777791, -0.152777776, 0.430555552], [-0.291666657, -2.500000e-01, 0.166666672]]]]> : tensor<1x1x3x3xf32>
// CHECK-NOT: dtg.avg_pool
// CHECK: return %[[R]]
func.func @avg_pool_include_pad() -> tensor<1x1x3x3xf32> {
  %a0 = dtg.constant dense<[[[[-1.5, 1.625, 0.75], [-2.0, 1.875, 0.75], [-1.75, -0.75, -0.375]]]]> : tensor<1x1x3x3xf32>
  %r = dtg.avg_pool %a0 {ceil_mode = false, count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x1x3x3xf32> -> tensor<1x1x3x3xf32>
  return %r : tensor<1x1x3x3xf32>
}

// -----

// Tests that dtg.avg_pool in ceil_mode with count_include_pad counts only the
// taps inside the padded input.
// CHECK-LABEL: func.func @avg_pool_ceil_include_pad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-0.458333343, -0.569444418, -0.333333343, -0.208333328], [-0.402777791, -0.319444448, -0.305555552, -0.0833333358], [0.208333328, 0.347222209, -1.250000e-01, -0.270833343], [0.416666657, 0.104166664, -0.708333313, -5.000000e-01]], {{\[\[}}-0.027777778, -0.0694444477, -3.750000e-01, -0.291666657], [0.194444448, 0.263888896, 0.263888896, -0.166666672], [3.750000e-01, 0.583333313, 0.513888896, 3.750000e-01], [0.145833328, 0.0416666679, 1.250000e-01, 2.812500e-01]]]]> : tensor<1x2x4x4xf32>
// CHECK-NOT: dtg.avg_pool
// CHECK: return %[[R]]
func.func @avg_pool_ceil_include_pad() -> tensor<1x2x4x4xf32> {
  %a0 = dtg.constant dense<[[[[-1.625, -1.875, -1.25, -1.125, 0.0, 0.0], [-1.5, 0.875, -2.0, 0.25, -0.875, -1.25], [0.125, -1.75, -0.25, -0.25, -1.75, 1.875], [-1.0, -0.375, 1.5, -0.875, 1.25, -1.125], [0.25, 0.5, 0.875, 0.875, 1.5, 1.5], [1.375, 1.125, -0.125, -0.375, -1.875, -2.0]], [[-1.875, 1.0, -1.125, 1.25, -1.5, -0.75], [-0.125, 0.75, -0.625, -1.875, 0.5, -1.0], [0.875, -0.25, 0.375, 1.625, 1.375, -1.625], [-0.25, 0.75, 0.5, 1.125, 0.625, 1.625], [0.875, 1.125, -0.25, 1.75, -0.75, -0.5], [1.125, -0.25, -0.375, 0.875, -1.25, 1.125]]]]> : tensor<1x2x6x6xf32>
  %r = dtg.avg_pool %a0 {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Tests that dtg.avg_pool in ceil_mode without count_include_pad divides by the
// input elements of the clipped window.
// CHECK-LABEL: func.func @avg_pool_ceil_exclude_pad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}7.187500e-01, 0.229166672, -6.250000e-02, -6.250000e-01], [0.458333343, 0.111111112, -0.152777776, -0.416666657], [6.250000e-01, 0.611111104, -0.0694444477, -8.750000e-01], [2.500000e-01, 0.791666686, 0.208333328, -1.500000e+00]]]]> : tensor<1x1x4x4xf32>
// CHECK-NOT: dtg.avg_pool
// CHECK: return %[[R]]
func.func @avg_pool_ceil_exclude_pad() -> tensor<1x1x4x4xf32> {
  %a0 = dtg.constant dense<[[[[1.0, 1.375, 1.0, 0.75, 1.375, -1.75], [0.25, 0.25, -0.625, -1.375, 0.125, 0.5], [0.125, -1.5, 1.125, 1.625, -0.625, -1.375], [1.75, 1.875, 1.25, -1.625, 1.75, -0.375], [-1.375, 1.0, -1.125, 1.75, -2.0, -0.75], [-0.5, 1.0, -0.125, 1.5, 0.625, -1.5]]]]> : tensor<1x1x6x6xf32>
  %r = dtg.avg_pool %a0 {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x1x6x6xf32> -> tensor<1x1x4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

// Tests that dtg.avg_pool applies dilations and asymmetric pads (1-D).
// CHECK-LABEL: func.func @avg_pool_1d_asym_dilated
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-1.875000e-01, 6.250000e-02, 8.750000e-01, 6.250000e-01], [-3.125000e-01, -1.250000e+00, -1.500000e+00, -5.625000e-01]]]> : tensor<1x2x4xf32>
// CHECK-NOT: dtg.avg_pool
// CHECK: return %[[R]]
func.func @avg_pool_1d_asym_dilated() -> tensor<1x2x4xf32> {
  %a0 = dtg.constant dense<[[[-0.5, -0.375, -2.0, 0.5, 0.875, 1.25, -2.0], [0.75, -0.625, -0.625, -1.875, -2.0, -1.125, -1.25]]]> : tensor<1x2x7xf32>
  %r = dtg.avg_pool %a0 {ceil_mode = false, count_include_pad = true, dilations = array<i64: 2>, kernel = array<i64: 2>, pads = array<i64: 1, 2>, strides = array<i64: 2>} : tensor<1x2x7xf32> -> tensor<1x2x4xf32>
  return %r : tensor<1x2x4xf32>
}

// -----

// Tests that dtg.batch_norm_inference normalizes each channel with the given
// statistics.
// CHECK-LABEL: func.func @batch_norm_inference
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}2.89061689, 4.31248474], [1.74999809, 3.34374022], [1.50233495, 0.412256181]], {{\[\[}}1.68749785, 3.76561236], [3.99998689, 3.62498879], [0.831517279, 1.20885217]]]> : tensor<2x3x2xf32>
// CHECK-NOT: dtg.batch_norm_inference
// CHECK: return %[[R]]
func.func @batch_norm_inference() -> tensor<2x3x2xf32> {
  %a0 = dtg.constant dense<[[[0.0, -1.625], [-1.25, 0.875], [1.75, -1.5]], [[1.375, -1.0], [1.75, 1.25], [-0.25, 0.875]]]> : tensor<2x3x2xf32>
  %a1 = dtg.constant dense<[-0.875, 0.75, 0.375]> : tensor<3xf32>
  %a2 = dtg.constant dense<[1.25, 1.375, 1.125]> : tensor<3xf32>
  %a3 = dtg.constant dense<[1.875, -1.75, 0.625]> : tensor<3xf32>
  %a4 = dtg.constant dense<[1.0, 1.0, 1.25]> : tensor<3xf32>
  %r = dtg.batch_norm_inference %a0, %a1, %a2, %a3, %a4 {epsilon = 1.000000e-05 : f64} : tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x2xf32>
  return %r : tensor<2x3x2xf32>
}

// -----

// Tests that dtg.batch_norm_training normalizes with the batch statistics and
// updates the running mean and the running (Bessel-corrected) variance as
// PyTorch does.
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}6.238840e-01, -0.513871491], [-0.229432628, 0.268335432]], {{\[\[}}-2.13564348, -2.52065039], [-0.595615327, -2.13564348]], {{\[\[}}-0.852464616, -1.45795226], [-1.25612307, -2.26526904]]], {{\[\[\[}}-0.0161034651, 0.979432642], [0.339445144, 1.5483104]], {{\[\[}}-1.36562943, 2.48444104], [-4.06067848, 1.32941985]], {{\[\[}}-1.12157023, -1.18884659], [-2.33254552, -1.52522862]]]]> : tensor<2x3x2x2xf32>
// CHECK: %[[MEAN:.+]] = dtg.constant dense<[1.431250e+00, -0.470312506, -1.3828125]> : tensor<3xf32>
// CHECK: %[[VAR:.+]] = dtg.constant dense<[2.38794637, 1.73568642, 2.12363291]> : tensor<3xf32>
// CHECK-NOT: dtg.batch_norm_training
// CHECK: return %[[R]], %[[MEAN]], %[[VAR]]
func.func @batch_norm_training() -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a0 = dtg.constant dense<[[[[0.125, -1.875], [-1.375, -0.5]], [[0.125, 0.25], [-0.375, 0.125]], [[0.875, -0.25], [0.125, -1.75]]], [[[-1.0, 0.75], [-0.375, 1.75]], [[-0.125, -1.375], [0.75, -1.0]], [[0.375, 0.25], [-1.875, -0.375]]]]> : tensor<2x3x2x2xf32>
  %a1 = dtg.constant dense<[0.625, -2.0, 0.5]> : tensor<3xf32>
  %a2 = dtg.constant dense<[0.375, -1.125, -1.5]> : tensor<3xf32>
  %a3 = dtg.constant dense<[1.625, -0.5, -1.5]> : tensor<3xf32>
  %a4 = dtg.constant dense<[2.5, 1.875, 2.25]> : tensor<3xf32>
  %r, %m, %v = dtg.batch_norm_training %a0, %a1, %a2, %a3, %a4 {epsilon = 1.000000e-05 : f64, momentum = 9.000000e-01 : f64} : tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
  return %r, %m, %v : tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that dtg.layer_norm normalizes the last axis with scale and bias.
// CHECK-LABEL: func.func @layer_norm_last_axis
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-1.37242711, -1.43065429, -1.500000e+00, -3.97947812], [-3.65913939, -0.912873387, -1.500000e+00, -3.02275968], [-3.15310717, -0.790926814, -1.500000e+00, -3.35355115]], {{\[\[}}-1.00043809, -1.05151355, -1.500000e+00, -2.98457265], [-3.01883483, -5.328770e-01, -1.500000e+00, -1.02495146], [-7.462120e-01, -1.49896026, -1.500000e+00, -3.4032979]]]> : tensor<2x3x4xf32>
// CHECK-NOT: dtg.layer_norm
// CHECK: return %[[R]]
func.func @layer_norm_last_axis() -> tensor<2x3x4xf32> {
  %a0 = dtg.constant dense<[[[-0.125, 0.625, 0.75, -0.875], [1.75, 0.75, 0.875, 0.625], [0.875, -0.625, 0.5, -0.75]], [[-1.0, -0.625, 0.875, -1.125], [1.0, -1.625, -0.125, 0.375], [-1.125, 0.0, 0.0, -1.25]]]> : tensor<2x3x4xf32>
  %a1 = dtg.constant dense<[-1.125, -0.375, 0.0, 1.5]> : tensor<4xf32>
  %a2 = dtg.constant dense<[-1.75, -1.125, -1.5, -1.75]> : tensor<4xf32>
  %r = dtg.layer_norm %a0, %a1, %a2 {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// Tests that dtg.layer_norm normalizes the trailing two axes with a broadcast
// scale and no bias.
// CHECK-LABEL: func.func @layer_norm_axis1_broadcast_scale
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-0.420914531, 1.90157843, 0.558234155, -2.62698436], [-0.241801962, 2.67773271, -0.492559552, 2.72251105], [0.223890707, 0.349269509, -1.14930558, -2.24487734]], {{\[\[}}0.0725961551, 2.39083338, -0.692083359, 0.619487166], [-0.45009616, 0.880833327, -1.17121792, 1.54871798], [-0.45009616, 3.14583325, -0.692083359, -1.93589747]]]> : tensor<2x3x4xf32>
// CHECK-NOT: dtg.layer_norm
// CHECK: return %[[R]]
func.func @layer_norm_axis1_broadcast_scale() -> tensor<2x3x4xf32> {
  %a0 = dtg.constant dense<[[[1.625, -1.375, -0.375, 1.875], [1.0, -2.0, 0.625, -1.625], [-0.625, -0.125, 1.25, 1.625]], [[-0.125, -1.5, 0.625, -0.25], [1.375, -0.5, 1.0, -0.75], [1.375, -2.0, 0.625, 1.125]]]> : tensor<2x3x4xf32>
  %a1 = dtg.constant dense<[[-0.375, -1.625, -1.375, -2.0]]> : tensor<1x4xf32>
  %r = dtg.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.000000e-03 : f64} : tensor<2x3x4xf32>, tensor<1x4xf32> -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// Tests that dtg.softmax normalizes along the last axis.
// CHECK-LABEL: func.func @softmax_last_axis
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.299759239, 0.494219452, 0.206021309], [0.106506981, 0.786986052, 0.106506981]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.softmax
// CHECK: return %[[R]]
func.func @softmax_last_axis() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<[[-0.375, 0.125, -0.75], [-1.125, 0.875, -1.125]]> : tensor<2x3xf32>
  %r = dtg.softmax %a0 {axis = 1 : i64} : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that dtg.softmax normalizes along a middle axis.
// CHECK-LABEL: func.func @softmax_middle_axis
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}0.0441107117, 3.044040e-01], [0.53737849, 0.126894459], [0.418510795, 0.568701565]], {{\[\[}}0.0348935574, 0.0716265962], [0.899916708, 0.0557828471], [0.065189749, 0.872590541]]]> : tensor<2x3x2xf32>
// CHECK-NOT: dtg.softmax
// CHECK: return %[[R]]
func.func @softmax_middle_axis() -> tensor<2x3x2xf32> {
  %a0 = dtg.constant dense<[[[-1.75, 0.375], [0.75, -0.5], [0.5, 1.0]], [[-1.75, -1.125], [1.5, -1.375], [-1.125, 1.375]]]> : tensor<2x3x2xf32>
  %r = dtg.softmax %a0 {axis = 1 : i64} : tensor<2x3x2xf32>
  return %r : tensor<2x3x2xf32>
}

// -----

// Tests that dtg.softmax is stable on large inputs.
// CHECK-LABEL: func.func @softmax_large
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.0900305733, 0.244728476, 0.665240943], [0.665240943, 0.244728476, 0.0900305733]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.softmax
// CHECK: return %[[R]]
func.func @softmax_large() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<[[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]]> : tensor<2x3xf32>
  %r = dtg.softmax %a0 {axis = 1 : i64} : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that dtg.softmax rounds its result to f16.
// CHECK-LABEL: func.func @softmax_f16
// CHECK: %[[R:.+]] = dtg.constant dense<[6.337890e-01, 2.993160e-01, 5.203250e-02, 1.490020e-02]> : tensor<4xf16>
// CHECK-NOT: dtg.softmax
// CHECK: return %[[R]]
func.func @softmax_f16() -> tensor<4xf16> {
  %a0 = dtg.constant dense<[3.75, 3.0, 1.25, 0.0]> : tensor<4xf16>
  %r = dtg.softmax %a0 {axis = 0 : i64} : tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// Tests that dtg.log_softmax works along the first axis.
// CHECK-LABEL: func.func @log_softmax_axis0
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-0.857162714, -1.93682337], [-3.48216271, -1.56182337], [-0.607162714, -0.436823338]]> : tensor<3x2xf32>
// CHECK-NOT: dtg.log_softmax
// CHECK: return %[[R]]
func.func @log_softmax_axis0() -> tensor<3x2xf32> {
  %a0 = dtg.constant dense<[[1.25, 0.375], [-1.375, 0.75], [1.5, 1.875]]> : tensor<3x2xf32>
  %r = dtg.log_softmax %a0 {axis = 0 : i64} : tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that dtg.log_softmax is stable on large inputs.
// CHECK-LABEL: func.func @log_softmax_large
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-2.40760589, -1.40760601, -0.407605976], [-2.000000e+03, -1.000000e+03, 0.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.log_softmax
// CHECK: return %[[R]]
func.func @log_softmax_large() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<[[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]]> : tensor<2x3xf32>
  %r = dtg.log_softmax %a0 {axis = 1 : i64} : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
