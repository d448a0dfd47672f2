// RUN: dtc-opt %s | dtc-opt | FileCheck %s

// Tests that constants of every shape kind (splat, dense, rank 0, integer,
// boolean) print and parse back.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xi64>, tensor<f32>, tensor<2x3xf32>, tensor<3xi1>) {
  // CHECK: dtg.constant dense<[1, 2]> : tensor<2xi64>
  %a = dtg.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: dtg.constant dense<1.500000e+00> : tensor<f32>
  %b = dtg.constant dense<1.5> : tensor<f32>
  // CHECK: dtg.constant dense<0.000000e+00> : tensor<2x3xf32>
  %c = dtg.constant dense<0.0> : tensor<2x3xf32>
  // CHECK: dtg.constant dense<[true, false, true]> : tensor<3xi1>
  %d = dtg.constant dense<[true, false, true]> : tensor<3xi1>
  return %a, %b, %c, %d : tensor<2xi64>, tensor<f32>, tensor<2x3xf32>, tensor<3xi1>
}

// Tests that every unary math op of one float operand round-trips.
// CHECK-LABEL: func.func @unary_float
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
func.func @unary_float(%x: tensor<4x8xf32>) {
  // CHECK: dtg.exp %[[X]] : tensor<4x8xf32>
  %0 = dtg.exp %x : tensor<4x8xf32>
  // CHECK: dtg.log %[[X]] : tensor<4x8xf32>
  %1 = dtg.log %x : tensor<4x8xf32>
  // CHECK: dtg.sqrt %[[X]] : tensor<4x8xf32>
  %2 = dtg.sqrt %x : tensor<4x8xf32>
  // CHECK: dtg.rsqrt %[[X]] : tensor<4x8xf32>
  %3 = dtg.rsqrt %x : tensor<4x8xf32>
  // CHECK: dtg.reciprocal %[[X]] : tensor<4x8xf32>
  %4 = dtg.reciprocal %x : tensor<4x8xf32>
  // CHECK: dtg.floor %[[X]] : tensor<4x8xf32>
  %5 = dtg.floor %x : tensor<4x8xf32>
  // CHECK: dtg.ceil %[[X]] : tensor<4x8xf32>
  %6 = dtg.ceil %x : tensor<4x8xf32>
  // CHECK: dtg.round %[[X]] : tensor<4x8xf32>
  %7 = dtg.round %x : tensor<4x8xf32>
  // CHECK: dtg.sin %[[X]] : tensor<4x8xf32>
  %8 = dtg.sin %x : tensor<4x8xf32>
  // CHECK: dtg.cos %[[X]] : tensor<4x8xf32>
  %9 = dtg.cos %x : tensor<4x8xf32>
  // CHECK: dtg.tan %[[X]] : tensor<4x8xf32>
  %10 = dtg.tan %x : tensor<4x8xf32>
  // CHECK: dtg.asin %[[X]] : tensor<4x8xf32>
  %11 = dtg.asin %x : tensor<4x8xf32>
  // CHECK: dtg.acos %[[X]] : tensor<4x8xf32>
  %12 = dtg.acos %x : tensor<4x8xf32>
  // CHECK: dtg.atan %[[X]] : tensor<4x8xf32>
  %13 = dtg.atan %x : tensor<4x8xf32>
  // CHECK: dtg.sinh %[[X]] : tensor<4x8xf32>
  %14 = dtg.sinh %x : tensor<4x8xf32>
  // CHECK: dtg.cosh %[[X]] : tensor<4x8xf32>
  %15 = dtg.cosh %x : tensor<4x8xf32>
  // CHECK: dtg.asinh %[[X]] : tensor<4x8xf32>
  %16 = dtg.asinh %x : tensor<4x8xf32>
  // CHECK: dtg.acosh %[[X]] : tensor<4x8xf32>
  %17 = dtg.acosh %x : tensor<4x8xf32>
  // CHECK: dtg.atanh %[[X]] : tensor<4x8xf32>
  %18 = dtg.atanh %x : tensor<4x8xf32>
  // CHECK: dtg.tanh %[[X]] : tensor<4x8xf32>
  %19 = dtg.tanh %x : tensor<4x8xf32>
  // CHECK: dtg.erf %[[X]] : tensor<4x8xf32>
  %20 = dtg.erf %x : tensor<4x8xf32>
  // CHECK: dtg.sigmoid %[[X]] : tensor<4x8xf32>
  %21 = dtg.sigmoid %x : tensor<4x8xf32>
  // CHECK: dtg.softplus %[[X]] : tensor<4x8xf32>
  %22 = dtg.softplus %x : tensor<4x8xf32>
  // CHECK: dtg.softsign %[[X]] : tensor<4x8xf32>
  %23 = dtg.softsign %x : tensor<4x8xf32>
  return
}

