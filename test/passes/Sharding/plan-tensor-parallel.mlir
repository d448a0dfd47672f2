// RUN: dtc-opt %s -split-input-file --dtc-plan-tensor-parallel="tp=2" | FileCheck %s

// Tests Megatron's plan on an attention block whose query, key and value
// come from one fused projection (W [3*8, 8], its output sliced into three
// equal parts, as PyTorch's c_attn exports): W becomes [3, 8, 8] (the same
// elements; dtg.model_shape keeps [24, 8]) and its bias [3, 8], the
// projection one batched matmul of x [1, 2, 4, 8] by W's parts transposed
// [3, 1, 8, 8], each part a slice of it; W and its bias are split along
// dimension 1 (each part by output features: by heads), the output
// projection by its input features (row-parallel).

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.+}}: tensor<2x4x8xf32> {dtg.name = "x", dtg.role = "input"}
// CHECK-SAME: %{{.+}}: tensor<3x8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}, {}]>, dtg.model_shape = array<i64: 24, 8>, dtg.name = "qkv.weight", dtg.role = "parameter"}
// CHECK-SAME: %{{.+}}: tensor<3x8xf32> {dtg.model_shape = array<i64: 24>, dtg.name = "qkv.bias", dtg.role = "parameter"}
// CHECK-SAME: %{{.+}}: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>, dtg.name = "proj.weight", dtg.role = "parameter"}
// CHECK:      %[[WT:.+]] = dtg.transpose %arg1 {perm = array<i64: 0, 2, 1>} : tensor<3x8x8xf32> -> tensor<3x8x8xf32>
// CHECK-NEXT: %[[W4:.+]] = dtg.reshape %[[WT]] : tensor<3x8x8xf32> -> tensor<3x1x8x8xf32>
// CHECK-NEXT: %[[X4:.+]] = dtg.reshape %arg0 : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[Y:.+]] = dtg.matmul %[[X4]], %[[W4]] : tensor<1x2x4x8xf32>, tensor<3x1x8x8xf32> -> tensor<3x2x4x8xf32>
// CHECK-NEXT: %[[B:.+]] = dtg.reshape %arg2 : tensor<3x8xf32> -> tensor<3x1x1x8xf32>
// CHECK-NEXT: %[[YB:.+]] = dtg.add %[[Y]], %[[B]]
// CHECK-NEXT: %[[Q:.+]] = dtg.slice %[[YB]] {limits = array<i64: 1, 2, 4, 8>, starts = array<i64: 0, 0, 0, 0>
// CHECK-NEXT: dtg.reshape %[[Q]] : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[K:.+]] = dtg.slice %[[YB]] {limits = array<i64: 2, 2, 4, 8>, starts = array<i64: 1, 0, 0, 0>
// CHECK:      %[[V:.+]] = dtg.slice %[[YB]] {limits = array<i64: 3, 2, 4, 8>, starts = array<i64: 2, 0, 0, 0>
// CHECK-NOT:  dtg.slice

module {
  func.func @main(%x: tensor<2x4x8xf32> {dtg.name = "x", dtg.role = "input"}, %w: tensor<24x8xf32> {dtg.name = "qkv.weight", dtg.role = "parameter"}, %b: tensor<24xf32> {dtg.name = "qkv.bias", dtg.role = "parameter"}, %wo: tensor<8x8xf32> {dtg.name = "proj.weight", dtg.role = "parameter"}) -> tensor<2x4x8xf32> {
    %wt = dtg.transpose %w {perm = array<i64: 1, 0>} : tensor<24x8xf32> -> tensor<8x24xf32>
    %y = dtg.matmul %x, %wt : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
    %yb = dtg.add %b, %y : tensor<24xf32>, tensor<2x4x24xf32> -> tensor<2x4x24xf32>
    %q = dtg.slice %yb {limits = array<i64: 2, 4, 8>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %k = dtg.slice %yb {limits = array<i64: 2, 4, 16>, starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %v = dtg.slice %yb {limits = array<i64: 2, 4, 24>, starts = array<i64: 0, 0, 16>, steps = array<i64: 1, 1, 1>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
    %qk = dtg.mul %q, %k : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = dtg.mul %qk, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %wot = dtg.transpose %wo {perm = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
    %o = dtg.matmul %h, %wot : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    return %o : tensor<2x4x8xf32>
  }
}

// -----

// Tests that a projection whose parts are not all slices (here its output
// is also used whole) stays one matrix, split by its output features.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.+}}: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>, dtg.name = "w", dtg.role = "parameter"}
// CHECK-NOT:  dtg.model_shape

module {
  func.func @main(%x: tensor<2x8xf32> {dtg.name = "x", dtg.role = "input"}, %w: tensor<16x8xf32> {dtg.name = "w", dtg.role = "parameter"}) -> (tensor<2x8xf32>, tensor<2x16xf32>) {
    %wt = dtg.transpose %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
    %y = dtg.matmul %x, %wt : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
    %a = dtg.slice %y {limits = array<i64: 2, 8>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x16xf32> -> tensor<2x8xf32>
    return %a, %y : tensor<2x8xf32>, tensor<2x16xf32>
  }
}
