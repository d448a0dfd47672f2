// RUN: dtc-opt %s -split-input-file --dtc-propagate-sharding --dtc-partition | FileCheck %s

// Tests partitioning a Megatron MLP block whose shardings propagation found
// (x rows over dp, the first weight's columns and the second's rows over
// tp): every value takes its block's shape, the column-parallel and the
// row-parallel matmul run with no communication between them, and the one
// collective is the all-reduce over tp of the row-parallel matmul's partial
// sum, just before the tanh that needs it whole. Arguments and results
// carry the shardings of the whole tensors.

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>}
// CHECK-SAME: %[[W1:[^:]+]]: tensor<8x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-SAME: %[[W2:[^:]+]]: tensor<8x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}
// CHECK-SAME: -> (tensor<2x8xf32> {dtc.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>})
// CHECK-NEXT: %[[H:.+]] = dtg.matmul %[[X]], %[[W1]] : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[G:.+]] = dtg.gelu %[[H]] {approximate = false} : tensor<2x8xf32>
// CHECK-NEXT: %[[Y:.+]] = dtg.matmul %[[G]], %[[W2]] : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[R:.+]] = dist.all_reduce sum %[[Y]] on @mesh mesh_axes = ["tp"] : tensor<2x8xf32>
// CHECK-NEXT: %[[T:.+]] = dtg.tanh %[[R]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[T]]

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

// Tests the reshards of a conflict and of ops that need whole dimensions:
// y's rows split over dp meet x's over tp at the add (x's split wins), so y
// is all-gathered over dp and cut over tp; the column split over dp that a
// constraint asks for after the softmax spreads back through it (over a
// split axis the softmax reduces its maximum and its sum across the
// blocks), so the add and the mul run on [tp, dp] blocks; a constant the
// mul reads in blocks becomes each rank's block of it; the slice, which
// needs its columns whole, takes the rows' block and the gathered columns.

// CHECK-LABEL: func.func @reshards(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4xf32>
// CHECK-SAME: %[[Y:[^:]+]]: tensor<2x4xf32>
// CHECK: %[[XB:.+]] = dist.local_block %[[X]] on @mesh mesh_axes = ["dp"] slice_axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK: %[[YW:.+]] = dist.all_gather %[[Y]] on @mesh mesh_axes = ["dp"] gather_axis = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK: %[[YT:.+]] = dist.local_block %[[YW]] on @mesh mesh_axes = ["tp"] slice_axis = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK: %[[YB:.+]] = dist.local_block %[[YT]] on @mesh mesh_axes = ["dp"] slice_axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK: %[[S:.+]] = dtg.add %[[XB]], %[[YB]] : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK: %[[C:.+]] = dtg.constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK: %[[CT:.+]] = dist.local_block %[[C]] on @mesh mesh_axes = ["tp"] slice_axis = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK: %[[CB:.+]] = dist.local_block %[[CT]] on @mesh mesh_axes = ["dp"] slice_axis = 1 : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK: %[[M:.+]] = dtg.mul %[[S]], %[[CB]] : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK: %[[MAX:.+]] = dtg.reduce_max %[[M]] {axes = array<i64: 1>, keepdims = true}
// CHECK: dist.all_reduce max %[[MAX]] on @mesh mesh_axes = ["dp"] : tensor<2x1xf32>
// CHECK: %[[SUM:.+]] = dtg.reduce_sum
// CHECK: dist.all_reduce sum %[[SUM]] on @mesh mesh_axes = ["dp"] : tensor<2x1xf32>
// CHECK: %[[SM:.+]] = dtg.div
// CHECK: %[[MW:.+]] = dist.all_gather %[[M]] on @mesh mesh_axes = ["dp"] gather_axis = 1 : tensor<2x2xf32> -> tensor<2x4xf32>
// CHECK: dtg.slice %[[MW]] {limits = array<i64: 2, 4>, starts = array<i64: 0, 1>{{.*}} : tensor<2x4xf32> -> tensor<2x3xf32>
// CHECK: return %[[SM]]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 2, "tp" = 2]>
  func.func @reshards(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>) {
    %a = dist.sharding_constraint %x <@mesh, [{"tp"}, {}]> : tensor<4x4xf32>
    %b = dist.sharding_constraint %y <@mesh, [{"dp"}, {}]> : tensor<4x4xf32>
    %s = dtg.add %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %c = dtg.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
    %m = dtg.mul %s, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %sm = dtg.softmax %m {axis = 1 : i64} : tensor<4x4xf32>
    %cols = dist.sharding_constraint %sm <@mesh, [{"tp"}, {"dp"}]> : tensor<4x4xf32>
    %sl = dtg.slice %m {limits = array<i64: 4, 4>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<4x3xf32>
    return %cols, %sl : tensor<4x4xf32>, tensor<4x3xf32>
  }
}