// Tests that the unary ops defined on any element type accept integers, and
// that dtg.not takes booleans.
// CHECK-LABEL: func.func @unary_any
// CHECK-SAME: (%[[I:.+]]: tensor<3xi32>, %[[B:.+]]: tensor<3xi1>)
func.func @unary_any(%i: tensor<3xi32>, %b: tensor<3xi1>) {
  // CHECK: dtg.neg %[[I]] : tensor<3xi32>
  %0 = dtg.neg %i : tensor<3xi32>
  // CHECK: dtg.abs %[[I]] : tensor<3xi32>
  %1 = dtg.abs %i : tensor<3xi32>
  // CHECK: dtg.sign %[[I]] : tensor<3xi32>
  %2 = dtg.sign %i : tensor<3xi32>
  // CHECK: dtg.relu %[[I]] : tensor<3xi32>
  %3 = dtg.relu %i : tensor<3xi32>
  // CHECK: dtg.not %[[B]] : tensor<3xi1>
  %4 = dtg.not %b : tensor<3xi1>
  return
}

// Tests that the activations with attributes keep them.
// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @activations(%x: tensor<4xf32>) {
  // CHECK: dtg.gelu %[[X]] {approximate = false} : tensor<4xf32>
  %0 = dtg.gelu %x {approximate = false} : tensor<4xf32>
  // CHECK: dtg.gelu %[[X]] {approximate = true} : tensor<4xf32>
  %1 = dtg.gelu %x {approximate = true} : tensor<4xf32>
  // CHECK: dtg.leaky_relu %[[X]] {alpha = 1.000000e-02 : f64} : tensor<4xf32>
  %2 = dtg.leaky_relu %x {alpha = 0.01 : f64} : tensor<4xf32>
  // CHECK: dtg.elu %[[X]] {alpha = 1.000000e+00 : f64} : tensor<4xf32>
  %3 = dtg.elu %x {alpha = 1.0 : f64} : tensor<4xf32>
  // CHECK: dtg.celu %[[X]] {alpha = 2.000000e+00 : f64} : tensor<4xf32>
  %4 = dtg.celu %x {alpha = 2.0 : f64} : tensor<4xf32>
  // CHECK: dtg.selu %[[X]] {alpha = 1.670000e+00 : f64, gamma = 1.050000e+00 : f64} : tensor<4xf32>
  %5 = dtg.selu %x {alpha = 1.67 : f64, gamma = 1.05 : f64} : tensor<4xf32>
  // CHECK: dtg.hard_sigmoid %[[X]] {alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64} : tensor<4xf32>
  %6 = dtg.hard_sigmoid %x {alpha = 0.2 : f64, beta = 0.5 : f64} : tensor<4xf32>
  // CHECK: dtg.thresholded_relu %[[X]] {alpha = 1.000000e+00 : f64} : tensor<4xf32>
  %7 = dtg.thresholded_relu %x {alpha = 1.0 : f64} : tensor<4xf32>
  return
}

// Tests that clip round-trips with both, one or no bounds.
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @clip(%x: tensor<4xf32>) {
  // CHECK: dtg.clip %[[X]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %0 = dtg.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  // CHECK: dtg.clip %[[X]] {min = -1.000000e+00 : f64} : tensor<4xf32>
  %1 = dtg.clip %x {min = -1.0 : f64} : tensor<4xf32>
  // CHECK: dtg.clip %[[X]] : tensor<4xf32>
  %2 = dtg.clip %x : tensor<4xf32>
  return
}

// Tests that the float predicates is_nan and is_inf round-trip.
// CHECK-LABEL: func.func @predicates
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @predicates(%x: tensor<4xf32>) {
  // CHECK: dtg.is_nan %[[X]] : tensor<4xf32> -> tensor<4xi1>
  %0 = dtg.is_nan %x : tensor<4xf32> -> tensor<4xi1>
  // CHECK: dtg.is_inf %[[X]] {detect_negative = true, detect_positive = false} : tensor<4xf32> -> tensor<4xi1>
  %1 = dtg.is_inf %x {detect_negative = true, detect_positive = false} : tensor<4xf32> -> tensor<4xi1>
  return
}

