// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter kernels of the NN family's gradient primitives, run through
// constant folding: each function computes one op on constants, which folds
// to the result. The expected values are PyTorch's autograd gradients
// (float64, rounded to f32).

// Tests that dtg.conv_input_grad matches PyTorch's conv2d input gradient with
// groups, strides and asymmetric pads.
// CHECK-LABEL: func.func @conv_grad_groups_strides_input
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}1.312500e+00, -9.062500e-01, -9.375000e-02, 2.781250e+00], [-2.953125, -8.281250e-01, -3.812500e+00, -1.750000e+00], [-1.218750e+00, -3.375000e+00, -8.437500e-01, 1.968750e+00], [4.343750e+00, 5.375000e+00, 3.281250e+00, 1.843750e+00], [6.250000e-01, 1.218750e+00, 3.031250e+00, 1.640625]], {{\[\[}}-6.250000e-01, 2.187500e+00, 1.906250e+00, -2.859375], [-1.484375, 2.031250e+00, -4.562500e+00, 5.500000e+00], [2.562500e+00, -1.343750e+00, -3.812500e+00, -1.375000e+00], [-1.093750e-01, -1.562500e+00, 5.468750e-01, -3.390625], [-5.937500e-01, 1.171875, 2.312500e+00, -2.687500e+00]]]]> : tensor<1x2x5x4xf32>
// CHECK-NOT: dtg.conv_input_grad
// CHECK: return %[[R]]
func.func @conv_grad_groups_strides_input() -> tensor<1x2x5x4xf32> {
  %a0 = dtg.constant dense<[[[[0.25, 1.375, 1.25], [-1.125, -1.75, -1.75], [1.0, 0.625, 0.125]], [[2.0, -0.125, -1.75], [0.375, -2.0, -1.5], [-1.25, -1.75, -0.5]], [[1.25, 0.25, 0.0], [-0.875, -1.75, 0.625], [0.5, 0.875, -1.0]], [[1.0, 1.0, 1.625], [1.0, -1.25, 2.0], [0.125, 1.375, -0.125]]]]> : tensor<1x4x3x3xf32>
  %a1 = dtg.constant dense<[[[[2.0, 1.0, 0.75], [1.25, -0.25, 0.625]]], [[[-1.875, 0.125, -0.75], [0.5, -1.25, -0.375]]], [[[0.125, 0.25, -1.125], [-1.5, 1.75, 1.75]]], [[[-1.375, 0.75, -1.5], [1.25, -0.875, -1.875]]]]> : tensor<4x1x2x3xf32>
  %r = dtg.conv_input_grad %a0, %a1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 1>} : tensor<1x4x3x3xf32>, tensor<4x1x2x3xf32> -> tensor<1x2x5x4xf32>
  return %r : tensor<1x2x5x4xf32>
}

// -----

// Tests that dtg.conv_weight_grad matches PyTorch's conv2d weight gradient with
// groups, strides and asymmetric pads.
// CHECK-LABEL: func.func @conv_grad_groups_strides_weight
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}2.671875, -1.953125, -2.765625], [-2.656250e+00, -5.453125, -4.375000e+00]]], {{\[\[\[}}1.062500e+00, -2.281250e+00, 2.500000e+00], [-3.750000e-01, -5.984375, 1.875000e+00]]], {{\[\[\[}}-6.046875, -1.062500e+00, -2.562500e+00], [-2.812500e-01, -1.671875, 3.906250e-01]]], {{\[\[\[}}1.421875, 4.031250e+00, -3.125000e-01], [1.921875, -5.359375, 2.453125]]]]> : tensor<4x1x2x3xf32>
// CHECK-NOT: dtg.conv_weight_grad
// CHECK: return %[[R]]
func.func @conv_grad_groups_strides_weight() -> tensor<4x1x2x3xf32> {
  %a0 = dtg.constant dense<[[[[0.25, 1.375, 1.25], [-1.125, -1.75, -1.75], [1.0, 0.625, 0.125]], [[2.0, -0.125, -1.75], [0.375, -2.0, -1.5], [-1.25, -1.75, -0.5]], [[1.25, 0.25, 0.0], [-0.875, -1.75, 0.625], [0.5, 0.875, -1.0]], [[1.0, 1.0, 1.625], [1.0, -1.25, 2.0], [0.125, 1.375, -0.125]]]]> : tensor<1x4x3x3xf32>
  %a1 = dtg.constant dense<[[[[-0.125, -1.0, 0.875, 1.75], [-1.5, -2.0, 1.75, 0.0], [-0.25, -0.5, 1.75, 1.75], [1.125, -0.875, -0.25, -0.875], [1.0, -2.0, -1.5, -0.75]], [[-1.75, 0.375, -1.875, 0.125], [1.75, 1.0, 1.375, 1.125], [1.5, -1.0, 0.875, -1.25], [-1.75, -1.0, 1.875, -0.375], [0.0, 1.375, 0.375, 1.25]]]]> : tensor<1x2x5x4xf32>
  %r = dtg.conv_weight_grad %a0, %a1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 1>} : tensor<1x4x3x3xf32>, tensor<1x2x5x4xf32> -> tensor<4x1x2x3xf32>
  return %r : tensor<4x1x2x3xf32>
}

