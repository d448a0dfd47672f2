// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter kernels of the shape family, run through constant folding:
// each function computes one op on constants, which folds to the result.

// Tests that reshape keeps the row-major element order.
// CHECK-LABEL: func.func @reshape_f32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}5.000000e-01, 1.000000e+00], [1.500000e+00, 2.000000e+00], [2.500000e+00, 3.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: dtg.reshape
// CHECK: return %[[R]]
func.func @reshape_f32() -> tensor<3x2xf32> {
  %a0 = dtg.constant dense<[[5.000000e-01, 1.000000e+00, 1.500000e+00], [2.000000e+00, 2.500000e+00, 3.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.reshape %a0 : tensor<2x3xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that reshape moves booleans unchanged.
// CHECK-LABEL: func.func @reshape_i1
// CHECK: %[[R:.+]] = dtg.constant dense<[true, false, false, true, true, false]> : tensor<6xi1>
// CHECK-NOT: dtg.reshape
// CHECK: return %[[R]]
func.func @reshape_i1() -> tensor<6xi1> {
  %a0 = dtg.constant dense<[[true, false, false], [true, true, false]]> : tensor<2x3xi1>
  %r = dtg.reshape %a0 : tensor<2x3xi1> -> tensor<6xi1>
  return %r : tensor<6xi1>
}

// -----

// Tests that transpose swaps the dimensions of a matrix.
// CHECK-LABEL: func.func @transpose_f32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}5.000000e-01, 2.000000e+00], [1.000000e+00, 2.500000e+00], [1.500000e+00, 3.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: dtg.transpose
// CHECK: return %[[R]]
func.func @transpose_f32() -> tensor<3x2xf32> {
  %a0 = dtg.constant dense<[[5.000000e-01, 1.000000e+00, 1.500000e+00], [2.000000e+00, 2.500000e+00, 3.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.transpose %a0 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that transpose applies a 3-D permutation to integers (result dim i is operand dim perm[i]).
// CHECK-LABEL: func.func @transpose_i32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}-5, -3], [-1, 1], [3, 5]], {{\[\[}}-4, -2], [0, 2], [4, 6]]]> : tensor<2x3x2xi32>
// CHECK-NOT: dtg.transpose
// CHECK: return %[[R]]
func.func @transpose_i32() -> tensor<2x3x2xi32> {
  %a0 = dtg.constant dense<[[[-5, -4], [-3, -2]], [[-1, 0], [1, 2]], [[3, 4], [5, 6]]]> : tensor<3x2x2xi32>
  %r = dtg.transpose %a0 {perm = array<i64: 2, 0, 1>} : tensor<3x2x2xi32> -> tensor<2x3x2xi32>
  return %r : tensor<2x3x2xi32>
}

// -----

// Tests that concat joins integers along axis 1.
// CHECK-LABEL: func.func @concat_i64_axis1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1, 2, 5, 7, 8, 9], [3, 4, 6, 10, 11, 12]]> : tensor<2x6xi64>
// CHECK-NOT: dtg.concat
// CHECK: return %[[R]]
func.func @concat_i64_axis1() -> tensor<2x6xi64> {
  %a0 = dtg.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %a1 = dtg.constant dense<[[5], [6]]> : tensor<2x1xi64>
  %a2 = dtg.constant dense<[[7, 8, 9], [10, 11, 12]]> : tensor<2x3xi64>
  %r = dtg.concat %a0, %a1, %a2 {axis = 1 : i64} : tensor<2x2xi64>, tensor<2x1xi64>, tensor<2x3xi64> -> tensor<2x6xi64>
  return %r : tensor<2x6xi64>
}

// -----

// Tests that concat joins floats along axis 0.
// CHECK-LABEL: func.func @concat_f32_axis0
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.500000e+00, -2.000000e+00], [3.250000e+00, 4.000000e+00], [1.250000e-01, -8.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: dtg.concat
// CHECK: return %[[R]]
func.func @concat_f32_axis0() -> tensor<3x2xf32> {
  %a0 = dtg.constant dense<[[1.500000e+00, -2.000000e+00]]> : tensor<1x2xf32>
  %a1 = dtg.constant dense<[[3.250000e+00, 4.000000e+00], [1.250000e-01, -8.000000e+00]]> : tensor<2x2xf32>
  %r = dtg.concat %a0, %a1 {axis = 0 : i64} : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that concat joins booleans.
// CHECK-LABEL: func.func @concat_i1
// CHECK: %[[R:.+]] = dtg.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-NOT: dtg.concat
// CHECK: return %[[R]]
func.func @concat_i1() -> tensor<3xi1> {
  %a0 = dtg.constant dense<[true, false]> : tensor<2xi1>
  %a1 = dtg.constant dense<false> : tensor<1xi1>
  %r = dtg.concat %a0, %a1 {axis = 0 : i64} : tensor<2xi1>, tensor<1xi1> -> tensor<3xi1>
  return %r : tensor<3xi1>
}

// -----

// Tests that slice takes a strided box with positive steps.
// CHECK-LABEL: func.func @slice_positive
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [9.000000e+00, 1.100000e+01]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.slice
// CHECK: return %[[R]]
func.func @slice_positive() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01]]> : tensor<3x4xf32>
  %r = dtg.slice %a0 {starts = array<i64: 0, 1>, limits = array<i64: 3, 4>, steps = array<i64: 2, 2>} : tensor<3x4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that slice with negative steps walks backwards from the start down to (not including) the limit.
// CHECK-LABEL: func.func @slice_negative_f32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.100000e+01, 9.000000e+00], [7.000000e+00, 5.000000e+00], [3.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: dtg.slice
// CHECK: return %[[R]]
func.func @slice_negative_f32() -> tensor<3x2xf32> {
  %a0 = dtg.constant dense<[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00], [8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01]]> : tensor<3x4xf32>
  %r = dtg.slice %a0 {starts = array<i64: 2, 3>, limits = array<i64: -1, 0>, steps = array<i64: -1, -2>} : tensor<3x4xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Tests that slice reverses integers with step -3.
// CHECK-LABEL: func.func @slice_negative_i32
// CHECK: %[[R:.+]] = dtg.constant dense<[16, 13, 10]> : tensor<3xi32>
// CHECK-NOT: dtg.slice
// CHECK: return %[[R]]
func.func @slice_negative_i32() -> tensor<3xi32> {
  %a0 = dtg.constant dense<[10, 11, 12, 13, 14, 15, 16]> : tensor<7xi32>
  %r = dtg.slice %a0 {starts = array<i64: 6>, limits = array<i64: -1>, steps = array<i64: -3>} : tensor<7xi32> -> tensor<3xi32>
  return %r : tensor<3xi32>
}

// -----

// Tests that gather on axis 0 counts negative indices from the end.
// CHECK-LABEL: func.func @gather_axis0_negative
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}9.500000e+00, 1.050000e+01, 1.150000e+01], [9.500000e+00, 1.050000e+01, 1.150000e+01], [5.000000e-01, 1.500000e+00, 2.500000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00]]> : tensor<4x3xf32>
// CHECK-NOT: dtg.gather
// CHECK: return %[[R]]
func.func @gather_axis0_negative() -> tensor<4x3xf32> {
  %a0 = dtg.constant dense<[[5.000000e-01, 1.500000e+00, 2.500000e+00], [3.500000e+00, 4.500000e+00, 5.500000e+00], [6.500000e+00, 7.500000e+00, 8.500000e+00], [9.500000e+00, 1.050000e+01, 1.150000e+01]]> : tensor<4x3xf32>
  %a1 = dtg.constant dense<[3, -1, 0, -4]> : tensor<4xi64>
  %r = dtg.gather %a0, %a1 {axis = 0 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that gather on a middle axis inserts the index shape there.
// CHECK-LABEL: func.func @gather_axis1_2d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[\[}}8, 9, 10, 11], [0, 1, 2, 3]], {{\[\[}}8, 9, 10, 11], [4, 5, 6, 7]]], {{\[\[\[}}20, 21, 22, 23], [12, 13, 14, 15]], {{\[\[}}20, 21, 22, 23], [16, 17, 18, 19]]]]> : tensor<2x2x2x4xi64>
// CHECK-NOT: dtg.gather
// CHECK: return %[[R]]
func.func @gather_axis1_2d() -> tensor<2x2x2x4xi64> {
  %a0 = dtg.constant dense<[[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]]> : tensor<2x3x4xi64>
  %a1 = dtg.constant dense<[[2, 0], [-1, 1]]> : tensor<2x2xi32>
  %r = dtg.gather %a0, %a1 {axis = 1 : i64} : tensor<2x3x4xi64>, tensor<2x2xi32> -> tensor<2x2x2x4xi64>
  return %r : tensor<2x2x2x4xi64>
}

// -----

// Tests that gather moves booleans.
// CHECK-LABEL: func.func @gather_i1
// CHECK: %[[R:.+]] = dtg.constant dense<[false, true, false, true]> : tensor<4xi1>
// CHECK-NOT: dtg.gather
// CHECK: return %[[R]]
func.func @gather_i1() -> tensor<4xi1> {
  %a0 = dtg.constant dense<[true, false, true]> : tensor<3xi1>
  %a1 = dtg.constant dense<[1, -1, 1, 0]> : tensor<4xi64>
  %r = dtg.gather %a0, %a1 {axis = 0 : i64} : tensor<3xi1>, tensor<4xi64> -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

// Tests that gather_elements picks one element per index along axis 1, counting negative indices from the end.
// CHECK-LABEL: func.func @gather_elements_axis1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}3.000000e+00, 1.000000e+00], [6.000000e+00, 5.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.gather_elements
// CHECK: return %[[R]]
func.func @gather_elements_axis1() -> tensor<2x2xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[2, 0], [-1, 1]]> : tensor<2x2xi64>
  %r = dtg.gather_elements %a0, %a1 {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Tests that gather_elements along axis 0 on integers.
// CHECK-LABEL: func.func @gather_elements_axis0
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}4, 2, 6]]> : tensor<1x3xi32>
// CHECK-NOT: dtg.gather_elements
// CHECK: return %[[R]]
func.func @gather_elements_axis0() -> tensor<1x3xi32> {
  %a0 = dtg.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %a1 = dtg.constant dense<[[1, 0, 1]]> : tensor<1x3xi64>
  %r = dtg.gather_elements %a0, %a1 {axis = 0 : i64} : tensor<2x3xi32>, tensor<1x3xi64> -> tensor<1x3xi32>
  return %r : tensor<1x3xi32>
}

// -----

// Tests that scatter_elements without add overwrites (the later update wins on a repeated index).
// CHECK-LABEL: func.func @scatter_assign
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 1.500000e+00, 2.500000e+00], [4.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: dtg.scatter_elements
// CHECK: return %[[R]]
func.func @scatter_assign() -> tensor<2x3xf32> {
  %a0 = dtg.constant dense<1.000000e+00> : tensor<2x3xf32>
  %a1 = dtg.constant dense<[[1, -1], [0, 0]]> : tensor<2x2xi64>
  %a2 = dtg.constant dense<[[1.500000e+00, 2.500000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %r = dtg.scatter_elements %a0, %a1, %a2 {axis = 1 : i64, reduction = "none"} : tensor<2x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Tests that scatter_elements with add accumulates repeated indices along axis 0.
// CHECK-LABEL: func.func @scatter_add_i32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}11, 22, 303], [104, 205, 36]]> : tensor<2x3xi32>
// CHECK-NOT: dtg.scatter_elements
// CHECK: return %[[R]]
func.func @scatter_add_i32() -> tensor<2x3xi32> {
  %a0 = dtg.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %a1 = dtg.constant dense<[[0, 0, 1], [1, 1, -2]]> : tensor<2x3xi64>
  %a2 = dtg.constant dense<[[10, 20, 30], [100, 200, 300]]> : tensor<2x3xi32>
  %r = dtg.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = "add"} : tensor<2x3xi32>, tensor<2x3xi64>, tensor<2x3xi32> -> tensor<2x3xi32>
  return %r : tensor<2x3xi32>
}

// -----

// Tests the mul, max and min reductions (opsets 16 and 18), each element
// combined with every update aimed at it in turn (index -1 is 2).
// CHECK-LABEL: func.func @scatter_mul_max_min
// CHECK-DAG: %[[MUL:.+]] = dtg.constant dense<[-4.000000e+00, 2.000000e+00, 6.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[MAX:.+]] = dtg.constant dense<[1.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[MIN:.+]] = dtg.constant dense<[-4.000000e+00, 2.000000e+00, 5.000000e-01]> : tensor<3xf32>
// CHECK-NOT: dtg.scatter_elements
// CHECK: return %[[MUL]], %[[MAX]], %[[MIN]]
func.func @scatter_mul_max_min() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %a1 = dtg.constant dense<[2, 2, 0, -1]> : tensor<4xi32>
  %a2 = dtg.constant dense<[5.000000e-01, 4.000000e+00, -4.000000e+00, 1.000000e+00]> : tensor<4xf32>
  %m = dtg.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = "mul"} : tensor<3xf32>, tensor<4xi32>, tensor<4xf32> -> tensor<3xf32>
  %x = dtg.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = "max"} : tensor<3xf32>, tensor<4xi32>, tensor<4xf32> -> tensor<3xf32>
  %n = dtg.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = "min"} : tensor<3xf32>, tensor<4xi32>, tensor<4xf32> -> tensor<3xf32>
  return %m, %x, %n : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that scatter_elements with add accumulates floats.
// CHECK-LABEL: func.func @scatter_add_f32
// CHECK: %[[R:.+]] = dtg.constant dense<[5.000000e+00, 2.000000e+00, 4.750000e+00]> : tensor<3xf32>
// CHECK-NOT: dtg.scatter_elements
// CHECK: return %[[R]]
func.func @scatter_add_f32() -> tensor<3xf32> {
  %a0 = dtg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %a1 = dtg.constant dense<[2, 2, 0, -1]> : tensor<4xi32>
  %a2 = dtg.constant dense<[5.000000e-01, 2.500000e-01, 4.000000e+00, 1.000000e+00]> : tensor<4xf32>
  %r = dtg.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = "add"} : tensor<3xf32>, tensor<4xi32>, tensor<4xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Tests that broadcast follows NumPy rules (leading and size-1 dimensions).
// CHECK-LABEL: func.func @broadcast_i32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}1, 1], [2, 2], [3, 3]], {{\[\[}}1, 1], [2, 2], [3, 3]]]> : tensor<2x3x2xi32>
// CHECK-NOT: dtg.broadcast
// CHECK: return %[[R]]
func.func @broadcast_i32() -> tensor<2x3x2xi32> {
  %a0 = dtg.constant dense<[[1], [2], [3]]> : tensor<3x1xi32>
  %r = dtg.broadcast %a0 : tensor<3x1xi32> -> tensor<2x3x2xi32>
  return %r : tensor<2x3x2xi32>
}

// -----

// Tests that broadcast repeats booleans.
// CHECK-LABEL: func.func @broadcast_i1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}true, false], [true, false]]> : tensor<2x2xi1>
// CHECK-NOT: dtg.broadcast
// CHECK: return %[[R]]
func.func @broadcast_i1() -> tensor<2x2xi1> {
  %a0 = dtg.constant dense<[true, false]> : tensor<2xi1>
  %r = dtg.broadcast %a0 : tensor<2xi1> -> tensor<2x2xi1>
  return %r : tensor<2x2xi1>
}

// -----

// Tests that tile repeats each dimension.
// CHECK-LABEL: func.func @tile_f32
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00, 3.000000e+00, 4.000000e+00, 3.000000e+00, 4.000000e+00], [1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00, 1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00, 3.000000e+00, 4.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<4x6xf32>
// CHECK-NOT: dtg.tile
// CHECK: return %[[R]]
func.func @tile_f32() -> tensor<4x6xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %r = dtg.tile %a0 {repeats = array<i64: 2, 3>} : tensor<2x2xf32> -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// Tests that tile repeats integers along one dimension.
// CHECK-LABEL: func.func @tile_i8
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}-1, 2], [-1, 2]]> : tensor<2x2xi8>
// CHECK-NOT: dtg.tile
// CHECK: return %[[R]]
func.func @tile_i8() -> tensor<2x2xi8> {
  %a0 = dtg.constant dense<[[-1, 2]]> : tensor<1x2xi8>
  %r = dtg.tile %a0 {repeats = array<i64: 2, 1>} : tensor<1x2xi8> -> tensor<2x2xi8>
  return %r : tensor<2x2xi8>
}

