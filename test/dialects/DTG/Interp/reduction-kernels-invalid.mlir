// RUN: dtc-opt %s --split-input-file --dtc-fold-constants -verify-diagnostics

// Run-time errors of the reduction kernels, raised at the op while folding.

// Tests that an nll_loss target outside [0, C) is an error naming the target,
// its position and the class count.
func.func @nll_target_out_of_range() -> tensor<f32> {
  %logp = dtg.constant dense<[[-1.0, -2.0], [-0.5, -3.0]]> : tensor<2x2xf32>
  %t = dtg.constant dense<[1, 2]> : tensor<2xi64>
  // expected-error @+1 {{target 2 at position 1 is out of range for 2 classes [0, 2)}}
  %r = dtg.nll_loss %logp, %t {reduction = "mean"} : tensor<2x2xf32>, tensor<2xi64> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that a negative nll_loss target that is not ignore_index is an error.
func.func @nll_negative_target() -> tensor<2xf32> {
  %logp = dtg.constant dense<[[-1.0, -2.0], [-0.5, -3.0]]> : tensor<2x2xf32>
  %t = dtg.constant dense<[-1, -100]> : tensor<2xi32>
  // expected-error @+1 {{target -1 at position 0 is out of range for 2 classes [0, 2)}}
  %r = dtg.nll_loss %logp, %t {reduction = "none", ignore_index = -100 : i64} : tensor<2x2xf32>, tensor<2xi32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that argmax over an empty axis is an error.
func.func @argmax_empty_axis() -> tensor<2xi64> {
  %x = dtg.constant dense<[[], []]> : tensor<2x0xf32>
  // expected-error @+1 {{cannot take the argmax of an empty axis 1}}
  %r = dtg.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x0xf32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}
