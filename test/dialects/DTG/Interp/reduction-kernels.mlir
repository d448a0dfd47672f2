// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter kernels of the reduction family, run through constant
// folding: each function computes one op on constants, which folds to the
// result.

// Tests that reduce_sum sums floats over one axis.
// CHECK-LABEL: func.func @sum_f32_axis1
// CHECK: %[[R:.+]] = dtg.constant dense<[6.000000e+00, 1.500000e+01]> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_f32_axis1() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_sum %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_sum over two axes with keepdims keeps size-1 dimensions.
// CHECK-LABEL: func.func @sum_keepdims
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}1.500000e+01], [2.300000e+01], [3.100000e+01]]]> : tensor<1x3x1xf32>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_keepdims() -> tensor<1x3x1xf32> {
  %a0 = dtg.constant dense<[[[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01], [1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00], [2.000000e+00, 2.250000e+00, 2.500000e+00, 2.750000e+00]], [[3.000000e+00, 3.250000e+00, 3.500000e+00, 3.750000e+00], [4.000000e+00, 4.250000e+00, 4.500000e+00, 4.750000e+00], [5.000000e+00, 5.250000e+00, 5.500000e+00, 5.750000e+00]]]> : tensor<2x3x4xf32>
  %r = dtg.reduce_sum %a0 {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  return %r : tensor<1x3x1xf32>
}

// -----

// Tests that reduce_sum sums integers over every axis.
// CHECK-LABEL: func.func @sum_i32_all
// CHECK: %[[R:.+]] = dtg.constant dense<-91> : tensor<i32>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_i32_all() -> tensor<i32> {
  %a0 = dtg.constant dense<[[1, -2, 3], [100, -200, 7]]> : tensor<2x3xi32>
  %r = dtg.reduce_sum %a0 {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xi32> -> tensor<i32>
  return %r : tensor<i32>
}

// -----

// Tests that reduce_sum of integers wraps to the element width.
// CHECK-LABEL: func.func @sum_i8_wraps
// CHECK: %[[R:.+]] = dtg.constant dense<-57> : tensor<i8>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_i8_wraps() -> tensor<i8> {
  %a0 = dtg.constant dense<[100, 100, -1]> : tensor<3xi8>
  %r = dtg.reduce_sum %a0 {axes = array<i64: 0>, keepdims = false} : tensor<3xi8> -> tensor<i8>
  return %r : tensor<i8>
}

// -----

// Tests that an empty axes list reduces nothing.
// CHECK-LABEL: func.func @sum_no_axes
// CHECK: dtg.constant
// CHECK-NEXT: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_no_axes() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_sum %a0 {axes = array<i64>, keepdims = false} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that reduce_sum over an empty dimension gives 0.
// CHECK-LABEL: func.func @sum_empty
// CHECK: %[[R:.+]] = dtg.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_sum
// CHECK: return %[[R]]
func.func @sum_empty() -> tensor<2xf32> {
  %a0 = dtg.constant dense<> : tensor<2x0xf32>
  %r = dtg.reduce_sum %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x0xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_mean divides the sum by the reduced count.
// CHECK-LABEL: func.func @mean_f32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}2.500000e+00, 3.500000e+00, 4.500000e+00]]> : tensor<1x3xf32>
// CHECK-NOT: dtg.reduce_mean
// CHECK: return %[[R]]
func.func @mean_f32() -> tensor<1x3xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_mean %a0 {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %r : tensor<1x3xf32>
}

// -----

// Tests that reduce_mean of integers truncates toward zero.
// CHECK-LABEL: func.func @mean_i64
// CHECK: %[[R:.+]] = dtg.constant dense<[1, -1, 7]> : tensor<3xi64>
// CHECK-NOT: dtg.reduce_mean
// CHECK: return %[[R]]
func.func @mean_i64() -> tensor<3xi64> {
  %a0 = dtg.constant dense<[[1, 2], [-1, -2], [7, 8]]> : tensor<3x2xi64>
  %r = dtg.reduce_mean %a0 {axes = array<i64: 1>, keepdims = false} : tensor<3x2xi64> -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// -----

// Tests that reduce_max takes the maximum.
// CHECK-LABEL: func.func @max_f32
// CHECK: %[[R:.+]] = dtg.constant dense<[1.000000e+00, -5.000000e-01]> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_max
// CHECK: return %[[R]]
func.func @max_f32() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, -3.000000e+00], [-5.000000e-01, -7.000000e+00]]> : tensor<2x2xf32>
  %r = dtg.reduce_max %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x2xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_max propagates NaN.