// -----

// Tests that constant padding fills with the value.
// CHECK-LABEL: func.func @pad_constant
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.500000e+00, 1.500000e+00, 1.500000e+00, 1.500000e+00, 1.500000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00, 1.500000e+00, 1.500000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 1.500000e+00, 1.500000e+00]]> : tensor<3x5xf32>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_constant() -> tensor<3x5xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.pad %a0 {low = array<i64: 1, 0>, high = array<i64: 0, 2>, mode = "constant", value = 1.5 : f64} : tensor<2x3xf32> -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}

// -----

// Tests that negative pads crop (here low crops while high pads).
// CHECK-LABEL: func.func @pad_crop
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}2.000000e+00, 3.000000e+00, 0.000000e+00]]> : tensor<1x3xf32>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_crop() -> tensor<1x3xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.pad %a0 {low = array<i64: 0, -1>, high = array<i64: -1, 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %r : tensor<1x3xf32>
}

// -----

// Tests that reflect padding mirrors without repeating the edge.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: %[[R:.+]] = dtg.constant dense<[4, 3, 2, 1, 2, 3, 4, 3, 2]> : tensor<9xi32>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_reflect() -> tensor<9xi32> {
  %a0 = dtg.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %r = dtg.pad %a0 {low = array<i64: 3>, high = array<i64: 2>, mode = "reflect", value = 0.0 : f64} : tensor<4xi32> -> tensor<9xi32>
  return %r : tensor<9xi32>
}

