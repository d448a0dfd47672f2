// RUN: dtc-opt %s --split-input-file --allow-unregistered-dialect --dtc-plan-memory | FileCheck %s
// RUN: dtc-opt %s --split-input-file --allow-unregistered-dialect --dtc-plan-memory=in-place=false | FileCheck %s --check-prefix=NOINPLACE

// Tests that a chain reuses memory: %b is written over %a (its last use),
// %c may not be written over %b (the add reads %b later) and takes the next
// free place; the add writes straight into the result buffer. Buffers are
// 64-byte aligned. Without in-place reuse %b takes a place of its own and
// %c reuses %a's.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.add %{{.*}} {dtc.offsets = array<i64: -1>}
// NOINPLACE-LABEL: func.func @chain
// NOINPLACE-SAME: dtc.arena_bytes = 128 : i64
// NOINPLACE: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// NOINPLACE: dtg.exp %{{.*}} {dtc.offsets = array<i64: 64>}
// NOINPLACE: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = dtg.exp %a : tensor<16xf32>
  %c = dtg.exp %b : tensor<16xf32>
  %d = dtg.add %c, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %d : tensor<16xf32>
}

// -----

// Tests that a reshape aliases its operand (no buffer of its own) and keeps
// the operand's buffer alive while the alias is used: the neg may not write
// over %a, which the first mul reads through %r; the first mul writes over
// %n, its first operand that dies there. Constants take no arena space.
// CHECK-LABEL: func.func @alias
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.constant
// CHECK-NOT: dtc.offsets
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.reshape %{{.*}} {dtc.alias}
// CHECK: dtg.neg %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.mul %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.mul %{{.*}} {dtc.offsets = array<i64: -1>}
// NOINPLACE-LABEL: func.func @alias
// NOINPLACE-SAME: dtc.arena_bytes = 192 : i64
func.func @alias(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %k = dtg.constant dense<2.0> : tensor<16xf32>
  %a = dtg.exp %x : tensor<4x4xf32>
  %r = dtg.reshape %a : tensor<4x4xf32> -> tensor<16xf32>
  %n = dtg.neg %r : tensor<16xf32>
  %m = dtg.mul %n, %r : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %o = dtg.mul %m, %k : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that in-place reuse follows a chain of elementwise ops through a
// reshape whose source dies there, and an op reading the dying buffer twice.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: dtc.arena_bytes = 64 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.neg %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.reshape %{{.*}} {dtc.alias}
// CHECK: dtg.mul %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.cast %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.abs %{{.*}} {dtc.offsets = array<i64: -1>}
func.func @in_place(%x: tensor<16xf32>) -> tensor<4x4xi32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = dtg.neg %a : tensor<16xf32>
  %r = dtg.reshape %b : tensor<16xf32> -> tensor<4x4xf32>
  %c = dtg.mul %r, %r : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %i = dtg.cast %c : tensor<4x4xf32> -> tensor<4x4xi32>
  %d = dtg.abs %i : tensor<4x4xi32>
  return %d : tensor<4x4xi32>
}

// -----

// Tests that a function argument, directly or through a reshape, is never
// written over: it lives outside the arena.
// CHECK-LABEL: func.func @argument
// CHECK-SAME: dtc.arena_bytes = 64 : i64
// CHECK: dtg.reshape %{{.*}} {dtc.alias}
// CHECK: dtg.neg %{{.*}} {dtc.offsets = array<i64: 0>}
func.func @argument(%x: tensor<4x4xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %r = dtg.reshape %x : tensor<4x4xf32> -> tensor<16xf32>
  %n = dtg.neg %r : tensor<16xf32>
  return %n, %n : tensor<16xf32>, tensor<16xf32>
}

// -----

// Tests that a value written straight into a result buffer is never written
// over by a later op: the neg gets an arena buffer of its own.
// CHECK-LABEL: func.func @result_buffer
// CHECK-SAME: dtc.arena_bytes = 64 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: -1>}
// CHECK: dtg.neg %{{.*}} {dtc.offsets = array<i64: 0>}
func.func @result_buffer(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = dtg.exp %x : tensor<16xf32>
  %n = dtg.neg %a : tensor<16xf32>
  %s = dtg.sqrt %n : tensor<16xf32>
  return %a, %s : tensor<16xf32>, tensor<16xf32>
}

// -----

