// RUN: dtc-opt %s -split-input-file | dtc-opt -split-input-file | FileCheck %s

// Tests that a mesh, sharding constraints and reshards round-trip.

// CHECK: dist.mesh @mesh = <["pp" = 2, "dp" = 8, "tp" = 4]>
dist.mesh @mesh = <["pp" = 2, "dp" = 8, "tp" = 4]>

// CHECK-LABEL: func.func @annotations
// CHECK-SAME: (%[[X:.+]]: tensor<64x64xf32>)
func.func @annotations(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // CHECK: %[[C:.+]] = dist.sharding_constraint %[[X]] <@mesh, [{"dp"}, {"tp"}]> : tensor<64x64xf32>
  %c = dist.sharding_constraint %x <@mesh, [{"dp"}, {"tp"}]> : tensor<64x64xf32>
  // CHECK: %[[P:.+]] = dist.sharding_constraint %[[C]] <@mesh, [{}, {}], partial = {"tp"}> : tensor<64x64xf32>
  %p = dist.sharding_constraint %c <@mesh, [{}, {}], partial = {"tp"}> : tensor<64x64xf32>
  // CHECK: %[[R:.+]] = dist.reshard %[[P]] <@mesh, [{"dp", "tp"}, {}]> : tensor<64x64xf32>
  %r = dist.reshard %p <@mesh, [{"dp", "tp"}, {}]> : tensor<64x64xf32>
  // CHECK: return %[[R]]
  return %r : tensor<64x64xf32>
}

// -----

// Tests that a rank-0 tensor takes an empty sharding.

dist.mesh @mesh = <["dp" = 2]>

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.+]]: tensor<f32>)
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  // CHECK: dist.sharding_constraint %[[X]] <@mesh, []> : tensor<f32>
  %c = dist.sharding_constraint %x <@mesh, []> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Tests that shardings on function arguments and results, and a pipeline
// schedule on the function, round-trip.

dist.mesh @mesh = <["dp" = 2, "tp" = 2]>

// CHECK-LABEL: func.func @function_shardings
// CHECK-SAME: (%{{.+}}: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>})
// CHECK-SAME: -> (tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}], partial = {"dp"}>})
// CHECK-SAME: attributes {dist.schedule = #dist.schedule<"1f1b", micro_batches = 8>}
func.func @function_shardings(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>})
    -> (tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}], partial = {"dp"}>})
    attributes {dist.schedule = #dist.schedule<"1f1b", micro_batches = 8>} {
  return %x : tensor<4x8xf32>
}

// -----

// Tests that the three schedules, and the stand-alone mesh and axis-list
// attributes, round-trip; virtual_stages prints only when it is not 1.

// CHECK-LABEL: func.func @schedules
// CHECK-SAME: axes = #dist.axes<{"dp", "tp"}>
// CHECK-SAME: gpipe = #dist.schedule<"gpipe", micro_batches = 4>
// CHECK-SAME: interleaved = #dist.schedule<"interleaved", micro_batches = 8, virtual_stages = 2>
// CHECK-SAME: mesh = #dist.mesh<["dp" = 8]>
// CHECK-SAME: one_f_one_b = #dist.schedule<"1f1b", micro_batches = 1>
func.func @schedules() attributes {
    gpipe = #dist.schedule<"gpipe", micro_batches = 4, virtual_stages = 1>,
    one_f_one_b = #dist.schedule<"1f1b", micro_batches = 1>,
    interleaved = #dist.schedule<"interleaved", micro_batches = 8, virtual_stages = 2>,
    mesh = #dist.mesh<["dp" = 8]>,
    axes = #dist.axes<{"dp", "tp"}>} {
  return
}

// -----

// Tests that the synchronous collectives round-trip.