// -----

// Tests that reflect padding of a matrix combined with a crop.
// CHECK-LABEL: func.func @pad_reflect_2d
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}5.000000e+00, 6.000000e+00, 5.000000e+00], [2.000000e+00, 3.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00, 5.000000e+00], [2.000000e+00, 3.000000e+00, 2.000000e+00]]> : tensor<4x3xf32>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_reflect_2d() -> tensor<4x3xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.pad %a0 {low = array<i64: 1, -1>, high = array<i64: 1, 1>, mode = "reflect", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that edge padding repeats the border element.
// CHECK-LABEL: func.func @pad_edge
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00], [4.000000e+00, 4.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 6.000000e+00]]> : tensor<3x6xf32>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_edge() -> tensor<3x6xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
  %r = dtg.pad %a0 {low = array<i64: 1, 2>, high = array<i64: 0, 1>, mode = "edge", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<3x6xf32>
  return %r : tensor<3x6xf32>
}

// -----

// Tests that constant padding of integers truncates the fill value.
// CHECK-LABEL: func.func @pad_constant_int
// CHECK: %[[R:.+]] = dtg.constant dense<[-2, 5, 6, -2]> : tensor<4xi64>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_constant_int() -> tensor<4xi64> {
  %a0 = dtg.constant dense<[5, 6]> : tensor<2xi64>
  %r = dtg.pad %a0 {low = array<i64: 1>, high = array<i64: 1>, mode = "constant", value = -2.75 : f64} : tensor<2xi64> -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// Tests that constant padding of booleans fills with value != 0.
