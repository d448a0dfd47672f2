// RUN: dtc-opt %s --dtc-schedule-communication | FileCheck %s

// Tests ZeRO-3 prefetch: the parameters' all-gathers, in the order their
// results are first used, each start right before the first use of the one
// before (one layer ahead), and are waited for right before their own first
// use (the next one's start may come just before that wait); the first
// stays where it was, synchronous (nothing to hide behind).
// A reduction with nothing between its operand and its use stays
// synchronous too.

dist.mesh @mesh = <["dp" = 2]>

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[W1:.*]]: tensor<4x8xf32>, %[[W2:.*]]: tensor<4x8xf32>, %[[W3:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[G1:.*]] = dist.all_gather %[[W1]]
// CHECK-NEXT: %[[S2:.*]] = dist.all_gather_start %[[W2]]
// CHECK-NEXT: %[[H1:.*]] = dtg.matmul %[[X]], %[[G1]]
// CHECK-NEXT: %[[T1:.*]] = dtg.tanh %[[H1]]
// CHECK-NEXT: %[[S3:.*]] = dist.all_gather_start %[[W3]]
// CHECK-NEXT: %[[G2:.*]] = dist.wait %[[S2]]
// CHECK-NEXT: %[[H2:.*]] = dtg.matmul %[[T1]], %[[G2]]
// CHECK-NEXT: %[[T2:.*]] = dtg.tanh %[[H2]]
// CHECK-NEXT: %[[G3:.*]] = dist.wait %[[S3]]
// CHECK-NEXT: %[[H3:.*]] = dtg.matmul %[[T2]], %[[G3]]
// CHECK-NEXT: %[[R:.*]] = dist.all_reduce sum %[[H3]]
// CHECK-NEXT: return %[[R]]
func.func @forward(%x: tensor<4x8xf32>, %w1: tensor<4x8xf32>,
                   %w2: tensor<4x8xf32>, %w3: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g1 = dist.all_gather %w1 on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %g2 = dist.all_gather %w2 on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %g3 = dist.all_gather %w3 on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h1 = dtg.matmul %x, %g1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t1 = dtg.tanh %h1 : tensor<4x8xf32>
  %h2 = dtg.matmul %t1, %g2 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t2 = dtg.tanh %h2 : tensor<4x8xf32>
  %h3 = dtg.matmul %t2, %g3 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %r = dist.all_reduce sum %h3 on @mesh mesh_axes = ["dp"] : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
