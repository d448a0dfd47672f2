// RUN: dtc-opt %s -split-input-file --dtc-recompute=mode=full | FileCheck %s --check-prefix=FULL
// RUN: dtc-opt %s -split-input-file --dtc-recompute=mode=selective | FileCheck %s --check-prefix=SEL
// RUN: dtc-opt %s -split-input-file --dtc-recompute=mode=none | FileCheck %s --check-prefix=NONE

// Tests that full recompute keeps each layer's outputs (%b, read by layer
// /h.1; %d, read by the loss) and recomputes the rest of the layer in the
// backward, just before its first backward use, from the saved outputs.

// NONE-LABEL: func.func @layers
// NONE-NOT: dtg.recompute
// FULL-LABEL: func.func @layers
// FULL-SAME: (%[[X:[^:]+]]: tensor<4xf32>
// FULL: %[[A:.+]] = dtg.tanh %[[X]] : tensor<4xf32>
// FULL-NEXT: %[[B:.+]] = dtg.tanh %[[A]] : tensor<4xf32>
// FULL-NEXT: %[[C:.+]] = dtg.tanh %[[B]] : tensor<4xf32>
// FULL-NEXT: %[[D:.+]] = dtg.tanh %[[C]] : tensor<4xf32>
// FULL-NEXT: %[[L:.+]] = dtg.reduce_sum %[[D]]
// FULL-NEXT: %[[C2:.+]] = dtg.tanh %[[B]] {dtg.backward, dtg.recompute} : tensor<4xf32>
// FULL-NEXT: %[[GC:.+]] = dtg.mul %[[D]], %[[C2]] {dtg.backward}
// FULL-NEXT: %[[GB:.+]] = dtg.mul %[[GC]], %[[B]] {dtg.backward}
// FULL-NEXT: %[[A2:.+]] = dtg.tanh %[[X]] {dtg.backward, dtg.recompute} : tensor<4xf32>
// FULL-NEXT: %[[GA:.+]] = dtg.mul %[[GB]], %[[A2]] {dtg.backward}
// FULL-NEXT: return %[[L]], %[[GA]]
func.func @layers(%x: tensor<4xf32> {dtg.role = "input"}) -> (tensor<f32>, tensor<4xf32>) {
  %a = dtg.tanh %x : tensor<4xf32> loc("/h.0/Tanh")
  %b = dtg.tanh %a : tensor<4xf32> loc("/h.0/Tanh_1")
  %c = dtg.tanh %b : tensor<4xf32> loc("/h.1/Tanh")
  %d = dtg.tanh %c : tensor<4xf32> loc("/h.1/Tanh_1")
  %l = dtg.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32> loc("/ReduceSum")
  %gc = dtg.mul %d, %c {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gb = dtg.mul %gc, %b {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %ga = dtg.mul %gb, %a {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %l, %ga : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that without layer names full recompute cuts the 6 forward ops into
// ceil(sqrt(6)) = 3 segments ({a, b}, {c, e}, {d, l}), keeps each segment's
// outputs (%b, %c) and recomputes the rest; a forward op only the backward
// reads (%e) moves into the backward.

// FULL-LABEL: func.func @segments
// FULL-SAME: (%[[X:[^:]+]]: tensor<4xf32>
// FULL: %[[A:.+]] = dtg.tanh %[[X]] : tensor<4xf32>
// FULL-NEXT: %[[B:.+]] = dtg.tanh %[[A]] : tensor<4xf32>
// FULL-NEXT: %[[C:.+]] = dtg.tanh %[[B]] : tensor<4xf32>
// FULL-NEXT: %[[D:.+]] = dtg.tanh %[[C]] : tensor<4xf32>
// FULL-NEXT: %[[L:.+]] = dtg.reduce_sum %[[D]]
// FULL-NEXT: %[[D2:.+]] = dtg.tanh %[[C]] {dtg.backward, dtg.recompute} : tensor<4xf32>
// FULL-NEXT: %[[E2:.+]] = dtg.exp %[[C]] {dtg.backward, dtg.recompute} : tensor<4xf32>
// FULL-NEXT: %[[GC:.+]] = dtg.mul %[[D2]], %[[E2]] {dtg.backward}
// FULL-NEXT: %[[GB:.+]] = dtg.mul %[[GC]], %[[B]] {dtg.backward}
// FULL-NEXT: %[[A2:.+]] = dtg.tanh %[[X]] {dtg.backward, dtg.recompute} : tensor<4xf32>
// FULL-NEXT: %[[GA:.+]] = dtg.mul %[[GB]], %[[A2]] {dtg.backward}
// FULL-NEXT: return %[[L]], %[[GA]]
func.func @segments(%x: tensor<4xf32> {dtg.role = "input"}) -> (tensor<f32>, tensor<4xf32>) {
  %a = dtg.tanh %x : tensor<4xf32>
  %b = dtg.tanh %a : tensor<4xf32>
  %c = dtg.tanh %b : tensor<4xf32>
  %e = dtg.exp %c : tensor<4xf32>
  %d = dtg.tanh %c : tensor<4xf32>
  %l = dtg.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
  %gc = dtg.mul %d, %e {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gb = dtg.mul %gc, %b {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %ga = dtg.mul %gb, %a {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %l, %ga : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that selective recompute recomputes the attention-like core (the
// product of two activations, softmax, dropout) from the values the backward
// saves anyway (%q, the output of a product with a parameter), that the
// recomputed dropout reads the same key and stream (the same mask), and that
// the forward keeps computing what the forward reads.

// SEL-LABEL: func.func @attention
// SEL-SAME: (%[[X:[^:]+]]: tensor<4x8xf32> {{[^,]*}}, %[[W:[^:]+]]: tensor<8x8xf32> {{[^,]*}}, %[[KEY:[^:]+]]: tensor<2xi64>
// SEL: %[[Q:.+]] = dtg.matmul %[[X]], %[[W]] :
// SEL-NEXT: %[[K:.+]] = dtg.transpose %[[Q]]
// SEL-NEXT: %[[S:.+]] = dtg.matmul %[[Q]], %[[K]] :
// SEL-NEXT: %[[P:.+]] = dtg.softmax %[[S]]
// SEL-NEXT: %[[Y:[^,]+]], %[[MASK:.+]] = dtg.dropout %[[P]], %[[KEY]] {ratio = 1.000000e-01 : f64, stream = 3 : i64}
// SEL-NEXT: %[[O:.+]] = dtg.matmul %[[Y]], %[[Q]] :
// SEL-NEXT: %[[R:.+]] = dtg.add %[[O]], %[[X]] :
// SEL-NEXT: %[[L:.+]] = dtg.reduce_sum %[[R]]
// SEL-NEXT: %[[K2:.+]] = dtg.transpose %[[Q]] {dtg.backward, dtg.recompute
// SEL-NEXT: %[[S2:.+]] = dtg.matmul %[[Q]], %[[K2]] {dtg.backward, dtg.recompute}
// SEL-NEXT: %[[P2:.+]] = dtg.softmax %[[S2]] {axis = 1 : i64, dtg.backward, dtg.recompute}
// SEL-NEXT: %[[Y2:[^,]+]], %[[MASK2:.+]] = dtg.dropout %[[P2]], %[[KEY]] {dtg.backward, dtg.recompute, ratio = 1.000000e-01 : f64, stream = 3 : i64}
// SEL-NEXT: %[[B1:.+]] = dtg.mul %[[Y2]], %[[P2]] {dtg.backward}
// SEL-NEXT: %[[B2:.+]] = dtg.where %[[MASK2]], %[[B1]], %[[B1]] {dtg.backward}
// SEL-NEXT: %[[B3:.+]] = dtg.matmul %[[B2]], %[[Q]] {dtg.backward}
// SEL-NEXT: %[[B4:.+]] = dtg.matmul %[[K2]], %[[B2]] {dtg.backward}
// SEL-NEXT: return %[[L]], %[[B3]], %[[B4]]
func.func @attention(%x: tensor<4x8xf32> {dtg.role = "input"}, %w: tensor<8x8xf32> {dtg.role = "parameter"}, %key: tensor<2xi64> {dtg.role = "input"}) -> (tensor<f32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %q = dtg.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %k = dtg.transpose %q {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %s = dtg.matmul %q, %k : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %p = dtg.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  %y, %m = dtg.dropout %p, %key {ratio = 0.1 : f64, stream = 3 : i64} : tensor<4x4xf32>, tensor<2xi64> -> tensor<4x4xf32>, tensor<4x4xi1>
  %o = dtg.matmul %y, %q : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %r = dtg.add %o, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %l = dtg.reduce_sum %r {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  %b1 = dtg.mul %y, %p {dtg.backward} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b2 = dtg.where %m, %b1, %b1 {dtg.backward} : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b3 = dtg.matmul %b2, %q {dtg.backward} : tensor<4x4xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b4 = dtg.matmul %k, %b2 {dtg.backward} : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  return %l, %b3, %b4 : tensor<f32>, tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// Tests that selective recompute leaves an elementwise op saved when
// recomputing it would make a value saved that is not saved anyway (%m, the
// output of a product with a parameter), and recomputes the chain after it
// (%g) from it.

// SEL-LABEL: func.func @keeps_inputs
// SEL: %[[M:.+]] = dtg.matmul
// SEL-NEXT: %[[T:.+]] = dtg.add %[[M]], %[[M]] :
// SEL-NEXT: %[[G:.+]] = dtg.gelu %[[T]] {approximate = false} :
// SEL-NEXT: %[[L:.+]] = dtg.reduce_sum %[[G]]
// SEL-NEXT: %[[G2:.+]] = dtg.gelu %[[T]] {approximate = false, dtg.backward, dtg.recompute}
// SEL-NEXT: dtg.mul %[[T]], %[[G2]] {dtg.backward}
func.func @keeps_inputs(%x: tensor<4x8xf32> {dtg.role = "input"}, %w: tensor<8x8xf32> {dtg.role = "parameter"}) -> (tensor<f32>, tensor<4x8xf32>) {
  %m = dtg.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %t = dtg.add %m, %m : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %g = dtg.gelu %t {approximate = false} : tensor<4x8xf32>
  %l = dtg.reduce_sum %g {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  %b = dtg.mul %t, %g {dtg.backward} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %l, %b : tensor<f32>, tensor<4x8xf32>
}

// -----

// Tests that full recompute saves a layer's 16-bit output (%a, read by
// layer /h.1 in 16 bits and through its fp32 copy) and recomputes the fp32
// copy (%w, a widening cast: exact) in the backward rather than saving it
// beside the 16-bit one.

// FULL-LABEL: func.func @widening
// FULL: %[[A:.+]] = dtg.tanh %{{.+}} : tensor<4xbf16>
// FULL-NEXT: %[[W:.+]] = dtg.cast %[[A]] : tensor<4xbf16> -> tensor<4xf32>
// FULL: %[[W2:.+]] = dtg.cast %[[A]] {dtg.backward, dtg.recompute} : tensor<4xbf16> -> tensor<4xf32>
// FULL-NEXT: dtg.mul %{{.+}}, %[[W2]] {dtg.backward}
// NONE-LABEL: func.func @widening
// NONE-NOT: dtg.recompute
func.func @widening(%x: tensor<4xbf16> {dtg.role = "input"}) -> (tensor<f32>, tensor<4xf32>) {
  %a = dtg.tanh %x : tensor<4xbf16> loc("/h.0/Tanh")
  %w = dtg.cast %a : tensor<4xbf16> -> tensor<4xf32> loc("/h.0/Cast")
  %c = dtg.tanh %w : tensor<4xf32> loc("/h.1/Tanh")
  %e = dtg.tanh %a : tensor<4xbf16> loc("/h.1/Tanh_1")
  %f = dtg.cast %e : tensor<4xbf16> -> tensor<4xf32> loc("/h.1/Cast")
  %s = dtg.add %c, %f : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/h.1/Add")
  %l = dtg.reduce_sum %s {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32> loc("/ReduceSum")
  %g = dtg.mul %s, %w {dtg.backward} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}