// Tests that the binary arithmetic ops round-trip with broadcasting operands.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // CHECK: dtg.add %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %0 = dtg.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.sub %[[B]], %[[A]] : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = dtg.sub %b, %a : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.mul %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = dtg.mul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.div %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %3 = dtg.div %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.pow %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = dtg.pow %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.max %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %5 = dtg.max %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.min %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %6 = dtg.min %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.mod %[[A]], %[[B]] {fmod = true} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %7 = dtg.mod %a, %b {fmod = true} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return
}

// Tests that the logical ops round-trip on booleans.
// CHECK-LABEL: func.func @logical
// CHECK-SAME: (%[[P:.+]]: tensor<2x3xi1>, %[[Q:.+]]: tensor<1x3xi1>)
func.func @logical(%p: tensor<2x3xi1>, %q: tensor<1x3xi1>) {
  // CHECK: dtg.and %[[P]], %[[Q]] : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  %0 = dtg.and %p, %q : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  // CHECK: dtg.or %[[P]], %[[Q]] : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  %1 = dtg.or %p, %q : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  // CHECK: dtg.xor %[[P]], %[[Q]] : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  %2 = dtg.xor %p, %q : tensor<2x3xi1>, tensor<1x3xi1> -> tensor<2x3xi1>
  return
}

// Tests that the comparisons round-trip and produce booleans.
// CHECK-LABEL: func.func @compare
// CHECK-SAME: (%[[A:.+]]: tensor<4xi64>, %[[B:.+]]: tensor<i64>)
func.func @compare(%a: tensor<4xi64>, %b: tensor<i64>) {
  // CHECK: dtg.equal %[[A]], %[[B]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %0 = dtg.equal %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  // CHECK: dtg.less %[[A]], %[[B]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %1 = dtg.less %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  // CHECK: dtg.less_equal %[[A]], %[[B]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %2 = dtg.less_equal %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  // CHECK: dtg.greater %[[A]], %[[B]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %3 = dtg.greater %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  // CHECK: dtg.greater_equal %[[A]], %[[B]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  %4 = dtg.greater_equal %a, %b : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
  return
}

// Tests that where broadcasts its three operands and cast changes the
// element type.
// CHECK-LABEL: func.func @where_cast
// CHECK-SAME: (%[[C:.+]]: tensor<4xi1>, %[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<f32>)
func.func @where_cast(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) {
  // CHECK: dtg.where %[[C]], %[[A]], %[[B]] : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %0 = dtg.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  // CHECK: dtg.cast %[[A]] : tensor<4xf32> -> tensor<4xi64>
  %1 = dtg.cast %a : tensor<4xf32> -> tensor<4xi64>
  return
}

