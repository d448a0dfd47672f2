// RUN: dtc-opt %s -split-input-file --dtc-propagate-sharding | FileCheck %s

// Tests propagation through a Megatron MLP block: x split over dp along
// its rows, the first weight's columns and the second weight's rows over
// tp (constraints). The first matmul is column-parallel (its result split
// [dp, tp]), the gelu keeps that split, so the second matmul meets a tp
// split on both sides of its contraction and needs no communication before
// it: its result is split over dp and a partial sum over tp (the
// all-reduce a row-parallel matmul needs comes after it); the tanh after
// it, not linear, takes whole values (the all-reduce goes between).
// Arguments get their shardings.

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %{{.+}}: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: %{{.+}}: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: %{{.+}}: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}
// CHECK: dtg.matmul {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}]>]
// CHECK: dtg.gelu {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}]>]
// CHECK: dtg.matmul {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {}], partial = {"tp"}>]
// CHECK: dtg.tanh {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {}]>]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 2]>
  func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
    %xc = dist.sharding_constraint %x <@mesh, [{"dp"}, {}]> : tensor<4x8xf32>
    %w1c = dist.sharding_constraint %w1 <@mesh, [{}, {"tp"}]> : tensor<8x16xf32>
    %w2c = dist.sharding_constraint %w2 <@mesh, [{"tp"}, {}]> : tensor<16x8xf32>
    %h = dtg.matmul %xc, %w1c : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %g = dtg.gelu %h {approximate = false} : tensor<4x16xf32>
    %y = dtg.matmul %g, %w2c : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
    %t = dtg.tanh %y : tensor<4x8xf32>
    return %t : tensor<4x8xf32>
  }
}

// -----

// Tests propagation backward and through shape ops: a constraint on the
// result of a reshape [2, 3, 4] -> [6, 4] splitting its rows over dp
// reaches the operand's leading dimension (the major part of the merged
// one), through a transpose to its input, and a softmax keeps its axis
// whole; a reduce_sum over the split axis gives a partial sum.

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME: {dist.sharding = #dist.sharding<@mesh, [{}, {"dp"}, {}]>}
// CHECK: dtg.transpose {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {}, {}]>]
// CHECK: dtg.softmax {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {}, {}]>]
// CHECK: dtg.reshape {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{"dp"}, {}]>]
// CHECK: dtg.reduce_sum {{.*}}dtc.shardings = [#dist.sharding<@mesh, [{}], partial = {"dp"}>]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 1]>
  func.func @shapes(%x: tensor<3x2x4xf32>) -> tensor<4xf32> {
    %t = dtg.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
    %s = dtg.softmax %t {axis = 2 : i64} : tensor<2x3x4xf32>
    %r = dtg.reshape %s : tensor<2x3x4xf32> -> tensor<6x4xf32>
    %c = dist.sharding_constraint %r <@mesh, [{"dp"}, {}]> : tensor<6x4xf32>
    %sum = dtg.reduce_sum %c {axes = array<i64: 0>, keepdims = false} : tensor<6x4xf32> -> tensor<4xf32>
    return %sum : tensor<4xf32>
  }
}
