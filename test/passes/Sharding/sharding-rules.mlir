// RUN: dtc-opt %s --dtc-test-sharding-rules | FileCheck %s

// Tests that every registered dtg op has a sharding rule (the pass fails
// naming any that lacks one), and the rules of the ops partitioning leans
// on: p parallel, r reduction, b blocked factors with their sizes, then the
// factor of each operand and result dimension.

// CHECK-LABEL: func.func @rules
func.func @rules(%a: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                 %ids: tensor<2x4xi64>, %table: tensor<100x8xf32>,
                 %img: tensor<2x3x8x8xf32>, %k: tensor<5x3x3x3xf32>,
                 %logp: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // Batched matmul: batch and rows and columns parallel, K a reduction.
  // CHECK: dtg.matmul {{.*}}dtc.sharding_rule = "[a:r8, b:p4, c:p16, d:p2] (d, b, a), (a, c) -> (d, b, c)"
  %0 = dtg.matmul %a, %w : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  // Broadcast add: the bias follows the last dimension.
  // CHECK: dtg.add {{.*}}dtc.sharding_rule = "[a:p2, b:p4, c:p16] (a, b, c), (c) -> (a, b, c)"
  %1 = dtg.add %0, %b : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  // Softmax: every dimension parallel (over a split axis, partitioning
  // reduces the maximum and the sum across the blocks).
  // CHECK: dtg.softmax {{.*}}dtc.sharding_rule = "[a:p2, b:p4, c:p16] (a, b, c) -> (a, b, c)"
  %2 = dtg.softmax %1 {axis = 2 : i64} : tensor<2x4x16xf32>
  // Reshape merging the two leading dimensions: the major one leads.
  // CHECK: dtg.reshape {{.*}}dtc.sharding_rule = "[a:p2, b:b4, c:p16] (a, b, c) -> (a, c)"
  %3 = dtg.reshape %2 : tensor<2x4x16xf32> -> tensor<8x16xf32>
  // Sum over rows: a reduction; max: blocked.
  // CHECK: dtg.reduce_sum {{.*}}dtc.sharding_rule = "[a:r8, b:p16] (a, b) -> (b)"
  %4 = dtg.reduce_sum %3 {axes = array<i64: 0>, keepdims = false} : tensor<8x16xf32> -> tensor<16xf32>
  // CHECK: dtg.reduce_max {{.*}}dtc.sharding_rule = "[a:b8, b:p16] (a, b) -> (-, b)"
  %5 = dtg.reduce_max %3 {axes = array<i64: 0>, keepdims = true} : tensor<8x16xf32> -> tensor<1x16xf32>
  // Embedding lookup: the table's rows a reduction (a rank holding some
  // rows reads zeros for the others: vocabulary parallelism), the ids and
  // the width parallel.
  // CHECK: dtg.gather {{.*}}dtc.sharding_rule = "[a:r100, b:p8, c:p2, d:p4] (a, b), (c, d) -> (c, d, b)"
  %6 = dtg.gather %table, %ids {axis = 0 : i64} : tensor<100x8xf32>, tensor<2x4xi64> -> tensor<2x4x8xf32>
  // Convolution: batch and output channels parallel, input channels a
  // reduction, windows whole.
  // CHECK: dtg.conv {{.*}}dtc.sharding_rule = "[a:p2, b:r3, c:b8, d:b8, e:p5, f:b3, g:b3, h:b6, i:b6] (a, b, c, d), (e, b, f, g) -> (a, e, h, i)"
  %7 = dtg.conv %img, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<2x3x8x8xf32>, tensor<5x3x3x3xf32> -> tensor<2x5x6x6xf32>
  // A summed loss: the samples a reduction, and the classes (each rank
  // picks the targets among its classes).
  // CHECK: dtg.nll_loss {{.*}}dtc.sharding_rule = "[a:r8, b:r10] (a, b), (a) -> ()"
  %8 = dtg.nll_loss %logp, %t {reduction = "sum"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  return
}