// Tests that reshape, transpose, broadcast and tile round-trip.
// CHECK-LABEL: func.func @reshape_like
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[Y:.+]]: tensor<3x1xf32>)
func.func @reshape_like(%x: tensor<2x3xf32>, %y: tensor<3x1xf32>) {
  // CHECK: dtg.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
  %0 = dtg.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  // CHECK: dtg.transpose %[[X]] {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: dtg.broadcast %[[Y]] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %2 = dtg.broadcast %y : tensor<3x1xf32> -> tensor<2x3x4xf32>
  // CHECK: dtg.tile %[[X]] {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  %3 = dtg.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// Tests that concat, slice, pad and trilu round-trip.
// CHECK-LABEL: func.func @data_movement
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<1x3xf32>, %[[S:.+]]: tensor<4x4xf32>)
func.func @data_movement(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %s: tensor<4x4xf32>) {
  // CHECK: dtg.concat %[[A]], %[[B]] {axis = 0 : i64} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
  %0 = dtg.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
  // CHECK: dtg.slice %[[A]] {limits = array<i64: 2, 3>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x2xf32>
  %1 = dtg.slice %a {starts = array<i64: 0, 1>, limits = array<i64: 2, 3>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x2xf32>
  // CHECK: dtg.slice %[[A]] {limits = array<i64: -1, -1>, starts = array<i64: 1, 2>, steps = array<i64: -1, -2>} : tensor<2x3xf32> -> tensor<2x2xf32>
  %2 = dtg.slice %a {starts = array<i64: 1, 2>, limits = array<i64: -1, -1>, steps = array<i64: -1, -2>} : tensor<2x3xf32> -> tensor<2x2xf32>
  // CHECK: dtg.pad %[[A]] {high = array<i64: 0, 1>, low = array<i64: 0, 1>, mode = "constant", value = 0.000000e+00 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
  %3 = dtg.pad %a {low = array<i64: 0, 1>, high = array<i64: 0, 1>, mode = "constant", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<2x5xf32>
  // CHECK: dtg.pad %[[A]] {high = array<i64: 0, -1>, low = array<i64: 1, 0>, mode = "edge", value = 0.000000e+00 : f64} : tensor<2x3xf32> -> tensor<3x2xf32>
  %4 = dtg.pad %a {low = array<i64: 1, 0>, high = array<i64: 0, -1>, mode = "edge", value = 0.0 : f64} : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: dtg.trilu %[[S]] {k = 0 : i64, upper = true} : tensor<4x4xf32>
  %5 = dtg.trilu %s {upper = true, k = 0 : i64} : tensor<4x4xf32>
  return
}

// Tests that the gather and scatter family round-trips.
// CHECK-LABEL: func.func @gather_scatter
// CHECK-SAME: (%[[T:.+]]: tensor<100x8xf32>, %[[IDS:.+]]: tensor<4x5xi64>, %[[X:.+]]: tensor<2x3xf32>, %[[I:.+]]: tensor<2x2xi32>, %[[U:.+]]: tensor<2x2xf32>)
func.func @gather_scatter(%t: tensor<100x8xf32>, %ids: tensor<4x5xi64>, %x: tensor<2x3xf32>, %i: tensor<2x2xi32>, %u: tensor<2x2xf32>) {
  // CHECK: dtg.gather %[[T]], %[[IDS]] {axis = 0 : i64} : tensor<100x8xf32>, tensor<4x5xi64> -> tensor<4x5x8xf32>
  %0 = dtg.gather %t, %ids {axis = 0 : i64} : tensor<100x8xf32>, tensor<4x5xi64> -> tensor<4x5x8xf32>
  // CHECK: dtg.gather_elements %[[X]], %[[I]] {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi32> -> tensor<2x2xf32>
  %1 = dtg.gather_elements %x, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi32> -> tensor<2x2xf32>
  // CHECK: dtg.scatter_elements %[[X]], %[[I]], %[[U]] {axis = 1 : i64, reduction = "add"} : tensor<2x3xf32>, tensor<2x2xi32>, tensor<2x2xf32> -> tensor<2x3xf32>
  %2 = dtg.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : tensor<2x3xf32>, tensor<2x2xi32>, tensor<2x2xf32> -> tensor<2x3xf32>
  return
}

// Tests that matmul (with broadcast batch), gemm (with and without C) and
// einsum round-trip.
// CHECK-LABEL: func.func @contractions
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x8xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[C:.+]]: tensor<16xf32>)
func.func @contractions(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %c: tensor<16xf32>) {
  // CHECK: dtg.matmul %[[A]], %[[B]] : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %0 = dtg.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  // CHECK: dtg.gemm %[[X]], %[[W]], %[[C]] {alpha = 1.000000e+00 : f64, beta = 5.000000e-01 : f64, trans_a = false, trans_b = true} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %1 = dtg.gemm %x, %w, %c {alpha = 1.0 : f64, beta = 0.5 : f64, trans_a = false, trans_b = true} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>
  // CHECK: dtg.gemm %[[X]], %[[B]] {alpha = 2.000000e+00 : f64, beta = 0.000000e+00 : f64, trans_a = false, trans_b = false} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %2 = dtg.gemm %x, %b {alpha = 2.0 : f64, beta = 0.0 : f64, trans_a = false, trans_b = false} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: dtg.einsum %[[A]], %[[B]] {equation = "bij,jk->bik"} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %3 = dtg.einsum %a, %b {equation = "bij,jk->bik"} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return
}

// Tests that conv (with and without bias) and both poolings round-trip.
// CHECK-LABEL: func.func @conv_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
func.func @conv_pool(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // CHECK: dtg.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %0 = dtg.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  // CHECK: dtg.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x3x3xf32>
  %1 = dtg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x3x3xf32>
  // CHECK: dtg.max_pool %[[X]] {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %2 = dtg.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: dtg.avg_pool %[[X]] {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  %3 = dtg.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  return
}

