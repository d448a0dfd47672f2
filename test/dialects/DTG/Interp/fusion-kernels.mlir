// RUN: dtc-opt %s --split-input-file --dtc-fold-constants | FileCheck %s

// The interpreter runs a dtg.fusion by running its region, so constant
// folding evaluates a fused kernel whose inputs are constants.

// Tests that a loop kernel computes its ops element by element.
// CHECK-LABEL: func.func @loop
// CHECK: %[[R:.+]] = dtg.constant dense<{{\[}}[2.000000e+00, 0.000000e+00], [4.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT: dtg.fusion
// CHECK: return %[[R]]
func.func @loop() -> tensor<2x2xf32> {
  %x = dtg.constant dense<[[1.0, -3.0], [3.0, -2.0]]> : tensor<2x2xf32>
  %b = dtg.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %r = dtg.fusion "loop" (%x, %b) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %c: tensor<2xf32>):
    %s = dtg.add %a, %c : tensor<2x2xf32>, tensor<2xf32> -> tensor<2x2xf32>
    %t = dtg.relu %s : tensor<2x2xf32>
    dtg.yield %t : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}

// -----

// Tests that a reduction kernel returns its prologue value and its sum.
// CHECK-LABEL: func.func @reduction
// CHECK-DAG: dtg.constant dense<{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: dtg.constant dense<[6.000000e+00, 1.400000e+01]> : tensor<2xf32>
// CHECK-NOT: dtg.fusion
func.func @reduction() -> (tensor<2x2xf32>, tensor<2xf32>) {
  %x = dtg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r:2 = dtg.fusion "reduction" (%x) : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  ^bb0(%a: tensor<2x2xf32>):
    %d = dtg.add %a, %a : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %s = dtg.reduce_sum %d {axes = array<i64: 1>, keepdims = false} : tensor<2x2xf32> -> tensor<2xf32>
    dtg.yield %d, %s : tensor<2x2xf32>, tensor<2xf32>
  }
  return %r#0, %r#1 : tensor<2x2xf32>, tensor<2xf32>
}
