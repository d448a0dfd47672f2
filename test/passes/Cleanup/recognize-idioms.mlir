// RUN: dtc-opt %s -split-input-file -dtc-recognize-idioms | FileCheck %s

//===----------------------------------------------------------------------===//
// GELU, exact (erf)
//===----------------------------------------------------------------------===//

// Tests that exact GELU as PyTorch 1.13 exports it (opsets 13 and 14:
// Div -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5)) becomes dtg.gelu.
// CHECK-LABEL: func.func @gelu_exported
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = false} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_exported(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %c0 = dtg.constant dense<1.41421354> : tensor<f32>
  %0 = dtg.div %x, %c0 : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %1 = dtg.erf %0 : tensor<2x4x8xf32>
  %c1 = dtg.constant dense<1.0> : tensor<f32>
  %2 = dtg.add %1, %c1 : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %3 = dtg.mul %x, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %c2 = dtg.constant dense<0.5> : tensor<f32>
  %4 = dtg.mul %3, %c2 : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}

// -----

// Tests that the constants may sit on either side of the commutative ops and
// that the 0.5 may be applied to x first; splat constants of a shape that
// leaves x's shape alone match too.
// CHECK-LABEL: func.func @gelu_commuted
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = false} : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_commuted(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = dtg.constant dense<1.41421354> : tensor<8xf32>
  %one = dtg.constant dense<1.0> : tensor<1x1xf32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %0 = dtg.div %x, %sqrt2 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = dtg.erf %0 : tensor<4x8xf32>
  %2 = dtg.add %one, %1 : tensor<1x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = dtg.mul %half, %x : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = dtg.mul %2, %3 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// Tests that x * (1/sqrt(2)) in place of x / sqrt(2) is recognized.
// CHECK-LABEL: func.func @gelu_inverse_sqrt2
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = false} : tensor<8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_inverse_sqrt2(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = dtg.constant dense<0.707106769> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %0 = dtg.mul %c, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %1 = dtg.erf %0 : tensor<8xf32>
  %2 = dtg.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = dtg.mul %2, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = dtg.mul %half, %3 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// Tests that f16 GELU matches with f16 constants (which hold sqrt(2) only to
// about 1e-4), and that two GELUs of one function are both rewritten.
// CHECK-LABEL: func.func @gelu_f16_twice
// CHECK-SAME: (%[[X:.+]]: tensor<8xf16>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = false} : tensor<8xf16>
// CHECK-NEXT: %[[Z:.+]] = dtg.gelu %[[Y]] {approximate = false} : tensor<8xf16>
// CHECK-NEXT: return %[[Z]]
func.func @gelu_f16_twice(%x: tensor<8xf16>) -> tensor<8xf16> {
  %sqrt2 = dtg.constant dense<1.4140625> : tensor<f16>
  %one = dtg.constant dense<1.0> : tensor<f16>
  %half = dtg.constant dense<0.5> : tensor<f16>
  %0 = dtg.div %x, %sqrt2 : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  %1 = dtg.erf %0 : tensor<8xf16>
  %2 = dtg.add %1, %one : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  %3 = dtg.mul %x, %2 : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
  %y = dtg.mul %3, %half : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  %4 = dtg.div %y, %sqrt2 : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  %5 = dtg.erf %4 : tensor<8xf16>
  %6 = dtg.add %5, %one : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  %7 = dtg.mul %y, %6 : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
  %z = dtg.mul %7, %half : tensor<8xf16>, tensor<f16> -> tensor<8xf16>
  return %z : tensor<8xf16>
}

// -----

// Tests that GELU is left alone when an intermediate (here the erf) has a
// user outside the idiom.
// CHECK-LABEL: func.func @gelu_shared_intermediate
// CHECK-NOT: dtg.gelu
// CHECK: %[[E:.+]] = dtg.erf
// CHECK: return %{{.+}}, %[[E]]
func.func @gelu_shared_intermediate(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = dtg.constant dense<1.41421354> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %0 = dtg.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.erf %0 : tensor<8xf32>
  %2 = dtg.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = dtg.mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = dtg.mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that constants off by more than 1e-6 relative do not match: 1.4142
// for sqrt(2) and 0.4999 for the half.
// CHECK-LABEL: func.func @gelu_wrong_constants
// CHECK-NOT: dtg.gelu
// CHECK: dtg.erf
// CHECK: dtg.erf
// CHECK-NOT: dtg.gelu
func.func @gelu_wrong_constants(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = dtg.constant dense<1.41421354> : tensor<f32>
  %bad_sqrt2 = dtg.constant dense<1.4142> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %bad_half = dtg.constant dense<0.4999> : tensor<f32>
  %0 = dtg.div %x, %bad_sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.erf %0 : tensor<8xf32>
  %2 = dtg.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = dtg.mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = dtg.mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %5 = dtg.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %6 = dtg.erf %5 : tensor<8xf32>
  %7 = dtg.add %6, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %8 = dtg.mul %x, %7 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %9 = dtg.mul %8, %bad_half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4, %9 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that the erf must be of the same x that is multiplied.
// CHECK-LABEL: func.func @gelu_two_inputs
// CHECK-NOT: dtg.gelu
// CHECK: dtg.erf
func.func @gelu_two_inputs(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %sqrt2 = dtg.constant dense<1.41421354> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %0 = dtg.div %w, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.erf %0 : tensor<8xf32>
  %2 = dtg.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = dtg.mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = dtg.mul %3, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// Tests that a constant that broadcasts x to a larger shape blocks the
// rewrite (dtg.gelu keeps its operand's shape).
// CHECK-LABEL: func.func @gelu_broadcasting_constant
// CHECK-NOT: dtg.gelu
// CHECK: dtg.erf
func.func @gelu_broadcasting_constant(%x: tensor<8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = dtg.constant dense<1.41421354> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<2x8xf32>
  %0 = dtg.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.erf %0 : tensor<8xf32>
  %2 = dtg.add %1, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %3 = dtg.mul %x, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = dtg.mul %3, %half : tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// GELU, tanh approximation
//===----------------------------------------------------------------------===//

// -----

// Tests that GELU(approximate='tanh') as PyTorch 1.13 exports it (x^3 as
// Mul(x, Mul(x, x)), constants on the left) becomes dtg.gelu.
// CHECK-LABEL: func.func @gelu_tanh_exported
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = true} : tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh_exported(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = dtg.mul %x, %x : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %1 = dtg.mul %x, %0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %c0 = dtg.constant dense<4.471500e-02> : tensor<f32>
  %2 = dtg.mul %c0, %1 : tensor<f32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %3 = dtg.add %x, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %c1 = dtg.constant dense<0.797884583> : tensor<f32>
  %4 = dtg.mul %c1, %3 : tensor<f32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %5 = dtg.tanh %4 : tensor<2x4x8xf32>
  %c2 = dtg.constant dense<1.0> : tensor<f32>
  %6 = dtg.add %c2, %5 : tensor<f32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %7 = dtg.mul %x, %6 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %c3 = dtg.constant dense<0.5> : tensor<f32>
  %8 = dtg.mul %c3, %7 : tensor<f32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %8 : tensor<2x4x8xf32>
}

// -----

// Tests that the tanh form with x^3 as Pow(x, 3), the cube multiplied as
// (x * x) * x, and constants on the right is recognized.
// CHECK-LABEL: func.func @gelu_tanh_variants
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.gelu %[[X]] {approximate = true} : tensor<8xf32>
// CHECK-NEXT: %[[Z:.+]] = dtg.gelu %[[X]] {approximate = true} : tensor<8xf32>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @gelu_tanh_variants(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %three = dtg.constant dense<3.0> : tensor<f32>
  %k = dtg.constant dense<0.044715> : tensor<f32>
  %s = dtg.constant dense<0.797884583> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  %0 = dtg.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.mul %0, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %2 = dtg.add %1, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %3 = dtg.mul %2, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %4 = dtg.tanh %3 : tensor<8xf32>
  %5 = dtg.add %4, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %6 = dtg.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %7 = dtg.mul %6, %5 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %10 = dtg.mul %x, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %11 = dtg.mul %10, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %12 = dtg.mul %k, %11 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %13 = dtg.add %x, %12 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %14 = dtg.mul %s, %13 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %15 = dtg.tanh %14 : tensor<8xf32>
  %16 = dtg.add %one, %15 : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %17 = dtg.mul %16, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %18 = dtg.mul %17, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %7, %18 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that the tanh form is left alone with a wrong cubic coefficient, a
// square in place of the cube, or a shared x^3.
// CHECK-LABEL: func.func @gelu_tanh_negative
// CHECK-NOT: dtg.gelu
// CHECK: dtg.tanh
// CHECK: dtg.tanh
// CHECK: dtg.tanh
// CHECK-NOT: dtg.gelu
func.func @gelu_tanh_negative(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %three = dtg.constant dense<3.0> : tensor<f32>
  %k = dtg.constant dense<0.044715> : tensor<f32>
  %bad_k = dtg.constant dense<0.0447> : tensor<f32>
  %s = dtg.constant dense<0.797884583> : tensor<f32>
  %one = dtg.constant dense<1.0> : tensor<f32>
  %half = dtg.constant dense<0.5> : tensor<f32>
  // Wrong coefficient.
  %0 = dtg.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = dtg.mul %0, %bad_k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %2 = dtg.add %1, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %3 = dtg.mul %2, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %4 = dtg.tanh %3 : tensor<8xf32>
  %5 = dtg.add %4, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %6 = dtg.mul %x, %5 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %7 = dtg.mul %6, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  // x^2 in place of x^3.
  %10 = dtg.pow %x, %two : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %11 = dtg.mul %10, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %12 = dtg.add %11, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %13 = dtg.mul %12, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %14 = dtg.tanh %13 : tensor<8xf32>
  %15 = dtg.add %14, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %16 = dtg.mul %x, %15 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %17 = dtg.mul %16, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  // x^3 also returned.
  %20 = dtg.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %21 = dtg.mul %20, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %22 = dtg.add %21, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %23 = dtg.mul %22, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %24 = dtg.tanh %23 : tensor<8xf32>
  %25 = dtg.add %24, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %26 = dtg.mul %x, %25 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %27 = dtg.mul %26, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %7, %17, %27, %20 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

// -----

// Tests that nn.LayerNorm(8) as PyTorch 1.13 exports it below opset 17
// becomes dtg.layer_norm on the last axis with the exported epsilon (the f32
// constant 1e-5 comes back as exactly 1e-5).
// CHECK-LABEL: func.func @layer_norm_exported
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>, %[[W:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.+]] = dtg.layer_norm %[[X]], %[[W]], %[[B]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_exported(%x: tensor<2x4x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = dtg.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c0 = dtg.constant dense<2.0> : tensor<f32>
  %2 = dtg.pow %1, %c0 : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %c1 = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %4 = dtg.add %3, %c1 : tensor<2x4x1xf32>, tensor<f32> -> tensor<2x4x1xf32>
  %5 = dtg.sqrt %4 : tensor<2x4x1xf32>
  %6 = dtg.div %1, %5 : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %8 = dtg.add %7, %bias : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %8 : tensor<2x4x8xf32>
}

// -----

// Tests that nn.LayerNorm([4, 8]) (two trailing axes) with constant gamma
// and beta, operands swapped in every commutative op, becomes dtg.layer_norm
// from axis 1.
// CHECK-LABEL: func.func @layer_norm_two_axes
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32>)
// CHECK-DAG: %[[W:.+]] = dtg.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[B:.+]] = dtg.constant dense<1.000000e-01> : tensor<8xf32>
// CHECK: %[[Y:.+]] = dtg.layer_norm %[[X]], %[[W]], %[[B]] {axis = 1 : i64, epsilon = 9.9999999999999998E-13 : f64} : tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_two_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %weight = dtg.constant dense<2.0> : tensor<4x8xf32>
  %bias = dtg.constant dense<0.1> : tensor<8xf32>
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<1.0e-12> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  %1 = dtg.sub %x, %0 : tensor<2x4x8xf32>, tensor<2x1x1xf32> -> tensor<2x4x8xf32>
  %2 = dtg.pow %1, %two : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  %4 = dtg.add %eps, %3 : tensor<f32>, tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %5 = dtg.sqrt %4 : tensor<2x1x1xf32>
  %6 = dtg.div %1, %5 : tensor<2x4x8xf32>, tensor<2x1x1xf32> -> tensor<2x4x8xf32>
  %7 = dtg.mul %weight, %6 : tensor<4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %8 = dtg.add %bias, %7 : tensor<8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %8 : tensor<2x4x8xf32>
}

// -----

// Tests that a LayerNorm without bias ends at the mul by gamma and one
// without affine parameters at the div (its scale becomes a splat 1, placed
// with the function's constants).
// CHECK-LABEL: func.func @layer_norm_partial_affine
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8xf32>)
// CHECK: %[[ONES:.+]] = dtg.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: %[[Y:.+]] = dtg.layer_norm %[[X]], %[[W]] {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: %[[Z:.+]] = dtg.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @layer_norm_partial_affine(%x: tensor<4x8xf32>, %weight: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = dtg.pow %1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = dtg.add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = dtg.sqrt %4 : tensor<4x1xf32>
  %6 = dtg.div %1, %5 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %10 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %11 = dtg.sub %x, %10 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %12 = dtg.pow %11, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %13 = dtg.reduce_mean %12 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %14 = dtg.add %13, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %15 = dtg.sqrt %14 : tensor<4x1xf32>
  %16 = dtg.div %11, %15 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %7, %16 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that when gamma is computed (not a parameter or constant), only the
// normalization is rewritten and the mul and add stay.
// CHECK-LABEL: func.func @layer_norm_computed_gamma
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[G:.+]] = dtg.exp %[[W]]
// CHECK: %[[N:.+]] = dtg.layer_norm %[[X]], %{{.+}} {axis = 1 : i64
// CHECK: %[[M:.+]] = dtg.mul %[[N]], %[[G]]
// CHECK: %[[Y:.+]] = dtg.add %[[M]], %[[B]]
// CHECK: return %[[Y]]
func.func @layer_norm_computed_gamma(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %weight = dtg.exp %w : tensor<8xf32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = dtg.pow %1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = dtg.add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = dtg.sqrt %4 : tensor<4x1xf32>
  %6 = dtg.div %1, %5 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %8 = dtg.add %7, %bias : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Tests that a gamma that does not broadcast to the normalized shape (it
// varies along a dimension that is not normalized) stops the match at the
// div.
// CHECK-LABEL: func.func @layer_norm_gamma_shape
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<4x1xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[N:.+]] = dtg.layer_norm %[[X]], %{{.+}} {axis = 1 : i64
// CHECK: %[[M:.+]] = dtg.mul %[[N]], %[[W]]
// CHECK: dtg.add %[[M]], %[[B]]
func.func @layer_norm_gamma_shape(%x: tensor<4x8xf32>, %weight: tensor<4x1xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = dtg.pow %1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = dtg.add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = dtg.sqrt %4 : tensor<4x1xf32>
  %6 = dtg.div %1, %5 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %8 = dtg.add %7, %bias : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Tests that reductions over leading (not trailing) axes are not a
// LayerNorm.
// CHECK-LABEL: func.func @layer_norm_leading_axis
// CHECK-NOT: dtg.layer_norm
// CHECK: dtg.reduce_mean
func.func @layer_norm_leading_axis(%x: tensor<4x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %1 = dtg.sub %x, %0 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %2 = dtg.pow %1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %4 = dtg.add %3, %eps : tensor<1x8xf32>, tensor<f32> -> tensor<1x8xf32>
  %5 = dtg.sqrt %4 : tensor<1x8xf32>
  %6 = dtg.div %1, %5 : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %8 = dtg.add %7, %bias : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Tests that a mean and a variance over different axes are not a LayerNorm.
// CHECK-LABEL: func.func @layer_norm_mismatched_axes
// CHECK-NOT: dtg.layer_norm
// CHECK: dtg.reduce_mean
func.func @layer_norm_mismatched_axes(%x: tensor<2x4x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<2x4x8xf32>, tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %2 = dtg.pow %1, %two : tensor<2x4x8xf32>, tensor<f32> -> tensor<2x4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  %4 = dtg.add %3, %eps : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
  %5 = dtg.sqrt %4 : tensor<2x1x1xf32>
  %6 = dtg.div %1, %5 : tensor<2x4x8xf32>, tensor<2x1x1xf32> -> tensor<2x4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %8 = dtg.add %7, %bias : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  return %8 : tensor<2x4x8xf32>
}

// -----

// Tests that the centered value d = x - mean with a third user, or a
// variance that is not the mean of d^2, is not a LayerNorm.
// CHECK-LABEL: func.func @layer_norm_negative
// CHECK-NOT: dtg.layer_norm
// CHECK: dtg.reduce_mean
// CHECK-NOT: dtg.layer_norm
func.func @layer_norm_negative(%x: tensor<4x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %three = dtg.constant dense<3.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  // d is also returned.
  %0 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = dtg.sub %x, %0 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %2 = dtg.pow %1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = dtg.add %3, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %5 = dtg.sqrt %4 : tensor<4x1xf32>
  %6 = dtg.div %1, %5 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %7 = dtg.mul %6, %weight : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %8 = dtg.add %7, %bias : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // d^3 in place of d^2.
  %10 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %11 = dtg.sub %x, %10 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %12 = dtg.pow %11, %three : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %13 = dtg.reduce_mean %12 {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %14 = dtg.add %13, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %15 = dtg.sqrt %14 : tensor<4x1xf32>
  %16 = dtg.div %11, %15 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %17 = dtg.mul %16, %weight : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %18 = dtg.add %17, %bias : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %8, %18, %1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that reductions without kept dimensions are not a LayerNorm.
// CHECK-LABEL: func.func @layer_norm_no_keepdims
// CHECK-NOT: dtg.layer_norm
// CHECK: dtg.reduce_mean
func.func @layer_norm_no_keepdims(%x: tensor<8x8xf32>, %weight: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<8x8xf32> {
  %two = dtg.constant dense<2.0> : tensor<f32>
  %eps = dtg.constant dense<9.99999974E-6> : tensor<f32>
  %0 = dtg.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<8x8xf32> -> tensor<8xf32>
  %1 = dtg.sub %x, %0 : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %2 = dtg.pow %1, %two : tensor<8x8xf32>, tensor<f32> -> tensor<8x8xf32>
  %3 = dtg.reduce_mean %2 {axes = array<i64: 1>, keepdims = false} : tensor<8x8xf32> -> tensor<8xf32>
  %4 = dtg.add %3, %eps : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %5 = dtg.sqrt %4 : tensor<8xf32>
  %6 = dtg.div %1, %5 : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %7 = dtg.mul %6, %weight : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %8 = dtg.add %7, %bias : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  return %8 : tensor<8x8xf32>
}
