// RUN: dtc-opt %s --dtc-propagate-sharding=sequence-parallel=1 --dtc-partition | FileCheck %s
// RUN: dtc-opt %s --dtc-propagate-sharding --dtc-partition | FileCheck %s --check-prefix=NOSP

// Tests sequence parallelism on a pre-norm MLP block, x [batch 2, tokens 4,
// features 8] with the residual: the weights are split in Megatron's pair
// (w1's columns, w2's rows over tp). With sequence-parallel, the norm's
// input is split over tp along its tokens (dimension 1: the argument takes
// [2, 2, 8] blocks), and so the norm runs on blocks; the block's input is all-gathered by tokens
// before the column-parallel matmul, and the row-parallel matmul's partial
// sums are reduce-scattered by tokens into the residual add, which runs
// split too: no all-reduce. The result leaves split by tokens. Without it
// (NOSP), the norm and the add run whole and the partial sums are
// all-reduced.

// CHECK-LABEL: func.func @block(
// CHECK-SAME: %[[XS:[^:]+]]: tensor<2x2x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{}, {"tp"}, {}]>}
// CHECK-SAME: -> (tensor<2x2x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{}, {"tp"}, {}]>})
// CHECK:      %[[N:.+]] = dtg.layer_norm %[[XS]], {{.*}} : tensor<2x2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x2x8xf32>
// CHECK:      %[[NW:.+]] = dist.all_gather %[[N]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK:      %[[H:.+]] = dtg.matmul %[[NW]], {{.*}} -> tensor<2x4x8xf32>
// CHECK:      dtg.gelu
// CHECK:      %[[Y:.+]] = dtg.matmul {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[YS:.+]] = dist.reduce_scatter sum %[[Y]] on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT: %[[R:.+]] = dtg.add %[[XS]], %[[YS]] : tensor<2x2x8xf32>, tensor<2x2x8xf32> -> tensor<2x2x8xf32>
// CHECK-NOT:  dist.all_reduce
// CHECK:      return %[[R]]

// NOSP-LABEL: func.func @block(
// NOSP:       dtg.layer_norm {{.*}} -> tensor<2x4x8xf32>
// NOSP:       dtg.gelu
// NOSP:       %[[Y:.+]] = dtg.matmul {{.*}} -> tensor<2x4x8xf32>
// NOSP-NEXT:  %[[YR:.+]] = dist.all_reduce sum %[[Y]] on @mesh mesh_axes = ["tp"] : tensor<2x4x8xf32>
// NOSP-NEXT:  dtg.add {{.*}}, %[[YR]] : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// NOSP-NOT:   dist.reduce_scatter

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = 2]>
  func.func @block(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %w1: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}, %w2: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}) -> tensor<2x4x8xf32> {
    %n = dtg.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %h = dtg.matmul %n, %w1 : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
    %a = dtg.gelu %h {approximate = false} : tensor<2x4x16xf32>
    %y = dtg.matmul %a, %w2 : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
    %r = dtg.add %x, %y : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    return %r : tensor<2x4x8xf32>
  }
}