// -----

// Tests that a mesh axis splits one factor of an op: the weight's
// contraction split over tp (a constraint) and the result's columns over tp
// (another) cannot both hold in the matmul, which runs split by its
// contraction (the first factor its rule lists), leaves a partial sum, and
// the result's constraint is met after it by one reduce-scatter (partial
// sums to a split of a whole dimension). (An axis moving between
// dimensions in a reshard is all-gathered before it is cut again:
// test/e2e/tensor-parallel.test's --shard run.)

// CHECK-LABEL: func.func @one_factor_per_axis(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4xf32>
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = dtg.matmul %[[X]], %[[W]] : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[B:.+]] = dist.reduce_scatter sum %[[Y]] on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[B]]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = 2]>
  func.func @one_factor_per_axis(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
    %wc = dist.sharding_constraint %w <@mesh, [{"tp"}, {}]> : tensor<8x8xf32>
    %y = dtg.matmul %x, %wc : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
    %yc = dist.sharding_constraint %y <@mesh, [{}, {"tp"}]> : tensor<2x8xf32>
    return %yc : tensor<2x8xf32>
  }
}

// -----

// Tests where partial sums stop. A row-parallel matmul's partial result %y
// is scaled (%s, linear: partial), and %s goes to a tanh and an exp (not
// linear: whole) and to a reduce_sum: reduced where it fans out, %s would
// take two all-reduces; it is whole instead, and so is the scaling, which
// takes %y reduced: one all-reduce of 4x8 values, and the reduce_sum needs
// none. In @shrinks, the partial sum goes through a reduce_sum (it
// shrinks: 8 values, not 32) to a tanh, and is reduced there, small.

// CHECK-LABEL: func.func @fan_out(
// CHECK:      %[[Y:.+]] = dtg.matmul
// CHECK-NEXT: %[[R:.+]] = dist.all_reduce sum %[[Y]] on @mesh mesh_axes = ["tp"] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.+]] = dtg.mul %[[R]]
// CHECK-NEXT: dtg.tanh %[[S]]
// CHECK-NEXT: dtg.exp %[[S]]
// CHECK-NEXT: dtg.reduce_sum %[[S]]
// CHECK-NEXT: return

// CHECK-LABEL: func.func @shrinks(
// CHECK:      %[[Y:.+]] = dtg.matmul
// CHECK-NEXT: %[[S:.+]] = dtg.reduce_sum %[[Y]]
// CHECK-NEXT: %[[R:.+]] = dist.all_reduce sum %[[S]] on @mesh mesh_axes = ["tp"] : tensor<8xf32>
// CHECK-NEXT: dtg.tanh %[[R]]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = 2]>
  func.func @fan_out(%x: tensor<4x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}, %w: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
    %y = dtg.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
    %s = dtg.mul %y, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %t = dtg.tanh %s : tensor<4x8xf32>
    %e = dtg.exp %s : tensor<4x8xf32>
    %sum = dtg.reduce_sum %s {axes = array<i64: 0>, keepdims = false} : tensor<4x8xf32> -> tensor<8xf32>
    return %t, %e, %sum : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
  }
  func.func @shrinks(%x: tensor<4x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}, %w: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}) -> tensor<8xf32> {
    %y = dtg.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
    %s = dtg.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : tensor<4x8xf32> -> tensor<8xf32>
    %t = dtg.tanh %s : tensor<8xf32>
    return %t : tensor<8xf32>
  }
}

// -----

// Tests dropout on a block: the column-parallel result is split along its
// columns, so each rank's dropout draws the bits of its block of the whole
// [4, 8] tensor: its key gets the block's start, 0 rows and this rank's
// block of the column starts [0, 4], and block_of the whole shape.

