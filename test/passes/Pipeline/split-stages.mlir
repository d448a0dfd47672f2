// RUN: dtc-opt %s --dtc-split-stages=stages=2 | FileCheck %s

// Tests that the forward is cut into two stages of about equal cost, at
// the cut that sends the least (one [8, 64] value between the two blocks,
// not two in the middle of one); that the weight both blocks read (tied)
// is an argument of both stages, which say so; and that a transpose of a
// parameter alone is computed by the stage that reads it, not sent. The
// value sent names the op that made it (dtc.source: its transfers take that
// location, so traces name them by the ONNX node).

func.func @main(%x: tensor<8x64xf32> {dtg.name = "x", dtg.role = "input"},
                %w: tensor<64x64xf32> {dtg.name = "w", dtg.role = "parameter"},
                %v: tensor<64x64xf32> {dtg.name = "v", dtg.role = "parameter"})
    -> (tensor<f32> {dtg.name = "loss"}) {
  %vt = dtg.transpose %v {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32> loc("/vt")
  %a = dtg.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc("/h.0/a")
  %b = dtg.tanh %a : tensor<8x64xf32> loc("/h.0/b")
  %c = dtg.add %b, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32> loc("/h.0/c")
  %d = dtg.matmul %c, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc("/h.1/d")
  %e = dtg.matmul %d, %vt : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc("/h.1/e")
  %l = dtg.reduce_sum %e {axes = array<i64: 0, 1>, keepdims = false} : tensor<8x64xf32> -> tensor<f32> loc("/loss")
  return %l : tensor<f32>
}

// CHECK: #[[SRC:.*]] = loc("/h.0/c")
// CHECK: module attributes {dtc.pipeline_stages = 2 : i64}
// CHECK: func.func @main_stage0(%[[X:.*]]: tensor<8x64xf32> {dtg.name = "x", dtg.role = "input"}, %[[W:.*]]: tensor<64x64xf32> {dtc.pipeline_stages_using = array<i64: 0, 1>, dtg.name = "w", dtg.role = "parameter"}) -> (tensor<8x64xf32> {dtc.chunk = 0 : i64, dtc.source = #[[SRC]], dtg.name = "stage0.out0", dtg.role = "activation"})
// CHECK-SAME: dtc.stage = 0 : i64
// CHECK:   dtg.matmul %[[X]], %[[W]]
// CHECK:   dtg.tanh
// CHECK:   %[[C:.*]] = dtg.add
// CHECK:   return %[[C]]
// CHECK: func.func @main_stage1(%[[W1:.*]]: tensor<64x64xf32> {dtc.pipeline_stages_using = array<i64: 0, 1>, dtg.name = "w", dtg.role = "parameter"}, %[[V:.*]]: tensor<64x64xf32> {dtg.name = "v", dtg.role = "parameter"}, %[[IN:.*]]: tensor<8x64xf32> {dtc.chunk = 0 : i64, dtc.source = #[[SRC]], dtg.name = "stage0.out0", dtg.role = "activation"}) -> (tensor<f32> {dtc.chunk = 0 : i64, dtg.name = "loss"})
// CHECK-SAME: dtc.stage = 1 : i64
// CHECK:   %[[VT:.*]] = dtg.transpose %[[V]]
// CHECK:   %[[D:.*]] = dtg.matmul %[[IN]], %[[W1]]
// CHECK:   dtg.matmul %[[D]], %[[VT]]
// CHECK:   dtg.reduce_sum
// CHECK-NOT: func.func @main(