// -----

// Tests that dtg.conv_input_grad matches PyTorch's conv1d input gradient with a
// dilation and a stride that leaves the last input element unread.
// CHECK-LABEL: func.func @conv_grad_1d_dilated_input
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}9.375000e-01, 0.000000e+00, -9.375000e-01, 0.000000e+00, 9.375000e-02, 0.000000e+00, -7.656250e-01], [-1.609375, 0.000000e+00, 6.562500e-01, 0.000000e+00, 5.468750e-01, 0.000000e+00, 2.187500e+00]], {{\[\[}}-1.859375, 0.000000e+00, -1.765625, 0.000000e+00, 2.000000e+00, 0.000000e+00, -8.437500e-01], [4.500000e+00, 0.000000e+00, 2.984375, 0.000000e+00, -1.890625, 0.000000e+00, 7.656250e-01]]]> : tensor<2x2x7xf32>
// CHECK-NOT: dtg.conv_input_grad
// CHECK: return %[[R]]
func.func @conv_grad_1d_dilated_input() -> tensor<2x2x7xf32> {
  %a0 = dtg.constant dense<[[[0.125, -0.125, 0.5], [-0.625, 1.375, -1.25], [-1.25, 0.5, 0.625]], [[-0.25, 1.5, -0.75], [-1.375, 0.625, -0.375], [1.5, 0.125, -0.25]]]> : tensor<2x3x3xf32>
  %a1 = dtg.constant dense<[[[-0.625, 0.5], [0.875, 0.0]], [[0.375, 1.0], [-1.25, -1.875]], [[-1.0, 0.375], [2.0, -0.25]]]> : tensor<3x2x2xf32>
  %r = dtg.conv_input_grad %a0, %a1 {dilations = array<i64: 2>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 2>} : tensor<2x3x3xf32>, tensor<3x2x2xf32> -> tensor<2x2x7xf32>
  return %r : tensor<2x2x7xf32>
}

// -----

// Tests that dtg.conv_weight_grad matches PyTorch's conv1d weight gradient with a
// dilation and a stride that leaves the last input element unread.
// CHECK-LABEL: func.func @conv_grad_1d_dilated_weight
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}1.765625, -8.906250e-01], [9.687500e-01, 8.281250e-01]], {{\[\[}}-1.265625, -1.343750e+00], [2.718750e+00, -7.140625]], {{\[\[}}1.531250e+00, 1.515625], [2.500000e-01, 1.234375]]]> : tensor<3x2x2xf32>
// CHECK-NOT: dtg.conv_weight_grad
// CHECK: return %[[R]]
func.func @conv_grad_1d_dilated_weight() -> tensor<3x2x2xf32> {
  %a0 = dtg.constant dense<[[[0.125, -0.125, 0.5], [-0.625, 1.375, -1.25], [-1.25, 0.5, 0.625]], [[-0.25, 1.5, -0.75], [-1.375, 0.625, -0.375], [1.5, 0.125, -0.25]]]> : tensor<2x3x3xf32>
  %a1 = dtg.constant dense<[[[0.375, 1.375, 0.0, 0.375, 0.625, -2.0, 1.25], [0.5, -1.875, 1.0, -1.0, -1.625, 0.625, 1.625]], [[0.75, 0.75, 0.125, 1.875, -1.875, -1.625, -1.875], [0.875, 0.0, 1.625, 0.375, 0.5, -0.625, 0.875]]]> : tensor<2x2x7xf32>
  %r = dtg.conv_weight_grad %a0, %a1 {dilations = array<i64: 2>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 2>} : tensor<2x3x3xf32>, tensor<2x2x7xf32> -> tensor<3x2x2xf32>
  return %r : tensor<3x2x2xf32>
}

// -----

// Tests that dtg.max_pool_grad sends each window's gradient to the first
// maximum in the window, as PyTorch's CPU kernel does (overlapping windows,
// ties, padding that never receives gradient).
// CHECK-LABEL: func.func @max_pool_grad_ties
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-1.125000e+00, -3.000000e+00, 1.250000e+00, -6.250000e-01], [1.625000e+00, 0.000000e+00, 1.750000e+00, -2.500000e-01], [0.000000e+00, 1.500000e+00, 0.000000e+00, 0.000000e+00], [1.625000e+00, -5.000000e-01, -7.500000e-01, 0.000000e+00]]]]> : tensor<1x1x4x4xf32>
// CHECK-NOT: dtg.max_pool_grad
// CHECK: return %[[R]]
func.func @max_pool_grad_ties() -> tensor<1x1x4x4xf32> {
  %a0 = dtg.constant dense<[[[[-1.125, -1.75, -0.5, 0.5, -0.625], [0.125, 0.625, -1.375, 0.75, -1.0], [1.25, 0.25, 0.125, 1.625, 0.75], [1.25, 0.25, 1.25, 1.25, -1.75], [1.25, -0.875, -0.5, -2.0, 1.75]]]]> : tensor<1x1x5x5xf32>
  %a1 = dtg.constant dense<[[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 3.0, 1.0], [0.0, 3.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]]]> : tensor<1x1x4x4xf32>
  %r = dtg.max_pool_grad %a0, %a1 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x1x5x5xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