dist.mesh @mesh = <["pp" = 2, "dp" = 8, "tp" = 4]>

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.+]]: tensor<8x4xf32>, %[[I:.+]]: tensor<16xi32>)
func.func @collectives(%x: tensor<8x4xf32>, %i: tensor<16xi32>) {
  // CHECK: dist.all_reduce sum %[[X]] on @mesh mesh_axes = ["dp"] : tensor<8x4xf32>
  %s = dist.all_reduce sum %x on @mesh mesh_axes = ["dp"] : tensor<8x4xf32>
  // CHECK: dist.all_reduce max %[[I]] on @mesh mesh_axes = ["dp", "tp"] : tensor<16xi32>
  %m = dist.all_reduce max %i on @mesh mesh_axes = ["dp", "tp"] : tensor<16xi32>
  // CHECK: dist.all_reduce min %[[I]] on @mesh mesh_axes = ["tp"] : tensor<16xi32>
  %n = dist.all_reduce min %i on @mesh mesh_axes = ["tp"] : tensor<16xi32>
  // CHECK: dist.all_reduce mean %[[X]] on @mesh mesh_axes = ["dp"] : tensor<8x4xf32>
  %a = dist.all_reduce mean %x on @mesh mesh_axes = ["dp"] : tensor<8x4xf32>
  // CHECK: dist.all_gather %[[X]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %g = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  // CHECK: dist.all_gather %[[X]] on @mesh mesh_axes = ["dp", "tp"] gather_axis = 0 : tensor<8x4xf32> -> tensor<256x4xf32>
  %g2 = dist.all_gather %x on @mesh mesh_axes = ["dp", "tp"] gather_axis = 0 : tensor<8x4xf32> -> tensor<256x4xf32>
  // CHECK: dist.reduce_scatter sum %[[X]] on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8x4xf32> -> tensor<1x4xf32>
  %r = dist.reduce_scatter sum %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<8x4xf32> -> tensor<1x4xf32>
  // CHECK: dist.reduce_scatter max %[[I]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<16xi32> -> tensor<4xi32>
  %r2 = dist.reduce_scatter max %i on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<16xi32> -> tensor<4xi32>
  // CHECK: dist.all_to_all %[[X]] on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  %t = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<2x16xf32>
  // CHECK: dist.all_to_all %[[X]] on @mesh mesh_axes = ["pp"] split_axis = 1 concat_axis = 1 : tensor<8x4xf32> -> tensor<8x4xf32>
  %t2 = dist.all_to_all %x on @mesh mesh_axes = ["pp"] split_axis = 1 concat_axis = 1 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that the asynchronous collectives and dist.wait round-trip.

dist.mesh @mesh = <["dp" = 8]>

// CHECK-LABEL: func.func @async
// CHECK-SAME: (%[[X:.+]]: tensor<1024xf32>, %[[S:.+]]: tensor<128xf32>)
func.func @async(%x: tensor<1024xf32>, %s: tensor<128xf32>) -> (tensor<1024xf32>, tensor<1024xf32>, tensor<128xf32>) {
  // CHECK: %[[F:.+]] = dist.all_reduce_start sum %[[X]] on @mesh mesh_axes = ["dp"] : tensor<1024xf32>
  %f = dist.all_reduce_start sum %x on @mesh mesh_axes = ["dp"] : tensor<1024xf32>
  // CHECK: %[[G:.+]] = dist.all_gather_start %[[S]] on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<128xf32> -> !dist.future<tensor<1024xf32>>
  %g = dist.all_gather_start %s on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<128xf32> -> !dist.future<tensor<1024xf32>>
  // CHECK: %[[R:.+]] = dist.reduce_scatter_start mean %[[X]] on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<1024xf32> -> !dist.future<tensor<128xf32>>
  %r = dist.reduce_scatter_start mean %x on @mesh mesh_axes = ["dp"] scatter_axis = 0 : tensor<1024xf32> -> !dist.future<tensor<128xf32>>
  // CHECK: %[[A:.+]] = dist.wait %[[F]] : !dist.future<tensor<1024xf32>>
  %a = dist.wait %f : !dist.future<tensor<1024xf32>>
  // CHECK: %[[B:.+]] = dist.wait %[[G]] : !dist.future<tensor<1024xf32>>
  %b = dist.wait %g : !dist.future<tensor<1024xf32>>
  // CHECK: %[[C:.+]] = dist.wait %[[R]] : !dist.future<tensor<128xf32>>
  %c = dist.wait %r : !dist.future<tensor<128xf32>>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %a, %b, %c : tensor<1024xf32>, tensor<1024xf32>, tensor<128xf32>
}

// -----

// Tests that point-to-point transfers round-trip, negative shifts included.

dist.mesh @mesh = <["pp" = 4, "dp" = 2]>

// CHECK-LABEL: func.func @point_to_point
// CHECK-SAME: (%[[X:.+]]: tensor<4x64xf32>)
func.func @point_to_point(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // CHECK: dist.send %[[X]] on @mesh mesh_axis = "pp" shift = 1 : tensor<4x64xf32>
  dist.send %x on @mesh mesh_axis = "pp" shift = 1 : tensor<4x64xf32>
  // CHECK: %[[Y:.+]] = dist.recv on @mesh mesh_axis = "pp" shift = -3 : tensor<4x64xf32>
  %y = dist.recv on @mesh mesh_axis = "pp" shift = -3 : tensor<4x64xf32>
  // CHECK: return %[[Y]]
  return %y : tensor<4x64xf32>
}

// -----

// Tests that pipeline stages with inputs, results, collectives inside and an
// empty stage round-trip.

dist.mesh @mesh = <["pp" = 2, "tp" = 2]>

// CHECK-LABEL: func.func @stages
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
func.func @stages(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[H:.+]] = dist.stage 0 ins(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>):
  // CHECK-NEXT: %[[S:.+]] = dist.all_reduce sum %[[A]] on @mesh mesh_axes = ["tp"] : tensor<4x8xf32>
  // CHECK-NEXT: dist.yield %[[S]] : tensor<4x8xf32>
  %h = dist.stage 0 ins(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = dist.all_reduce sum %a on @mesh mesh_axes = ["tp"] : tensor<4x8xf32>
    dist.yield %s : tensor<4x8xf32>
  }
  // CHECK: %[[O:.+]]:2 = dist.stage 1 ins(%[[H]], %[[H]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %o:2 = dist.stage 1 ins(%h, %h) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    dist.yield %b, %a : tensor<4x8xf32>, tensor<4x8xf32>
  }
  // CHECK: dist.stage 2 : () -> () {
  // CHECK-NEXT: dist.yield
  dist.stage 2 : () -> () {
    dist.yield
  }
  // CHECK: return %[[O]]#0
  return %o#0 : tensor<4x8xf32>
}
