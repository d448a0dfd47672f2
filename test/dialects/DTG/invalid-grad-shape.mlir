// RUN: dtc-opt %s -split-input-file -verify-diagnostics

// Verifier errors of the shape family's gradient primitives (gather_grad,
// slice_grad, pad_grad).

// Tests that gather_grad takes float gradients only.
func.func @gather_grad_integer(%g: tensor<2xi32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<2xi32>'}}
  %0 = dtg.gather_grad %g, %i {axis = 0 : i64} : tensor<2xi32>, tensor<2xi64> -> tensor<4xi32>
  return
}

// -----

// Tests that gather_grad's gradient and result share an element type.
func.func @gather_grad_element_type(%g: tensor<2xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{gradient element type 'f32' differs from the result's 'f64'}}
  %0 = dtg.gather_grad %g, %i {axis = 0 : i64} : tensor<2xf32>, tensor<2xi64> -> tensor<4xf64>
  return
}

// -----

// Tests that gather_grad's axis indexes a result dimension.
func.func @gather_grad_axis(%g: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for result rank 2}}
  %0 = dtg.gather_grad %g, %i {axis = 2 : i64} : tensor<2x3xf32>, tensor<2xi64> -> tensor<4x3xf32>
  return
}

// -----

// Tests that gather_grad's gradient has the gathered shape.
func.func @gather_grad_shape(%g: tensor<2x5x3xf32>, %i: tensor<2x4xi64>) {
  // expected-error @+1 {{gradient shape [2,5,3] does not match result [10,3] gathered on axis 0 at indices [2,4] (expected [2,4,3])}}
  %0 = dtg.gather_grad %g, %i {axis = 0 : i64} : tensor<2x5x3xf32>, tensor<2x4xi64> -> tensor<10x3xf32>
  return
}

// -----

// Tests that slice_grad's gradient and result share an element type.
func.func @slice_grad_element_type(%g: tensor<2xf32>) {
  // expected-error @+1 {{gradient element type 'f32' differs from the result's 'f16'}}
  %0 = dtg.slice_grad %g {starts = array<i64: 0>, limits = array<i64: 2>, steps = array<i64: 1>} : tensor<2xf32> -> tensor<4xf16>
  return
}

// -----

// Tests that slice_grad needs one start, limit and step per result dimension.
func.func @slice_grad_entries(%g: tensor<2x3xf32>) {
  // expected-error @+1 {{starts, limits and steps need one entry per result dimension (2)}}
  %0 = dtg.slice_grad %g {starts = array<i64: 0>, limits = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that slice_grad's gradient has the result's rank.
func.func @slice_grad_rank(%g: tensor<2xf32>) {
  // expected-error @+1 {{gradient rank 1 differs from the result's 2}}
  %0 = dtg.slice_grad %g {starts = array<i64: 0, 0>, limits = array<i64: 2, 1>, steps = array<i64: 1, 1>} : tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that slice_grad rejects a zero step.
func.func @slice_grad_zero_step(%g: tensor<2xf32>) {
  // expected-error @+1 {{step of dimension 0 is 0}}
  %0 = dtg.slice_grad %g {starts = array<i64: 0>, limits = array<i64: 2>, steps = array<i64: 0>} : tensor<2xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that slice_grad's indices stay inside the result.
func.func @slice_grad_outside(%g: tensor<3xf32>) {
  // expected-error @+1 {{slice of dimension 0 leaves the result (size 4)}}
  %0 = dtg.slice_grad %g {starts = array<i64: 1>, limits = array<i64: 7>, steps = array<i64: 2>} : tensor<3xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that slice_grad's gradient has as many elements per dimension as the
// slice takes.
func.func @slice_grad_count(%g: tensor<3xf32>) {
  // expected-error @+1 {{slice of dimension 0 takes 2 indices, but the gradient has 3}}
  %0 = dtg.slice_grad %g {starts = array<i64: 3>, limits = array<i64: -1>, steps = array<i64: -2>} : tensor<3xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that pad_grad's gradient and result share an element type.
func.func @pad_grad_element_type(%g: tensor<4xf32>) {
  // expected-error @+1 {{gradient element type 'f32' differs from the result's 'bf16'}}
  %0 = dtg.pad_grad %g {low = array<i64: 1>, high = array<i64: 1>, mode = "edge"} : tensor<4xf32> -> tensor<2xbf16>
  return
}

// -----

// Tests that pad_grad needs one low and one high amount per result dimension.
func.func @pad_grad_entries(%g: tensor<4x3xf32>) {
  // expected-error @+1 {{needs one low and one high amount per result dimension (2)}}
  %0 = dtg.pad_grad %g {low = array<i64: 1, 0>, high = array<i64: 1>, mode = "edge"} : tensor<4x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that pad_grad's gradient has the result's rank.
func.func @pad_grad_rank(%g: tensor<4xf32>) {
  // expected-error @+1 {{gradient rank 1 differs from the result's 2}}
  %0 = dtg.pad_grad %g {low = array<i64: 1, 0>, high = array<i64: 1, 0>, mode = "edge"} : tensor<4xf32> -> tensor<2x1xf32>
  return
}

// -----

// Tests that pad_grad knows only the pad modes.
func.func @pad_grad_mode(%g: tensor<4xf32>) {
  // expected-error @+1 {{unknown pad mode 'wrap'}}
  %0 = dtg.pad_grad %g {low = array<i64: 1>, high = array<i64: 1>, mode = "wrap"} : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

// Tests that the padded result size must be the gradient's size.
func.func @pad_grad_size(%g: tensor<5xf32>) {
  // expected-error @+1 {{padding dimension 0 of size 2 by 1 and 1 does not give the gradient's size 5}}
  %0 = dtg.pad_grad %g {low = array<i64: 1>, high = array<i64: 1>, mode = "constant"} : tensor<5xf32> -> tensor<2xf32>
  return
}

// -----

// Tests that an edge pad of an empty dimension has no adjoint.
func.func @pad_grad_edge_empty(%g: tensor<2x2xf32>) {
  // expected-error @+1 {{cannot edge-pad empty dimension 1}}
  %0 = dtg.pad_grad %g {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "edge"} : tensor<2x2xf32> -> tensor<2x0xf32>
  return
}

// -----

// Tests that reflect amounts must be smaller than the dimension.
func.func @pad_grad_reflect_amount(%g: tensor<5xf32>) {
  // expected-error @+1 {{reflect padding of dimension 0 must be smaller than its size 2}}
  %0 = dtg.pad_grad %g {low = array<i64: 2>, high = array<i64: 1>, mode = "reflect"} : tensor<5xf32> -> tensor<2xf32>
  return
}
