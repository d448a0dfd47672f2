// RUN: dtc-opt %s --split-input-file --dtc-fold-constants -verify-diagnostics

// Run-time errors of the shape kernels, raised at the op while folding.

// Tests that a gather index past the end is an error naming the index and
// the bound.
func.func @gather_index_too_large() -> tensor<2x2xf32> {
  %data = dtg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %ids = dtg.constant dense<[0, 3]> : tensor<2xi64>
  // expected-error @+1 {{index 3 is out of range for axis 0 of size 3 (valid: [-3, 3))}}
  %r = dtg.gather %data, %ids {axis = 0 : i64} : tensor<3x2xf32>, tensor<2xi64> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that a gather index before the start (after counting from the end)
// is an error.
func.func @gather_index_too_negative() -> tensor<2x1xi32> {
  %data = dtg.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %ids = dtg.constant dense<[-3]> : tensor<1xi32>
  // expected-error @+1 {{index -3 is out of range for axis 1 of size 2 (valid: [-2, 2))}}
  %r = dtg.gather %data, %ids {axis = 1 : i64} : tensor<2x2xi32>, tensor<1xi32> -> tensor<2x1xi32>
  return %r : tensor<2x1xi32>
}

// -----

// Tests that a gather_elements index out of range is an error.
func.func @gather_elements_index_out_of_range() -> tensor<1x2xf32> {
  %data = dtg.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %ids = dtg.constant dense<[[0, 5]]> : tensor<1x2xi64>
  // expected-error @+1 {{index 5 is out of range for axis 1 of size 3}}
  %r = dtg.gather_elements %data, %ids {axis = 1 : i64} : tensor<1x3xf32>, tensor<1x2xi64> -> tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}

// -----

// Tests that gather_elements indices larger than data outside the axis are an
// error, not a read past the data.
func.func @gather_elements_indices_too_large() -> tensor<2x1xf32> {
  %data = dtg.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %ids = dtg.constant dense<[[0], [1]]> : tensor<2x1xi64>
  // expected-error @+1 {{indices dimension 0 (size 2) is larger than data's (size 1)}}
  %r = dtg.gather_elements %data, %ids {axis = 1 : i64} : tensor<1x2xf32>, tensor<2x1xi64> -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// Tests that a scatter_elements index out of range is an error.
func.func @scatter_index_out_of_range() -> tensor<3xi64> {
  %data = dtg.constant dense<[1, 2, 3]> : tensor<3xi64>
  %ids = dtg.constant dense<[-4]> : tensor<1xi64>
  %upd = dtg.constant dense<[7]> : tensor<1xi64>
  // expected-error @+1 {{index -4 is out of range for axis 0 of size 3}}
  %r = dtg.scatter_elements %data, %ids, %upd {axis = 0 : i64, reduction = "add"} : tensor<3xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<3xi64>
  return %r : tensor<3xi64>
}
