// RUN: dtc-opt %s -split-input-file -verify-diagnostics

// Verifier errors of the NN family's gradient primitives (conv_input_grad,
// conv_weight_grad, max_pool_grad, avg_pool_grad).

// Tests that conv_input_grad refuses operands of different element types.
func.func @conv_input_grad_element_types(%g: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf64>) {
  // expected-error @+1 {{operands and result differ in element type}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf64> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses operands of different ranks.
func.func @conv_input_grad_ranks(%g: tensor<1x4x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input, weight and gradient need one rank of at least 3, got [1,3,8,8], [4,3,3,3] and [1,4,6]}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses input channels that are not group times
// the weight's.
func.func @conv_input_grad_channels(%g: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{channels do not fit: input [1,4,8,8], weight [4,3,3,3], group 1}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses a group that does not divide the
// filters.
func.func @conv_input_grad_group(%g: tensor<1x3x6x6xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{channels do not fit: input [1,4,8,8], weight [3,2,3,3], group 2}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : tensor<1x3x6x6xf32>, tensor<3x2x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses a gradient whose channels are not the
// filters.
func.func @conv_input_grad_filters(%g: tensor<1x5x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{gradient [1,5,6,6] does not match input [1,3,8,8] and weight [4,3,3,3]}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x5x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses window attributes of the wrong length.
func.func @conv_input_grad_attribute_length(%g: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window attributes need 2 entries (pads 4)}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses a zero stride.
func.func @conv_input_grad_zero_stride(%g: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{kernel, strides and dilations must be positive}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses negative pads.
func.func @conv_input_grad_negative_pads(%g: tensor<1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{pads must be non-negative}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, -1, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses a kernel larger than the padded input.
func.func @conv_input_grad_kernel_too_large(%g: tensor<1x4x1x1xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window is larger than the padded input in spatial dimension 0}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x1x1xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x2x8xf32>
  return
}

// -----

// Tests that conv_input_grad refuses a gradient whose spatial size is not
// what the forward convolution produces.
func.func @conv_input_grad_spatial(%g: tensor<1x4x5x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{gradient has 5 positions in spatial dimension 0, but the forward op of input [1,3,8,8] produces 6}}
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x5x6xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that conv_weight_grad refuses a weight whose kernel does not produce
// the gradient's spatial size.
func.func @conv_weight_grad_spatial(%g: tensor<1x4x6x6xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{gradient has 6 positions in spatial dimension 1, but the forward op of input [1,3,8,8] produces 7}}
  %0 = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x2xf32>
  return
}

// -----

// Tests that conv_weight_grad refuses a gradient of another batch size.
func.func @conv_weight_grad_batch(%g: tensor<2x4x6x6xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{gradient [2,4,6,6] does not match input [1,3,8,8] and weight [4,3,3,3]}}
  %0 = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<2x4x6x6xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x3xf32>
  return
}

// -----

// Tests that conv_weight_grad refuses a non-positive group.
func.func @conv_weight_grad_group(%g: tensor<1x4x6x6xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{channels do not fit: input [1,3,8,8], weight [4,3,3,3], group 0}}
  %0 = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 0 : i64} : tensor<1x4x6x6xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x3xf32>
  return
}

// -----

// Tests that conv_weight_grad refuses a group whose product with the
// weight's channels overflows (no filters, so the group divides them).
func.func @conv_weight_grad_group_overflow(%g: tensor<1x0x6x6xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{channels do not fit: input [1,3,8,8], weight [0,3,3,3], group 4611686018427387904}}
  %0 = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4611686018427387904 : i64} : tensor<1x0x6x6xf32>, tensor<1x3x8x8xf32> -> tensor<0x3x3x3xf32>
  return
}

// -----

// Tests that conv_weight_grad refuses operands of different element types.
func.func @conv_weight_grad_element_types(%g: tensor<1x4x6x6xf32>, %x: tensor<1x3x8x8xf16>) {
  // expected-error @+1 {{operands and result differ in element type}}
  %0 = dtg.conv_weight_grad %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x6x6xf32>, tensor<1x3x8x8xf16> -> tensor<4x3x3x3xf32>
  return
}

// -----

// Tests that max_pool_grad refuses a gradient of another element type.
func.func @max_pool_grad_element_types(%g: tensor<1x3x4x4xf64>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{gradient and input differ in element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4x4xf64>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that max_pool_grad refuses a gradient of another rank.
func.func @max_pool_grad_rank(%g: tensor<1x3x4xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{gradient and input need one rank of at least 3 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that max_pool_grad refuses a gradient with other channels.
func.func @max_pool_grad_channels(%g: tensor<1x2x4x4xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{gradient [1,2,4,4] and input [1,3,8,8] differ in N or C}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x2x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that max_pool_grad checks the spatial sizes under ceil_mode.
func.func @max_pool_grad_ceil_mode(%g: tensor<1x3x3x3xf32>, %x: tensor<1x3x7x7xf32>) {
  // expected-error @+2 {{gradient has 3 positions in spatial dimension 0, but the forward op of input [1,3,7,7] produces 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x3x3x3xf32>, tensor<1x3x7x7xf32> -> tensor<1x3x7x7xf32>
  return
}

// -----

// Tests that max_pool_grad's result has the pooled operand's type.
func.func @max_pool_grad_result_type(%g: tensor<1x3x4x4xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x3x8x9xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x9xf32>
  return
}

// -----

// Tests that max_pool_grad refuses a zero kernel.
func.func @max_pool_grad_zero_kernel(%g: tensor<1x3x4x4xf32>, %x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dtg.max_pool_grad %g, %x {kernel = array<i64: 2, 0>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that avg_pool_grad refuses a result of another element type.
func.func @avg_pool_grad_element_types(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{gradient and input differ in element type}}
  %0 = dtg.avg_pool_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xbf16>
  return
}

// -----

// Tests that avg_pool_grad refuses a result of another batch size.
func.func @avg_pool_grad_batch(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{gradient [1,3,4,4] and input [2,3,8,8] differ in N or C}}
  %0 = dtg.avg_pool_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<1x3x4x4xf32> -> tensor<2x3x8x8xf32>
  return
}

// -----

// Tests that avg_pool_grad refuses a result whose pooling does not produce
// the gradient's spatial size.
func.func @avg_pool_grad_spatial(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{gradient has 4 positions in spatial dimension 1, but the forward op of input [1,3,8,10] produces 5}}
  %0 = dtg.avg_pool_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<1x3x4x4xf32> -> tensor<1x3x8x10xf32>
  return
}

// -----

// Tests that avg_pool_grad refuses pads of the wrong length.
func.func @avg_pool_grad_pads_length(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{window attributes need 2 entries (pads 4)}}
  %0 = dtg.avg_pool_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Tests that the gradient primitives take only float tensors.
func.func @avg_pool_grad_integer(%g: tensor<1x3x4x4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<1x3x4x4xi32>'}}
  %0 = dtg.avg_pool_grad %g {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true} : tensor<1x3x4x4xi32> -> tensor<1x3x8x8xf32>
  return
}
