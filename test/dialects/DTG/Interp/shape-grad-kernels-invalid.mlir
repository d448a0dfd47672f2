// RUN: dtc-opt %s --split-input-file --dtc-fold-constants -verify-diagnostics

// Run-time errors of the shape family's gradient kernels, raised at the op
// while folding.

// Tests that a gather_grad index past the end is an error naming the index
// and the bound, as gather's is.
func.func @gather_grad_index_too_large() -> tensor<3x2xf32> {
  %g = dtg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ids = dtg.constant dense<[0, 3]> : tensor<2xi64>
  // expected-error @+1 {{index 3 is out of range for axis 0 of size 3 (valid: [-3, 3))}}
  %r = dtg.gather_grad %g, %ids {axis = 0 : i64} : tensor<2x2xf32>, tensor<2xi64> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that a gather_grad index before the start (after counting from the
// end) is an error.
func.func @gather_grad_index_too_negative() -> tensor<2x2xf32> {
  %g = dtg.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %ids = dtg.constant dense<[-3]> : tensor<1xi32>
  // expected-error @+1 {{index -3 is out of range for axis 1 of size 2 (valid: [-2, 2))}}
  %r = dtg.gather_grad %g, %ids {axis = 1 : i64} : tensor<2x1xf32>, tensor<1xi32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
