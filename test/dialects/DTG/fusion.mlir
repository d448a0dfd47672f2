// RUN: dtc-opt %s -split-input-file | dtc-opt -split-input-file | FileCheck %s

// Printing and parsing of dtg.fusion and dtg.yield.

// Tests that a loop kernel round-trips with its block arguments and yield.
// CHECK-LABEL: func.func @loop
// CHECK: %[[R:.+]] = dtg.fusion "loop"(%[[X:.+]], %[[B:.+]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>, %[[C:.+]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.+]] = dtg.add %[[A]], %[[C]]
// CHECK-NEXT: %[[T:.+]] = dtg.relu %[[S]]
// CHECK-NEXT: dtg.yield %[[T]] : tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @loop(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = dtg.fusion "loop" (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %s = dtg.add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %t = dtg.relu %s : tensor<4x8xf32>
    dtg.yield %t : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Tests that a reduction kernel with two results and a gemm kernel with a
// transposed operand round-trip, attributes included.
// CHECK-LABEL: func.func @reduction_and_gemm
// CHECK: dtg.fusion "reduction"(%{{.+}}) {dtg.backward} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK: dtg.reduce_sum
// CHECK: dtg.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4xf32>
// CHECK: dtg.fusion "gemm"
// CHECK: dtg.transpose
// CHECK: dtg.matmul
func.func @reduction_and_gemm(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x16xf32>) {
  %r:2 = dtg.fusion "reduction" (%x) {dtg.backward} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %e = dtg.exp %a : tensor<4x8xf32>
    %s = dtg.reduce_sum %e {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
    dtg.yield %e, %s : tensor<4x8xf32>, tensor<4xf32>
  }
  %g = dtg.fusion "gemm" (%x, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>):
    %t = dtg.transpose %b {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
    %m = dtg.matmul %a, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %y = dtg.tanh %m : tensor<4x16xf32>
    dtg.yield %y : tensor<4x16xf32>
  }
  return %r#0, %r#1, %g : tensor<4x8xf32>, tensor<4xf32>, tensor<4x16xf32>
}