// Tests that both batch norms round-trip (training has three results and
// prints unbiased_running_var only when it is not the default).
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4x4xf32>, %[[P:.+]]: tensor<3xf32>)
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %p: tensor<3xf32>) {
  // CHECK: dtg.batch_norm_inference %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>
  %0 = dtg.batch_norm_inference %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = dtg.batch_norm_training %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f64, momentum = 9.000000e-01 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  %1:3 = dtg.batch_norm_training %x, %p, %p, %p, %p {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}} = dtg.batch_norm_training %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, unbiased_running_var = false} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  %2:3 = dtg.batch_norm_training %x, %p, %p, %p, %p {epsilon = 1.0e-3 : f64, momentum = 0.0 : f64, unbiased_running_var = false} : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// Tests that layer_norm round-trips with and without a bias, and that softmax,
// log_softmax and dropout do.
// CHECK-LABEL: func.func @norms
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[G:.+]]: tensor<8xf32>, %[[K:.+]]: tensor<2xi64>)
func.func @norms(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %k: tensor<2xi64>) {
  // CHECK: dtg.layer_norm %[[X]], %[[G]], %[[G]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %0 = dtg.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  // CHECK: dtg.layer_norm %[[X]], %[[G]] {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %1 = dtg.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  // CHECK: dtg.softmax %[[X]] {axis = 2 : i64} : tensor<2x4x8xf32>
  %2 = dtg.softmax %x {axis = 2 : i64} : tensor<2x4x8xf32>
  // CHECK: dtg.log_softmax %[[X]] {axis = 0 : i64} : tensor<2x4x8xf32>
  %3 = dtg.log_softmax %x {axis = 0 : i64} : tensor<2x4x8xf32>
  // CHECK: %{{.+}}, %{{.+}} = dtg.dropout %[[X]], %[[K]] {ratio = 1.000000e-01 : f64, stream = 3 : i64} : tensor<2x4x8xf32>, tensor<2xi64> -> tensor<2x4x8xf32>, tensor<2x4x8xi1>
  %4:2 = dtg.dropout %x, %k {ratio = 0.1 : f64, stream = 3 : i64} : tensor<2x4x8xf32>, tensor<2xi64> -> tensor<2x4x8xf32>, tensor<2x4x8xi1>
  return
}

