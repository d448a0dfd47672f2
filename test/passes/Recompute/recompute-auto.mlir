// RUN: dtc-opt %s --dtc-recompute="mode=auto memory-limit=26000" | FileCheck %s

// Tests that auto recompute, under a limit (26000 bytes) between the peaks
// of full recompute (24580) and of none (28676), recomputes only what it
// needs to fit: layer /h.0's elementwise chain from its input, the cheapest
// unit per byte saved, and keeps layer /h.1's values saved.

// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1024xf32>
// CHECK: %[[A:.+]] = dtg.tanh %[[X]] : tensor<1024xf32>
// CHECK-NEXT: %[[B:.+]] = dtg.tanh %[[A]] : tensor<1024xf32>
// CHECK-NEXT: %[[C:.+]] = dtg.tanh %[[B]] : tensor<1024xf32>
// CHECK-NEXT: %[[E:.+]] = dtg.exp %[[C]] : tensor<1024xf32>
// CHECK-NEXT: %[[D:.+]] = dtg.tanh %[[E]] : tensor<1024xf32>
// CHECK-NEXT: %[[L:.+]] = dtg.reduce_sum %[[D]]
// CHECK-NEXT: %[[GD:.+]] = dtg.mul %[[D]], %[[E]] {dtg.backward}
// CHECK-NEXT: %[[GC:.+]] = dtg.mul %[[GD]], %[[C]] {dtg.backward}
// CHECK-NEXT: %[[A2:.+]] = dtg.tanh %[[X]] {dtg.backward, dtg.recompute}
// CHECK-NEXT: %[[B2:.+]] = dtg.tanh %[[A2]] {dtg.backward, dtg.recompute}
// CHECK-NEXT: %[[GB:.+]] = dtg.mul %[[GC]], %[[B2]] {dtg.backward}
// CHECK-NEXT: dtg.mul %[[GB]], %[[A2]] {dtg.backward}
func.func @layers(%x: tensor<1024xf32> {dtg.role = "input"}) -> (tensor<f32>, tensor<1024xf32>) {
  %a = dtg.tanh %x : tensor<1024xf32> loc("/h.0/Tanh")
  %b = dtg.tanh %a : tensor<1024xf32> loc("/h.0/Tanh_1")
  %c = dtg.tanh %b : tensor<1024xf32> loc("/h.1/Tanh")
  %e = dtg.exp %c : tensor<1024xf32> loc("/h.1/Exp")
  %d = dtg.tanh %e : tensor<1024xf32> loc("/h.1/Tanh_1")
  %l = dtg.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : tensor<1024xf32> -> tensor<f32> loc("/ReduceSum")
  %gd = dtg.mul %d, %e {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %gc = dtg.mul %gd, %c {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %gb = dtg.mul %gc, %b {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %ga = dtg.mul %gb, %a {dtg.backward} : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %l, %ga : tensor<f32>, tensor<1024xf32>
}