// CHECK-LABEL: func.func @max_nan
// CHECK: %[[R:.+]] = dtg.constant dense<[0x7FC00000, 6.000000e+00]> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_max
// CHECK: return %[[R]]
func.func @max_nan() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 0x7FC00000, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_max %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_max over an empty dimension gives -inf.
// CHECK-LABEL: func.func @max_empty_f32
// CHECK: %[[R:.+]] = dtg.constant dense<0xFF800000> : tensor<3xf32>
// CHECK-NOT: dtg.reduce_max
// CHECK: return %[[R]]
func.func @max_empty_f32() -> tensor<3xf32> {
  %a0 = dtg.constant dense<> : tensor<3x0xf32>
  %r = dtg.reduce_max %a0 {axes = array<i64: 1>, keepdims = false} : tensor<3x0xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Tests that reduce_max on integers.
// CHECK-LABEL: func.func @max_i64
// CHECK: %[[R:.+]] = dtg.constant dense<[100, -2, 7]> : tensor<3xi64>
// CHECK-NOT: dtg.reduce_max
// CHECK: return %[[R]]
func.func @max_i64() -> tensor<3xi64> {
  %a0 = dtg.constant dense<[[1, -2, 3], [100, -200, 7]]> : tensor<2x3xi64>
  %r = dtg.reduce_max %a0 {axes = array<i64: 0>, keepdims = false} : tensor<2x3xi64> -> tensor<3xi64>
  return %r : tensor<3xi64>
}

// -----

// Tests that reduce_max of integers over an empty dimension gives the type minimum.
// CHECK-LABEL: func.func @max_empty_i8
// CHECK: %[[R:.+]] = dtg.constant dense<-128> : tensor<2xi8>
// CHECK-NOT: dtg.reduce_max
// CHECK: return %[[R]]
func.func @max_empty_i8() -> tensor<2xi8> {
  %a0 = dtg.constant dense<> : tensor<0x2xi8>
  %r = dtg.reduce_max %a0 {axes = array<i64: 0>, keepdims = false} : tensor<0x2xi8> -> tensor<2xi8>
  return %r : tensor<2xi8>
}

// -----

// Tests that reduce_min takes the minimum.
// CHECK-LABEL: func.func @min_f32
// CHECK: %[[R:.+]] = dtg.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK-NOT: dtg.reduce_min
// CHECK: return %[[R]]
func.func @min_f32() -> tensor<1x1xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_min %a0 {axes = array<i64: 0, 1>, keepdims = true} : tensor<2x3xf32> -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}

// -----

