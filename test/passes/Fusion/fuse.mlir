// RUN: dtc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dtc-fuse))' | FileCheck %s

// Kernel fusion: which ops dtc-fuse groups into dtg.fusion, and which it
// leaves alone.

// Tests that an elementwise chain with a broadcast operand becomes one loop
// kernel, with the scalar constant copied in.
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.+]] = dtg.fusion "loop"(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: dtg.constant dense<5.000000e-01> : tensor<f32>
// CHECK: dtg.add
// CHECK: dtg.mul
// CHECK: dtg.tanh
// CHECK: dtg.yield
// CHECK-NOT: dtg.tanh
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = dtg.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %c = dtg.constant dense<0.5> : tensor<f32>
  %m = dtg.mul %s, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %t = dtg.tanh %m : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Tests that a matmul takes its bias and activation as an epilogue and its
// transposed weight as a view; the weight's other user stays outside.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[R:.+]] = dtg.fusion "gemm"(%[[W]], %[[X]], %[[B]])
// CHECK: dtg.transpose
// CHECK: dtg.matmul
// CHECK: dtg.add
// CHECK: dtg.relu
// CHECK: dtg.yield
// CHECK-NOT: dtg.transpose
// CHECK: %[[N:.+]] = dtg.neg %[[W]]
// CHECK: return %[[R]], %[[N]]
func.func @gemm(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16x8xf32>) {
  %t = dtg.transpose %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %m = dtg.matmul %x, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = dtg.add %b, %m : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %r = dtg.relu %a : tensor<4x16xf32>
  %n = dtg.neg %w : tensor<16x8xf32>
  return %r, %n : tensor<4x16xf32>, tensor<16x8xf32>
}

// -----

// Tests that a view strides cannot express (attention's heads transposed
// back, then merged by a reshape) stays outside the kernel, which reads its
// result, while the product still takes its epilogue and its transposed
// weight: the view does not cost the whole kernel.
// CHECK-LABEL: func.func @inexpressible_view
// CHECK-SAME: (%[[H:.+]]: tensor<2x4x3x5xf32>, %[[W:.+]]: tensor<6x20xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK: %[[T:.+]] = dtg.transpose %[[H]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[R:.+]] = dtg.fusion "gemm"(%[[T]], %[[W]], %[[B]])
// CHECK: dtg.reshape
// CHECK: dtg.transpose
// CHECK: dtg.matmul
// CHECK: dtg.add
// CHECK: dtg.yield
// CHECK: return %[[R]]
func.func @inexpressible_view(%h: tensor<2x4x3x5xf32>, %w: tensor<6x20xf32>, %b: tensor<6xf32>) -> tensor<2x3x6xf32> {
  %t = dtg.transpose %h {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x3x5xf32> -> tensor<2x3x4x5xf32>
  %x = dtg.reshape %t : tensor<2x3x4x5xf32> -> tensor<2x3x20xf32>
  %wt = dtg.transpose %w {perm = array<i64: 1, 0>} : tensor<6x20xf32> -> tensor<20x6xf32>
  %m = dtg.matmul %x, %wt : tensor<2x3x20xf32>, tensor<20x6xf32> -> tensor<2x3x6xf32>
  %a = dtg.add %b, %m : tensor<6xf32>, tensor<2x3x6xf32> -> tensor<2x3x6xf32>
  return %a : tensor<2x3x6xf32>
}

// -----

// Tests that the gradient-norm chain (scale, square, sum, widen, add to the
// running sum) becomes one reduction kernel that also returns the scaled
// gradient, which has a user outside.
// CHECK-LABEL: func.func @norm
// CHECK: %[[R:.+]]:2 = dtg.fusion "reduction"
// CHECK: %[[D:.+]] = dtg.div
// CHECK: dtg.mul %[[D]], %[[D]]
// CHECK: dtg.reduce_sum
// CHECK: dtg.cast
// CHECK: %[[S:.+]] = dtg.add
// CHECK: dtg.yield %[[D]], %[[S]]
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @norm(%g: tensor<64x32xf32>, %n: tensor<f32>, %acc: tensor<f64>) -> (tensor<64x32xf32>, tensor<f64>) {
  %d = dtg.div %g, %n : tensor<64x32xf32>, tensor<f32> -> tensor<64x32xf32>
  %sq = dtg.mul %d, %d : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  %s = dtg.reduce_sum %sq {axes = array<i64: 0, 1>, keepdims = false} : tensor<64x32xf32> -> tensor<f32>
  %c = dtg.cast %s : tensor<f32> -> tensor<f64>
  %r = dtg.add %acc, %c : tensor<f64>, tensor<f64> -> tensor<f64>
  return %d, %r : tensor<64x32xf32>, tensor<f64>
}

// -----

// Tests that a running sum over several gradients of one shape becomes one
// reduction kernel per term, each adding its own sum of squares to the
// previous term's result (the same kernel for every layer of a model),
// rather than one kernel that reduces every gradient, whose code would grow
// with the model's depth: reductions share a kernel only when they read a
// tensor in common, and a term that none of a kernel's reductions feeds
// stays out of it.
// CHECK-LABEL: func.func @running_sum
// CHECK-SAME: (%[[G0:.+]]: tensor<64xf32>, %[[G1:.+]]: tensor<64xf32>, %[[G2:.+]]: tensor<64xf32>)
// (The first sum, g0 + g1, is the second kernel: g1's square sum feeds it.)
// CHECK: %[[S0:.+]] = dtg.fusion "reduction"(%[[G1]])
// CHECK-COUNT-1: dtg.reduce_sum
// CHECK: dtg.yield
// CHECK: %[[S1:.+]] = dtg.fusion "reduction"(%[[G0]], %[[S0]])
// CHECK-COUNT-1: dtg.reduce_sum
// CHECK: dtg.add
// CHECK: dtg.yield
// CHECK: %[[S2:.+]] = dtg.fusion "reduction"(%[[G2]], %[[S1]])
// CHECK-COUNT-1: dtg.reduce_sum
// CHECK: dtg.add
// CHECK: dtg.sqrt
// CHECK: dtg.yield
// CHECK: return %[[S2]]
func.func @running_sum(%g0: tensor<64xf32>, %g1: tensor<64xf32>, %g2: tensor<64xf32>) -> tensor<f64> {
  %q0 = dtg.mul %g0, %g0 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %r0 = dtg.reduce_sum %q0 {axes = array<i64: 0>, keepdims = false} : tensor<64xf32> -> tensor<f32>
  %c0 = dtg.cast %r0 : tensor<f32> -> tensor<f64>
  %q1 = dtg.mul %g1, %g1 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %r1 = dtg.reduce_sum %q1 {axes = array<i64: 0>, keepdims = false} : tensor<64xf32> -> tensor<f32>
  %c1 = dtg.cast %r1 : tensor<f32> -> tensor<f64>
  %a1 = dtg.add %c0, %c1 : tensor<f64>, tensor<f64> -> tensor<f64>
  %q2 = dtg.mul %g2, %g2 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %r2 = dtg.reduce_sum %q2 {axes = array<i64: 0>, keepdims = false} : tensor<64xf32> -> tensor<f32>
  %c2 = dtg.cast %r2 : tensor<f32> -> tensor<f64>
  %a2 = dtg.add %a1, %c2 : tensor<f64>, tensor<f64> -> tensor<f64>
  %n = dtg.sqrt %a2 : tensor<f64>
  return %n : tensor<f64>
}

// -----

// Tests that a kernel reads at most 16 buffers: a sum of 18 tensors is two
// kernels, the last 15 terms and the first kernel's result in the second.
// CHECK-LABEL: func.func @wide
// CHECK: %[[A:.+]] = dtg.fusion "loop"(%arg0, %arg1, %arg2) :
// CHECK: %[[B:.+]] = dtg.fusion "loop"(%[[A]], %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9, %arg10, %arg11, %arg12, %arg13, %arg14, %arg15, %arg16, %arg17) :
// CHECK-NOT: dtg.fusion
// CHECK: return %[[B]]
func.func @wide(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>, %x4: tensor<4xf32>, %x5: tensor<4xf32>, %x6: tensor<4xf32>, %x7: tensor<4xf32>, %x8: tensor<4xf32>, %x9: tensor<4xf32>, %x10: tensor<4xf32>, %x11: tensor<4xf32>, %x12: tensor<4xf32>, %x13: tensor<4xf32>, %x14: tensor<4xf32>, %x15: tensor<4xf32>, %x16: tensor<4xf32>, %x17: tensor<4xf32>) -> tensor<4xf32> {
  %a1 = dtg.add %x0, %x1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a2 = dtg.add %a1, %x2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a3 = dtg.add %a2, %x3 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a4 = dtg.add %a3, %x4 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a5 = dtg.add %a4, %x5 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a6 = dtg.add %a5, %x6 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a7 = dtg.add %a6, %x7 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a8 = dtg.add %a7, %x8 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a9 = dtg.add %a8, %x9 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a10 = dtg.add %a9, %x10 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a11 = dtg.add %a10, %x11 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a12 = dtg.add %a11, %x12 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a13 = dtg.add %a12, %x13 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a14 = dtg.add %a13, %x14 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a15 = dtg.add %a14, %x15 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a16 = dtg.add %a15, %x16 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a17 = dtg.add %a16, %x17 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %a17 : tensor<4xf32>
}

// -----

// Tests that forward and backward ops never share a kernel, and that the
// backward kernel keeps dtg.backward.
// CHECK-LABEL: func.func @phases
// CHECK: %[[E:.+]] = dtg.exp
// CHECK: dtg.fusion "loop"(%[[E]]) {dtg.backward}
func.func @phases(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = dtg.exp %x : tensor<4x8xf32>
  %n = dtg.neg %e {dtg.backward} : tensor<4x8xf32>
  %t = dtg.tanh %n {dtg.backward} : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Tests that nothing fuses across a call.
// CHECK-LABEL: func.func @barrier
// CHECK-NOT: dtg.fusion
// CHECK: return
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @barrier(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = dtg.exp %x : tensor<4xf32>
  %c = func.call @callee(%e) : (tensor<4xf32>) -> tensor<4xf32>
  %t = dtg.tanh %c : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Tests that a producer whose outside user comes before the kernel stays
// out of it.
// CHECK-LABEL: func.func @early_user
// CHECK: %[[E:.+]] = dtg.exp
// CHECK: %[[C:.+]] = call @callee(%[[E]])
// CHECK: dtg.fusion "loop"(%[[E]], %[[C]])
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @early_user(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = dtg.exp %x : tensor<4xf32>
  %c = func.call @callee(%e) : (tensor<4xf32>) -> tensor<4xf32>
  %t = dtg.add %e, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %u = dtg.tanh %t : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

// Tests that a single op, and an integer matmul, stay unfused.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: dtg.fusion
// CHECK: return
func.func @alone(%x: tensor<4x8xf32>, %a: tensor<4x8xi64>, %b: tensor<8x2xi64>) -> (tensor<4x8xf32>, tensor<4x2xi64>) {
  %e = dtg.exp %x : tensor<4x8xf32>
  %m = dtg.matmul %a, %b : tensor<4x8xi64>, tensor<8x2xi64> -> tensor<4x2xi64>
  %r = dtg.neg %m : tensor<4x2xi64>
  return %e, %r : tensor<4x8xf32>, tensor<4x2xi64>
}

// -----

// Tests that a reduction feeding an op over the reduction's input shape
// (a second pass over the rows) does not join that op's kernel.
// CHECK-LABEL: func.func @two_pass
// CHECK: %[[S:.+]] = dtg.reduce_sum
// CHECK: dtg.fusion "loop"(%{{.+}}, %[[S]])
func.func @two_pass(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = dtg.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = dtg.sub %x, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = dtg.exp %d : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// A split's gradient: each part's gradient padded with zeros to the whole and
// summed becomes one concat of the parts, which keeps the sum's marks; the
// sums may take the parts in any order.
// CHECK-LABEL: func.func @split_gradient
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xf32>, %[[B:.+]]: tensor<2x4xf32>, %[[C:.+]]: tensor<2x4xf32>)
// CHECK-NOT: dtg.pad
// CHECK: %[[J:.+]] = dtg.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64, dtg.backward}
// CHECK-NOT: dtg.pad
// CHECK: %[[K:.+]] = dtg.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64}
// CHECK-NOT: dtg.pad
// CHECK: return %[[J]], %[[K]]
func.func @split_gradient(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> (tensor<2x12xf32>, tensor<2x12xf32>) {
  %pa = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %pb = dtg.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 4>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %pc = dtg.pad %c {low = array<i64: 0, 8>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %0 = dtg.add %pc, %pb {dtg.backward} : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %1 = dtg.add %pa, %0 {dtg.backward} : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %qa = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %qb = dtg.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 4>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %qc = dtg.pad %c {low = array<i64: 0, 8>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %2 = dtg.add %qa, %qb : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %3 = dtg.add %2, %qc : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  return %1, %3 : tensor<2x12xf32>, tensor<2x12xf32>
}

// -----

// Two of three parts: their concat, padded to the whole.
// CHECK-LABEL: func.func @two_parts
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xf32>, %[[B:.+]]: tensor<2x4xf32>)
// CHECK: %[[J:.+]] = dtg.concat %[[A]], %[[B]] {axis = 1 : i64}
// CHECK: %[[P:.+]] = dtg.pad %[[J]] {high = array<i64: 0, 4>, low = array<i64: 0, 0>, mode = "constant", value = 0.000000e+00 : f64}
// CHECK: return %[[P]]
func.func @two_parts(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %pa = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %pb = dtg.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 4>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %0 = dtg.add %pa, %pb : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// Pads that leave a gap, overlap, pad a second axis, pad with a nonzero value
// or have another user are still summed.
// CHECK-LABEL: func.func @pads_kept
// CHECK-NOT: dtg.concat
func.func @pads_kept(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x12xf32>, tensor<2x12xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %pa = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %gap = dtg.pad %b {low = array<i64: 0, 8>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %0 = dtg.add %pa, %gap : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %ra = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 8>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %over = dtg.pad %b {low = array<i64: 0, 2>, high = array<i64: 0, 6>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x12xf32>
  %1 = dtg.add %ra, %over : tensor<2x12xf32>, tensor<2x12xf32> -> tensor<2x12xf32>
  %sa = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 1, 4>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<3x8xf32>
  %sb = dtg.pad %b {low = array<i64: 1, 4>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<3x8xf32>
  %2 = dtg.add %sa, %sb : tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %ta = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 4>, mode = "constant", value = 1.0 : f64} : tensor<2x4xf32> -> tensor<2x8xf32>
  %tb = dtg.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x8xf32>
  %3 = dtg.add %ta, %tb : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %ua = dtg.pad %a {low = array<i64: 0, 0>, high = array<i64: 0, 4>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x8xf32>
  %ub = dtg.pad %b {low = array<i64: 0, 4>, high = array<i64: 0, 0>, mode = "constant", value = 0.0 : f64} : tensor<2x4xf32> -> tensor<2x8xf32>
  %4 = dtg.add %ua, %ub : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4, %ua : tensor<2x12xf32>, tensor<2x12xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Tests a batch norm gradient's sums: the variance, sum(g) and
// sum(g * centered) are sums over the same elements that read x in
// common, so one reduction kernel computes all three (with the per-channel
// values read only by later ops, invStd and dscale, as its epilogue), and
// the dx kernel recomputes centered = x - mean from x instead of reading a
// centered tensor the reduction kernel would have to write.
// CHECK-LABEL: func.func @siblings
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4x4xf32>, %[[G:.+]]: tensor<2x3x4x4xf32>, %[[S:.+]]: tensor<1x3x1x1xf32>)
// CHECK: %[[M:.+]] = dtg.reduce_mean %[[X]]
// CHECK: %[[R:.+]]:{{[0-9]+}} = dtg.fusion "reduction"(%[[X]], %[[M]], %[[G]])
// CHECK-COUNT-3: dtg.reduce_
// CHECK: dtg.rsqrt
// CHECK: dtg.yield
// CHECK-NOT: dtg.reduce_
// CHECK: dtg.fusion "loop"(%[[X]], %[[M]],
// CHECK: dtg.sub
// CHECK-NOT: dtg.reduce_
// CHECK: return
func.func @siblings(%x: tensor<2x3x4x4xf32>, %g: tensor<2x3x4x4xf32>, %s: tensor<1x3x1x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) {
  %eps = dtg.constant dense<1.0e-05> : tensor<f32>
  %inv = dtg.constant dense<0.03125> : tensor<f32>
  %m = dtg.reduce_mean %x {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<1x3x1x1xf32>
  %c = dtg.sub %x, %m : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %c2 = dtg.mul %c, %c : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %v = dtg.reduce_mean %c2 {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<1x3x1x1xf32>
  %gc = dtg.mul %g, %c : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %sgc = dtg.reduce_sum %gc {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<1x3x1x1xf32>
  %sg = dtg.reduce_sum %g {axes = array<i64: 0, 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<1x3x1x1xf32>
  %ve = dtg.add %v, %eps : tensor<1x3x1x1xf32>, tensor<f32> -> tensor<1x3x1x1xf32>
  %is = dtg.rsqrt %ve : tensor<1x3x1x1xf32>
  %ds = dtg.mul %sgc, %is : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32> -> tensor<1x3x1x1xf32>
  %mg = dtg.mul %sg, %inv : tensor<1x3x1x1xf32>, tensor<f32> -> tensor<1x3x1x1xf32>
  %is2 = dtg.mul %is, %is : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32> -> tensor<1x3x1x1xf32>
  %pm = dtg.mul %sgc, %inv : tensor<1x3x1x1xf32>, tensor<f32> -> tensor<1x3x1x1xf32>
  %p = dtg.mul %is2, %pm : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32> -> tensor<1x3x1x1xf32>
  %gain = dtg.mul %s, %is : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32> -> tensor<1x3x1x1xf32>
  %d0 = dtg.sub %g, %mg : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %d1 = dtg.mul %c, %p : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %d2 = dtg.sub %d0, %d1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %dx = dtg.mul %gain, %d2 : tensor<1x3x1x1xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  return %dx, %ds, %sg : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>
}

// -----

// Tests that a reduction whose sibling (a sum over the same elements
// reading a tensor in common) is read before the epilogue that would take
// it stays out of that epilogue's kernel, to share one pass with its
// sibling: exp(a) is last, but b's user comes first, so the kernel forms
// at b's user with both sums, and exp(a) is a kernel of its own.
// CHECK-LABEL: func.func @sibling_first
// CHECK: %[[R:.+]]:2 = dtg.fusion "reduction"
// CHECK-COUNT-2: dtg.reduce_sum
// CHECK: dtg.mul
// CHECK: dtg.yield
// CHECK: dtg.exp %[[R]]#
// CHECK: return
func.func @sibling_first(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %sq = dtg.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %a = dtg.reduce_sum %sq {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %b = dtg.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %bb = dtg.mul %b, %b : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %ea = dtg.exp %a : tensor<4x1xf32>
  return %ea, %bb : tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// Tests that a cheap producer reached first from one user, while its other
// user is not yet in the group, still joins as an ordinary member once both
// are (a copy is only made of what stays out): one kernel, nothing left
// outside it.
// CHECK-LABEL: func.func @late_user
// CHECK-NEXT: %[[F:.+]] = dtg.fusion "loop"
// CHECK: dtg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @late_user(%x: tensor<4x8xf32>, %s: tensor<f32>, %t: tensor<f32>) -> tensor<4x8xf32> {
  %p = dtg.mul %x, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %u1 = dtg.mul %p, %p : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %u2 = dtg.add %p, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %w = dtg.mul %u2, %t : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %r = dtg.add %u1, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Tests a cheap producer copied into two kernels (a loop and a reduction,
// each with a reader of it that comes before the other kernel) and held as
// a member by a third, the matmul's whose epilogue it is: the kernels
// that copy it leave the original to its owner (no kernel reads an op a
// previous one erased), and the matmul's kernel returns the product they
// read.
// CHECK-LABEL: func.func @copy_twice
// CHECK: %[[G:.+]] = dtg.fusion "gemm"
// CHECK: %[[R:.+]] = dtg.fusion "reduction"(%[[G]], %{{.+}})
// CHECK: %[[L:.+]] = dtg.fusion "loop"(%[[G]], %{{.+}}, %{{.+}}, %[[R]])
// CHECK: return %[[L]], %[[R]]
func.func @copy_twice(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>, %s: tensor<8xf32>, %b: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x1xf32>) {
  %m = dtg.matmul %x, %w : tensor<16x8xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %p = dtg.mul %m, %s : tensor<16x8xf32>, tensor<8xf32> -> tensor<16x8xf32>
  %u = dtg.mul %p, %b : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %q = dtg.mul %p, %p : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %r = dtg.reduce_sum %q {axes = array<i64: 1>, keepdims = true} : tensor<16x8xf32> -> tensor<16x1xf32>
  %e = dtg.exp %r : tensor<16x1xf32>
  %v = dtg.add %u, %p : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %o = dtg.mul %v, %e : tensor<16x8xf32>, tensor<16x1xf32> -> tensor<16x8xf32>
  return %o, %e : tensor<16x8xf32>, tensor<16x1xf32>
}