// Tests that a broadcast operand is not written over even when its buffer has
// the result's (aligned) size: the add reads %a[j] for every row.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.add %{{.*}} {dtc.offsets = array<i64: 64>}
func.func @broadcast(%x: tensor<4xf32>) -> tensor<4x4xf32> {
  %k = dtg.constant dense<1.0> : tensor<4x4xf32>
  %a = dtg.exp %x : tensor<4xf32>
  %b = dtg.add %a, %k : tensor<4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %c = dtg.exp %b : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// Tests that the same-shape operand of a broadcasting op is written over
// (the first add), and a where over its dying on_false operand.
// CHECK-LABEL: func.func @same_shape_operand
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: [[A:0]]>}
// CHECK: dtg.add %{{.*}} {dtc.offsets = array<i64: [[A]]>}
// CHECK: dtg.less %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: dtg.where %{{.*}} {dtc.offsets = array<i64: [[A]]>}
func.func @same_shape_operand(%x: tensor<4x4xf32>, %y: tensor<4xf32>) -> tensor<4x4xf32> {
  %k = dtg.constant dense<1.0> : tensor<4xf32>
  %a = dtg.exp %x : tensor<4x4xf32>
  %b = dtg.add %k, %a : tensor<4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %c = dtg.less %x, %y : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xi1>
  %z = dtg.constant dense<0.0> : tensor<f32>
  %w = dtg.where %c, %z, %b : tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %e = dtg.exp %w : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// Tests that a cast to a narrower element type is not written over its
// operand even when the aligned sizes agree (element i lies at other bytes).
// CHECK-LABEL: func.func @element_width
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.cast %{{.*}} {dtc.offsets = array<i64: 64>}
func.func @element_width(%x: tensor<16xf32>) -> tensor<16xf16> {
  %a = dtg.exp %x : tensor<16xf32>
  %h = dtg.cast %a : tensor<16xf32> -> tensor<16xf16>
  %e = dtg.exp %h : tensor<16xf16>
  return %e : tensor<16xf16>
}

// -----

// Tests that ops whose result elements depend on other positions of the
// operand (transpose, softmax) and calls are never written over a dying
// operand.
// CHECK-LABEL: func.func private @callee
// CHECK-LABEL: func.func @not_in_place
// CHECK-SAME: dtc.arena_bytes = 192 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.transpose %{{.*}} {dtc.offsets = array<i64: 64>, perm
// CHECK: dtg.softmax %{{.*}} {axis = 1 : i64, dtc.offsets = array<i64: 0>}
// CHECK: call @callee(%{{.*}}) {dtc.callee_base = 128 : i64, dtc.offsets = array<i64: 64>}
func.func private @callee(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = dtg.exp %x : tensor<4x4xf32>
  %b = dtg.exp %a : tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}
func.func @not_in_place(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = dtg.exp %x : tensor<4x4xf32>
  %t = dtg.transpose %a {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %s = dtg.softmax %t {axis = 1 : i64} : tensor<4x4xf32>
  %c = func.call @callee(%s) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = dtg.exp %c : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// Tests that scatter_elements writes over its dying `data`, but not when
// `updates` reads the same buffer.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: dtc.arena_bytes = 128 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.scatter_elements %{{.*}} {axis = 0 : i64, dtc.offsets = array<i64: 0>, reduction = "none"}
// CHECK: dtg.scatter_elements %{{.*}} {axis = 0 : i64, dtc.offsets = array<i64: 64>, reduction = "add"}
func.func @scatter(%x: tensor<16xf32>, %i: tensor<16xi64>, %u: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %s = dtg.scatter_elements %a, %i, %u {axis = 0 : i64, reduction = "none"} : tensor<16xf32>, tensor<16xi64>, tensor<16xf32> -> tensor<16xf32>
  %t = dtg.scatter_elements %s, %i, %s {axis = 0 : i64, reduction = "add"} : tensor<16xf32>, tensor<16xi64>, tensor<16xf32> -> tensor<16xf32>
  %e = dtg.exp %t : tensor<16xf32>
  return %e : tensor<16xf32>
}

// -----

// Tests that an optimizer update writes one new tensor over the dying
// gradient and the other elsewhere (a buffer goes to one result only);
// dropout writes its result over its operand and the mask elsewhere; the
// where writes over its dying float operand, not over the dying mask.
// CHECK-LABEL: func.func @multi_result
// CHECK-SAME: dtc.arena_bytes = 192 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.sgd_update %{{.*}} {dtc.offsets = array<i64: 0, 64>}
// CHECK: dtg.dropout %{{.*}} {dtc.offsets = array<i64: 0, 128>, ratio
// CHECK: dtg.where %{{.*}} {dtc.offsets = array<i64: 0>}
func.func @multi_result(%p: tensor<16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>,
                        %lr: tensor<f64>, %m: tensor<f64>, %d: tensor<f64>,
                        %wd: tensor<f64>, %n: tensor<i1>, %f: tensor<i1>,
                        %key: tensor<2xi64>) -> tensor<16xf32> {
  %a = dtg.exp %g : tensor<16xf32>
  %p2, %b2 = dtg.sgd_update %p, %a, %b, %lr, %m, %d, %wd, %n, %f : tensor<16xf32>
  %y, %mask = dtg.dropout %p2, %key {ratio = 0.5 : f64, stream = 0 : i64} : tensor<16xf32>, tensor<2xi64> -> tensor<16xf32>, tensor<16xi1>
  %w = dtg.where %mask, %y, %b2 : tensor<16xi1>, tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %e = dtg.exp %w : tensor<16xf32>
  return %e : tensor<16xf32>
}

// -----

// Tests that an op with a region is opaque: values defined inside get no
// buffer, a use inside the region keeps the outer buffer (%a) alive until
// the op, and the op's result takes no dying operand's buffer.
// CHECK-LABEL: func.func @region
// CHECK-SAME: dtc.arena_bytes = 192 : i64
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 0>}
// CHECK: dtg.exp %{{.*}} {dtc.offsets = array<i64: 64>}
// CHECK: "test.fused"
// CHECK-NOT: dtc.offsets
// CHECK: "test.yield"
// CHECK: }) {dtc.offsets = array<i64: 128>}
func.func @region(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = dtg.exp %x : tensor<16xf32>
  %b = dtg.exp %x : tensor<16xf32>
  %r = "test.fused"(%b) ({
  ^bb0(%arg: tensor<16xf32>):
    %i = dtg.neg %a : tensor<16xf32>
    %j = dtg.mul %i, %arg : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    "test.yield"(%j) : (tensor<16xf32>) -> ()
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %c = dtg.exp %r : tensor<16xf32>
  return %c : tensor<16xf32>
}