// CHECK-LABEL: func.func @pad_i1
// CHECK: %[[R:.+]] = dtg.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NOT: dtg.pad
// CHECK: return %[[R]]
func.func @pad_i1() -> tensor<2xi1> {
  %a0 = dtg.constant dense<false> : tensor<1xi1>
  %r = dtg.pad %a0 {low = array<i64: 1>, high = array<i64: 0>, mode = "constant", value = 1.0 : f64} : tensor<1xi1> -> tensor<2xi1>
  return %r : tensor<2xi1>
}

// -----

// Tests that trilu with upper keeps col - row >= k.
// CHECK-LABEL: func.func @trilu_upper
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [0.000000e+00, 0.000000e+00, 7.000000e+00, 8.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 1.200000e+01]]> : tensor<3x4xf32>
// CHECK-NOT: dtg.trilu
// CHECK: return %[[R]]
func.func @trilu_upper() -> tensor<3x4xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<3x4xf32>
  %r = dtg.trilu %a0 {upper = true, k = 1 : i64} : tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Tests that trilu without upper keeps col - row <= k (negative k).
// CHECK-LABEL: func.func @trilu_lower
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [5.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [9.000000e+00, 1.000000e+01, 0.000000e+00, 0.000000e+00]]> : tensor<3x4xf32>
// CHECK-NOT: dtg.trilu
// CHECK: return %[[R]]
func.func @trilu_lower() -> tensor<3x4xf32> {
  %a0 = dtg.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<3x4xf32>
  %r = dtg.trilu %a0 {upper = false, k = -1 : i64} : tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Tests that trilu applies to each matrix of a batch of integers.
// CHECK-LABEL: func.func @trilu_batched_int
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[\[}}1, 2], [0, 4]], {{\[\[}}5, 6], [0, 8]]]> : tensor<2x2x2xi32>
// CHECK-NOT: dtg.trilu
// CHECK: return %[[R]]
func.func @trilu_batched_int() -> tensor<2x2x2xi32> {
  %a0 = dtg.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi32>
  %r = dtg.trilu %a0 {upper = true, k = 0 : i64} : tensor<2x2x2xi32>
  return %r : tensor<2x2x2xi32>
}

// -----

// Tests that trilu zeroes booleans to false.
// CHECK-LABEL: func.func @trilu_i1
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[\[}}true, false, false], [true, true, false]]> : tensor<2x3xi1>
// CHECK-NOT: dtg.trilu
// CHECK: return %[[R]]
func.func @trilu_i1() -> tensor<2x3xi1> {
  %a0 = dtg.constant dense<true> : tensor<2x3xi1>
  %r = dtg.trilu %a0 {upper = false, k = 0 : i64} : tensor<2x3xi1>
  return %r : tensor<2x3xi1>
}