// CHECK-LABEL: func.func @dropout_block(
// CHECK:      %[[H:.+]] = dtg.matmul
// CHECK-DAG:  %[[ZERO:.+]] = dtg.constant dense<0> : tensor<1xi64>
// CHECK-DAG:  %[[STARTS:.+]] = dtg.constant dense<[0, 4]> : tensor<2xi64>
// CHECK:      %[[MINE:.+]] = dist.local_block %[[STARTS]] on @mesh mesh_axes = ["tp"] slice_axis = 0 : tensor<2xi64> -> tensor<1xi64>
// CHECK:      %[[KEY:.+]] = dtg.concat %arg2, %[[ZERO]], %[[MINE]] {axis = 0 : i64} : tensor<3xi64>, tensor<1xi64>, tensor<1xi64> -> tensor<5xi64>
// CHECK:      dtg.dropout %[[H]], %[[KEY]] {block_of = array<i64: 4, 8>, ratio = 5.000000e-01 : f64, stream = 0 : i64} : tensor<4x4xf32>, tensor<5xi64> -> tensor<4x4xf32>, tensor<4x4xi1>

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = 2]>
  func.func @dropout_block(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>}, %k: tensor<3xi64>) -> tensor<4x8xf32> {
    %h = dtg.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %d:2 = dtg.dropout %h, %k {ratio = 0.5 : f64, stream = 0 : i64} : tensor<4x8xf32>, tensor<3xi64> -> tensor<4x8xf32>, tensor<4x8xi1>
    return %d#0 : tensor<4x8xf32>
  }
}

// -----

// Tests vocabulary parallelism: a tied table split by rows over tp. The
// embedding gather takes the ids in this rank's rows (shifted to them,
// negative ones wrapped first) and zeros for the others, a partial sum
// all-reduced before the matmul reads it; the tied projection gives logits
// split by vocabulary; log_softmax over them reduces its maximum and its
// sum of exponentials across the blocks; nll_loss picks the targets in
// this rank's block (the others ignored, -1), a partial sum the function's
// result reduces.

// CHECK-LABEL: func.func @vocabulary(
// CHECK:      %[[START:.+]] = dist.local_block {{.*}} mesh_axes = ["tp"] slice_axis = 0 : tensor<2xi64> -> tensor<1xi64>
// CHECK:      %[[IN:.+]] = dtg.and
// CHECK:      %[[SAFE:.+]] = dtg.where %[[IN]]
// CHECK:      %[[ROWS:.+]] = dtg.gather %arg1, %[[SAFE]] {axis = 0 : i64} : tensor<4x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
// CHECK:      %[[MASK:.+]] = dtg.reshape %[[IN]] : tensor<2x3xi1> -> tensor<2x3x1xi1>
// CHECK:      %[[EMB:.+]] = dtg.where %[[MASK]], %[[ROWS]]
// CHECK:      dist.all_reduce sum %[[EMB]] on @mesh mesh_axes = ["tp"] : tensor<2x3x4xf32>
// CHECK:      %[[LOGITS:.+]] = dtg.matmul {{.*}} -> tensor<6x4xf32>
// CHECK:      %[[MAX:.+]] = dtg.reduce_max %[[LOGITS]]
// CHECK:      dist.all_reduce max %[[MAX]] on @mesh mesh_axes = ["tp"] : tensor<6x1xf32>
// CHECK:      %[[SUM:.+]] = dtg.reduce_sum
// CHECK:      dist.all_reduce sum %[[SUM]] on @mesh mesh_axes = ["tp"] : tensor<6x1xf32>
// CHECK:      %[[LOSS:.+]] = dtg.nll_loss {{.*}} {ignore_index = -1 : i64, reduction = "sum"} : tensor<6x4xf32>, tensor<6xi64> -> tensor<f32>
// CHECK:      %[[TOTAL:.+]] = dist.all_reduce sum %[[LOSS]] on @mesh mesh_axes = ["tp"] : tensor<f32>
// CHECK:      return %[[TOTAL]]

module {
  dist.mesh @mesh = <["pp" = 1, "dp" = 1, "tp" = 2]>
  func.func @vocabulary(%ids: tensor<2x3xi64>, %table: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>}, %t: tensor<6xi64>) -> tensor<f32> {
    %e = dtg.gather %table, %ids {axis = 0 : i64} : tensor<8x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
    %x = dtg.reshape %e : tensor<2x3x4xf32> -> tensor<6x4xf32>
    %wt = dtg.transpose %table {perm = array<i64: 1, 0>} : tensor<8x4xf32> -> tensor<4x8xf32>
    %logits = dtg.matmul %x, %wt : tensor<6x4xf32>, tensor<4x8xf32> -> tensor<6x8xf32>
    %lp = dtg.log_softmax %logits {axis = 1 : i64} : tensor<6x8xf32>
    %l = dtg.nll_loss %lp, %t {reduction = "sum"} : tensor<6x8xf32>, tensor<6xi64> -> tensor<f32>
    return %l : tensor<f32>
  }
}