// Tests that every reduction round-trips, with and without kept dimensions.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
func.func @reductions(%x: tensor<4x8xf32>) {
  // CHECK: dtg.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %0 = dtg.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  // CHECK: dtg.reduce_mean %[[X]] {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  %1 = dtg.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  // CHECK: dtg.reduce_max %[[X]] {axes = array<i64: 0>, keepdims = false} : tensor<4x8xf32> -> tensor<8xf32>
  %2 = dtg.reduce_max %x {axes = array<i64: 0>, keepdims = false} : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK: dtg.reduce_min %[[X]] {axes = array<i64>, keepdims = true} : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = dtg.reduce_min %x {axes = array<i64>, keepdims = true} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: dtg.reduce_prod %[[X]] {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  %4 = dtg.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK: dtg.reduce_logsumexp %[[X]] {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %5 = dtg.reduce_logsumexp %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// Tests that argmax, argmin and cumsum round-trip.
// CHECK-LABEL: func.func @scans
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
func.func @scans(%x: tensor<4x8xf32>) {
  // CHECK: dtg.argmax %[[X]] {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<4x8xf32> -> tensor<4xi64>
  %0 = dtg.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<4x8xf32> -> tensor<4xi64>
  // CHECK: dtg.argmin %[[X]] {axis = 0 : i64, keepdims = true, select_last_index = true} : tensor<4x8xf32> -> tensor<1x8xi64>
  %1 = dtg.argmin %x {axis = 0 : i64, keepdims = true, select_last_index = true} : tensor<4x8xf32> -> tensor<1x8xi64>
  // CHECK: dtg.cumsum %[[X]] {axis = 1 : i64, exclusive = true, reverse = false} : tensor<4x8xf32>
  %2 = dtg.cumsum %x {axis = 1 : i64, exclusive = true, reverse = false} : tensor<4x8xf32>
  return
}

// Tests that nll_loss round-trips with each reduction, a class weight and an
// ignored index.
// CHECK-LABEL: func.func @nll_loss
// CHECK-SAME: (%[[LOGP:.+]]: tensor<4x10x3xf32>, %[[T:.+]]: tensor<4x3xi64>, %[[W:.+]]: tensor<10xf32>)
func.func @nll_loss(%logp: tensor<4x10x3xf32>, %t: tensor<4x3xi64>, %w: tensor<10xf32>) {
  // CHECK: dtg.nll_loss %[[LOGP]], %[[T]] {reduction = "mean"} : tensor<4x10x3xf32>, tensor<4x3xi64> -> tensor<f32>
  %0 = dtg.nll_loss %logp, %t {reduction = "mean"} : tensor<4x10x3xf32>, tensor<4x3xi64> -> tensor<f32>
  // CHECK: dtg.nll_loss %[[LOGP]], %[[T]], %[[W]] {ignore_index = -100 : i64, reduction = "none"} : tensor<4x10x3xf32>, tensor<4x3xi64>, tensor<10xf32> -> tensor<4x3xf32>
  %1 = dtg.nll_loss %logp, %t, %w {reduction = "none", ignore_index = -100 : i64} : tensor<4x10x3xf32>, tensor<4x3xi64>, tensor<10xf32> -> tensor<4x3xf32>
  // CHECK: dtg.nll_loss %[[LOGP]], %[[T]] {reduction = "sum"} : tensor<4x10x3xf32>, tensor<4x3xi64> -> tensor<f32>
  %2 = dtg.nll_loss %logp, %t {reduction = "sum"} : tensor<4x10x3xf32>, tensor<4x3xi64> -> tensor<f32>
  return
}

// Tests that the gradient primitives of convolution and pooling round-trip.
// CHECK-LABEL: func.func @nn_gradient_primitives
// CHECK-SAME: (%[[G:.+]]: tensor<1x4x4x4xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[X:.+]]: tensor<1x3x8x8xf32>, %[[GP:.+]]: tensor<1x3x4x4xf32>, %[[GA:.+]]: tensor<1x3x5x5xf32>)
func.func @nn_gradient_primitives(%g: tensor<1x4x4x4xf32>, %w: tensor<4x3x3x3xf32>, %x: tensor<1x3x8x8xf32>, %gp: tensor<1x3x4x4xf32>, %ga: tensor<1x3x5x5xf32>) {
  // CHECK: dtg.conv_input_grad %[[G]], %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  %0 = dtg.conv_input_grad %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x8x8xf32>
  // CHECK: dtg.conv_weight_grad %[[G]], %[[X]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x4x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x3xf32>
  %1 = dtg.conv_weight_grad %g, %x {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x4x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<4x3x3x3xf32>
  // CHECK: dtg.max_pool_grad %[[GP]], %[[X]] {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  %2 = dtg.max_pool_grad %gp, %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x3x4x4xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  // CHECK: dtg.avg_pool_grad %[[GA]] {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x8x8xf32>
  %3 = dtg.avg_pool_grad %ga {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false} : tensor<1x3x5x5xf32> -> tensor<1x3x8x8xf32>
  return
}

// Tests that the gradient primitives of gather, slice and pad round-trip.
// CHECK-LABEL: func.func @shape_gradient_primitives
// CHECK-SAME: (%[[G:.+]]: tensor<4x5x8xf32>, %[[IDS:.+]]: tensor<4x5xi64>, %[[S:.+]]: tensor<2x3xf32>, %[[P:.+]]: tensor<2x6xf32>)
func.func @shape_gradient_primitives(%g: tensor<4x5x8xf32>, %ids: tensor<4x5xi64>, %s: tensor<2x3xf32>, %p: tensor<2x6xf32>) {
  // CHECK: dtg.gather_grad %[[G]], %[[IDS]] {axis = 0 : i64} : tensor<4x5x8xf32>, tensor<4x5xi64> -> tensor<100x8xf32>
  %0 = dtg.gather_grad %g, %ids {axis = 0 : i64} : tensor<4x5x8xf32>, tensor<4x5xi64> -> tensor<100x8xf32>
  // CHECK: dtg.slice_grad %[[S]] {limits = array<i64: 2, -1>, starts = array<i64: 0, 4>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x5xf32>
  %1 = dtg.slice_grad %s {starts = array<i64: 0, 4>, limits = array<i64: 2, -1>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x5xf32>
  // CHECK: dtg.pad_grad %[[P]] {high = array<i64: 0, 1>, low = array<i64: 0, 2>, mode = "reflect"} : tensor<2x6xf32> -> tensor<2x3xf32>
  %2 = dtg.pad_grad %p {low = array<i64: 0, 2>, high = array<i64: 0, 1>, mode = "reflect"} : tensor<2x6xf32> -> tensor<2x3xf32>
  return
}