// Tests that dtg.max_pool_grad follows ceil_mode windows and dilations, ties
// included.
// CHECK-LABEL: func.func @max_pool_grad_ceil_dilation
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}2.000000e+00, 0.000000e+00, 1.375000e+00, 0.000000e+00, 0.000000e+00], [-2.500000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, -1.750000e+00]]]> : tensor<1x2x5xf32>
// CHECK-NOT: dtg.max_pool_grad
// CHECK: return %[[R]]
func.func @max_pool_grad_ceil_dilation() -> tensor<1x2x5xf32> {
  %a0 = dtg.constant dense<[[[2.0, 1.375], [-0.25, -1.75]]]> : tensor<1x2x2xf32>
  %a1 = dtg.constant dense<[[[-1.0, -1.0, -1.0, -1.0, -1.0], [2.0, 2.0, 0.5, 2.0, 2.0]]]> : tensor<1x2x5xf32>
  %r = dtg.max_pool_grad %a0, %a1 {ceil_mode = true, dilations = array<i64: 2>, kernel = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : tensor<1x2x2xf32>, tensor<1x2x5xf32> -> tensor<1x2x5xf32>
  return %r : tensor<1x2x5xf32>
}

// -----

// Tests that dtg.avg_pool_grad divides by the taps inside the padded input
// with count_include_pad, a ceil_mode window running past it, as PyTorch.
// CHECK-LABEL: func.func @avg_pool_grad_include_pad_ceil
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}-0.013888889, 0.000000e+00, 0.013888889, -0.0972222238, -0.111111112, -0.444444448], [0.194444448, 0.333333343, 0.138888896, -0.152777776, -0.291666657, -0.604166687], [0.208333328, 0.333333343, 1.250000e-01, -0.055555556, -0.180555552, -0.159722224], [0.194444448, 0.333333343, 0.138888896, 0.111111112, -0.027777778, -0.277777791], [-0.013888889, 0.000000e+00, 0.013888889, 0.166666672, 0.152777776, -0.118055552], [0.277777791, 3.750000e-01, 0.0972222238, -0.0833333358, -0.180555552, -0.857638895]]]]> : tensor<1x1x6x6xf32>
// CHECK-NOT: dtg.avg_pool_grad
// CHECK: return %[[R]]
func.func @avg_pool_grad_include_pad_ceil() -> tensor<1x1x6x6xf32> {
  %a0 = dtg.constant dense<[[[[-0.125, 0.125, -1.0, -2.0], [1.875, 1.125, -1.625, 0.125], [-0.125, 0.125, 1.375, -1.625], [1.75, 0.5, -2.0, -1.625]]]]> : tensor<1x1x4x4xf32>
  %r = dtg.avg_pool_grad %a0 {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x6x6xf32>
  return %r : tensor<1x1x6x6xf32>
}

// -----

// Tests that dtg.avg_pool_grad divides by the input elements of each window
// without count_include_pad, as PyTorch.
// CHECK-LABEL: func.func @avg_pool_grad_exclude_pad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}6.875000e-01, -2.500000e-01, -2.500000e-01, -4.687500e-01, -4.687500e-01], [0.854166686, -0.104166664, -0.104166664, -4.687500e-01, -4.687500e-01], [0.166666672, 0.145833328, 0.145833328, 0.000000e+00, 0.000000e+00], [-0.395833343, 0.552083313, 0.552083313, -2.812500e-01, -2.812500e-01], [-5.625000e-01, 4.062500e-01, 4.062500e-01, -2.812500e-01, -2.812500e-01]]], {{\[\[\[}}5.000000e-01, -3.125000e-01, -3.125000e-01, 1.250000e-01, 1.250000e-01], [0.0833333358, -0.645833313, -0.645833313, 0.416666657, 0.416666657], [-0.416666657, -0.333333343, -0.333333343, 0.291666657, 0.291666657], [-0.854166686, -0.364583343, -0.364583343, 0.541666687, 0.541666687], [-4.375000e-01, -3.125000e-02, -3.125000e-02, 2.500000e-01, 2.500000e-01]]]]> : tensor<2x1x5x5xf32>
// CHECK-NOT: dtg.avg_pool_grad
// CHECK: return %[[R]]
func.func @avg_pool_grad_exclude_pad() -> tensor<2x1x5x5xf32> {
  %a0 = dtg.constant dense<[[[[1.375, -1.0, -1.875], [0.5, 0.875, 0.0], [-1.125, 1.625, -1.125]]], [[[1.0, -1.25, 0.5], [-1.25, -2.0, 1.75], [-0.875, -0.125, 1.0]]]]> : tensor<2x1x3x3xf32>
  %r = dtg.avg_pool_grad %a0 {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x1x3x3xf32> -> tensor<2x1x5x5xf32>
  return %r : tensor<2x1x5x5xf32>
}
