// RUN: dtc-opt %s --dtc-schedule-communication | FileCheck %s
// RUN: dtc-opt %s --dtc-schedule-communication="bucket-mb=0" | FileCheck %s --check-prefix=SPLIT

// Tests that a step's last micro-step call is inlined so that its
// gradients' all-reduces start inside its backward, and the function no
// call reaches any more is removed. A gradient divided by the global loss
// count is reduced first and divided after. g2 is ready before the
// backward of the first layer runs: with 25 MiB buckets it goes in one
// flat bucket with the loss count (ready as early), started right after g2
// is computed; the wait comes right before the first use, then slices. g1,
// the last gradient, has nothing left to hide behind and stays
// synchronous. With 0 MiB buckets each reduction starts alone.

dist.mesh @mesh = <["dp" = 2]>

func.func private @micro_step(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>,
                              %w2: tensor<8x8xf32>)
    -> (tensor<f32>, tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %h = dtg.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %y = dtg.matmul %h, %w2 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %l = dtg.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  %n = dtg.constant dense<32.0> : tensor<f32>
  %ht = dtg.transpose %h {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %g2 = dtg.matmul %ht, %y : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %xt = dtg.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %w2t = dtg.transpose %w2 {perm = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %dh = dtg.matmul %y, %w2t : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %more = dtg.tanh %dh : tensor<4x8xf32>
  %more2 = dtg.tanh %more : tensor<4x8xf32>
  %g1 = dtg.matmul %xt, %more2 : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %l, %n, %g1, %g2 : tensor<f32>, tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// CHECK-NOT: @micro_step
// CHECK-LABEL: func.func @train_step(
// CHECK:      %[[G2:.*]] = dtg.matmul {{.*}} -> tensor<8x8xf32>
// CHECK:      %[[F2:.*]] = dtg.reshape %[[G2]] : tensor<8x8xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[FC:.*]] = dtg.reshape %{{.*}} : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT: %[[FLAT:.*]] = dtg.concat %[[F2]], %[[FC]] {axis = 0 : i64}
// CHECK-NEXT: %[[START:.*]] = dist.all_reduce_start sum %[[FLAT]] on @mesh mesh_axes = ["dp"] {dtc.explain = "a bucket of 2 reductions (260 bytes): g2, ..."} : tensor<65xf32>
// CHECK-NEXT: dtg.transpose
// CHECK-NEXT: dtg.matmul
// CHECK:      %[[G1:.*]] = dtg.matmul {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[S1:.*]] = dist.all_reduce sum %[[G1]] on @mesh mesh_axes = ["dp"] {dtc.explain = "g1"} : tensor<8x8xf32>
// CHECK-NEXT: %[[SUM:.*]] = dist.wait %[[START]] : !dist.future<tensor<65xf32>>
// CHECK-NEXT: %[[P2:.*]] = dtg.slice %[[SUM]] {limits = array<i64: 64>, starts = array<i64: 0>, steps = array<i64: 1>}
// CHECK-NEXT: %[[R2:.*]] = dtg.reshape %[[P2]] : tensor<64xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[PC:.*]] = dtg.slice %[[SUM]] {limits = array<i64: 65>, starts = array<i64: 64>, steps = array<i64: 1>}
// CHECK-NEXT: %[[COUNT:.*]] = dtg.reshape %[[PC]] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT: dtg.div %[[S1]], %[[COUNT]]
// CHECK-NEXT: dtg.div %[[R2]], %[[COUNT]]

// SPLIT-LABEL: func.func @train_step(
// SPLIT:      %[[G2:.*]] = dtg.matmul {{.*}} -> tensor<8x8xf32>
// SPLIT-NEXT: %[[A2:.*]] = dist.all_reduce_start sum %[[G2]] on @mesh mesh_axes = ["dp"] {dtc.explain = "g2"} : tensor<8x8xf32>
// SPLIT:      %[[AC:.*]] = dist.all_reduce_start sum %{{.*}} : tensor<f32>
// SPLIT:      %[[G1:.*]] = dtg.matmul {{.*}} -> tensor<8x8xf32>
// SPLIT-NEXT: dist.all_reduce sum %[[G1]]
// SPLIT-NEXT: dist.wait %[[AC]]
// SPLIT-NEXT: dtg.div
// SPLIT-NEXT: dist.wait %[[A2]]

func.func @train_step(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>,
                      %w2: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>) {
  %r:4 = call @micro_step(%x, %w1, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<f32>, tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>)
  %count = dist.all_reduce sum %r#1 on @mesh mesh_axes = ["dp"] : tensor<f32>
  %d1 = dtg.div %r#2, %count : tensor<8x8xf32>, tensor<f32> -> tensor<8x8xf32>
  %s1 = dist.all_reduce sum %d1 on @mesh mesh_axes = ["dp"] {dtc.explain = "g1"} : tensor<8x8xf32>
  %d2 = dtg.div %r#3, %count : tensor<8x8xf32>, tensor<f32> -> tensor<8x8xf32>
  %s2 = dist.all_reduce sum %d2 on @mesh mesh_axes = ["dp"] {dtc.explain = "g2"} : tensor<8x8xf32>
  %n1 = dtg.mul %s1, %w1 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %n2 = dtg.mul %s2, %w2 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %n1, %n2, %r#0 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
}
