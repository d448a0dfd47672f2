// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter kernels of the shape family's gradient primitives, run
// through constant folding: each function computes one op on constants,
// which folds to the result.

// Tests that gather_grad adds the rows of repeated indices (1 twice, and -1
// counting from the end) and leaves the rows never gathered at zero.
// CHECK-LABEL: func.func @gather_grad_rows
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00], [6.000000e+00, 8.000000e+00], [0.000000e+00, 0.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<4x2xf32>
// CHECK-NOT: dtg.gather_grad
// CHECK: return %[[R]]
func.func @gather_grad_rows() -> tensor<4x2xf32> {
  %g = dtg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %i = dtg.constant dense<[1, -1, 1]> : tensor<3xi64>
  %r = dtg.gather_grad %g, %i {axis = 0 : i64} : tensor<3x2xf32>, tensor<3xi64> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Tests that gather_grad scatters along a trailing axis with 2-D i32 indices:
// result[o, indices[i, j]] += grad[o, i, j].
// CHECK-LABEL: func.func @gather_grad_axis1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, 9.000000e+00], [5.000000e+00, 0.000000e+00, 2.100000e+01]]> : tensor<2x3xf64>
// CHECK-NOT: dtg.gather_grad
// CHECK: return %[[R]]
func.func @gather_grad_axis1() -> tensor<2x3xf64> {
  %g = dtg.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf64>
  %i = dtg.constant dense<[[0, 2], [-1, 2]]> : tensor<2x2xi32>
  %r = dtg.gather_grad %g, %i {axis = 1 : i64} : tensor<2x2x2xf64>, tensor<2x2xi32> -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}

// -----

// Tests that gather_grad sums in double and rounds once: 2^24 + 1 + 1 is
// 2^24 + 2 (0x4B800001) in f32, where adding 1 twice to 2^24 in f32 would
// lose both.
// CHECK-LABEL: func.func @gather_grad_rounds_once
// CHECK: %[[R:.+]] = dtg.constant dense<[0x4B800001, 0.000000e+00]> : tensor<2xf32>
// CHECK: return %[[R]]
func.func @gather_grad_rounds_once() -> tensor<2xf32> {
  %g = dtg.constant dense<[16777216.0, 1.0, 1.0]> : tensor<3xf32>
  %i = dtg.constant dense<[0, 0, 0]> : tensor<3xi64>
  %r = dtg.gather_grad %g, %i {axis = 0 : i64} : tensor<3xf32>, tensor<3xi64> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that slice_grad writes a slice with step -2 (indices 4, 2, 0) back in
// place and zeros the indices the slice skipped.
// CHECK-LABEL: func.func @slice_grad
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}3.000000e+00, 0.000000e+00, 2.000000e+00, 0.000000e+00, 1.000000e+00], [6.000000e+00, 0.000000e+00, 5.000000e+00, 0.000000e+00, 4.000000e+00]]> : tensor<2x5xf32>
// CHECK-NOT: dtg.slice_grad
// CHECK: return %[[R]]
func.func @slice_grad() -> tensor<2x5xf32> {
  %g = dtg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %r = dtg.slice_grad %g {starts = array<i64: 0, 4>, limits = array<i64: 2, -1>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// Tests that pad_grad in reflect mode folds the mirrored copies back: padding
// [a, b, c] by 2 and 1 gives [c, b, a, b, c, b], so a gets 3, b gets 2+4+6 and
// c gets 1+5.
// CHECK-LABEL: func.func @pad_grad_reflect
// CHECK: %[[R:.+]] = dtg.constant dense<[3.000000e+00, 1.200000e+01, 6.000000e+00]> : tensor<3xf32>
// CHECK-NOT: dtg.pad_grad
// CHECK: return %[[R]]
func.func @pad_grad_reflect() -> tensor<3xf32> {
  %g = dtg.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %r = dtg.pad_grad %g {low = array<i64: 2>, high = array<i64: 1>, mode = "reflect"} : tensor<6xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Tests that pad_grad in edge mode gives the edge the whole padding's
// gradient, and that a cropped column (low -1) gets zero.
// CHECK-LABEL: func.func @pad_grad_edge
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.000000e+00, 2.100000e+01], [0.000000e+00, 2.400000e+01]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.pad_grad
// CHECK: return %[[R]]
func.func @pad_grad_edge() -> tensor<2x2xf32> {
  %g = dtg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>
  %r = dtg.pad_grad %g {low = array<i64: 1, -1>, high = array<i64: 0, 2>, mode = "edge"} : tensor<3x3xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that pad_grad in constant mode drops the filled position and zeros
// the cropped one.
// CHECK-LABEL: func.func @pad_grad_constant
// CHECK: %[[R:.+]] = dtg.constant dense<[2.000000e+00, 3.000000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-NOT: dtg.pad_grad
// CHECK: return %[[R]]
func.func @pad_grad_constant() -> tensor<3xf32> {
  %g = dtg.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = dtg.pad_grad %g {low = array<i64: 1>, high = array<i64: -1>, mode = "constant"} : tensor<3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}