// Tests that reduce_min over an empty dimension gives +inf.
// CHECK-LABEL: func.func @min_empty_f32
// CHECK: %[[R:.+]] = dtg.constant dense<0x7F800000> : tensor<f32>
// CHECK-NOT: dtg.reduce_min
// CHECK: return %[[R]]
func.func @min_empty_f32() -> tensor<f32> {
  %a0 = dtg.constant dense<> : tensor<0xf32>
  %r = dtg.reduce_min %a0 {axes = array<i64: 0>, keepdims = false} : tensor<0xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that reduce_min of integers over an empty dimension gives the type maximum.
// CHECK-LABEL: func.func @min_empty_i32
// CHECK: %[[R:.+]] = dtg.constant dense<2147483647> : tensor<2xi32>
// CHECK-NOT: dtg.reduce_min
// CHECK: return %[[R]]
func.func @min_empty_i32() -> tensor<2xi32> {
  %a0 = dtg.constant dense<> : tensor<2x0xi32>
  %r = dtg.reduce_min %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x0xi32> -> tensor<2xi32>
  return %r : tensor<2xi32>
}

// -----

// Tests that reduce_min of booleans is a logical and.
// CHECK-LABEL: func.func @min_i1
// CHECK: %[[R:.+]] = dtg.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NOT: dtg.reduce_min
// CHECK: return %[[R]]
func.func @min_i1() -> tensor<2xi1> {
  %a0 = dtg.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %r = dtg.reduce_min %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x2xi1> -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

// Tests that reduce_prod multiplies.
// CHECK-LABEL: func.func @prod_f32
// CHECK: %[[R:.+]] = dtg.constant dense<[6.000000e+00, 1.200000e+02]> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_prod
// CHECK: return %[[R]]
func.func @prod_f32() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_prod %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_prod multiplies integers.
// CHECK-LABEL: func.func @prod_i32
// CHECK: %[[R:.+]] = dtg.constant dense<[-6, -140000]> : tensor<2xi32>
// CHECK-NOT: dtg.reduce_prod
// CHECK: return %[[R]]
func.func @prod_i32() -> tensor<2xi32> {
  %a0 = dtg.constant dense<[[1, -2, 3], [100, -200, 7]]> : tensor<2x3xi32>
  %r = dtg.reduce_prod %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi32> -> tensor<2xi32>
  return %r : tensor<2xi32>
}

// -----

// Tests that reduce_prod over an empty dimension gives 1.
// CHECK-LABEL: func.func @prod_empty
// CHECK: %[[R:.+]] = dtg.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_prod
// CHECK: return %[[R]]
func.func @prod_empty() -> tensor<2xf32> {
  %a0 = dtg.constant dense<> : tensor<2x0xf32>
  %r = dtg.reduce_prod %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x0xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_logsumexp of a single element per group is the element.
// CHECK-LABEL: func.func @lse_exact
// CHECK: dtg.constant
// CHECK-NEXT: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_exact() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64>, keepdims = true} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that reduce_logsumexp over an empty dimension gives -inf.
// CHECK-LABEL: func.func @lse_empty
// CHECK: %[[R:.+]] = dtg.constant dense<0xFF800000> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_empty() -> tensor<2xf32> {
  %a0 = dtg.constant dense<> : tensor<2x0xf32>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x0xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_logsumexp of all -inf gives -inf (no inf - inf NaN).
// CHECK-LABEL: func.func @lse_ninf
// CHECK: %[[R:.+]] = dtg.constant dense<0xFF800000> : tensor<f32>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_ninf() -> tensor<f32> {
  %a0 = dtg.constant dense<0xFF800000> : tensor<2xf32>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that reduce_logsumexp with +inf gives +inf.
// CHECK-LABEL: func.func @lse_pinf
// CHECK: %[[R:.+]] = dtg.constant dense<0x7F800000> : tensor<f32>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_pinf() -> tensor<f32> {
  %a0 = dtg.constant dense<[1.000000e+00, 0x7F800000]> : tensor<2xf32>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64: 0>, keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that argmax takes the first of tied maxima.
// CHECK-LABEL: func.func @argmax_first
// CHECK: %[[R:.+]] = dtg.constant dense<[1, 0]> : tensor<2xi64>
// CHECK-NOT: dtg.argmax
// CHECK: return %[[R]]
func.func @argmax_first() -> tensor<2xi64> {
  %a0 = dtg.constant dense<[[1.000000e+00, 3.000000e+00, 3.000000e+00, 0.000000e+00], [2.000000e+00, -1.000000e+00, -1.000000e+00, 2.000000e+00]]> : tensor<2x4xf32>
  %r = dtg.argmax %a0 {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x4xf32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Tests that argmax with select_last_index takes the last of tied maxima.
// CHECK-LABEL: func.func @argmax_last
// CHECK: %[[R:.+]] = dtg.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NOT: dtg.argmax
// CHECK: return %[[R]]
func.func @argmax_last() -> tensor<2xi64> {
  %a0 = dtg.constant dense<[[1.000000e+00, 3.000000e+00, 3.000000e+00, 0.000000e+00], [2.000000e+00, -1.000000e+00, -1.000000e+00, 2.000000e+00]]> : tensor<2x4xf32>
  %r = dtg.argmax %a0 {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x4xf32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Tests that argmin over axis 0 with keepdims.
// CHECK-LABEL: func.func @argmin_keepdims
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0, 1, 1, 0]]> : tensor<1x4xi64>
// CHECK-NOT: dtg.argmin
// CHECK: return %[[R]]
func.func @argmin_keepdims() -> tensor<1x4xi64> {
  %a0 = dtg.constant dense<[[1.000000e+00, 3.000000e+00, 3.000000e+00, 0.000000e+00], [2.000000e+00, -1.000000e+00, -1.000000e+00, 2.000000e+00]]> : tensor<2x4xf32>
  %r = dtg.argmin %a0 {axis = 0 : i64, keepdims = true, select_last_index = false} : tensor<2x4xf32> -> tensor<1x4xi64>
  return %r : tensor<1x4xi64>
}

// -----

// Tests that argmin with select_last_index on integers.
// CHECK-LABEL: func.func @argmin_last_int
// CHECK: %[[R:.+]] = dtg.constant dense<[2, 1]> : tensor<2xi64>
// CHECK-NOT: dtg.argmin
// CHECK: return %[[R]]
func.func @argmin_last_int() -> tensor<2xi64> {
  %a0 = dtg.constant dense<[[5, 1, 1], [-3, -3, 0]]> : tensor<2x3xi32>
  %r = dtg.argmin %a0 {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3xi32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Tests that argmax returns the first NaN, as NumPy does.
// CHECK-LABEL: func.func @argmax_nan
// CHECK: %[[R:.+]] = dtg.constant dense<[1, 0]> : tensor<2xi64>
// CHECK-NOT: dtg.argmax
// CHECK: return %[[R]]
func.func @argmax_nan() -> tensor<2xi64> {
  %a0 = dtg.constant dense<[[1.000000e+00, 0x7FC00000, 9.000000e+00, 0x7FC00000], [3.000000e+00, 2.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
  %r = dtg.argmax %a0 {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x4xf32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Tests that argmin returns the first NaN, as NumPy does.
// CHECK-LABEL: func.func @argmin_nan
// CHECK: %[[R:.+]] = dtg.constant dense<[1, 3]> : tensor<2xi64>
// CHECK-NOT: dtg.argmin
// CHECK: return %[[R]]
func.func @argmin_nan() -> tensor<2xi64> {
  %a0 = dtg.constant dense<[[1.000000e+00, 0x7FC00000, 9.000000e+00, 0x7FC00000], [3.000000e+00, 2.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
  %r = dtg.argmin %a0 {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<2x4xf32> -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// -----

// Tests that cumsum runs a prefix sum.
// CHECK-LABEL: func.func @cumsum_plain
// CHECK: %[[R:.+]] = dtg.constant dense<[1.000000e+00, 3.000000e+00, 6.000000e+00, 1.050000e+01]> : tensor<4xf32>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_plain() -> tensor<4xf32> {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.500000e+00]> : tensor<4xf32>
  %r = dtg.cumsum %a0 {axis = 0 : i64, exclusive = false, reverse = false} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that exclusive cumsum leaves the element itself out.
// CHECK-LABEL: func.func @cumsum_exclusive
// CHECK: %[[R:.+]] = dtg.constant dense<[0.000000e+00, 1.000000e+00, 3.000000e+00, 6.000000e+00]> : tensor<4xf32>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_exclusive() -> tensor<4xf32> {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.500000e+00]> : tensor<4xf32>
  %r = dtg.cumsum %a0 {axis = 0 : i64, exclusive = true, reverse = false} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that reverse cumsum sums from the end.
// CHECK-LABEL: func.func @cumsum_reverse
// CHECK: %[[R:.+]] = dtg.constant dense<[1.050000e+01, 9.500000e+00, 7.500000e+00, 4.500000e+00]> : tensor<4xf32>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_reverse() -> tensor<4xf32> {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.500000e+00]> : tensor<4xf32>
  %r = dtg.cumsum %a0 {axis = 0 : i64, exclusive = false, reverse = true} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that exclusive reverse cumsum.
// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK: %[[R:.+]] = dtg.constant dense<[9.500000e+00, 7.500000e+00, 4.500000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_exclusive_reverse() -> tensor<4xf32> {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.500000e+00]> : tensor<4xf32>
  %r = dtg.cumsum %a0 {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that cumsum of integers along axis 1.
// CHECK-LABEL: func.func @cumsum_i64_axis1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1, 3, 6], [10, 30, 60]]> : tensor<2x3xi64>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_i64_axis1() -> tensor<2x3xi64> {
  %a0 = dtg.constant dense<[[1, 2, 3], [10, 20, 30]]> : tensor<2x3xi64>
  %r = dtg.cumsum %a0 {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x3xi64>
  return %r : tensor<2x3xi64>
}

// -----

// Tests that reverse cumsum of integers along axis 0.
// CHECK-LABEL: func.func @cumsum_i32_axis0_reverse
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}11, 22, 33], [10, 20, 30]]> : tensor<2x3xi32>
// CHECK-NOT: dtg.cumsum
// CHECK: return %[[R]]
func.func @cumsum_i32_axis0_reverse() -> tensor<2x3xi32> {
  %a0 = dtg.constant dense<[[1, 2, 3], [10, 20, 30]]> : tensor<2x3xi32>
  %r = dtg.cumsum %a0 {axis = 0 : i64, exclusive = false, reverse = true} : tensor<2x3xi32>
  return %r : tensor<2x3xi32>
}

// -----

// Tests that nll_loss without reduction picks -input[n, target[n]].
// CHECK-LABEL: func.func @nll_none
// CHECK: %[[R:.+]] = dtg.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01, 7.500000e-01]> : tensor<4xf32>
// CHECK-NOT: dtg.nll_loss
// CHECK: return %[[R]]
func.func @nll_none() -> tensor<4xf32> {
  %a0 = dtg.constant dense<[[-5.000000e-01, -1.000000e+00, -2.000000e+00], [-3.000000e+00, -2.500000e-01, -4.000000e+00], [-1.500000e+00, -2.500000e+00, -1.250000e-01], [-8.000000e+00, -7.500000e-01, -6.000000e+00]]> : tensor<4x3xf32>
  %a1 = dtg.constant dense<[0, 1, 2, 1]> : tensor<4xi64>
  %r = dtg.nll_loss %a0, %a1 {reduction = "none"} : tensor<4x3xf32>, tensor<4xi64> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that nll_loss sums weighted losses.
// CHECK-LABEL: func.func @nll_sum_weighted
// CHECK: %[[R:.+]] = dtg.constant dense<2.562500e+00> : tensor<f32>
// CHECK-NOT: dtg.nll_loss
// CHECK: return %[[R]]
func.func @nll_sum_weighted() -> tensor<f32> {
  %a0 = dtg.constant dense<[[-5.000000e-01, -1.000000e+00, -2.000000e+00], [-3.000000e+00, -2.500000e-01, -4.000000e+00], [-1.500000e+00, -2.500000e+00, -1.250000e-01], [-8.000000e+00, -7.500000e-01, -6.000000e+00]]> : tensor<4x3xf32>
  %a1 = dtg.constant dense<[0, 1, 2, 1]> : tensor<4xi64>
  %a2 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 5.000000e-01]> : tensor<3xf32>
  %r = dtg.nll_loss %a0, %a1, %a2 {reduction = "sum"} : tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that nll_loss mean divides by the total weight of counted positions and skips ignore_index (here negative).
// CHECK-LABEL: func.func @nll_mean_weighted_ignore
// CHECK: %[[R:.+]] = dtg.constant dense<6.093750e-01> : tensor<f32>
// CHECK-NOT: dtg.nll_loss
// CHECK: return %[[R]]
func.func @nll_mean_weighted_ignore() -> tensor<f32> {
  %a0 = dtg.constant dense<[[-5.000000e-01, -1.000000e+00, -2.000000e+00], [-3.000000e+00, -2.500000e-01, -4.000000e+00], [-1.500000e+00, -2.500000e+00, -1.250000e-01], [-8.000000e+00, -7.500000e-01, -6.000000e+00]]> : tensor<4x3xf32>
  %a1 = dtg.constant dense<[0, -100, 2, 1]> : tensor<4xi64>
  %a2 = dtg.constant dense<[1.000000e+00, 2.500000e+00, 5.000000e-01]> : tensor<3xf32>
  %r = dtg.nll_loss %a0, %a1, %a2 {reduction = "mean", ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that nll_loss on [N, C, d] input indexes the class dimension per position.
// CHECK-LABEL: func.func @nll_spatial_none
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}5.000000e-01, 2.000000e+00], [2.500000e-01, 1.250000e-01]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.nll_loss
// CHECK: return %[[R]]
func.func @nll_spatial_none() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[[-1.000000e+00, -2.000000e+00], [-5.000000e-01, -4.000000e+00]], [[-2.500000e-01, -3.000000e+00], [-2.000000e+00, -1.250000e-01]]]> : tensor<2x2x2xf32>
  %a1 = dtg.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>
  %r = dtg.nll_loss %a0, %a1 {reduction = "none"} : tensor<2x2x2xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that nll_loss mean over spatial positions with an ignored position.
// CHECK-LABEL: func.func @nll_spatial_mean_ignore
// CHECK: %[[R:.+]] = dtg.constant dense<8.750000e-01> : tensor<f32>
// CHECK-NOT: dtg.nll_loss
// CHECK: return %[[R]]
func.func @nll_spatial_mean_ignore() -> tensor<f32> {
  %a0 = dtg.constant dense<[[[-1.000000e+00, -2.000000e+00], [-5.000000e-01, -4.000000e+00]], [[-2.500000e-01, -3.000000e+00], [-2.000000e+00, -1.250000e-01]]]> : tensor<2x2x2xf32>
  %a1 = dtg.constant dense<[[1, 0], [1, 1]]> : tensor<2x2xi64>
  %r = dtg.nll_loss %a0, %a1 {reduction = "mean", ignore_index = 0 : i64} : tensor<2x2x2xf32>, tensor<2x2xi64> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that reduce_logsumexp is computed stably: log(exp(1000) + exp(1000))
// is 1000 + log 2, not inf.
// CHECK-LABEL: func.func @lse_stable
// CHECK: %[[R:.+]] = dtg.constant dense<[0.693147{{[0-9]*}}, 1000.69{{[0-9]*}}]> : tensor<2xf32>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_stable() -> tensor<2xf32> {
  %a0 = dtg.constant dense<[[0.0, 0.0], [1000.0, 1000.0]]> : tensor<2x2xf32>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x2xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Tests that reduce_logsumexp in f64 keeps double precision:
// log(e^1 + e^2 + e^3) = 3.40760596444438.
// CHECK-LABEL: func.func @lse_f64
// CHECK: %[[R:.+]] = dtg.constant dense<3.40760596444438{{[0-9]*}}> : tensor<f64>
// CHECK-NOT: dtg.reduce_logsumexp
// CHECK: return %[[R]]
func.func @lse_f64() -> tensor<f64> {
  %a0 = dtg.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %r = dtg.reduce_logsumexp %a0 {axes = array<i64: 0>, keepdims = false} : tensor<3xf64> -> tensor<f64>
  return %r : tensor<f64>
}

// -----

// Tests that reduce_mean rounds its result to the element type: 1/3 in f16.
// CHECK-LABEL: func.func @mean_f16
// CHECK: %[[R:.+]] = dtg.constant dense<3.332520e-01> : tensor<f16>
// CHECK-NOT: dtg.reduce_mean
// CHECK: return %[[R]]
func.func @mean_f16() -> tensor<f16> {
  %a0 = dtg.constant dense<[1.0, 0.0, 0.0]> : tensor<3xf16>
  %r = dtg.reduce_mean %a0 {axes = array<i64: 0>, keepdims = false} : tensor<3xf16> -> tensor<f16>
  return %r : tensor<f16>
}
