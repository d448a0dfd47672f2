// RUN: dtc-opt %s -split-input-file --dtc-scatter-pipeline-transfers | FileCheck %s

// Tests that on a mesh with tp = 2 a pipeline transfer is sent as each tp
// rank's block, cut along the first dimension 2 divides (dimension 1 here:
// the micro-batch of 1 is not cut), and put together by an all-gather over
// tp where it is received; a transfer no dimension of which 2 divides stays
// whole, and so do transfers along other axes; and that sequence
// parallelism's blocks go as they are.

// CHECK-LABEL: func.func @step
// CHECK: %[[B:.*]] = dist.local_block %arg0 on @mesh mesh_axes = ["tp"] slice_axis = 1 : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
// CHECK: dist.send %[[B]] on @mesh mesh_axis = "pp" shift = 1 {dtc.message = "a"} : tensor<1x2x8xf32>
// CHECK: dist.send %arg1 on @mesh mesh_axis = "pp" shift = 1 {dtc.message = "odd"} : tensor<3xf32>
// CHECK: dist.send %arg0 on @mesh mesh_axis = "dp" shift = 1 : tensor<1x4x8xf32>
// CHECK: %[[R:.*]] = dist.recv on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "g"} : tensor<1x2x8xf32>
// CHECK: %[[W:.*]] = dist.all_gather %[[R]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<1x2x8xf32> -> tensor<1x4x8xf32>
// CHECK: %[[S:.*]] = dtg.add %[[W]], %[[W]]
// CHECK: return %[[S]]
module {
  dist.mesh @mesh = <["pp" = 2, "dp" = 2, "tp" = 2]>
  func.func @step(%x: tensor<1x4x8xf32>, %y: tensor<3xf32>) -> tensor<1x4x8xf32> {
    dist.send %x on @mesh mesh_axis = "pp" shift = 1 {dtc.message = "a"} : tensor<1x4x8xf32>
    dist.send %y on @mesh mesh_axis = "pp" shift = 1 {dtc.message = "odd"} : tensor<3xf32>
    dist.send %x on @mesh mesh_axis = "dp" shift = 1 : tensor<1x4x8xf32>
    %g = dist.recv on @mesh mesh_axis = "pp" shift = -1 {dtc.message = "g"} : tensor<1x4x8xf32>
    %s = dtg.add %g, %g : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
    return %s : tensor<1x4x8xf32>
  }
}

// -----

// Tests that nothing changes without tensor parallelism.

// CHECK-LABEL: func.func @no_tp
// CHECK-NOT: dist.local_block
// CHECK: dist.send %arg0 on @mesh mesh_axis = "pp" shift = 1 : tensor<4x8xf32>
module {
  dist.mesh @mesh = <["pp" = 2, "dp" = 2, "tp" = 1]>
  func.func @no_tp(%x: tensor<4x8xf32>) {
    dist.send %x on @mesh mesh_axis = "pp" shift = 1 : tensor<4x8xf32>
    return
  }
}

// -----

// Tests that under sequence parallelism (each tp rank holds a block of the
// tokens) the block goes as it is: the all-gather before the send and the
// local block after the receive, along the same dimension, are gone.

// CHECK-LABEL: func.func @sequence_parallel
// CHECK-NOT: dist.all_gather
// CHECK: dist.send %arg0 on @mesh mesh_axis = "pp" shift = 1 : tensor<1x2x8xf32>
// CHECK: %[[R:.*]] = dist.recv on @mesh mesh_axis = "pp" shift = -1 : tensor<1x2x8xf32>
// CHECK-NOT: dist.local_block
// CHECK: dtg.add %[[R]], %[[R]]
module {
  dist.mesh @mesh = <["pp" = 2, "dp" = 1, "tp" = 2]>
  func.func @sequence_parallel(%x: tensor<1x2x8xf32>) -> tensor<1x2x8xf32> {
    %w = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<1x2x8xf32> -> tensor<1x4x8xf32>
    dist.send %w on @mesh mesh_axis = "pp" shift = 1 : tensor<1x4x8xf32>
    %g = dist.recv on @mesh mesh_axis = "pp" shift = -1 : tensor<1x4x8xf32>
    %b = dist.local_block %g on @mesh mesh_axes = ["tp"] slice_axis = 1 : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
    %s = dtg.add %b, %b : tensor<1x2x8xf32>, tensor<1x2x8xf32> -> tensor<1x2x8xf32>
    return %s : tensor<1x2x8xf32>
  }
}
